/* SPDX-License-Identifier: Apache-2.0 */
/* -e, -c and --read-group: the events a capture samples. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <linux/perf_event.h>

#include "cli.h"
#include "events.h"

/* The events of a list as written: each one's offset in it and its
 * spelling, blanks around it and its group's braces and modifier left
 * out.  For each one, `fn` (a nonzero return stops the walk and is
 * returned). */
typedef int (*spelling_fn)(const char *list, size_t at, const char *spelled, void *arg);

static int for_each_spelling(const char *list, spelling_fn fn, void *arg)
{
	size_t i = 0, len = strlen(list);

	while (i <= len) {
		size_t start, end;
		char item[PR_EVENT_NAME_MAX];
		int ret;

		if (list[i] == '{')
			i++;
		start = i + strspn(list + i, " \t");
		end = start + strcspn(list + start, ",{}");
		i = end;
		while (end > start && (list[end - 1] == ' ' || list[end - 1] == '\t'))
			end--;
		snprintf(item, sizeof(item), "%.*s", (int)(end - start), list + start);
		ret = fn(list, start, item, arg);
		if (ret)
			return ret;
		/* A group's end, and its modifier, to the next event. */
		if (list[i] == '}')
			i += 1 + strcspn(list + i + 1, ",{");
		if (list[i] == ',')
			i++;
		else if (list[i] != '{')
			break;
	}
	return 0;
}

/* The spellings in order, into spelled[n]. */
struct spellings {
	char (*spelled)[PR_EVENT_NAME_MAX];
	size_t n, max;
};

static int keep_spelling(const char *list, size_t at, const char *item, void *arg)
{
	struct spellings *sp = arg;

	(void)list;
	(void)at;
	if (sp->n < sp->max)
		snprintf(sp->spelled[sp->n++], PR_EVENT_NAME_MAX, "%s", item);
	return 0;
}

/* The offset of the first event of the list that does not parse (+1), for
 * perf's pointer under it; 0 when each does alone (a group's modifier). */
static int find_bad(const char *list, size_t at, const char *item, void *arg)
{
	struct pr_event_desc ev;

	(void)list;
	(void)arg;
	return pr_event_parse(item, &ev, NULL) ? (int)at + 1 : 0;
}

#define MESSAGE_MAX 512

/* The parser's error, kept for the pointer's line. */
static void keep_message(enum pr_log_level level, const char *msg, void *ctx)
{
	if (level == PR_LOG_ERROR && !*(char *)ctx)
		snprintf(ctx, MESSAGE_MAX, "%s", msg);
	else if (level != PR_LOG_ERROR)
		ds_log(level, msg, NULL);
}

int ds_event_list_parse(const char *list, struct pr_event_desc *evs,
			char (*spelled)[PR_EVENT_NAME_MAX], size_t max)
{
	static const char lead[] = "dwarfsample: event syntax error: '";
	char msg[MESSAGE_MAX] = "";
	PR_OPTS(pr_event_lookup_opts, say, .log = keep_message, .log_ctx = msg);
	struct spellings sp = { spelled, 0, max };
	int n = pr_event_list_parse(list, evs, max, &say), at;

	if (n > 0 && spelled)
		for_each_spelling(list, keep_spelling, &sp);
	if (n > 0 || !*msg)
		return n;
	/* Not the list's fault: tracefs, or too many events. */
	if (n != -EINVAL && n != -ENOENT) {
		ds_log(PR_LOG_ERROR, msg, NULL);
		return n;
	}
	/* As perf says it: the list, and the event at fault under a pointer. */
	at = for_each_spelling(list, find_bad, NULL);
	fprintf(stderr, "%s%s'\n%*s\\___ %s\n", lead, list, (int)strlen(lead) + (at ? at - 1 : 0),
		"", msg);
	return n;
}

int ds_events_add(struct ds_events *e, const char *arg)
{
	int n, base = (int)e->nr;

	n = ds_event_list_parse(arg, e->ev + e->nr, NULL, DS_MAX_EVENTS - e->nr);
	if (n == -E2BIG)
		ds_err("too many events (at most %d in one run)", DS_MAX_EVENTS);
	if (n < 0)
		return -1;
	/* The parser numbers leaders within its own list. */
	for (int i = base; i < base + n; i++) {
		e->ev[i].leader += (uint32_t)base;
		if (e->ev[i].leader != (uint32_t)i || (i + 1 < base + n &&
						       e->ev[i + 1].leader == (uint32_t)i))
			e->grouped = true;
		e->names[i] = e->ev[i].name;
	}
	e->nr += (size_t)n;
	return 0;
}

static bool is_cycles(const struct pr_event_desc *d)
{
	return d->type == PERF_TYPE_HARDWARE && d->config == PERF_COUNT_HW_CPU_CYCLES;
}

/* cycles where no PMU counts them: cpu-clock instead, as perf record
 * does, keeping the modifiers. */
