/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The perf.data tests' fixtures, shared by their files
 * (perfdata-fixture.c): files written into a directory of the test's own,
 * records built to write into them, and the log the reader leaves.
 */
#ifndef DS_TEST_PERFDATA_FIXTURE_H
#define DS_TEST_PERFDATA_FIXTURE_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "records/records.h"
#include "perfdata/perfdata.h"
#include "capture/synth.h"

/* No such process: the writer cannot read its /proc/PID/map_files and
 * falls back to the mapped file's path. */
#define GHOST_PID 0x7ffffff0u

/* What keep_log() was handed, each message on a line; tests clear it. */
extern char logtext[16384];
void keep_log(enum pr_log_level level, const char *msg, void *ctx);

/* The event every test file records: cpu-clock with a shared ring. */
struct perf_event_attr test_attr(void);
void put_sample(struct synth *s, uint32_t pid, uint64_t ip, uint64_t t);
void put_sample_of(struct synth *s, uint64_t id, uint16_t misc, uint32_t pid,
		   uint64_t ip, uint64_t t);
void put_switch(struct synth *s, uint64_t id, uint16_t misc, uint32_t pid, uint64_t t);
void put_mmap2_prot(struct synth *s, uint32_t pid, uint64_t addr, uint64_t len,
		    const char *path, uint64_t t, uint32_t prot);
void put_mmap2(struct synth *s, uint32_t pid, uint64_t addr, uint64_t len,
	       const char *path, uint64_t t);
void write_built(struct pr_writer *w, const struct synth *s, size_t from);

/* The checked fixture's teardown: removes what the test wrote. */
void remove_tmpdir(void);
struct pr_writer *test_writer(const char *name, const char **path);
/* `name` in the test's own directory (made on first use). */
const char *tmp_path(const char *name);
const char *write_small_file(void);
/* Open `len` bytes at `buf` as a perf.data file: in memory, or (by_path)
 * written to a file of the test's own and opened by its path, whose
 * records are read into windows. */
struct pr_file *open_bytes(const unsigned char *buf, size_t len, bool by_path,
			   const struct pr_file_opts *opts);
/* The bytes of the file at `path`, in a buffer the caller frees. */
unsigned char *file_bytes(const char *path, size_t *len);
/* write_small_file()'s bytes, in a buffer the caller frees, and its
 * header in *h. */
unsigned char *small_copy(size_t *len, struct perfdata_header *h);

/* A pr_file_consume() callback counting records into the int at `arg`. */
int count_cb(const struct pr_record *rec, void *arg);

/* The damaged-file tests (test-perfdata-damage.c). */
void add_damage_tests(TCase *tc);
/* perf record -z files (test-perfdata-zstd.c). */
void add_zstd_tests(TCase *tc);

#endif
