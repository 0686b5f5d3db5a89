/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pprof's format: the profile's tables as the messages of profile.proto
 * (in this directory), packed by protobuf-c and gzipped, as go tool pprof
 * reads them.
 *
 * The profile's tables map one to one onto pprof's: a pprof id is the
 * table index + 1, and the profile's interned strings, which start with ""
 * as pprof's string table must, are the string table, so their indexes
 * are used as they are.  The few strings this writer adds go after them.
 * Every message lives in an array sized from the profile before anything
 * is filled: a few allocations per write, however large the profile.
 *
 * The sample types are the profile's mode's (samples, CPU, off-CPU and
 * wall time), or with events one per event and one per counter: a stack
 * is of one event, and go tool pprof reads the zeros of the others'
 * columns as "not in this view".  A part of a profile (enum
 * pr_profile_part, values.c) has only its stacks' samples and its
 * columns.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "output/output.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;


/* The strings this writer adds, at p->strings.nr + their index; a CPU
 * profile's file has only those before S_OFF_CPU (and so stays as it
 * was before off-CPU time). */
enum {
	S_SAMPLES, S_COUNT, S_CPU, S_NANOSECONDS, S_PID, S_TID, S_THREAD, S_PROCESS,
	S_OFF_CPU, S_WALL, S_WAIT, S_BLOCKED, S_PREEMPTED, NR_EXTRA
};
static const char *const extra_strings[NR_EXTRA] = {
	[S_SAMPLES] = "samples", [S_COUNT] = "count",
	[S_CPU] = "cpu", [S_NANOSECONDS] = "nanoseconds",
	[S_PID] = "pid", [S_TID] = "tid",
	[S_THREAD] = "thread", [S_PROCESS] = "process",
	[S_OFF_CPU] = "off_cpu", [S_WALL] = "wall", [S_WAIT] = "wait",
	[S_BLOCKED] = "blocked", [S_PREEMPTED] = "preempted",
};

/* Where a stack ended, when not at its outermost frame by itself: a
 * string label on its sample, "stack_end", whose value is
 * pr_stack_end_name()'s or, when joining completed it, "joined"; a number
 * label "joined_frames" says how many of its outermost frames were joined
 * (a stack joined only in part, as far as its call chain confirmed, is
 * still "truncated"); "fp_frames", how many came from the sample's
 * frame-pointer call chain (PR_FRAME_CHAIN), whatever the end.  Their
 * strings follow the others only in a profile with such stacks. */
enum {
	E_STACK_END, E_JOINED_FRAMES, E_FP_FRAMES, E_JOINED, E_ENDS,
	NR_END_STRINGS = E_ENDS + PR_END_MAX
};

/* The labels every sample of a thread carries, before the profile's tags;
 * a wait's sample carries one more after them, its kind. */
enum { L_PID, L_TID, L_THREAD, L_PROCESS, NR_THREAD_LABELS };

/* Everything the Profile message points into; pprof_free() frees it. */
struct pprof {
	pb_profile msg;
	pb_value_type *types, **type_ptrs, period_type;
	size_t nr_values;
	/* The part written: its columns of prof__stack_values()'s, and a
	 * stack's values before they are picked. */
	int part;
	size_t *cols;
	int64_t *all;
	char **strings;
	pb_mapping *mappings, **mapping_ptrs;
	pb_function *functions, **function_ptrs;
	pb_location *locations, **location_ptrs;
	pb_line *lines, **line_ptrs;
	pb_sample *samples, **sample_ptrs;
	pb_label *labels, **label_ptrs;
	/* stack_end labels: [E_JOINED] and [E_ENDS + end] used; joined_frames
	 * and fp_frames labels, one each per stack */
	int64_t end_strings;         /* index of the first; 0: none */
	pb_label end_labels[NR_END_STRINGS], *joined_labels, *fp_labels;
	uint64_t *location_ids;
	int64_t *values;
};

