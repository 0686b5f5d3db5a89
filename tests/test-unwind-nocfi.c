/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Frames the unwind tables do not describe the usual way: code without CFI
 * and JIT code, crossed by frame pointer; a library deleted and replaced
 * after it was loaded; a leaf that keeps its return address in a register.
 */
#include <check.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jitdump-writer.h"
#include "unwind-fixture.h"

/* Where frame `i` is: in `lo`..`lo + len`. */
static bool frame_in(const struct pr_stack *st, size_t i, const void *lo, size_t len)
{
	uint64_t a = (uintptr_t)lo;

	return i < st->nr && st->frames[i].ip >= a && st->frames[i].ip < a + len;
}

/* The stack from ds_unwind_callee through `through`: the frames found by
 * frame pointer are marked, and the rest unwinds to main. */
static void check_through(const struct pr_stack *st, const void *code, size_t len)
{
	size_t i;
	bool main_reached = false;

	ck_assert_uint_ge(st->nr, 5);
	ck_assert_str_eq(name_of(&st->frames[0]), "ds_unwind_capture");
	ck_assert_str_eq(name_of(&st->frames[1]), "ds_unwind_callee");
	ck_assert_msg(frame_in(st, 2, code, len), "frame 2 at 0x%llx is not in the code "
		      "without CFI", (unsigned long long)st->frames[2].ip);
	ck_assert_uint_eq(st->frames[2].flags & PR_FRAME_FP, 0);
	/* Its caller was found through the frame pointer, and says so. */
	ck_assert_str_eq(name_of(&st->frames[3]), "ds_unwind_via");
	ck_assert(st->frames[3].flags & PR_FRAME_FP);
	for (i = 4; i < st->nr; i++) {
		ck_assert_uint_eq(st->frames[i].flags & PR_FRAME_FP, 0);
		main_reached |= !strcmp(name_of(&st->frames[i]), "main");
	}
	ck_assert(main_reached);
	ck_assert_msg(st->end == PR_END_OUTERMOST, "ended: %s", pr_stack_end_name(st->end));
}

/* Unwind the snapshot taken through `code`, then again without following
 * frame pointers, which must end at it as `strict_end` says.  The path of
 * the mapping `code` is in. */
static char *unwind_through(const void *code, size_t len, enum pr_stack_end strict_end)
{
	struct replay r;
	struct pr_stack st;
	struct pr_unwinder *strict;
	char *path;

	replay_init(&r, &snap, snap.size, 0);
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	check_through(&st, code, len);
	ck_assert_ptr_nonnull(st.frames[2].dso);
	path = strdup(pr_dso_path(st.frames[2].dso));
	strict = new_unwinder(r.model, 0, NO_FRAME_POINTERS);
	ck_assert_int_eq(pr_unwinder_unwind(strict, &r.rec, &st), 0);
	ck_assert_uint_eq(st.nr, 3);
	ck_assert_int_eq(st.end, strict_end);
	pr_unwinder_free(strict);
	replay_free(&r);
	return path;
}

START_TEST(code_without_cfi_is_crossed_by_frame_pointer)
{
	char *path;

	ds_unwind_via(ds_unwind_nocfi);
	path = unwind_through((const void *)(uintptr_t)ds_unwind_nocfi, 16,
			      PR_END_NO_UNWIND_INFO);
	ck_assert_int_eq(path[0], '/');
	free(path);
}
END_TEST

START_TEST(jit_code_is_crossed_by_frame_pointer)
{
	void *jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *path;

	ck_assert_ptr_ne(jit, MAP_FAILED);
	memcpy(jit, jit_code, sizeof(jit_code));
	ck_assert_int_eq(mprotect(jit, 4096, PROT_READ | PROT_EXEC), 0);
	ds_unwind_via((void (*)(void (*)(void)))(uintptr_t)jit);
	/* The model learns of the mapping as a capture would: from /proc. */
	path = unwind_through(jit, sizeof(jit_code), PR_END_NO_MAPPING);
	ck_assert_str_eq(path, "//anon");
	free(path);
	munmap(jit, 4096);
}
END_TEST

