/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OpenTelemetry profiles signal (opentelemetry-proto v1.11.0,
 * profiles/v1development): an ExportProfilesServiceRequest as an OTLP
 * receiver takes it over HTTP, one Profile per value type (values.c says
 * which, as for pprof), all sharing one ProfilesDictionary.  Every table
 * of the dictionary starts with its zero entry, which index 0 means, so
 * the profile's index i is the dictionary's i + 1 (strings excepted:
 * the profile's string 0 is "" already).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "otlp_profiles_service.pb-c.h"

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
	pb_request;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary pb_dictionary;
typedef Opentelemetry__Proto__Profiles__V1development__ResourceProfiles pb_resource_profiles;
typedef Opentelemetry__Proto__Profiles__V1development__ScopeProfiles pb_scope_profiles;
typedef Opentelemetry__Proto__Profiles__V1development__Profile pb_profile;
typedef Opentelemetry__Proto__Profiles__V1development__ValueType pb_value_type;
typedef Opentelemetry__Proto__Profiles__V1development__Sample pb_sample;
typedef Opentelemetry__Proto__Profiles__V1development__Mapping pb_mapping;
typedef Opentelemetry__Proto__Profiles__V1development__Stack pb_stack;
typedef Opentelemetry__Proto__Profiles__V1development__Location pb_location;
typedef Opentelemetry__Proto__Profiles__V1development__Line pb_line;
typedef Opentelemetry__Proto__Profiles__V1development__Function pb_function;
typedef Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit pb_attribute;
typedef Opentelemetry__Proto__Profiles__V1development__Link pb_link;
typedef Opentelemetry__Proto__Resource__V1__Resource pb_resource;
typedef Opentelemetry__Proto__Common__V1__KeyValue pb_key_value;
typedef Opentelemetry__Proto__Common__V1__AnyValue pb_any;
typedef Opentelemetry__Proto__Common__V1__InstrumentationScope pb_scope;

/* Strings the profile does not have, after its own in the table. */
enum {
	X_PID, X_TID, X_THREAD, X_EXE, X_WAIT, X_BLOCKED, X_PREEMPTED, X_BUILD_ID,
	X_SAMPLES, X_COUNT, X_CPU, X_NANOSECONDS, X_OFF_CPU, X_WALL, X_STACK_END,
	X_JOINED_FRAMES, X_FP_FRAMES, NR_X
};
static const char *const x_strings[NR_X] = {
	/* OpenTelemetry's semantic conventions' names. */
	[X_PID] = "process.pid", [X_TID] = "thread.id", [X_THREAD] = "thread.name",
	[X_EXE] = "process.executable.name", [X_BUILD_ID] = "process.executable.build_id.gnu",
	[X_WAIT] = "dwarfsample.off_cpu.wait", [X_BLOCKED] = "blocked",
	[X_PREEMPTED] = "preempted",
	[X_SAMPLES] = "samples", [X_COUNT] = "count", [X_CPU] = "cpu",
	[X_NANOSECONDS] = "nanoseconds", [X_OFF_CPU] = "off_cpu", [X_WALL] = "wall",
	/* As pprof's stack_end, joined_frames and fp_frames labels (pprof.c). */
	[X_STACK_END] = "dwarfsample.stack.end",
	[X_JOINED_FRAMES] = "dwarfsample.stack.joined_frames",
	[X_FP_FRAMES] = "dwarfsample.stack.fp_frames",
};
/* Attributes per thread: pid, tid, its name, its process's. */
enum { A_PID, A_TID, A_THREAD, A_EXE, NR_THREAD_ATTRS };

/* Everything the request points into; otlp_free() frees it. */
struct otlp {
	pb_request req;
	pb_dictionary dict;
	pb_resource_profiles rp, *rp_ptr;
	pb_resource resource;
	pb_key_value *kvs, **kv_ptrs;
	pb_any *kv_values;
	pb_scope scope;
	pb_scope_profiles sp, *sp_ptr;
	pb_link link0, *link_ptr;    /* the link table: its zero entry alone */
	char **strings;
	pb_mapping *mappings, **mapping_ptrs;
	int32_t *mapping_attrs;
	pb_function *functions, **function_ptrs;
	pb_location *locations, **location_ptrs;
	pb_line *lines, **line_ptrs;
	pb_stack *stacks, **stack_ptrs;
	int32_t *stack_locs;
	pb_attribute *attrs, **attr_ptrs;
	pb_any *attr_values;
	size_t nr_attrs;
	int32_t tags_at, ptags_at, waits_at, build_ids_at;
	/* stack ends: PR_END_MAX names, then "joined"; each joined stack's
	 * number of joined frames, and each stack's number of frames from
	 * the call chain (joined_attr, fp_attr: by stack, 0 for none) */
	int32_t ends_at, *joined_attr, *fp_attr;
	pb_profile *profiles, **profile_ptrs;
	pb_value_type *types;
	pb_value_type period_type;
	pb_sample *samples, **sample_ptrs;
	int32_t *sample_attrs;
	int64_t *values;             /* every stack's, prof__nr_values() each */
};

static const pb_mapping mapping_init = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__MAPPING__INIT;
static const pb_function function_init =
	OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__FUNCTION__INIT;
static const pb_location location_init =
	OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LOCATION__INIT;
static const pb_line line_init = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LINE__INIT;
static const pb_stack stack_init = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__STACK__INIT;
static const pb_attribute attr_init =
	OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__KEY_VALUE_AND_UNIT__INIT;
static const pb_any any_init = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__INIT;
static const pb_key_value kv_init = OPENTELEMETRY__PROTO__COMMON__V1__KEY_VALUE__INIT;
static const pb_profile profile_init = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILE__INIT;
static const pb_value_type value_type_init =
	OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__VALUE_TYPE__INIT;
static const pb_sample sample_init = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__SAMPLE__INIT;

/* `n` messages of `size` bytes, each a copy of `init`, and an array of
 * pointers to them (what a repeated field is); false out of memory. */
static bool msgs(size_t n, size_t size, const void *init, void *arr, void *ptrs)
{
	char *a = calloc(n ? n : 1, size);
	void **p = calloc(n ? n : 1, sizeof(void *));

	*(char **)arr = a;
	*(void ***)ptrs = p;
	for (size_t i = 0; a && p && i < n; i++) {
		memcpy(a + i * size, init, size);
		p[i] = a + i * size;
	}
	return a && p;
}

static void otlp_free(struct otlp *o)
{
	free(o->values);
	free(o->sample_attrs);
	free(o->sample_ptrs);
	free(o->samples);
	free(o->types);
	free(o->profile_ptrs);
	free(o->profiles);
	free(o->attr_values);
	free(o->joined_attr);
	free(o->fp_attr);
	free(o->attr_ptrs);
	free(o->attrs);
	free(o->stack_locs);
	free(o->stack_ptrs);
	free(o->stacks);
	free(o->line_ptrs);
	free(o->lines);
	free(o->location_ptrs);
	free(o->locations);
	free(o->function_ptrs);
	free(o->functions);
	free(o->mapping_attrs);
	free(o->mapping_ptrs);
	free(o->mappings);
	free(o->strings);
	free(o->kv_values);
	free(o->kv_ptrs);
	free(o->kvs);
}

static int32_t x(const struct pr_profile *p, int s)
{
	return (int32_t)p->strings.nr + s;
}

/* The index of `s`: one of the profile's strings (`idx`), or an extra. */
static int32_t str_of(const struct pr_profile *p, uint32_t idx, const char *s)
{
	if (idx != PROF_NONE)
		return (int32_t)idx;
	for (int i = 0; i < NR_X; i++)
		if (!strcmp(x_strings[i], s))
			return x(p, i);
	return 0;
}

static int add_strings(struct otlp *o, const struct pr_profile *p)
{
	size_t n = (size_t)p->strings.nr + NR_X;

	o->strings = calloc(n, sizeof(*o->strings));
	if (!o->strings)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->strings.nr; i++)
		o->strings[i] = (char *)p->strings.s[i];
	for (int i = 0; i < NR_X; i++)
		o->strings[p->strings.nr + i] = (char *)x_strings[i];
	o->dict.string_table = o->strings;
	o->dict.n_string_table = n;
	return 0;
}