/* protobuf-c's *__INIT values: each message knows its descriptor. */
static const pb_mapping mapping_init = PERFTOOLS__PROFILES__MAPPING__INIT;
static const pb_function function_init = PERFTOOLS__PROFILES__FUNCTION__INIT;
static const pb_location location_init = PERFTOOLS__PROFILES__LOCATION__INIT;
static const pb_line line_init = PERFTOOLS__PROFILES__LINE__INIT;
static const pb_label label_init = PERFTOOLS__PROFILES__LABEL__INIT;
static const pb_sample sample_init = PERFTOOLS__PROFILES__SAMPLE__INIT;
static const pb_value_type value_type_init = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;

/* `n` messages of `size` bytes, each a copy of `init`; NULL when out of
 * memory (never for n = 0, so that NULL means only that). */
static void *msgs_new(size_t n, size_t size, const void *init)
{
	char *a = calloc(n ? n : 1, size);

	for (size_t i = 0; a && i < n; i++)
		memcpy(a + i * size, init, size);
	return a;
}

/* An array of n pointers: what a repeated message field is. */
static void *ptrs_new(size_t n)
{
	return calloc(n ? n : 1, sizeof(void *));
}

static void pprof_free(struct pprof *pp)
{
	free(pp->all);
	free(pp->cols);
	free(pp->values);
	free(pp->location_ids);
	free(pp->label_ptrs);
	free(pp->labels);
	free(pp->joined_labels);
	free(pp->fp_labels);
	free(pp->sample_ptrs);
	free(pp->samples);
	free(pp->line_ptrs);
	free(pp->lines);
	free(pp->location_ptrs);
	free(pp->locations);
	free(pp->function_ptrs);
	free(pp->functions);
	free(pp->mapping_ptrs);
	free(pp->mappings);
	free(pp->strings);
	free(pp->type_ptrs);
	free(pp->types);
}

static int64_t extra(const struct pr_profile *p, int s)
{
	return (int64_t)p->strings.nr + s;
}

/* Whether stack `st` gets a stack_end label. */
static bool marks_end(const struct prof_stack *st)
{
	return st->joined || st->end != PR_END_OUTERMOST;
}

static int add_strings(struct pprof *pp, const struct pr_profile *p)
{
	int nr_extra = p->mode == PR_PROFILE_CPU ? S_OFF_CPU : NR_EXTRA;
	size_t n = (size_t)p->strings.nr + nr_extra, ends = n;
	bool marked = false;

	for (uint32_t i = 0; i < p->nr_stacks && !marked; i++)
		marked = marks_end(&p->stacks[i]) || p->stacks[i].chain;
	if (marked)
		n += NR_END_STRINGS;

	pp->strings = calloc(n, sizeof(*pp->strings));
	if (!pp->strings)
		return -ENOMEM;
	/* protobuf-c's string type is char *, but packing only reads it. */
	for (uint32_t i = 0; i < p->strings.nr; i++)
		pp->strings[i] = (char *)p->strings.s[i];
	for (int i = 0; i < nr_extra; i++)
		pp->strings[p->strings.nr + i] = (char *)extra_strings[i];
	if (marked) {
		pp->end_strings = (int64_t)ends;
		pp->strings[ends + E_STACK_END] = (char *)"stack_end";
		pp->strings[ends + E_JOINED_FRAMES] = (char *)"joined_frames";
		pp->strings[ends + E_FP_FRAMES] = (char *)"fp_frames";
		pp->strings[ends + E_JOINED] = (char *)"joined";
		for (int e = 0; e < PR_END_MAX; e++)
			pp->strings[ends + E_ENDS + e] = (char *)pr_stack_end_name(e);
	}
	pp->msg.string_table = pp->strings;
	pp->msg.n_string_table = n;
	return 0;
}

