/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The process model: mappings kept current from MMAP2, FORK, EXIT, COMM
 * and SAMPLE records, as the kernel's address spaces change.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "checkmain.h"
#include "model/model.h"
#include "mkrecord.h"

static void apply(struct pr_model *m, struct pr_record r)
{
	ck_assert_int_eq(pr__model_apply(m, &r), 0);
}

static const char *file_at(struct pr_model *m, uint32_t pid, uint64_t addr)
{
	const struct pr_map *map = pr__model_find(m, pid, addr);

	return map ? map->dso->path : NULL;
}

START_TEST(a_mapping_over_others_trims_and_splits_them)
{
	struct pr_model *m = pr__model_new();
	const struct pr_map *x;

	apply(m, mmap2(1, 0x1000, 0x9000, 0, "/a"));      /* [0x1000, 0xa000) */
	apply(m, mmap2(1, 0x3000, 0x2000, 0, "/b"));      /* punches [0x3000, 0x5000) */
	ck_assert_str_eq(file_at(m, 1, 0x2fff), "/a");
	ck_assert_str_eq(file_at(m, 1, 0x3000), "/b");
	ck_assert_str_eq(file_at(m, 1, 0x4fff), "/b");
	ck_assert_str_eq(file_at(m, 1, 0x5000), "/a");
	/* The tail of /a keeps its file offset. */
	x = pr__model_find(m, 1, 0x5000);
	ck_assert_uint_eq(x->start, 0x5000);
	ck_assert_uint_eq(x->pgoff, 0x4000);
	ck_assert_ptr_null(file_at(m, 1, 0xa000));
	ck_assert_ptr_null(file_at(m, 1, 0xfff));
	/* Covering several at once. */
	apply(m, mmap2(1, 0x2000, 0x7000, 0x100000, "/c"));
	ck_assert_str_eq(file_at(m, 1, 0x1fff), "/a");
	ck_assert_str_eq(file_at(m, 1, 0x2000), "/c");
	ck_assert_str_eq(file_at(m, 1, 0x8fff), "/c");
	ck_assert_str_eq(file_at(m, 1, 0x9000), "/a");
	/* The same file is one DSO however often it is mapped. */
	apply(m, mmap2(1, 0x20000, 0x1000, 0, "/a"));
	ck_assert_ptr_eq(pr__model_find(m, 1, 0x20000)->dso, pr__model_find(m, 1, 0x1000)->dso);
	pr__model_free(m);
}
END_TEST

/* An MMAP2 of `path` carrying build-id byte `id` (20 bytes of it). */
static struct pr_record mmap2_id(uint32_t pid, uint64_t addr, const char *path, uint8_t id)
{
	struct pr_record r = mmap2(pid, addr, 0x1000, 0, path);

	r.u.mmap.has_build_id = true;
	r.u.mmap.build_id_size = 20;
	memset(r.u.mmap.build_id, id, 20);
	return r;
}

START_TEST(the_same_path_with_another_build_id_is_another_file)
{
	struct pr_model *m = pr__model_new();
	const uint8_t *id;

	/* A host's libc, then a container's at the same path (perf 6.x's
	 * records carry build-ids instead of device and inode). */
	apply(m, mmap2_id(1, 0x1000, "/lib/libc.so.6", 0xaa));
	apply(m, mmap2_id(2, 0x1000, "/lib/libc.so.6", 0xbb));
	apply(m, mmap2_id(3, 0x1000, "/lib/libc.so.6", 0xaa));
	ck_assert_ptr_ne(pr__model_find(m, 1, 0x1000)->dso, pr__model_find(m, 2, 0x1000)->dso);
	ck_assert_uint_eq(pr_dso_build_id(pr__model_find(m, 2, 0x1000)->dso, &id), 20);
	ck_assert_uint_eq(id[0], 0xbb);
	ck_assert_ptr_eq(pr__model_find(m, 1, 0x1000)->dso, pr__model_find(m, 3, 0x1000)->dso);
	pr__model_free(m);
}
END_TEST

