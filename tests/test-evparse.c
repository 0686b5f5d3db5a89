/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Events by name (capture/evparse.c) and tracefs (capture/tracefs.c).
 * Without an argument: the parser, the names, and finding tracefs in
 * mounts tables the test writes.  With "tracefs" (the live suite):
 * tracepoints of this kernel, against its tracefs id files, mounting
 * tracefs, and pr_event_check() opening events.
 */
#include <check.h>
#include <errno.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture/capture.h"
#include "checkmain.h"
#include "livecheck.h"

/* The last message logged, and how many there were. */
struct seen_log {
	char msg[1024];
	int n;
};

static void keep_log(enum pr_log_level level, const char *msg, void *ctx)
{
	struct seen_log *sl = ctx;

	snprintf(sl->msg, sizeof(sl->msg), "%s", msg);
	sl->n++;
}

/* Options sending the messages to `sl`. */
#define LOG_TO(sl)                                                            \
	(&(struct pr_event_lookup_opts){ .sz = sizeof(struct pr_event_lookup_opts), \
					 .log = keep_log, .log_ctx = (sl) })

static struct pr_event_desc parse_ok(const char *s)
{
	struct seen_log sl = { "", 0 };
	struct pr_event_desc ev;
	int err = pr_event_parse(s, &ev, LOG_TO(&sl));

	ck_assert_msg(err == 0, "'%s': %d (%s)", s, err, sl.msg);
	ck_assert_int_eq(sl.n, 0);
	return ev;
}

/* Parse `s`, expecting `err` and a message containing each of the NULL
 * terminated strings after it. */
static void parse_fails(const char *s, int err, ...)
{
	struct seen_log sl = { "", 0 };
	struct pr_event_desc ev;
	const char *want;
	va_list ap;
	int got = pr_event_parse(s, &ev, LOG_TO(&sl));

	ck_assert_msg(got == err, "'%s': %d, expected %d (%s)", s, got, err, sl.msg);
	ck_assert_msg(sl.n == 1, "'%s': %d messages", s, sl.n);
	va_start(ap, err);
	while ((want = va_arg(ap, const char *)))
		ck_assert_msg(strstr(sl.msg, want), "'%s': message '%s' lacks '%s'", s,
			      sl.msg, want);
	va_end(ap);
}

static void list_fails(const char *s, size_t max, int err, const char *want)
{
	struct seen_log sl = { "", 0 };
	struct pr_event_desc evs[4];
	int got = pr_event_list_parse(s, evs, max, LOG_TO(&sl));

	ck_assert_msg(got == err, "'%s': %d, expected %d (%s)", s, got, err, sl.msg);
	ck_assert_msg(sl.n == 1, "'%s': %d messages", s, sl.n);
	ck_assert_msg(strstr(sl.msg, want), "'%s': message '%s' lacks '%s'", s, sl.msg, want);
}

static void assert_event(const struct pr_event_desc *ev, const char *name, uint32_t type,
			 uint64_t config, bool exclude_user, bool exclude_kernel)
{
	ck_assert_str_eq(ev->name, name);
	ck_assert_uint_eq(ev->type, type);
	ck_assert_uint_eq(ev->config, config);
	ck_assert_int_eq(ev->exclude_user, exclude_user);
	ck_assert_int_eq(ev->exclude_kernel, exclude_kernel);
}

/* perf 6.1's `perf list hw sw` names and aliases, with the kernel's
 * numbers from <linux/perf_event.h>. */
