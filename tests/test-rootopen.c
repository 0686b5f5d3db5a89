/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A container's files are opened through its root and never outside it:
 * a fake container root, built here, holds an absolute symlink to a host
 * path, a ".." chain, and a link that climbs out; a child chroot()ed into
 * it stands for the container's process.  Whatever the path, the host's
 * file (a secret written outside the root) is never what opens — through
 * openat2 and through the component walk kernels without openat2 get.
 * Perf maps are read only when regular, small enough and owned by the
 * process's user.  The child has a mount namespace of its own, as a
 * container's process has: a file of it found nowhere inside its root is
 * not found, never the host's at the same path; and a FIFO or a device
 * node put where a file is looked for is refused without a wait.  The
 * root kept of a process with JIT code (model/roots.c) reaches its perf
 * map after it is gone, and refuses a hostile one as the live open does.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkmain.h"
#include "mkrecord.h"
#include "model/elfcache.h"
#include "model/model.h"
#include "perfdata/perfdata.h"
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
		if (unshare(CLONE_NEWNS) || chroot(root) || chdir("/"))
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

/* Copy the file at `from` to `rel` inside the root. */
static void copy_in(const char *from, const char *rel)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "cp %s %s%s", from, root, rel);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(a_target_file_opens_only_when_regular_and_never_waits)
{
	char path[256];

	need_child();
	put("/usr/lib/plain.so", "PLAIN");
	snprintf(path, sizeof(path), "%s/usr/lib/fifo.so", root);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	snprintf(path, sizeof(path), "%s/usr/lib/zero.so", root);
	ck_assert_int_eq(mknod(path, S_IFCHR | 0600, makedev(1, 5)), 0);
	/* A FIFO no one writes: a blocking open would wait here until the
	 * test's timeout. */
	ck_assert_int_eq(pr__open_target_file((uint32_t)child, "/usr/lib/fifo.so", NULL), -EINVAL);
	ck_assert_int_eq(pr__open_target_file((uint32_t)child, "/usr/lib/zero.so", NULL), -EINVAL);
	ck_assert_int_eq(pr__open_target_file(0, path, NULL), -EINVAL);
	ck_assert_int_eq(pr__open_target_file((uint32_t)child, "/usr/lib/abs.so", NULL), -ENOENT);
	{
		int fd = pr__open_target_file((uint32_t)child, "/usr/lib/plain.so", NULL);
		char buf[8] = "";

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(read(fd, buf, 5), 5);
		ck_assert_str_eq(buf, "PLAIN");
		close(fd);
	}
}
END_TEST

/* A file `path` of the child: the cache's answer, its build-id in `hex`
 * ("" when not found). */
static void found_as(struct pr_elfcache *c, struct pr_dso *d, const char *path, char *hex)
{
	struct pr_elf *e;

	memset(d, 0, sizeof(*d));
	d->path = (char *)path;
	e = pr__elfcache_file(c, d, NULL, (uint32_t)child, true, NULL);
	hex[0] = '\0';
	if (e)
		pr__hex(hex, e->build_id, e->build_id_size);
}

START_TEST(a_foreign_process_file_is_its_own_never_the_hosts)
{
	struct pr_elfcache *c = pr__elfcache_new();
	struct pr_dso d1, d2, d3;
	char host[64], rel[64], fifo[256], got[2 * PR_BUILD_ID_MAX + 1];
	char theirs[2 * PR_BUILD_ID_MAX + 1], ours[2 * PR_BUILD_ID_MAX + 1];
	uint8_t id[PR_BUILD_ID_MAX];
	size_t len = 0;

	need_child();
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(pr__mntns_differs((uint32_t)child), 1);
	ck_assert_int_eq(pr__mntns_differs((uint32_t)getpid()), 0);
	/* The host has this test's executable at `host`; the container has
	 * another program at the same path. */
	snprintf(host, sizeof(host), "/tmp/ds-host-elf-%d", getpid());
	snprintf(rel, sizeof(rel), "/tmp/ds-host-elf-%d", getpid());
	{
		char cmd[512];

		snprintf(cmd, sizeof(cmd), "cp /proc/self/exe %s", host);
		ck_assert_int_eq(system(cmd), 0);
	}
	copy_in("/bin/true", rel);
	ck_assert_int_eq(pr__build_id_path(host, id, &len), 0);
	pr__hex(ours, id, len);
	snprintf(fifo, sizeof(fifo), "%s%s", root, rel);
	ck_assert_int_eq(pr__build_id_path(fifo, id, &len), 0);
	pr__hex(theirs, id, len);
	ck_assert_str_ne(ours, theirs);

	found_as(c, &d1, host, got);
	ck_assert_str_eq(got, theirs);
	/* Not usable inside the root (a FIFO there now; a host process
	 * would find the host's file): not found, and counted. */
	unlink(fifo);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	found_as(c, &d2, host, got);
	ck_assert_str_eq(got, "");
	/* Nor when it is missing. */
	unlink(fifo);
	found_as(c, &d3, host, got);
	ck_assert_str_eq(got, "");
	ck_assert_uint_eq(pr__elfcache_foreign_missing(c), 2);
	/* Gone, its namespace unknown: the host's file at the path only when
	 * it is the very file mapped (the mapping's device and inode). */
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	child = -1;
	ck_assert_int_lt(pr__mntns_differs(1u << 30), 0);
	{
		struct pr_dso d4 = { .path = host }, d5 = { .path = host };
		struct stat st;

		ck_assert_int_eq(stat(host, &st), 0);
		d4.ino = st.st_ino + 1;
		d4.maj = major(st.st_dev);
		d4.min = minor(st.st_dev);
		d5.ino = st.st_ino;
		d5.maj = major(st.st_dev);
		d5.min = minor(st.st_dev);
		ck_assert_ptr_null(pr__elfcache_file(c, &d4, NULL, 1u << 30, true, NULL));
		ck_assert_ptr_nonnull(pr__elfcache_file(c, &d5, NULL, 1u << 30, true, NULL));
	}
	unlink(host);
	pr__elfcache_free(c);
}
END_TEST

