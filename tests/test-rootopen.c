/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A container's files are opened through its root and never outside it:
 * a fake container root, built here, holds an absolute symlink to a host
 * path, a ".." chain, and a link that climbs out; a child chroot()ed into
 * it stands for the container's process.  Whatever the path, the host's
 * file (a secret written outside the root) is never what opens — through
 * openat2 and through the component walk kernels without openat2 get.
 * Perf maps are read only when regular, small enough and owned by the
 * process's user.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkmain.h"
#include "model/model.h"
#include "symbols/symbolizer.h"

static char root[64], secret[128];
static pid_t child = -1;
static int rootfd = -1;

static void put(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static void dir(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s%s", root, rel);
	ck_assert_int_eq(mkdir(path, 0755), 0);
}

static void lnk(const char *target, const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s%s", root, rel);
	ck_assert_int_eq(symlink(target, path), 0);
}

static void setup(void)
{
	int pipefd[2];
	char c;

	snprintf(root, sizeof(root), "/tmp/ds-root-%d", getpid());
	snprintf(secret, sizeof(secret), "/tmp/ds-host-secret-%d", getpid());
	ck_assert_int_eq(mkdir(root, 0755), 0);
	{
		FILE *f = fopen(secret, "w");

		ck_assert_ptr_nonnull(f);
		fputs("HOST", f);
		fclose(f);
	}
	dir("/usr");
	dir("/usr/lib");
	dir("/tmp");
	dir("/etc");
	put("/etc/inside", "INSIDE");
	/* Absolute: the host's secret, by its host path. */
	lnk(secret, "/usr/lib/abs.so");
	/* Absolute, to a file that exists inside. */
	lnk("/etc/inside", "/usr/lib/good.so");
	/* Relative, climbing far past the root. */
	lnk("../../../../../../../..", "/usr/lib/up");
	ck_assert_int_eq(pipe(pipefd), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		if (chroot(root) || chdir("/"))
			_exit(1);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &c, 1) != 1) {
		close(pipefd[0]);
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		child = -1;
		return;
	}
	close(pipefd[0]);
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(rootfd, 0);
}

static void teardown(void)
{
	char cmd[256];

	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	if (rootfd >= 0)
		close(rootfd);
	unlink(secret);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	ck_assert_int_eq(system(cmd), 0);
}

/* What `path` opens to, through the process's root (`walk`: by the
 * component walk): its first bytes, or "" when it does not open. */
static const char *read_as(const char *path, bool walk)
{
	static char buf[16];
	int fd = walk ? pr__open_beneath(rootfd, path, O_RDONLY)
		      : pr__open_in_root((uint32_t)child, path, O_RDONLY);
	ssize_t n;

	buf[0] = '\0';
	if (fd < 0)
		return buf;
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	return buf;
}

static void need_child(void)
{
	if (child <= 0)
		ck_abort_msg("chroot refused: the test needs root (CAP_SYS_CHROOT)");
}

START_TEST(an_absolute_symlink_to_a_host_path_stays_inside)
{
	char up[256];

	need_child();
	for (int walk = 0; walk < 2; walk++) {
		ck_assert_str_eq(read_as("/usr/lib/abs.so", walk), "");
		ck_assert_str_eq(read_as("/usr/lib/good.so", walk), "INSIDE");
		ck_assert_str_eq(read_as(secret, walk), "");
		snprintf(up, sizeof(up), "/../../../../..%s", secret);
		ck_assert_str_eq(read_as(up, walk), "");
		snprintf(up, sizeof(up), "/usr/lib/up%s", secret);
		ck_assert_str_eq(read_as(up, walk), "");
		ck_assert_str_eq(read_as("/usr/lib/up/etc/inside", walk), "INSIDE");
		ck_assert_str_eq(read_as("/usr/../../etc/./inside", walk), "INSIDE");
	}
}
END_TEST

/* The host file placed inside too, at the host path: the open finds the
 * container's copy, never the host's. */
START_TEST(a_host_path_inside_the_root_is_the_containers_file)
{
	char rel[256];

	need_child();
	snprintf(rel, sizeof(rel), "%s", secret + strlen("/tmp"));
	snprintf(rel, sizeof(rel), "/tmp%s", secret + strlen("/tmp"));
	put(rel, "MINE");
	for (int walk = 0; walk < 2; walk++) {
		ck_assert_str_eq(read_as("/usr/lib/abs.so", walk), "MINE");
		ck_assert_str_eq(read_as(secret, walk), "MINE");
	}
}
END_TEST

START_TEST(a_link_loop_is_refused)
{
	need_child();
	lnk("/usr/lib/loop", "/usr/lib/loop");
	ck_assert_int_eq(pr__open_beneath(rootfd, "/usr/lib/loop", O_RDONLY), -ELOOP);
	ck_assert_int_lt(pr__open_in_root((uint32_t)child, "/usr/lib/loop", O_RDONLY), 0);
}
END_TEST

/* The perf map of the chroot()ed process, at its /tmp. */
START_TEST(perf_maps_are_read_only_when_safe)
{
	char rel[64], path[256];
	struct pr_logger lg = { 0 };
	int fd;

	need_child();
	snprintf(rel, sizeof(rel), "/tmp/perf-%d.map", child);
	snprintf(path, sizeof(path), "%s%s", root, rel);
	put(rel, "1000 10 jitted\n");
	/* Owned by root, as the process: read. */
	fd = pr__perf_map_open((uint32_t)child, true, &lg);
	ck_assert_int_ge(fd, 0);
	close(fd);
	/* Another user's. */
	ck_assert_int_eq(chown(path, 12345, 12345), 0);
	ck_assert_int_eq(pr__perf_map_open((uint32_t)child, true, &lg), -EPERM);
	ck_assert_int_eq(chown(path, 0, 0), 0);
	/* Too large (sparse: no disk is used). */
	ck_assert_int_eq(truncate(path, PR_PERF_MAP_MAX + 1), 0);
	ck_assert_int_eq(pr__perf_map_open((uint32_t)child, true, &lg), -EFBIG);
	/* Not a regular file. */
	unlink(path);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(pr__perf_map_open((uint32_t)child, true, &lg), -EINVAL);
	/* A link out of the root to the host's secret: not followed. */
	unlink(path);
	lnk(secret, rel);
	ck_assert_int_eq(pr__perf_map_open((uint32_t)child, true, &lg), -ENOENT);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rootopen");
	TCase *tc = tcase_create("root");

	if (geteuid()) {
		printf("SKIP: building a container root needs root (chroot)\n");
		return 77;
	}
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, an_absolute_symlink_to_a_host_path_stays_inside);
	tcase_add_test(tc, a_host_path_inside_the_root_is_the_containers_file);
	tcase_add_test(tc, a_link_loop_is_refused);
	tcase_add_test(tc, perf_maps_are_read_only_when_safe);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
