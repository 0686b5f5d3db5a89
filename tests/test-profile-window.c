/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A profile taken in windows (pr_profile_cut) and split by process
 * (pr_profile_select), as the agent takes them: the windows of a run add
 * up to the profile of the whole run, exactly — samples, CPU time, each
 * kind of wait and its time, counter growths, every folded line — with
 * waits that span cuts counted in the windows they span; the profile that
 * goes on keeps only what open waits need; and the processes of a window
 * selected apart add up to it, and merged again (pr_profile_merge) make it.
 */
#include <check.h>
#include <errno.h>
#include <linux/perf_event.h>

#include "checkmain.h"
#include "profile-fixture.h"
#include "pprof-decode.h"

#define MS 1000000ull
#define PID2 (PID + 1)

static const char *const RUN[] = { "main", "run", "leaf" };
static const char *const WAIT[] = { "main", "run", "emit" };
static char map2_path[64];

/* A second process, with its own perf map naming the same functions. */
static void setup2(void)
{
	setup();
	fake_process(PID2, map2_path, sizeof(map2_path));
}

static void teardown2(void)
{
	unlink(map2_path);
	teardown();
}

static struct pr_record rec(uint32_t pid, uint32_t type, uint16_t misc, uint64_t time)
{
	return (struct pr_record){ .type = type, .misc = misc, .pid = pid, .tid = pid,
				   .time = time, .cpu = 1,
				   .fields = PR_ID_TID | PR_ID_TIME | PR_ID_CPU };
}

/* What happens in a run: a CPU sample, or a wait from `time` to `end`. */
struct step {
	int proc;                /* 0: PID, 1: PID2 */
	uint64_t time, end;      /* end 0: a CPU sample */
	bool preempted;
	uint64_t read;           /* with counters: the counter's read */
};

/* The profile `p` is given each record of the steps up to `until` (event
 * time) it has not had yet; *next is the first step not yet given, and
 * waits are given their switch in when it comes. */
struct feed {
	const struct step *steps;
	size_t nr, next;
	struct { uint32_t pid; uint64_t in; } open[8];
	size_t nr_open;
};

static void switch_in(struct pr_profile *p, uint32_t pid, uint64_t in)
{
	struct pr_record r = rec(pid, PR_RECORD_SWITCH, 0, in);

	ck_assert_int_eq(pr_profile_apply(p, &r), 0);
}

static void feed_until(struct pr_profile *p, struct feed *fd, uint64_t until)
{
	for (;;) {
		const struct step *s = fd->next < fd->nr ? &fd->steps[fd->next] : NULL;
		uint32_t pid = s && s->proc ? PID2 : PID;
		size_t first = 0;
		struct pr_frame frames[16];
		struct pr_stack st;

		/* The earliest pending switch in, if it comes first. */
		for (size_t i = 1; i < fd->nr_open; i++)
			if (fd->open[i].in < fd->open[first].in)
				first = i;
		if (fd->nr_open && fd->open[first].in < until &&
		    (!s || fd->open[first].in <= s->time)) {
			switch_in(p, fd->open[first].pid, fd->open[first].in);
			fd->open[first] = fd->open[--fd->nr_open];
			continue;
		}
		if (!s || s->time >= until)
			return;
		fd->next++;
		/* A CPU profile takes no waits. */
		if (s->end && p->mode == PR_PROFILE_CPU)
			continue;
		if (!s->end) {
			uint64_t read[2] = { s->read, 77 };
			struct pr_record r = rec(pid, PR_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
						 s->time);

			st = make_stack(frames, RUN, 3, 0x10);
			r.u.sample.period = MS;
			if (s->read) {
				r.u.sample.read = read;
				r.u.sample.nr_read = 1;
				r.u.sample.read_stride = 2;
				r.id = 77;
			}
			ck_assert_int_eq(pr_profile_add(p, sym, &r, &st, "app", "app"), 0);
		} else {
			struct pr_record r = rec(pid, PR_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL,
						 s->time);
			struct pr_record o = rec(pid, PR_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT |
					       (s->preempted ? PERF_RECORD_MISC_SWITCH_OUT_PREEMPT : 0),
					       s->time);

			st = make_stack(frames, WAIT, 3, 0x10);
			ck_assert_int_eq(pr_profile_add_switch(p, sym, &r, &st, "app", "app"), 0);
			ck_assert_int_eq(pr_profile_apply(p, &o), 0);
			ck_assert_uint_lt(fd->nr_open, 8);
			fd->open[fd->nr_open].pid = pid;
			fd->open[fd->nr_open++].in = s->end;
		}
	}
}

