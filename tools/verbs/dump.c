/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `dwarfsample dump`: every record of a live capture on one line, then a
 * summary.  The debugging aid for everything built on the reader.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dump.h"

static void print_time(FILE *out, const struct pr_record *rec)
{
	if (rec->fields & PR_ID_TIME)
		fprintf(out, "%6" PRIu64 ".%09" PRIu64 " ", rec->time / 1000000000,
			rec->time % 1000000000);
	else
		fprintf(out, "%16s ", "-");
}

static const char *cpumode(uint16_t misc)
{
	switch (misc & PERF_RECORD_MISC_CPUMODE_MASK) {
	case PERF_RECORD_MISC_KERNEL: return "kernel";
	case PERF_RECORD_MISC_USER: return "user";
	case PERF_RECORD_MISC_HYPERVISOR: return "hv";
	case PERF_RECORD_MISC_GUEST_KERNEL: return "guest-kernel";
	case PERF_RECORD_MISC_GUEST_USER: return "guest-user";
	default: return "unknown";
	}
}

/* "callchain 4: kernel: 0xffffffff81... user: 0x401136 0x401150": the
 * entries as the kernel wrote them, its context markers named. */
static void print_callchain(FILE *out, const struct pr_sample *s)
{
	fprintf(out, " callchain %" PRIu64 ":", s->nr_callchain);
	for (uint64_t i = 0; i < s->nr_callchain; i++) {
		uint64_t ip = s->callchain[i];

		if (ip == (uint64_t)PERF_CONTEXT_KERNEL)
			fputs(" kernel:", out);
		else if (ip == (uint64_t)PERF_CONTEXT_USER)
			fputs(" user:", out);
		else if (ip >= (uint64_t)PERF_CONTEXT_MAX)
			fprintf(out, " context-0x%" PRIx64 ":", ip);
		else
			fprintf(out, " 0x%" PRIx64, ip);
	}
}

static void print_sample(FILE *out, const struct pr_record *rec)
{
	const struct pr_sample *s = &rec->u.sample;

	fprintf(out, " pid %d tid %d ip 0x%" PRIx64 " %s period %" PRIu64,
		(int)rec->pid, (int)rec->tid, s->ip, cpumode(rec->misc), s->period);
	if (s->regs) {
		uint64_t bp = 0;

		pr_sample_reg(s, PR_REG_BP, &bp);
		fprintf(out, " sp 0x%" PRIx64 " bp 0x%" PRIx64 " regs %d/abi%d",
			s->stack_addr, bp, __builtin_popcountll(s->regs_mask),
			s->regs_abi == PERF_SAMPLE_REGS_ABI_64 ? 64 : 32);
	} else {
		fprintf(out, " no-user-regs");
	}
	fprintf(out, " stack %" PRIu64 "/%" PRIu64, s->stack_dyn_size, s->stack_size);
	if (s->nr_callchain)
		print_callchain(out, s);
	/* A read group's counts: "read 3 [enabled/running ns] id:value...". */
	if (s->nr_read) {
		fprintf(out, " read %u [%" PRIu64 "/%" PRIu64 "]", s->nr_read,
			s->read_time_enabled, s->read_time_running);
		for (uint32_t i = 0; i < s->nr_read; i++) {
			uint64_t value, id;

			if (!pr_sample_read(s, i, &value, &id))
				fprintf(out, " %" PRIu64 ":%" PRIu64, id, value);
		}
	}
}

/* "pid 12 tid 13 out preempt next_pid 0 next_tid 0", as perf script
 * words them; the other task only in CPU-wide records. */
static void print_switch(FILE *out, const struct pr_record *rec)
{
	const struct pr_switch *sw = &rec->u.sw;

	fprintf(out, " pid %d tid %d %s%s", (int)rec->pid, (int)rec->tid,
		sw->out ? "out" : "in", sw->preempt ? " preempt" : "");
	if (rec->type == PR_RECORD_SWITCH_CPU_WIDE)
		fprintf(out, " %s_pid %d %s_tid %d", sw->out ? "next" : "prev",
			(int)sw->next_prev_pid, sw->out ? "next" : "prev",
			(int)sw->next_prev_tid);
}

