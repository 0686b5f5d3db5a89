/* SPDX-License-Identifier: Apache-2.0 */
/* The symbolizer on JIT code a jitdump describes (written by
 * jitdump-writer.h), beside the process's perf map. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jitdump-writer.h"
#include "mkrecord.h"
#include "model/model.h"
#include "prquality.h"
#include "prsession.h"
#include "prsym.h"
#include "sym-test.h"
#include "symbolize.h"
#include "symbols/symbolizer.h"

#define CODE 0x7f0000000000ull

/* A model of `pid` with JIT code at CODE and the jitdump `path` mapped as
 * the runtime maps it (its device and inode as the kernel reports them). */
static struct pr_model *jit_model(uint32_t pid, const char *path)
{
	struct pr_model *m = pr_model_new(NULL);
	struct pr_record code = mmap2(pid, CODE, 0x100000, 0, "//anon");
	struct pr_record marker = mmap2(pid, 0x7f1000000000ull, 0x1000, 0, path);
	struct stat st;

	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(stat(path, &st), 0);
	marker.u.mmap.maj = major(st.st_dev);
	marker.u.mmap.min = minor(st.st_dev);
	marker.u.mmap.ino = st.st_ino;
	ck_assert_int_eq(pr_model_apply(m, &code), 0);
	ck_assert_int_eq(pr_model_apply(m, &marker), 0);
	return m;
}

static struct pr_frame jit_frame(struct pr_model *m, uint32_t pid, uint64_t ip)
{
	return (struct pr_frame){ .ip = ip, .dso_ip = ip, .dso = pr__model_find(m, pid, ip)->dso };
}

/* Where a runtime of `pid` running in the tests' directory puts it. */
static void jitdump_path(char *path, size_t size, uint32_t pid)
{
	char name[32];

	snprintf(name, sizeof(name), "jit-%u.dump", pid);
	snprintf(path, size, "%s", tmp_path(name));
}

static void write_jitdump(const char *path, uint32_t pid, bool swap)
{
	static const struct jdw_line lines[] = {
		{ CODE + 0x1000, 3, "/app/app.js" },
		{ CODE + 0x1020, 4, NULL },
	};
	struct jdw w;

	jdw_header(&w, pid, swap);
	jdw_debug(&w, 1, CODE + 0x1000, lines, 2);
	jdw_load(&w, 2, CODE + 0x1000, 0x100, 1, "JS:*hot /app/app.js:3:1", 0xcc);
	jdw_load(&w, 3, CODE + 0x2000, 0x40, 2, "Builtin:ArgumentsAdaptor", 0xcc);
	write_file(path, w.buf, w.len);
	free(w.buf);
}

/* The runtime appends a load of `name` to its jitdump at `path`. */
static void append_load(const char *path, bool swap, uint64_t addr, size_t size,
			uint64_t index, const char *name)
{
	struct jdw w = { .swap = swap };
	FILE *f = fopen(path, "a");

	ck_assert_ptr_nonnull(f);
	jdw_load(&w, 4, addr, size, index, name, 0xcc);
	ck_assert_uint_eq(fwrite(w.buf, 1, w.len, f), w.len);
	ck_assert_int_eq(fclose(f), 0);
	free(w.buf);
}

START_TEST(a_jitdump_names_jit_code_with_lines_before_the_perf_map)
{
	uint32_t pid = (uint32_t)getpid();
	char dump[256], map[64];
	struct pr_model *m;
	struct pr_symbolizer *s;
	struct pr_symbol sym;
	struct pr_frame f;

	/* A runtime's jitdump in its working directory, as node writes it. */
	jitdump_path(dump, sizeof(dump), pid);
	write_jitdump(dump, pid, _i);
	snprintf(map, sizeof(map), "/tmp/perf-%u.map", pid);
	write_text(map, "7f0000001000 100 perf-map-name\n7f0000003000 10 only-in-the-map\n");
	m = jit_model(pid, dump);
	s = symbolizer(m, false);
	f = jit_frame(m, pid, CODE + 0x1030);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &f, &sym), 0);
	ck_assert_str_eq(sym.name, "JS:*hot /app/app.js:3:1");
	ck_assert_uint_eq(sym.offset, 0x30);
	ck_assert_str_eq(sym.module, dump);
	ck_assert_int_eq(sym.source, PR_SYM_JITDUMP);
	ck_assert_uint_eq(sym.nr, 1);
	ck_assert_str_eq(sym.funcs[0].name, "JS:*hot /app/app.js:3:1");
	ck_assert_str_eq(sym.funcs[0].file, "/app/app.js");
	ck_assert_uint_eq(sym.funcs[0].line, 4);
	/* What the jitdump does not name, the perf map may. */
	f = jit_frame(m, pid, CODE + 0x3004);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &f, &sym), 0);
	ck_assert_str_eq(sym.name, "only-in-the-map");
	ck_assert_int_eq(sym.source, PR_SYM_PERF_MAP);

	/* Code the runtime compiled since: read on a miss. */
	s->perf_map_reread_ns = 0;
	f = jit_frame(m, pid, CODE + 0x5008);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &f, &sym), 0);
	ck_assert_ptr_null(sym.name);
	append_load(dump, _i, CODE + 0x5000, 0x10, 3, "JS:~later /app/app.js:9:1");
	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &f, &sym), 0);
	ck_assert_str_eq(sym.name, "JS:~later /app/app.js:9:1");
	ck_assert_uint_eq(sym.offset, 8);
	ck_assert_uint_eq(sym.nr, 0);
	/* Named before, named the same. */
	f = jit_frame(m, pid, CODE + 0x2000);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &f, &sym), 0);
	ck_assert_str_eq(sym.name, "Builtin:ArgumentsAdaptor");
	pr_symbolizer_free(s);
	pr_model_free(m);
	unlink(map);
	unlink(dump);
}
END_TEST

