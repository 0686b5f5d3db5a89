/* SPDX-License-Identifier: Apache-2.0 */
/* The sinks of named stacks: perf script's text, or a profile. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"

const struct option ds_output_longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	{ "tid", no_argument, NULL, DS_OPT_TID },
	{ "tag", required_argument, NULL, DS_OPT_TAG },
	{ "annotate", no_argument, NULL, DS_OPT_ANNOTATE },
	{ NULL, 0, NULL, 0 },
};

const char ds_output_help[] =
	"Output:\n"
	"  -o, --output FILE        where to write the profile; its extension picks\n"
	"                           the format when -f is not given (.svg, .pb.gz,\n"
	"                           .folded, .speedscope.json, .txt for\n"
	"                           perf-script)\n"
	"  -f, --format FORMAT      svg: an interactive flame graph (open it in a\n"
	"                             web browser);\n"
	"                           pprof: gzipped profile.proto (go tool pprof);\n"
	"                           folded: one line per stack, for flamegraph.pl,\n"
	"                             inferno and speedscope;\n"
	"                           speedscope: speedscope's JSON, a profile per\n"
	"                             thread;\n"
	"                           perf-script: perf script's text, sample by\n"
	"                             sample\n"
	"      --tid                folded, svg: a root per thread (comm-PID/TID)\n"
	"                           instead of per process name\n"
	"      --annotate           folded, svg: mark kernel frames _[k], inlined\n"
	"                           functions _[i] and JIT code _[j]\n"
	"      --tag KEY=VALUE      a label for the whole profile (pprof writes it on\n"
	"                           every sample); repeatable\n";

static const char *const hints[] = {
	[PR_FORMAT_FOLDED] = "flamegraph.pl FILE > out.svg, inferno-flamegraph, or "
			     "https://www.speedscope.app",
	[PR_FORMAT_PPROF] = "go tool pprof -http=: FILE (or -top, -traces)",
	[PR_FORMAT_SPEEDSCOPE] = "https://www.speedscope.app, or npx speedscope FILE",
	[PR_FORMAT_SVG] = "a web browser (xdg-open FILE)",
	[DS_FORMAT_PERF_SCRIPT] = "a pager, stackcollapse-perf.pl, or the Firefox Profiler",
};

const char *ds_format_name(int fmt)
{
	return fmt == DS_FORMAT_PERF_SCRIPT ? "perf-script"
					    : pr_profile_format_name((enum pr_profile_format)fmt);
}

const char *ds_format_hint(int fmt)
{
	return fmt >= 0 && fmt <= DS_FORMAT_PERF_SCRIPT ? hints[fmt] : "";
}

int ds_output_option(struct ds_output_opts *o, int opt, const char *arg)
{
	switch (opt) {
	case 'o':
		o->path = arg;
		return 1;
	case 'f':
		o->format = arg;
		return 1;
	case DS_OPT_TID:
		o->per_thread = true;
		return 1;
	case DS_OPT_ANNOTATE:
		o->annotate = true;
		return 1;
	case DS_OPT_TAG: {
		const char *eq = strchr(arg, '=');

		if (!eq || eq == arg) {
			ds_err("invalid --tag '%s': expected KEY=VALUE", arg);
			return -1;
		}
		if (eq - arg > 255) {
			ds_err("invalid --tag: the key is longer than 255 bytes");
			return -1;
		}
		/* pprof labels every sample with these already. */
		for (const char *const *r = (const char *const[]){ "pid", "tid", "thread",
								   "process", NULL }; *r; r++)
			if ((size_t)(eq - arg) == strlen(*r) && !strncmp(arg, *r, strlen(*r))) {
				ds_err("--tag %s=...: '%s' is a label every sample has already; "
				       "choose another key", *r, *r);
				return -1;
			}
		if (o->nr_tags == DS_MAX_TAGS) {
			ds_err("at most %d --tag", DS_MAX_TAGS);
			return -1;
		}
		o->tags[o->nr_tags++] = arg;
		return 1;
	}
	default:
		return 0;
	}
}

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);

	return n >= m && !strcmp(s + n - m, end);
}

