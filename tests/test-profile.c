/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The profile (prprofile.h): stacks counted once per thread, and the
 * formats written from them.  Frames are JIT code named by a perf map of
 * a made-up process, so every name is the test's own; kernel frames are
 * unnamed addresses.  The live tests (test-live-profile.sh) check the
 * files against the tools that read them.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checkmain.h"
#include "jitdump-writer.h"
#include "profile-fixture.h"
#include "profile/profile.h"

/* A sample of thread `tid` whose stack is `names` ("main" ... leaf last,
 * or "k:ADDR" for a kernel frame). */
static void add_at(struct pr_profile *p, uint32_t tid, const char *comm,
		   const char *const *names, size_t n, uint64_t leaf_off)
{
	struct pr_frame frames[16];
	struct pr_record rec = { .type = PR_RECORD_SAMPLE, .pid = PID, .tid = tid, .time = 1 };
	struct pr_stack st = make_stack(frames, names, n, leaf_off);

	ck_assert_int_eq(pr_profile_add(p, sym, &rec, &st, comm, "app"), 0);
}

static void add(struct pr_profile *p, uint32_t tid, const char *comm, const char *const *names,
		size_t n)
{
	add_at(p, tid, comm, names, n, 0x10);
}

static struct pr_profile *new_profile(uint64_t freq)
{
	PR_OPTS(pr_profile_opts, o, .freq = freq);
	struct pr_profile *p = pr_profile_new(&o);

	ck_assert_ptr_nonnull(p);
	return p;
}

static const char *const A[] = { "main", "run", "leaf" };
static const char *const B[] = { "main", "run", "emit" };

START_TEST(equal_stacks_are_kept_once_with_their_count)
{
	struct pr_profile *p = new_profile(99);
	char *text;

	for (int i = 0; i < 3; i++)
		add(p, PID, "app", A, 3);
	add(p, PID, "app", B, 3);
	ck_assert_uint_eq(pr_profile_samples(p), 4);
	ck_assert_uint_eq(pr_profile_nr_stacks(p), 2);
	text = write_out(p, PR_FORMAT_FOLDED, NULL, NULL);
	/* Root first, sorted, the process name as the root. */
	ck_assert_str_eq(text, "app;main;run;emit 1\n"
			       "app;main;run;leaf 3\n");
	free(text);
	pr_profile_free(p);
}
END_TEST

START_TEST(addresses_that_name_the_same_line_are_one_location)
{
	struct pr_profile *p = new_profile(99);
	char *text;

	/* Three instructions of one function (a perf map gives no lines):
	 * one stack, not three. */
	add_at(p, PID, "app", A, 3, 0x10);
	add_at(p, PID, "app", A, 3, 0x24);
	add_at(p, PID, "app", A, 3, 0x80);
	ck_assert_uint_eq(pr_profile_nr_stacks(p), 1);
	text = write_out(p, PR_FORMAT_FOLDED, NULL, NULL);
	ck_assert_str_eq(text, "app;main;run;leaf 3\n");
	free(text);
	pr_profile_free(p);
}
END_TEST

START_TEST(threads_fold_into_their_process_unless_asked_apart)
{
	PR_OPTS(pr_profile_write_opts, per_thread, .per_thread = true);
	struct pr_profile *p = new_profile(99);
	char *text, want[160];

	add(p, PID, "app", A, 3);
	add(p, PID + 1, "worker", A, 3);
	add(p, PID + 1, "worker", A, 3);
	/* Distinct per thread in memory ... */
	ck_assert_uint_eq(pr_profile_nr_stacks(p), 2);
	/* ... one line per process name in the folded file ... */
	text = write_out(p, PR_FORMAT_FOLDED, NULL, NULL);
	ck_assert_str_eq(text, "app;main;run;leaf 3\n");
	free(text);
	/* ... and a root per thread with --thread-roots. */
	text = write_out(p, PR_FORMAT_FOLDED, &per_thread, NULL);
	snprintf(want, sizeof(want), "app-%u/%u;main;run;leaf 1\nworker-%u/%u;main;run;leaf 2\n",
		 PID, PID, PID, PID + 1);
	ck_assert_str_eq(text, want);
	free(text);
	pr_profile_free(p);
}
END_TEST

