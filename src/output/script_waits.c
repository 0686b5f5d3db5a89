/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Off-CPU samples in perf script's text.  A switch-out sample's period
 * (how long the thread stayed off the CPU) is known only when the wait
 * ends, so its frames are rendered into memory at once, while the
 * symbolizer still knows the process as it was, and the sample is printed
 * when the switch tracker (prmodel.h) ends the wait: its header with the
 * wait's length as the period and its end as the time, then the held
 * frames.  What is held is one rendered sample per thread off the CPU.
 * Stamped with its start, a wait printed at its end stepped back past
 * every sample taken meanwhile (1289 of 3956 samples in a two-thread
 * --wall run); keeping the start and the order would hold every other
 * thread's samples for as long as the longest wait, which has no bound.
 * The end is when the thread ran again, and ends the span the period
 * covers, as a CPU sample's time ends its period.
 * Where the time went is counted here too, per process, as the profile
 * counts it (profile/offcpu.c), for a writer that keeps no profile.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "output/output.h"

/* A switch-out sample held until its wait ends: the header's fields, and
 * text[] holding the thread's name (with its '\0', when known) and then
 * the rendered frames. */
struct held {
	uint32_t pid, tid, cpu, fields;
	size_t comm_len, len;
	char text[];
};

int pr__script_waits_init(struct pr_script *s)
{
	s->total.sz = sizeof(s->total);
	s->sw = pr_switches_new();
	s->scratch = open_memstream(&s->scratch_buf, &s->scratch_len);
	return s->sw && s->scratch ? 0 : -ENOMEM;
}

/* Where process `pid` is in s->pids (sorted by pid), or would go. */
static size_t pid_index(const struct pr_script *s, uint32_t pid)
{
	return pr__lower_bound_u32(s->pids, s->nr_pids, sizeof(*s->pids), pid);
}

/* The times of process `pid`, added if new (named `process` if it has no
 * name yet); NULL out of memory. */
static struct pr_profile_times *times_of(struct pr_script *s, uint32_t pid, const char *process)
{
	size_t lo = pid_index(s, pid);

	if (lo < s->nr_pids && s->pids[lo].pid == pid) {
		if (!s->pids[lo].name && process && !(s->pids[lo].name = strdup(process)))
			return NULL;
		return &s->pids[lo].t;
	}
	if (PR_ARRAY_RESERVE(s->pids, s->cap_pids, s->nr_pids + 1))
		return NULL;
	memmove(&s->pids[lo + 1], &s->pids[lo], (s->nr_pids - lo) * sizeof(*s->pids));
	s->nr_pids++;
	s->pids[lo] = (struct script_pid){ .pid = pid, .t = { .sz = sizeof(s->pids[lo].t) } };
	if (process && !(s->pids[lo].name = strdup(process)))
		return NULL;
	return &s->pids[lo].t;
}

int pr__script_count_cpu(struct pr_script *s, uint32_t pid, const char *process, uint64_t ns)
{
	struct pr_profile_times *t = times_of(s, pid, process);

	if (!t)
		return -ENOMEM;
	t->samples++;
	t->cpu_ns += ns;
	s->total.samples++;
	s->total.cpu_ns += ns;
	return 0;
}

/* A wait ended: print its sample (or count why not), and let it go. */
static int on_wait(const struct pr_wait *wt, void *arg)
{
	struct pr_script *s = arg;
	struct held *h = wt->has_sample ? (struct held *)(uintptr_t)wt->cookie : NULL;
	uint64_t ns = wt->end - wt->start;
	struct pr_profile_times *t;
	struct pr_record rec;

	if (s->closing) {
		free(h);
		return 0;
	}
	t = times_of(s, wt->pid, NULL);
	if (!t) {
		free(h);
		return -ENOMEM;
	}
	if (!h) {
		t->waits_lost++;
		s->total.waits_lost++;
		return 0;
	}
	if (ns < s->min_ns) {
		t->waits_short++;
		s->total.waits_short++;
		free(h);
		return 0;
	}
	t->waits[wt->kind]++;
	t->off_cpu_ns[wt->kind] += ns;
	s->total.waits[wt->kind]++;
	s->total.off_cpu_ns[wt->kind] += ns;
	if (wt->before_start) {
		t->waits_before_start++;
		t->before_start_ns += ns;
		s->total.waits_before_start++;
		s->total.before_start_ns += ns;
	}
	/* When the thread ran again, and for how long it had not as the
	 * period. */
	rec = (struct pr_record){ .type = PR_RECORD_SAMPLE, .pid = h->pid, .tid = h->tid,
				  .cpu = h->cpu, .fields = h->fields, .time = wt->end };
	rec.u.sample.period = ns;
	pr__script_header(s, &rec, h->comm_len ? h->text : NULL, PR_SCRIPT_OFFCPU_EVENT);
	/* Its time is when sampling started, not when it began: said as
	 * the folded and the other formats say it, in a leaf pseudo-frame. */
	if (wt->before_start)
		pr__script_pseudo_frame(s, PROF_BEFORE_START_LABEL);
	pr__script_flush(s);
	fwrite(h->text + h->comm_len, 1, h->len, s->out);
	free(h);
	return pr_script_error(s);
}