static int add_mappings(struct pprof *pp, const struct pr_profile *p)
{
	pp->mappings = msgs_new(p->nr_mappings, sizeof(*pp->mappings), &mapping_init);
	pp->mapping_ptrs = ptrs_new(p->nr_mappings);
	if (!pp->mappings || !pp->mapping_ptrs)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->nr_mappings; i++) {
		const struct prof_mapping *m = &p->mappings[i];
		pb_mapping *pm = pp->mapping_ptrs[i] = &pp->mappings[i];

		pm->id = i + 1;
		pm->memory_start = m->start;
		pm->memory_limit = m->limit;
		pm->file_offset = m->offset;
		pm->filename = m->name;
		pm->build_id = m->build_id;
		/* has_filenames is set from the locations (add_locations). */
		pm->has_functions = m->has_functions;
		pm->has_line_numbers = m->has_lines;
		pm->has_inline_frames = m->has_inline;
	}
	/* pprof takes the first mapping listed for the main binary (its
	 * "File:"): list the first executable first, not libc because it
	 * happened to be seen first.  Ids stay as they are. */
	for (uint32_t i = 0; i < p->nr_mappings; i++) {
		const char *name = prof_str(p, p->mappings[i].name);

		if (name[0] == '/' && name[1] != '/' && !strstr(name, ".so") &&
		    strncmp(name, "/tmp/perf-", 10)) {
			pb_mapping *first = pp->mapping_ptrs[0];

			pp->mapping_ptrs[0] = pp->mapping_ptrs[i];
			pp->mapping_ptrs[i] = first;
			break;
		}
	}
	pp->msg.mapping = pp->mapping_ptrs;
	pp->msg.n_mapping = p->nr_mappings;
	return 0;
}

static int add_functions(struct pprof *pp, const struct pr_profile *p)
{
	pp->functions = msgs_new(p->nr_functions, sizeof(*pp->functions), &function_init);
	pp->function_ptrs = ptrs_new(p->nr_functions);
	if (!pp->functions || !pp->function_ptrs)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->nr_functions; i++) {
		pb_function *pf = pp->function_ptrs[i] = &pp->functions[i];

		pf->id = i + 1;
		/* The profile keeps names demangled as perf shows them; the
		 * mangled ones are not kept, so the system name is the same. */
		pf->name = p->functions[i].name;
		pf->system_name = p->functions[i].name;
		pf->filename = p->functions[i].file;
	}
	pp->msg.function = pp->function_ptrs;
	pp->msg.n_function = p->nr_functions;
	return 0;
}

static int add_locations(struct pprof *pp, const struct pr_profile *p)
{
	size_t nr_lines = 0, l = 0;

	for (uint32_t i = 0; i < p->nr_locations; i++)
		nr_lines += p->locations[i].nr_lines;
	pp->locations = msgs_new(p->nr_locations, sizeof(*pp->locations), &location_init);
	pp->location_ptrs = ptrs_new(p->nr_locations);
	pp->lines = msgs_new(nr_lines, sizeof(*pp->lines), &line_init);
	pp->line_ptrs = ptrs_new(nr_lines);
	if (!pp->locations || !pp->location_ptrs || !pp->lines || !pp->line_ptrs)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->nr_locations; i++) {
		const struct prof_location *loc = &p->locations[i];
		pb_location *pl = pp->location_ptrs[i] = &pp->locations[i];
		bool files = false;

		pl->id = i + 1;
		pl->mapping_id = loc->mapping == PROF_NONE ? 0 : loc->mapping + 1;
		pl->address = loc->address;
		/* Both innermost first: pprof's last line is the function
		 * the others were inlined into, as the profile's is. */
		pl->line = &pp->line_ptrs[l];
		pl->n_line = loc->nr_lines;
		for (uint32_t k = 0; k < loc->nr_lines; k++, l++) {
			const struct prof_line *line = &p->lines[loc->line + k];

			pp->line_ptrs[l] = &pp->lines[l];
			pp->lines[l].function_id = line->function + 1;
			pp->lines[l].line = line->line;
			files |= p->functions[line->function].file != 0;
		}
		if (files && loc->mapping != PROF_NONE)
			pp->mappings[loc->mapping].has_filenames = true;
	}
	pp->msg.location = pp->location_ptrs;
	pp->msg.n_location = p->nr_locations;
	return 0;
}