START_TEST(a_forked_process_copies_its_parents_mappings_and_name)
{
	struct pr_model *m = pr__model_new();

	apply(m, comm(10, 10, "parent", false));
	apply(m, mmap2(10, 0x1000, 0x1000, 0, "/lib"));
	apply(m, task(PR_RECORD_FORK, 20, 10, 20, 10));
	ck_assert_str_eq(file_at(m, 20, 0x1000), "/lib");
	ck_assert_str_eq(pr__model_comm(m, 20), "parent");
	/* Later changes are each process's own. */
	apply(m, mmap2(20, 0x1000, 0x1000, 0, "/other"));
	ck_assert_str_eq(file_at(m, 10, 0x1000), "/lib");
	ck_assert_str_eq(file_at(m, 20, 0x1000), "/other");
	/* exec replaces the child's address space and name.  Until the new
	 * image is seen running, samples taken inside exec still resolve
	 * in the old one, second to the new image's mappings. */
	apply(m, comm(20, 20, "child", true));
	ck_assert_str_eq(pr__model_comm(m, 20), "child");
	ck_assert_str_eq(pr__model_comm(m, 10), "parent");
	ck_assert_str_eq(file_at(m, 20, 0x1000), "/other");
	apply(m, mmap2(20, 0x5000, 0x1000, 0, "/new"));
	apply(m, mmap2(20, 0x1800, 0x100, 0, "/new2"));
	ck_assert_str_eq(file_at(m, 20, 0x1800), "/new2");
	ck_assert_str_eq(file_at(m, 20, 0x1000), "/other");
	apply(m, sample_at(20, 0x1000));
	ck_assert_str_eq(file_at(m, 20, 0x1000), "/other");
	apply(m, sample_at(20, 0x5010));
	ck_assert_ptr_null(file_at(m, 20, 0x1000));
	ck_assert_str_eq(file_at(m, 20, 0x5010), "/new");
	pr__model_free(m);
}
END_TEST

/* A sample whose user registers (or, without them, whose user-mode ip)
 * lie in the image exec loaded retires the image before: the model alone
 * decides it, from the records it is fed, with no unwinder about. */
START_TEST(a_sample_in_the_new_image_retires_the_one_before_exec)
{
	struct pr_model *m = pr__model_new();
	struct pr_record r;
	uint64_t user_ip, gen;

	apply(m, comm(50, 50, "sh", false));
	apply(m, mmap2(50, 0x1000, 0x1000, 0, "/bin/sh"));
	apply(m, comm(50, 50, "app", true));
	apply(m, mmap2(50, 0x400000, 0x1000, 0, "/app"));
	ck_assert_str_eq(file_at(m, 50, 0x1010), "/bin/sh");
	/* In the kernel, with no user registers: says nothing of either. */
	r = sample_at(50, 0xffffffff81000010ull);
	r.misc = PERF_RECORD_MISC_KERNEL;
	apply(m, r);
	ck_assert_str_eq(file_at(m, 50, 0x1010), "/bin/sh");
	/* In the kernel, the user registers still in the old image (a
	 * sample taken inside exec). */
	user_ip = 0x1010;
	r.u.sample.regs_abi = PERF_SAMPLE_REGS_ABI_64;
	r.u.sample.regs_mask = UINT64_C(1) << PR_REG_IP;
	r.u.sample.regs = &user_ip;
	apply(m, r);
	ck_assert_str_eq(file_at(m, 50, 0x1010), "/bin/sh");
	/* Another process's sample in its own new image is not this one's. */
	apply(m, sample_at(51, 0x400010));
	ck_assert_str_eq(file_at(m, 50, 0x1010), "/bin/sh");
	/* The user registers in the new image: the old one is gone, and the
	 * process's generation says its mappings changed. */
	gen = pr__model_proc(m, 50, false)->generation;
	user_ip = 0x400010;
	apply(m, r);
	ck_assert_ptr_null(file_at(m, 50, 0x1010));
	ck_assert_str_eq(file_at(m, 50, 0x400010), "/app");
	ck_assert_uint_gt(pr__model_proc(m, 50, false)->generation, gen);
	pr__model_free(m);
}
END_TEST