bool ds_output_shows_lines(const struct ds_output_opts *o, int fmt)
{
	if (fmt == DS_FORMAT_PERF_SCRIPT)
		return ((o->fields ? o->fields : PR_SCRIPT_DEFAULT) & PR_SCRIPT_SRCLINE) != 0;
	return fmt != PR_FORMAT_FOLDED && fmt != PR_FORMAT_SVG;
}

int ds_output_format(const struct ds_output_opts *o, int fallback, bool ext_required)
{
	int fmt;

	if (o->format) {
		if (!strcmp(o->format, "perf-script"))
			return DS_FORMAT_PERF_SCRIPT;
		fmt = pr_profile_format_by_name(o->format);
		if (fmt < 0)
			ds_err("unknown format '%s': the formats are svg, pprof, folded, "
			       "speedscope and perf-script", o->format);
		return fmt < 0 ? -1 : fmt;
	}
	if (!o->path || !strcmp(o->path, "-"))
		return fallback;
	if (ends_with(o->path, ".txt") || ends_with(o->path, ".perf") ||
	    ends_with(o->path, ".script"))
		return DS_FORMAT_PERF_SCRIPT;
	fmt = pr_profile_format_by_path(o->path);
	if (fmt < 0 && !ext_required)
		return fallback;
	if (fmt < 0) {
		ds_err("cannot tell the format from '%s': give -f svg, pprof, folded, "
		       "speedscope or perf-script, or an extension (.svg, .pb.gz, .folded, "
		       ".speedscope.json)", o->path);
		return -1;
	}
	return fmt;
}

struct ds_sink {
	int fmt;
	const char *path;            /* NULL: stdout */
	char *tmp;                   /* written there, renamed to path at the
				      * end; NULL when path is not a regular
				      * file (a device, a fifo) */
	FILE *out;
	struct pr_script *script;    /* perf-script */
	const char *event;
	uint64_t freq;               /* the shares' profiles count with it */
	uint64_t samples;
	struct pr_profile *profile;  /* the other formats */
	struct pr_profile_write_opts wo;
	const char *const *events;   /* ds_output_opts.events */
	size_t nr_events;
	/* In a session (ds_sink_session()): what makes the other workers'
	 * shares, and the shares made (the root's, for the status line). */
	const struct ds_output_opts *o;
	bool waits_mode;             /* off-CPU or wall time: records end waits */
	int only_event;              /* -1: every event */
	struct pr_file *names_file;  /* names each sample's event, or NULL */
	bool publish;
	struct ds_sink **parts;
	size_t nr_parts;
	/* Where time went, as the worker last saw it (ds_sink_publish()). */
	_Atomic uint64_t pub_cpu_ns, pub_off_cpu_ns, pub_preempted_ns;
};

/* The event the profile's folded, SVG and speedscope files show: the one
 * o->show_event names, into s->wo.  0, or -1 after saying which there
 * are. */
static int show_event(struct ds_sink *s, const struct ds_output_opts *o)
{
	char list[1024] = "";
	size_t len = 0;
	int idx;

	if (!o->show_event)
		return 0;
	idx = pr_profile_event_by_name(s->profile, o->show_event);
	if (idx >= 0) {
		s->wo.event = (size_t)idx;
		return 0;
	}
	for (size_t i = 0; i < o->nr_events && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
					o->events[i]);
	if (!o->nr_events)
		ds_err("--event %s: the profile has one event only", o->show_event);
	else
		ds_err("--event %s: no such event (or several, told apart by :u or :k); "
		       "the events are %s", o->show_event, list);
	return -1;
}

/*
 * A regular file (or none yet) is written under a temporary name in its
 * directory and renamed over at the end: a run that fails, or is killed,
 * leaves what was there before, and a failed start removes only its own
 * file.  Anything else (/dev/null, a fifo) is written in place.
 */