/* The labels: NR_THREAD_LABELS per thread, then one per tag, then one
 * per kind of wait, then one per process tag, shared by every sample that
 * carries them (a repeated field is pointers). */
static int add_labels(struct pprof *pp, const struct pr_profile *p)
{
	size_t tags = (size_t)p->nr_threads * NR_THREAD_LABELS;
	size_t nr = tags + p->nr_tags + PR_WAIT_KIND_MAX + p->nr_ptags;

	pp->labels = msgs_new(nr, sizeof(*pp->labels), &label_init);
	if (!pp->labels)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->nr_threads; i++) {
		const struct prof_thread *t = &p->threads[i];
		pb_label *tl = &pp->labels[(size_t)i * NR_THREAD_LABELS];

		tl[L_PID].key = extra(p, S_PID);
		tl[L_PID].num = t->pid;
		tl[L_TID].key = extra(p, S_TID);
		tl[L_TID].num = t->tid;
		tl[L_THREAD].key = extra(p, S_THREAD);
		tl[L_THREAD].str = t->comm;
		tl[L_PROCESS].key = extra(p, S_PROCESS);
		tl[L_PROCESS].str = t->process;
	}
	for (uint32_t i = 0; i < p->nr_tags; i++) {
		pb_label *tag = &pp->labels[tags + i];

		tag->key = p->tags[i].key;
		tag->str = p->tags[i].value;
	}
	/* Only a profile with waits has their strings. */
	for (int k = 0; p->mode != PR_PROFILE_CPU && k < PR_WAIT_KIND_MAX; k++) {
		pb_label *wait = &pp->labels[tags + p->nr_tags + k];

		wait->key = extra(p, S_WAIT);
		wait->str = extra(p, k == PR_WAIT_PREEMPTED ? S_PREEMPTED : S_BLOCKED);
	}
	for (uint32_t i = 0; i < p->nr_ptags; i++) {
		pb_label *pt = &pp->labels[tags + p->nr_tags + PR_WAIT_KIND_MAX + i];

		pt->key = p->ptags[i].key;
		pt->str = p->ptags[i].value;
	}
	if (!pp->end_strings)
		return 0;
	for (int e = E_JOINED; e < NR_END_STRINGS; e++) {
		pp->end_labels[e] = label_init;
		pp->end_labels[e].key = pp->end_strings + E_STACK_END;
		pp->end_labels[e].str = pp->end_strings + e;
	}
	pp->joined_labels = msgs_new(p->nr_stacks, sizeof(*pp->joined_labels), &label_init);
	pp->fp_labels = msgs_new(p->nr_stacks, sizeof(*pp->fp_labels), &label_init);
	return pp->joined_labels && pp->fp_labels ? 0 : -ENOMEM;
}

/* The most process tags one process has. */
static uint32_t max_ptags(const struct pr_profile *p)
{
	uint32_t most = 0;

	for (uint32_t i = 0, n; i < p->nr_ptags; i += n) {
		prof__ptags_of(p, p->ptags[i].pid, &n);
		most = n > most ? n : most;
	}
	return most;
}