START_TEST(kernel_and_jit_frames_are_marked_on_request)
{
	PR_OPTS(pr_profile_write_opts, annotate, .annotate = true);
	static const char *const K[] = { "main", "parse;token", "k:ffffffff81000010" };
	struct pr_profile *p = new_profile(99);
	char *text;

	add(p, PID, "app", K, 3);
	/* A name's ';' would split the frame: it becomes ':'.  (The kernel
	 * frame is named from this machine's /proc/kallsyms, or not.) */
	text = write_out(p, PR_FORMAT_FOLDED, NULL, NULL);
	ck_assert_msg(!strncmp(text, "app;main;parse:token;", 21), "%s", text);
	ck_assert_ptr_null(strstr(text, "_["));
	free(text);
	text = write_out(p, PR_FORMAT_FOLDED, &annotate, NULL);
	ck_assert_msg(!strncmp(text, "app;main_[j];parse:token_[j];", 29), "%s", text);
	ck_assert_msg(strstr(text, "_[k] 1\n"), "%s", text);
	free(text);
	pr_profile_free(p);
}
END_TEST

START_TEST(a_mapping_is_the_range_the_process_mapped_with_its_build_id)
{
	static const uint8_t id[20] = { 0xde, 0xad, 0xbe, 0xef, [19] = 0x01 };
	static const char *const K[] = { "main", "run", "k:ffffffff81000040" };
	static const char *const K2[] = { "main", "emit", "k:ffffffff81000010" };
	struct pr_profile *p = new_profile(99);
	const struct prof_mapping *user, *kernel;

	ck_assert_int_eq(pr_model_set_build_id(model, "//anon", id, sizeof(id)), 0);
	add(p, PID, "app", K, 3);
	add(p, PID, "app", K2, 3);
	ck_assert_uint_eq(p->nr_mappings, 2);
	user = &p->mappings[0];
	kernel = &p->mappings[1];
	if (user->kernel) {
		user = &p->mappings[1];
		kernel = &p->mappings[0];
	}
	/* All of what the MMAP record said, not the addresses sampled. */
	ck_assert(!user->sampled);
	ck_assert_uint_eq(user->start, BASE);
	ck_assert_uint_eq(user->limit, BASE + 0x100000);
	ck_assert_uint_eq(user->offset, 0);
	ck_assert_str_eq(prof_str(p, user->build_id), "deadbeef00000000000000000000000000000001");
	/* The kernel, which no process maps: what its samples hit. */
	ck_assert(kernel->sampled);
	ck_assert_uint_eq(kernel->start, 0xffffffff81000010ull);
	ck_assert_uint_eq(kernel->limit, 0xffffffff81000041ull);
	pr_profile_free(p);
}
END_TEST

START_TEST(the_idle_task_is_swapper_in_every_format)
{
	struct pr_frame f = { .ip = 0xffffffff81000010ull, .dso_ip = 0xffffffff81000010ull,
			      .flags = PR_FRAME_KERNEL };
	struct pr_record rec = { .type = PR_RECORD_SAMPLE, .pid = 0, .tid = 0, .time = 1 };
	struct pr_stack st = { .frames = &f, .nr = 1, .nr_kernel = 1, .end = PR_END_NO_USER };
	struct pr_profile *p = new_profile(99);
	char *text;

	/* As the live command and report name a sample's thread and
	 * process: from the model, which perf's name for thread 0 comes
	 * from. */
	ck_assert_int_eq(pr_profile_add(p, sym, &rec, &st, pr_model_comm(model, rec.tid),
					pr_model_comm(model, rec.pid)), 0);
	text = write_out(p, PR_FORMAT_FOLDED, NULL, NULL);
	ck_assert_msg(!strncmp(text, "swapper;", 8), "%s", text);
	free(text);
	text = write_out(p, PR_FORMAT_SVG, NULL, NULL);
	ck_assert_msg(strstr(text, ">swapper ("), "%s", text);
	free(text);
	text = write_out(p, PR_FORMAT_SPEEDSCOPE, NULL, NULL);
	ck_assert_msg(strstr(text, "\"name\":\"swapper (pid 0, tid 0)\""), "%s", text);
	free(text);
	/* pprof's thread and process labels. */
	ck_assert_uint_eq(p->nr_threads, 1);
	ck_assert_str_eq(prof_str(p, p->threads[0].comm), "swapper");
	ck_assert_str_eq(prof_str(p, p->threads[0].process), "swapper");
	pr_profile_free(p);
}
END_TEST

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *s = hay; (s = strstr(s, needle)); s += strlen(needle))
		n++;
	return n;
}