static FILE *open_output(struct ds_sink *s)
{
	struct stat st;
	mode_t mask;
	FILE *f;
	int fd;

	if (!stat(s->path, &st) && !S_ISREG(st.st_mode))
		return fopen(s->path, "we");
	if (asprintf(&s->tmp, "%s.XXXXXX", s->path) < 0) {
		s->tmp = NULL;
		errno = ENOMEM;
		return NULL;
	}
	fd = mkostemp(s->tmp, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		free(s->tmp);
		s->tmp = NULL;
		errno = e;
		return NULL;
	}
	/* As fopen would have made it: 0666 less the umask. */
	mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	if (!(f = fdopen(fd, "w"))) {
		close(fd);
		unlink(s->tmp);
	}
	return f;
}

/* The profile a sink of format `fmt` counts into. */
static struct pr_profile *new_profile(const struct ds_output_opts *o, int fmt, uint64_t freq)
{
	PR_OPTS(pr_profile_opts, po, .freq = freq, .log = ds_log, .mode = o->mode,
		.period_is_ns = o->period_is_ns, .off_cpu_min_ns = o->off_cpu_min_ns,
		/* Only speedscope shows the order samples came in. */
		.timeline = fmt == PR_FORMAT_SPEEDSCOPE,
		.events = o->events, .nr_events = o->nr_events,
		.counters = o->counters, .nr_counters = o->nr_counters,
		.counters_per_cpu = o->counters_per_cpu);

	return pr_profile_new(&po);
}

struct ds_sink *ds_sink_part(const struct ds_output_opts *o, int fmt, uint64_t freq)
{
	struct ds_sink *s = fmt == DS_FORMAT_PERF_SCRIPT ? NULL : calloc(1, sizeof(*s));

	if (s && !(s->profile = new_profile(o, fmt, freq))) {
		free(s);
		s = NULL;
	}
	if (!s) {
		ds_err("out of memory");
		return NULL;
	}
	s->fmt = fmt;
	s->events = o->events;
	s->nr_events = o->nr_events;
	s->freq = freq;
	return s;
}

int ds_sink_merge(struct ds_sink *s, struct ds_sink *part)
{
	int err = 0;

	if (part) {
		if (s) {
			err = pr_profile_merge(s->profile, part->profile);
			s->samples += part->samples;
		}
		pr_profile_free(part->profile);
		free(part);
	}
	return err;
}

struct ds_sink *ds_sink_open(const struct ds_output_opts *o, int fmt, const char *path,
			     uint64_t freq, const char *event, int event_width)
{
	struct ds_sink *s = calloc(1, sizeof(*s));

	if (!s) {
		ds_err("out of memory");
		return NULL;
	}
	s->wo.sz = sizeof(s->wo);
	s->fmt = fmt;
	s->path = path && strcmp(path, "-") ? path : NULL;
	s->event = event;
	s->events = o->events;
	s->nr_events = o->nr_events;
	if (fmt == PR_FORMAT_PPROF && !s->path && isatty(STDOUT_FILENO)) {
		ds_err("pprof is binary: give -o FILE.pb.gz, or redirect standard output");
		free(s);
		return NULL;
	}
	if (fmt != DS_FORMAT_PERF_SCRIPT) {
		s->profile = new_profile(o, fmt, freq);
		for (size_t i = 0; s->profile && i < o->nr_tags; i++) {
			const char *eq = strchr(o->tags[i], '=');
			char key[256];

			snprintf(key, sizeof(key), "%.*s", (int)(eq - o->tags[i]), o->tags[i]);
			if (pr_profile_tag(s->profile, key, eq + 1)) {
				pr_profile_free(s->profile);
				s->profile = NULL;
			}
		}
		if (!s->profile) {
			ds_err("out of memory");
			free(s);
			return NULL;
		}
		if (show_event(s, o)) {
			pr_profile_free(s->profile);
			free(s);
			return NULL;
		}
	}
	s->out = s->path ? open_output(s) : stdout;
	if (!s->out) {
		ds_err("cannot write %s: %s; choose another output path with -o", s->path,
		       strerror(errno));
		pr_profile_free(s->profile);
		free(s);
		return NULL;
	}
	setvbuf(s->out, NULL, _IOFBF, 1 << 20);
	for (size_t i = 0; i < o->nr_events; i++)
		if ((int)strlen(o->events[i]) > event_width)
			event_width = (int)strlen(o->events[i]);
	/* perf script aligns the event names: "offcpu-time" is one. */
	if (o->mode != PR_PROFILE_CPU && event_width < (int)strlen(PR_SCRIPT_OFFCPU_EVENT))
		event_width = (int)strlen(PR_SCRIPT_OFFCPU_EVENT);
	s->freq = freq;
	if (!s->profile) {
		PR_OPTS(pr_script_opts, so, .fields = o->fields, .no_inline = o->no_inline,
			.event_width = event_width, .freq = freq, .period_is_ns = o->period_is_ns,
			.off_cpu_min_ns = o->off_cpu_min_ns);

		if (!(s->script = pr_script_new(s->out, &so))) {
			ds_err("cannot write perf script's text: %s", strerror(errno));
			ds_sink_close(s, 0, 0, true);
			return NULL;
		}
	}
	s->wo.per_thread = o->per_thread;
	s->wo.annotate = o->annotate;
	s->wo.title = o->title;
	return s;
}

