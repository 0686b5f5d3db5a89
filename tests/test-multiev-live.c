/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Several events in one reader, against the real kernel: a forked child
 * faults fresh pages and makes two of its threads ping-pong through
 * pipes, and what each event sampled is compared with what the child's
 * own rusage (getrusage(2), the kernel's accounting, not this library's)
 * says it did while it was sampled.  Then a read group: every sample
 * carries the group's counts, which only grow per thread and CPU.
 * Skips (77) only when the kernel refuses perf_event_open.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkmain.h"
#include "livecheck.h"
#include "perfreader.h"

#define PAGES 3000
#define ROUND_TRIPS 1000

/* ---- the workload: a child told when to start, reporting its rusage ---- */

struct pingpong {
	int ping[2], pong[2];
};

static void *pong_thread(void *arg)
{
	struct pingpong *p = arg;
	char c;

	for (int i = 0; i < ROUND_TRIPS; i++) {
		if (read(p->ping[0], &c, 1) != 1 || write(p->pong[1], &c, 1) != 1)
			_exit(3);
	}
	return NULL;
}

static void ping_pong(void)
{
	struct pingpong p;
	pthread_t t;
	char c = 'x';

	if (pipe(p.ping) || pipe(p.pong) || pthread_create(&t, NULL, pong_thread, &p))
		_exit(4);
	for (int i = 0; i < ROUND_TRIPS; i++) {
		if (write(p.ping[1], &c, 1) != 1 || read(p.pong[0], &c, 1) != 1)
			_exit(5);
	}
	pthread_join(t, NULL);
}

__attribute__((noinline)) static void touch_pages(void)
{
	long page = sysconf(_SC_PAGESIZE);
	volatile char *m = mmap(NULL, PAGES * (size_t)page, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		_exit(6);
	for (long i = 0; i < PAGES; i++)
		m[i * page] = 1;
}

/* What the child did between its start and end marks, and in its whole
 * life (the kernel's accounting, from wait4: what the events counted,
 * opened after the fork, is at most that -- and the faults a sanitized
 * child takes outside its marks, its runtime's, are in it too). */
struct did {
	long faults, switches;
	long life_faults, life_switches;
};

/* Slack for what the kernel counts twice and accounts once: a fault it
 * retries (the event fires at each try). */
#define RETRIES 10

struct child {
	pid_t pid;
	int go;       /* write a byte: start */
	int report;   /* read a struct did */
};

static void child_main(int go, int report)
{
	struct rusage a, b;
	struct did d;
	char c;

	if (read(go, &c, 1) != 1)
		_exit(2);
	getrusage(RUSAGE_SELF, &a);
	touch_pages();
	ping_pong();
	getrusage(RUSAGE_SELF, &b);
	d.faults = (b.ru_minflt + b.ru_majflt) - (a.ru_minflt + a.ru_majflt);
	d.switches = (b.ru_nvcsw + b.ru_nivcsw) - (a.ru_nvcsw + a.ru_nivcsw);
	if (write(report, &d, sizeof(d)) != (ssize_t)sizeof(d))
		_exit(7);
	_exit(0);
}

static void child_fork(struct child *ch)
{
	int go[2], report[2];

	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(report), 0);
	ch->pid = fork();
	ck_assert_int_ge(ch->pid, 0);
	if (ch->pid == 0) {
		close(go[1]);
		close(report[0]);
		child_main(go[0], report[1]);
	}
	close(go[0]);
	close(report[1]);
	ch->go = go[1];
	ch->report = report[0];
}

/* ---- what the reader delivered ---- */

#define MAX_UNITS 256

/* A read group's counts as last seen on one event instance: a thread on
 * a CPU (the ring's). */
struct unit {
	uint32_t tid;
	int cpu;
	uint64_t last[4];
};

struct seen {
	struct pr_reader *r;
	struct pr_writer *w;    /* non-NULL: every record goes to a file too */
	pid_t pid;
	long per_event[4];
	long unattributed;
	/* Read groups. */
	uint32_t nr_read;
	bool per_cpu;
	long without_read, wrong_ids, decreasing;
	struct unit units[MAX_UNITS];
	size_t nr_units;
};

static struct unit *unit_of(struct seen *s, uint32_t tid, int cpu)
{
	for (size_t i = 0; i < s->nr_units; i++)
		if (s->units[i].tid == tid && s->units[i].cpu == cpu)
			return &s->units[i];
	ck_assert_uint_lt(s->nr_units, MAX_UNITS);
	s->units[s->nr_units] = (struct unit){ .tid = tid, .cpu = cpu };
	return &s->units[s->nr_units++];
}

