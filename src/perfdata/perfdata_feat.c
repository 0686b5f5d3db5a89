/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The feature sections of a perf.data file: strings, CPU counts, the
 * command line and build-ids.  A section that does not parse is skipped
 * with a warning; the records do not depend on it.  The one feature that
 * can refuse a file is ARCH: only x86-64 samples are understood.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata/perfdata_read.h"
#include "prtrace.h"

struct feat_cursor {
	const unsigned char *p;
	uint64_t left;
	bool bad;
};

static uint32_t get_u32(struct feat_cursor *c)
{
	uint32_t v = 0;

	if (c->left < 4) {
		c->bad = true;
		return 0;
	}
	memcpy(&v, c->p, 4);
	c->p += 4;
	c->left -= 4;
	return v;
}

/* perf_header_string: u32 length, then that many bytes holding a NUL. */
static char *get_string(struct feat_cursor *c)
{
	uint32_t len = get_u32(c);
	char *s;

	if (c->bad || len > c->left || !memchr(c->p, '\0', len)) {
		c->bad = true;
		return NULL;
	}
	s = strdup((const char *)c->p);
	if (!s)
		c->bad = true;
	c->p += len;
	c->left -= len;
	return s;
}

static void read_cmdline(struct pr_file *f, struct feat_cursor *c)
{
	uint32_t nr = get_u32(c);

	/* Every string takes at least its 4-byte length. */
	if (c->bad || nr > c->left / 4) {
		c->bad = true;
		return;
	}
	f->cmdline = calloc(nr ? nr : 1, sizeof(char *));
	if (!f->cmdline) {
		c->bad = true;
		return;
	}
	for (uint32_t i = 0; i < nr && !c->bad; i++) {
		f->cmdline[i] = get_string(c);
		if (f->cmdline[i])
			f->nr_cmdline = i + 1;
	}
}

/* EVENT_DESC: per event its attr, ids and name, in the order of the
 * file's attrs section.  Names go to the attr whose first id matches,
 * else to the attr in the same place. */
static void read_event_desc(struct pr_file *f, struct feat_cursor *c)
{
	uint32_t nr = get_u32(c), attr_size = get_u32(c);

	if (c->bad || attr_size < 8 || attr_size > c->left || nr > c->left / attr_size)
		return;
	f->event_names = calloc(f->nr_attrs ? f->nr_attrs : 1, sizeof(char *));
	if (!f->event_names)
		return;
	for (uint32_t i = 0; i < nr && !c->bad; i++) {
		uint32_t nr_ids;
		char *name;
		uint64_t first_id = 0;
		size_t at = i;

		if (attr_size > c->left) {
			c->bad = true;
			break;
		}
		c->p += attr_size;
		c->left -= attr_size;
		nr_ids = get_u32(c);
		name = get_string(c);
		if (c->bad || nr_ids > c->left / 8) {
			free(name);
			c->bad = true;
			break;
		}
		if (nr_ids)
			memcpy(&first_id, c->p, 8);
		c->p += (uint64_t)nr_ids * 8;
		c->left -= (uint64_t)nr_ids * 8;
		for (size_t a = 0; nr_ids && a < f->nr_attrs; a++)
			if (f->attrs[a].nr_ids && !memcmp(f->attrs[a].ids, &first_id, 8))
				at = a;
		if (at < f->nr_attrs && !f->event_names[at])
			f->event_names[at] = name;
		else
			free(name);
	}
}