START_TEST(speedscope_has_a_sampled_profile_per_thread_weighted_in_time)
{
	struct pr_profile *p = new_profile(100);   /* 10 ms a sample */
	char *text, want[80];

	add(p, PID, "app", A, 3);
	add(p, PID, "app", A, 3);
	add(p, PID + 1, "worker", B, 3);
	text = write_out(p, PR_FORMAT_SPEEDSCOPE, NULL, NULL);
	ck_assert_ptr_nonnull(strstr(text, "\"$schema\":\"https://www.speedscope.app/"
					   "file-format-schema.json\""));
	ck_assert_uint_eq(count(text, "\"type\":\"sampled\""), 2);
	snprintf(want, sizeof(want), "\"name\":\"app (pid %u, tid %u)\"", PID, PID);
	ck_assert_ptr_nonnull(strstr(text, want));
	snprintf(want, sizeof(want), "\"name\":\"worker (pid %u, tid %u)\"", PID, PID + 1);
	ck_assert_ptr_nonnull(strstr(text, want));
	ck_assert_ptr_nonnull(strstr(text, "\"unit\":\"nanoseconds\""));
	/* Two samples of one stack: one entry weighing 20 ms. */
	ck_assert_ptr_nonnull(strstr(text, "\"weights\":[20000000]"));
	ck_assert_ptr_nonnull(strstr(text, "\"endValue\":20000000"));
	/* Frames are shared (numbered as first seen: leaf first), and each
	 * sample lists them root first. */
	ck_assert_msg(strstr(text, "\"frames\":[\n{\"name\":\"leaf\"},\n{\"name\":\"run\"},\n"
				   "{\"name\":\"main\"},\n{\"name\":\"emit\"}"), "%s", text);
	ck_assert_msg(strstr(text, "\"samples\":[[2,1,0]]"), "%s", text);
	ck_assert_msg(strstr(text, "\"samples\":[[2,1,3]]"), "%s", text);
	free(text);
	pr_profile_free(p);
}
END_TEST

START_TEST(the_svg_names_every_frame_escaped)
{
	static const char *const E[] = { "main", "emit" };
	struct pr_profile *p = new_profile(99);
	char *text;

	ck_assert_int_eq(pr_profile_tag(p, "env", "a<b"), 0);
	add(p, PID, "a&b", E, 2);
	text = write_out(p, PR_FORMAT_SVG, NULL, NULL);
	ck_assert_ptr_nonnull(strstr(text, "<svg"));
	ck_assert_ptr_nonnull(strstr(text, "</svg>"));
	ck_assert_ptr_nonnull(strstr(text, ">main ("));
	ck_assert_ptr_nonnull(strstr(text, ">emit ("));
	ck_assert_ptr_null(strstr(text, "a&b"));
	free(text);
	pr_profile_free(p);
}
END_TEST

/* The graph's numbers are printf's, ties included: 3 samples of 800 are
 * 0.375 %, which "%.2f" rounds to even, "0.38". */