/* Value i of the sample must be event i's, and no value may shrink since
 * the same thread's last sample on that CPU. */
static void check_read(struct seen *s, const struct pr_record *rec)
{
	const struct pr_sample *smp = &rec->u.sample;
	struct unit *u;

	if (smp->nr_read != s->nr_read) {
		s->without_read++;
		return;
	}
	/* Events on a CPU count every task there. */
	u = unit_of(s, s->per_cpu ? 0 : rec->tid, rec->ring_cpu);
	for (uint32_t i = 0; i < smp->nr_read; i++) {
		uint64_t value, id, ids[64];
		size_t n = pr_reader_event_ids(s->r, i, ids, 64);
		bool known = false;

		ck_assert_int_eq(pr_sample_read(smp, i, &value, &id), 0);
		for (size_t k = 0; k < n && k < 64; k++)
			known |= ids[k] == id;
		if (!known)
			s->wrong_ids++;
		if (value < u->last[i])
			s->decreasing++;
		u->last[i] = value;
	}
}

static int on_record(const struct pr_record *rec, void *arg)
{
	struct seen *s = arg;
	int ev;

	if (s->w)
		ck_assert_int_eq(pr_writer_write(s->w, rec), 0);
	if (rec->type != PR_RECORD_SAMPLE || rec->pid != (uint32_t)s->pid)
		return 0;
	ev = pr_reader_event_of(s->r, rec);
	if (ev < 0 || ev >= 4) {
		s->unattributed++;
		return 0;
	}
	s->per_event[ev]++;
	if (s->nr_read)
		check_read(s, rec);
	return 0;
}

/* Has the child exited?  It is left for run() to reap. */
static bool has_exited(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	ck_assert_int_eq(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT), 0);
	return si.si_pid == pid;
}

/* Start the child, drain until it exits (its samples are in the rings
 * by then), take its report. */
static void run(struct child *ch, struct seen *s, struct did *d)
{
	char c = 'g';
	struct rusage ru;
	int status, n;

	ck_assert_int_eq(pr_reader_enable(s->r), 0);
	ck_assert_int_eq(write(ch->go, &c, 1), 1);
	while (!has_exited(ch->pid)) {
		n = pr_reader_poll(s->r, 100, on_record, s);
		ck_assert_int_ge(n, 0);
		if (s->w)
			ck_assert_int_eq(pr_writer_finish_round(s->w), 0);
	}
	ck_assert_int_ge(pr_reader_consume(s->r, on_record, s), 0);
	ck_assert_int_eq(read(ch->report, d, sizeof(*d)), (ssize_t)sizeof(*d));
	ck_assert_int_eq(wait4(ch->pid, &status, 0, &ru), ch->pid);
	d->life_faults = ru.ru_minflt + ru.ru_majflt;
	d->life_switches = ru.ru_nvcsw + ru.ru_nivcsw;
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the workload failed (status 0x%x)", status);
	close(ch->go);
	close(ch->report);
	/* A full ring would make any count a lower bound only.  (System-wide,
	 * a busy machine's faults may fill the rings: only the values are
	 * checked there, which losing samples does not change.) */
	if (!s->per_cpu)
		ck_assert_uint_eq(pr_reader_lost(s->r), 0);
}

/* The events as pr_event_parse() describes them. */
static const struct pr_event_desc page_faults = {
	.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_PAGE_FAULTS, .name = "page-faults"
};
static const struct pr_event_desc context_switches = {
	.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CONTEXT_SWITCHES,
	.name = "context-switches"
};
static const struct pr_event_desc cpu_clock = {
	.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK, .name = "cpu-clock"
};

/* Small stacks: every fault and switch is a sample, and the rings must
 * hold them all between two drains. */
static struct pr_event_opts sample_every(const struct pr_event_desc *d)
{
	PR_OPTS(pr_event_opts, o, .period = 1, .stack_size = 64, .desc = d);

	return o;
}

static struct pr_reader *open_child(pid_t pid, const struct pr_event_opts *evs, size_t nr,
				    bool read_group)
{
	PR_OPTS(pr_reader_opts, o, .events = evs, .nr_events = nr, .read_group = read_group,
		.ring_pages = 1024);
	struct pr_reader *r;

	r = pid ? pr_reader_open_pids(&pid, 1, &o) : pr_reader_open_cpus(NULL, 0, &o);
	ck_assert_msg(r, "open failed: %s", strerror(errno));
	return r;
}