/* From attribute `k` on, one of key `key` (X_JOINED_FRAMES or
 * X_FP_FRAMES) per stack with such frames, saying how many; each
 * stack's into at[stack].  The next free attribute. */
static size_t frame_count_attrs(struct otlp *o, const struct pr_profile *p, size_t k, int key,
				int32_t *at)
{
	for (uint32_t i = 0; i < p->nr_stacks; i++) {
		uint16_t n = key == X_FP_FRAMES ? p->stacks[i].chain : p->stacks[i].joined;

		if (!n)
			continue;
		o->attrs[k].key_strindex = x(p, key);
		o->attr_values[k].value_case =
			OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
		o->attr_values[k].int_value = n;
		at[i] = (int32_t)k++;
	}
	return k;
}

/* The attribute table: the zero entry; per thread its pid, tid, name and
 * process name; the profile's tags; the process tags; the kinds of wait;
 * the mappings' build-ids. */
static int add_attributes(struct otlp *o, const struct pr_profile *p)
{
	size_t n = 1 + (size_t)p->nr_threads * NR_THREAD_ATTRS + p->nr_tags + p->nr_ptags +
		   PR_WAIT_KIND_MAX + p->nr_mappings + PR_END_MAX + 1, k = 1;

	for (uint32_t i = 0; i < p->nr_stacks; i++)
		n += (p->stacks[i].joined > 0) + (p->stacks[i].chain > 0);
	o->joined_attr = calloc(p->nr_stacks + 1, sizeof(*o->joined_attr));
	o->fp_attr = calloc(p->nr_stacks + 1, sizeof(*o->fp_attr));
	if (!o->joined_attr || !o->fp_attr)
		return -ENOMEM;

	if (!msgs(n, sizeof(*o->attrs), &attr_init, &o->attrs, &o->attr_ptrs))
		return -ENOMEM;
	o->attr_values = calloc(n, sizeof(*o->attr_values));
	if (!o->attr_values)
		return -ENOMEM;
	/* The zero entry is the empty attribute: no key, no value at all
	 * (an AnyValue with nothing set would be a value). */
	for (size_t i = 1; i < n; i++) {
		o->attr_values[i] = any_init;
		o->attrs[i].value = &o->attr_values[i];
	}
	for (uint32_t t = 0; t < p->nr_threads; t++) {
		const struct prof_thread *th = &p->threads[t];
		pb_attribute *a = &o->attrs[k];
		pb_any *v = &o->attr_values[k];

		a[A_PID].key_strindex = x(p, X_PID);
		v[A_PID].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
		v[A_PID].int_value = th->pid;
		a[A_TID].key_strindex = x(p, X_TID);
		v[A_TID].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
		v[A_TID].int_value = th->tid;
		a[A_THREAD].key_strindex = x(p, X_THREAD);
		v[A_THREAD].value_case =
			OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
		v[A_THREAD].string_value = (char *)prof_str(p, th->comm);
		a[A_EXE].key_strindex = x(p, X_EXE);
		v[A_EXE].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
		v[A_EXE].string_value = (char *)prof_str(p, th->process);
		k += NR_THREAD_ATTRS;
	}
	o->tags_at = (int32_t)k;
	for (uint32_t i = 0; i < p->nr_tags; i++, k++) {
		o->attrs[k].key_strindex = (int32_t)p->tags[i].key;
		o->attr_values[k].value_case =
			OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
		o->attr_values[k].string_value = (char *)prof_str(p, p->tags[i].value);
	}
	o->ptags_at = (int32_t)k;
	for (uint32_t i = 0; i < p->nr_ptags; i++, k++) {
		o->attrs[k].key_strindex = (int32_t)p->ptags[i].key;
		o->attr_values[k].value_case =
			OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
		o->attr_values[k].string_value = (char *)prof_str(p, p->ptags[i].value);
	}
	o->waits_at = (int32_t)k;
	for (int w = 0; w < PR_WAIT_KIND_MAX; w++, k++) {
		o->attrs[k].key_strindex = x(p, X_WAIT);
		o->attr_values[k].value_case =
			OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
		o->attr_values[k].string_value =
			(char *)x_strings[w == PR_WAIT_PREEMPTED ? X_PREEMPTED : X_BLOCKED];
	}
	o->build_ids_at = (int32_t)k;
	for (uint32_t i = 0; i < p->nr_mappings; i++, k++) {
		o->attrs[k].key_strindex = x(p, X_BUILD_ID);
		o->attr_values[k].value_case =
			OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
		o->attr_values[k].string_value = (char *)prof_str(p, p->mappings[i].build_id);
	}
	o->ends_at = (int32_t)k;
	for (int e = 0; e <= PR_END_MAX; e++, k++) {
		o->attrs[k].key_strindex = x(p, X_STACK_END);
		o->attr_values[k].value_case =
			OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
		o->attr_values[k].string_value =
			(char *)(e < PR_END_MAX ? pr_stack_end_name(e) : "joined");
	}
	k = frame_count_attrs(o, p, k, X_JOINED_FRAMES, o->joined_attr);
	k = frame_count_attrs(o, p, k, X_FP_FRAMES, o->fp_attr);
	o->nr_attrs = k;
	o->dict.attribute_table = o->attr_ptrs;
	o->dict.n_attribute_table = k;
	return 0;
}