static void read_build_ids(struct pr_file *f, struct feat_cursor *c)
{
	size_t cap = (size_t)(c->left / PERFDATA_BUILD_ID_FIXED);

	f->build_ids = calloc(cap ? cap : 1, sizeof(*f->build_ids));
	if (!f->build_ids) {
		c->bad = true;
		return;
	}
	while (c->left >= PERFDATA_BUILD_ID_FIXED) {
		struct perfdata_build_id e;
		struct pr_build_id *b;
		const char *name;
		size_t name_len;

		memcpy(&e, c->p, sizeof(e));
		if (e.size <= PERFDATA_BUILD_ID_FIXED || e.size > c->left) {
			c->bad = true;
			return;
		}
		name = (const char *)c->p + PERFDATA_BUILD_ID_FIXED;
		name_len = e.size - PERFDATA_BUILD_ID_FIXED;
		if (!memchr(name, '\0', name_len) || f->nr_build_ids == cap) {
			c->bad = true;
			return;
		}
		b = &f->build_ids[f->nr_build_ids];
		b->filename = strdup(name);
		if (!b->filename) {
			c->bad = true;
			return;
		}
		b->pid = e.pid;
		b->cpumode = e.misc & PERF_RECORD_MISC_CPUMODE_MASK;
		/* Files from before the size byte existed hold SHA-1 ids. */
		b->size = e.misc & PERFDATA_MISC_BUILD_ID_SIZE ? e.id_size : 20;
		if (b->size > PR_BUILD_ID_MAX)
			b->size = PR_BUILD_ID_MAX;
		memcpy(b->id, e.data, b->size);
		f->nr_build_ids++;
		c->p += e.size;
		c->left -= e.size;
	}
}

static void read_sample_time(struct pr_file *f, struct feat_cursor *c)
{
	uint64_t end = 0;

	if (c->left < 16) {
		c->bad = true;
		return;
	}
	memcpy(&end, c->p + 8, 8);
	c->p += 16;
	c->left -= 16;
	f->end_time = end;
	f->has_end_time = true;
}

static int read_feature(struct pr_file *f, int feat, struct feat_cursor *c)
{
	int slot = -1;

	switch (feat) {
	case FEAT_HOSTNAME: slot = PR_FILE_HOSTNAME; break;
	case FEAT_OSRELEASE: slot = PR_FILE_OSRELEASE; break;
	case FEAT_VERSION: slot = PR_FILE_VERSION; break;
	case FEAT_ARCH: slot = PR_FILE_ARCH; break;
	case FEAT_CPUDESC: slot = PR_FILE_CPUDESC; break;
	case FEAT_NRCPUS:
		f->nr_cpus_avail = get_u32(c);
		f->nr_cpus_online = get_u32(c);
		f->has_nr_cpus = !c->bad;
		return 0;
	case FEAT_CMDLINE:
		read_cmdline(f, c);
		return 0;
	case FEAT_BUILD_ID:
		read_build_ids(f, c);
		return 0;
	case FEAT_EVENT_DESC:
		read_event_desc(f, c);
		return 0;
	case FEAT_TRACING_DATA:
		/* Only the tracepoints' fields depend on it. */
		if (pr__perfdata_read_tracing(c->p, (size_t)c->left, &f->tp_formats) == -EBADMSG)
			pr__log(&f->lg, PR_LOG_WARN, "%s: the tracepoints' formats (TRACING_DATA) "
				"are malformed; their samples' fields are not shown", f->name);
		return 0;
	case FEAT_DS_JIT_FILES:
		f->jit_files = c->p;
		f->jit_files_len = (size_t)c->left;
		return 0;
	case FEAT_COMPRESSED:
		/* version, method (1: zstd), level, ratio, ring size. */
		get_u32(c);
		f->ztype = get_u32(c);
		f->zlevel = get_u32(c);
		get_u32(c);
		f->zring = get_u32(c);
		f->zunsupported = !c->bad && f->ztype != PERFDATA_COMP_ZSTD;
		return 0;
	case FEAT_SAMPLE_TIME:
		/* first, then last sample time, or the end of the capture
		 * when dwarfsample wrote it (perfdata_write.c says why). */
		read_sample_time(f, c);
		return 0;
	default:
		return 0;
	}
	f->strings[slot] = get_string(c);
	if (feat == FEAT_ARCH && f->strings[slot] && strcmp(f->strings[slot], "x86_64")) {
		pr__log(&f->lg, PR_LOG_ERROR, "%s was recorded on %s; only x86-64 "
			"files can be read", f->name, f->strings[slot]);
		return -EBADMSG;
	}
	return 0;
}