/* Two processes on and off the CPU: a blocked wait of PID from 3 to 41 ms
 * spans the cuts at 10, 20, 30 and 40 ms; a preempted one of PID2 from 12
 * to 14 ms falls in one window; one of PID from 45 ms is still open at the
 * end (60 ms). */
#define CPU(who, t) { .proc = (who), .time = (t) }
#define WAITS(who, t, e, pre) { .proc = (who), .time = (t), .end = (e), .preempted = (pre) }
static const struct step RUN_STEPS[] = {
	CPU(0, 1 * MS), CPU(1, 2 * MS), WAITS(0, 3 * MS, 41 * MS, false),
	CPU(1, 5 * MS), CPU(1, 9 * MS), WAITS(1, 12 * MS, 14 * MS, true),
	CPU(1, 15 * MS), CPU(1, 25 * MS), CPU(1, 31 * MS), CPU(0, 42 * MS),
	CPU(0, 44 * MS), WAITS(0, 45 * MS, 90 * MS, false), CPU(1, 50 * MS),
};
#define END (60 * MS)

static struct pr_profile *new_profile(enum pr_profile_mode mode, uint64_t min_ns)
{
	PR_OPTS(pr_profile_opts, po, .freq = 1000, .mode = mode, .period_is_ns = true,
		.off_cpu_min_ns = min_ns);
	struct pr_profile *p = pr_profile_new(&po);

	ck_assert_ptr_nonnull(p);
	return p;
}

/* The whole run in one profile. */
static struct pr_profile *whole(enum pr_profile_mode mode, uint64_t min_ns)
{
	struct pr_profile *p = new_profile(mode, min_ns);
	struct feed fd = { .steps = RUN_STEPS, .nr = PR_ARRAY_SIZE(RUN_STEPS) };

	feed_until(p, &fd, END);
	ck_assert_int_eq(pr_profile_end(p, END), 0);
	return p;
}

/* The same run cut at `cuts` (and at its end, after pr_profile_end()):
 * the windows into `win`, nr_cuts + 1 of them. */
static void windows(enum pr_profile_mode mode, uint64_t min_ns, const uint64_t *cuts,
		    size_t nr_cuts, struct pr_profile **win)
{
	struct pr_profile *p = new_profile(mode, min_ns);
	struct feed fd = { .steps = RUN_STEPS, .nr = PR_ARRAY_SIZE(RUN_STEPS) };

	for (size_t i = 0; i < nr_cuts; i++) {
		feed_until(p, &fd, cuts[i]);
		win[i] = pr_profile_cut(p, cuts[i]);
		ck_assert_ptr_nonnull(win[i]);
	}
	feed_until(p, &fd, END);
	ck_assert_int_eq(pr_profile_end(p, END), 0);
	win[nr_cuts] = pr_profile_cut(p, END);
	ck_assert_ptr_nonnull(win[nr_cuts]);
	/* Nothing is left behind once the run has ended. */
	ck_assert_uint_eq(pr_profile_nr_stacks(p), 0);
	ck_assert_uint_eq(pr_profile_samples(p), 0);
	pr_profile_free(p);
}

static void add_times(struct pr_profile_times *sum, const struct pr_profile *p, uint32_t pid)
{
	struct pr_profile_times t = { .sz = sizeof(t) };

	ck_assert_int_eq(pr_profile_times(p, pid, &t), 0);
	sum->samples += t.samples;
	sum->cpu_ns += t.cpu_ns;
	sum->waits_short += t.waits_short;
	sum->waits_lost += t.waits_lost;
	for (int k = 0; k < PR_WAIT_KIND_MAX; k++) {
		sum->waits[k] += t.waits[k];
		sum->off_cpu_ns[k] += t.off_cpu_ns[k];
	}
}

