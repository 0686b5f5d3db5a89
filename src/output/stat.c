/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Counts in perf stat's layouts (prstat.h), field for field as perf 6.1
 * prints them, so that what reads perf stat's output reads ours: widths,
 * the comment column's formats and units, "<not counted>" and "<not
 * supported>", the running percentage (an integer percentage in CSV and
 * JSON, as perf computes it there), the interval and thread columns.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output/output.h"
#include "prstat.h"

struct pr_stat_printer {
	FILE *f;
	enum pr_stat_format format;
	char *sep;               /* CSV: the field separator */
	bool interval;           /* rows start with the time */
	bool per_thread;
	bool hide_zero_rows;
	unsigned printed;        /* intervals: readings printed, for the header */
};

/* The table's columns: the count, its unit, the event's name, then the
 * comment (" # " and a value and a unit) padded to its width.  A line
 * whose event did not count has a narrower blank comment, as perf's. */
#define VALUE_WIDTH 18
#define UNIT_WIDTH 4
#define NAME_WIDTH 32
#define METRIC_WIDTH 35
#define NO_METRIC_WIDTH 28
/* perf repeats the interval table's column header every 25 readings. */
#define HEADER_EVERY 25

#define NOT_COUNTED "<not counted>"
#define NOT_SUPPORTED "<not supported>"

enum pr_stat_kind pr_event_stat_kind(const struct pr_event_desc *ev)
{
	static const enum pr_stat_kind hw[] = {
		[PERF_COUNT_HW_CPU_CYCLES] = PR_STAT_CYCLES,
		[PERF_COUNT_HW_INSTRUCTIONS] = PR_STAT_INSTRUCTIONS,
		[PERF_COUNT_HW_BRANCH_INSTRUCTIONS] = PR_STAT_BRANCHES,
		[PERF_COUNT_HW_BRANCH_MISSES] = PR_STAT_BRANCH_MISSES,
		[PERF_COUNT_HW_CACHE_REFERENCES] = PR_STAT_CACHE_REFS,
		[PERF_COUNT_HW_CACHE_MISSES] = PR_STAT_CACHE_MISSES,
		[PERF_COUNT_HW_STALLED_CYCLES_FRONTEND] = PR_STAT_STALLED_FRONTEND,
		[PERF_COUNT_HW_STALLED_CYCLES_BACKEND] = PR_STAT_STALLED_BACKEND,
	};

	if (!ev)
		return PR_STAT_COUNT;
	if (pr_event_counts_ns(ev))
		return PR_STAT_CLOCK;
	if (ev->type == PERF_TYPE_HARDWARE && ev->config < sizeof(hw) / sizeof(hw[0]))
		return hw[ev->config];
	return PR_STAT_COUNT;
}

static bool counted(const struct pr_count *c)
{
	return c->supported && c->running && c->enabled;
}

/* The counts the comments of a row are relative to: the clock's
 * nanoseconds, cycles, branches and cache references. */
struct bases {
	bool have[PR_STAT_KINDS];
	double value[PR_STAT_KINDS];
};

static void row_bases(struct bases *b, const struct pr_stat_event *evs, size_t nr,
		      const struct pr_count *row)
{
	memset(b, 0, sizeof(*b));
	for (size_t i = 0; i < nr; i++) {
		enum pr_stat_kind k = evs[i].kind;

		if (!counted(&row[i]) || b->have[k])
			continue;
		b->have[k] = true;
		b->value[k] = row[i].scaled;
	}
}

/* A comment: the value printed "%*.*f" then `suffix`, as perf's formats
 * ("%8.3f", "%7.2f ", "%7.2f%%"); none when its base did not count
 * (`unit` may still name what it would have been). */
struct metric {
	bool shown;
	int width, precision;
	const char *suffix, *unit;
	double value;
	char unit_buf[16];
};

static void set_metric(struct metric *m, int width, int precision, const char *suffix,
		       double value)
{
	m->shown = true;
	m->width = width;
	m->precision = precision;
	m->suffix = suffix;
	m->value = value;
}

/* The value as the table shows it. */
static void metric_text(const struct metric *m, char *buf, size_t len)
{
	snprintf(buf, len, "%*.*f%s", m->width, m->precision, m->value, m->suffix);
}

/* Events per second of the row's clock, in K, M or G above a thousand. */
static void per_second(struct metric *m, double count, double ns)
{
	static const char prefixes[] = " KMG";
	double rate = ns > 0 ? count * 1e9 / ns : 0;
	int p = 0;

	while (p < 3 && rate > 1000.0) {
		rate /= 1000.0;
		p++;
	}
	snprintf(m->unit_buf, sizeof(m->unit_buf), "%.*s/sec", p ? 1 : 0, &prefixes[p]);
	m->unit = m->unit_buf;
	set_metric(m, 8, 3, "", rate);
}

