/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one per-record path (prsession.h): each record goes to its
 * worker's model, a sample is unwound, its event found, and it goes to
 * every sink.  Without workers the caller's thread does it as records
 * come; with them the pipeline (pipeline.c) copies records to worker
 * threads, each with its own model, unwinder and symbolizer.
 */
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfdata/perfdata_read.h"
#include "session/session.h"
#include "symbols/symbolizer.h"
#include "symbols/ixshare.h"

/* The most workers a session takes. */
#define MAX_WORKERS 256

/* One worker's share: its replica of the model, its unwinder and
 * symbolizer, and its share of every sink.  Counters others read are
 * on cache lines of their own. */
struct shard {
	struct pr_session *s;
	struct pr_model *model;
	struct pr_unwinder *u;
	struct pr_symbolizer *sym;
	void **ctxs;                 /* per sink: its share */
	uint64_t hot;                /* cache_evicted_hot when last warned */
	uint64_t released_ns;        /* when release_between() last ran */
	alignas(64) _Atomic uint64_t samples, complete, skipped, no_memory;
	_Atomic uint64_t frames_dwarf, frames_chain, frames_joined;
	_Atomic uint64_t first_time, last_time, end_time;
	_Atomic uint64_t cache_files, cache_bytes, cache_evicted, cache_evicted_hot;
	_Atomic uint64_t cache_foreign_missing, cache_dsos, cache_procs, cache_renewed;
};