/* Copy `from` to `to`; false on failure. */
static bool copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
	char buf[65536];
	size_t n;
	bool ok = in && out;

	while (ok && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		ok = fwrite(buf, 1, n, out) == n;
	if (in)
		fclose(in);
	if (out && fclose(out))
		ok = false;
	return ok;
}

/* A library deleted after it was loaded, another file put at its path:
 * the unwinder reads the file mapped, through /proc/PID/map_files. */
START_TEST(a_deleted_and_replaced_library_still_resolves)
{
	const char *lib = getenv("DS_UNWIND_LIB");
	char path[] = "/tmp/ds-unwind-lib-XXXXXX";
	void (*call)(void (*)(void));
	struct replay r;
	struct pr_stack st;
	bool main_reached = false;
	void *h;
	int fd;

	ck_assert_msg(lib != NULL, "DS_UNWIND_LIB is not set (meson test sets it)");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert(copy_file(lib, path));
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(h != NULL, "%s", dlerror());
	call = (void (*)(void (*)(void)))(uintptr_t)dlsym(h, "ds_unwind_lib_call");
	ck_assert(call != NULL);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert(copy_file("/proc/self/exe", path));
	call(ds_unwind_callee);
	replay_init(&r, &snap, snap.size, 0);
	ck_assert_int_eq(pr_unwinder_unwind(r.u, &r.rec, &st), 0);
	ck_assert_uint_ge(st.nr, 4);
	ck_assert_str_eq(name_of(&st.frames[1]), "ds_unwind_callee");
	ck_assert_str_eq(name_of(&st.frames[2]), "ds_unwind_lib_call");
	ck_assert_ptr_nonnull(strstr(pr_dso_path(st.frames[2].dso), "ds-unwind-lib-"));
	for (size_t i = 0; i < st.nr; i++) {
		ck_assert_uint_eq(st.frames[i].flags & PR_FRAME_FP, 0);
		main_reached |= !strcmp(name_of(&st.frames[i]), "main");
	}
	ck_assert(main_reached);
	ck_assert_msg(st.end == PR_END_OUTERMOST, "ended: %s", pr_stack_end_name(st.end));
	replay_free(&r);
	unlink(path);
	dlclose(h);
}
END_TEST

/* The caller of a leaf that popped its return address has the leaf's
 * stack pointer: not a frame that fails to move up the stack. */
START_TEST(a_return_address_in_a_register_unwinds)
{
	struct replay r;
	struct pr_stack st;

	unwind_taken(ds_unwind_popra_caller, WHOLE_STACK, 0, &r, &st);
	ck_assert_uint_ge(st.nr, 3);
	ck_assert_str_eq(name_of(&st.frames[0]), "ds_unwind_popra");
	ck_assert_str_eq(name_of(&st.frames[1]), "ds_unwind_popra_caller");
	assert_reaches_main(&r, &st, 2);
	replay_free(&r);
}
END_TEST

/* JIT code that keeps no frame pointer (sub $24, %rsp; call *%rdi;
 * add $24, %rsp; ret), whose runtime wrote its unwind information into
 * the process's jitdump: unwound by it, so the caller is found, not
 * skipped, and with frame pointers not followed at all. */
static const unsigned char jit_nofp_code[11] = {
	0x48, 0x83, 0xec, 0x18, 0xff, 0xd7, 0x48, 0x83, 0xc4, 0x18, 0xc3,
};

static uint64_t jitdump_bytes(const struct pr_unwinder *u)
{
	struct pr_unwind_stats st = { .sz = sizeof(st) };

	ck_assert_int_eq(pr_unwinder_stats(u, &st), 0);
	return st.jitdump_bytes;
}

/* Every thread of the replayed process exits, as EXIT records say. */
static void exit_process(struct replay *r)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/task", r->rec.pid);
	d = opendir(path);
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d))) {
		struct pr_record e = { .type = PR_RECORD_EXIT, .pid = r->rec.pid };

		if (de->d_name[0] == '.')
			continue;
		e.tid = (uint32_t)strtoul(de->d_name, NULL, 10);
		ck_assert_int_eq(pr_model_apply(r->model, &e), 0);
	}
	closedir(d);
}

