/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unwinding alone, in this process, through the library: each sample of a
 * perf.data file handed to pr_unwinder_unwind() as `dwarfsample report`
 * hands it (records applied to the model in time order, joining on), and
 * only the unwinder's calls timed.  Each sample's copied stack is read
 * through before its call, as the live command's copy out of the ring
 * leaves it in the cache, so that what is timed is the unwinding and not
 * the page faults of a mapped file.
 *
 * The first pass opens the files and compiles their rules; the passes
 * after it unwind with everything built, as a profile minutes long does.
 * Prints, per pass, the nanoseconds per sample and per user frame, and
 * the share of samples unwound from the compiled rules.
 *
 * usage: bench-unwind-rules [-n PASSES] FILE...
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perfreader.h"

struct pass {
	struct pr_model *model;
	struct pr_unwinder *u;
	uint64_t ns, samples;
	unsigned char sink;
	int err;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int on_record(const struct pr_record *rec, void *arg)
{
	struct pass *p = arg;
	struct pr_stack st;
	uint64_t t0;
	int err;

	if (rec->type != PR_RECORD_SAMPLE) {
		err = pr_model_apply(p->model, rec);
		return err == -ENOMEM ? err : 0;
	}
	/* The copy in the cache, as the ring's copy leaves it. */
	for (uint64_t off = 0; rec->u.sample.stack && off < rec->u.sample.stack_dyn_size;
	     off += 64)
		p->sink ^= rec->u.sample.stack[off];
	t0 = now_ns();
	err = pr_unwinder_unwind(p->u, rec, &st);
	p->ns += now_ns() - t0;
	p->samples++;
	if (err)
		p->err = err;
	return 0;
}

static int bench_file(const char *path, int passes)
{
	PR_OPTS(pr_unwinder_opts, uo);
	struct pr_file *f = pr_file_open(path, NULL);
	struct pass p = { 0 };
	uint64_t frames = 0, fast = 0;
	int ret = -1;

	if (!f) {
		fprintf(stderr, "bench-unwind-rules: cannot read %s\n", path);
		return -1;
	}
	printf("%s\n", path);
	printf("  %-22s %10s %12s %10s %12s %10s\n", "pass", "samples", "ns/sample",
	       "frames", "ns/frame", "from rules");
	p.model = pr_model_new(NULL);
	if (!p.model || pr_model_use_file(p.model, f) || !(p.u = pr_unwinder_new(p.model, &uo)))
		goto out;
	for (int i = 0; i < passes; i++) {
		PR_OPTS(pr_unwind_stats, st);

		p.ns = p.samples = 0;
		pr_file_rewind(f);
		if (pr_file_consume(f, on_record, &p) < 0 || p.err || !p.samples ||
		    pr_unwinder_stats(p.u, &st))
			goto out;
		/* The counters are the unwinder's since its start. */
		st.frames -= frames;
		st.fast_samples -= fast;
		frames += st.frames;
		fast += st.fast_samples;
		printf("  %-22s %10" PRIu64 " %12.0f %10.1f %12.1f %9.1f%%\n",
		       i ? "warm (rules built)" : "first (files opened)", p.samples,
		       (double)p.ns / (double)p.samples, (double)st.frames / (double)p.samples,
		       st.frames ? (double)p.ns / (double)st.frames : 0.0,
		       100.0 * (double)st.fast_samples / (double)p.samples);
	}
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "bench-unwind-rules: %s could not be unwound\n", path);
	pr_unwinder_free(p.u);
	pr_model_free(p.model);
	pr_file_close(f);
	return ret;
}

int main(int argc, char **argv)
{
	int passes = 3, opt, ret = 0;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n') {
			fputs("usage: bench-unwind-rules [-n PASSES] FILE...\n", stderr);
			return 2;
		}
		passes = atoi(optarg) > 1 ? atoi(optarg) : 2;
	}
	if (optind == argc) {
		fputs("usage: bench-unwind-rules [-n PASSES] FILE...\n", stderr);
		return 2;
	}
	for (; optind < argc; optind++)
		ret |= bench_file(argv[optind], passes) ? 1 : 0;
	return ret;
}
