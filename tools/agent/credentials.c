/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's credentials (credentials.h): a file readable by its owner
 * alone, else the environment, never the command line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "credentials.h"

/* `key` from the credentials file's text, or else the environment, into
 * buf ("" when neither has it). */
static void credential(const char *file_text, const char *key, char *buf, size_t len)
{
	const char *env = getenv(key);
	size_t klen = strlen(key);

	buf[0] = '\0';
	for (const char *p = file_text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (n > klen && !strncmp(p, key, klen) && p[klen] == '=') {
			snprintf(buf, len, "%.*s", (int)(n - klen - 1), p + klen + 1);
			return;
		}
		p = nl ? nl + 1 : p + n;
	}
	if (env)
		snprintf(buf, len, "%s", env);
}

/* The credentials file's text: only when no one else may read it. */
static int read_credentials(const char *path, char **text)
{
	struct stat st;
	FILE *f = fopen(path, "re");
	size_t n;

	*text = NULL;
	if (!f || fstat(fileno(f), &st)) {
		ds_err("cannot read the credentials file %s: %s", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	if (st.st_mode & 077) {
		ds_err("the credentials file %s may be read by others (mode %03o): make it "
		       "readable by its owner only (chmod 600)", path, (unsigned)(st.st_mode & 0777));
		fclose(f);
		return -1;
	}
	*text = calloc(1, (size_t)st.st_size + 1);
	n = *text ? fread(*text, 1, (size_t)st.st_size, f) : 0;
	fclose(f);
	if (!*text || n != (size_t)st.st_size) {
		ds_err("cannot read the credentials file %s", path);
		free(*text);
		*text = NULL;
		return -1;
	}
	return 0;
}

/* The OTLP headers, "k=v,k=v", cut in place into pairs. */
static int otlp_headers(struct ds_credentials *cr)
{
	char *save = NULL;

	for (char *kv = strtok_r(cr->headers, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');

		if (!eq || eq == kv) {
			/* Not the value itself: it may be a secret. */
			ds_err("DWARFSAMPLE_OTLP_HEADERS: expected NAME=VALUE pairs separated by "
			       "commas");
			return -1;
		}
		*eq = '\0';
		cr->otlp[cr->nr_otlp++] = (struct pr_label){ .key = kv, .value = eq + 1 };
	}
	return 0;
}

int ds_credentials_read(struct ds_credentials *cr, const char *file, struct pr_uploader_opts *o)
{
	char *text = NULL;

	if (file && read_credentials(file, &text))
		return -1;
	credential(text, "DWARFSAMPLE_PYROSCOPE_USER", cr->user, sizeof(cr->user));
	credential(text, "DWARFSAMPLE_PYROSCOPE_PASSWORD", cr->password, sizeof(cr->password));
	credential(text, "DWARFSAMPLE_PYROSCOPE_TENANT", cr->tenant, sizeof(cr->tenant));
	credential(text, "DWARFSAMPLE_OTLP_HEADERS", cr->headers, sizeof(cr->headers));
	if (text) {
		explicit_bzero(text, strlen(text));
		free(text);
	}
	o->pyroscope_user = cr->user;
	o->pyroscope_password = cr->password;
	o->pyroscope_tenant = cr->tenant;
	o->otlp_headers = cr->otlp;
	o->nr_otlp_headers = 0;
	if (o->otlp_url && otlp_headers(cr))
		return -1;
	o->nr_otlp_headers = cr->nr_otlp;
	return 0;
}

void ds_credentials_clear(struct ds_credentials *cr)
{
	explicit_bzero(cr, sizeof(*cr));
}