/* count / base in percent (or as a ratio), when the base counted. */
static void ratio(struct metric *m, const struct bases *b, enum pr_stat_kind base,
		  double count, bool percent, const char *unit)
{
	double v;

	m->unit = unit;
	if (!b->have[base])
		return;
	v = b->value[base] ? count * (percent ? 100 : 1) / b->value[base] : 0;
	if (percent)
		set_metric(m, 7, 2, "%", v);
	else if (base == PR_STAT_CYCLES)
		set_metric(m, 7, 2, " ", v);    /* insn per cycle */
	else
		set_metric(m, 8, 3, "", v);     /* GHz */
}

static void row_metric(struct metric *m, const struct pr_stat_event *ev, double count,
		       const struct bases *b, double wall_ns)
{
	memset(m, 0, sizeof(*m));
	switch (ev->kind) {
	case PR_STAT_CLOCK:
		m->unit = "CPUs utilized";
		if (wall_ns > 0)
			set_metric(m, 8, 3, "", count / wall_ns);
		return;
	case PR_STAT_CYCLES:
		ratio(m, b, PR_STAT_CLOCK, count, false, "GHz");
		return;
	case PR_STAT_INSTRUCTIONS:
		ratio(m, b, PR_STAT_CYCLES, count, false, "insn per cycle");
		return;
	case PR_STAT_BRANCH_MISSES:
		ratio(m, b, PR_STAT_BRANCHES, count, true, "of all branches");
		return;
	case PR_STAT_CACHE_MISSES:
		ratio(m, b, PR_STAT_CACHE_REFS, count, true, "of all cache refs");
		return;
	case PR_STAT_STALLED_FRONTEND:
		ratio(m, b, PR_STAT_CYCLES, count, true, "frontend cycles idle");
		return;
	case PR_STAT_STALLED_BACKEND:
		ratio(m, b, PR_STAT_CYCLES, count, true, "backend cycles idle");
		return;
	case PR_STAT_COUNT:
	case PR_STAT_BRANCHES:
	case PR_STAT_CACHE_REFS:
	case PR_STAT_KINDS:
		if (b->have[PR_STAT_CLOCK])
			per_second(m, count, b->value[PR_STAT_CLOCK]);
		return;
	}
}

/* The value a line shows: milliseconds for the clocks. */
static double shown(const struct pr_stat_event *ev, const struct pr_count *c)
{
	return ev->kind == PR_STAT_CLOCK ? c->scaled / 1e6 : c->scaled;
}

static const char *unit_of(const struct pr_stat_event *ev)
{
	return ev->kind == PR_STAT_CLOCK ? "msec" : "";
}

/* CSV and JSON give the share of time counted as perf computes it there:
 * in whole percents. */
static double percent_running(const struct pr_count *c)
{
	if (c->running == c->enabled || !c->enabled)
		return 100;
	return (double)(100 * c->running / c->enabled);
}

/* Bytes past ASCII as they are, as perf writes them (pr__json_string()
 * would replace those that are not UTF-8). */
static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/* What starts a line: the interval's time, then the thread. */
static void line_start(const struct pr_stat_printer *p, const struct pr_stat_reading *r,
		       size_t row)
{
	const struct pr_stat_thread *t = r->threads ? &r->threads[row] : NULL;
	unsigned long sec = (unsigned long)(r->time_ns / 1000000000u);
	unsigned long nsec = (unsigned long)(r->time_ns % 1000000000u);

	switch (p->format) {
	case PR_STAT_TABLE:
		if (p->interval)
			fprintf(p->f, "%6lu.%09lu ", sec, nsec);
		if (t)
			fprintf(p->f, "%16s-%-8d ", t->comm, (int)t->tid);
		return;
	case PR_STAT_CSV:
		if (p->interval)
			fprintf(p->f, "%6lu.%09lu%s", sec, nsec, p->sep);
		if (t)
			fprintf(p->f, "%s-%d%s", t->comm, (int)t->tid, p->sep);
		return;
	case PR_STAT_JSON:
		fputc('{', p->f);
		if (p->interval)
			fprintf(p->f, "\"interval\" : %lu.%09lu, ", sec, nsec);
		if (t) {
			char label[64];

			snprintf(label, sizeof(label), "%s-%d", t->comm, (int)t->tid);
			fputs("\"thread\" : ", p->f);
			json_string(p->f, label);
			fputs(", ", p->f);
		}
		return;
	}
}

