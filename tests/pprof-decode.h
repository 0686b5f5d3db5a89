/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A pprof file written into memory and decoded with the messages the
 * writer packs it with, as go tool pprof would read it, for the profile's
 * tests (test-offcpu-formats.c, test-profile-events.c,
 * test-pyroscope-push.c).  Needs
 * profile-fixture.h first.
 */
#ifndef DS_TEST_PPROF_DECODE_H
#define DS_TEST_PPROF_DECODE_H

#include <zlib.h>

#include "profile.pb-c.h"

/* A gzipped pprof of `len` bytes, decoded. */
__attribute__((unused))
static Perftools__Profiles__Profile *decode_pprof_gz(const void *gz, size_t len)
{
	size_t cap = 1 << 20;
	uint8_t *raw = malloc(cap);
	z_stream zs = { .next_in = (Bytef *)gz, .avail_in = (uInt)len, .next_out = raw,
			.avail_out = (uInt)cap };
	Perftools__Profiles__Profile *msg;

	ck_assert_ptr_nonnull(raw);
	/* 15 + 32: a gzip header expected. */
	ck_assert_int_eq(inflateInit2(&zs, 15 + 32), Z_OK);
	ck_assert_int_eq(inflate(&zs, Z_FINISH), Z_STREAM_END);
	msg = perftools__profiles__profile__unpack(NULL, zs.total_out, raw);
	ck_assert_ptr_nonnull(msg);
	inflateEnd(&zs);
	free(raw);
	return msg;
}

/* Part `part` of `p` (pr_profile_write_opts.part). */
__attribute__((unused))
static Perftools__Profiles__Profile *read_pprof_part(const struct pr_profile *p,
						     enum pr_profile_part part)
{
	PR_OPTS(pr_profile_write_opts, o, .part = part);
	size_t len;
	char *gz = write_out(p, PR_FORMAT_PPROF, &o, &len);
	Perftools__Profiles__Profile *msg = decode_pprof_gz(gz, len);

	free(gz);
	return msg;
}

__attribute__((unused))
static Perftools__Profiles__Profile *read_pprof(const struct pr_profile *p)
{
	return read_pprof_part(p, PR_PART_ALL);
}

__attribute__((unused))
static const char *str(const Perftools__Profiles__Profile *m, int64_t i)
{
	ck_assert_int_lt(i, (int64_t)m->n_string_table);
	return m->string_table[i];
}

/* "type/unit" of sample type i. */
__attribute__((unused))
static const char *type_of(const Perftools__Profiles__Profile *m, size_t i)
{
	static char buf[64];

	ck_assert_uint_lt(i, m->n_sample_type);
	snprintf(buf, sizeof(buf), "%s/%s", str(m, m->sample_type[i]->type),
		 str(m, m->sample_type[i]->unit));
	return buf;
}

/* The leaf's function name of sample s. */
__attribute__((unused))
static const char *leaf_of(const Perftools__Profiles__Profile *m,
			   const Perftools__Profiles__Sample *s)
{
	const Perftools__Profiles__Location *loc = m->location[s->location_id[0] - 1];

	ck_assert_uint_eq(loc->id, s->location_id[0]);
	ck_assert_uint_eq(loc->n_line, 1);
	return str(m, m->function[loc->line[0]->function_id - 1]->name);
}

/* The value of string label `key` on s, or NULL. */
__attribute__((unused))
static const char *label_of(const Perftools__Profiles__Profile *m,
			    const Perftools__Profiles__Sample *s, const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (!strcmp(str(m, s->label[i]->key), key))
			return s->label[i]->str ? str(m, s->label[i]->str) : NULL;
	return NULL;
}

/* The sample whose leaf is `leaf`. */
__attribute__((unused))
static const Perftools__Profiles__Sample *sample_of(const Perftools__Profiles__Profile *m,
						    const char *leaf)
{
	for (size_t i = 0; i < m->n_sample; i++)
		if (!strcmp(leaf_of(m, m->sample[i]), leaf))
			return m->sample[i];
	ck_abort_msg("no sample ends in %s", leaf);
	return NULL;
}

#endif