/* Each process has a number of its own (what a frame's proc_serial
 * says): kept while its mappings change, new when it execs or when its
 * pid comes back as another process. */
START_TEST(a_process_keeps_its_serial_until_it_execs_or_its_pid_is_reused)
{
	struct pr_model *m = pr__model_new();
	uint32_t first, exec, other;

	apply(m, mmap2(60, 0x1000, 0x1000, 0, "/bin"));
	first = pr__model_proc(m, 60, false)->serial;
	ck_assert_uint_ne(first, 0);
	apply(m, mmap2(60, 0x8000, 0x1000, 0, "//anon"));
	ck_assert_uint_eq(pr__model_proc(m, 60, false)->serial, first);
	apply(m, mmap2(61, 0x1000, 0x1000, 0, "/bin"));
	other = pr__model_proc(m, 61, false)->serial;
	ck_assert_uint_ne(other, first);
	apply(m, comm(60, 60, "node", true));
	exec = pr__model_proc(m, 60, false)->serial;
	ck_assert_uint_ne(exec, first);
	ck_assert_uint_ne(exec, other);
	apply(m, task(PR_RECORD_EXIT, 60, 60, 60, 60));
	ck_assert_ptr_null(pr__model_proc(m, 60, false));
	apply(m, mmap2(60, 0x1000, 0x1000, 0, "/bin"));
	ck_assert_uint_ne(pr__model_proc(m, 60, false)->serial, exec);
	ck_assert_uint_ne(pr__model_proc(m, 60, false)->serial, first);
	pr__model_free(m);
}
END_TEST

START_TEST(a_process_lives_until_its_last_thread_exits)
{
	struct pr_model *m = pr__model_new();

	apply(m, comm(30, 30, "main", false));
	apply(m, mmap2(30, 0x1000, 0x1000, 0, "/bin"));
	apply(m, task(PR_RECORD_FORK, 30, 30, 31, 30));   /* a thread */
	ck_assert_str_eq(pr__model_comm(m, 31), "main");
	/* pthread_exit in main: the other thread runs on. */
	apply(m, task(PR_RECORD_EXIT, 30, 30, 30, 30));
	ck_assert_str_eq(file_at(m, 30, 0x1000), "/bin");
	apply(m, task(PR_RECORD_EXIT, 30, 30, 31, 30));
	ck_assert_ptr_null(file_at(m, 30, 0x1000));
	/* A process whose threads were never announced ends with its main
	 * thread. */
	apply(m, mmap2(40, 0x1000, 0x1000, 0, "/bin"));
	apply(m, task(PR_RECORD_EXIT, 40, 40, 41, 40));
	ck_assert_str_eq(file_at(m, 40, 0x1000), "/bin");
	apply(m, task(PR_RECORD_EXIT, 40, 40, 40, 40));
	ck_assert_ptr_null(file_at(m, 40, 0x1000));
	pr__model_free(m);
}
END_TEST

/* A task runs on after its EXIT record, finishing its exit in the
 * kernel, and may be sampled there: it keeps its name for that, until
 * 64 threads exited after it or its tid is taken again. */
