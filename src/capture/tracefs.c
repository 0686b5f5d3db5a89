/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracefs: where it is mounted (or mounting it, as perf does), and the
 * tracepoints in its events directory, by name and by id.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "capture/capture.h"
#include "prtrace.h"

#define DEFAULT_MOUNT_POINT "/sys/kernel/tracing"

static const char *const default_dirs[] = {
	DEFAULT_MOUNT_POINT,
	/* debugfs mounts tracefs here on first access (Linux 4.1+). */
	"/sys/kernel/debug/tracing",
};

static bool is_tracefs(const char *dir)
{
	struct statfs st;

	return statfs(dir, &st) == 0 && st.f_type == TRACEFS_MAGIC;
}

/* A /proc/mounts field with its octal escapes (\040 for a blank) undone,
 * in place. */
static void unescape(char *s)
{
	char *out = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*out++ = *s++;
		}
	}
	*out = '\0';
}

/* From a mounts table: the first tracefs mount, or failing that the first
 * debugfs mount's "tracing" directory (where debugfs mounts tracefs). */
static int find_in_mounts(const char *mounts, char *buf, size_t size, bool *too_long)
{
	char *line = NULL, debugfs[PATH_MAX] = "";
	size_t cap = 0;
	int found = -ENOENT;
	FILE *f = fopen(mounts, "re");

	if (!f)
		return -errno;
	while (found && getline(&line, &cap, f) > 0) {
		char *save = NULL, *dir, *type;

		if (!strtok_r(line, " \t\n", &save) ||
		    !(dir = strtok_r(NULL, " \t\n", &save)) ||
		    !(type = strtok_r(NULL, " \t\n", &save)))
			continue;
		unescape(dir);
		if (!strcmp(type, "tracefs")) {
			found = 0;
			if (!pr__path_fmt(buf, size, "%s", dir))
				*too_long = true;
		} else if (!strcmp(type, "debugfs") && !debugfs[0]) {
			snprintf(debugfs, sizeof(debugfs), "%s", dir);
		}
	}
	free(line);
	fclose(f);
	if (found && debugfs[0]) {
		found = 0;
		if (!pr__path_fmt(buf, size, "%s/tracing", debugfs))
			*too_long = true;
	}
	return found;
}

static int explain_mount_failure(const char *where, int err, const struct pr_logger *lg)
{
	const char *at = where ? where : DEFAULT_MOUNT_POINT;

	switch (err) {
	case 0:
		pr__log(lg, PR_LOG_ERROR,
			"tracefs is not mounted: mount it with 'mount -t tracefs nodev %s'", at);
		break;
	case EPERM:
	case EACCES:
		pr__log(lg, PR_LOG_ERROR,
			"tracefs is not mounted and mounting it needs root (CAP_SYS_ADMIN): "
			"mount it with 'mount -t tracefs nodev %s'", at);
		break;
	case ENODEV:
	case ENOENT:
		pr__log(lg, PR_LOG_ERROR,
			"this kernel has no tracefs (built without CONFIG_TRACING?): "
			"its tracepoints cannot be used; use a software event such as cpu-clock");
		break;
	default:
		pr__log(lg, PR_LOG_ERROR,
			"tracefs is not mounted and mounting it on %s failed (%s): "
			"mount it with 'mount -t tracefs nodev %s'", at, strerror(err), at);
		break;
	}
	return -ENODEV;
}

int pr__tracefs_find(const struct pr_tracefs_places *pl, char *buf, size_t size,
		     const struct pr_logger *lg)
{
	bool too_long = false;
	int err;

	for (size_t i = 0; i < pl->nr_dirs; i++) {
		if (!is_tracefs(pl->dirs[i]))
			continue;
		if (pr__path_fmt(buf, size, "%s", pl->dirs[i]))
			return 0;
		too_long = true;
	}
	if (!too_long) {
		err = find_in_mounts(pl->mounts, buf, size, &too_long);
		if (!err && !too_long)
			return 0;
	}
	if (too_long) {
		pr__log(lg, PR_LOG_ERROR,
			"the tracefs path does not fit in %zu bytes: give a larger buffer", size);
		return -ENAMETOOLONG;
	}
	if (!pl->mount_on)
		return explain_mount_failure(NULL, 0, lg);
	if (mount("nodev", pl->mount_on, "tracefs", 0, NULL))
		return explain_mount_failure(pl->mount_on, errno, lg);
	pr__log(lg, PR_LOG_INFO, "mounted tracefs on %s", pl->mount_on);
	if (pr__path_fmt(buf, size, "%s", pl->mount_on))
		return 0;
	pr__log(lg, PR_LOG_ERROR,
		"the tracefs path does not fit in %zu bytes: give a larger buffer", size);
	return -ENAMETOOLONG;
}