START_TEST(jit_code_is_unwound_by_the_unwind_information_in_its_jitdump)
{
	/* CFA = %rsp + 32 from the call on, %rsp + 8 again after the add. */
	static const unsigned char insns[] = { 0x44, 0x0e, 0x20, 0x46, 0x0e, 0x08 };
	void *jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char dir[] = "/tmp/ds-jitcfi-XXXXXX", path[64];
	size_t len, hdr_len;
	unsigned char *eh;
	struct jdw w;
	void *marker;
	int fd;

	ck_assert_ptr_ne(jit, MAP_FAILED);
	memcpy(jit, jit_nofp_code, sizeof(jit_nofp_code));
	ck_assert_int_eq(mprotect(jit, 4096, PROT_READ | PROT_EXEC), 0);
	/* The runtime's jitdump, mapped as its marker. */
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	eh = jdw_eh_frame((uintptr_t)jit, sizeof(jit_nofp_code), insns, sizeof(insns), &len,
			  &hdr_len);
	jdw_header(&w, (uint32_t)getpid(), false);
	jdw_unwind(&w, 1, eh, len, hdr_len);
	jdw_load_code(&w, 2, (uintptr_t)jit, jit_nofp_code, sizeof(jit_nofp_code), 1, "nofp");
	free(eh);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, w.buf, w.len), (ssize_t)w.len);
	marker = mmap(NULL, w.len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	ck_assert_ptr_ne(marker, MAP_FAILED);
	close(fd);
	free(w.buf);
	ds_unwind_via((void (*)(void (*)(void)))(uintptr_t)jit);
	for (unsigned flags = 0; flags <= NO_FRAME_POINTERS; flags += NO_FRAME_POINTERS) {
		struct replay r;
		struct pr_stack st;
		struct pr_unwinder *u;

		replay_init(&r, &snap, snap.size, 0);
		u = new_unwinder(r.model, 0, flags);
		ck_assert_int_eq(pr_unwinder_unwind(u, &r.rec, &st), 0);
		ck_assert_msg(st.nr >= 5, "flags %u: %zu frames, ended: %s (%d)", flags, st.nr,
			      pr_stack_end_name(st.end), st.error);
		ck_assert_str_eq(name_of(&st.frames[1]), "ds_unwind_callee");
		ck_assert_msg(frame_in(&st, 2, jit, sizeof(jit_nofp_code)),
			      "frame 2 at 0x%llx is not in the JIT code",
			      (unsigned long long)st.frames[2].ip);
		ck_assert_str_eq(name_of(&st.frames[3]), "ds_unwind_via");
		for (size_t i = 0; i < st.nr; i++)
			ck_assert_uint_eq(st.frames[i].flags & PR_FRAME_FP, 0);
		assert_reaches_main(&r, &st, 4);
		ck_assert_msg(st.end == PR_END_OUTERMOST, "ended: %s", pr_stack_end_name(st.end));
		/* Held while the process is; its exit, and a trim, drop it
		 * (an agent sees runtimes come and go). */
		ck_assert_uint_ge(jitdump_bytes(u), w.len);
		ck_assert_int_eq(pr_model_trim(r.model, 0), 0);
		ck_assert_uint_ge(jitdump_bytes(u), w.len);
		exit_process(&r);
		ck_assert_int_eq(pr_model_trim(r.model, 0), 0);
		ck_assert_uint_eq(jitdump_bytes(u), 0);
		pr_unwinder_free(u);
		replay_free(&r);
	}
	munmap(marker, w.len);
	unlink(path);
	rmdir(dir);
	munmap(jit, 4096);
}
END_TEST

void add_nocfi_tests(TCase *tc)
{
	tcase_add_test(tc, code_without_cfi_is_crossed_by_frame_pointer);
	tcase_add_test(tc, jit_code_is_crossed_by_frame_pointer);
	tcase_add_test(tc, jit_code_is_unwound_by_the_unwind_information_in_its_jitdump);
	tcase_add_test(tc, a_return_address_in_a_register_unwinds);
	tcase_add_test(tc, a_deleted_and_replaced_library_still_resolves);
}
