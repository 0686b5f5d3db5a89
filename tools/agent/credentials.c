/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's credentials: a file readable by its owner alone, else the
 * environment, never the command line. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "upload-int.h"

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

static int add_header(struct backend *be, const char *h)
{
	struct curl_slist *l = curl_slist_append(be->headers, h);

	if (!l) {
		ds_err("out of memory");
		return -1;
	}
	be->headers = l;
	curl_easy_setopt(be->curl, CURLOPT_HTTPHEADER, be->headers);
	return 0;
}

/* The backends' credentials: Pyroscope's basic auth and tenant, OTLP's
 * headers ("k=v,k=v", as OTEL_EXPORTER_OTLP_HEADERS). */
int ds_upload_credentials(struct ds_uploader *u)
{
	struct backend *py = &u->be[B_PYROSCOPE], *ot = &u->be[B_OTLP];
	char *text = NULL, tenant[256], headers[4096], *hdr = NULL, *save = NULL;
	int err = 0;

	if (u->o.credentials_file && read_credentials(u->o.credentials_file, &text))
		return -1;
	credential(text, "DWARFSAMPLE_PYROSCOPE_USER", u->user, sizeof(u->user));
	credential(text, "DWARFSAMPLE_PYROSCOPE_PASSWORD", u->password, sizeof(u->password));
	credential(text, "DWARFSAMPLE_PYROSCOPE_TENANT", tenant, sizeof(tenant));
	credential(text, "DWARFSAMPLE_OTLP_HEADERS", headers, sizeof(headers));
	if (text) {
		explicit_bzero(text, strlen(text));
		free(text);
	}
	if (py->url && (u->user[0] || u->password[0])) {
		curl_easy_setopt(py->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(py->curl, CURLOPT_USERNAME, u->user);
		curl_easy_setopt(py->curl, CURLOPT_PASSWORD, u->password);
	}
	if (py->url && tenant[0]) {
		err = asprintf(&hdr, "X-Scope-OrgID: %s", tenant) < 0 ? -1 : add_header(py, hdr);
		free(hdr);
	}
	for (char *kv = strtok_r(headers, ",", &save); !err && ot->url && kv;
	     kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');

		if (!eq || eq == kv) {
			/* Not the value itself: it may be a secret. */
			ds_err("DWARFSAMPLE_OTLP_HEADERS: expected NAME=VALUE pairs separated by "
			       "commas");
			err = -1;
			break;
		}
		*eq = '\0';
		hdr = NULL;
		err = asprintf(&hdr, "%s: %s", kv, eq + 1) < 0 ? -1 : add_header(ot, hdr);
		if (hdr)
			explicit_bzero(hdr, strlen(hdr));
		free(hdr);
	}
	explicit_bzero(headers, sizeof(headers));
	return err;
}