START_TEST(the_svg_numbers_are_printfs)
{
	static const char *const E[] = { "main", "emit" };
	struct pr_profile *p = new_profile(99);
	char *text, want[64];

	for (int i = 0; i < 797; i++)
		add(p, PID, "app", A, 3);
	for (int i = 0; i < 3; i++)
		add(p, PID, "app", E, 2);
	text = write_out(p, PR_FORMAT_SVG, NULL, NULL);
	ck_assert_msg(strstr(text, ">emit (3 samples, 0.38%)<"), "%s", text);
	snprintf(want, sizeof(want), ">leaf (797 samples, %.2f%%)<", 100.0 * 797 / 800);
	ck_assert_msg(strstr(text, want), "%s not in %s", want, text);
	ck_assert_ptr_nonnull(strstr(text, ">all (800 samples, 100.00%)<"));
	free(text);
	pr_profile_free(p);
}
END_TEST

START_TEST(pprof_is_gzipped)
{
	struct pr_profile *p = new_profile(99);
	unsigned char *bin;
	size_t len;

	add(p, PID, "app", A, 3);
	bin = (unsigned char *)write_out(p, PR_FORMAT_PPROF, NULL, &len);
	ck_assert_uint_gt(len, 18);
	ck_assert_uint_eq(bin[0], 0x1f);
	ck_assert_uint_eq(bin[1], 0x8b);
	free(bin);
	pr_profile_free(p);
}
END_TEST

START_TEST(formats_are_known_by_name_and_by_extension)
{
	ck_assert_int_eq(pr_profile_format_by_name("svg"), PR_FORMAT_SVG);
	ck_assert_int_eq(pr_profile_format_by_name("pprof"), PR_FORMAT_PPROF);
	ck_assert_int_eq(pr_profile_format_by_name("folded"), PR_FORMAT_FOLDED);
	ck_assert_int_eq(pr_profile_format_by_name("speedscope"), PR_FORMAT_SPEEDSCOPE);
	ck_assert_int_eq(pr_profile_format_by_name("flame"), -EINVAL);
	ck_assert_int_eq(pr_profile_format_by_path("out/app.pb.gz"), PR_FORMAT_PPROF);
	ck_assert_int_eq(pr_profile_format_by_path("app.pprof"), PR_FORMAT_PPROF);
	ck_assert_int_eq(pr_profile_format_by_path("app.svg"), PR_FORMAT_SVG);
	ck_assert_int_eq(pr_profile_format_by_path("app.folded"), PR_FORMAT_FOLDED);
	ck_assert_int_eq(pr_profile_format_by_path("app.collapsed"), PR_FORMAT_FOLDED);
	ck_assert_int_eq(pr_profile_format_by_path("app.txt"), -EINVAL);
	ck_assert_int_eq(pr_profile_format_by_path("app.speedscope.json"),
			 PR_FORMAT_SPEEDSCOPE);
	ck_assert_int_eq(pr_profile_format_by_path("app.data"), -EINVAL);
	ck_assert_str_eq(pr_profile_format_ext(PR_FORMAT_PPROF), ".pb.gz");
	ck_assert_ptr_null(pr_profile_format_name(PR_FORMAT_MAX));
}
END_TEST

START_TEST(a_failed_write_is_reported_with_its_errno)
{
	struct pr_profile *p = new_profile(99);
	FILE *full = fopen("/dev/full", "w");

	ck_assert_ptr_nonnull(full);
	add(p, PID, "app", A, 3);
	/* /dev/full refuses every write with ENOSPC: the return says so
	 * itself, not through errno. */
	for (int f = 0; f < PR_FORMAT_MAX; f++) {
		errno = 0;
		ck_assert_int_eq(pr_profile_write(p, (enum pr_profile_format)f, full, NULL),
				 -ENOSPC);
		clearerr(full);
	}
	fclose(full);
	ck_assert_int_eq(pr_profile_write(p, PR_FORMAT_MAX, stdout, NULL), -EINVAL);
	ck_assert_int_eq(pr_profile_tag(p, "", "x"), -EINVAL);
	pr_profile_free(p);
}
END_TEST

START_TEST(an_empty_profile_writes_valid_files)
{
	struct pr_profile *p = new_profile(0);

	for (int f = 0; f < PR_FORMAT_MAX; f++) {
		size_t len;
		char *out = write_out(p, (enum pr_profile_format)f, NULL, &len);

		if (f == PR_FORMAT_FOLDED)
			ck_assert_uint_eq(len, 0);
		else
			ck_assert_uint_gt(len, 0);
		free(out);
	}
	pr_profile_free(p);
}
END_TEST