static const struct {
	const char *spelling, *name;
	uint32_t type;
	uint64_t config;
} perf_names[] = {
	{ "cpu-clock", "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "context-switches", "context-switches", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "alignment-faults", "alignment-faults", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", "emulation-faults", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy", "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
	{ "cgroup-switches", "cgroup-switches", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_CGROUP_SWITCHES },
	{ "cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", "cache-references", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", "branches", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", "stalled-cycles-frontend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "idle-cycles-frontend", "stalled-cycles-frontend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", "stalled-cycles-backend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "idle-cycles-backend", "stalled-cycles-backend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
};

START_TEST(perfs_names_and_aliases_parse_to_the_canonical_spelling)
{
	for (size_t i = 0; i < sizeof(perf_names) / sizeof(perf_names[0]); i++) {
		struct pr_event_desc ev = parse_ok(perf_names[i].spelling);

		assert_event(&ev, perf_names[i].name, perf_names[i].type,
			     perf_names[i].config, false, false);
		ck_assert_uint_eq(ev.leader, 0);
	}
	/* Blanks around a name are not part of it. */
	struct pr_event_desc ev = parse_ok("  cs\t");

	ck_assert_str_eq(ev.name, "context-switches");
}
END_TEST

START_TEST(known_names_are_each_canonical_name_once)
{
	size_t n = 0, canonical = 0;

	for (size_t i = 0; i < sizeof(perf_names) / sizeof(perf_names[0]); i++)
		canonical += !strcmp(perf_names[i].spelling, perf_names[i].name);
	for (const char *name; (name = pr_event_known_name(n)); n++) {
		struct pr_event_desc ev = parse_ok(name);

		ck_assert_str_eq(ev.name, name);
		for (size_t j = 0; j < n; j++)
			ck_assert_str_ne(pr_event_known_name(j), name);
	}
	ck_assert_uint_eq(n, canonical);
	ck_assert_ptr_null(pr_event_known_name(n + 1000));
	/* Software first: what a machine without a PMU can count. */
	ck_assert_str_eq(pr_event_known_name(0), "cpu-clock");
}
END_TEST

START_TEST(modifiers_u_and_k_exclude_the_other_mode_and_stay_in_the_name)
{
	struct pr_event_desc ev = parse_ok("faults:u");

	assert_event(&ev, "page-faults:u", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
		     false, true);
	ev = parse_ok("cycles:k");
	assert_event(&ev, "cycles:k", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true, false);
	/* Both modes: as without a modifier, spelt as given. */
	ev = parse_ok("cs:uk");
	assert_event(&ev, "context-switches:uk", PERF_TYPE_SOFTWARE,
		     PERF_COUNT_SW_CONTEXT_SWITCHES, false, false);
	ev = parse_ok("cs:ku");
	assert_event(&ev, "context-switches:ku", PERF_TYPE_SOFTWARE,
		     PERF_COUNT_SW_CONTEXT_SWITCHES, false, false);
}
END_TEST

START_TEST(other_modifiers_are_refused_naming_the_valid_ones)
{
	parse_fails("cycles:p", -EINVAL, "'p'", "cycles:p", ":u", ":k", NULL);
	parse_fails("faults:uh", -EINVAL, "'h'", ":uk", NULL);
	parse_fails("cycles:", -EINVAL, "without a modifier", ":u", NULL);
	parse_fails("cycles:u:k", -EINVAL, "cycles:u:k", NULL);
	parse_fails("task-clock:U", -EINVAL, "'U'", NULL);
	/* A tracepoint's modifier is checked before tracefs is asked. */
	parse_fails("nosuch:event:p", -EINVAL, "'p'", "nosuch:event:p", NULL);
}
END_TEST

START_TEST(unknown_names_suggest_close_known_ones_and_perf_list)
{
	parse_fails("pagefaults", -ENOENT, "unknown event 'pagefaults'",
		    "did you mean 'page-faults'?", "`perf list`", NULL);
	parse_fails("cylces", -ENOENT, "did you mean 'cycles'?", NULL);
	parse_fails("instruction", -ENOENT, "did you mean 'instructions'?", NULL);
	parse_fails("context-switch", -ENOENT, "'context-switches'", NULL);
	/* A misspelt event with a modifier is not taken for a tracepoint. */
	parse_fails("pagefaults:u", -ENOENT, "did you mean 'page-faults'?", NULL);
	parse_fails("branch-miss", -ENOENT, "'branch-misses'", NULL);

	struct seen_log sl = { "", 0 };
	struct pr_event_desc ev;

	ck_assert_int_eq(pr_event_parse("xyzzy", &ev, LOG_TO(&sl)), -ENOENT);
	ck_assert_ptr_null(strstr(sl.msg, "did you mean"));
	ck_assert_ptr_nonnull(strstr(sl.msg, "`perf list`"));
	parse_fails("cpu/cycles/", -ENOENT, "PMU events", NULL);
	/* Without a log callback, only the code. */
	ck_assert_int_eq(pr_event_parse("pagefaults", &ev, NULL), -ENOENT);
}
END_TEST

START_TEST(one_event_is_parsed_not_a_list_or_nothing)
{
	struct pr_event_desc ev;

	parse_fails("cycles,cs", -EINVAL, "one event is expected", NULL);
	parse_fails("{cycles}", -EINVAL, "one event is expected", NULL);
	parse_fails("", -EINVAL, "no event given", NULL);
	parse_fails("   ", -EINVAL, "no event given", NULL);
	ck_assert_int_eq(pr_event_parse(NULL, &ev, NULL), -EINVAL);
	ck_assert_int_eq(pr_event_parse("cs", NULL, NULL), -EINVAL);
}
END_TEST

START_TEST(a_list_with_a_group_gives_each_member_the_groups_leader_and_modifier)
{
	struct pr_event_desc evs[8];
	int n = pr_event_list_parse("cycles,{page-faults,cs}:u,task-clock", evs, 8, NULL);

	ck_assert_int_eq(n, 4);
	assert_event(&evs[0], "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
		     false, false);
	assert_event(&evs[1], "page-faults:u", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
		     false, true);
	assert_event(&evs[2], "context-switches:u", PERF_TYPE_SOFTWARE,
		     PERF_COUNT_SW_CONTEXT_SWITCHES, false, true);
	assert_event(&evs[3], "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK,
		     false, false);
	ck_assert_uint_eq(evs[0].leader, 0);
	ck_assert_uint_eq(evs[1].leader, 1);
	ck_assert_uint_eq(evs[2].leader, 1);
	ck_assert_uint_eq(evs[3].leader, 3);

	/* A group without a modifier, first in the list, with blanks. */
	n = pr_event_list_parse(" {cs , faults} , migrations:k", evs, 8, NULL);
	ck_assert_int_eq(n, 3);
	assert_event(&evs[0], "context-switches", PERF_TYPE_SOFTWARE,
		     PERF_COUNT_SW_CONTEXT_SWITCHES, false, false);
	ck_assert_uint_eq(evs[1].leader, 0);
	assert_event(&evs[2], "cpu-migrations:k", PERF_TYPE_SOFTWARE,
		     PERF_COUNT_SW_CPU_MIGRATIONS, true, false);
	ck_assert_uint_eq(evs[2].leader, 2);

	/* One event alone is a list of one. */
	ck_assert_int_eq(pr_event_list_parse("cpu-clock", evs, 1, NULL), 1);
	ck_assert_uint_eq(evs[0].leader, 0);
}
END_TEST

/* perf adds the group's modes to a member's own: {cycles:k}:u counts
 * both. */
START_TEST(a_members_own_modifier_adds_to_the_groups)
{
	struct pr_event_desc evs[4];

	ck_assert_int_eq(pr_event_list_parse("{cycles:k,instructions}:u", evs, 4, NULL),
			 2);
	assert_event(&evs[0], "cycles:ku", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
		     false, false);
	assert_event(&evs[1], "instructions:u", PERF_TYPE_HARDWARE,
		     PERF_COUNT_HW_INSTRUCTIONS, false, true);
	ck_assert_int_eq(pr_event_list_parse("{cs:k}:k", evs, 4, NULL), 1);
	assert_event(&evs[0], "context-switches:k", PERF_TYPE_SOFTWARE,
		     PERF_COUNT_SW_CONTEXT_SWITCHES, true, false);
}
END_TEST

START_TEST(groups_do_not_nest_and_braces_must_balance)
{
	list_fails("{cycles,{cs}}", 4, -EINVAL, "cannot nest");
	list_fails("{cycles,cs", 4, -EINVAL, "no closing '}'");
	list_fails("cycles}", 4, -EINVAL, "unexpected '}' at character 7");
	list_fails("cycles,cs}", 4, -EINVAL, "unexpected '}'");
	list_fails("cy{cles}", 4, -EINVAL, "unexpected '{' at character 3");
	list_fails("{cycles}cs", 4, -EINVAL, "unexpected 'c' at character 9");
	list_fails("{cycles,cs}:p", 4, -EINVAL, "unknown modifier 'p' in '{cycles,cs}:p'");
	list_fails("{cycles}:u}", 4, -EINVAL, "bad group modifier");
	list_fails("{cycles}:", 4, -EINVAL, "'{cycles}:' ends in ':' without a modifier");
}
END_TEST

START_TEST(empty_items_are_errors_that_say_where)
{
	list_fails("", 4, -EINVAL, "no events given");
	list_fails(" ", 4, -EINVAL, "empty event at character 2");
	list_fails(",cycles", 4, -EINVAL, "empty event at character 1");
	list_fails("cycles,", 4, -EINVAL, "empty event at character 8");
	list_fails("cycles,,cs", 4, -EINVAL, "empty event at character 8 of 'cycles,,cs'");
	list_fails("{}", 4, -EINVAL, "empty event at character 2");
	list_fails("{cycles,}", 4, -EINVAL, "empty event at character 9");
	list_fails("{,cs}:u", 4, -EINVAL, "empty event at character 2");
}
END_TEST

START_TEST(more_events_than_room_is_e2big)
{
	struct pr_event_desc evs[3];

	list_fails("cycles,cs,faults", 2, -E2BIG, "more than 2 events");
	list_fails("{cycles,cs,faults}", 2, -E2BIG, "more than 2 events");
	ck_assert_int_eq(pr_event_list_parse("cycles,cs,faults", evs, 3, NULL), 3);
	ck_assert_int_eq(pr_event_list_parse("cycles", NULL, 0, NULL), -E2BIG);
	ck_assert_int_eq(pr_event_list_parse("cycles", NULL, 1, NULL), -EINVAL);
	ck_assert_int_eq(pr_event_list_parse(NULL, evs, 3, NULL), -EINVAL);
	/* Errors of an event pass through. */
	list_fails("cycles,pagefaults", 3, -ENOENT, "did you mean 'page-faults'?");
}
END_TEST

/* name -> desc -> attr (the one builder) -> desc: the same event. */
static void round_trip(const char *spelling, unsigned int flags, const char *want)
{
	struct pr_event_desc ev = parse_ok(spelling), back;
	PR_OPTS(pr_event_opts, o, .desc = &ev);
	struct perf_event_attr attr;

	ck_assert_int_eq(pr_event_attr(&o, PR_SOURCE_EVENT, flags, &attr), 0);
	ck_assert_int_eq(pr_event_desc_from_attr(&attr, &back), 0);
	assert_event(&back, want, ev.type, ev.config, ev.exclude_user, ev.exclude_kernel);
	ck_assert_uint_eq(back.leader, 0);
}

START_TEST(desc_from_attr_names_what_parsing_gave)
{
	for (size_t i = 0; pr_event_known_name(i); i++) {
		const char *name = pr_event_known_name(i);
		char mod[PR_EVENT_NAME_MAX];

		round_trip(name, PR_ATTR_COUNT, name);
		round_trip(name, 0, name);
		snprintf(mod, sizeof(mod), "%s:u", name);
		round_trip(mod, PR_ATTR_COUNT, mod);
		snprintf(mod, sizeof(mod), "%s:k", name);
		round_trip(mod, PR_ATTR_SHARED_RING, mod);
	}
	round_trip("faults:u", PR_ATTR_COUNT, "page-faults:u");
	/* Both modes is no modifier at all in the attr. */
	round_trip("cs:uk", PR_ATTR_COUNT, "context-switches");
}
END_TEST

START_TEST(desc_from_attr_names_other_events_by_their_numbers)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_RAW,
					.config = 0x1a8 };
	struct pr_event_desc ev;

	ck_assert_int_eq(pr_event_desc_from_attr(&attr, &ev), 0);
	assert_event(&ev, "raw 0x1a8", PERF_TYPE_RAW, 0x1a8, false, false);
	attr.type = PERF_TYPE_HW_CACHE;
	attr.config = 0x10002;
	attr.exclude_kernel = 1;
	ck_assert_int_eq(pr_event_desc_from_attr(&attr, &ev), 0);
	assert_event(&ev, "3:0x10002:u", PERF_TYPE_HW_CACHE, 0x10002, false, true);
	/* A software event the parser does not name. */
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	attr.exclude_kernel = 0;
	ck_assert_int_eq(pr_event_desc_from_attr(&attr, &ev), 0);
	ck_assert_str_eq(ev.name, "1:0xa");
	ck_assert_int_eq(pr_event_desc_from_attr(NULL, &ev), -EINVAL);
	ck_assert_int_eq(pr_event_desc_from_attr(&attr, NULL), -EINVAL);
}
END_TEST