/* Each event's samples are what the kernel's own accounting says the
 * child did: every fault and every switch, once, under the right event.
 * The accounting's window is a little narrower than the sampling's (the
 * child's start and exit lie outside it): a few extra are allowed. */
START_TEST(page_fault_and_switch_samples_each_go_to_their_event)
{
	struct pr_event_opts evs[2] = { sample_every(&page_faults), sample_every(&context_switches) };
	struct seen s = { 0 };
	struct child ch;
	struct did d;

	live_require_perf();
	child_fork(&ch);
	s.pid = ch.pid;
	s.r = open_child(ch.pid, evs, 2, false);
	ck_assert_uint_eq(pr_reader_nr_events(s.r), 2);
	ck_assert_uint_eq(pr_reader_event_attr(s.r, 0)->config, PERF_COUNT_SW_PAGE_FAULTS);
	ck_assert_uint_eq(pr_reader_event_attr(s.r, 1)->config, PERF_COUNT_SW_CONTEXT_SWITCHES);
	run(&ch, &s, &d);
	pr_reader_close(s.r);

	ck_assert_int_eq(s.unattributed, 0);
	ck_assert_int_ge(d.faults, PAGES);
	/* How often the two threads switch depends on whether each reply
	 * comes before its reader sleeps: the kernel's accounting, not the
	 * round trips, is the oracle. */
	ck_assert_int_gt(d.switches, 0);
	ck_assert_msg(s.per_event[0] >= d.faults && s.per_event[0] <= d.life_faults + RETRIES,
		      "%ld page-fault samples, %ld faults accounted (%ld in its life)",
		      s.per_event[0], d.faults, d.life_faults);
	ck_assert_msg(s.per_event[1] >= d.switches && s.per_event[1] <= d.life_switches + RETRIES,
		      "%ld context-switch samples, %ld switches accounted (%ld in its life)",
		      s.per_event[1], d.switches, d.life_switches);
}
END_TEST

/* A group led by page-faults, with context-switches and page-faults
 * counted beside it: every sample carries three values, with the
 * members' ids, never shrinking on one thread and CPU (or, system-wide,
 * on one CPU), and the leader's own count is at least what its samples
 * stand for. */
static void check_read_group(bool system_wide)
{
	struct pr_event_opts evs[3] = { sample_every(&page_faults), sample_every(&context_switches),
					sample_every(&page_faults) };
	struct seen s = { 0 };
	uint64_t total_leader = 0, total_cs = 0;
	struct child ch;
	struct did d;

	live_require_perf();
	child_fork(&ch);
	s.pid = ch.pid;
	s.nr_read = 3;
	s.per_cpu = system_wide;
	s.r = open_child(system_wide ? 0 : ch.pid, evs, 3, true);
	ck_assert_uint_eq(pr_reader_nr_events(s.r), 3);
	run(&ch, &s, &d);
	pr_reader_close(s.r);

	ck_assert_int_eq(s.unattributed, 0);
	/* Only the leader samples. */
	ck_assert_int_eq(s.per_event[1] + s.per_event[2], 0);
	ck_assert_int_ge(s.per_event[0], PAGES);
	ck_assert_int_eq(s.without_read, 0);
	ck_assert_int_eq(s.wrong_ids, 0);
	ck_assert_int_eq(s.decreasing, 0);
	for (size_t i = 0; i < s.nr_units; i++) {
		/* The two page-fault counters of one group agree, but for
		 * the fault being sampled, which the leader may have
		 * counted before the member. */
		ck_assert_uint_le(s.units[i].last[0] - s.units[i].last[2] + 1, 2);
		total_leader += s.units[i].last[0];
		total_cs += s.units[i].last[1];
	}
	ck_assert_uint_ge(total_leader, (uint64_t)s.per_event[0]);
	if (system_wide)
		return;
	ck_assert_uint_le(total_leader, (uint64_t)d.life_faults + RETRIES);
	ck_assert_uint_le(total_cs, (uint64_t)d.life_switches + RETRIES);
}

START_TEST(a_read_group_puts_the_groups_counts_on_every_sample)
{
	check_read_group(false);
}
END_TEST

START_TEST(a_system_wide_read_group_puts_the_groups_counts_on_every_sample)
{
	check_read_group(true);
}
END_TEST