static int add_mappings(struct otlp *o, const struct pr_profile *p)
{
	size_t n = (size_t)p->nr_mappings + 1;

	if (!msgs(n, sizeof(*o->mappings), &mapping_init, &o->mappings, &o->mapping_ptrs) ||
	    !(o->mapping_attrs = calloc(n, sizeof(*o->mapping_attrs))))
		return -ENOMEM;
	for (uint32_t i = 0; i < p->nr_mappings; i++) {
		const struct prof_mapping *m = &p->mappings[i];
		pb_mapping *pm = &o->mappings[i + 1];

		pm->memory_start = m->start;
		pm->memory_limit = m->limit;
		pm->file_offset = m->offset;
		pm->filename_strindex = (int32_t)m->name;
		if (m->build_id) {
			o->mapping_attrs[i + 1] = o->build_ids_at + (int32_t)i;
			pm->attribute_indices = &o->mapping_attrs[i + 1];
			pm->n_attribute_indices = 1;
		}
	}
	o->dict.mapping_table = o->mapping_ptrs;
	o->dict.n_mapping_table = n;
	return 0;
}

static int add_functions(struct otlp *o, const struct pr_profile *p)
{
	size_t n = (size_t)p->nr_functions + 1;

	if (!msgs(n, sizeof(*o->functions), &function_init, &o->functions, &o->function_ptrs))
		return -ENOMEM;
	for (uint32_t i = 0; i < p->nr_functions; i++) {
		/* Names are kept demangled, as perf shows them: the system
		 * name is the same. */
		o->functions[i + 1].name_strindex = (int32_t)p->functions[i].name;
		o->functions[i + 1].system_name_strindex = (int32_t)p->functions[i].name;
		o->functions[i + 1].filename_strindex = (int32_t)p->functions[i].file;
	}
	o->dict.function_table = o->function_ptrs;
	o->dict.n_function_table = n;
	return 0;
}