START_TEST(only_the_clocks_count_nanoseconds)
{
	struct pr_event_desc ev = parse_ok("cpu-clock:u");

	ck_assert(pr_event_counts_ns(&ev));
	ev = parse_ok("task-clock");
	ck_assert(pr_event_counts_ns(&ev));
	ev = parse_ok("page-faults");
	ck_assert(!pr_event_counts_ns(&ev));
	ev = parse_ok("cycles");
	ck_assert(!pr_event_counts_ns(&ev));
	ck_assert(!pr_event_counts_ns(NULL));
}
END_TEST

/* ---- finding tracefs in a mounts table ---- */

static char mounts_path[] = "/tmp/test-evparse-mounts-XXXXXX";

static void write_mounts(const char *text)
{
	int fd = mkstemp(mounts_path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void remove_mounts(void)
{
	unlink(mounts_path);
	strcpy(mounts_path, "/tmp/test-evparse-mounts-XXXXXX");
}

/* pr__tracefs_find() over `text` as the mounts table, no directory to
 * try first and no mounting. */
static int find_in(const char *text, char *buf, size_t size, struct seen_log *sl)
{
	static const char *const not_tracefs[] = { "/nonexistent-tracefs", "/tmp" };
	struct pr_tracefs_places pl = { mounts_path, not_tracefs, 2, NULL };
	struct pr_logger lg = { keep_log, sl };
	int err;

	write_mounts(text);
	err = pr__tracefs_find(&pl, buf, size, &lg);
	remove_mounts();
	return err;
}

START_TEST(tracefs_is_found_where_the_mounts_table_says)
{
	struct seen_log sl = { "", 0 };
	char buf[256];

	ck_assert_int_eq(find_in("proc /proc proc rw,nosuid 0 0\n"
				 "none /srv/my\\040trace tracefs rw,relatime 0 0\n"
				 "none /other tracefs rw 0 0\n", buf, sizeof(buf), &sl), 0);
	ck_assert_str_eq(buf, "/srv/my trace");
	/* A tracefs mount is taken before debugfs's, whatever the order. */
	ck_assert_int_eq(find_in("debugfs /sys/kernel/debug debugfs rw 0 0\n"
				 "tracefs /t tracefs rw 0 0\n", buf, sizeof(buf), &sl), 0);
	ck_assert_str_eq(buf, "/t");
	/* debugfs alone: tracefs is mounted in its "tracing" directory. */
	ck_assert_int_eq(find_in("sysfs /sys sysfs rw 0 0\n"
				 "debugfs /d\\134bg debugfs rw 0 0\n", buf, sizeof(buf), &sl), 0);
	ck_assert_str_eq(buf, "/d\\bg/tracing");
	/* Short or broken lines are skipped. */
	ck_assert_int_eq(find_in("\n   \nbroken\nx /y\ntracefs /z tracefs\n", buf,
				 sizeof(buf), &sl), 0);
	ck_assert_str_eq(buf, "/z");
	ck_assert_int_eq(sl.n, 0);
}
END_TEST

START_TEST(tracefs_mounted_nowhere_says_how_to_mount_it)
{
	static const char *const none[] = { "/nonexistent-tracefs" };
	struct pr_tracefs_places pl = { "/nonexistent-mounts", none, 1, NULL };
	struct seen_log sl = { "", 0 };
	struct pr_logger lg = { keep_log, &sl };
	char buf[64];

	ck_assert_int_eq(find_in("proc /proc proc rw 0 0\n", buf, sizeof(buf), &sl), -ENODEV);
	ck_assert_int_eq(sl.n, 1);
	ck_assert_str_eq(sl.msg, "tracefs is not mounted: mount it with "
			 "'mount -t tracefs nodev /sys/kernel/tracing'");
	/* No mounts table either. */
	ck_assert_int_eq(pr__tracefs_find(&pl, buf, sizeof(buf), &lg), -ENODEV);
	ck_assert_int_eq(sl.n, 2);
	/* Nowhere to mount it: the kernel has none. */
	pl.mount_on = "/nonexistent-tracefs";
	ck_assert_int_eq(pr__tracefs_find(&pl, buf, sizeof(buf), &lg), -ENODEV);
	ck_assert_ptr_nonnull(strstr(sl.msg, "no tracefs"));
	ck_assert_ptr_nonnull(strstr(sl.msg, "cpu-clock"));
}
END_TEST

START_TEST(a_tracefs_path_longer_than_the_buffer_is_enametoolong)
{
	struct seen_log sl = { "", 0 };
	char buf[8];

	ck_assert_int_eq(find_in("none /sys/kernel/tracing tracefs rw 0 0\n", buf,
				 sizeof(buf), &sl), -ENAMETOOLONG);
	ck_assert_int_eq(sl.n, 1);
	ck_assert_ptr_nonnull(strstr(sl.msg, "larger buffer"));
	ck_assert_int_eq(find_in("none /sys/kernel/debug debugfs rw 0 0\n", buf,
				 sizeof(buf), &sl), -ENAMETOOLONG);
	ck_assert_int_eq(pr_tracefs_path(NULL, 10, NULL), -EINVAL);
}
END_TEST

/* ---- the live suite: this kernel's tracefs ---- */

static char tracefs[4096];

/* The id as the kernel's file says it: the oracle. */
static uint64_t tracefs_id(const char *sys, const char *name)
{
	char path[8192];
	unsigned long long id = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/events/%s/%s/id", tracefs, sys, name);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(fscanf(f, "%llu", &id), 1);
	fclose(f);
	return id;
}

START_TEST(the_tracefs_found_is_a_tracefs)
{
	struct statfs st;
	char buf[4096];

	ck_assert_int_eq(pr_tracefs_path(buf, sizeof(buf), NULL), 0);
	ck_assert_int_eq(statfs(buf, &st), 0);
	ck_assert_uint_eq((unsigned long)st.f_type, TRACEFS_MAGIC);
}
END_TEST

START_TEST(tracepoints_get_the_id_of_their_tracefs_id_file)
{
	struct pr_event_desc ev = parse_ok("sched:sched_switch");

	assert_event(&ev, "sched:sched_switch", PERF_TYPE_TRACEPOINT,
		     tracefs_id("sched", "sched_switch"), false, false);
	ev = parse_ok("syscalls:sys_enter_write");
	assert_event(&ev, "syscalls:sys_enter_write", PERF_TYPE_TRACEPOINT,
		     tracefs_id("syscalls", "sys_enter_write"), false, false);
	ev = parse_ok("sched:sched_switch:k");
	assert_event(&ev, "sched:sched_switch:k", PERF_TYPE_TRACEPOINT,
		     tracefs_id("sched", "sched_switch"), true, false);

	struct pr_event_desc evs[4];

	ck_assert_int_eq(pr_event_list_parse("{sched:sched_switch,cs}:k,syscalls:sys_enter_write",
					     evs, 4, NULL), 3);
	assert_event(&evs[0], "sched:sched_switch:k", PERF_TYPE_TRACEPOINT,
		     tracefs_id("sched", "sched_switch"), true, false);
	ck_assert_uint_eq(evs[1].leader, 0);
	assert_event(&evs[2], "syscalls:sys_enter_write", PERF_TYPE_TRACEPOINT,
		     tracefs_id("syscalls", "sys_enter_write"), false, false);
	ck_assert_uint_eq(evs[2].leader, 2);
}
END_TEST

START_TEST(a_missing_tracepoint_says_where_the_tracepoints_are)
{
	char dir[8192];

	snprintf(dir, sizeof(dir), "see %s/events/sched/", tracefs);
	parse_fails("sched:nosuch", -ENOENT, "tracepoint 'sched:nosuch' does not exist", dir,
		    NULL);
	parse_fails("sched:sched_swich", -ENOENT, "did you mean 'sched:sched_switch'?", NULL);
	parse_fails("shced:sched_switch", -ENOENT, "no subsystem 'shced'",
		    "did you mean 'sched'?", "`perf list tracepoint`", NULL);
	parse_fails("xyzzy:u", -ENOENT, "no subsystem 'xyzzy'", NULL);
	/* Names become paths: nothing may climb out of tracefs. */
	parse_fails("sched:../../x", -EINVAL, "not a tracepoint name", NULL);
	parse_fails("..:sched", -EINVAL, "not a tracepoint name", NULL);
	parse_fails("sched:*", -EINVAL, "not a tracepoint name", NULL);
	parse_fails("sched:sched_switch:p", -EINVAL, "unknown modifier 'p'", NULL);
}
END_TEST

START_TEST(desc_from_attr_names_tracepoints_by_their_id)
{
	struct pr_event_desc ev = parse_ok("syscalls:sys_enter_write:u"), back;
	PR_OPTS(pr_event_opts, o, .desc = &ev);
	struct perf_event_attr attr;

	ck_assert_int_eq(pr_event_attr(&o, PR_SOURCE_EVENT, PR_ATTR_COUNT, &attr), 0);
	ck_assert_int_eq(pr_event_desc_from_attr(&attr, &back), 0);
	assert_event(&back, "syscalls:sys_enter_write:u", PERF_TYPE_TRACEPOINT, ev.config,
		     false, true);
	/* No tracepoint has this id. */
	attr.config = 0xfffffff;
	attr.exclude_kernel = 0;
	ck_assert_int_eq(pr_event_desc_from_attr(&attr, &back), 0);
	ck_assert_str_eq(back.name, "tracepoint 268435455");
}
END_TEST

START_TEST(tracefs_is_mounted_where_it_is_not)
{
	char dir[] = "/tmp/test-evparse-tracefs-XXXXXX", buf[64];
	struct pr_tracefs_places pl = { "/nonexistent-mounts", NULL, 0, dir };
	struct seen_log sl = { "", 0 };
	struct pr_logger lg = { keep_log, &sl };
	struct statfs st;
	int err;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	err = pr__tracefs_find(&pl, buf, sizeof(buf), &lg);
	if (geteuid() == 0) {
		ck_assert_msg(err == 0, "%d: %s", err, sl.msg);
		ck_assert_str_eq(buf, dir);
		ck_assert_int_eq(statfs(dir, &st), 0);
		ck_assert_uint_eq((unsigned long)st.f_type, TRACEFS_MAGIC);
		ck_assert_int_eq(umount(dir), 0);
	} else {
		ck_assert_int_eq(err, -ENODEV);
		ck_assert_ptr_nonnull(strstr(sl.msg, "needs root"));
	}
	rmdir(dir);
}
END_TEST

/* In a child that gives up root: tracefs is root's unless remounted. */
START_TEST(unreadable_tracefs_is_eacces_and_says_what_to_do)
{
	struct stat st;
	int pipefd[2], status;
	struct seen_log sl = { "", 0 };
	pid_t pid;
	int err = 1;

	ck_assert_int_eq(stat(tracefs, &st), 0);
	ck_assert_int_eq(pipe(pipefd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct pr_event_desc ev;

		close(pipefd[0]);
		if (geteuid() == 0 && setuid(65534))
			_exit(2);
		err = pr_event_parse("sched:sched_switch", &ev, LOG_TO(&sl));
		if (write(pipefd[1], &err, sizeof(err)) != sizeof(err) ||
		    write(pipefd[1], sl.msg, sizeof(sl.msg)) != sizeof(sl.msg))
			_exit(3);
		_exit(0);
	}
	close(pipefd[1]);
	ck_assert_int_eq(read(pipefd[0], &err, sizeof(err)), sizeof(err));
	ck_assert_int_eq(read(pipefd[0], sl.msg, sizeof(sl.msg)), sizeof(sl.msg));
	close(pipefd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(status, 0);
	if (st.st_mode & S_IXOTH) {
		ck_assert_int_eq(err, 0);
		return;
	}
	ck_assert_int_eq(err, -EACCES);
	ck_assert_ptr_nonnull(strstr(sl.msg, "permission denied"));
	ck_assert_ptr_nonnull(strstr(sl.msg, "run as root"));
	ck_assert_ptr_nonnull(strstr(sl.msg, "mode=755"));
}
END_TEST

START_TEST(software_events_and_tracepoints_open_here)
{
	static const char *const names[] = { "cpu-clock", "task-clock", "page-faults:u",
					     "cs", "cpu-migrations:k", "sched:sched_switch" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct seen_log sl = { "", 0 };
		struct pr_event_desc ev = parse_ok(names[i]);
		int err = pr_event_check(&ev, LOG_TO(&sl));

		ck_assert_msg(err == 0, "%s: %d (%s)", names[i], err, sl.msg);
		ck_assert_int_eq(sl.n, 0);
	}
	ck_assert_int_eq(pr_event_check(NULL, NULL), -EINVAL);
}
END_TEST

/* The kernel lists the core PMU as an event source named "cpu" (x86)
 * when there is one: the oracle for whether hardware events open. */
START_TEST(hardware_events_without_a_pmu_say_so_and_what_to_use)
{
	bool pmu = access("/sys/bus/event_source/devices/cpu", F_OK) == 0;

	for (size_t i = 0; pr_event_known_name(i); i++) {
		struct seen_log sl = { "", 0 };
		struct pr_event_desc ev = parse_ok(pr_event_known_name(i));
		char want[256];
		int err;

		if (ev.type != PERF_TYPE_HARDWARE)
			continue;
		err = pr_event_check(&ev, LOG_TO(&sl));
		if (pmu && err == 0)
			continue;
		ck_assert_msg(!pmu, "%s: %d (%s)", ev.name, err, sl.msg);
		ck_assert_msg(err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV,
			      "%s: %d (%s)", ev.name, err, sl.msg);
		ck_assert_int_eq(sl.n, 1);
		snprintf(want, sizeof(want), "the hardware event %s is not available on this "
			 "machine (no PMU: a VM?); use a software event such as cpu-clock",
			 ev.name);
		ck_assert_str_eq(sl.msg, want);
	}
}
END_TEST

/* perf 6.1's own list of this kernel's software events ("page-faults OR
 * faults   [Software event]"): each spelling names the event perf names
 * first.  bpf-output is left out: it only carries a BPF program's data. */
START_TEST(perfs_software_event_list_parses_to_perfs_names)
{
	FILE *p = popen("perf list sw 2>/dev/null", "r");
	char line[512];
	int events = 0;

	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		char *save = NULL, *word, first[128] = "";
		bool or = false;

		if (!strstr(line, "[Software event]") || strstr(line, "bpf-output"))
			continue;
		*strstr(line, "[Software event]") = '\0';
		for (word = strtok_r(line, " \t", &save); word;
		     word = strtok_r(NULL, " \t", &save)) {
			struct pr_event_desc ev;

			if (!strcmp(word, "OR")) {
				or = true;
				continue;
			}
			ev = parse_ok(word);
			ck_assert_uint_eq(ev.type, PERF_TYPE_SOFTWARE);
			if (!or)
				snprintf(first, sizeof(first), "%s", word);
			ck_assert_str_eq(ev.name, first);
		}
		events++;
	}
	ck_assert_int_eq(pclose(p), 0);
	/* cpu-clock to cgroup-switches, less bpf-output: perf is there. */
	ck_assert_int_ge(events, 10);
}
END_TEST

static void require_tracefs(void)
{
	char why[1024] = "";
	struct seen_log sl = { "", 0 };
	int err = pr_tracefs_path(tracefs, sizeof(tracefs), LOG_TO(&sl));

	if (err == -ENODEV) {
		snprintf(why, sizeof(why), "%s", sl.msg);
		printf("SKIP: no tracefs: %s\n", why);
		exit(77);
	}
	if (err) {
		printf("FAIL: pr_tracefs_path: %s (%s)\n", strerror(-err), sl.msg);
		exit(EXIT_FAILURE);
	}
}

int main(int argc, char **argv)
{
	Suite *s = suite_create("evparse");
	TCase *tc;

	if (argc > 1 && !strcmp(argv[1], "tracefs")) {
		live_require_perf();
		require_tracefs();
		tc = tcase_create("tracefs");
		tcase_add_test(tc, the_tracefs_found_is_a_tracefs);
		tcase_add_test(tc, tracepoints_get_the_id_of_their_tracefs_id_file);
		tcase_add_test(tc, a_missing_tracepoint_says_where_the_tracepoints_are);
		tcase_add_test(tc, desc_from_attr_names_tracepoints_by_their_id);
		tcase_add_test(tc, tracefs_is_mounted_where_it_is_not);
		tcase_add_test(tc, unreadable_tracefs_is_eacces_and_says_what_to_do);
		tcase_add_test(tc, software_events_and_tracepoints_open_here);
		tcase_add_test(tc, hardware_events_without_a_pmu_say_so_and_what_to_use);
		tcase_add_test(tc, perfs_software_event_list_parses_to_perfs_names);
		suite_add_tcase(s, tc);
		return run_suite(s);
	}
	tc = tcase_create("names");
	tcase_add_test(tc, perfs_names_and_aliases_parse_to_the_canonical_spelling);
	tcase_add_test(tc, known_names_are_each_canonical_name_once);
	tcase_add_test(tc, modifiers_u_and_k_exclude_the_other_mode_and_stay_in_the_name);
	tcase_add_test(tc, other_modifiers_are_refused_naming_the_valid_ones);
	tcase_add_test(tc, unknown_names_suggest_close_known_ones_and_perf_list);
	tcase_add_test(tc, one_event_is_parsed_not_a_list_or_nothing);
	tcase_add_test(tc, desc_from_attr_names_what_parsing_gave);
	tcase_add_test(tc, desc_from_attr_names_other_events_by_their_numbers);
	tcase_add_test(tc, only_the_clocks_count_nanoseconds);
	suite_add_tcase(s, tc);
	tc = tcase_create("lists");
	tcase_add_test(tc, a_list_with_a_group_gives_each_member_the_groups_leader_and_modifier);
	tcase_add_test(tc, a_members_own_modifier_adds_to_the_groups);
	tcase_add_test(tc, groups_do_not_nest_and_braces_must_balance);
	tcase_add_test(tc, empty_items_are_errors_that_say_where);
	tcase_add_test(tc, more_events_than_room_is_e2big);
	suite_add_tcase(s, tc);
	tc = tcase_create("tracefs-path");
	tcase_add_test(tc, tracefs_is_found_where_the_mounts_table_says);
	tcase_add_test(tc, tracefs_mounted_nowhere_says_how_to_mount_it);
	tcase_add_test(tc, a_tracefs_path_longer_than_the_buffer_is_enametoolong);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