/* ---- JIT code, per process ---- */

/* A one-frame sample of process `pid` (named `process`) at `ip` in its
 * anonymous memory, named through `s`; placed as the unwinder places it,
 * with the model's number for the process. */
static void add_jit(struct pr_profile *p, struct pr_symbolizer *s, uint32_t pid,
		    const char *process, uint64_t ip)
{
	const struct pr_map *m = pr__model_find(model, pid, ip);
	struct pr_frame f = { .ip = ip, .dso_ip = ip };
	struct pr_record rec = { .type = PR_RECORD_SAMPLE, .pid = pid, .tid = pid, .time = 1 };
	struct pr_stack st = { .frames = &f, .nr = 1, .end = PR_END_NO_MAPPING };

	ck_assert_ptr_nonnull(m);
	f.dso = m->dso;
	f.map_start = m->start;
	f.map_end = m->end;
	f.map_pgoff = m->pgoff;
	f.proc_serial = pr__model_proc(model, pid, false)->serial;
	ck_assert_int_eq(pr_profile_add(p, s, &rec, &st, process, process), 0);
}

static void write_perf_map(const char *path, const char *mode, uint64_t start,
			   const char *name)
{
	FILE *f = fopen(path, mode);

	ck_assert_ptr_nonnull(f);
	fprintf(f, "%llx 100 %s\n", (unsigned long long)start, name);
	ck_assert_int_eq(fclose(f), 0);
}

/* Every process's anonymous memory is one "//anon" file to the model; two
 * JITs putting code at the same address still run their own functions,
 * each named by its own process's perf map. */
START_TEST(jit_code_at_one_address_in_two_processes_keeps_each_ones_name)
{
	const uint32_t other = PID + 7;
	struct pr_record r = mmap2(other, BASE, 0x100000, 0, "//anon");
	const uint64_t ip = BASE + 0x1010;           /* "main" in PID's map */
	struct pr_profile *p = new_profile(99);
	char path[64], *text;

	snprintf(path, sizeof(path), "/tmp/perf-%u.map", other);
	write_perf_map(path, "w", BASE + 0x1000, "other_main");
	ck_assert_int_eq(pr_model_apply(model, &r), 0);
	ck_assert_ptr_eq(pr__model_find(model, PID, ip)->dso, pr__model_find(model, other, ip)->dso);
	add_jit(p, sym, PID, "app", ip);
	add_jit(p, sym, other, "other", ip);
	add_jit(p, sym, PID, "app", ip);
	add_jit(p, sym, other, "other", ip);
	add_jit(p, sym, other, "other", ip);
	text = write_out(p, PR_FORMAT_FOLDED, NULL, NULL);
	ck_assert_str_eq(text, "app;main 2\n"
			       "other;other_main 3\n");
	free(text);
	/* Each process's code is in its own perf map's mapping. */
	ck_assert_uint_eq(p->nr_mappings, 2);
	ck_assert_uint_ne(p->mappings[0].name, p->mappings[1].name);
	pr_profile_free(p);
	unlink(path);
}
END_TEST

/* A pid used again is another process, with a perf map of its own: the
 * first one's names, read already, are not the second one's. */
START_TEST(a_reused_pid_is_named_by_the_new_processs_perf_map)
{
	const uint32_t pid = PID + 8;
	struct pr_record r = mmap2(pid, BASE, 0x100000, 0, "//anon");
	struct pr_record exit = { .type = PR_RECORD_EXIT, .pid = pid, .tid = pid };
	const uint64_t ip = BASE + 0x1010;
	struct pr_profile *p = new_profile(99);
	char path[64], *text;

	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	write_perf_map(path, "w", BASE + 0x1000, "first");
	ck_assert_int_eq(pr_model_apply(model, &r), 0);
	add_jit(p, sym, pid, "old", ip);
	ck_assert_int_eq(pr_model_apply(model, &exit), 0);
	write_perf_map(path, "w", BASE + 0x1000, "second");
	ck_assert_int_eq(pr_model_apply(model, &r), 0);
	add_jit(p, sym, pid, "new", ip);
	text = write_out(p, PR_FORMAT_FOLDED, NULL, NULL);
	ck_assert_str_eq(text, "new;second 1\n"
			       "old;first 1\n");
	free(text);
	pr_profile_free(p);
	unlink(path);
}
END_TEST