static void cycles_to_cpu_clock(struct pr_event_desc *d)
{
	const char *mod = strchr(d->name, ':');
	char name[PR_EVENT_NAME_MAX];

	snprintf(name, sizeof(name), "cpu-clock%s", mod ? mod : "");
	ds_err("%s is not available on this machine (no hardware PMU, as in most VMs); "
	       "sampling %s instead", d->name, name);
	d->type = PERF_TYPE_SOFTWARE;
	d->config = PERF_COUNT_SW_CPU_CLOCK;
	memcpy(d->name, name, sizeof(name));
}

int ds_events_settle(struct ds_events *e)
{
	PR_OPTS(pr_event_lookup_opts, say, .log = ds_log);

	if (e->grouped && !e->read_group) {
		ds_err("event groups {...} are counted together by 'dwarfsample stat'; to "
		       "sample, list the events with commas, or read a group with every sample "
		       "of its first event with --read-group");
		return -1;
	}
	if (e->read_group && e->nr < 2) {
		ds_err("--read-group reads the other events of -e with each sample of the "
		       "first: give at least two events (e.g. -e cpu-clock,page-faults)");
		return -1;
	}
	for (size_t i = 0; i < e->nr; i++) {
		struct pr_event_desc *d = &e->ev[i];
		int err;

		if (d->type != PERF_TYPE_HARDWARE)
			continue;
		err = pr_event_check(d, NULL);
		if (!err)
			continue;
		if (is_cycles(d) && !e->read_group &&
		    (err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV)) {
			cycles_to_cpu_clock(d);
			continue;
		}
		/* Again, this time saying why. */
		pr_event_check(d, &say);
		return -1;
	}
	/* Every member reads into its leader's group. */
	for (size_t i = 0; e->read_group && i < e->nr; i++)
		e->ev[i].leader = 0;
	return 0;
}

void ds_events_opts(const struct ds_events *e, const struct pr_event_opts *base,
		    struct pr_event_opts *out)
{
	for (size_t i = 0; i < e->nr; i++) {
		out[i] = *base;
		out[i].desc = &e->ev[i];
		out[i].period = e->period;
		/* A period replaces the frequency; without either, the
		 * library's default (every hit of a tracepoint). */
		if (e->period)
			out[i].freq = 0;
	}
}

bool ds_events_in_ns(const struct ds_events *e)
{
	for (size_t i = 0; i < e->nr; i++)
		if (!pr_event_counts_ns(&e->ev[i]))
			return false;
	return e->nr > 0;
}

void ds_events_output(const struct ds_events *e, bool system_wide, struct pr_output_opts *o)
{
	if (!e->nr)
		return;
	o->events = e->names;
	o->nr_events = e->read_group ? 1 : e->nr;
	/* The leader's count is its samples' periods: only the members
	 * are counters. */
	if (e->read_group) {
		o->counters = e->names + 1;
		o->nr_counters = e->nr - 1;
		o->counters_per_cpu = system_wide;
	}
}

int ds_events_width(const struct ds_events *e, const char *fallback)
{
	size_t width = e->nr ? 0 : strlen(fallback);

	for (size_t i = 0; i < e->nr; i++)
		if (strlen(e->names[i]) > width)
			width = strlen(e->names[i]);
	return (int)width;
}

struct pr_tp_formats *ds_events_tp_formats(const struct ds_events *e)
{
	PR_OPTS(pr_event_lookup_opts, say, .log = ds_log);
	struct pr_tp_formats *t = NULL;
	size_t n = 0;

	for (size_t i = 0; i < e->nr; i++) {
		if (e->ev[i].type != PERF_TYPE_TRACEPOINT)
			continue;
		if (!t && !(t = pr_tp_formats_new()))
			return NULL;
		n += !pr_tp_formats_load(t, e->ev[i].name, &say);
	}
	if (!n) {
		pr_tp_formats_free(t);
		return NULL;
	}
	return t;
}

bool ds_events_by_period(const struct ds_events *e, uint64_t freq)
{
	if (e->period)
		return e->nr > 0;
	for (size_t i = 0; !freq && i < e->nr; i++)
		if (pr_event_default_period(&e->ev[i]))
			return true;
	return false;
}

bool ds_events_by_freq(const struct ds_events *e, uint64_t freq)
{
	if (e->period)
		return false;
	if (freq || !e->nr)
		return true;
	for (size_t i = 0; i < e->nr; i++)
		if (!pr_event_default_period(&e->ev[i]))
			return true;
	return false;
}

void ds_events_sampling_note(const struct ds_events *e, uint64_t freq, FILE *out,
			     const char *prefix)
{
	char names[256] = "";
	size_t len = 0;

	if (e->period)
		return;
	for (size_t i = 0; i < e->nr && len < sizeof(names); i++)
		if (pr_event_default_period(&e->ev[i]))
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
						len ? ", " : "", e->names[i]);
	if (!len)
		return;
	if (freq)
		fprintf(out, "%s%s sampled at -F %" PRIu64 " Hz: the kernel sets the period "
			"from the rate just before, which misjudges bursts; counts are "
			"estimates (-c 1 counts every event)\n", prefix, names, freq);
	else
		fprintf(out, "%s%s sampled at every event (-c 1, the default for "
			"tracepoints and sparse software events; -c N samples every Nth, "
			"-F HZ by frequency)\n", prefix, names);
}