/* Run `argv` under a reader sampling `evs`, counting its samples per
 * event into `s`. */
static void sample_command(char *const argv[], const struct pr_event_opts *evs, size_t nr,
			   bool read_group, struct seen *s)
{
	PR_OPTS(pr_reader_opts, o, .events = evs, .nr_events = nr, .read_group = read_group,
		.ring_pages = 1024);
	int status;

	s->r = pr_reader_open_command(argv, &o);
	ck_assert_msg(s->r, "open failed: %s", strerror(errno));
	s->pid = pr_reader_child(s->r);
	ck_assert_int_eq(pr_reader_enable(s->r), 0);
	while (!pr_reader_done(s->r))
		ck_assert_int_ge(pr_reader_poll(s->r, 100, on_record, s), 0);
	ck_assert_int_ge(pr_reader_consume(s->r, on_record, s), 0);
	ck_assert_int_eq(waitpid(s->pid, &status, 0), s->pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_uint_eq(pr_reader_lost(s->r), 0);
	pr_reader_close(s->r);
}

/* stat-workload's known counts: 1000 pipe round trips switch at least
 * 2000 times and fault a few dozen pages; 3000 fresh pages fault 3000
 * times and switch a few times.  Each event gets its own. */
START_TEST(stat_workloads_faults_and_switches_go_to_their_events)
{
	struct pr_event_opts evs[2] = { sample_every(&page_faults),
					sample_every(&context_switches) };
	char *pipe_argv[] = { getenv("DS_STAT_WORKLOAD"), "pipe", "1000", NULL };
	char *pages_argv[] = { getenv("DS_STAT_WORKLOAD"), "pages", "3000", NULL };
	struct seen pipe = { 0 }, pages = { 0 };

	live_require_perf();
	ck_assert_msg(pipe_argv[0], "DS_STAT_WORKLOAD must name stat-workload");
	sample_command(pipe_argv, evs, 2, false, &pipe);
	sample_command(pages_argv, evs, 2, false, &pages);
	ck_assert_int_eq(pipe.unattributed + pages.unattributed, 0);
	ck_assert_int_ge(pipe.per_event[1], 2000);
	ck_assert_int_lt(pipe.per_event[0], 500);
	ck_assert_int_ge(pages.per_event[0], 3000);
	ck_assert_int_lt(pages.per_event[0], 3500);
	ck_assert_int_lt(pages.per_event[1], 500);
}
END_TEST

/* A launched command: the leader starts the group at exec, its members
 * (enabled from the start, but governed by their leader) count from
 * there too: every sample of the command carries both counts. */
START_TEST(a_launched_commands_read_group_counts_from_its_exec)
{
	struct pr_event_opts evs[2] = { sample_every(&page_faults),
					sample_every(&context_switches) };
	char *argv[] = { getenv("DS_WORKLOAD"), "spin", "0.05", NULL };
	struct seen s = { 0 };

	live_require_perf();
	ck_assert_msg(argv[0], "DS_WORKLOAD must name the test workload");
	s.nr_read = 2;
	sample_command(argv, evs, 2, true, &s);

	/* Loading the program alone faults dozens of pages. */
	ck_assert_int_ge(s.per_event[0], 20);
	ck_assert_int_eq(s.per_event[1], 0);
	ck_assert_int_eq(s.without_read, 0);
	ck_assert_int_eq(s.wrong_ids, 0);
	ck_assert_int_eq(s.decreasing, 0);
}
END_TEST

/* ---- files: perf 6.1's tools and our own reader name every event ---- */

static int to_writer(const struct pr_record *rec, void *w)
{
	return pr_writer_write(w, rec);
}

/* A file of the reader's events named `names`, the child's existing
 * mappings first (so perf can place its samples), then all it delivers. */
static struct pr_writer *file_for(struct seen *s, const char *path,
				  const char *const *names)
{
	struct pr_writer_event evs[8];
	uint64_t ids[8][64];
	size_t nr = pr_reader_nr_events(s->r);
	struct pr_writer *w;

	ck_assert_uint_le(nr, 8);
	for (size_t i = 0; i < nr; i++) {
		size_t n = pr_reader_event_ids(s->r, i, ids[i], 64);

		ck_assert_uint_le(n, 64);
		evs[i] = (struct pr_writer_event){ pr_reader_event_attr(s->r, i), ids[i], n,
						   names[i] };
	}
	w = pr_writer_open_events(path, evs, nr, NULL);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(pr_process_synthesize(s->pid, pr_reader_attr(s->r), ids[0][0],
					       to_writer, w), 0);
	return w;
}

/* Samples per event name as `perf script` (perf 6.1) lists them, and
 * whatever it says on stderr. */
struct listed {
	char names[8][64];
	long counts[8];
	int nr;
	char err[4096];
};

static void perf_script(const char *path, struct listed *l)
{
	char cmd[1024], line[512];
	FILE *p;
	size_t n;

	memset(l, 0, sizeof(*l));
	snprintf(cmd, sizeof(cmd), "perf script -i %s -F event 2>%s.err", path, path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		char name[64];
		size_t len;
		int i;

		/* "   sched:sched_switch: ": the name, then a colon. */
		if (sscanf(line, " %63s", name) != 1)
			continue;
		len = strlen(name);
		if (len < 2 || name[len - 1] != ':')
			continue;
		name[len - 1] = '\0';
		for (i = 0; i < l->nr && strcmp(l->names[i], name); i++)
			;
		if (i == l->nr) {
			ck_assert_int_lt(l->nr, 8);
			snprintf(l->names[l->nr++], 64, "%s", name);
		}
		l->counts[i]++;
	}
	ck_assert_int_eq(pclose(p), 0);
	snprintf(cmd, sizeof(cmd), "%s.err", path);
	p = fopen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	n = fread(l->err, 1, sizeof(l->err) - 1, p);
	l->err[n] = '\0';
	fclose(p);
	unlink(cmd);
}

static long listed_count(const struct listed *l, const char *name)
{
	for (int i = 0; i < l->nr; i++)
		if (!strcmp(l->names[i], name))
			return l->counts[i];
	return 0;
}

/* `perf report --stdio` heads each event's part with its name. */
static bool perf_report_names(const char *path, const char *name)
{
	char cmd[1024], line[512], want[128];
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "perf report -i %s --stdio --sort comm 2>/dev/null", path);
	snprintf(want, sizeof(want), "of event '%s'", name);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p))
		found |= strstr(line, want) != NULL;
	ck_assert_int_eq(pclose(p), 0);
	return found;
}