/* A JIT writes its perf map as it compiles: an address the map did not
 * name when first sampled gets its name once the map has it, however
 * many samples of it came before. */
START_TEST(a_perf_map_entry_written_after_a_miss_names_later_samples)
{
	PR_OPTS(pr_symbolizer_opts, so, .live = true);
	const uint32_t self = (uint32_t)getpid();
	struct pr_record r = mmap2(self, BASE, 0x100000, 0, "//anon");
	const uint64_t ip = BASE + 0x2010;
	struct pr_profile *p = new_profile(99);
	struct pr_symbolizer *live;
	char path[64], want[128], *text;

	snprintf(path, sizeof(path), "/tmp/perf-%u.map", self);
	write_perf_map(path, "w", BASE + 0x1000, "early");
	ck_assert_int_eq(pr_model_apply(model, &r), 0);
	live = pr_symbolizer_new(model, &so);
	ck_assert_ptr_nonnull(live);
	/* Every miss reads the map again, not at most once a second: the
	 * test must not wait on a clock. */
	live->perf_map_reread_ns = 0;
	add_jit(p, live, self, "jit", ip);
	add_jit(p, live, self, "jit", ip);
	write_perf_map(path, "a", BASE + 0x2000, "later");
	add_jit(p, live, self, "jit", ip);
	add_jit(p, live, self, "jit", ip);
	add_jit(p, live, self, "jit", ip);
	text = write_out(p, PR_FORMAT_FOLDED, NULL, NULL);
	snprintf(want, sizeof(want), "jit;[perf-%u.map] 2\njit;later 3\n", self);
	ck_assert_str_eq(text, want);
	free(text);
	pr_profile_free(p);
	pr_symbolizer_free(live);
	unlink(path);
}
END_TEST

/* The same within the second the map is read again at the most: a map
 * that has changed since it was read is read again at the next miss
 * PERF_MAP_CHECK_NS later (CPython writes a function's trampoline entry
 * as it first runs it; the wait for the next read left 21 % of a
 * -X perf run unnamed once). */
START_TEST(a_perf_map_that_grew_is_read_again_without_waiting_for_the_second)
{
	PR_OPTS(pr_symbolizer_opts, so, .live = true);
	const uint32_t self = (uint32_t)getpid();
	struct pr_record r = mmap2(self, BASE, 0x100000, 0, "//anon");
	const uint64_t ip = BASE + 0x2010;
	const struct timespec past_check = { 0, 2 * PERF_MAP_CHECK_NS };
	struct pr_profile *p = new_profile(99);
	struct pr_symbolizer *live;
	char path[64], want[128], *text;

	snprintf(path, sizeof(path), "/tmp/perf-%u.map", self);
	write_perf_map(path, "w", BASE + 0x1000, "early");
	ck_assert_int_eq(pr_model_apply(model, &r), 0);
	live = pr_symbolizer_new(model, &so);
	ck_assert_ptr_nonnull(live);
	/* Only a change makes it read again here, however slow the run. */
	live->perf_map_reread_ns = UINT64_MAX / 2;
	add_jit(p, live, self, "jit", ip);
	nanosleep(&past_check, NULL);
	add_jit(p, live, self, "jit", ip);
	write_perf_map(path, "a", BASE + 0x2000, "later");
	nanosleep(&past_check, NULL);
	add_jit(p, live, self, "jit", ip);
	add_jit(p, live, self, "jit", ip);
	text = write_out(p, PR_FORMAT_FOLDED, NULL, NULL);
	snprintf(want, sizeof(want), "jit;[perf-%u.map] 2\njit;later 2\n", self);
	ck_assert_str_eq(text, want);
	free(text);
	pr_profile_free(p);
	pr_symbolizer_free(live);
	unlink(path);
}
END_TEST