void ds_dump_record(FILE *out, const struct pr_record *rec, const char *event)
{
	print_time(out, rec);
	if (rec->ring_cpu >= 0)
		fprintf(out, "[%03d] ", rec->ring_cpu);
	else if (rec->fields & PR_ID_CPU)
		fprintf(out, "[%03u] ", rec->cpu);
	fprintf(out, "%-12s", pr_record_type_name(rec->type));

	switch (rec->type) {
	case PR_RECORD_SAMPLE:
		if (event)
			fprintf(out, " %s", event);
		print_sample(out, rec);
		break;
	case PR_RECORD_MMAP:
	case PR_RECORD_MMAP2: {
		const struct pr_mmap *m = &rec->u.mmap;

		fprintf(out, " pid %d tid %d [0x%" PRIx64 "-0x%" PRIx64 ") pgoff 0x%" PRIx64,
			(int)rec->pid, (int)rec->tid, m->addr, m->addr + m->len, m->pgoff);
		if (m->is_mmap2) {
			fprintf(out, " %c%c%c%c",
				m->prot & 1 ? 'r' : '-', m->prot & 2 ? 'w' : '-',
				m->prot & 4 ? 'x' : '-', m->flags & 1 ? 's' : 'p');
			if (m->has_build_id) {
				fputs(" build-id ", out);
				for (unsigned i = 0; i < m->build_id_size; i++)
					fprintf(out, "%02x", m->build_id[i]);
			} else {
				fprintf(out, " %02x:%02x %" PRIu64, m->maj, m->min, m->ino);
			}
		}
		fprintf(out, " %s", m->filename);
		break;
	}
	case PR_RECORD_COMM:
		fprintf(out, " pid %d tid %d%s %s", (int)rec->pid, (int)rec->tid,
			rec->u.comm.exec ? " exec" : "", rec->u.comm.comm);
		break;
	case PR_RECORD_FORK:
	case PR_RECORD_EXIT:
		fprintf(out, " pid %d tid %d ppid %d ptid %d", (int)rec->pid, (int)rec->tid,
			(int)rec->u.task.ppid, (int)rec->u.task.ptid);
		break;
	case PR_RECORD_LOST:
		fprintf(out, " id %" PRIu64 " lost %" PRIu64, rec->u.lost.id,
			rec->u.lost.lost);
		break;
	case PR_RECORD_LOST_SAMPLES:
		fprintf(out, " lost %" PRIu64, rec->u.lost.lost);
		break;
	case PR_RECORD_THROTTLE:
	case PR_RECORD_UNTHROTTLE:
		fprintf(out, " id %" PRIu64 " stream %" PRIu64, rec->u.throttle.id,
			rec->u.throttle.stream_id);
		break;
	case PR_RECORD_SWITCH:
	case PR_RECORD_SWITCH_CPU_WIDE:
		print_switch(out, rec);
		break;
	default:
		fprintf(out, " type %u size %u", rec->type, rec->size);
		break;
	}
	fputc('\n', out);
}

struct dump_ctx {
	FILE *out;
	bool quiet;
	/* Several events: a sample's is named, from the reader or the file. */
	const struct pr_reader *r;
	const char *const *names;    /* -e's */
	size_t nr_names;
	struct pr_file *f;
};

static const char *sample_event(const struct dump_ctx *d, const struct pr_record *rec)
{
	int idx;

	if (rec->type != PR_RECORD_SAMPLE)
		return NULL;
	if (d->r && d->nr_names > 1) {
		idx = pr_reader_event_of(d->r, rec);
		return idx < 0 || (size_t)idx >= d->nr_names ? NULL : d->names[idx];
	}
	if (d->f && pr_file_nr_attrs(d->f) > 1) {
		idx = pr_file_event_of(d->f, rec);
		return idx < 0 ? NULL : pr_file_event_name(d->f, (size_t)idx);
	}
	return NULL;
}

static int on_record(const struct pr_record *rec, void *arg)
{
	struct dump_ctx *d = arg;

	if (!d->quiet)
		ds_dump_record(d->out, rec, sample_event(d, rec));
	return 0;
}

void ds_dump_summary(FILE *out, struct pr_reader *r, double seconds)
{
	uint64_t by_type[PR_RECORD_KERNEL_MAX] = { 0 };
	uint64_t samples = 0, lost = 0, corrupt = 0, throttled = 0, sample_bytes = 0;

	fprintf(out, "# summary: %.2f s\n", seconds);
	for (size_t i = 0; i < pr_reader_nr_rings(r); i++) {
		struct pr_ring_stats st = { .sz = sizeof(st) };

		pr_reader_ring_stats(r, i, &st);
		fprintf(out, "#   cpu %3d: %8" PRIu64 " samples %8" PRIu64 " lost %6" PRIu64
			" corrupt %6" PRIu64 " throttled\n", st.cpu, st.samples,
			st.lost + st.lost_samples, st.corrupt, st.throttled);
		samples += st.samples;
		lost += st.lost + st.lost_samples;
		corrupt += st.corrupt;
		throttled += st.throttled;
		sample_bytes += st.sample_bytes;
		for (size_t t = 0; t < PR_RECORD_KERNEL_MAX; t++)
			by_type[t] += st.by_type[t];
	}
	fprintf(out, "#   total: %" PRIu64 " samples, %" PRIu64 " lost (%.2f%%), %"
		PRIu64 " corrupt, %" PRIu64 " throttled\n", samples, lost,
		samples + lost ? 100.0 * (double)lost / (double)(samples + lost) : 0.0,
		corrupt, throttled);
	if (samples)
		fprintf(out, "#   ring: %" PRIu64 " bytes of samples, %.0f bytes per sample\n",
			sample_bytes, (double)sample_bytes / (double)samples);
	ds_chain_limit_note(out, "#   ", r);
	fputs("#   records:", out);
	for (size_t t = 1; t < PR_RECORD_KERNEL_MAX; t++)
		if (by_type[t])
			fprintf(out, " %s %" PRIu64, pr_record_type_name((uint32_t)t),
				by_type[t]);
	if (by_type[0])
		fprintf(out, " other %" PRIu64, by_type[0]);
	fputc('\n', out);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dwarfsample dump [options] (-p PID[,PID...] | -a [-C LIST] | -- CMD [ARGS...])\n"
		"       dwarfsample dump [-q] -i FILE\n"
		"\n"
		"Sample the target and print every record the kernel delivers on one\n"
		"line, then a summary: samples per CPU, lost samples, records by type.\n"
		"With -i, print the records of a perf.data file (dwarfsample record's\n"
		"or perf record's) in timestamp order the same way.\n"
		"\n%s%s"
		"Input and output:\n"
		"  -i, --input FILE         read a perf.data file instead of sampling\n"
		"  -q, --quiet              print only the summary\n"
		"  -h, --help               this help\n",
		ds_capture_help, ds_offcpu_help);
}

