/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Off-CPU samples in perf script's text.  A switch-out sample's period
 * (how long the thread stayed off the CPU) is known only when the wait
 * ends, so its frames are rendered into memory at once, while the
 * symbolizer still knows the process as it was, and the sample is printed
 * when the switch tracker (prmodel.h) ends the wait: its header with the
 * wait's length as the period and its start as the time, then the held
 * frames.  What is held is one rendered sample per thread off the CPU.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scriptwaits.h"

/* A switch-out sample held until its wait ends: the header's fields, and
 * text[] holding the thread's name (with its '\0', when known) and then
 * the rendered frames. */
struct held {
	uint32_t pid, tid, cpu, fields;
	size_t comm_len, len;
	char text[];
};

/* Where one process's time went, and its name. */
struct pid_times {
	uint32_t pid;
	char *name;
	struct pr_profile_times t;
};

struct ds_waits {
	struct ps_writer *w;
	uint64_t min_ns;
	struct pr_switches *sw;
	FILE *scratch;               /* frames are rendered here, then copied */
	char *scratch_buf;
	size_t scratch_len;
	struct pid_times *pids;      /* sorted by pid */
	size_t nr_pids, cap_pids;
	struct pr_profile_times total;
	bool closing;                /* ds_waits_free(): release, print nothing */
};

struct ds_waits *ds_waits_new(struct ps_writer *w, uint64_t min_ns)
{
	struct ds_waits *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->w = w;
	x->min_ns = min_ns;
	x->total.sz = sizeof(x->total);
	x->sw = pr_switches_new();
	x->scratch = open_memstream(&x->scratch_buf, &x->scratch_len);
	if (!x->sw || !x->scratch) {
		ds_waits_free(x);
		return NULL;
	}
	return x;
}