static bool have_perf(void)
{
	return system("perf --version >/dev/null 2>&1") == 0;
}

/* The value perf last saw for an id (see perf_splits()). */
struct last_value {
	uint64_t id, value;
};

/*
 * perf's tools turn a sample carrying a group's counts into one sample
 * per member whose count moved since the last value seen for its id
 * (perf 6.1, deliver_sample_group()), in time order.  Count them per
 * event as perf will list them.
 */
static void perf_splits(struct pr_file *f, const struct pr_sample *smp,
			struct last_value *last, size_t *nr_last, long *per_event)
{
	ck_assert_uint_eq(smp->nr_read, pr_file_nr_attrs(f));
	for (uint32_t i = 0; i < smp->nr_read; i++) {
		uint64_t value, id;
		size_t k;

		ck_assert_int_eq(pr_sample_read(smp, i, &value, &id), 0);
		for (k = 0; k < *nr_last && last[k].id != id; k++)
			;
		if (k == *nr_last) {
			ck_assert_uint_lt(*nr_last, 64);
			last[(*nr_last)++] = (struct last_value){ id, 0 };
		}
		if (value != last[k].value)
			per_event[i]++;
		last[k].value = value;
	}
}

/* Record `evs` on the workload into a file, then read it with perf and
 * with pr_file: both list each event by name, perf as many samples per
 * event as we find in the file, and those as many as the reader saw. */
