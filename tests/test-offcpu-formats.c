/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Off-CPU and wall-clock profiles in every format: one thread's run made
 * of records, as the kernel would give them, with CPU samples of one
 * stack and two waits of another (blocked 5 ms, then preempted 2 ms);
 * each file says so in nanoseconds, the waits under their pseudo-frames.
 */
#include <check.h>
#include <errno.h>
#include <linux/perf_event.h>

#include "checkmain.h"
#include "profile-fixture.h"
#include "pprof-decode.h"
#include "wall-run.h"

/* A CPU profile of the run's CPU samples alone. */
static struct pr_profile *cpu_profile(void)
{
	PR_OPTS(pr_profile_opts, po, .freq = 1000, .period_is_ns = true);
	struct pr_profile *p = pr_profile_new(&po);

	ck_assert_ptr_nonnull(p);
	cpu_sample(p, 1 * MS);
	return p;
}

START_TEST(folded_lines_are_nanoseconds_with_the_wait_as_the_leaf)
{
	struct pr_profile *p = the_run(PR_PROFILE_WALL, false);
	char *text = write_out(p, PR_FORMAT_FOLDED, NULL, NULL);

	ck_assert_str_eq(text, "app;main;run;emit;[off-cpu: blocked] 5000000\n"
			       "app;main;run;emit;[off-cpu: preempted] 2000000\n"
			       "app;main;run;leaf 4000000\n");
	free(text);
	pr_profile_free(p);
	p = the_run(PR_PROFILE_OFF_CPU, false);
	text = write_out(p, PR_FORMAT_FOLDED, NULL, NULL);
	ck_assert_str_eq(text, "app;main;run;emit;[off-cpu: blocked] 5000000\n"
			       "app;main;run;emit;[off-cpu: preempted] 2000000\n");
	free(text);
	pr_profile_free(p);
}
END_TEST

/* ---- pprof, decoded as go tool pprof would (pprof-decode.h) ---- */

/* The sample types are `types` ("type/unit"), the default `dflt`, and
 * the period's type `period`. */