static int add_locations(struct otlp *o, const struct pr_profile *p)
{
	size_t n = (size_t)p->nr_locations + 1, nr_lines = 0, l = 0;

	for (uint32_t i = 0; i < p->nr_locations; i++)
		nr_lines += p->locations[i].nr_lines;
	if (!msgs(n, sizeof(*o->locations), &location_init, &o->locations, &o->location_ptrs) ||
	    !msgs(nr_lines, sizeof(*o->lines), &line_init, &o->lines, &o->line_ptrs))
		return -ENOMEM;
	for (uint32_t i = 0; i < p->nr_locations; i++) {
		const struct prof_location *loc = &p->locations[i];
		pb_location *pl = &o->locations[i + 1];

		pl->mapping_index = loc->mapping == PROF_NONE ? 0 : (int32_t)loc->mapping + 1;
		pl->address = loc->address;
		/* Innermost first, the function the others were inlined into
		 * last, as the profile keeps them. */
		pl->lines = &o->line_ptrs[l];
		pl->n_lines = loc->nr_lines;
		for (uint32_t k = 0; k < loc->nr_lines; k++, l++) {
			const struct prof_line *line = &p->lines[loc->line + k];

			o->lines[l].function_index = (int32_t)line->function + 1;
			o->lines[l].line = line->line;
		}
	}
	o->dict.location_table = o->location_ptrs;
	o->dict.n_location_table = n;
	return 0;
}

static int add_stacks(struct otlp *o, const struct pr_profile *p)
{
	size_t n = (size_t)p->nr_stacks + 1;

	if (!msgs(n, sizeof(*o->stacks), &stack_init, &o->stacks, &o->stack_ptrs) ||
	    !(o->stack_locs = calloc(p->nr_frames + 1, sizeof(*o->stack_locs))))
		return -ENOMEM;
	for (size_t f = 0; f < p->nr_frames; f++)
		o->stack_locs[f] = (int32_t)p->frames[f] + 1;
	for (uint32_t i = 0; i < p->nr_stacks; i++) {
		/* Leaf first, in both. */
		o->stacks[i + 1].location_indices = &o->stack_locs[p->stacks[i].frame];
		o->stacks[i + 1].n_location_indices = p->stacks[i].nr;
	}
	o->dict.stack_table = o->stack_ptrs;
	o->dict.n_stack_table = n;
	return 0;
}

