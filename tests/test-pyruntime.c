/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPython found in a process from its mappings and its files, never
 * from a name alone (prpython.h): made-up files (fake-python.c) loaded by
 * a child, as a shared library (dlopen) or as its executable.  The
 * version is the value of Py_Version when there is one, else the
 * version string whose 3.N the file's name has; a file named as
 * CPython's without its symbols (an impostor, or a stripped static
 * python) is not taken, and is named as the look-alike it is.
 */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkmain.h"
#include "prpython.h"

static pid_t child = -1;
static const char *dir;      /* where the made-up files are: argv[1] */

static const char *fake(const char *name, char *buf, size_t len)
{
	ck_assert_msg(dir, "give the directory of the made-up files (meson test does)");
	snprintf(buf, len, "%s/%s", dir, name);
	return buf;
}

/* A child that has `name` loaded (a library) or runs it (an executable),
 * and waits. */
static pid_t start(const char *name, bool exe)
{
	char path[512], c;
	int p[2];

	fake(name, path, sizeof(path));
	ck_assert_int_eq(pipe(p), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (!child) {
		close(p[0]);
		if (exe) {
			execl(path, name, (char *)NULL);
			_exit(127);
		}
		if (!dlopen(path, RTLD_NOW | RTLD_LOCAL))
			_exit(126);
		if (write(p[1], "x", 1) != 1)
			_exit(125);
		pause();
		_exit(0);
	}
	close(p[1]);
	/* An executable is ready once its mappings name it and it waits in
	 * pause() (syscall 34): not before, while its runtime may still
	 * exec it again (a sanitizer's does). */
	if (!exe)
		ck_assert_int_eq(read(p[0], &c, 1), 1);
	close(p[0]);
	if (exe) {
		char maps[64], line[1024];
		bool seen = false;

		for (int i = 0; i < 20000 && !seen; i++) {
			FILE *f;

			snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)child);
			f = fopen(maps, "re");
			while (f && !seen && fgets(line, sizeof(line), f))
				seen = strstr(line, path) != NULL;
			if (f)
				fclose(f);
			snprintf(maps, sizeof(maps), "/proc/%d/syscall", (int)child);
			f = fopen(maps, "re");
			seen = seen && f && fgets(line, sizeof(line), f) && !strncmp(line, "34 ", 3);
			if (f)
				fclose(f);
			if (!seen)
				usleep(1000);
		}
		ck_assert_msg(seen, "%s never ran", path);
	}
	return child;
}

static void stop(void)
{
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	child = -1;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

START_TEST(shared_library_versioned_by_py_version)
{
	struct pr_python py = { .sz = sizeof(py) };

	ck_assert_int_eq(pr_python_find((uint32_t)start("libpython3.13.so.1.0", false), &py), 1);
	/* Py_Version says 3.13.2; the string "3.13.9" it also carries loses. */
	ck_assert_uint_eq(py.major, 3);
	ck_assert_uint_eq(py.minor, 13);
	ck_assert_uint_eq(py.micro, 2);
	ck_assert(py.shared);
	ck_assert_msg(ends_with(py.path, "/libpython3.13.so.1.0"), "path %s", py.path);
	ck_assert_str_eq(py.unconfirmed, "");
	stop();
}
END_TEST

START_TEST(before_3_11_versioned_by_its_string)
{
	struct pr_python py = { .sz = sizeof(py) };

	/* "3.7.3" comes first in the file, "3.10.12" matches its name. */
	ck_assert_int_eq(pr_python_find((uint32_t)start("libpython3.10.so.1.0", false), &py), 1);
	ck_assert_uint_eq(py.minor, 10);
	ck_assert_uint_eq(py.micro, 12);
	stop();
}
END_TEST

START_TEST(impostor_library_not_taken)
{
	struct pr_python py = { .sz = sizeof(py) };

	ck_assert_int_eq(pr_python_find((uint32_t)start("libpython3.12.so.1.0", false), &py), 0);
	ck_assert_msg(ends_with(py.unconfirmed, "/libpython3.12.so.1.0"), "unconfirmed '%s'",
		      py.unconfirmed);
	ck_assert_str_eq(py.path, "");
	stop();
}
END_TEST

START_TEST(executable_named_python_not_taken)
{
	struct pr_python py = { .sz = sizeof(py) };

	ck_assert_int_eq(pr_python_find((uint32_t)start("python3.12", true), &py), 0);
	ck_assert_msg(ends_with(py.unconfirmed, "/python3.12"), "unconfirmed '%s'",
		      py.unconfirmed);
	stop();
}
END_TEST

START_TEST(stripped_static_python_named_not_taken)
{
	struct pr_python py = { .sz = sizeof(py) };
	struct pr_python_activation a = { .sz = sizeof(a) };
	pid_t pid = start("python3.9", true);

	ck_assert_int_eq(pr_python_find((uint32_t)pid, &py), 0);
	ck_assert_msg(ends_with(py.unconfirmed, "/python3.9"), "unconfirmed '%s'",
		      py.unconfirmed);
	/* Nothing is done to it. */
	ck_assert_int_eq(pr_python_activate((uint32_t)pid, NULL, &a), -ENOENT);
	stop();
}
END_TEST

START_TEST(executable_of_any_name_with_cpython_in_it)
{
	struct pr_python py = { .sz = sizeof(py) };

	ck_assert_int_eq(pr_python_find((uint32_t)start("embedder", true), &py), 1);
	ck_assert_uint_eq(py.minor, 12);
	ck_assert_uint_eq(py.micro, 4);
	ck_assert(!py.shared);
	ck_assert_msg(ends_with(py.path, "/embedder"), "path %s", py.path);
	stop();
}
END_TEST

START_TEST(old_cpython_refused_before_any_ptrace)
{
	struct pr_python_activation a = { .sz = sizeof(a) };

	ck_assert_int_eq(pr_python_activate((uint32_t)start("libpython3.10.so.1.0", false), NULL,
					    &a), -EPROTONOSUPPORT);
	ck_assert_uint_eq(a.python.minor, 10);
	stop();
}
END_TEST

START_TEST(no_python_and_no_process)
{
	struct pr_python py = { .sz = sizeof(py) };
	pid_t gone = fork();

	ck_assert_int_eq(pr_python_find((uint32_t)getpid(), &py), 0);
	ck_assert_str_eq(py.unconfirmed, "");
	ck_assert_int_ge(gone, 0);
	if (!gone)
		_exit(0);
	waitpid(gone, NULL, 0);
	ck_assert_int_eq(pr_python_find((uint32_t)gone, &py), -ESRCH);
	ck_assert_int_eq(pr_python_find((uint32_t)getpid(), NULL), -EINVAL);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("pyruntime");
	TCase *tc = tcase_create("find");

	dir = argc > 1 ? argv[1] : NULL;

	tcase_add_checked_fixture(tc, NULL, stop);
	tcase_add_test(tc, shared_library_versioned_by_py_version);
	tcase_add_test(tc, before_3_11_versioned_by_its_string);
	tcase_add_test(tc, impostor_library_not_taken);
	tcase_add_test(tc, executable_named_python_not_taken);
	tcase_add_test(tc, stripped_static_python_named_not_taken);
	tcase_add_test(tc, executable_of_any_name_with_cpython_in_it);
	tcase_add_test(tc, old_cpython_refused_before_any_ptrace);
	tcase_add_test(tc, no_python_and_no_process);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