static int add_samples(struct pprof *pp, const struct pr_profile *p)
{
	/* The thread's labels a sample carries: the first two, its numbers,
	 * alone when the profile says so. */
	size_t nr_thread = p->pprof_numeric_thread_labels ? L_THREAD : NR_THREAD_LABELS;
	size_t nr_labels = nr_thread + p->nr_tags, nr_ids = 0, id = 0;
	size_t wait_labels = (size_t)p->nr_threads * NR_THREAD_LABELS + p->nr_tags;
	size_t ptag_labels = wait_labels + PR_WAIT_KIND_MAX;
	/* Each sample's slice: its thread's, its process's, the profile's,
	 * a wait's and its stack's end's and sources' labels. */
	size_t slice = nr_labels + max_ptags(p) + 4;

	for (uint32_t i = 0; i < p->nr_stacks; i++)
		nr_ids += p->stacks[i].nr;
	pp->samples = msgs_new(p->nr_stacks, sizeof(*pp->samples), &sample_init);
	pp->sample_ptrs = ptrs_new(p->nr_stacks);
	/* Each sample's labels, ids and values are its slice of one array
	 * (room for a wait's label in each). */
	pp->label_ptrs = ptrs_new((size_t)p->nr_stacks * slice);
	pp->location_ids = calloc(nr_ids + 1, sizeof(*pp->location_ids));
	pp->values = calloc((size_t)p->nr_stacks * pp->nr_values + 1, sizeof(*pp->values));
	pp->all = calloc(prof__nr_values(p) + 1, sizeof(*pp->all));
	if (!pp->samples || !pp->sample_ptrs || !pp->label_ptrs || !pp->location_ids ||
	    !pp->values || !pp->all)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->nr_stacks; i++) {
		const struct prof_stack *st = &p->stacks[i];
		pb_sample *ps;
		pb_label **labels = &pp->label_ptrs[(size_t)i * slice];
		uint32_t np;
		const struct prof_ptag *pt = prof__ptags_of(p, p->threads[st->thread].pid, &np);

		if (!prof__part_has_stack(p, pp->part, i))
			continue;
		ps = pp->sample_ptrs[pp->msg.n_sample++] = &pp->samples[i];
		/* Leaf first, in both. */
		ps->location_id = &pp->location_ids[id];
		ps->n_location_id = st->nr;
		for (uint32_t k = 0; k < st->nr; k++)
			pp->location_ids[id++] = (uint64_t)p->frames[st->frame + k] + 1;
		ps->value = &pp->values[(size_t)i * pp->nr_values];
		ps->n_value = pp->nr_values;
		prof__stack_values(p, i, pp->all);
		for (size_t k = 0; k < pp->nr_values; k++)
			ps->value[k] = pp->all[pp->cols[k]];
		for (size_t k = 0; k < nr_thread; k++)
			labels[k] = &pp->labels[(size_t)st->thread * NR_THREAD_LABELS + k];
		for (uint32_t k = 0; k < np; k++)
			labels[nr_thread + k] =
				&pp->labels[ptag_labels + (size_t)(pt - p->ptags) + k];
		for (uint32_t k = 0; k < p->nr_tags; k++)
			labels[nr_thread + np + k] =
				&pp->labels[(size_t)p->nr_threads * NR_THREAD_LABELS + k];
		ps->label = labels;
		ps->n_label = nr_labels + np;
		if (st->kind != PROF_ON_CPU)
			labels[ps->n_label++] = &pp->labels[wait_labels +
				(st->kind == PROF_PREEMPTED ? PR_WAIT_PREEMPTED : PR_WAIT_BLOCKED)];
		if (pp->end_strings && marks_end(st)) {
			/* "joined" when joining completed it; one joined only
			 * in part is still cut, and says so. */
			bool completed = st->joined && st->end == PR_END_OUTERMOST;

			labels[ps->n_label++] = &pp->end_labels[completed ? E_JOINED
								: E_ENDS + (st->end % PR_END_MAX)];
			if (st->joined) {
				pp->joined_labels[i].key = pp->end_strings + E_JOINED_FRAMES;
				pp->joined_labels[i].num = st->joined;
				labels[ps->n_label++] = &pp->joined_labels[i];
			}
		}
		if (st->chain) {
			pp->fp_labels[i].key = pp->end_strings + E_FP_FRAMES;
			pp->fp_labels[i].num = st->chain;
			labels[ps->n_label++] = &pp->fp_labels[i];
		}
	}
	pp->msg.sample = pp->sample_ptrs;
	return 0;
}

/* The index in the string table of `s`, one of extra_strings. */
static int64_t extra_of(const struct pr_profile *p, const char *s)
{
	for (int i = 0; i < NR_EXTRA; i++)
		if (!strcmp(extra_strings[i], s))
			return extra(p, i);
	return 0;
}