int pr__file_read_features(struct pr_file *f)
{
	uint64_t table = f->h.data.offset + f->h.data.size;
	size_t k = 0, count = 0;

	for (int i = 0; i < 4; i++)
		count += (size_t)__builtin_popcountll(f->h.features[i]);
	if (!count)
		return 0;
	if (table > f->len || count > (f->len - table) / sizeof(struct perfdata_section)) {
		pr__log(&f->lg, PR_LOG_WARN, "%s: the feature table at byte offset %llu "
			"runs past the end of the file; features ignored", f->name,
			(unsigned long long)table);
		return 0;
	}
	for (int feat = 0; feat < FEAT_BITS; feat++) {
		struct perfdata_section sec;
		struct feat_cursor c;
		int err;

		if (!(f->h.features[feat / 64] >> (feat % 64) & 1))
			continue;
		memcpy(&sec, f->buf + table + k * sizeof(sec), sizeof(sec));
		k++;
		if (sec.offset > f->len || sec.size > f->len - sec.offset) {
			pr__log(&f->lg, PR_LOG_WARN, "%s: feature %d's section runs past "
				"the end of the file; ignored", f->name, feat);
			continue;
		}
		c = (struct feat_cursor){ f->buf + sec.offset, sec.size, false };
		err = read_feature(f, feat, &c);
		if (err)
			return err;
		if (c.bad)
			pr__log(&f->lg, PR_LOG_WARN, "%s: feature %d at byte offset %llu "
				"is malformed; what could be read of it is kept", f->name,
				feat, (unsigned long long)sec.offset);
	}
	return 0;
}

void pr__file_free_features(struct pr_file *f)
{
	for (size_t i = 0; f->event_names && i < f->nr_attrs; i++)
		free(f->event_names[i]);
	free(f->event_names);
	f->event_names = NULL;
	for (size_t i = 0; i < PR_ARRAY_SIZE(f->strings); i++)
		free(f->strings[i]);
	for (size_t i = 0; i < f->nr_cmdline; i++)
		free(f->cmdline[i]);
	free(f->cmdline);
	for (size_t i = 0; i < f->nr_build_ids; i++)
		free((char *)f->build_ids[i].filename);
	free(f->build_ids);
	pr_tp_formats_free(f->tp_formats);
}

size_t pr__file_jit_files(const struct pr_file *f, const unsigned char **sec)
{
	*sec = f->jit_files;
	return f->jit_files_len;
}

const struct pr_tp_formats *pr_file_tp_formats(const struct pr_file *f)
{
	return f ? f->tp_formats : NULL;
}

const char *pr_file_string(const struct pr_file *f, enum pr_file_string which)
{
	if (!f || (unsigned)which >= PR_ARRAY_SIZE(f->strings))
		return NULL;
	return f->strings[which];
}

int pr_file_nr_cpus(const struct pr_file *f, uint32_t *available, uint32_t *online)
{
	if (!f)
		return -EINVAL;
	if (!f->has_nr_cpus)
		return -ENOENT;
	if (available)
		*available = f->nr_cpus_avail;
	if (online)
		*online = f->nr_cpus_online;
	return 0;
}

size_t pr_file_cmdline(const struct pr_file *f, const char *const **argv)
{
	if (!f)
		return 0;
	if (argv)
		*argv = (const char *const *)f->cmdline;
	return f->nr_cmdline;
}

int pr_file_end_time(const struct pr_file *f, uint64_t *time)
{
	if (!f || !time)
		return -EINVAL;
	if (!f->has_end_time)
		return -ENOENT;
	*time = f->end_time;
	return 0;
}

size_t pr_file_nr_build_ids(const struct pr_file *f)
{
	return f ? f->nr_build_ids : 0;
}

const struct pr_build_id *pr_file_build_id(const struct pr_file *f, size_t idx)
{
	return f && idx < f->nr_build_ids ? &f->build_ids[idx] : NULL;
}