static void assert_times_eq(const struct pr_profile_times *a, const struct pr_profile_times *b)
{
	ck_assert_uint_eq(a->samples, b->samples);
	ck_assert_uint_eq(a->cpu_ns, b->cpu_ns);
	ck_assert_uint_eq(a->waits_short, b->waits_short);
	ck_assert_uint_eq(a->waits_lost, b->waits_lost);
	for (int k = 0; k < PR_WAIT_KIND_MAX; k++) {
		ck_assert_uint_eq(a->waits[k], b->waits[k]);
		ck_assert_uint_eq(a->off_cpu_ns[k], b->off_cpu_ns[k]);
	}
}

/* Folded lines "stack value" summed by stack, into `out` (sorted). */
struct line_sum {
	char stack[256];
	uint64_t value;
};

static size_t folded_add(struct line_sum *out, size_t n, const struct pr_profile *p)
{
	char *text = write_out(p, PR_FORMAT_FOLDED, NULL, NULL), *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');
		size_t i;

		ck_assert_ptr_nonnull(sp);
		*sp = '\0';
		for (i = 0; i < n && strcmp(out[i].stack, line); i++)
			;
		if (i == n) {
			ck_assert_uint_lt(n, 32);
			snprintf(out[n++].stack, sizeof(out[0].stack), "%s", line);
		}
		out[i].value += strtoull(sp + 1, NULL, 10);
	}
	free(text);
	return n;
}

static void assert_folded_eq(const struct line_sum *a, size_t na, const struct line_sum *b,
			     size_t nb)
{
	ck_assert_uint_eq(na, nb);
	for (size_t i = 0; i < na; i++) {
		size_t j;

		for (j = 0; j < nb && strcmp(a[i].stack, b[j].stack); j++)
			;
		ck_assert_msg(j < nb, "%s is not in the windows", a[i].stack);
		ck_assert_msg(a[i].value == b[j].value, "%s: %llu in the run, %llu in the windows",
			      a[i].stack, (unsigned long long)a[i].value,
			      (unsigned long long)b[j].value);
	}
}

static void check_windows_add_up(enum pr_profile_mode mode, uint64_t min_ns)
{
	static const uint64_t cuts[] = { 10 * MS, 20 * MS, 30 * MS, 40 * MS };
	struct pr_profile *all = whole(mode, min_ns), *win[5];
	struct pr_profile_times tw = { 0 }, ta = { 0 };
	struct line_sum lw[32] = { 0 }, la[32] = { 0 };
	size_t nw = 0, na;

	windows(mode, min_ns, cuts, 4, win);
	for (int i = 0; i < 5; i++) {
		add_times(&tw, win[i], 0);
		nw = folded_add(lw, nw, win[i]);
	}
	add_times(&ta, all, 0);
	assert_times_eq(&ta, &tw);
	na = folded_add(la, 0, all);
	assert_folded_eq(la, na, lw, nw);
	for (int i = 0; i < 5; i++)
		pr_profile_free(win[i]);
	pr_profile_free(all);
}

START_TEST(wall_windows_add_up_to_the_whole_run)
{
	check_windows_add_up(PR_PROFILE_WALL, 0);
}
END_TEST

START_TEST(off_cpu_windows_add_up_to_the_whole_run)
{
	check_windows_add_up(PR_PROFILE_OFF_CPU, 0);
}
END_TEST

START_TEST(cpu_windows_add_up_to_the_whole_run)
{
	check_windows_add_up(PR_PROFILE_CPU, 0);
}
END_TEST

/* With a minimum of 8 ms, the wait from 3 ms has lasted 7 ms at the cut
 * at 10 ms: it stays whole there and is split from the next cut on; the
 * 2 ms one is too short whole, and the open one counts. */
START_TEST(a_minimum_wait_is_judged_on_the_whole_wait)
{
	check_windows_add_up(PR_PROFILE_WALL, 8 * MS);
}
END_TEST

/* The blocked wait of 38 ms from 3 ms: 7 ms in the first window, 10 in
 * each of the next three, 1 in the last, counted once, where it ended. */