static void check_file(const struct pr_event_opts *evs, size_t nr, bool read_group,
		       const char *const *names, const char *file)
{
	char path[256];
	struct seen s = { 0 };
	struct listed l;
	struct child ch;
	struct did d;
	struct pr_file *f;
	struct pr_record rec;
	long in_file[8] = { 0 }, perf_sees[8] = { 0 };
	struct last_value last[64];
	size_t nr_last = 0;
	int n;

	live_require_perf();
	if (!have_perf()) {
		printf("SKIP: perf is not installed\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/%s-%d", P_tmpdir, file, (int)getpid());
	child_fork(&ch);
	s.pid = ch.pid;
	s.r = open_child(ch.pid, evs, nr, read_group);
	s.w = file_for(&s, path, names);
	run(&ch, &s, &d);
	ck_assert_int_eq(pr_writer_close(s.w), 0);

	f = pr_file_open(path, NULL);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(pr_file_nr_attrs(f), nr);
	for (size_t i = 0; i < nr; i++)
		ck_assert_str_eq(pr_file_event_name(f, i), names[i]);
	while ((n = pr_file_read(f, &rec)) != 0) {
		int ev;

		ck_assert_int_eq(n, 1);
		if (rec.type != PR_RECORD_SAMPLE)
			continue;
		ev = pr_file_event_of(f, &rec);
		ck_assert_int_ge(ev, 0);
		in_file[ev]++;
		if (read_group)
			perf_splits(f, &rec.u.sample, last, &nr_last, perf_sees);
		else
			perf_sees[ev]++;
	}
	pr_file_close(f);
	pr_reader_close(s.r);

	perf_script(path, &l);
	for (size_t i = 0; i < nr; i++) {
		ck_assert_msg(listed_count(&l, names[i]) == perf_sees[i],
			      "perf script lists %ld %s samples, the file holds %ld; "
			      "perf said: %s", listed_count(&l, names[i]), names[i], perf_sees[i],
			      l.err);
		if (perf_sees[i])
			ck_assert_msg(perf_report_names(path, names[i]),
				      "perf report has no part for %s", names[i]);
	}
	/* What was written is what the reader delivered. */
	for (size_t i = 0; i < nr; i++)
		ck_assert_int_eq(in_file[i], s.per_event[i]);
	ck_assert_int_ge(in_file[0], PAGES);
	unlink(path);
}

START_TEST(perf_reads_a_file_of_three_software_events_by_name)
{
	struct pr_event_opts evs[3] = { sample_every(&page_faults), sample_every(&context_switches),
					sample_every(&cpu_clock) };
	static const char *const names[] = { "page-faults", "context-switches", "cpu-clock" };

	/* Every 50 us of CPU time. */
	evs[2].period = 50000;
	check_file(evs, 3, false, names, "multiev-three");
}
END_TEST

START_TEST(perf_reads_a_file_with_a_read_group_by_name)
{
	struct pr_event_opts evs[2] = { sample_every(&page_faults), sample_every(&context_switches) };
	static const char *const names[] = { "page-faults", "context-switches" };

	check_file(evs, 2, true, names, "multiev-group");
}
END_TEST

/* The tracepoint's id, from wherever tracefs is mounted. */
static uint64_t tracepoint_id(const char *subsys, const char *name)
{
	static const char *const roots[] = { "/sys/kernel/tracing",
					     "/sys/kernel/debug/tracing" };
	unsigned long long id = 0;

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]) && !id; i++) {
		char path[256];
		FILE *f;

		snprintf(path, sizeof(path), "%s/events/%s/%s/id", roots[i], subsys, name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu", &id) != 1)
			id = 0;
		fclose(f);
	}
	return id;
}

START_TEST(perf_reads_a_file_with_a_tracepoint_by_name)
{
	struct pr_event_desc sw = {
		.type = PERF_TYPE_TRACEPOINT, .config = tracepoint_id("sched", "sched_switch"),
		.name = "sched:sched_switch"
	};
	struct pr_event_opts evs[2] = { sample_every(&page_faults), sample_every(&sw) };
	static const char *const names[] = { "page-faults", "sched:sched_switch" };

	ck_assert_msg(sw.config, "tracefs is not mounted: mount it on /sys/kernel/tracing");
	/* A tracepoint samples every hit unless told otherwise. */
	evs[1].period = 0;
	check_file(evs, 2, false, names, "multiev-tracepoint");
}
END_TEST

static Suite *multiev_suite(void)
{
	Suite *s = suite_create("multiev-live");
	TCase *tc = tcase_create("events");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, page_fault_and_switch_samples_each_go_to_their_event);
	tcase_add_test(tc, a_read_group_puts_the_groups_counts_on_every_sample);
	tcase_add_test(tc, a_system_wide_read_group_puts_the_groups_counts_on_every_sample);
	tcase_add_test(tc, stat_workloads_faults_and_switches_go_to_their_events);
	tcase_add_test(tc, a_launched_commands_read_group_counts_from_its_exec);
	tcase_add_test(tc, perf_reads_a_file_of_three_software_events_by_name);
	tcase_add_test(tc, perf_reads_a_file_with_a_read_group_by_name);
	tcase_add_test(tc, perf_reads_a_file_with_a_tracepoint_by_name);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(multiev_suite());
}