/* The sample types of the part written (values.c says which), the
 * period and the type shown first.  0, -EINVAL (the profile has no such
 * part) or -ENOMEM. */
static int add_types(struct pprof *pp, const struct pr_profile *p)
{
	struct prof_period per;
	size_t n;

	pp->cols = calloc(prof__nr_values(p) + 1, sizeof(*pp->cols));
	if (!pp->cols)
		return -ENOMEM;
	n = prof__part_values(p, pp->part, pp->cols, &per);
	if (!n)
		return -EINVAL;
	pp->types = msgs_new(n, sizeof(*pp->types), &value_type_init);
	pp->type_ptrs = ptrs_new(n);
	if (!pp->types || !pp->type_ptrs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct prof_value_type t = prof__value_type(p, pp->cols[i]);

		pp->types[i].type = t.name != PROF_NONE ? t.name : extra_of(p, t.type);
		pp->types[i].unit = extra_of(p, t.unit);
		pp->type_ptrs[i] = &pp->types[i];
	}
	pp->nr_values = n;
	pp->msg.sample_type = pp->type_ptrs;
	pp->msg.n_sample_type = n;
	pp->period_type = pp->types[per.type];
	pp->msg.period_type = &pp->period_type;
	pp->msg.period = per.period;
	/* pprof shows the last sample type unless told: say which. */
	pp->msg.default_sample_type = pp->types[per.shown].type;
	pp->msg.time_nanos = (int64_t)p->start_ns;
	pp->msg.duration_nanos = (int64_t)p->duration_ns;
	return 0;
}

/* gzip `len` bytes of `buf` to `out`: what pprof's files are on disk. */
int pr__write_gzip(const uint8_t *buf, size_t len, FILE *out)
{
	z_stream zs = { 0 };
	uint8_t chunk[16384];
	int ret = 0, zret;

	/* windowBits 15 + 16: a gzip header and trailer, not zlib's. */
	zret = deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			    Z_DEFAULT_STRATEGY);
	if (zret != Z_OK)
		return zret == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
	zs.next_in = (Bytef *)buf;
	do {
		/* avail_in is an unsigned int: a packed profile over 4 GiB
		 * goes in several parts. */
		if (!zs.avail_in && len) {
			zs.avail_in = len > UINT32_MAX ? UINT32_MAX : (uInt)len;
			len -= zs.avail_in;
		}
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		zret = deflate(&zs, len ? Z_NO_FLUSH : Z_FINISH);
		if (zret == Z_STREAM_ERROR) {
			ret = -EINVAL;
			break;
		}
		if (fwrite(chunk, 1, sizeof(chunk) - zs.avail_out, out) !=
		    sizeof(chunk) - zs.avail_out) {
			ret = -EIO;
			break;
		}
	} while (zret != Z_STREAM_END);
	deflateEnd(&zs);
	return ret;
}

int pr__out_pprof(const struct pr_profile *p, FILE *out, const struct pr_profile_write_opts *o)
{
	struct pprof pp = { .msg = PERFTOOLS__PROFILES__PROFILE__INIT, .part = o->part };
	uint8_t *buf = NULL;
	size_t len;
	int ret;

	ret = add_strings(&pp, p);
	if (!ret)
		ret = add_mappings(&pp, p);
	if (!ret)
		ret = add_functions(&pp, p);
	if (!ret)
		ret = add_locations(&pp, p);
	if (!ret)
		ret = add_labels(&pp, p);
	if (!ret)
		ret = add_types(&pp, p);
	if (!ret)
		ret = add_samples(&pp, p);
	if (ret)
		goto out;
	len = protobuf_c_message_get_packed_size(&pp.msg.base);
	buf = malloc(len ? len : 1);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	protobuf_c_message_pack(&pp.msg.base, buf);
	ret = pr__write_gzip(buf, len, out);
out:
	free(buf);
	pprof_free(&pp);
	return ret;
}
