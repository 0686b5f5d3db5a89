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

/* JSON and XML text: `s` with what the format needs escaped. */
void pr__json_string(FILE *out, const char *s);
void pr__xml_text(FILE *out, const char *s);

#endif /* PR_OUTPUT_H */
