/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The output file (proutput.h): a profile counted and written at the end,
 * or perf script's text written as samples come; opened first, written
 * under a temporary name and renamed over the path; a share per session
 * worker, merged at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"
#include "output/output.h"
#include "profile/profile.h"

struct pr_output {
	int fmt;
	struct pr_output_opts o;     /* the caller's, with its defaults */
	struct pr_logger lg;
	char *path;                  /* NULL: standard output */
	char *tmp;                   /* written there, renamed to dest at the
				      * end; NULL when path is not a regular
				      * file (a device, a fifo) */
	char *dest;                  /* path, or the file its links end at */
	FILE *out;                   /* NULL: a share, written nowhere */
	char *iobuf;                 /* out's buffer (script_buffer()), or NULL */
	struct pr_script *script;    /* perf-script */
	struct pr_profile *profile;  /* the other formats */
	struct pr_symbolizer *sym;   /* its worker's, as its samples say */
	struct pr_profile_write_opts wo;
	/* A session's shares (pr_output_sink()), for pr_output_published(),
	 * each NULL once merged. */
	struct pr_output **parts;
	size_t nr_parts;
	/* Where time went, as the worker last saw it (publish()). */
	_Atomic uint64_t pub_cpu_ns, pub_blocked_ns, pub_preempted_ns;
};

/* The profile `o` counts into. */
static struct pr_profile *new_profile(const struct pr_output *o)
{
	PR_OPTS(pr_profile_opts, po, .freq = o->o.freq, .log = o->o.log, .log_ctx = o->o.log_ctx,
		.mode = o->o.mode, .period_is_ns = o->o.period_is_ns,
		.off_cpu_min_ns = o->o.off_cpu_min_ns,
		/* Only speedscope shows the order samples came in. */
		.timeline = o->fmt == PR_FORMAT_SPEEDSCOPE,
		.events = o->o.events, .nr_events = o->o.nr_events,
		.counters = o->o.counters, .nr_counters = o->o.nr_counters,
		.counters_per_cpu = o->o.counters_per_cpu);

	return pr_profile_new(&po);
}

/* The profile-wide labels, "KEY=VALUE" each: 0 or a negative errno. */
static int add_tags(struct pr_output *o)
{
	for (size_t i = 0; i < o->o.nr_tags; i++) {
		const char *tag = o->o.tags[i], *eq = tag ? strchr(tag, '=') : NULL;
		char key[256];
		int err;

		if (!eq || eq == tag || eq - tag >= (ptrdiff_t)sizeof(key)) {
			pr__log(&o->lg, PR_LOG_ERROR, "invalid tag '%s': expected KEY=VALUE",
				tag ? tag : "");
			return -EINVAL;
		}
		snprintf(key, sizeof(key), "%.*s", (int)(eq - tag), tag);
		if ((err = pr_profile_tag(o->profile, key, eq + 1)))
			return err;
	}
	return 0;
}

/*
 * A regular file (or none yet) is written under a temporary name in its
 * directory (staging.c) and renamed over at the end: a run that fails, or
 * is killed, leaves what was there before, and a failed start removes
 * only its own file.  Anything else (/dev/null, a fifo) is written in
 * place.
 */
static FILE *open_file(struct pr_output *o)
{
	char target[4096];
	struct stat st;
	FILE *f;
	int fd, err;

	/* Through a symbolic link: the temporary file beside its target,
	 * renamed over that, leaves the link in place. */
	if ((err = pr__link_target(o->path, target, sizeof(target)))) {
		errno = -err;
		return NULL;
	}
	if (!stat(target, &st) && !S_ISREG(st.st_mode))
		return fopen(target, "we");
	if (!(o->dest = strdup(target))) {
		errno = ENOMEM;
		return NULL;
	}
	fd = pr__staging_create(o->dest, &o->tmp, &o->lg);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	if (!(f = fdopen(fd, "w"))) {
		close(fd);
		unlink(o->tmp);
	}
	return f;
}

/*
 * perf script's text comes a sample at a time.  To a file (or /dev/null)
 * it is written in blocks of SCRIPT_IOBUF, not of stdio's st_blksize (4
 * KiB: 8 572 write(2) calls for the cc1 capture's 35 MB); to a pipe or a
 * terminal as stdio writes it, for the reader to see samples as they
 * come.  64 KiB, not more: a buffer larger than the L2 cache had every
 * line written miss it (callgrind).  glibc takes setvbuf()'s size only
 * with a buffer given.  Standard output's is static: the stream outlives
 * the output.
 */
#define SCRIPT_IOBUF (1 << 16)
static char stdout_iobuf[SCRIPT_IOBUF];