/* 0 when everything printed reached standard output; else says so and
 * returns 1: a dump cut short (a full disk, a closed reader) must not end
 * with status 0, as a whole one does. */
static int output_done(FILE *out)
{
	int err = fflush(out) ? errno : 0;

	if (!err && !ferror(out))
		return 0;
	ds_err("the dump could not all be written to standard output (%s), so it "
	       "is incomplete; redirect it to a file with room",
	       strerror(err ? err : EIO));
	return 1;
}

/* The file's own counters, in the live summary's shape. */
static void file_summary(FILE *out, struct pr_file *f)
{
	struct pr_file_stats st = { .sz = sizeof(st) };
	uint64_t all;

	pr_file_stats(f, &st);
	all = st.samples + st.lost;
	fprintf(out, "# summary: %.2f s of samples%s\n",
		st.samples ? (double)(st.last_sample_time - st.first_sample_time) / 1e9 : 0.0,
		st.truncated ? " (unfinished recording, read to its last complete record)" : "");
	fprintf(out, "#   total: %" PRIu64 " samples, %" PRIu64 " lost (%.2f%%)\n",
		st.samples, st.lost, all ? 100.0 * (double)st.lost / (double)all : 0.0);
	fputs("#   records:", out);
	for (size_t t = 1; t < PR_RECORD_KERNEL_MAX; t++)
		if (st.by_type[t])
			fprintf(out, " %s %" PRIu64, pr_record_type_name((uint32_t)t),
				st.by_type[t]);
	if (st.by_type[0])
		fprintf(out, " other %" PRIu64, st.by_type[0]);
	fputc('\n', out);
}

static int dump_file(const char *path, struct dump_ctx *d)
{
	PR_OPTS(pr_file_opts, o, .log = ds_log);
	struct pr_file *f = pr_file_open(path, &o);
	int n;

	if (!f)
		return 1;
	d->f = f;
	n = pr_file_consume(f, on_record, d);
	fflush(d->out);
	file_summary(d->out, f);
	/* Corrupt records were reported and skipped; the verdict says so.
	 * An output cut short comes first: the dump is to be made again. */
	if (output_done(d->out))
		n = 1;
	else
		n = ds_file_verdict(f, path, n < 0 && n != -EBADMSG ? 1 : 0);
	pr_file_close(f);
	return n;
}

struct dump_args {
	const char *input;
	struct dump_ctx d;
};

static int dump_option(int opt, const char *arg, void *ctx)
{
	struct dump_args *a = ctx;

	if (opt == 'i')
		a->input = arg;
	else if (opt == 'q')
		a->d.quiet = true;
	else
		return -1;
	return 0;
}

int ds_cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	struct dump_args args = { .d = { .out = stdout } };
	const struct ds_verb verb = {
		.name = "dump", .shortopts = "i:q", .longopts = longopts, .usage = usage,
		.option = dump_option, .ctx = &args,
	};
	struct ds_capture *c = calloc(1, sizeof(*c));
	struct pr_reader *r;
	double start;
	int first, err, ret = 2;

	if (!c)
		return 1;
	first = ds_parse(c, &verb, argc, argv);
	if (first < 0) {
		ret = first == -2 ? 0 : 2;
		goto out;
	}
	if (args.input) {
		if (ds_capture_given(c) || first < argc) {
			ds_err("-i reads a file: give no target or sampling options with it");
			goto out;
		}
		ret = dump_file(args.input, &args.d);
		goto out;
	}
	if (ds_capture_finish(c, argc - first, argv + first))
		goto out;

	ds_capture_signals();
	r = ds_capture_open(c);
	if (!r) {
		ret = 1;
		goto out;
	}
	args.d.r = r;
	args.d.names = c->events.names;
	args.d.nr_names = c->events.nr;
	start = ds_now();
	err = ds_capture_run(c, r, &(struct ds_capture_hooks){
		.record = on_record, .ctx = &args.d });
	if (err) {
		char buf[128];

		ds_err("capture failed: %s", pr_strerror(err, buf, sizeof(buf)));
	}
	fflush(stdout);
	ds_dump_summary(stdout, r, ds_now() - start);
	pr_reader_close(r);
	ret = output_done(stdout) || err ? 1 : 0;
out:
	free(c);
	return ret;
}
