/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Output: a profile written in one of the formats people open.  One file
 * per format; each reads the aggregate (profile/profile.h) and nothing
 * upstream of it.
 */
#ifndef PR_OUTPUT_H
#define PR_OUTPUT_H

#include <stdio.h>

#include "profile/profile.h"

/* The writers: 0 or a negative errno. */
int pr__out_folded(const struct pr_profile *p, FILE *out, const struct pr_profile_write_opts *o);
int pr__out_pprof(const struct pr_profile *p, FILE *out, const struct pr_profile_write_opts *o);
int pr__out_speedscope(const struct pr_profile *p, FILE *out,
		       const struct pr_profile_write_opts *o);
int pr__out_svg(const struct pr_profile *p, FILE *out, const struct pr_profile_write_opts *o);
/* gzip `len` bytes of `buf` to `out` (pprof's files are): 0 or a negative
 * errno. */
int pr__write_gzip(const uint8_t *buf, size_t len, FILE *out);

/* ---- values.c: the values of a sample, for pprof and OTLP ---- */

/* A value type: its name ("samples", "cpu", an event's), the string index
 * of that name when it is one of the profile's own (an event's or a
 * counter's; PROF_NONE otherwise), and its unit ("count", "nanoseconds"). */
struct prof_value_type {
	const char *type, *unit;
	uint32_t name;
};
/* What is sampled: value `type` every `period` of it (0: not periodic);
 * value `shown` is the one to show first. */
struct prof_period {
	size_t type, shown;
	int64_t period;
};
size_t prof__nr_values(const struct pr_profile *p);
struct prof_value_type prof__value_type(const struct pr_profile *p, size_t i);
/* Stack idx's values, prof__nr_values() of them, into v. */
void prof__stack_values(const struct pr_profile *p, uint32_t idx, int64_t *v);
struct prof_period prof__period(const struct pr_profile *p);

/* JSON and XML text: `s` with what the format needs escaped. */
void pr__json_string(FILE *out, const char *s);
void pr__xml_text(FILE *out, const char *s);

#endif /* PR_OUTPUT_H */