static void table_line(const struct pr_stat_printer *p, const struct pr_stat_event *ev,
		       const struct pr_count *c, const struct metric *m)
{
	FILE *f = p->f;

	if (counted(c))
		fprintf(f, ev->kind == PR_STAT_CLOCK ? "%*.2f " : "%*.0f ", VALUE_WIDTH,
			shown(ev, c));
	else
		fprintf(f, "%*s ", VALUE_WIDTH, c->supported ? NOT_COUNTED : NOT_SUPPORTED);
	fprintf(f, "%-*s %-*s", UNIT_WIDTH, unit_of(ev), NAME_WIDTH, ev->name);
	if (!counted(c)) {
		fprintf(f, "%*s", NO_METRIC_WIDTH, "");
	} else if (!m->shown) {
		fprintf(f, "%*s", METRIC_WIDTH, "");
	} else {
		char value[64];
		int n;

		metric_text(m, value, sizeof(value));
		n = 3 + (int)strlen(value);
		fprintf(f, " # %s %-*s", value, METRIC_WIDTH - n - 1, m->unit);
	}
	if (c->running != c->enabled)
		fprintf(f, "  (%.2f%%)", 100.0 * (double)c->running / (double)c->enabled);
	fputc('\n', f);
}

/* CSV's comment: the value as the table prints it, its blanks and any
 * sign after the number dropped; the unit. */
static void csv_metric(const struct pr_stat_printer *p, const struct metric *m)
{
	char value[64], *v = value, *end;

	if (!m->shown) {
		fprintf(p->f, "%s%s", p->sep, p->sep);
		return;
	}
	metric_text(m, value, sizeof(value));
	while (*v == ' ')
		v++;
	for (end = v; (*end >= '0' && *end <= '9') || *end == '.'; end++)
		;
	*end = '\0';
	fprintf(p->f, "%s%s%s%s", p->sep, v, p->sep, m->unit);
}

static void csv_line(const struct pr_stat_printer *p, const struct pr_stat_event *ev,
		     const struct pr_count *c, const struct metric *m)
{
	FILE *f = p->f;

	if (counted(c))
		fprintf(f, ev->kind == PR_STAT_CLOCK ? "%.2f" : "%.0f", shown(ev, c));
	else
		fputs(c->supported ? NOT_COUNTED : NOT_SUPPORTED, f);
	fprintf(f, "%s%s%s%s", p->sep, unit_of(ev), p->sep, ev->name);
	fprintf(f, "%s%llu%s%.2f", p->sep, counted(c) ? (unsigned long long)c->running : 0ull,
		p->sep, percent_running(c));
	if (counted(c)) {
		csv_metric(p, m);
	} else {
		struct metric none = { 0 };

		csv_metric(p, &none);
	}
	fputc('\n', f);
}

static void json_line(const struct pr_stat_printer *p, const struct pr_stat_event *ev,
		      const struct pr_count *c, const struct metric *m)
{
	FILE *f = p->f;
	bool ok = counted(c);

	if (ok)
		fprintf(f, "\"counter-value\" : \"%f\", ", shown(ev, c));
	else
		fprintf(f, "\"counter-value\" : \"%s\", ", c->supported ? NOT_COUNTED : NOT_SUPPORTED);
	fprintf(f, "\"unit\" : \"%s\", \"event\" : ", unit_of(ev));
	json_string(f, ev->name);
	fprintf(f, ", \"event-runtime\" : %llu, \"pcnt-running\" : %.2f, ",
		ok ? (unsigned long long)c->running : 0ull, percent_running(c));
	/* perf writes "(null)" for an event without a comment; "" is what
	 * it means. */
	fprintf(f, "\"metric-value\" : %f, \"metric-unit\" : ",
		ok && m->shown ? m->value : 0.0);
	json_string(f, ok && m->unit ? m->unit : "");
	fputs("}\n", f);
}

struct ranked {
	double value;
	size_t row;
};

/* Threads by decreasing count, in their order where equal, as perf. */
static int by_value(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? 1 : -1;
	return x->row < y->row ? -1 : x->row > y->row;
}

static void interval_header(struct pr_stat_printer *p)
{
	if (p->format != PR_STAT_TABLE || p->printed++ % HEADER_EVERY)
		return;
	fprintf(p->f, "#           time%s             counts %*s events\n",
		p->per_thread ? "             comm-pid     " : "", UNIT_WIDTH, "unit");
}

