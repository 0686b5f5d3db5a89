/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's credentials: a file readable by its owner alone, else the
 * environment, never the command line -- the command's business; the
 * library's uploader takes the values (prupload.h).
 */
#ifndef DS_CREDENTIALS_H
#define DS_CREDENTIALS_H

#include <stddef.h>

#include "prupload.h"

#define DS_CREDENTIALS_HEADERS 4096

struct ds_credentials {
	char user[256], password[256], tenant[256];
	/* DWARFSAMPLE_OTLP_HEADERS, cut into the pairs below ("k=," at
	 * the least each). */
	char headers[DS_CREDENTIALS_HEADERS];
	struct pr_label otlp[DS_CREDENTIALS_HEADERS / 3 + 1];
	size_t nr_otlp;
};

/*
 * The credentials of `file` (KEY=VALUE lines; NULL: none), else of the
 * environment, into `cr` and uploader options `o` (which point into
 * `cr`): Pyroscope's user, password and tenant, and, when `o` has an OTLP
 * URL, the headers of DWARFSAMPLE_OTLP_HEADERS ("k=v,k=v", as
 * OTEL_EXPORTER_OTLP_HEADERS).  0, or -1 after saying why.
 */
int ds_credentials_read(struct ds_credentials *cr, const char *file, struct pr_uploader_opts *o);
/* Wipe them, once the uploader has its copies. */
void ds_credentials_clear(struct ds_credentials *cr);

#endif