START_TEST(a_wait_across_cuts_is_split_at_each_and_counted_where_it_ends)
{
	static const uint64_t cuts[] = { 10 * MS, 20 * MS, 30 * MS, 40 * MS };
	static const uint64_t want_ns[] = { 7 * MS, 10 * MS, 10 * MS, 10 * MS, 1 * MS };
	struct pr_profile *win[5];

	windows(PR_PROFILE_OFF_CPU, 0, cuts, 4, win);
	for (int i = 0; i < 5; i++) {
		struct pr_profile_times t = { .sz = sizeof(t) };
		/* The wait of PID from 45 ms, ended by the run's end at 60. */
		uint64_t open_ns = i == 4 ? 15 * MS : 0;

		ck_assert_int_eq(pr_profile_times(win[i], PID, &t), 0);
		ck_assert_uint_eq(t.off_cpu_ns[PR_WAIT_BLOCKED], want_ns[i] + open_ns);
		ck_assert_uint_eq(t.waits[PR_WAIT_BLOCKED], i == 4 ? 2 : 0);
		pr_profile_free(win[i]);
	}
}
END_TEST

/* After a cut the profile that goes on holds only the open wait's stack
 * (one thread, its three locations and functions; the pseudo-frame not
 * yet) or nothing, whatever ran before. */
START_TEST(the_profile_going_on_keeps_only_what_open_waits_need)
{
	struct pr_profile *p = new_profile(PR_PROFILE_WALL, 0);
	struct feed fd = { .steps = RUN_STEPS, .nr = PR_ARRAY_SIZE(RUN_STEPS) };

	for (uint64_t t = 5 * MS; t <= 50 * MS; t += 5 * MS) {
		struct pr_profile *w;

		feed_until(p, &fd, t);
		w = pr_profile_cut(p, t);
		ck_assert_ptr_nonnull(w);
		pr_profile_free(w);
		ck_assert_uint_eq(p->nr_stacks, 0);
		ck_assert_uint_eq(p->nr_frames, 0);
		/* At 5..40 ms the wait of PID from 3 ms is open, at 50 the one
		 * from 45 ms; at 45 none is. */
		ck_assert_uint_eq(p->nr_threads, t == 45 * MS ? 0 : 1);
		ck_assert_uint_eq(p->nr_locations, t == 45 * MS ? 0 : 3);
		ck_assert_uint_eq(p->nr_functions, t == 45 * MS ? 0 : 3);
		ck_assert_uint_eq(p->total.samples, 0);
	}
	pr_profile_free(p);
}
END_TEST

/* A read group's counter: its growths over the windows add up to its last
 * read, as in the whole run. */
START_TEST(counter_growths_add_up_across_cuts)
{
	static const char *const events[] = { "cpu-clock" }, *const counters[] = { "faults" };
	PR_OPTS(pr_profile_opts, po, .events = events, .nr_events = 1, .counters = counters,
		.nr_counters = 1);
	static const struct step steps[] = {
		{ .time = 1 * MS, .read = 5 }, { .time = 2 * MS, .read = 9 },
		{ .time = 12 * MS, .read = 30 }, { .time = 22 * MS, .read = 31 },
	};
	struct pr_profile *p = pr_profile_new(&po);
	struct feed fd = { .steps = steps, .nr = PR_ARRAY_SIZE(steps) };
	uint64_t sum = 0;

	ck_assert_ptr_nonnull(p);
	for (uint64_t t = 10 * MS; t <= 30 * MS; t += 10 * MS) {
		struct pr_profile *w;

		feed_until(p, &fd, t);
		w = pr_profile_cut(p, t);
		ck_assert_ptr_nonnull(w);
		for (uint32_t i = 0; i < w->nr_stacks; i++)
			sum += prof__growth(w, i, 0);
		/* The first window grew 9; the second 21 more; the third 1. */
		ck_assert_uint_eq(sum, t == 10 * MS ? 9 : t == 20 * MS ? 30 : 31);
		pr_profile_free(w);
	}
	pr_profile_free(p);
}
END_TEST

/* Selected apart, the processes of a profile add up to it, and each holds
 * nothing of the other's: no thread, no mapping (their perf maps). */