/* Two threads finding tracefs unmounted would mount it twice. */
static pthread_mutex_t find_lock = PTHREAD_MUTEX_INITIALIZER;

int pr__tracefs_path(char *buf, size_t size, const struct pr_logger *lg)
{
	static const struct pr_tracefs_places system = {
		.mounts = "/proc/mounts",
		.dirs = default_dirs,
		.nr_dirs = PR_ARRAY_SIZE(default_dirs),
		.mount_on = DEFAULT_MOUNT_POINT,
	};
	int err;

	if (!buf || !size)
		return -EINVAL;
	pthread_mutex_lock(&find_lock);
	err = pr__tracefs_find(&system, buf, size, lg);
	pthread_mutex_unlock(&find_lock);
	return err;
}

PR_SYMVER(pr__tracefs_path_2_1, "pr_tracefs_path@@LIBPERFREADER_2.1");
int pr__tracefs_path_2_1(char *buf, size_t size, const struct pr_event_lookup_opts *opts)
{
	struct pr_logger lg;

	return pr__lookup_logger(opts, &lg) ? -EINVAL : pr__tracefs_path(buf, size, &lg);
}

/* 2.0 took the log callback bare. */
PR_SYMVER(pr__tracefs_path_2_0, "pr_tracefs_path@LIBPERFREADER_2");
int pr__tracefs_path_2_0(char *buf, size_t size, pr_log_fn log, void *log_ctx)
{
	struct pr_logger lg = { log, log_ctx };

	return pr__tracefs_path(buf, size, &lg);
}

/* ---- tracepoints ---- */

/* A subsystem or event name: it becomes a path, so no '/' and no "..". */
static bool valid_part(const char *s)
{
	if (!*s || *s == '.')
		return false;
	for (; *s; s++)
		if (!(*s == '_' || *s == '-' || *s == '.' || (*s >= '0' && *s <= '9') ||
		      (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
			return false;
	return true;
}

/* Offer each subdirectory of `dir` (subsystems, or a subsystem's events)
 * to `sg`. */
static void offer_subdirs(struct pr_suggest *sg, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] != '.' && (de->d_type == DT_DIR || de->d_type == DT_UNKNOWN))
			pr__suggest_offer(sg, de->d_name);
	}
	closedir(d);
}

static int explain_missing(const char *tracefs, const char *sys, const char *name,
			   const struct pr_logger *lg)
{
	char dir[PATH_MAX], hint[3 * (PR_SUGGEST_LEN + 16)], prefix[PR_SUGGEST_LEN + 2];
	struct pr_suggest sg;
	struct stat st;

	if (!pr__path_fmt(dir, sizeof(dir), "%s/events/%s", tracefs, sys))
		return -ENOENT;
	if (stat(dir, &st) == 0) {
		pr__suggest_init(&sg, name);
		offer_subdirs(&sg, dir);
		snprintf(prefix, sizeof(prefix), "%s:", sys);
		pr__suggest_text(&sg, prefix, hint, sizeof(hint));
		pr__log(lg, PR_LOG_ERROR, "tracepoint '%s:%s' does not exist: %ssee %s/",
			sys, name, hint, dir);
		return -ENOENT;
	}
	pr__suggest_init(&sg, sys);
	pr__path_fmt(dir, sizeof(dir), "%s/events", tracefs);
	offer_subdirs(&sg, dir);
	pr__suggest_text(&sg, "", hint, sizeof(hint));
	pr__log(lg, PR_LOG_ERROR,
		"tracepoint '%s:%s' does not exist: there is no subsystem '%s': %s"
		"see %s/ or `perf list tracepoint`", sys, name, sys, hint, dir);
	return -ENOENT;
}

static int read_id(const char *path, uint64_t *id)
{
	char text[32], *end;
	FILE *f = fopen(path, "re");
	int err = 0;

	if (!f)
		return -errno;
	if (!fgets(text, sizeof(text), f))
		err = -EIO;
	fclose(f);
	if (err)
		return err;
	errno = 0;
	*id = strtoull(text, &end, 10);
	return errno || end == text || (*end && *end != '\n') ? -EIO : 0;
}