struct pr_session {
	struct pr_logger lg;
	struct pr_reader *r;
	struct pr_file *f;
	const struct perf_event_attr *attr;
	size_t nr_events;
	int switch_event;            /* the off-CPU event's index, or -1 */
	struct pr_unwinder_opts uo;
	struct pr_symbolizer_opts so;
	bool names;
	struct pr_model_opts mo;
	const char **debug_dirs;     /* mo's, copied */
	struct pr_cache_opts co;
	bool cache, release_memory, cut_stacks;
	size_t workers, max_bytes;
	const volatile sig_atomic_t *hurry;
	volatile sig_atomic_t *stop;
	pr_sample_filter_fn filter;
	void *filter_ctx;
	struct pr_sink *sinks;
	size_t nr_sinks;
	bool has_tick, has_time;
	struct shard *shards;
	size_t nr_shards;
	struct pr_sym_pool *pool;    /* ours to free, when we made it */
	/* With workers: the files' address indexes their symbolizers share
	 * (ixshare.c), one reference ours. */
	struct pr__ixshare *ixshare;
	/* Live and naming: the roots of processes with JIT code, kept by
	 * the thread that adds records (model/roots.c). */
	struct pr__roots *roots;
	struct pr__pipeline *pl;
	bool started, finished;
	int error;                   /* without workers: the first */
	struct pr__pipeline_cpu cpu;
};

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static void add(_Atomic uint64_t *c, uint64_t n)
{
	/* Written by its worker alone: no read-modify-write needed. */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

static void bump(_Atomic uint64_t *c)
{
	add(c, 1);
}

static void set_max(_Atomic uint64_t *c, uint64_t v)
{
	if (v > atomic_load_explicit(c, memory_order_relaxed))
		atomic_store_explicit(c, v, memory_order_relaxed);
}

/* A worker failed: the capture feeding the session should stop. */
static int failed(struct pr_session *s, int err)
{
	if (err < 0 && s->stop && !*s->stop)
		*s->stop = 1;
	return err;
}

/* The source's event of `rec`: its index, or -1. */
static int event_of(const struct pr_session *s, const struct pr_record *rec)
{
	return s->r ? pr_reader_event_of(s->r, rec) : pr_file_event_of(s->f, rec);
}

static const struct perf_event_attr *event_attr(const struct pr_session *s, size_t i)
{
	return s->r ? pr_reader_event_attr(s->r, i) : pr_file_attr(s->f, i);
}

/*
 * A sink released what it held (the agent cut a window): the model's
 * caches are brought within their bounds at `time`, and, when asked,
 * what that freed goes back to the system, so that the resident size
 * is what is held, window after window.
 */
static void trim(struct shard *sh, uint64_t time)
{
	struct pr_session *s = sh->s;
	struct pr_cache_stats cs = { .sz = sizeof(cs) };

	if (!s->cache || pr_model_trim(sh->model, time) || pr_model_cache_stats(sh->model, &cs))
		return;
#ifdef __GLIBC__
	if (s->release_memory)
		malloc_trim(0);
#endif
	if (cs.files_evicted_hot > sh->hot && !sh->hot)
		pr__log(&s->lg, PR_LOG_WARN, "files sampled in the last window were evicted from "
			"the cache (%llu MiB held): they are read again and again; raise the "
			"cache size", (unsigned long long)(cs.bytes >> 20));
	sh->hot = cs.files_evicted_hot;
	atomic_store(&sh->cache_files, cs.files);
	atomic_store(&sh->cache_bytes, cs.bytes);
	atomic_store(&sh->cache_evicted, cs.files_evicted);
	atomic_store(&sh->cache_evicted_hot, cs.files_evicted_hot);
	atomic_store(&sh->cache_foreign_missing, cs.files_foreign_missing);
	atomic_store(&sh->cache_dsos, cs.dsos);
	atomic_store(&sh->cache_procs, cs.procs);
	atomic_store(&sh->cache_renewed, cs.files_renewed);
}


/* The time of the next record (`tick` false) or the horizon after a
 * batch (true), to every sink that keeps a clock. */
static int sinks_clock(struct shard *sh, bool tick, uint64_t time)
{
	struct pr_session *s = sh->s;
	int released = 0;

	for (size_t i = 0; i < s->nr_sinks; i++) {
		int (*fn)(void *, uint64_t) = tick ? s->sinks[i].tick : s->sinks[i].time;
		int err;

		if (!fn)
			continue;
		err = fn(sh->ctxs[i], time);
		if (err < 0)
			return err;
		released |= err;
	}
	if (released)
		trim(sh, time);
	return 0;
}

static int sinks_record(struct shard *sh, const struct pr_record *rec)
{
	struct pr_session *s = sh->s;
	int released = 0;

	for (size_t i = 0; i < s->nr_sinks; i++) {
		int err;

		if (!s->sinks[i].record)
			continue;
		err = s->sinks[i].record(sh->ctxs[i], rec);
		if (err < 0)
			return err;
		released |= err;
	}
	if (released)
		trim(sh, rec->time);
	return 0;
}

/* One sample to every sink: -ENOMEM from one loses this sample only
 * (prsession.h says why), any other error ends the run. */
static int sinks_sample(struct shard *sh, const struct pr_sink_sample *smp)
{
	struct pr_session *s = sh->s;

	for (size_t i = 0; i < s->nr_sinks; i++) {
		int err;

		if (!s->sinks[i].sample)
			continue;
		err = s->sinks[i].sample(sh->ctxs[i], smp);
		if (err == -ENOMEM) {
			bump(&sh->no_memory);
			continue;
		}
		if (err < 0)
			return err;
	}
	return 0;
}

/* Count the user frames of `st` by where they came from (the counters
 * of pr_session_stats): from the frames themselves, whichever path made
 * them. */
static void count_sources(struct shard *sh, const struct pr_stack *st)
{
	uint64_t chain = 0, joined = 0;

	for (size_t i = st->nr_kernel; i < st->nr; i++) {
		uint32_t fl = st->frames[i].flags;

		joined += !!(fl & PR_FRAME_JOINED);
		chain += (fl & (PR_FRAME_CHAIN | PR_FRAME_JOINED)) == PR_FRAME_CHAIN;
	}
	add(&sh->frames_dwarf, st->nr - st->nr_kernel - chain - joined);
	add(&sh->frames_chain, chain);
	add(&sh->frames_joined, joined);
}

static int handle_sample(struct shard *sh, const struct pr_record *rec)
{
	struct pr_session *s = sh->s;
	const char *process = pr_model_comm(sh->model, rec->pid);
	struct pr_sink_sample smp = { .rec = rec, .sym = sh->sym, .process = process };
	struct pr_stack st;
	int idx;

	if (s->filter && !s->filter(rec, process, s->filter_ctx)) {
		bump(&sh->skipped);
		return 0;
	}
	if (pr_unwinder_unwind(sh->u, rec, &st))
		return 0;
	if (s->pl && s->cut_stacks)
		smp.cut_short = pr__pipeline_stack_used(s->pl, rec, &st,
							pr_unwinder_stack_used(sh->u));
	/* The files its frames landed in were sampled now: a trim evicts
	 * the least recently sampled first. */
	if (s->cache)
		for (size_t i = st.nr_kernel; i < st.nr; i++)
			pr_model_mark_sampled(sh->model, st.frames[i].dso);
	smp.st = &st;
	smp.comm = pr_model_comm(sh->model, rec->tid);
	if (sh->sym)
		pr__symbolizer_at(sh->sym, rec->time);
	/* A source of one event: every sample is that event's (the
	 * off-CPU event's, with --off-cpu alone). */
	idx = s->nr_events > 1 ? event_of(s, rec) : 0;
	smp.off_cpu = s->switch_event >= 0 && idx == s->switch_event;
	smp.event = idx < 0 ? 0 : (size_t)idx;
	if (rec->fields & PR_ID_TIME) {
		uint64_t first = atomic_load_explicit(&sh->first_time, memory_order_relaxed);

		if (!first || rec->time < first)
			atomic_store_explicit(&sh->first_time, rec->time, memory_order_relaxed);
		set_max(&sh->last_time, rec->time);
	}
	bump(&sh->samples);
	if (st.end == PR_END_OUTERMOST)
		bump(&sh->complete);
	count_sources(sh, &st);
	return sinks_sample(sh, &smp);
}

/* Every record of a worker's share, in time order; `own`: the worker's
 * to hand on, not only to keep its model up to date (session.h). */
static int handle(const struct pr_record *rec, bool own, void *arg)
{
	struct shard *sh = arg;
	int err;

	/* A sink cutting time into windows ends those before this record
	 * (and the caches are trimmed) before anything of it is kept. */
	if (sh->s->has_time && own && rec->time && (rec->fields & PR_ID_TIME) &&
	    (err = sinks_clock(sh, false, rec->time)))
		return err;
	/* Samples too: one in the image exec loaded retires the old one. */
	err = pr_model_apply(sh->model, rec);
	/* Every worker gets every EXIT: once all have, no frame of the
	 * process is named any more, and what was kept of it goes. */
	if (sh->s->roots && rec->type == PR_RECORD_EXIT && rec->pid == rec->tid) {
		pr__sym_jitdump_exited(sh->sym, rec->pid);
		pr__roots_passed(sh->s->roots, (size_t)(sh - sh->s->shards), rec->pid, rec->time);
	}
	if (err || !own)
		return err;
	if (rec->fields & PR_ID_TIME)
		set_max(&sh->end_time, rec->time);
	if (rec->type != PR_RECORD_SAMPLE)
		return sinks_record(sh, rec);
	return handle_sample(sh, rec);
}

/* A worker's record: a failure stops the capture at once, not only at
 * the end. */
static int handle_piped(const struct pr_record *rec, bool own, void *arg)
{
	struct shard *sh = arg;

	return failed(sh->s, handle(rec, own, arg));
}

/* How often, between a window's trims, the files' pages and the freed
 * heap go back (release_between()). */
#define RELEASE_EVERY_NS UINT64_C(2000000000)

/*
 * Within a window, when asked to release memory: the pages of the files
 * the model holds leave the resident set, and freed heap goes back, every
 * RELEASE_EVERY_NS.  A window's trim does both, but only at its end, and
 * on a host starting new programs the files read in one window (their
 * symbol tables, their DWARF read for an index) were most of the agent's
 * peak (BENCHMARKS.md, issue 32, fourteenth pass).  Nothing is freed that
 * the window holds: a page released is read again from the page cache.
 */
static void release_between(struct shard *sh)
{
	uint64_t now;

	if (!sh->s->release_memory || !sh->s->cache)
		return;
	now = pr__monotonic_ns();
	if (now - sh->released_ns < RELEASE_EVERY_NS)
		return;
	sh->released_ns = now;
	pr__model_release_pages(sh->model);
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

/* The worker, after each batch (one worker: pipeline.c). */
static int tick(uint64_t horizon, void *arg)
{
	int err = sinks_clock(arg, true, horizon);

	release_between(arg);
	return err;
}

/* Without workers, on the caller's thread. */
static int handle_inline(struct pr_session *s, const struct pr_record *rec)
{
	int err = handle(rec, true, &s->shards[0]);

	if (err < 0 && !s->error)
		s->error = failed(s, err);
	return err;
}

static int open_shard(struct pr_session *s, struct shard *sh,
		      pr_model_setup_fn setup, void *setup_ctx)
{
	int err;

	sh->s = s;
	sh->model = pr_model_new(&s->mo);
	if (!sh->model)
		return -errno;
	if (s->f && (err = pr_model_use_file(sh->model, s->f)))
		return err;
	if (setup && (err = setup(sh->model, setup_ctx)))
		return err;
	sh->u = pr_unwinder_new(sh->model, &s->uo);
	if (!sh->u)
		return -errno;
	if (s->names && !(sh->sym = pr_symbolizer_new(sh->model, &s->so)))
		return -errno;
	return 0;
}

/* The models' options, and what they point to, copied: the caller's may
 * be gone before the first record. */
static int copy_model_opts(struct pr_session *s, const struct pr_model_opts *mo)
{
	s->mo = (struct pr_model_opts){ .sz = sizeof(s->mo) };
	if (!mo)
		return 0;
	memcpy(&s->mo, mo, mo->sz < sizeof(s->mo) ? mo->sz : sizeof(s->mo));
	s->mo.sz = sizeof(s->mo);
	if (s->mo.nr_debug_dirs) {
		s->debug_dirs = calloc(s->mo.nr_debug_dirs, sizeof(*s->debug_dirs));
		if (!s->debug_dirs)
			return -ENOMEM;
		memcpy(s->debug_dirs, s->mo.debug_dirs, s->mo.nr_debug_dirs * sizeof(*s->debug_dirs));
		s->mo.debug_dirs = s->debug_dirs;
	}
	if (s->mo.cache) {
		s->cache = true;
		memcpy(&s->co, s->mo.cache, s->mo.cache->sz < sizeof(s->co) ? s->mo.cache->sz
									   : sizeof(s->co));
		s->co.sz = sizeof(s->co);
		s->mo.cache = &s->co;
	}
	return 0;
}

static struct pr_session *session_new(struct pr_reader *r, struct pr_file *f,
				      const struct pr_session_opts *opts)
{
	struct pr_session *s;
	size_t n;
	int err;

	if (!PR_OPTS_VALID(opts)) {
		errno = EINVAL;
		return NULL;
	}
	n = PR_OPTS_GET(opts, workers, 0);
	if (n > MAX_WORKERS) {
		errno = EINVAL;
		return NULL;
	}
	s = aligned_alloc(64, (sizeof(*s) + 63) & ~(size_t)63);
	if (!s)
		return NULL;
	memset(s, 0, sizeof(*s));
	s->r = r;
	s->f = f;
	s->lg.fn = PR_OPTS_GET(opts, log, NULL);
	s->lg.ctx = PR_OPTS_GET(opts, log_ctx, NULL);
	s->workers = n;
	s->nr_shards = n ? n : 1;
	s->max_bytes = PR_OPTS_GET(opts, max_bytes, SIZE_MAX);
	s->hurry = PR_OPTS_GET(opts, hurry, NULL);
	s->stop = PR_OPTS_GET(opts, stop, NULL);
	s->cut_stacks = PR_OPTS_GET(opts, cut_stacks, false);
	s->filter = PR_OPTS_GET(opts, filter, NULL);
	s->filter_ctx = PR_OPTS_GET(opts, filter_ctx, NULL);
	s->release_memory = PR_OPTS_GET(opts, release_memory, false);
	s->uo = (struct pr_unwinder_opts){ .sz = sizeof(s->uo) };
	if (PR_OPTS_GET(opts, unwind, NULL))
		memcpy(&s->uo, opts->unwind, opts->unwind->sz < sizeof(s->uo) ? opts->unwind->sz
									  : sizeof(s->uo));
	s->uo.sz = sizeof(s->uo);
	if (r)
		s->uo.live = true;
	if (PR_OPTS_GET(opts, names, NULL)) {
		s->names = true;
		memcpy(&s->so, opts->names, opts->names->sz < sizeof(s->so) ? opts->names->sz
									   : sizeof(s->so));
		s->so.sz = sizeof(s->so);
		/* The workers name the same files: each address once among
		 * them (without the memory for it, each names them all). */
		if (s->nr_shards > 1 && !s->so.pool)
			s->so.pool = s->pool = pr_sym_pool_new();
		/* And each file's index made or mapped once among them, one
		 * copy read by all (without it, each worker builds its own).
		 * Out of memory: each its own. */
		if (s->nr_shards > 1)
			s->ixshare = pr__ixshare_new();
	}
	if (copy_model_opts(s, PR_OPTS_GET(opts, model, NULL))) {
		pr_session_free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->attr = r ? pr_reader_attr(r) : pr_file_attr(f, 0);
	s->nr_events = r ? pr_reader_nr_events(r) : pr_file_nr_attrs(f);
	s->switch_event = -1;
	for (size_t i = 0; i < s->nr_events; i++)
		if (pr_event_source_of(event_attr(s, i)) == PR_SOURCE_CONTEXT_SWITCH) {
			s->switch_event = (int)i;
			break;
		}
	/* Unless the caller set it, the depth limit the kernel walked the
	 * events' call chains to. */
	for (size_t i = 0, set = s->uo.chain_max_stack; !set && i < s->nr_events; i++)
		if (event_attr(s, i)->sample_max_stack > s->uo.chain_max_stack)
			s->uo.chain_max_stack = event_attr(s, i)->sample_max_stack;
	s->shards = aligned_alloc(64, s->nr_shards * sizeof(*s->shards));
	if (!s->shards) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	memset(s->shards, 0, s->nr_shards * sizeof(*s->shards));
	for (size_t i = 0; i < s->nr_shards; i++) {
		err = open_shard(s, &s->shards[i], PR_OPTS_GET(opts, model_setup, NULL),
				 PR_OPTS_GET(opts, model_setup_ctx, NULL));
		if (err) {
			pr_session_free(s);
			errno = err < 0 ? -err : ENOMEM;
			return NULL;
		}
	}
	for (size_t i = 0; s->ixshare && i < s->nr_shards; i++)
		pr__symbolizer_share_indexes(s->shards[i].sym, s->ixshare);
	/* Without it, a JIT's files are read only while the process lives. */
	if (r && s->names && (s->roots = pr__roots_new(s->nr_shards, &s->lg)))
		for (size_t i = 0; i < s->nr_shards; i++)
			pr__symbolizer_use_roots(s->shards[i].sym, s->roots);
	/* A capture's own copies of them, taken as it was recorded. */
	for (size_t i = 0; f && s->names && i < s->nr_shards; i++) {
		const unsigned char *sec;
		size_t len = pr__file_jit_files(f, &sec);

		pr__symbolizer_use_carried(s->shards[i].sym, sec, len);
	}
	return s;
}

struct pr_session *pr_session_new_reader(struct pr_reader *r, const struct pr_session_opts *opts)
{
	if (!r) {
		errno = EINVAL;
		return NULL;
	}
	return session_new(r, NULL, opts);
}

struct pr_session *pr_session_new_file(struct pr_file *f, const struct pr_session_opts *opts)
{
	if (!f || !pr_file_nr_attrs(f)) {
		errno = EINVAL;
		return NULL;
	}
	return session_new(NULL, f, opts);
}

int pr_session_add_sink(struct pr_session *s, const struct pr_sink *sink)
{
	struct pr_sink *grown;

	if (!s || !sink || sink->sz < sizeof(*sink) ||
	    (s->nr_shards > 1 && (!sink->part_new || !sink->part_merge || sink->tick)))
		return -EINVAL;
	if (s->started)
		return -EBUSY;
	grown = realloc(s->sinks, (s->nr_sinks + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	s->sinks = grown;
	s->sinks[s->nr_sinks] = *sink;
	s->has_tick |= sink->tick != NULL;
	s->has_time |= sink->time != NULL;
	s->nr_sinks++;
	return 0;
}

/* The first record: every worker gets its share of every sink, and the
 * workers start. */
static int start(struct pr_session *s)
{
	void *ctxs[MAX_WORKERS];

	s->started = true;
	for (size_t i = 0; i < s->nr_shards; i++) {
		struct shard *sh = &s->shards[i];

		sh->ctxs = calloc(s->nr_sinks ? s->nr_sinks : 1, sizeof(*sh->ctxs));
		if (!sh->ctxs)
			return -ENOMEM;
		for (size_t k = 0; k < s->nr_sinks; k++) {
			sh->ctxs[k] = i ? s->sinks[k].part_new(s->sinks[k].ctx) : s->sinks[k].ctx;
			if (!sh->ctxs[k])
				return errno ? -errno : -ENOMEM;
		}
		ctxs[i] = sh;
	}
	if (!s->workers)
		return 0;
	s->pl = pr__pipeline_new(s->attr, s->workers, handle_piped, s->has_tick ? tick : NULL, ctxs,
				 s->max_bytes, s->hurry, &s->lg);
	return s->pl ? 0 : -errno;
}

int pr_session_add(const struct pr_record *rec, void *session)
{
	struct pr_session *s = session;
	int err;

	if (!s || !rec || s->finished)
		return -EINVAL;
	if (!s->started && (err = start(s)))
		return failed(s, err);
	/* Before any worker gets it: what the roots keep is opened while
	 * the process lives. */
	pr__roots_record(s->roots, rec);
	if (!s->pl)
		return handle_inline(s, rec);
	return pr__pipeline_copy(rec, s->pl);
}

int pr_session_round(void *session)
{
	struct pr_session *s = session;

	if (!s)
		return -EINVAL;
	return s->pl ? pr__pipeline_flush(s->pl) : 0;
}

/* Records between the rounds of a file's replay, and what may wait for
 * the workers before the reading waits: a few rounds, which the orders
 * keep and reuse (bigger ones are freed and page-faulted in anew, which
 * cost the replay half again as much CPU as the unwinding). */
#define REPLAY_ROUND 64
#define REPLAY_HELD ((size_t)2 << 20)

struct feeder {
	struct pr_session *s;
	size_t n;
};

static int feed(const struct pr_record *rec, void *arg)
{
	struct feeder *fd = arg;
	int err;

	/* Without workers, each record is handled as it is read. */
	if (!fd->s->pl)
		return handle_inline(fd->s, rec);
	err = pr__pipeline_copy(rec, fd->s->pl);
	if (err || ++fd->n % REPLAY_ROUND)
		return err;
	err = pr__pipeline_flush(fd->s->pl);
	pr__pipeline_throttle(fd->s->pl, REPLAY_HELD);
	return err;
}

int pr_session_consume_file(struct pr_session *s)
{
	struct feeder fd = { .s = s };
	int n;

	if (!s || !s->f)
		return -EINVAL;
	/* Every stack of a file is copied whole: the live capture thread
	 * copies a thread's stacks only up to where they ended before, which
	 * can cut one short, and a replay must give one worker's profile
	 * exactly. */
	s->cut_stacks = false;
	if (!s->started && (n = start(s)))
		return failed(s, n);
	n = pr_file_consume(s->f, feed, &fd);
	/* A record a sink refused ends the reading; its error is the
	 * session's (pr_session_finish()). */
	return n < 0 && n == s->error ? 0 : n;
}

int pr_session_finish(struct pr_session *s, uint64_t end)
{
	int err;

	if (!s || s->finished)
		return -EINVAL;
	if (!s->started && (err = start(s)))
		return err;
	s->finished = true;
	err = s->error;
	if (s->pl) {
		int werr = pr__pipeline_finish(s->pl);

		pr__pipeline_cpu(s->pl, &s->cpu);
		if (!err)
			err = failed(s, werr);
	}
	for (size_t i = 0; i < s->nr_shards; i++)
		for (size_t k = 0; !err && k < s->nr_sinks; k++)
			if (s->sinks[k].finish)
				err = s->sinks[k].finish(s->shards[i].ctxs[k], end);
	/* The other workers' shares into worker 0's, in worker order (so
	 * merged output does not depend on which finished first). */
	for (size_t i = 1; i < s->nr_shards; i++)
		for (size_t k = 0; k < s->nr_sinks; k++) {
			int merr = s->sinks[k].part_merge(err ? NULL : s->sinks[k].ctx,
							  s->shards[i].ctxs[k]);

			s->shards[i].ctxs[k] = NULL;
			if (merr < 0 && !err)
				err = merr;
		}
	return err;
}

static uint64_t sum(const struct pr_session *s, size_t offset)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->nr_shards; i++)
		n += atomic_load_explicit((const _Atomic uint64_t *)((const char *)&s->shards[i] +
								      offset),
					  memory_order_relaxed);
	return n;
}

#define SUM(s, field) sum(s, offsetof(struct shard, field))

int pr_session_stats(const struct pr_session *s, struct pr_session_stats *st)
{
	struct pr_session_stats c = { .sz = sizeof(c) };

	if (!s || !st)
		return -EINVAL;
	c.samples = SUM(s, samples);
	c.complete = SUM(s, complete);
	c.skipped = SUM(s, skipped);
	c.no_memory = SUM(s, no_memory);
	c.cache_files = SUM(s, cache_files);
	c.cache_bytes = SUM(s, cache_bytes);
	c.cache_evicted = SUM(s, cache_evicted);
	c.cache_evicted_hot = SUM(s, cache_evicted_hot);
	c.cache_foreign_missing = SUM(s, cache_foreign_missing);
	c.cache_dsos = SUM(s, cache_dsos);
	c.cache_procs = SUM(s, cache_procs);
	c.cache_renewed = SUM(s, cache_renewed);
	c.frames_dwarf = SUM(s, frames_dwarf);
	c.frames_chain = SUM(s, frames_chain);
	c.frames_joined = SUM(s, frames_joined);
	for (size_t i = 0; i < s->nr_shards; i++) {
		const struct shard *sh = &s->shards[i];
		uint64_t first = atomic_load_explicit(&sh->first_time, memory_order_relaxed);

		if (first && (!c.first_time || first < c.first_time))
			c.first_time = first;
		c.last_time = max_u64(c.last_time, atomic_load_explicit(&sh->last_time,
									 memory_order_relaxed));
		c.end_time = max_u64(c.end_time, atomic_load_explicit(&sh->end_time,
								       memory_order_relaxed));
	}
	if (s->pl) {
		struct pr__pipeline_counts pc;

		/* The pipeline's counters are safe to read from any thread. */
		pr__pipeline_counts((struct pr__pipeline *)s->pl, &pc);
		c.copied = pc.copied;
		c.dropped = pc.dropped;
		c.processed = pc.processed;
		c.queued_bytes = pc.queued_bytes;
		c.queued_peak_bytes = pc.queued_peak;
		c.cut = pc.cut;
		c.cut_bytes = pc.cut_bytes;
		c.cut_short = pc.cut_short;
	}
	c.feeder_ns = s->cpu.copier_ns;
	c.workers_ns = s->cpu.workers_ns;
	c.busiest_ns = s->cpu.busiest_ns;
	if (s->pool)
		pr_sym_pool_stats(s->pool, &c.pool_hits, &c.pool_lookups);
	if (s->ixshare) {
		struct pr__ixshare_stats xs;

		pr__ixshare_stats(s->ixshare, &xs);
		c.index_built = xs.built;
		c.index_mapped = xs.mapped;
		c.index_shared = xs.shared;
	}
	return pr__stats_copy(st, &c, sizeof(c));
}

int pr_session_unwind_stats(const struct pr_session *s, struct pr_unwind_stats *sum_st)
{
	struct pr_unwind_stats c = { .sz = sizeof(c) };

	if (!s || !sum_st)
		return -EINVAL;
	for (size_t i = 0; i < s->nr_shards; i++) {
		struct pr_unwind_stats st = { .sz = sizeof(st) };

		if (pr_unwinder_stats(s->shards[i].u, &st))
			continue;
		c.samples += st.samples;
		c.frames += st.frames;
		c.kernel_frames += st.kernel_frames;
		c.fp_frames += st.fp_frames;
		for (int e = 0; e < PR_END_MAX; e++)
			c.ends[e] += st.ends[e];
		/* Each worker opens the files its samples need. */
		c.files_opened = max_u64(c.files_opened, st.files_opened);
		c.files_missing = max_u64(c.files_missing, st.files_missing);
		c.fast_samples += st.fast_samples;
		c.joined += st.joined;
		c.joined_frames += st.joined_frames;
		c.chain_samples += st.chain_samples;
		c.chain_frames += st.chain_frames;
		c.chain_depth += st.chain_depth;
		c.joins_unconfirmed += st.joins_unconfirmed;
		c.leaf_exits += st.leaf_exits;
	}
	return pr__stats_copy(sum_st, &c, sizeof(c));
}

int pr_session_symbolizer_stats(const struct pr_session *s, struct pr_symbolizer_stats *sum_st)
{
	struct pr_symbolizer_stats c = { .sz = sizeof(c) };

	if (!s || !sum_st)
		return -EINVAL;
	for (size_t i = 0; i < s->nr_shards; i++) {
		struct pr_symbolizer_stats st = { .sz = sizeof(st) };

		if (!s->shards[i].sym || pr_symbolizer_stats(s->shards[i].sym, &st))
			continue;
		c.lookups += st.lookups;
		c.resolved += st.resolved;
		c.named += st.named;
		c.files += st.files;
		c.debug_files += st.debug_files;
		c.missing += st.missing;
	}
	return pr__stats_copy(sum_st, &c, sizeof(c));
}

size_t pr_session_nr_workers(const struct pr_session *s)
{
	return s ? s->nr_shards : 0;
}

struct pr_model *pr_session_model(const struct pr_session *s, size_t i)
{
	return s && i < s->nr_shards ? s->shards[i].model : NULL;
}

void pr_session_free(struct pr_session *s)
{
	if (!s)
		return;
	if (s->pl)
		pr__pipeline_finish(s->pl);
	pr__pipeline_free(s->pl);
	for (size_t i = 0; s->shards && i < s->nr_shards; i++) {
		struct shard *sh = &s->shards[i];

		/* Shares a finish did not merge (an error, or no finish). */
		for (size_t k = 0; i && sh->ctxs && k < s->nr_sinks; k++)
			if (sh->ctxs[k])
				s->sinks[k].part_merge(NULL, sh->ctxs[k]);
		free(sh->ctxs);
		pr_symbolizer_free(sh->sym);
		pr_unwinder_free(sh->u);
		pr_model_free(sh->model);
	}
	free(s->shards);
	pr__roots_free(s->roots);
	/* After every symbolizer that took from it. */
	pr_sym_pool_free(s->pool);
	pr__ixshare_put(s->ixshare);
	free(s->sinks);
	free(s->debug_dirs);
	free(s);
}