START_TEST(processes_selected_apart_add_up_to_the_whole)
{
	struct pr_profile *all = whole(PR_PROFILE_WALL, 0), *a, *b;
	uint32_t pa = PID, pb = PID2;
	struct pr_profile_times ta = { 0 }, ts = { 0 };
	struct line_sum la[32] = { 0 }, ls[32] = { 0 };
	size_t na, ns;
	char name[64];

	a = pr_profile_select(all, &pa, 1);
	b = pr_profile_select(all, &pb, 1);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	add_times(&ta, all, 0);
	add_times(&ts, a, 0);
	add_times(&ts, b, 0);
	/* What no process owns — waits lost or too short — is the whole's. */
	ts.waits_lost = ta.waits_lost;
	ts.waits_short = ta.waits_short;
	assert_times_eq(&ta, &ts);
	na = folded_add(la, 0, all);
	ns = folded_add(ls, 0, a);
	ns = folded_add(ls, ns, b);
	assert_folded_eq(la, na, ls, ns);
	for (uint32_t i = 0; i < a->nr_threads; i++)
		ck_assert_uint_eq(a->threads[i].pid, PID);
	snprintf(name, sizeof(name), "/tmp/perf-%u.map", PID2);
	for (uint32_t i = 0; i < a->nr_mappings; i++)
		ck_assert_str_ne(prof_str(a, a->mappings[i].name), name);
	ck_assert_uint_gt(a->nr_mappings, 0);
	/* Selecting both is the whole again. */
	{
		uint32_t both[] = { PID2, PID };
		struct pr_profile *ab = pr_profile_select(all, both, 2);
		struct line_sum lab[32] = { 0 };

		ck_assert_ptr_nonnull(ab);
		assert_folded_eq(la, na, lab, folded_add(lab, 0, ab));
		pr_profile_free(ab);
	}
	pr_profile_free(a);
	pr_profile_free(b);
	pr_profile_free(all);
}
END_TEST

/* Shares merged (as parallel workers' profiles are) make the whole: each
 * process's share, counted apart, merged into an empty profile gives the
 * whole run's times and folded lines; merging refuses what cannot be one
 * profile. */
START_TEST(shares_merged_make_the_whole)
{
	struct pr_profile *all = whole(PR_PROFILE_WALL, 0), *a, *b, *m, *cpu;
	uint32_t pa = PID, pb = PID2;
	struct pr_profile_times ta = { 0 }, tm = { 0 };
	struct line_sum la[32] = { 0 }, lm[32] = { 0 };

	a = pr_profile_select(all, &pa, 1);
	b = pr_profile_select(all, &pb, 1);
	m = new_profile(PR_PROFILE_WALL, 0);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(pr_profile_merge(m, a), 0);
	ck_assert_int_eq(pr_profile_merge(m, b), 0);
	add_times(&ta, all, 0);
	add_times(&tm, m, 0);
	/* Waits no process owns stay with the whole, as for selections. */
	tm.waits_lost = ta.waits_lost;
	tm.waits_short = ta.waits_short;
	assert_times_eq(&ta, &tm);
	assert_folded_eq(la, folded_add(la, 0, all), lm, folded_add(lm, 0, m));
	ck_assert_uint_eq(pr_profile_nr_stacks(m), pr_profile_nr_stacks(all));
	ck_assert_uint_eq(pr_profile_samples(m), pr_profile_samples(a) + pr_profile_samples(b));
	/* Another mode, the same profile, or none. */
	cpu = new_profile(PR_PROFILE_CPU, 0);
	ck_assert_int_eq(pr_profile_merge(cpu, a), -EINVAL);
	ck_assert_int_eq(pr_profile_merge(m, m), -EINVAL);
	ck_assert_int_eq(pr_profile_merge(NULL, a), -EINVAL);
	ck_assert_int_eq(pr_profile_merge(m, NULL), -EINVAL);
	pr_profile_free(cpu);
	pr_profile_free(m);
	pr_profile_free(a);
	pr_profile_free(b);
	pr_profile_free(all);
}
END_TEST

/* A process's tags label its samples in pprof, after the thread's labels;
 * a selection keeps its own processes' tags only, and a cut hands them
 * to the window. */