/* The attributes of stack i's samples into `a` (their number): its
 * thread's, its process's tags, the profile's, its kind of wait and how
 * the stack ended. */
static size_t stack_attrs(const struct otlp *o, const struct pr_profile *p, uint32_t i,
			  int32_t *a)
{
	const struct prof_stack *st = &p->stacks[i];
	uint32_t np;
	const struct prof_ptag *pt = prof__ptags_of(p, p->threads[st->thread].pid, &np);
	size_t n = 0;

	for (int k = 0; k < NR_THREAD_ATTRS; k++)
		a[n++] = 1 + (int32_t)st->thread * NR_THREAD_ATTRS + k;
	for (uint32_t k = 0; k < np; k++)
		a[n++] = o->ptags_at + (int32_t)(pt - p->ptags) + (int32_t)k;
	for (uint32_t k = 0; k < p->nr_tags; k++)
		a[n++] = o->tags_at + (int32_t)k;
	if (st->kind != PROF_ON_CPU)
		a[n++] = o->waits_at + (st->kind == PROF_PREEMPTED ? PR_WAIT_PREEMPTED
								   : PR_WAIT_BLOCKED);
	/* Where it ended, when not at its outermost frame by itself. */
	if (st->end != PR_END_OUTERMOST || st->joined)
		a[n++] = o->ends_at + (st->end == PR_END_OUTERMOST ? PR_END_MAX
								  : st->end % PR_END_MAX);
	/* Joined in part (as far as its call chain went): still cut. */
	if (st->joined)
		a[n++] = o->joined_attr[i];
	if (st->chain)
		a[n++] = o->fp_attr[i];
	return n;
}

/* A Profile per value type, each with the samples whose value of that
 * type is not 0. */
static int add_profiles(struct otlp *o, const struct pr_profile *p)
{
	size_t nv = prof__nr_values(p), slice = NR_THREAD_ATTRS + p->nr_tags + p->nr_ptags + 4;
	struct prof_period per = prof__period(p);
	size_t s = 0;

	o->values = calloc((size_t)p->nr_stacks * nv + 1, sizeof(*o->values));
	o->sample_attrs = calloc((size_t)p->nr_stacks * slice + 1, sizeof(*o->sample_attrs));
	o->types = calloc(nv, sizeof(*o->types));
	if (!o->values || !o->sample_attrs || !o->types ||
	    !msgs(nv, sizeof(*o->profiles), &profile_init, &o->profiles, &o->profile_ptrs) ||
	    !msgs((size_t)p->nr_stacks * nv, sizeof(*o->samples), &sample_init, &o->samples,
		  &o->sample_ptrs))
		return -ENOMEM;
	for (uint32_t i = 0; i < p->nr_stacks; i++)
		prof__stack_values(p, i, &o->values[(size_t)i * nv]);
	for (size_t t = 0; t < nv; t++) {
		struct prof_value_type vt = prof__value_type(p, t);

		o->types[t] = value_type_init;
		o->types[t].type_strindex = str_of(p, vt.name, vt.type);
		o->types[t].unit_strindex = str_of(p, PROF_NONE, vt.unit);
	}
	o->period_type = o->types[per.type];
	/* The type shown first is the first profile. */
	for (size_t k = 0; k < nv; k++) {
		size_t t = k == 0 ? per.shown : k <= per.shown ? k - 1 : k;
		pb_profile *pf = &o->profiles[k];

		pf->sample_type = &o->types[t];
		pf->time_unix_nano = p->start_ns;
		pf->duration_nano = p->duration_ns;
		pf->period_type = &o->period_type;
		pf->period = per.period;
		pf->samples = &o->sample_ptrs[s];
		for (uint32_t i = 0; i < p->nr_stacks; i++) {
			int64_t v = o->values[(size_t)i * nv + t];
			pb_sample *sm = &o->samples[s];

			if (!v)
				continue;
			sm->stack_index = (int32_t)i + 1;
			sm->values = &o->values[(size_t)i * nv + t];
			sm->n_values = 1;
			sm->attribute_indices = &o->sample_attrs[(size_t)i * slice];
			sm->n_attribute_indices = stack_attrs(o, p, i, sm->attribute_indices);
			o->sample_ptrs[s++] = sm;
			pf->n_samples++;
		}
	}
	o->sp.profiles = o->profile_ptrs;
	o->sp.n_profiles = nv;
	return 0;
}