struct pr_stat_printer *pr_stat_printer_new(FILE *out, const struct pr_stat_printer_opts *opts)
{
	struct pr_stat_printer *p;
	enum pr_stat_format format = PR_OPTS_GET(opts, format, PR_STAT_TABLE);
	const char *sep = PR_OPTS_GET(opts, sep, ",");

	if (!out || !PR_OPTS_VALID(opts) ||
	    (format != PR_STAT_TABLE && format != PR_STAT_CSV && format != PR_STAT_JSON)) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p || !(p->sep = strdup(sep))) {
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	p->f = out;
	p->format = format;
	p->interval = PR_OPTS_GET(opts, interval, false);
	p->per_thread = PR_OPTS_GET(opts, per_thread, false);
	p->hide_zero_rows = PR_OPTS_GET(opts, hide_zero_rows, false);
	return p;
}

void pr_stat_printer_free(struct pr_stat_printer *p)
{
	if (p)
		free(p->sep);
	free(p);
}

int pr_stat_printer_reading(struct pr_stat_printer *p, const struct pr_stat_event *evs, size_t nr,
			    const struct pr_stat_reading *r)
{
	struct bases *bases;
	struct ranked *order;

	if (!p || !r || (nr && r->nr_rows && (!evs || !r->counts)))
		return -EINVAL;
	for (size_t i = 0; i < nr; i++)
		if ((unsigned)evs[i].kind >= PR_STAT_KINDS || !evs[i].name)
			return -EINVAL;
	bases = calloc(r->nr_rows ? r->nr_rows : 1, sizeof(*bases));
	order = calloc(r->nr_rows ? r->nr_rows : 1, sizeof(*order));
	if (!bases || !order) {
		free(bases);
		free(order);
		return -ENOMEM;
	}
	if (p->interval)
		interval_header(p);
	for (size_t row = 0; row < r->nr_rows; row++)
		row_bases(&bases[row], evs, nr, &r->counts[row * nr]);
	for (size_t i = 0; i < nr; i++) {
		for (size_t row = 0; row < r->nr_rows; row++) {
			const struct pr_count *c = &r->counts[row * nr + i];

			order[row] = (struct ranked){ counted(c) ? c->scaled : 0, row };
		}
		qsort(order, r->nr_rows, sizeof(*order), by_value);
		for (size_t k = 0; k < r->nr_rows; k++) {
			size_t row = order[k].row;
			const struct pr_count *c = &r->counts[row * nr + i];
			struct metric m;

			if (!c->supported && evs[i].hide_unsupported)
				continue;
			/* (One row still says that an event is not supported.) */
			if (p->hide_zero_rows && r->threads && !c->value &&
			    (c->supported || k))
				continue;
			row_metric(&m, &evs[i], c->scaled, &bases[row], r->wall_ns);
			line_start(p, r, row);
			if (p->format == PR_STAT_TABLE)
				table_line(p, &evs[i], c, &m);
			else if (p->format == PR_STAT_CSV)
				csv_line(p, &evs[i], c, &m);
			else
				json_line(p, &evs[i], c, &m);
		}
	}
	free(order);
	free(bases);
	fflush(p->f);
	return 0;
}

int pr_stat_printer_started(struct pr_stat_printer *p)
{
	time_t now = time(NULL);
	char date[64];
	struct tm tm;

	if (!p)
		return -EINVAL;
	localtime_r(&now, &tm);
	strftime(date, sizeof(date), "%a %b %e %H:%M:%S %Y", &tm);
	fprintf(p->f, "# started on %s\n\n", date);
	return 0;
}

int pr_stat_printer_header(struct pr_stat_printer *p, const char *target)
{
	if (!p || !target)
		return -EINVAL;
	if (p->format == PR_STAT_TABLE && !p->interval)
		fprintf(p->f, "\n Performance counter stats for %s:\n\n", target);
	return 0;
}

static double seconds(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

int pr_stat_printer_footer(struct pr_stat_printer *p, double elapsed_s, const struct rusage *ru)
{
	if (!p)
		return -EINVAL;
	if (p->format != PR_STAT_TABLE || p->interval)
		return 0;
	fprintf(p->f, "\n %17.9f seconds time elapsed", elapsed_s);
	if (ru)
		fprintf(p->f, "\n\n %17.9f seconds user\n %17.9f seconds sys\n",
			seconds(&ru->ru_utime), seconds(&ru->ru_stime));
	fputs("\n\n", p->f);
	fflush(p->f);
	return 0;
}