START_TEST(process_tags_label_their_processes_samples)
{
	struct pr_profile *all = whole(PR_PROFILE_CPU, 0), *a, *w;
	Perftools__Profiles__Profile *m;
	uint32_t pa = PID;
	bool seen[2] = { false, false };

	ck_assert_int_eq(pr_profile_process_tag(all, PID, "container.id", "c0ffee"), 0);
	ck_assert_int_eq(pr_profile_process_tag(all, PID, "container.id", "abc123"), 0);
	ck_assert_int_eq(pr_profile_process_tag(all, PID, "k8s.pod.uid", "pod-1"), 0);
	ck_assert_int_eq(pr_profile_process_tag(all, PID2, "container.id", "other"), 0);
	ck_assert_int_eq(pr_profile_process_tag(all, PID, "", "x"), -EINVAL);
	ck_assert_int_eq(pr_profile_tag(all, "env", "test"), 0);
	m = read_pprof(all);
	for (size_t i = 0; i < m->n_sample; i++) {
		const Perftools__Profiles__Sample *s = m->sample[i];
		int64_t pid = 0;

		for (size_t l = 0; l < s->n_label; l++)
			if (!strcmp(str(m, s->label[l]->key), "pid"))
				pid = s->label[l]->num;
		ck_assert_str_eq(label_of(m, s, "container.id"), pid == PID ? "abc123" : "other");
		ck_assert_str_eq(label_of(m, s, "env"), "test");
		if (pid == PID) {
			ck_assert_str_eq(label_of(m, s, "k8s.pod.uid"), "pod-1");
			/* After the thread's four, before the profile's. */
			ck_assert_str_eq(str(m, s->label[4]->key), "container.id");
			ck_assert_str_eq(str(m, s->label[5]->key), "k8s.pod.uid");
			ck_assert_str_eq(str(m, s->label[6]->key), "env");
		}
		seen[pid == PID] = true;
	}
	ck_assert(seen[0] && seen[1]);
	ck_assert_str_eq(type_of(m, 0), "samples/count");
	ck_assert_str_eq(label_of(m, sample_of(m, "leaf"), "env"), "test");
	perftools__profiles__profile__free_unpacked(m, NULL);

	a = pr_profile_select(all, &pa, 1);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->nr_ptags, 2);
	ck_assert_uint_eq(a->ptags[0].pid, PID);
	pr_profile_free(a);
	w = pr_profile_cut(all, END);
	ck_assert_ptr_nonnull(w);
	ck_assert_uint_eq(w->nr_ptags, 3);
	ck_assert_uint_eq(all->nr_ptags, 0);
	ck_assert_uint_eq(w->nr_tags, 1);
	ck_assert_uint_eq(all->nr_tags, 1);
	pr_profile_free(w);
	pr_profile_free(all);
}
END_TEST

START_TEST(cut_and_select_refuse_what_is_not_a_profile)
{
	uint32_t pid = PID;

	errno = 0;
	ck_assert_ptr_null(pr_profile_cut(NULL, 1));
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(pr_profile_select(NULL, &pid, 1));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(pr_profile_process_tag(NULL, 1, "k", "v"), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("profile-window");
	TCase *tc = tcase_create("windows");

	tcase_add_checked_fixture(tc, setup2, teardown2);
	tcase_add_test(tc, wall_windows_add_up_to_the_whole_run);
	tcase_add_test(tc, off_cpu_windows_add_up_to_the_whole_run);
	tcase_add_test(tc, cpu_windows_add_up_to_the_whole_run);
	tcase_add_test(tc, a_minimum_wait_is_judged_on_the_whole_wait);
	tcase_add_test(tc, a_wait_across_cuts_is_split_at_each_and_counted_where_it_ends);
	tcase_add_test(tc, the_profile_going_on_keeps_only_what_open_waits_need);
	tcase_add_test(tc, counter_growths_add_up_across_cuts);
	tcase_add_test(tc, processes_selected_apart_add_up_to_the_whole);
	tcase_add_test(tc, shares_merged_make_the_whole);
	tcase_add_test(tc, process_tags_label_their_processes_samples);
	tcase_add_test(tc, cut_and_select_refuse_what_is_not_a_profile);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