/* Messages at debug level and above, for the checks. */
static char said[4096];

static void keep_said(enum pr_log_level level, const char *msg, void *ctx)
{
	(void)level, (void)ctx;
	snprintf(said + strlen(said), sizeof(said) - strlen(said), "%s\n", msg);
}

/* The perf map of what was kept of `pid`, as it was at record time 150. */
static int kept_map(struct pr__roots *r, pid_t pid, const struct pr_logger *lg)
{
	struct pr__root_info ri;
	int fd;

	said[0] = 0;
	if (pr__roots_get(r, (uint32_t)pid, 150, &ri))
		return -ENOENT;
	fd = pr__root_open(&ri, PR_JIT_PERF_MAP, (uint32_t)pid, PR_PERF_MAP_MAX, lg);
	if (ri.root >= 0)
		close(ri.root);
	return fd;
}

/* The child maps JIT code at time 100 and exits at 200 (its /proc entry
 * gone: reaped); a later process of the same pid maps some at 300. */
START_TEST(a_kept_root_reads_the_perf_map_after_the_process_is_gone)
{
	struct pr_logger lg = { keep_said, NULL };
	struct pr__roots *r = pr__roots_new(2, &lg);
	struct pr_record mm = mmap2((uint32_t)child, 0x1000, 0x1000, 0, "//anon");
	struct pr_record data = mmap2((uint32_t)child, 0x9000, 0x1000, 0, "//anon");
	struct pr_record dump = mmap2((uint32_t)child, 0x20000, 0x1000, 0, "/jit-7.dump");
	struct pr_record ex = { .type = PR_RECORD_EXIT, .fields = PR_ID_TIME, .time = 200 };
	struct pr__root_info ri;
	char rel[64], buf[64];
	ssize_t n;
	int fd;

	need_child();
	ck_assert_ptr_nonnull(r);
	snprintf(rel, sizeof(rel), "/tmp/perf-%d.map", child);
	put(rel, "1000 10 jitted\n");
	/* Data, not code: nothing kept. */
	data.u.mmap.prot = 3;
	pr__roots_record(r, &data);
	ck_assert_int_eq(pr__roots_get(r, (uint32_t)child, 150, &ri), -ENOENT);
	mm.fields = PR_ID_TIME;
	mm.time = 100;
	pr__roots_record(r, &mm);
	/* Its jitdump file, mapped where it wrote it. */
	put("/jit-7.dump", "JiTD and the rest");
	dump.fields = PR_ID_TIME;
	dump.time = 110;
	pr__roots_record(r, &dump);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	ex.pid = ex.tid = (uint32_t)child;
	pr__roots_record(r, &ex);
	ck_assert_int_eq(pr__roots_get(r, (uint32_t)child, 150, &ri), 0);
	ck_assert(ri.exited && ri.known_ns && !ri.same_ns);
	close(ri.root);
	fd = kept_map(r, child, &lg);
	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ck_assert_int_eq(n, 15);
	buf[n] = 0;
	ck_assert_str_eq(buf, "1000 10 jitted\n");
	/* What a recording carries of it (perfdata_jit.c): the map, and the
	 * jitdump file where the process mapped it. */
	{
		unsigned char *sec;
		const unsigned char *got;
		size_t len, size;

		ck_assert_int_eq(pr__perfdata_jit_payload(r, &sec, &len, &lg), 0);
		ck_assert_int_eq(pr__perfdata_jit_find(sec, len, (uint32_t)child, PR_JIT_PERF_MAP,
						       150, &got, &size), 0);
		ck_assert_uint_eq(size, 15);
		ck_assert_int_eq(memcmp(got, "1000 10 jitted\n", 15), 0);
		ck_assert_int_eq(pr__perfdata_jit_find(sec, len, (uint32_t)child, PR_JIT_DUMP, 150,
						       &got, &size), 0);
		ck_assert_uint_eq(size, 17);
		ck_assert_int_eq(memcmp(got, "JiTD and the rest", 17), 0);
		/* Before the process was born: not its. */
		ck_assert_int_eq(pr__perfdata_jit_find(sec, len, (uint32_t)child, PR_JIT_PERF_MAP,
						       50, &got, &size), -ENOENT);
		free(sec);
	}
	/* The pid again, another process: its own entry, from its time on. */
	mm.time = 300;
	pr__roots_record(r, &mm);
	ck_assert_int_eq(pr__roots_get(r, (uint32_t)child, 350, &ri), 0);
	ck_assert(!ri.exited && ri.root < 0);
	ck_assert_int_eq(pr__roots_get(r, (uint32_t)child, 150, &ri), 0);
	ck_assert(ri.exited);
	close(ri.root);
	/* Kept until both users have handled the exit. */
	pr__roots_passed(r, 0, (uint32_t)child, 200);
	ck_assert_int_eq(pr__roots_get(r, (uint32_t)child, 150, &ri), 0);
	close(ri.root);
	pr__roots_passed(r, 1, (uint32_t)child, 200);
	ck_assert_int_eq(pr__roots_get(r, (uint32_t)child, 150, &ri), -ENOENT);
	pr__roots_free(r);
	child = -1;
}
END_TEST

