/* SPDX-License-Identifier: Apache-2.0 */
#ifndef DS_DUMP_H
#define DS_DUMP_H

#include <stdio.h>

#include "perfreader.h"

/* One record on one line. */
void ds_dump_record(FILE *out, const struct pr_record *rec, const char *event);
/* Samples and lost per CPU, records by type. */
void ds_dump_summary(FILE *out, struct pr_reader *r, double seconds);
/* The `dump` verb. */
int ds_cmd_dump(int argc, char **argv);

#endif