int ds_sink_sample(struct ds_sink *s, const struct pr_record *rec, const struct pr_stack *st,
		   struct pr_symbolizer *sym, const char *comm, const char *process,
		   const char *event)
{
	return ds_sink_sample_event(s, 0, rec, st, sym, comm, process, event);
}

int ds_sink_sample_event(struct ds_sink *s, size_t idx, const struct pr_record *rec,
			 const struct pr_stack *st, struct pr_symbolizer *sym, const char *comm,
			 const char *process, const char *event)
{
	s->samples++;
	if (!event && idx < s->nr_events)
		event = s->events[idx];
	/* perf-script: a reader that went away (a pager quit) stops the
	 * run; ds_sink_close() says so. */
	if (s->script)
		return pr_script_sample(s->script, sym, rec, st, comm, process,
					event ? event : s->event);
	return pr_profile_add_event(s->profile, idx, sym, rec, st, comm, process);
}

bool ds_sink_failed(const struct ds_sink *s)
{
	return s && s->out && ferror(s->out);
}

int ds_sink_switch(struct ds_sink *s, const struct pr_record *rec, const struct pr_stack *st,
		   struct pr_symbolizer *sym, const char *comm, const char *process)
{
	s->samples++;
	if (s->script)
		return pr_script_switch(s->script, sym, rec, st, comm, process);
	return pr_profile_add_switch(s->profile, sym, rec, st, comm, process);
}

int ds_sink_record(struct ds_sink *s, const struct pr_record *rec)
{
	return s->profile ? pr_profile_apply(s->profile, rec) : pr_script_apply(s->script, rec);
}

int ds_sink_end(struct ds_sink *s, uint64_t time)
{
	return s->profile ? pr_profile_end(s->profile, time) : pr_script_end(s->script, time);
}

int ds_sink_times(const struct ds_sink *s, uint32_t pid, struct pr_profile_times *t)
{
	return s->profile ? pr_profile_times(s->profile, pid, t) : pr_script_times(s->script, pid, t);
}

const char *ds_duration(uint64_t ns, char *buf, size_t len)
{
	if (ns >= UINT64_C(1000000000))
		snprintf(buf, len, "%.2f s", (double)ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, len, "%.1f ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.0f us", (double)ns / 1e3);
	return buf;
}

/* "on-CPU 1.20 s, off-CPU 3.40 s (blocked 88%, preempted 12%)" */
static void print_times(const struct pr_profile_times *t)
{
	uint64_t off = t->off_cpu_ns[PR_WAIT_BLOCKED] + t->off_cpu_ns[PR_WAIT_PREEMPTED];
	char a[32], b[32];

	if (t->samples)
		fprintf(stderr, "on-CPU %s, ", ds_duration(t->cpu_ns, a, sizeof(a)));
	fprintf(stderr, "off-CPU %s", ds_duration(off, b, sizeof(b)));
	if (off)
		fprintf(stderr, " (blocked %.0f%%, preempted %.0f%%)",
			100.0 * (double)t->off_cpu_ns[PR_WAIT_BLOCKED] / (double)off,
			100.0 * (double)t->off_cpu_ns[PR_WAIT_PREEMPTED] / (double)off);
}