/* A map a container made hostile: refused at once, and said. */
START_TEST(a_hostile_perf_map_through_a_kept_root_is_refused_and_said)
{
	struct pr_logger lg = { keep_said, NULL };
	struct pr__roots *r = pr__roots_new(1, &lg);
	struct pr_record mm = mmap2((uint32_t)child, 0x1000, 0x1000, 0, "//anon");
	char rel[64], path[256];
	pid_t pid = child;

	need_child();
	snprintf(rel, sizeof(rel), "/tmp/perf-%d.map", pid);
	snprintf(path, sizeof(path), "%s%s", root, rel);
	pr__roots_record(r, &mm);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	child = -1;
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(kept_map(r, pid, &lg), -EINVAL);
	ck_assert_ptr_nonnull(strstr(said, "not read: not a regular file"));
	unlink(path);
	ck_assert_int_eq(symlink("/etc/shadow", path), 0);
	ck_assert_int_eq(kept_map(r, pid, &lg), -ELOOP);
	ck_assert_ptr_nonnull(strstr(said, "not read: a symbolic link"));
	unlink(path);
	put(rel, "");
	ck_assert_int_eq(truncate(path, PR_PERF_MAP_MAX + 1), 0);
	ck_assert_int_eq(kept_map(r, pid, &lg), -EFBIG);
	ck_assert_ptr_nonnull(strstr(said, "not read: larger than"));
	ck_assert_int_eq(truncate(path, 10), 0);
	ck_assert_int_eq(chown(path, 12345, 12345), 0);
	ck_assert_int_eq(kept_map(r, pid, &lg), -EPERM);
	ck_assert_ptr_nonnull(strstr(said, "not read: owned by neither"));
	pr__roots_free(r);
}
END_TEST

/* Full: the oldest of a process that is gone makes room for a new one. */
START_TEST(a_full_table_of_kept_roots_lets_the_oldest_gone_one_go)
{
	struct pr__roots *r = pr__roots_new(1, NULL);
	struct pr__root_info ri;
	/* Above any pid the kernel hands out (PID_MAX_LIMIT is 4194304). */
	const uint32_t gone = 1u << 30;

	for (uint32_t i = 0; i < 128; i++) {
		struct pr_record mm = mmap2(gone + i, 0x1000, 0x1000, 0, "//anon");

		mm.fields = PR_ID_TIME;
		mm.time = 10 + i;
		pr__roots_record(r, &mm);
	}
	ck_assert_int_eq(pr__roots_get(r, gone, 1000, &ri), 0);
	{
		struct pr_record mm = mmap2((uint32_t)getpid(), 0x1000, 0x1000, 0, "//anon");

		mm.fields = PR_ID_TIME;
		mm.time = 500;
		pr__roots_record(r, &mm);
	}
	ck_assert_int_eq(pr__roots_get(r, gone, 1000, &ri), -ENOENT);
	ck_assert_int_eq(pr__roots_get(r, gone + 1, 1000, &ri), 0);
	ck_assert_int_eq(pr__roots_get(r, (uint32_t)getpid(), 1000, &ri), 0);
	ck_assert(ri.root >= 0 && ri.known_ns && ri.same_ns && !ri.exited);
	close(ri.root);
	pr__roots_free(r);
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
	tcase_add_test(tc, a_target_file_opens_only_when_regular_and_never_waits);
	tcase_add_test(tc, a_foreign_process_file_is_its_own_never_the_hosts);
	tcase_add_test(tc, a_kept_root_reads_the_perf_map_after_the_process_is_gone);
	tcase_add_test(tc, a_hostile_perf_map_through_a_kept_root_is_refused_and_said);
	tcase_add_test(tc, a_full_table_of_kept_roots_lets_the_oldest_gone_one_go);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