/* A recorded process, named from its jitdump on the host after it is
 * gone: perf record's capture, reported without perf inject. */
START_TEST(a_gone_process_is_named_from_the_very_jitdump_it_mapped)
{
	char dump[256], other[300];
	struct pr_model *m;
	struct pr_symbolizer *s;
	struct pr_symbol sym;
	struct pr_frame f;
	pid_t child = fork();
	uint32_t pid;
	int status;

	ck_assert_int_ge(child, 0);
	if (!child)
		_exit(0);
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	pid = (uint32_t)child;
	jitdump_path(dump, sizeof(dump), pid);
	write_jitdump(dump, pid, false);
	m = jit_model(pid, dump);
	/* A replay reads the path. */
	{
		PR_OPTS(pr_symbolizer_opts, o, .log = keep_log);

		s = pr_symbolizer_new(m, &o);
	}
	ck_assert_ptr_nonnull(s);
	f = jit_frame(m, pid, CODE + 0x1004);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &f, &sym), 0);
	ck_assert_str_eq(sym.name, "JS:*hot /app/app.js:3:1");
	pr_symbolizer_free(s);
	/* Live, the process gone: the host's file, being the one mapped. */
	s = symbolizer(m, false);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &f, &sym), 0);
	ck_assert_str_eq(sym.name, "JS:*hot /app/app.js:3:1");
	pr_symbolizer_free(s);
	/* ... and not another file put at the path since. */
	snprintf(other, sizeof(other), "%s.new", dump);
	write_jitdump(other, pid, false);
	ck_assert_int_eq(rename(other, dump), 0);
	s = symbolizer(m, false);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &f, &sym), 0);
	ck_assert_ptr_null(sym.name);
	pr_symbolizer_free(s);
	pr_model_free(m);
	unlink(dump);
}
END_TEST

START_TEST(a_fifo_or_damaged_jitdump_leaves_the_perf_map_to_name_the_code)
{
	uint32_t pid = (uint32_t)getpid();
	char dump[256], map[64];
	struct pr_model *m;
	struct pr_symbolizer *s;
	struct pr_symbol sym;
	struct pr_frame f;

	jitdump_path(dump, sizeof(dump), pid);
	snprintf(map, sizeof(map), "/tmp/perf-%u.map", pid);
	write_text(map, "7f0000001000 100 perf-map-name\n");
	/* Not a jitdump at all. */
	write_text(dump, "this is no jitdump, though long enough to have a header\n");
	m = jit_model(pid, dump);
	logtext[0] = 0;
	s = symbolizer(m, false);
	f = jit_frame(m, pid, CODE + 0x1004);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &f, &sym), 0);
	ck_assert_str_eq(sym.name, "perf-map-name");
	ck_assert_msg(strstr(logtext, "not a jitdump"), "%s", logtext);
	pr_symbolizer_free(s);
	pr_model_free(m);
	/* A FIFO: refused at once, no wait for a writer. */
	unlink(dump);
	write_text(dump, "");
	m = jit_model(pid, dump);
	unlink(dump);
	ck_assert_int_eq(mkfifo(dump, 0600), 0);
	s = symbolizer(m, false);
	f = jit_frame(m, pid, CODE + 0x1004);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &f, &sym), 0);
	ck_assert_str_eq(sym.name, "perf-map-name");
	pr_symbolizer_free(s);
	pr_model_free(m);
	unlink(dump);
	unlink(map);
}
END_TEST

/* The quality report counts as unnamed only the JIT frames still
 * unnamed at the end of the run, once node has written its jitdump out. */
