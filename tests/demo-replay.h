/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The demo fixture (tests/fixtures/demo-static, see fixtures/fixture.h)
 * replayed through a session, as `dwarfsample report` replays a file:
 * shared by the tests that read its samples unwound (test-replay.c,
 * test-session.c).  Open it, attach sinks (and whatever else wants the
 * session's model), run it, read its counters, close it.
 */
#ifndef DS_TEST_DEMO_REPLAY_H
#define DS_TEST_DEMO_REPLAY_H

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "perfreader.h"

struct demo_replay {
	struct pr_file *f;
	struct pr_session *ses;
	/* What the session counted, once run. */
	struct pr_session_stats st;
	struct pr_unwind_stats us;
};

/*
 * A session over the fixture's perf.data on `workers` (prsession.h),
 * with the binary it sampled found by build-id in the fixture's
 * directory (`with_binary`) or not found at all (the path it had when
 * recorded exists on no machine), naming frames with `names` (may be
 * NULL).
 */
static void demo_replay_open(struct demo_replay *d, size_t workers, bool with_binary,
			     const struct pr_symbolizer_opts *names)
{
	const char *dir = getenv("DS_FIXTURES");
	const char *dirs[1];
	char path[4096], debug[4096];

	ck_assert_msg(dir != NULL, "DS_FIXTURES is not set (meson test sets it)");
	snprintf(path, sizeof(path), "%s/demo-static/perf.data", dir);
	snprintf(debug, sizeof(debug), "%s/demo-static", dir);
	dirs[0] = debug;
	{
		PR_OPTS(pr_model_opts, mo, .debug_dirs = dirs, .nr_debug_dirs = with_binary);
		PR_OPTS(pr_session_opts, so, .workers = workers, .model = &mo, .names = names);

		d->f = pr_file_open(path, NULL);
		ck_assert_ptr_nonnull(d->f);
		/* The session copies the options, the directories too. */
		d->ses = pr_session_new_file(d->f, &so);
	}
	ck_assert_ptr_nonnull(d->ses);
}

/* Every record of the file through the session, which must take every
 * one (the model refusing none, no sink failing); then its counters. */
static void demo_replay_run(struct demo_replay *d)
{
	ck_assert_int_ge(pr_session_consume_file(d->ses), 0);
	ck_assert_int_eq(pr_session_finish(d->ses, 0), 0);
	d->st.sz = sizeof(d->st);
	d->us.sz = sizeof(d->us);
	ck_assert_int_eq(pr_session_stats(d->ses, &d->st), 0);
	ck_assert_int_eq(pr_session_unwind_stats(d->ses, &d->us), 0);
}

/* After whatever was made over the session's model. */
static void demo_replay_close(struct demo_replay *d)
{
	pr_session_free(d->ses);
	pr_file_close(d->f);
}

#endif