/* Where process `pid` is in x->pids, or would go. */
static size_t pid_index(const struct ds_waits *x, uint32_t pid)
{
	size_t lo = 0, hi = x->nr_pids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (x->pids[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The times of process `pid`, added if new (named `process` if it has no
 * name yet); NULL out of memory. */
static struct pr_profile_times *times_of(struct ds_waits *x, uint32_t pid, const char *process)
{
	size_t lo = pid_index(x, pid);

	if (lo < x->nr_pids && x->pids[lo].pid == pid) {
		if (!x->pids[lo].name && process && !(x->pids[lo].name = strdup(process)))
			return NULL;
		return &x->pids[lo].t;
	}
	if (x->nr_pids == x->cap_pids) {
		size_t cap = x->cap_pids ? x->cap_pids * 2 : 16;
		struct pid_times *p = realloc(x->pids, cap * sizeof(*p));

		if (!p)
			return NULL;
		x->pids = p;
		x->cap_pids = cap;
	}
	memmove(&x->pids[lo + 1], &x->pids[lo], (x->nr_pids - lo) * sizeof(*x->pids));
	x->nr_pids++;
	x->pids[lo] = (struct pid_times){ .pid = pid, .t = { .sz = sizeof(x->pids[lo].t) } };
	if (process && !(x->pids[lo].name = strdup(process)))
		return NULL;
	return &x->pids[lo].t;
}

int ds_waits_cpu(struct ds_waits *x, uint32_t pid, const char *process, uint64_t ns)
{
	struct pr_profile_times *t = times_of(x, pid, process);

	if (!t)
		return -ENOMEM;
	t->samples++;
	t->cpu_ns += ns;
	x->total.samples++;
	x->total.cpu_ns += ns;
	return 0;
}

/* A wait ended: print its sample (or count why not), and let it go. */
static int on_wait(const struct pr_wait *wt, void *arg)
{
	struct ds_waits *x = arg;
	struct held *h = wt->has_sample ? (struct held *)(uintptr_t)wt->cookie : NULL;
	uint64_t ns = wt->end - wt->start;
	struct pr_profile_times *t;
	struct pr_record rec;
	int ret = 0;

	if (x->closing) {
		free(h);
		return 0;
	}
	t = times_of(x, wt->pid, NULL);
	if (!t) {
		free(h);
		return -ENOMEM;
	}
	if (!h) {
		t->waits_lost++;
		x->total.waits_lost++;
		return 0;
	}
	if (ns < x->min_ns) {
		t->waits_short++;
		x->total.waits_short++;
		free(h);
		return 0;
	}
	t->waits[wt->kind]++;
	t->off_cpu_ns[wt->kind] += ns;
	x->total.waits[wt->kind]++;
	x->total.off_cpu_ns[wt->kind] += ns;
	/* The header as perf prints an off-CPU sample: when the thread left
	 * the CPU, and for how long as the period. */
	rec = (struct pr_record){ .type = PR_RECORD_SAMPLE, .pid = h->pid, .tid = h->tid,
				  .cpu = h->cpu, .fields = h->fields, .time = wt->start };
	rec.u.sample.period = ns;
	ps_header(x->w, &rec, h->comm_len ? h->text : NULL,
		  (x->w->fields & PS_EVENT) ? DS_OFFCPU_EVENT : NULL);
	fwrite(h->text + h->comm_len, 1, h->len, x->w->out);
	if (!ret)
		ret = ps_error(x->w);
	free(h);
	return ret;
}

int ds_waits_switch(struct ds_waits *x, const struct pr_record *rec, const struct pr_stack *st,
		    struct pr_symbolizer *sym, const char *comm, const char *process)
{
	size_t comm_len = comm ? strlen(comm) + 1 : 0;
	FILE *out = x->w->out;
	struct held *h;
	off_t len;
	int err;

	/* The idle task has no waits: its cookie would never come back. */
	if (rec->tid == 0)
		return 0;
	/* Its name now: the process may have exec'd when the wait ends. */
	if (!times_of(x, rec->pid, process))
		return -ENOMEM;
	x->w->out = x->scratch;
	err = fseeko(x->scratch, 0, SEEK_SET);
	if (!err)
		ps_frames(x->w, rec, st, sym);
	x->w->out = out;
	if (err || fflush(x->scratch) || (len = ftello(x->scratch)) < 0)
		return -ENOMEM;
	h = malloc(sizeof(*h) + comm_len + (size_t)len);
	if (!h)
		return -ENOMEM;
	*h = (struct held){ .pid = rec->pid, .tid = rec->tid, .cpu = rec->cpu,
			    .fields = rec->fields, .comm_len = comm_len, .len = (size_t)len };
	memcpy(h->text, comm, comm_len);
	memcpy(h->text + comm_len, x->scratch_buf, (size_t)len);
	err = pr_switches_sample(x->sw, rec, (uintptr_t)h, on_wait, x);
	/* Not taken: still ours. */
	if (err)
		free(h);
	return err;
}

int ds_waits_record(struct ds_waits *x, const struct pr_record *rec)
{
	return pr_switches_apply(x->sw, rec, on_wait, x);
}

int ds_waits_end(struct ds_waits *x, uint64_t time)
{
	return pr_switches_end(x->sw, time, on_wait, x);
}

int ds_waits_times(const struct ds_waits *x, uint32_t pid, struct pr_profile_times *t)
{
	const struct pr_profile_times *from = &x->total;
	struct pr_profile_times none = { .sz = sizeof(none) };
	size_t sz, at = pid_index(x, pid);

	if (!t || t->sz < sizeof(t->sz))
		return -EINVAL;
	if (pid)
		from = at < x->nr_pids && x->pids[at].pid == pid ? &x->pids[at].t : &none;
	/* A caller built against a smaller struct gets its part. */
	sz = t->sz < sizeof(*t) ? t->sz : sizeof(*t);
	memcpy((char *)t + sizeof(t->sz), (const char *)from + sizeof(t->sz), sz - sizeof(t->sz));
	return 0;
}

const char *ds_waits_process(const struct ds_waits *x, uint32_t pid)
{
	size_t at = pid_index(x, pid);

	return at < x->nr_pids && x->pids[at].pid == pid ? x->pids[at].name : NULL;
}

static uint64_t time_of(const struct pid_times *p)
{
	return p->t.cpu_ns + p->t.off_cpu_ns[PR_WAIT_BLOCKED] + p->t.off_cpu_ns[PR_WAIT_PREEMPTED];
}

static int by_time_desc(const void *a, const void *b)
{
	const struct pid_times *p = *(const struct pid_times *const *)a;
	const struct pid_times *q = *(const struct pid_times *const *)b;
	uint64_t x = time_of(p), y = time_of(q);

	if (x != y)
		return x < y ? 1 : -1;
	return p->pid < q->pid ? -1 : p->pid > q->pid;
}

size_t ds_waits_pids(const struct ds_waits *x, uint32_t *pids, size_t max)
{
	const struct pid_times **order = malloc((x->nr_pids + 1) * sizeof(*order));

	if (!order)
		return 0;
	for (size_t i = 0; i < x->nr_pids; i++)
		order[i] = &x->pids[i];
	qsort(order, x->nr_pids, sizeof(*order), by_time_desc);
	for (size_t i = 0; i < x->nr_pids && i < max; i++)
		pids[i] = order[i]->pid;
	free(order);
	return x->nr_pids;
}

void ds_waits_free(struct ds_waits *x)
{
	if (!x)
		return;
	/* Every held sample is a cookie of an open wait: end them all to
	 * have them back. */
	x->closing = true;
	if (x->sw)
		pr_switches_end(x->sw, UINT64_MAX, on_wait, x);
	pr_switches_free(x->sw);
	if (x->scratch)
		fclose(x->scratch);
	free(x->scratch_buf);
	for (size_t i = 0; i < x->nr_pids; i++)
		free(x->pids[i].name);
	free(x->pids);
	free(x);
}