/* node writes its jitdump out only as it exits: JIT code nothing named
 * when sampled is named from it at the end of the run. */
START_TEST(jit_code_its_jitdump_describes_only_at_exit_is_named_at_the_end)
{
	PR_OPTS(pr_symbolizer_opts, so, .live = true);
	const uint32_t self = (uint32_t)getpid();
	struct pr_record r = mmap2(self, BASE, 0x100000, 0, "//anon");
	struct pr_record marker;
	const uint64_t ip = BASE + 0x2010;
	struct pr_profile *p = new_profile(99);
	struct pr_symbolizer *live;
	char dir[] = "/tmp/ds-jitdump-XXXXXX", path[64], want[128], *text;
	struct jdw w;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/jit-%u.dump", dir, self);
	jdw_header(&w, self, false);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(w.buf, 1, w.len, f), w.len);
	ck_assert_int_eq(fflush(f), 0);
	marker = mmap2(self, BASE + 0x200000, 0x1000, 0, path);
	ck_assert_int_eq(pr_model_apply(model, &r), 0);
	ck_assert_int_eq(pr_model_apply(model, &marker), 0);
	live = pr_symbolizer_new(model, &so);
	ck_assert_ptr_nonnull(live);
	add_jit(p, live, self, "node", ip);
	add_jit(p, live, self, "node", ip);
	add_jit(p, live, self, "node", ip + 0x100);
	/* The runtime's buffer, written as it exits. */
	w.len = 0;
	jdw_load(&w, 2, BASE + 0x2000, 0x40, 1, "JS:*late /app.js:1:1", 0xcc);
	ck_assert_uint_eq(fwrite(w.buf, 1, w.len, f), w.len);
	ck_assert_int_eq(fclose(f), 0);
	free(w.buf);
	ck_assert_int_eq(prof__name_jit_late(p, live), 0);
	text = write_out(p, PR_FORMAT_FOLDED, NULL, NULL);
	snprintf(want, sizeof(want), "node;JS:*late /app.js:1:1 2\nnode;[perf-%u.map] 1\n", self);
	ck_assert_str_eq(text, want);
	free(text);
	pr_profile_free(p);
	pr_symbolizer_free(live);
	unlink(path);
	rmdir(dir);
}
END_TEST

static Suite *profile_suite(void)
{
	Suite *s = suite_create("profile");
	TCase *tc = tcase_create("profile");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, equal_stacks_are_kept_once_with_their_count);
	tcase_add_test(tc, addresses_that_name_the_same_line_are_one_location);
	tcase_add_test(tc, threads_fold_into_their_process_unless_asked_apart);
	tcase_add_test(tc, kernel_and_jit_frames_are_marked_on_request);
	tcase_add_test(tc, a_mapping_is_the_range_the_process_mapped_with_its_build_id);
	tcase_add_test(tc, the_idle_task_is_swapper_in_every_format);
	tcase_add_test(tc, speedscope_has_a_sampled_profile_per_thread_weighted_in_time);
	tcase_add_test(tc, the_svg_names_every_frame_escaped);
	tcase_add_test(tc, the_svg_numbers_are_printfs);
	tcase_add_test(tc, pprof_is_gzipped);
	tcase_add_test(tc, formats_are_known_by_name_and_by_extension);
	tcase_add_test(tc, a_failed_write_is_reported_with_its_errno);
	tcase_add_test(tc, an_empty_profile_writes_valid_files);
	tcase_add_test(tc, jit_code_at_one_address_in_two_processes_keeps_each_ones_name);
	tcase_add_test(tc, a_reused_pid_is_named_by_the_new_processs_perf_map);
	tcase_add_test(tc, a_perf_map_entry_written_after_a_miss_names_later_samples);
	tcase_add_test(tc, a_perf_map_that_grew_is_read_again_without_waiting_for_the_second);
	tcase_add_test(tc, jit_code_its_jitdump_describes_only_at_exit_is_named_at_the_end);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(profile_suite());
}