int pr__tracepoint_id(const char *sys, const char *name, uint64_t *id,
		      const struct pr_logger *lg)
{
	char tracefs[PATH_MAX], path[PATH_MAX];
	int err;

	if (!valid_part(sys) || !valid_part(name)) {
		pr__log(lg, PR_LOG_ERROR,
			"'%s:%s' is not a tracepoint name: both parts are letters, digits, '_', '-' or '.'",
			sys, name);
		return -EINVAL;
	}
	err = pr__tracefs_path(tracefs, sizeof(tracefs), lg);
	if (err)
		return err;
	if (!pr__path_fmt(path, sizeof(path), "%s/events/%s/%s/id", tracefs, sys, name)) {
		pr__log(lg, PR_LOG_ERROR, "tracepoint name '%s:%s' is too long", sys, name);
		return -EINVAL;
	}
	err = read_id(path, id);
	switch (err) {
	case 0:
		return 0;
	case -ENOENT:
	case -ENOTDIR:
		return explain_missing(tracefs, sys, name, lg);
	case -EACCES:
	case -EPERM:
		pr__log(lg, PR_LOG_ERROR,
			"cannot read %s: permission denied (tracefs is root's); run as root, "
			"or make it readable with 'mount -o remount,mode=755 %s'", path, tracefs);
		return -EACCES;
	default:
		pr__log(lg, PR_LOG_ERROR, "cannot read the id of tracepoint '%s:%s' from %s: %s",
			sys, name, path, strerror(-err));
		return err;
	}
}

/* Search one subsystem's events for `id`. */
static bool find_in_subsys(const char *dir, const char *sys, uint64_t id, char *buf,
			   size_t size)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool found = false;

	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		char path[PATH_MAX];
		uint64_t got;

		if (de->d_name[0] == '.' ||
		    !pr__path_fmt(path, sizeof(path), "%s/%s/id", dir, de->d_name))
			continue;
		found = read_id(path, &got) == 0 && got == id &&
			pr__path_fmt(buf, size, "%s:%s", sys, de->d_name);
	}
	closedir(d);
	return found;
}

int pr__tracepoint_name(uint64_t id, char *buf, size_t size)
{
	char tracefs[PATH_MAX], events[PATH_MAX];
	struct dirent *de;
	bool found = false;
	DIR *d;

	if (pr__tracefs_path(tracefs, sizeof(tracefs), NULL))
		return -ENOENT;
	if (!pr__path_fmt(events, sizeof(events), "%s/events", tracefs))
		return -ENOENT;
	d = opendir(events);
	if (!d)
		return -ENOENT;
	while (!found && (de = readdir(d))) {
		char dir[PATH_MAX];

		if (de->d_name[0] != '.' &&
		    pr__path_fmt(dir, sizeof(dir), "%s/%s", events, de->d_name))
			found = find_in_subsys(dir, de->d_name, id, buf, size);
	}
	closedir(d);
	return found ? 0 : -ENOENT;
}

/* ---- formats ---- */

int pr_tp_formats_load(struct pr_tp_formats *t, const char *event,
		       const struct pr_event_lookup_opts *opts)
{
	char sys[PR_EVENT_NAME_MAX], name[PR_EVENT_NAME_MAX], tracefs[PATH_MAX], path[PATH_MAX];
	char *text = NULL, *colon, *mod;
	size_t len = 0, n;
	struct pr_logger lg;
	uint64_t id;
	FILE *f, *m;
	int err;

	if (!t || !event || pr__lookup_logger(opts, &lg))
		return -EINVAL;
	colon = strchr(event, ':');
	if (!colon || snprintf(sys, sizeof(sys), "%.*s", (int)(colon - event), event) >=
			      (int)sizeof(sys))
		return -EINVAL;
	mod = strchr(colon + 1, ':');
	n = mod ? (size_t)(mod - colon - 1) : strlen(colon + 1);
	if (snprintf(name, sizeof(name), "%.*s", (int)n, colon + 1) >= (int)sizeof(name))
		return -EINVAL;
	/* Said: a name that is no tracepoint, or none tracefs has. */
	err = pr__tracepoint_id(sys, name, &id, &lg);
	if (!err)
		err = pr__tracefs_path(tracefs, sizeof(tracefs), &lg);
	if (err)
		return err;
	if (!pr__path_fmt(path, sizeof(path), "%s/events/%s/%s/format", tracefs, sys, name))
		return -EINVAL;
	f = fopen(path, "re");
	if (!f) {
		err = -errno;
		pr__log(&lg, PR_LOG_WARN, "cannot read %s: %s", path, strerror(-err));
		return err;
	}
	m = open_memstream(&text, &len);
	if (m) {
		char chunk[4096];

		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
			fwrite(chunk, 1, n, m);
		err = fclose(m) ? -ENOMEM : 0;
	} else {
		err = -ENOMEM;
	}
	fclose(f);
	if (!err)
		err = pr_tp_formats_add(t, sys, text, len);
	if (err == -EBADMSG)
		pr__log(&lg, PR_LOG_WARN, "%s does not read as a tracepoint's format: its "
			"samples' fields will not be shown", path);
	free(text);
	return err;
}