START_TEST(a_thread_that_exited_keeps_its_name_for_its_last_samples)
{
	struct pr_model *m = pr__model_new();
	char name[16];

	apply(m, comm(50, 50, "churn-000", true));
	apply(m, task(PR_RECORD_FORK, 50, 50, 51, 50));
	apply(m, comm(50, 51, "worker", false));
	apply(m, task(PR_RECORD_EXIT, 50, 50, 51, 50));
	apply(m, task(PR_RECORD_EXIT, 50, 50, 50, 50));
	ck_assert_ptr_null(pr__model_proc(m, 50, false));
	ck_assert_str_eq(pr__model_comm(m, 50), "churn-000");
	ck_assert_str_eq(pr__model_comm(m, 51), "worker");
	/* Its tid taken again: the new thread's name. */
	apply(m, task(PR_RECORD_FORK, 51, 1, 51, 1));
	apply(m, comm(51, 51, "next", true));
	ck_assert_str_eq(pr__model_comm(m, 51), "next");
	/* 64 threads later, forgotten. */
	for (uint32_t i = 0; i < 63; i++) {
		snprintf(name, sizeof(name), "t%u", i);
		apply(m, comm(100 + i, 100 + i, name, true));
		apply(m, task(PR_RECORD_EXIT, 100 + i, 100 + i, 100 + i, 100 + i));
	}
	ck_assert_str_eq(pr__model_comm(m, 50), "churn-000");
	ck_assert_str_eq(pr__model_comm(m, 162), "t62");
	apply(m, comm(200, 200, "last", true));
	apply(m, task(PR_RECORD_EXIT, 200, 200, 200, 200));
	ck_assert_ptr_null(pr__model_comm(m, 50));
	ck_assert_str_eq(pr__model_comm(m, 200), "last");
	pr__model_free(m);
}
END_TEST

START_TEST(the_kernels_own_mapping_is_no_process)
{
	struct pr_model *m = pr__model_new();

	apply(m, mmap2(UINT32_MAX, 0xffffffff81000000ull, 0x1000000, 0, "[kernel.kallsyms]_text"));
	ck_assert_ptr_null(pr__model_proc(m, UINT32_MAX, false));
	/* Empty and wrapping mappings are ignored, not inserted. */
	apply(m, mmap2(5, 0x1000, 0, 0, "/x"));
	apply(m, mmap2(5, UINT64_MAX - 0xfff, 0x2000, 0, "/x"));
	ck_assert_ptr_null(file_at(m, 5, 0x1000));
	pr__model_free(m);
}
END_TEST

/* An MMAP record (old perf's) has no permissions: executable unless the
 * kernel flagged it as data, as the load bias needs to know. */
START_TEST(mmap_records_are_executable_unless_flagged_as_data)
{
	struct pr_model *m = pr__model_new();
	struct pr_record code = mmap2(1, 0x1000, 0x1000, 0, "/a");
	struct pr_record data = mmap2(1, 0x2000, 0x1000, 0x1000, "/a");

	code.type = data.type = PR_RECORD_MMAP;
	code.u.mmap.is_mmap2 = data.u.mmap.is_mmap2 = false;
	code.u.mmap.prot = data.u.mmap.prot = 0;
	data.misc = PERF_RECORD_MISC_MMAP_DATA;
	apply(m, code);
	apply(m, data);
	ck_assert_uint_eq(pr__model_find(m, 1, 0x1000)->prot, PROT_READ | PROT_EXEC);
	ck_assert_uint_eq(pr__model_find(m, 1, 0x2000)->prot, PROT_READ);
	pr__model_free(m);
}
END_TEST

START_TEST(the_idle_task_is_named_swapper_as_perf_names_it)
{
	struct pr_model *m = pr__model_new();

	/* No record announces thread 0; perf script calls it swapper. */
	ck_assert_str_eq(pr_model_comm(m, 0), "swapper");
	ck_assert_ptr_null(pr_model_comm(m, 7));
	pr__model_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("model");
	TCase *tc = tcase_create("maps");

	tcase_add_test(tc, a_mapping_over_others_trims_and_splits_them);
	tcase_add_test(tc, the_same_path_with_another_build_id_is_another_file);
	tcase_add_test(tc, a_forked_process_copies_its_parents_mappings_and_name);
	tcase_add_test(tc, a_sample_in_the_new_image_retires_the_one_before_exec);
	tcase_add_test(tc, a_process_keeps_its_serial_until_it_execs_or_its_pid_is_reused);
	tcase_add_test(tc, a_process_lives_until_its_last_thread_exits);
	tcase_add_test(tc, a_thread_that_exited_keeps_its_name_for_its_last_samples);
	tcase_add_test(tc, the_kernels_own_mapping_is_no_process);
	tcase_add_test(tc, mmap_records_are_executable_unless_flagged_as_data);
	tcase_add_test(tc, the_idle_task_is_named_swapper_as_perf_names_it);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
