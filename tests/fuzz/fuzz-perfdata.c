/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the perf.data reader: any bytes go to
 * pr_file_open_mem(), and everything a caller could touch afterwards is
 * touched, so AddressSanitizer sees every read the reader lets through.
 * See tests/fuzz/README.md.
 */
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perfreader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static void touch_record(const struct pr_record *rec)
{
	const struct pr_sample *s = &rec->u.sample;

	sink += rec->type + rec->time + rec->pid;
	switch (rec->type) {
	case PR_RECORD_SAMPLE:
		for (uint64_t i = 0; i < s->nr_callchain; i++)
			sink += s->callchain[i];
		if (s->stack && s->stack_dyn_size)
			sink += s->stack[0] + s->stack[s->stack_dyn_size - 1];
		if (s->regs) {
			uint64_t v;

			for (int r = 0; r < PR_REG_MAX; r++)
				if (!pr_sample_reg(s, (enum pr_reg)r, &v))
					sink += v;
		}
		if (s->raw && s->raw_size)
			sink += ((const uint8_t *)s->raw)[s->raw_size - 1];
		for (uint32_t i = 0; i < s->nr_read; i++) {
			uint64_t value, id;

			if (!pr_sample_read(s, i, &value, &id))
				sink += value + id;
		}
		break;
	case PR_RECORD_MMAP:
	case PR_RECORD_MMAP2:
		sink += strlen(rec->u.mmap.filename);
		break;
	case PR_RECORD_COMM:
		sink += strlen(rec->u.comm.comm);
		break;
	default:
		break;
	}
}

/* A tracepoint sample's fields, printed through the file's formats
 * (TRACING_DATA): the payload and the formats are both the input's. */
static void touch_fields(struct pr_file *f, const struct pr_record *rec)
{
	static FILE *null;
	int idx;

	if (rec->type != PR_RECORD_SAMPLE || !pr_file_tp_formats(f))
		return;
	if (!null)
		null = fopen("/dev/null", "we");
	idx = pr_file_event_of(f, rec);
	if (null && idx >= 0 && pr_file_event_name(f, (size_t)idx))
		pr_tp_formats_print(pr_file_tp_formats(f), pr_file_event_name(f, (size_t)idx),
				    rec->u.sample.raw, rec->u.sample.raw_size, null);
}

static void touch_file(struct pr_file *f)
{
	struct pr_file_stats st = { .sz = sizeof(st) };
	const char *const *argv;
	struct pr_record rec;
	int n;

	while ((n = pr_file_read(f, &rec)) != 0)
		if (n == 1) {
			touch_record(&rec);
			touch_fields(f, &rec);
		}
	for (int i = PR_FILE_HOSTNAME; i <= PR_FILE_CPUDESC; i++) {
		const char *s = pr_file_string(f, (enum pr_file_string)i);

		if (s)
			sink += strlen(s);
	}
	for (size_t i = 0, c = pr_file_cmdline(f, &argv); i < c; i++)
		sink += strlen(argv[i]);
	for (size_t i = 0; i < pr_file_nr_build_ids(f); i++)
		sink += strlen(pr_file_build_id(f, i)->filename) +
			pr_file_build_id(f, i)->id[0];
	for (size_t i = 0; i < pr_file_nr_attrs(f); i++)
		sink += pr_file_attr(f, i)->sample_type;
	pr_file_stats(f, &st);
	/* Reading twice exercises the page-release bookkeeping. */
	pr_file_rewind(f);
	while ((n = pr_file_read(f, &rec)) != 0)
		if (n == 1)
			touch_record(&rec);
}

/* The same bytes through pr_file_open() too: the mapped-file path, with
 * its page release, differs from reading caller memory. */
static void through_a_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	char path[64];
	struct pr_file *f;

	if (fd < 0)
		fd = memfd_create("fuzz-perfdata", 0);
	if (fd < 0 || ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	f = pr_file_open(path, NULL);
	if (f) {
		touch_file(f);
		pr_file_close(f);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pr_file *f = pr_file_open_mem(data, size, NULL);

	if (f) {
		touch_file(f);
		pr_file_close(f);
	}
	through_a_file(data, size);
	return 0;
}