void ds_sink_print_times(const struct ds_sink *s)
{
	struct pr_profile_times t = { .sz = sizeof(t) };
	uint32_t pids[10];
	size_t n;

	if (ds_sink_times(s, 0, &t))
		return;
	fputs("dwarfsample: ", stderr);
	print_times(&t);
	fprintf(stderr, "; %" PRIu64 " waits", t.waits[0] + t.waits[1]);
	if (t.waits_short)
		fprintf(stderr, ", %" PRIu64 " shorter than --off-cpu-min left out",
			t.waits_short);
	if (t.waits_lost)
		fprintf(stderr, ", %" PRIu64 " without a stack (their sample was lost)",
			t.waits_lost);
	fputc('\n', stderr);
	n = s->profile ? pr_profile_pids(s->profile, pids, 10) : pr_script_pids(s->script, pids, 10);
	for (size_t i = 0; i < n && i < 10; i++) {
		const char *name = s->profile ? pr_profile_process(s->profile, pids[i])
					       : pr_script_process(s->script, pids[i]);

		t = (struct pr_profile_times){ .sz = sizeof(t) };
		if (ds_sink_times(s, pids[i], &t))
			continue;
		fprintf(stderr, "dwarfsample:   %s[%u]: ", name ? name : "?", pids[i]);
		print_times(&t);
		fputc('\n', stderr);
	}
	if (n > 10)
		fprintf(stderr, "dwarfsample:   and %zu more processes\n", n - 10);
}

uint64_t ds_sink_samples(const struct ds_sink *s)
{
	return s->samples;
}

size_t ds_sink_stacks(const struct ds_sink *s)
{
	return s->profile ? pr_profile_nr_stacks(s->profile) : 0;
}

int ds_sink_close(struct ds_sink *s, uint64_t start_ns, uint64_t duration_ns, bool discard)
{
	const char *name = s->path ? s->path : "standard output";
	int err = 0;

	if (s->profile && !discard) {
		pr_profile_set_time(s->profile, start_ns, duration_ns);
		err = pr_profile_write(s->profile, (enum pr_profile_format)s->fmt, s->out, &s->wo);
	}
	if (!err && fflush(s->out))
		err = -errno;
	/* A write that failed before, its stream's buffer since empty. */
	if (!err && s->script)
		err = pr_script_error(s->script);
	else if (!err && ferror(s->out))
		err = -EIO;
	if (s->path && fclose(s->out) && !err)
		err = -errno;
	if (s->tmp && !err && !discard && rename(s->tmp, s->path))
		err = -errno;
	if (err)
		ds_err("writing %s failed: %s", name, strerror(-err));
	if (s->tmp && (err || discard))
		unlink(s->tmp);
	free(s->tmp);
	pr_script_free(s->script);
	pr_profile_free(s->profile);
	free(s->parts);
	free(s);
	return err ? -1 : 0;
}

/* For the status line: where time went, as the worker sees it now. */
static void publish(struct ds_sink *s)
{
	struct pr_profile_times t = { .sz = sizeof(t) };

	if (!s->publish || ds_sink_times(s, 0, &t))
		return;
	atomic_store_explicit(&s->pub_cpu_ns, t.cpu_ns, memory_order_relaxed);
	atomic_store_explicit(&s->pub_off_cpu_ns, t.off_cpu_ns[PR_WAIT_BLOCKED] +
			      t.off_cpu_ns[PR_WAIT_PREEMPTED], memory_order_relaxed);
	atomic_store_explicit(&s->pub_preempted_ns, t.off_cpu_ns[PR_WAIT_PREEMPTED],
			      memory_order_relaxed);
}

