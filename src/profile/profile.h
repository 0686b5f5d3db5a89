/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The profile's tables, shared by profile.c (which fills them) and the
 * writers (src/output/, which only read them, naming frames as labels.c
 * does).  Everything is an index into an array, so a writer can number
 * things as its format wants (pprof's ids are index + 1).
 */
#ifndef PR_PROFILE_INT_H
#define PR_PROFILE_INT_H

#include <stdint.h>

#include "model/model.h"
#include "prprofile.h"

#define PROF_NONE UINT32_MAX

/* Strings are interned: equal strings have equal indexes, and index 0 is
 * "" (pprof's string table starts so). */
struct prof_strings {
	const char **s;
	uint32_t nr;
	size_t cap;
	struct pr_hashmap index;     /* pr__hash_str() -> index + 1 */
	struct pr_arena arena;
};

/* A mapped file, [vdso], a perf map: per mapping, as the process mapped
 * it, so that pprof's address arithmetic holds (address - start + offset
 * is the file offset).  [kernel.kallsyms] and the kernel's modules, which
 * no process maps, are `sampled`: [start, limit) is what samples hit. */
struct prof_mapping {
	uint32_t name;               /* string */
	uint32_t build_id;           /* string (hex), 0 when unknown */
	uint64_t start, limit, offset;
	bool kernel, sampled;
	bool has_functions, has_lines, has_inline;
};

struct prof_function {
	uint32_t name;               /* string, never 0 */
	uint32_t file;               /* string, 0 when unknown */
};

/* One function of a location's chain: innermost first. */
struct prof_line {
	uint32_t function;
	uint32_t line;               /* 0 when unknown */
};

/* PROF_WAIT: the pseudo-frame an off-CPU stack ends with, which names
 * the kind of wait (no address, no mapping). */
enum prof_kind { PROF_USER, PROF_KERNEL, PROF_JIT, PROF_WAIT };

/* A distinct code address: its function and the ones inlined into it. */
struct prof_location {
	uint64_t address;            /* as sampled (perf's ip) */
	uint32_t mapping;            /* index, or PROF_NONE */
	uint32_t line;               /* index of the first in lines[] */
	uint16_t nr_lines;           /* 0 when nothing names the address; all
				      * but the last are inlined */
	uint8_t kind;                /* enum prof_kind */
};

struct prof_thread {
	uint32_t pid, tid;
	uint32_t comm;               /* string: the thread's name */
	uint32_t process;            /* string: its process's name */
};

/* What a stack's samples were: on the CPU, or a wait of either kind. */
enum prof_stack_kind { PROF_ON_CPU, PROF_BLOCKED, PROF_PREEMPTED, PROF_STACK_KINDS };

/* A distinct stack of a thread (of an event), and how many samples had
 * it. */
struct prof_stack {
	uint32_t thread;
	uint32_t frame;              /* index of its leaf in frames[] */
	uint32_t nr;                 /* locations, leaf first */
	uint8_t kind;                /* enum prof_stack_kind */
	uint8_t end;                 /* enum pr_stack_end: why it ended */
	/* Its outermost `joined` locations were joined from an earlier
	 * stack (PR_FRAME_JOINED), or its outermost `chain` ones came from
	 * the sample's call chain (PR_FRAME_CHAIN; never both); stacks are
	 * told apart by them and `end`. */
	uint16_t joined;
	uint32_t event;              /* index in events[]; 0 without them */
	uint16_t chain;              /* (in what was padding) */
	uint64_t count;              /* samples, or waits */
	uint64_t ns;                 /* their time: CPU, or off the CPU */
	uint64_t period;             /* with events: the samples' periods */
	uint64_t first_time, last_time;  /* the samples' event clock, ns */
};

/* A sampled event (pr_profile_opts.events). */
struct prof_event {
	uint32_t name;               /* string */
	bool ns;                     /* it counts nanoseconds */
};

/* A thread's samples in time order (pr_profile_opts.timeline): each a
 * varint of its time since the previous one (zigzag: the clocks of two
 * CPUs may disagree by a little), of its stack index and of its ns (with
 * events, its period). */
struct prof_timeline {
	uint8_t *b;
	size_t len, cap;
	uint64_t last;               /* time of the last entry */
};

struct prof_timeline_iter {
	const uint8_t *p, *end;
	uint64_t time;
};

/* Append one entry.  0 or -ENOMEM. */
int prof__timeline_add(struct prof_timeline *t, uint64_t time, uint32_t stack, uint64_t ns);
/* Walk `t` from the start: 1 and the next entry, or 0 at the end. */
void prof__timeline_iter(const struct prof_timeline *t, struct prof_timeline_iter *it);
int prof__timeline_next(struct prof_timeline_iter *it, uint64_t *time, uint32_t *stack,
			uint64_t *ns);

struct prof_offcpu;
struct prof_times {
	uint64_t samples, cpu_ns;
	uint64_t waits[PR_WAIT_KIND_MAX], off_cpu_ns[PR_WAIT_KIND_MAX];
	uint64_t waits_short, waits_lost;
	uint64_t waits_before_start, before_start_ns;
};

struct pr_profile {
	struct prof_strings strings;
	struct prof_mapping *mappings;
	uint32_t nr_mappings;
	size_t cap_mappings;
	struct prof_function *functions;
	uint32_t nr_functions;
	size_t cap_functions;
	struct prof_line *lines;
	uint32_t nr_lines;
	size_t cap_lines;
	struct prof_location *locations;
	uint32_t nr_locations;
	size_t cap_locations;
	struct prof_thread *threads;
	uint32_t nr_threads;
	size_t cap_threads;
	struct prof_stack *stacks;
	uint32_t nr_stacks;
	size_t cap_stacks;
	struct prof_timeline *timelines; /* per thread, with `timeline` */
	size_t cap_timelines;
	uint32_t *frames;            /* location indexes */
	size_t nr_frames, cap_frames;
	struct prof_index *index;    /* profile.c's lookup tables */
	struct { uint32_t key, value; } *tags;  /* strings */
	uint32_t nr_tags;
	size_t cap_tags;
	/* pr_profile_process_tag(): strings; sorted by pid, then key. */
	struct prof_ptag { uint32_t pid, key, value; } *ptags;
	uint32_t nr_ptags;
	size_t cap_ptags;
	uint64_t freq;
	uint64_t samples;
	uint64_t start_ns, duration_ns;
	struct pr_logger log;
	enum pr_profile_mode mode;
	bool period_is_ns, timeline;
	uint64_t off_cpu_min_ns;
	struct prof_offcpu *off;     /* offcpu.c's, NULL until a switch */
	/* index + 1; 0: not yet.  By kind, then [PROF_WAIT_BEFORE_START]. */
	uint32_t wait_locs[PR_WAIT_KIND_MAX + 1];
	struct prof_times total;
	/* pr_profile_opts.events and .counters; NULL and 0 without. */
	struct prof_event *events;
	uint32_t nr_events;
	uint32_t *counters;          /* names: strings */
	uint32_t nr_counters;
	bool counters_per_cpu;
	bool pprof_numeric_thread_labels;
	/* Each stack's counter growths: nr_counters per stack, stack i's
	 * from i * nr_counters; stacks past the end grew none. */
	uint64_t *growths;
	size_t nr_growths, cap_growths;
	struct prof_instances *instances;  /* events.c's, NULL until read */
};

/* Whether the values of a flame graph or a folded line are nanoseconds:
 * in an off-CPU or wall-clock profile, and for an event that counts
 * them (event `event` of a profile with events). */
static inline bool prof__in_ns(const struct pr_profile *p, size_t event)
{
	if (p->nr_events)
		return p->events[event].ns;
	return p->mode != PR_PROFILE_CPU;
}

/* The value a stack adds to a flame graph or a folded line: with events,
 * its periods; else its count in a CPU profile, its nanoseconds in the
 * others. */
static inline uint64_t prof__stack_value(const struct pr_profile *p, const struct prof_stack *st)
{
	if (p->nr_events)
		return st->period;
	return prof__in_ns(p, 0) ? st->ns : st->count;
}

/* Whether a writer of one event (folded, SVG, speedscope) shows stack st:
 * every stack of a profile without events, else the event's own. */
static inline bool prof__shows(const struct pr_profile *p, const struct prof_stack *st,
			       size_t event)
{
	return !p->nr_events || st->event == event;
}

/* The process tags of `pid`: the first, and their number in *nr (0: none,
 * and NULL). */
const struct prof_ptag *prof__ptags_of(const struct pr_profile *p, uint32_t pid, uint32_t *nr);

/* ---- profile.c, for offcpu.c, events.c and window.c ---- */

/* The index of string `s` (NULL is ""), or PROF_NONE out of memory. */
uint32_t prof__intern(struct prof_strings *ss, const char *s);

/* The locations of `stack` (leaf first) into p->index's scratch, after
 * `reserve` free entries; its thread through *thread.  Returns the
 * scratch array, or NULL out of memory. */
uint32_t *prof__locations(struct pr_profile *p, struct pr_symbolizer *sym,
			  const struct pr_record *rec, const struct pr_stack *stack,
			  const char *comm, const char *process, size_t reserve,
			  uint32_t *thread);
/*
 * JIT code that nothing named when it was sampled, named again from its
 * process's jitdump at the end of the run (runtimes buffer what they
 * write: node's is complete only once it exits).  0 or -ENOMEM.
 */
int prof__name_jit_late(struct pr_profile *p, struct pr_symbolizer *sym);
/* The thread (pid, tid, names) as in thread_of(): its index, or PROF_NONE
 * out of memory. */
uint32_t prof__thread_of(struct pr_profile *p, uint32_t pid, uint32_t tid, const char *comm,
			 const char *process);
/* The function called `name` in `file`: its index, or PROF_NONE. */
uint32_t prof__function_of(struct pr_profile *p, const char *name, const char *file);
/* Mapping `m` of profile `src` in `p`: found or added (a sampled one
 * grown to cover it).  Its index, or PROF_NONE. */
uint32_t prof__mapping_import(struct pr_profile *p, const struct pr_profile *src,
			      const struct prof_mapping *m);
/* A location like `loc` (its mapping already p's) whose chain is
 * `lines` (functions already p's): found or added.  Its index, or
 * PROF_NONE. */
uint32_t prof__location_add(struct pr_profile *p, const struct prof_location *loc,
			    const struct prof_line *lines);
/* How a stack ended: why, and how many of its outermost locations were
 * joined or taken from the call chain (pr_stack's end, and its frames
 * marked PR_FRAME_JOINED or PR_FRAME_CHAIN). */
struct prof_end {
	uint8_t end;
	uint16_t joined, chain;
};

/* The ending of `stack`. */
struct prof_end prof__end_of(const struct pr_stack *stack);

/* The stack of `thread` and `event` with locations `locs` that ended as
 * `end` (kind given to a new one): its index, or PROF_NONE out of
 * memory. */
uint32_t prof__stack_of(struct pr_profile *p, uint32_t thread, uint32_t event,
			const uint32_t *locs, uint32_t nr, enum prof_stack_kind kind,
			struct prof_end end, uint64_t time);
/* Count `count` samples or waits (0: the part of a wait before a cut) of
 * stack `idx` at `time` (its start) weighing `ns`, and `period` events
 * (with events; 0 otherwise).  0 or -ENOMEM (the timeline could not
 * grow). */
int prof__count(struct pr_profile *p, uint32_t idx, uint64_t time, uint64_t count,
		uint64_t ns, uint64_t period);
/* The location of the pseudo-frame that names a wait of `kind`, or
 * PROF_NONE out of memory. */
/* The pseudo-frame of a wait under way when sampling started. */
#define PROF_WAIT_BEFORE_START PR_WAIT_KIND_MAX
uint32_t prof__wait_location(struct pr_profile *p, int kind);
void prof__offcpu_free(struct prof_offcpu *off);
/* Add what stack `st` counted to `t`: samples and CPU time, or waits. */
void prof__add_stack_times(const struct pr_profile *p, const struct prof_stack *st,
			   struct prof_times *t);
/* Count in `p` the part before `time` of every wait open then that
 * reached off_cpu_min_ns, which goes on from `time`.  0 or -ENOMEM. */
int prof__offcpu_split(struct pr_profile *p, uint64_t time);
/* The open waits' stacks, whose threads and locations are indexes of
 * tables about to be replaced: renumber them with `thread` and `location`
 * (an old index to a new one, PROF_NONE out of memory; asked twice for
 * each, they must answer the same).  0, or -ENOMEM with nothing changed. */
int prof__offcpu_rehome(struct pr_profile *p, uint32_t (*thread)(void *ctx, uint32_t idx),
			uint32_t (*location)(void *ctx, uint32_t idx), void *ctx);

/* ---- events.c: the events and the counters read with their samples ---- */

/* pr_profile_opts' events and counters into `p`, names interned.  0,
 * -EINVAL or -ENOMEM. */
int prof__events_init(struct pr_profile *p, const struct pr_profile_opts *opts);
/* Add the growths of the counters sample `rec` read to stack `idx`'s.
 * 0 or -ENOMEM. */
int prof__count_reads(struct pr_profile *p, uint32_t idx, const struct pr_record *rec);
/* Counter c's growth in stack `idx`. */
static inline uint64_t prof__growth(const struct pr_profile *p, uint32_t idx, uint32_t c)
{
	size_t at = (size_t)idx * p->nr_counters + c;

	return at < p->nr_growths ? p->growths[at] : 0;
}
void prof__events_free(struct pr_profile *p);

static inline const char *prof_str(const struct pr_profile *p, uint32_t s)
{
	return p->strings.s[s];
}

/* ---- labels.c: what the writers show of frames ---- */

/*
 * The name a flame graph shows for line `i` of location `loc` (i <
 * nr_lines), or for the location itself when nothing names it (i = 0):
 * the function's name, else "[file]" (the mapping's base name) or
 * "[unknown]".  With `annotate`, "_[k]", "_[i]" or "_[j]" appended as
 * flamegraph.pl's stackcollapse-perf.pl does.  Writes into buf (always
 * terminated) and returns it.
 */
const char *prof__frame_label(const struct pr_profile *p, const struct prof_location *loc,
			      uint32_t i, bool annotate, char *buf, size_t len);

/* What annotate appends to a joined frame's label, and to a frame from
 * the sample's frame-pointer call chain (PR_FRAME_CHAIN), after any
 * other mark. */
#define PROF_JOINED_MARK "_[joined]"
#define PROF_CHAIN_MARK "_[fp]"

/* The pseudo-frame every format puts at the root side of a stack whose
 * callers are missing because it was cut -- by the copy or by the depth
 * limit (and not completed by joining) -- in place of those callers, so
 * that a flame graph groups cut stacks under it rather than showing
 * their outermost frame as a root of its own. */
#define PROF_TRUNCATED_LABEL "[truncated]"
/* The leaf pseudo-frame of a wait under way when sampling started. */
#define PROF_BEFORE_START_LABEL "[off-cpu: blocked since before the start]"

static inline bool prof__end_cut(unsigned end)
{
	return end == PR_END_TRUNCATED || end == PR_END_DEPTH;
}

/*
 * Walk a stack root first, one call per function — the inlined ones
 * expanded, outermost first — with the label prof__frame_label() gives.
 * With `annotate`, the frames joined from an earlier stack are marked
 * PROF_JOINED_MARK, those from the sample's call chain PROF_CHAIN_MARK.  The callback returns 0 to go on.  Returns 0 or the
 * callback's value.
 */
typedef int (*prof_frame_fn)(const char *label, const struct prof_location *loc,
			     uint32_t line, void *arg);
int prof__walk_stack(const struct pr_profile *p, const struct prof_stack *st, bool annotate,
		     prof_frame_fn fn, void *arg);

/*
 * Labels interned: one copy of each distinct string, so that equal labels
 * are equal pointers, and each frame's label (location, line, joined,
 * from the chain or neither) formatted once however many stacks hold it.  Zeroed to start;
 * prof__labels_free() at the end.
 */
struct prof_labels {
	struct pr_hashmap by_frame;  /* frame key -> label */
	struct pr_hashmap by_text;   /* pr__hash_str() -> label */
	struct pr_arena arena;
	bool failed;                 /* out of memory once */
};

/* The one copy of `s`, or NULL out of memory. */
const char *prof__labels_intern(struct prof_labels *c, const char *s);
void prof__labels_free(struct prof_labels *c);
/* prof__walk_stack() with its labels interned in `c`. */
int prof__walk_stack_interned(const struct pr_profile *p, const struct prof_stack *st,
			      bool annotate, struct prof_labels *c, prof_frame_fn fn, void *arg);

/* The root frame of a folded stack or flame graph: the process's name, or
 * with `per_thread` "comm-PID/TID". */
const char *prof__root_label(const struct pr_profile *p, const struct prof_thread *t,
			     bool per_thread, char *buf, size_t len);

/* ---- flametree.c: the stacks merged by label ---- */

/* What a frame is; the last two are the pseudo-frames that end off-CPU
 * stacks, one per kind of wait. */
enum prof_tree_kind {
	PROF_TREE_USER, PROF_TREE_KERNEL, PROF_TREE_JIT, PROF_TREE_INLINE,
	PROF_TREE_BLOCKED, PROF_TREE_PREEMPTED, PROF_TREE_KINDS
};

struct prof_tree_node {
	const char *label;           /* in the tree's arena */
	uint64_t count;              /* value in it and below it
				      * (prof__stack_value()) */
	uint64_t off_cpu;            /* the part of it that was off the CPU */
	uint64_t offset;             /* samples left of it, at its depth */
	uint64_t next;               /* layout: where its next child goes */
	uint32_t parent;             /* PROF_NONE for the root, "all" */
	uint32_t depth;
	uint8_t kind;                /* enum prof_tree_kind, as first seen */
};

struct prof_tree {
	struct prof_tree_node *nodes;    /* [0] is "all" */
	uint32_t nr, cap;
	struct pr_hashmap index;     /* (parent, label) -> node index + 1 */
	struct prof_labels labels;   /* the nodes' labels */
	/* While a stack is walked: where it is, its kind (enum
	 * prof_stack_kind), its value, and the part of it off the CPU (all or
	 * nothing). */
	uint32_t cur;
	uint8_t stack_kind;
	uint64_t count, off_cpu;
};

/* Build `t` (zeroed) from the profile's stacks (of event o->event, in a
 * profile with events), with the labels prof__walk_stack() gives under
 * `o`.  0 or -ENOMEM; prof__tree_free() either way. */
int prof__tree_build(struct prof_tree *t, const struct pr_profile *p,
		     const struct pr_profile_write_opts *o);
/* Offsets and depths; see flametree.c for `children`.  0 or -ENOMEM. */
int prof__tree_layout(struct prof_tree *t, uint32_t **children);
void prof__tree_free(struct prof_tree *t);
/* The hash of a label under `parent` (also colours frames by name). */
uint64_t prof__tree_hash(uint32_t parent, const char *s);

#endif