static void script_buffer(struct pr_output *o)
{
	struct stat st;
	int fd = fileno(o->out);
	char *buf;

	if (fd < 0 || fstat(fd, &st) || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)) ||
	    isatty(fd))
		return;
	buf = o->path ? (o->iobuf = malloc(SCRIPT_IOBUF)) : stdout_iobuf;
	if (buf)
		setvbuf(o->out, buf, _IOFBF, SCRIPT_IOBUF);
}

/* Free what `o` holds, its file closed and its shares merged or freed. */
static void output_free(struct pr_output *o)
{
	free(o->iobuf);
	free(o->tmp);
	free(o->dest);
	free(o->path);
	pr_script_free(o->script);
	pr_profile_free(o->profile);
	free(o->parts);
	free(o);
}

/* An output with the caller's options, its profile made unless it is
 * perf script's text; NULL with errno set, after saying why. */
static struct pr_output *output_new(int fmt, const struct pr_output_opts *opts,
				    const struct pr_logger *lg)
{
	struct pr_output *o;

	if ((unsigned)fmt >= PR_OUTPUT_FORMAT_MAX || !PR_OPTS_VALID(opts)) {
		errno = EINVAL;
		return NULL;
	}
	if (!(o = calloc(1, sizeof(*o)))) {
		pr__log(lg, PR_LOG_ERROR, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	if (opts)
		memcpy(&o->o, opts, opts->sz < sizeof(o->o) ? opts->sz : sizeof(o->o));
	o->o.sz = sizeof(o->o);
	o->lg = *lg;
	/* Without events, the profile's one event is the one shown. */
	if (o->o.show_event >= (o->o.nr_events ? o->o.nr_events : 1)) {
		free(o);
		errno = EINVAL;
		return NULL;
	}
	o->fmt = fmt;
	if (fmt != PR_OUTPUT_PERF_SCRIPT && !(o->profile = new_profile(o))) {
		int e = errno;

		if (e == ENOMEM)
			pr__log(lg, PR_LOG_ERROR, "out of memory");
		else
			pr__log(lg, PR_LOG_ERROR, "cannot count a profile: %s", strerror(e));
		free(o);
		errno = e;
		return NULL;
	}
	return o;
}

struct pr_output *pr_output_open(const char *path, int fmt, const struct pr_output_opts *opts)
{
	struct pr_logger lg = { 0 };
	struct pr_output *o;
	int err, width;

	if (PR_OPTS_HAS(opts, log_ctx)) {
		lg.fn = opts->log;
		lg.ctx = opts->log_ctx;
	}
	if (!(o = output_new(fmt, opts, &lg)))
		return NULL;
	if (o->profile && (err = add_tags(o))) {
		if (err == -ENOMEM)
			pr__log(&lg, PR_LOG_ERROR, "out of memory");
		output_free(o);
		errno = -err;
		return NULL;
	}
	if (path && !(o->path = strdup(path))) {
		pr__log(&lg, PR_LOG_ERROR, "out of memory");
		output_free(o);
		errno = ENOMEM;
		return NULL;
	}
	o->out = o->path ? open_file(o) : stdout;
	if (!o->out) {
		err = errno;
		if (err == ELOOP)
			pr__log(&lg, PR_LOG_ERROR, "cannot write %s: its symbolic links loop "
				"(or are more than 40); point it at a file, or choose another "
				PR_LOG_SETTING_OUTPUT_PATH, o->path);
		else if (o->dest && strcmp(o->dest, o->path))
			pr__log(&lg, PR_LOG_ERROR, "cannot write %s, the file the symbolic link "
				"%s names: %s; choose another " PR_LOG_SETTING_OUTPUT_PATH,
				o->dest, o->path, strerror(err));
		else
			pr__log(&lg, PR_LOG_ERROR, "cannot write %s: %s; choose another "
				PR_LOG_SETTING_OUTPUT_PATH, o->path, strerror(err));
		output_free(o);
		errno = err;
		return NULL;
	}
	setvbuf(o->out, NULL, _IOFBF, 1 << 20);
	if (fmt == PR_OUTPUT_PERF_SCRIPT)
		script_buffer(o);
	width = o->o.event_width;
	for (size_t i = 0; i < o->o.nr_events; i++)
		if ((int)strlen(o->o.events[i]) > width)
			width = (int)strlen(o->o.events[i]);
	/* perf script aligns the event names: "offcpu-time" is one. */
	if (o->o.mode != PR_PROFILE_CPU && width < (int)strlen(PR_SCRIPT_OFFCPU_EVENT))
		width = (int)strlen(PR_SCRIPT_OFFCPU_EVENT);
	if (!o->profile) {
		PR_OPTS(pr_script_opts, so, .fields = o->o.fields, .no_inline = o->o.no_inline,
			.event_width = width, .freq = o->o.freq,
			.period_is_ns = o->o.period_is_ns, .off_cpu_min_ns = o->o.off_cpu_min_ns,
			.annotate = o->o.annotate, .tp_formats = o->o.tp_formats);

		if (!(o->script = pr_script_new(o->out, &so))) {
			err = errno;
			pr__log(&lg, PR_LOG_ERROR, "cannot write perf script's text: %s",
				strerror(err));
			pr_output_discard(o);
			errno = err;
			return NULL;
		}
	}
	o->wo = (struct pr_profile_write_opts){
		.sz = sizeof(o->wo), .per_thread = o->o.per_thread, .annotate = o->o.annotate,
		.title = o->o.title, .event = o->o.show_event,
	};
	return o;
}

/* Write (unless `discard`), flush, close and free; the temporary file
 * renamed over the path, or removed on failure or discard. */
static int output_close(struct pr_output *o, uint64_t start_ns, uint64_t duration_ns,
			bool discard)
{
	const char *name;
	int err = 0;

	if (!o)
		return 0;
	name = o->path ? o->path : "standard output";
	if (o->profile && !discard) {
		pr_profile_set_time(o->profile, start_ns, duration_ns);
		err = pr_profile_write(o->profile, (enum pr_profile_format)o->fmt, o->out, &o->wo);
	}
	if (!err && fflush(o->out))
		err = -errno;
	/* A write that failed before, its stream's buffer since empty. */
	if (!err && o->script)
		err = pr_script_error(o->script);
	else if (!err && ferror(o->out))
		err = -EIO;
	if (o->path && fclose(o->out) && !err)
		err = -errno;
	if (o->tmp && !err && !discard && rename(o->tmp, o->dest))
		err = -errno;
	if (err)
		pr__log(&o->lg, PR_LOG_ERROR, "writing %s failed: %s", name, strerror(-err));
	if (o->tmp && (err || discard))
		unlink(o->tmp);
	output_free(o);
	return err;
}

int pr_output_close(struct pr_output *o, uint64_t start_ns, uint64_t duration_ns)
{
	return output_close(o, start_ns, duration_ns, false);
}

int pr_output_discard(struct pr_output *o)
{
	return output_close(o, 0, 0, true);
}

bool pr_output_failed(const struct pr_output *o)
{
	return o && o->out && ferror(o->out);
}

/* For the status line: where time went, as the worker sees it now. */
static void publish(struct pr_output *o)
{
	struct pr_profile_times t = { .sz = sizeof(t) };

	if (!o->o.publish_times || pr_output_times(o, 0, &t))
		return;
	atomic_store_explicit(&o->pub_cpu_ns, t.cpu_ns, memory_order_relaxed);
	atomic_store_explicit(&o->pub_blocked_ns, t.off_cpu_ns[PR_WAIT_BLOCKED],
			      memory_order_relaxed);
	atomic_store_explicit(&o->pub_preempted_ns, t.off_cpu_ns[PR_WAIT_PREEMPTED],
			      memory_order_relaxed);
}

int pr_output_sample(struct pr_output *o, const struct pr_sink_sample *s)
{
	const char *event;
	int err;

	if (!o || !s)
		return -EINVAL;
	o->sym = s->sym;
	if (s->off_cpu) {
		err = o->script ? pr_script_switch(o->script, s->sym, s->rec, s->st, s->comm,
						   s->process)
				: pr_profile_add_switch(o->profile, s->sym, s->rec, s->st, s->comm,
							s->process);
	} else if (o->script) {
		/* perf script's text has no one event to show: it filters. */
		if (o->o.filter_event && s->event != o->o.only_event)
			return 0;
		event = s->event < o->o.nr_event_names ? o->o.event_names[s->event] : NULL;
		if (!event && s->event < o->o.nr_events)
			event = o->o.events[s->event];
		/* A reader that went away (a pager quit) stops the run;
		 * pr_output_close() says so. */
		err = pr_script_sample(o->script, s->sym, s->rec, s->st, s->comm, s->process,
				       event ? event : o->o.event_name);
	} else {
		err = pr_profile_add_event(o->profile, s->event, s->sym, s->rec, s->st, s->comm,
					   s->process);
	}
	if (o->o.mode != PR_PROFILE_CPU)
		publish(o);
	return err;
}

int pr_output_apply(struct pr_output *o, const struct pr_record *rec)
{
	int err;

	if (!o || !rec)
		return -EINVAL;
	/* Switches and exits end a thread's waits; in CPU time, nothing
	 * but samples counts. */
	if (o->o.mode == PR_PROFILE_CPU)
		return 0;
	err = o->profile ? pr_profile_apply(o->profile, rec) : pr_script_apply(o->script, rec);
	if (rec->type == PR_RECORD_SWITCH || rec->type == PR_RECORD_SWITCH_CPU_WIDE)
		publish(o);
	return err;
}

int pr_output_end(struct pr_output *o, uint64_t time)
{
	int err;

	if (!o)
		return -EINVAL;
	if (o->profile && o->sym && (err = prof__name_jit_late(o->profile, o->sym)))
		return err;
	/* Threads still off the CPU wait until the run ended. */
	if (o->o.mode == PR_PROFILE_CPU)
		return 0;
	err = o->profile ? pr_profile_end(o->profile, time) : pr_script_end(o->script, time);
	publish(o);
	return err;
}

int pr_output_times(const struct pr_output *o, uint32_t pid, struct pr_profile_times *t)
{
	if (!o)
		return -EINVAL;
	return o->profile ? pr_profile_times(o->profile, pid, t)
			  : pr_script_times(o->script, pid, t);
}

size_t pr_output_pids(const struct pr_output *o, uint32_t *pids, size_t max)
{
	if (!o)
		return 0;
	return o->profile ? pr_profile_pids(o->profile, pids, max)
			  : pr_script_pids(o->script, pids, max);
}

const char *pr_output_process(const struct pr_output *o, uint32_t pid)
{
	if (!o)
		return NULL;
	return o->profile ? pr_profile_process(o->profile, pid)
			  : pr_script_process(o->script, pid);
}

size_t pr_output_nr_stacks(const struct pr_output *o)
{
	return o && o->profile ? pr_profile_nr_stacks(o->profile) : 0;
}

int pr_output_published(const struct pr_output *o, struct pr_profile_times *t)
{
	struct pr_profile_times sum = { .sz = sizeof(sum) };

	if (!o)
		return -EINVAL;
	for (size_t i = 0; i <= o->nr_parts; i++) {
		const struct pr_output *p = i ? o->parts[i - 1] : o;

		if (!p)
			continue;
		sum.cpu_ns += atomic_load_explicit(&p->pub_cpu_ns, memory_order_relaxed);
		sum.off_cpu_ns[PR_WAIT_BLOCKED] +=
			atomic_load_explicit(&p->pub_blocked_ns, memory_order_relaxed);
		sum.off_cpu_ns[PR_WAIT_PREEMPTED] +=
			atomic_load_explicit(&p->pub_preempted_ns, memory_order_relaxed);
	}
	return pr__stats_copy(t, &sum, sizeof(sum));
}

/* ---- the session's sink ---- */

static int sink_record(void *ctx, const struct pr_record *rec)
{
	return pr_output_apply(ctx, rec);
}

static int sink_sample(void *ctx, const struct pr_sink_sample *s)
{
	return pr_output_sample(ctx, s);
}

static int sink_finish(void *ctx, uint64_t end)
{
	return pr_output_end(ctx, end);
}

/* A share for one more worker: a profile like the root's, written
 * nowhere. */
static void *sink_part(void *ctx)
{
	struct pr_output *root = ctx, *part, **grown;

	grown = realloc(root->parts, (root->nr_parts + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	root->parts = grown;
	if (!(part = output_new(root->fmt, &root->o, &root->lg)))
		return NULL;
	root->parts[root->nr_parts++] = part;
	return part;
}

/* Add what share `part` counted to `root` (NULL: nothing, after an
 * error), and free it. */
static int sink_merge(void *ctx, void *share)
{
	struct pr_output *root = ctx, *part = share;
	int err = 0;

	/* The root keeps no pointer to a share that is gone: merged, its
	 * counts are the root's. */
	for (size_t i = 0; root && i < root->nr_parts; i++)
		if (root->parts[i] == part)
			root->parts[i] = NULL;
	if (part) {
		if (root)
			err = pr_profile_merge(root->profile, part->profile);
		output_free(part);
	}
	return err;
}

int pr_output_sink(struct pr_output *o, struct pr_sink *sink)
{
	if (!o || !sink)
		return -EINVAL;
	*sink = (struct pr_sink){
		.sz = sizeof(*sink), .ctx = o, .record = sink_record, .sample = sink_sample,
		.finish = sink_finish,
		/* perf script's text is written sample by sample, in time
		 * order: one worker. */
		.part_new = o->profile ? sink_part : NULL,
		.part_merge = o->profile ? sink_merge : NULL,
	};
	return 0;
}