static void assert_types(const Perftools__Profiles__Profile *m, const char *const *types,
			 size_t n, const char *dflt, const char *period)
{
	ck_assert_uint_eq(m->n_sample_type, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(type_of(m, i), types[i]);
	ck_assert_str_eq(str(m, m->default_sample_type), dflt);
	ck_assert_str_eq(str(m, m->period_type->type), period);
	ck_assert_str_eq(str(m, m->period_type->unit), "nanoseconds");
}

/* The wait of `kind` is one sample, value `at` its `ns`, labelled. */
static const Perftools__Profiles__Sample *assert_wait(const Perftools__Profiles__Profile *m,
						      const char *kind, size_t at, int64_t ns)
{
	char leaf[64];
	const Perftools__Profiles__Sample *s;

	snprintf(leaf, sizeof(leaf), "[off-cpu: %s]", kind);
	s = sample_of(m, leaf);
	ck_assert_int_eq(s->value[0], 1);
	ck_assert_int_eq(s->value[at], ns);
	ck_assert_str_eq(label_of(m, s, "wait"), kind);
	ck_assert_str_eq(label_of(m, s, "process"), "app");
	return s;
}

START_TEST(pprof_wall_has_cpu_off_cpu_and_wall_time_and_the_wait_label)
{
	struct pr_profile *p = the_run(PR_PROFILE_WALL, false);
	Perftools__Profiles__Profile *m = read_pprof(p);
	const Perftools__Profiles__Sample *s;
	const Perftools__Profiles__Location *loc;

	assert_types(m, (const char *const[]){ "samples/count", "cpu/nanoseconds",
					       "off_cpu/nanoseconds", "wall/nanoseconds" },
		     4, "wall", "cpu");
	ck_assert_int_eq(m->period, 1000000);
	ck_assert_uint_eq(m->n_sample, 3);

	s = sample_of(m, "leaf");
	ck_assert_uint_eq(s->n_value, 4);
	ck_assert_int_eq(s->value[0], 4);
	ck_assert_int_eq(s->value[1], 4 * MS);
	ck_assert_int_eq(s->value[2], 0);
	ck_assert_int_eq(s->value[3], 4 * MS);
	ck_assert_ptr_null(label_of(m, s, "wait"));
	ck_assert_str_eq(label_of(m, s, "thread"), "app");

	s = assert_wait(m, "blocked", 2, 5 * MS);
	ck_assert_int_eq(s->value[1], 0);
	ck_assert_int_eq(s->value[3], 5 * MS);
	/* The wait's frames under its pseudo-frame are the sample's. */
	ck_assert_uint_eq(s->n_location_id, 4);
	/* The pseudo-frame is no code: no mapping, no address. */
	loc = m->location[s->location_id[0] - 1];
	ck_assert_uint_eq(loc->mapping_id, 0);
	ck_assert_uint_eq(loc->address, 0);

	s = assert_wait(m, "preempted", 2, 2 * MS);
	ck_assert_int_eq(s->value[3], 2 * MS);
	perftools__profiles__profile__free_unpacked(m, NULL);
	pr_profile_free(p);
}
END_TEST

/* The run's two waits, alone, counted and in nanoseconds, every one
 * counted (period 1): an off-CPU profile. */
static void assert_off_cpu(const Perftools__Profiles__Profile *m)
{
	assert_types(m, (const char *const[]){ "samples/count", "off_cpu/nanoseconds" }, 2,
		     "off_cpu", "off_cpu");
	ck_assert_int_eq(m->period, 1);
	ck_assert_uint_eq(m->n_sample, 2);
	assert_wait(m, "blocked", 1, 5 * MS);
	assert_wait(m, "preempted", 1, 2 * MS);
}

START_TEST(pprof_off_cpu_has_the_count_and_the_off_cpu_time)
{
	struct pr_profile *p = the_run(PR_PROFILE_OFF_CPU, false);
	Perftools__Profiles__Profile *m = read_pprof(p);

	assert_off_cpu(m);
	perftools__profiles__profile__free_unpacked(m, NULL);
	pr_profile_free(p);
}
END_TEST

START_TEST(pprof_cpu_keeps_its_two_types_and_no_wait_strings)
{
	struct pr_profile *p = cpu_profile();
	Perftools__Profiles__Profile *m;

	cpu_sample(p, 2 * MS);
	m = read_pprof(p);
	assert_types(m, (const char *const[]){ "samples/count", "cpu/nanoseconds" }, 2, "cpu",
		     "cpu");
	ck_assert_int_eq(m->sample[0]->value[1], 2 * MS);
	for (size_t i = 0; i < m->n_string_table; i++)
		ck_assert_str_ne(m->string_table[i], "wait");
	perftools__profiles__profile__free_unpacked(m, NULL);
	pr_profile_free(p);
}
END_TEST

/* ---- a part of a profile, as Pyroscope files it ---- */

START_TEST(pprof_parts_of_a_wall_profile_split_its_time_by_kind)
{
	struct pr_profile *p = the_run(PR_PROFILE_WALL, false);
	Perftools__Profiles__Profile *m;
	const Perftools__Profiles__Sample *s;

	ck_assert(pr_profile_has_part(p, PR_PART_ON_CPU));
	ck_assert(pr_profile_has_part(p, PR_PART_OFF_CPU));
	ck_assert(pr_profile_has_part(p, PR_PART_WALL));
	ck_assert_int_eq(pr_profile_set_time(p, 1700000000u * 1000000000ull, 12 * MS), 0);
	/* The CPU samples alone, as a CPU profile has them. */
	m = read_pprof_part(p, PR_PART_ON_CPU);
	assert_types(m, (const char *const[]){ "samples/count", "cpu/nanoseconds" }, 2, "cpu",
		     "cpu");
	ck_assert_int_eq(m->period, 1000000);
	ck_assert_uint_eq(m->n_sample, 1);
	s = sample_of(m, "leaf");
	ck_assert_int_eq(s->value[0], 4);
	ck_assert_int_eq(s->value[1], 4 * MS);
	ck_assert_ptr_null(label_of(m, s, "wait"));
	perftools__profiles__profile__free_unpacked(m, NULL);
	/* The waits alone, as an off-CPU profile has them. */
	m = read_pprof_part(p, PR_PART_OFF_CPU);
	assert_off_cpu(m);
	perftools__profiles__profile__free_unpacked(m, NULL);
	/* Every stack in wall time alone. */
	m = read_pprof_part(p, PR_PART_WALL);
	assert_types(m, (const char *const[]){ "wall/nanoseconds" }, 1, "wall", "wall");
	ck_assert_uint_eq(m->n_sample, 3);
	ck_assert_int_eq(sample_of(m, "leaf")->value[0], 4 * MS);
	ck_assert_int_eq(sample_of(m, "[off-cpu: blocked]")->value[0], 5 * MS);
	ck_assert_int_eq(sample_of(m, "[off-cpu: preempted]")->value[0], 2 * MS);
	/* Each part is the window's: its time and duration. */
	ck_assert_int_eq(m->time_nanos, 1700000000u * 1000000000ll);
	ck_assert_int_eq(m->duration_nanos, 12 * MS);
	perftools__profiles__profile__free_unpacked(m, NULL);
	pr_profile_free(p);
}
END_TEST

START_TEST(pprof_parts_a_profile_does_not_have_are_refused)
{
	struct pr_profile *p = the_run(PR_PROFILE_OFF_CPU, false);
	struct pr_profile *c = cpu_profile();
	PR_OPTS(pr_profile_write_opts, o, .part = PR_PART_ON_CPU);
	Perftools__Profiles__Profile *m, *whole;
	FILE *f = fopen("/dev/null", "w");

	ck_assert(!pr_profile_has_part(p, PR_PART_ON_CPU));
	ck_assert(!pr_profile_has_part(p, PR_PART_WALL));
	ck_assert(!pr_profile_has_part(c, PR_PART_OFF_CPU));
	ck_assert(!pr_profile_has_part(c, PR_PART_MAX));
	ck_assert(!pr_profile_has_part(NULL, PR_PART_ALL));
	ck_assert_int_eq(pr_profile_write(p, PR_FORMAT_PPROF, f, &o), -EINVAL);
	/* A part is pprof's only. */
	o.part = PR_PART_ALL + PR_PART_ON_CPU;
	ck_assert_int_eq(pr_profile_write(c, PR_FORMAT_FOLDED, f, &o), -EINVAL);
	fclose(f);
	/* An off-CPU profile's off-CPU part is the whole of it. */
	m = read_pprof_part(p, PR_PART_OFF_CPU);
	whole = read_pprof(p);
	ck_assert_uint_eq(m->n_sample, whole->n_sample);
	ck_assert_uint_eq(m->n_sample_type, whole->n_sample_type);
	ck_assert_int_eq(m->period, whole->period);
	perftools__profiles__profile__free_unpacked(m, NULL);
	perftools__profiles__profile__free_unpacked(whole, NULL);
	pr_profile_free(c);
	pr_profile_free(p);
}
END_TEST

/* ---- speedscope ---- */

/* The run written in `fmt` holds `want`. */
static void written_has(enum pr_profile_mode mode, bool timeline, enum pr_profile_format fmt,
			const char *want)
{
	struct pr_profile *p = the_run(mode, timeline);
	char *text = write_out(p, fmt, NULL, NULL);

	ck_assert_msg(strstr(text, want), "no\n%s\nin\n%s", want, text);
	free(text);
	pr_profile_free(p);
}

START_TEST(speedscope_lists_the_run_in_time_order_with_runs_merged)
{
	/* Frames numbered as first seen, leaf first: leaf 0, run 1, main 2,
	 * then emit 3 and the pseudo-frames (named functions all). */
	written_has(PR_PROFILE_WALL, true, PR_FORMAT_SPEEDSCOPE,
		    "\"frames\":[\n{\"name\":\"leaf\"},\n{\"name\":\"run\"},\n"
		    "{\"name\":\"main\"},\n{\"name\":\"emit\"},\n"
		    "{\"name\":\"[off-cpu: blocked]\"},\n{\"name\":\"[off-cpu: preempted]\"}");
	/* Two CPU samples merged, the blocked wait, a CPU sample, the
	 * preempted wait, a CPU sample: as they happened. */
	written_has(PR_PROFILE_WALL, true, PR_FORMAT_SPEEDSCOPE,
		    "\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":11000000,\n"
		    "\"samples\":[[2,1,0],\n[2,1,3,4],\n[2,1,0],\n[2,1,3,5],\n[2,1,0]],\n"
		    "\"weights\":[2000000,5000000,1000000,2000000,1000000]}");
}
END_TEST

START_TEST(speedscope_without_a_timeline_lists_each_stack_once_in_ns)
{
	written_has(PR_PROFILE_OFF_CPU, false, PR_FORMAT_SPEEDSCOPE,
		    "\"endValue\":7000000,\n\"samples\":[[2,1,0,3],\n[2,1,0,4]],\n"
		    "\"weights\":[5000000,2000000]}");
}
END_TEST

START_TEST(speedscope_of_a_cpu_profile_with_a_timeline_is_in_time_order_too)
{
	PR_OPTS(pr_profile_opts, po, .freq = 1000, .timeline = true);
	struct pr_profile *p = pr_profile_new(&po);
	char *text;

	ck_assert_ptr_nonnull(p);
	cpu_sample(p, 1 * MS);
	cpu_sample(p, 2 * MS);
	cpu_sample_of(p, WAIT, 3 * MS);
	cpu_sample(p, 4 * MS);
	text = write_out(p, PR_FORMAT_SPEEDSCOPE, NULL, NULL);
	ck_assert_msg(strstr(text, "\"endValue\":4000000,\n\"samples\":[[2,1,0],\n[2,1,3],\n[2,1,0]],"
				   "\n\"weights\":[2000000,1000000,1000000]}"), "%s", text);
	free(text);
	pr_profile_free(p);
}
END_TEST

/* ---- the SVG flame graph ---- */

/* The fill of the frame whose tooltip begins `title`, as r, g, b. */
static void fill_of(const char *svg, const char *title, int rgb[3])
{
	const char *t = strstr(svg, title), *f;

	ck_assert_msg(t, "no %s in %s", title, svg);
	f = strstr(t, "fill=\"rgb(");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(sscanf(f, "fill=\"rgb(%d,%d,%d)", &rgb[0], &rgb[1], &rgb[2]), 3);
}

/* Blue: more blue than red and green, and plainly so. */
static bool is_blue(const int rgb[3])
{
	return rgb[2] > rgb[0] + 60 && rgb[2] > rgb[1] + 20;
}

START_TEST(svg_draws_waiting_frames_blue_with_times_in_the_tooltips)
{
	struct pr_profile *p = cpu_profile();
	char *svg = write_out(p, PR_FORMAT_SVG, NULL, NULL);
	int emit[3], leaf[3], blocked[3], preempted[3], cpu_fill_of_leaf[3];

	fill_of(svg, "<title>leaf (", cpu_fill_of_leaf);
	free(svg);
	pr_profile_free(p);
	p = the_run(PR_PROFILE_WALL, false);
	svg = write_out(p, PR_FORMAT_SVG, NULL, NULL);

	/* Times, in a unit that suits them, and the share off the CPU. */
	ck_assert_msg(strstr(svg, "<title>emit (7.00 ms, 63.64%, 100.0% off-CPU)</title>"), "%s",
		      svg);
	ck_assert_msg(strstr(svg, "<title>leaf (4.00 ms, 36.36%)</title>"), "%s", svg);
	ck_assert_msg(strstr(svg, "<title>all (11.0 ms, 100.00%, 63.6% off-CPU)</title>"), "%s",
		      svg);
	ck_assert_ptr_null(strstr(svg, " sample,"));
	ck_assert_ptr_null(strstr(svg, " samples,"));
	ck_assert_msg(strstr(svg, ">11.0 ms wall-clock: 4.00 ms on the CPU, 7.00 ms off it"
				  "</text>"), "%s", svg);
	/* Mostly waiting: blue; on the CPU: warm, as in a CPU profile. */
	fill_of(svg, "<title>emit (", emit);
	fill_of(svg, "<title>leaf (", leaf);
	ck_assert_msg(is_blue(emit), "emit is rgb(%d,%d,%d)", emit[0], emit[1], emit[2]);
	ck_assert_msg(!is_blue(leaf), "leaf is rgb(%d,%d,%d)", leaf[0], leaf[1], leaf[2]);
	ck_assert_mem_eq(leaf, cpu_fill_of_leaf, sizeof(leaf));
	/* The two waits: cool, and not the same colour. */
	fill_of(svg, "<title>[off-cpu: blocked] (", blocked);
	fill_of(svg, "<title>[off-cpu: preempted] (", preempted);
	ck_assert(blocked[2] > blocked[0] && preempted[2] > preempted[0]);
	ck_assert(abs(blocked[0] - preempted[0]) + abs(blocked[1] - preempted[1]) > 100);
	/* And the legend says what blue is. */
	ck_assert_ptr_nonnull(strstr(svg, ">blue: mostly off the CPU</text>"));
	ck_assert_ptr_nonnull(strstr(svg, ">preempted</text>"));
	free(svg);
	pr_profile_free(p);

	p = the_run(PR_PROFILE_OFF_CPU, false);
	ck_assert_int_eq(pr_profile_set_time(p, 0, 12 * MS), 0);
	svg = write_out(p, PR_FORMAT_SVG, NULL, NULL);
	ck_assert_msg(strstr(svg, ">7.00 ms off the CPU (a 12.0 ms run)</text>"), "%s", svg);
	ck_assert_msg(strstr(svg, "<title>[off-cpu: preempted] (2.00 ms, 28.57%)</title>"), "%s",
		      svg);
	free(svg);
	pr_profile_free(p);
}
END_TEST

/* The fill of the legend's swatch named `name`, as r, g, b. */
static void swatch_of(const char *svg, const char *name, int rgb[3])
{
	char want[128];
	const char *t, *f = NULL;

	snprintf(want, sizeof(want), "class=\"ctl-off\">%s</text>", name);
	t = strstr(svg, want);
	ck_assert_msg(t, "no swatch %s", name);
	/* The swatch's rect is just before its name. */
	for (const char *c = svg; (c = strstr(c, "fill=\"rgb(")) && c < t; c++)
		f = c;
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(sscanf(f, "fill=\"rgb(%d,%d,%d)", &rgb[0], &rgb[1], &rgb[2]), 3);
}

static int distance(const int a[3], const int b[3])
{
	return abs(a[0] - b[0]) + abs(a[1] - b[1]) + abs(a[2] - b[2]);
}

START_TEST(svg_kernel_frames_and_the_legend_are_not_the_blue_of_waiting)
{
	static const char *const kernel_stacks[][3] = {
		{ "main", "run", "k:ffffffff81000010" }, { "main", "run", "k:ffffffff81234560" },
		{ "main", "run", "k:ffffffff81fedcb0" }, { "main", "run", "k:ffffffffa0001230" },
	};
	PR_OPTS(pr_profile_opts, po, .freq = 1000, .mode = PR_PROFILE_WALL, .period_is_ns = true);
	PR_OPTS(pr_profile_write_opts, wo, .annotate = true);
	struct pr_profile *p = pr_profile_new(&po);
	int kernel[3], off[3], emit[3];
	const char *g;
	char *svg;
	size_t kernel_frames = 0;

	/* Kernel frames on the CPU, at addresses nothing names: each its
	 * own label, so its own place in the palette; then a wait. */
	ck_assert_ptr_nonnull(p);
	for (size_t i = 0; i < PR_ARRAY_SIZE(kernel_stacks); i++)
		cpu_sample_of(p, kernel_stacks[i], (1 + i) * MS);
	wait(p, 5 * MS, 20 * MS, false);
	ck_assert_int_eq(pr_profile_end(p, 21 * MS), 0);
	/* Marked, kernel frames are told by their _[k]. */
	svg = write_out(p, PR_FORMAT_SVG, &wo, NULL);
	swatch_of(svg, "kernel", kernel);
	swatch_of(svg, "blue: mostly off the CPU", off);
	fill_of(svg, "<title>emit", emit);
	ck_assert_msg(is_blue(off) && is_blue(emit), "off-CPU rgb(%d,%d,%d), emit rgb(%d,%d,%d)",
		      off[0], off[1], off[2], emit[0], emit[1], emit[2]);
	ck_assert_msg(!is_blue(kernel) && distance(kernel, off) > 150,
		      "kernel's swatch rgb(%d,%d,%d) is near off-CPU's rgb(%d,%d,%d)", kernel[0],
		      kernel[1], kernel[2], off[0], off[1], off[2]);
	/* Every kernel frame: the kernel swatch's hue, not blue. */
	for (g = svg; (g = strstr(g, "<title>")); g++) {
		int rgb[3];
		const char *f = strstr(g, "fill=\"rgb(");
		const char *end = strstr(g, "</title>"), *k = strstr(g, "_[k] (");

		if (!k || k > end)
			continue;
		kernel_frames++;
		ck_assert_int_eq(sscanf(f, "fill=\"rgb(%d,%d,%d)", &rgb[0], &rgb[1], &rgb[2]), 3);
		ck_assert_msg(!is_blue(rgb) && distance(rgb, off) > 100 && distance(rgb, emit) > 100,
			      "kernel frame rgb(%d,%d,%d): %.60s", rgb[0], rgb[1], rgb[2], g);
	}
	ck_assert_uint_eq(kernel_frames, PR_ARRAY_SIZE(kernel_stacks));
	free(svg);
	pr_profile_free(p);
}
END_TEST

START_TEST(a_cpu_svg_has_no_off_cpu_legend)
{
	struct pr_profile *p = cpu_profile();
	char *svg = write_out(p, PR_FORMAT_SVG, NULL, NULL);

	ck_assert_msg(strstr(svg, "<title>leaf (1 sample, 100.00%)</title>"), "%s", svg);
	ck_assert_ptr_null(strstr(svg, "off the CPU"));
	free(svg);
	pr_profile_free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("offcpu-formats");
	TCase *tc = tcase_create("formats");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, folded_lines_are_nanoseconds_with_the_wait_as_the_leaf);
	tcase_add_test(tc, pprof_wall_has_cpu_off_cpu_and_wall_time_and_the_wait_label);
	tcase_add_test(tc, pprof_off_cpu_has_the_count_and_the_off_cpu_time);
	tcase_add_test(tc, pprof_cpu_keeps_its_two_types_and_no_wait_strings);
	tcase_add_test(tc, pprof_parts_of_a_wall_profile_split_its_time_by_kind);
	tcase_add_test(tc, pprof_parts_a_profile_does_not_have_are_refused);
	tcase_add_test(tc, speedscope_lists_the_run_in_time_order_with_runs_merged);
	tcase_add_test(tc, speedscope_without_a_timeline_lists_each_stack_once_in_ns);
	tcase_add_test(tc, speedscope_of_a_cpu_profile_with_a_timeline_is_in_time_order_too);
	tcase_add_test(tc, svg_draws_waiting_frames_blue_with_times_in_the_tooltips);
	tcase_add_test(tc, svg_kernel_frames_and_the_legend_are_not_the_blue_of_waiting);
	tcase_add_test(tc, a_cpu_svg_has_no_off_cpu_legend);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