static int add_resource(struct otlp *o, const struct pr_otlp_opts *opts)
{
	size_t n = opts ? PR_OPTS_GET(opts, nr_resource, 0) : 0;
	const struct pr_attr *attrs = opts ? PR_OPTS_GET(opts, resource, NULL) : NULL;

	if (n && !attrs)
		return -EINVAL;
	if (!msgs(n, sizeof(*o->kvs), &kv_init, &o->kvs, &o->kv_ptrs) ||
	    !(o->kv_values = calloc(n ? n : 1, sizeof(*o->kv_values))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!attrs[i].key)
			return -EINVAL;
		o->kvs[i].key = (char *)attrs[i].key;
		o->kv_values[i] = any_init;
		if (attrs[i].str) {
			o->kv_values[i].value_case =
				OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
			o->kv_values[i].string_value = (char *)attrs[i].str;
		} else {
			o->kv_values[i].value_case =
				OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
			o->kv_values[i].int_value = attrs[i].num;
		}
		o->kvs[i].value = &o->kv_values[i];
	}
	o->resource.attributes = o->kv_ptrs;
	o->resource.n_attributes = n;
	o->scope.name = (char *)((opts ? PR_OPTS_GET(opts, scope_name, NULL) : NULL) ?
				 PR_OPTS_GET(opts, scope_name, NULL) : "dwarfsample");
	o->scope.version = (char *)((opts ? PR_OPTS_GET(opts, scope_version, NULL) : NULL) ?
				    PR_OPTS_GET(opts, scope_version, NULL) : "");
	return 0;
}

int pr_profile_write_otlp(const struct pr_profile *p, FILE *out, const struct pr_otlp_opts *opts)
{
	struct otlp o = {
		.req = OPENTELEMETRY__PROTO__COLLECTOR__PROFILES__V1DEVELOPMENT__EXPORT_PROFILES_SERVICE_REQUEST__INIT,
		.dict = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILES_DICTIONARY__INIT,
		.rp = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__RESOURCE_PROFILES__INIT,
		.resource = OPENTELEMETRY__PROTO__RESOURCE__V1__RESOURCE__INIT,
		.scope = OPENTELEMETRY__PROTO__COMMON__V1__INSTRUMENTATION_SCOPE__INIT,
		.sp = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__SCOPE_PROFILES__INIT,
		.link0 = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LINK__INIT,
	};
	uint8_t *buf = NULL;
	size_t len;
	int ret;

	if (!p || !out || (opts && !PR_OPTS_VALID(opts)))
		return -EINVAL;
	ret = add_strings(&o, p);
	if (!ret)
		ret = add_attributes(&o, p);
	if (!ret)
		ret = add_mappings(&o, p);
	if (!ret)
		ret = add_functions(&o, p);
	if (!ret)
		ret = add_locations(&o, p);
	if (!ret)
		ret = add_stacks(&o, p);
	if (!ret)
		ret = add_profiles(&o, p);
	if (!ret)
		ret = add_resource(&o, opts);
	if (ret)
		goto out;
	o.sp.scope = &o.scope;
	o.sp_ptr = &o.sp;
	o.rp.resource = &o.resource;
	o.rp.scope_profiles = &o.sp_ptr;
	o.rp.n_scope_profiles = 1;
	o.rp_ptr = &o.rp;
	o.req.resource_profiles = &o.rp_ptr;
	o.req.n_resource_profiles = 1;
	/* No sample links to a trace, but the table has its zero entry, the
	 * empty link, as every table of the dictionary must. */
	o.link_ptr = &o.link0;
	o.dict.link_table = &o.link_ptr;
	o.dict.n_link_table = 1;
	o.req.dictionary = &o.dict;
	len = protobuf_c_message_get_packed_size(&o.req.base);
	buf = malloc(len ? len : 1);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	protobuf_c_message_pack(&o.req.base, buf);
	if (opts && PR_OPTS_GET(opts, gzip, false))
		ret = pr__write_gzip(buf, len, out);
	else if (fwrite(buf, 1, len, out) != len)
		ret = ferror(out) && errno ? -errno : -EIO;
out:
	free(buf);
	otlp_free(&o);
	return ret;
}