START_TEST(jit_frames_named_at_the_end_are_not_reported_unnamed)
{
	uint32_t pid = (uint32_t)getpid();
	char dump[256], *text = NULL;
	size_t len = 0;
	struct pr_model *m;
	struct pr_symbolizer *s;
	struct pr_quality *q = pr_quality_new(NULL);
	struct pr_sink sink;
	struct pr_frame f;
	struct pr_record rec = { .type = PR_RECORD_SAMPLE, .pid = pid, .tid = pid };
	struct pr_stack st = { .frames = &f, .nr = 1, .end = PR_END_OUTERMOST };
	struct pr_sink_sample smp = { .rec = &rec, .st = &st, .process = "node" };
	struct jdw w;
	FILE *out;

	jitdump_path(dump, sizeof(dump), pid);
	jdw_header(&w, pid, false);
	write_file(dump, w.buf, w.len);
	m = jit_model(pid, dump);
	s = symbolizer(m, false);
	f = jit_frame(m, pid, CODE + 0x1004);
	smp.sym = s;
	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(pr_quality_sink(q, &sink), 0);
	ck_assert_int_eq(sink.sample(sink.ctx, &smp), 0);
	ck_assert_int_eq(sink.sample(sink.ctx, &smp), 0);
	out = open_memstream(&text, &len);
	ck_assert_int_eq(pr_quality_report(q, out, NULL), 1);
	fclose(out);
	ck_assert_msg(strstr(text, "[code in no file] of node"), "%s", text);
	free(text);
	free(w.buf);
	/* node exits: its buffer written out. */
	append_load(dump, false, CODE + 0x1000, 0x100, 1, "JS:*hot /app/app.js:3:1");
	ck_assert_int_eq(sink.finish(sink.ctx, 0), 0);
	text = NULL;
	out = open_memstream(&text, &len);
	pr_quality_report(q, out, NULL);
	fclose(out);
	ck_assert_str_eq(text, "");
	free(text);
	pr_quality_free(q);
	pr_symbolizer_free(s);
	pr_model_free(m);
	unlink(dump);
}
END_TEST

/* A jitdump carried with the capture (record's copy), the file gone. */
START_TEST(a_carried_jitdump_names_the_code_without_its_file)
{
	uint32_t pid = (uint32_t)getpid();
	char dump[256];
	struct pr_model *m;
	struct pr_symbolizer *s;
	struct pr_symbol sym;
	struct pr_frame f;
	struct jdw w;

	jitdump_path(dump, sizeof(dump), pid);
	write_jitdump(dump, pid, false);
	m = jit_model(pid, dump);
	w.swap = false;
	jdw_header(&w, pid, false);
	jdw_load(&w, 2, CODE + 0x1000, 0x100, 1, "JS:*carried /app/app.js:3:1", 0xcc);
	unlink(dump);
	s = symbolizer(m, false);
	ck_assert_int_eq(pr__sym_jitdump_carried(s, pid, dump, w.buf, w.len), 0);
	free(w.buf);
	f = jit_frame(m, pid, CODE + 0x1004);
	f.proc_serial = pr__model_proc(m, pid, false)->serial;
	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &f, &sym), 0);
	ck_assert_str_eq(sym.name, "JS:*carried /app/app.js:3:1");
	ck_assert_str_eq(sym.module, dump);
	/* A miss reads no file, not even one back at the path (that one
	 * names CODE + 0x2000). */
	write_jitdump(dump, pid, false);
	s->perf_map_reread_ns = 0;
	f = jit_frame(m, pid, CODE + 0x2004);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &f, &sym), 0);
	ck_assert_ptr_null(sym.name);
	pr_symbolizer_free(s);
	pr_model_free(m);
	unlink(dump);
}
END_TEST

/* In a container, a process knows itself by its pid in its namespace:
 * the jitdump it maps is jit-1.dump, its other maps no jitdump. */
START_TEST(a_containers_jitdump_is_found_by_the_pid_it_knows_itself_by)
{
	uint32_t pid = (uint32_t)getpid();
	char dump[256];
	struct pr_model *m;
	struct pr_symbolizer *s;
	struct pr_symbol sym;
	struct pr_frame f;
	struct pr_record other = mmap2(pid, 0x7f2000000000ull, 0x1000, 0, "/app/jit-x.dump");

	snprintf(dump, sizeof(dump), "%s", tmp_path("jit-1.dump"));
	write_jitdump(dump, pid, false);
	m = jit_model(pid, dump);
	ck_assert_int_eq(pr_model_apply(m, &other), 0);
	s = symbolizer(m, false);
	f = jit_frame(m, pid, CODE + 0x1004);
	ck_assert_int_eq(pr_symbolizer_symbolize(s, pid, &f, &sym), 0);
	ck_assert_str_eq(sym.name, "JS:*hot /app/app.js:3:1");
	ck_assert_str_eq(sym.module, dump);
	pr_symbolizer_free(s);
	pr_model_free(m);
	unlink(dump);
}
END_TEST

TCase *symbolize_jitdump_tests(void)
{
	TCase *tc = tcase_create("jitdump");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, a_jitdump_names_jit_code_with_lines_before_the_perf_map, 0, 2);
	tcase_add_test(tc, a_gone_process_is_named_from_the_very_jitdump_it_mapped);
	tcase_add_test(tc, a_fifo_or_damaged_jitdump_leaves_the_perf_map_to_name_the_code);
	tcase_add_test(tc, jit_frames_named_at_the_end_are_not_reported_unnamed);
	tcase_add_test(tc, a_carried_jitdump_names_the_code_without_its_file);
	tcase_add_test(tc, a_containers_jitdump_is_found_by_the_pid_it_knows_itself_by);
	return tc;
}