static int session_record(void *ctx, const struct pr_record *rec)
{
	struct ds_sink *s = ctx;
	int err;

	/* Switches and exits end a thread's waits; in CPU time, nothing
	 * but samples counts. */
	if (!s->waits_mode)
		return 0;
	err = ds_sink_record(s, rec);
	if (rec->type == PR_RECORD_SWITCH || rec->type == PR_RECORD_SWITCH_CPU_WIDE)
		publish(s);
	return err;
}

static int session_sample(void *ctx, const struct pr_sink_sample *smp)
{
	struct ds_sink *s = ctx;
	const char *event = NULL;
	int err;

	if (smp->off_cpu) {
		err = ds_sink_switch(s, smp->rec, smp->st, smp->sym, smp->comm, smp->process);
	} else {
		/* perf script's text has no one event to show: --event
		 * filters. */
		if (s->only_event >= 0 && smp->event != (size_t)s->only_event)
			return 0;
		if (s->names_file)
			event = pr_file_event_name(s->names_file, smp->event);
		err = ds_sink_sample_event(s, smp->event, smp->rec, smp->st, smp->sym, smp->comm,
					   smp->process, event);
	}
	if (s->waits_mode)
		publish(s);
	return err;
}

static int session_finish(void *ctx, uint64_t end)
{
	struct ds_sink *s = ctx;
	int err;

	/* Threads still off the CPU wait until the run ended. */
	if (!s->waits_mode)
		return 0;
	err = ds_sink_end(s, end);
	publish(s);
	return err;
}

static void *session_part(void *ctx)
{
	struct ds_sink *root = ctx, *part, **grown;

	grown = realloc(root->parts, (root->nr_parts + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	root->parts = grown;
	part = ds_sink_part(root->o, root->fmt, root->freq);
	if (!part)
		return NULL;
	part->waits_mode = root->waits_mode;
	part->only_event = root->only_event;
	part->names_file = root->names_file;
	part->publish = root->publish;
	root->parts[root->nr_parts++] = part;
	return part;
}

static int session_merge(void *ctx, void *part)
{
	struct ds_sink *root = ctx;

	/* The root keeps no pointer to a share that is gone: merged, its
	 * counts are the root's. */
	for (size_t i = 0; root && i < root->nr_parts; i++)
		if (root->parts[i] == part)
			root->parts[i] = NULL;
	return ds_sink_merge(root, part);
}

void ds_sink_session(struct ds_sink *s, const struct ds_output_opts *o, int only_event,
		     struct pr_file *names, bool publish_times, struct pr_sink *out)
{
	s->o = o;
	s->waits_mode = o->mode != PR_PROFILE_CPU;
	s->only_event = only_event;
	s->names_file = names;
	s->publish = publish_times;
	*out = (struct pr_sink){
		.sz = sizeof(*out), .ctx = s, .record = session_record, .sample = session_sample,
		.finish = session_finish,
		/* perf script's text is written sample by sample, in time
		 * order: one worker. */
		.part_new = s->profile ? session_part : NULL,
		.part_merge = s->profile ? session_merge : NULL,
	};
}

void ds_sink_published(const struct ds_sink *s, uint64_t *cpu_ns, uint64_t *off_cpu_ns,
		       uint64_t *preempted_ns)
{
	*cpu_ns = atomic_load_explicit(&s->pub_cpu_ns, memory_order_relaxed);
	*off_cpu_ns = atomic_load_explicit(&s->pub_off_cpu_ns, memory_order_relaxed);
	*preempted_ns = atomic_load_explicit(&s->pub_preempted_ns, memory_order_relaxed);
	for (size_t i = 0; i < s->nr_parts; i++) {
		const struct ds_sink *p = s->parts[i];

		if (!p)
			continue;
		*cpu_ns += atomic_load_explicit(&p->pub_cpu_ns, memory_order_relaxed);
		*off_cpu_ns += atomic_load_explicit(&p->pub_off_cpu_ns, memory_order_relaxed);
		*preempted_ns += atomic_load_explicit(&p->pub_preempted_ns, memory_order_relaxed);
	}
}