int pr_script_switch(struct pr_script *s, struct pr_symbolizer *sym,
		     const struct pr_record *rec, const struct pr_stack *stack,
		     const char *comm, const char *process)
{
	size_t comm_len = comm ? strlen(comm) + 1 : 0;
	FILE *out;
	struct held *h;
	off_t len;
	int err;

	if (!s || !rec || !stack)
		return -EINVAL;
	/* The idle task has no waits: its cookie would never come back. */
	if (rec->tid == 0)
		return 0;
	/* Its name now: the process may have exec'd when the wait ends. */
	if (!times_of(s, rec->pid, process))
		return -ENOMEM;
	out = s->out;
	s->out = s->scratch;
	err = fseeko(s->scratch, 0, SEEK_SET);
	if (!err)
		pr__script_frames(s, rec, stack, sym);
	s->out = out;
	if (err || fflush(s->scratch) || (len = ftello(s->scratch)) < 0)
		return -ENOMEM;
	h = malloc(sizeof(*h) + comm_len + (size_t)len);
	if (!h)
		return -ENOMEM;
	*h = (struct held){ .pid = rec->pid, .tid = rec->tid, .cpu = rec->cpu,
			    .fields = rec->fields, .comm_len = comm_len, .len = (size_t)len };
	memcpy(h->text, comm, comm_len);
	memcpy(h->text + comm_len, s->scratch_buf, (size_t)len);
	err = pr_switches_sample(s->sw, rec, (uintptr_t)h, on_wait, s);
	/* Not taken: still ours. */
	if (err)
		free(h);
	return err;
}

int pr_script_apply(struct pr_script *s, const struct pr_record *rec)
{
	if (!s || !rec)
		return -EINVAL;
	return pr_switches_apply(s->sw, rec, on_wait, s);
}

int pr_script_end(struct pr_script *s, uint64_t time)
{
	if (!s)
		return -EINVAL;
	return pr_switches_end(s->sw, time, on_wait, s);
}

int pr_script_times(const struct pr_script *s, uint32_t pid, struct pr_profile_times *t)
{
	static const struct pr_profile_times none = { .sz = sizeof(none) };
	const struct pr_profile_times *from;
	size_t at;

	if (!s)
		return -EINVAL;
	at = pid_index(s, pid);
	from = !pid ? &s->total
	       : at < s->nr_pids && s->pids[at].pid == pid ? &s->pids[at].t : &none;
	/* A caller built against a smaller struct gets its part. */
	return pr__stats_copy(t, from, sizeof(*from));
}

const char *pr_script_process(const struct pr_script *s, uint32_t pid)
{
	size_t at;

	if (!s)
		return NULL;
	at = pid_index(s, pid);
	return at < s->nr_pids && s->pids[at].pid == pid ? s->pids[at].name : NULL;
}

static uint64_t time_of(const struct script_pid *p)
{
	return p->t.cpu_ns + p->t.off_cpu_ns[PR_WAIT_BLOCKED] + p->t.off_cpu_ns[PR_WAIT_PREEMPTED];
}

static int by_time_desc(const void *a, const void *b)
{
	const struct script_pid *p = *(const struct script_pid *const *)a;
	const struct script_pid *q = *(const struct script_pid *const *)b;
	uint64_t x = time_of(p), y = time_of(q);

	if (x != y)
		return x < y ? 1 : -1;
	return p->pid < q->pid ? -1 : p->pid > q->pid;
}

size_t pr_script_pids(const struct pr_script *s, uint32_t *pids, size_t max)
{
	const struct script_pid **order;

	if (!s)
		return 0;
	if (!pids || !max)
		return s->nr_pids;
	order = malloc((s->nr_pids + 1) * sizeof(*order));
	if (!order)
		return 0;
	for (size_t i = 0; i < s->nr_pids; i++)
		order[i] = &s->pids[i];
	qsort(order, s->nr_pids, sizeof(*order), by_time_desc);
	for (size_t i = 0; i < s->nr_pids && i < max; i++)
		pids[i] = order[i]->pid;
	free(order);
	return s->nr_pids;
}

void pr__script_waits_fini(struct pr_script *s)
{
	/* Every held sample is a cookie of an open wait: end them all to
	 * have them back. */
	s->closing = true;
	if (s->sw)
		pr_switches_end(s->sw, UINT64_MAX, on_wait, s);
	pr_switches_free(s->sw);
	if (s->scratch)
		fclose(s->scratch);
	free(s->scratch_buf);
	for (size_t i = 0; i < s->nr_pids; i++)
		free(s->pids[i].name);
	free(s->pids);
}
