/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Records for what existed before sampling started, read from /proc and
 * laid out exactly as the kernel would have written them, then decoded by
 * the same parser as everything else.  Time 0 sorts them before any live
 * record, which is what perf expects of synthesized records too.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "capture/capture.h"
#include "capture/synth.h"

int pr__emit_ended(struct pr__emitter *e)
{
	struct pr_record rec;
	const char *why;

	synth_end(e->s);
	if (pr__record_parse(&e->cfg, e->s->buf, e->s->len, &rec, &why))
		return -EINVAL;    /* cannot happen: we wrote it */
	return e->cb(&rec, e->ctx);
}

int pr__emit_at(struct pr__emitter *e, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu)
{
	if (e->attr->sample_id_all)
		synth_trailer(e->s, e->attr->sample_type, pid, tid, time, cpu, e->id);
	return pr__emit_ended(e);
}

/* Close the record begun on e->s: trailer, size, decode, hand out. */
static int emit(struct pr__emitter *e, uint32_t pid, uint32_t tid)
{
	return pr__emit_at(e, pid, tid, 0, 0);
}

static int emit_comm(struct pr__emitter *e, uint32_t pid, uint32_t tid,
		     const char *comm)
{
	e->s->len = 0;
	synth_begin(e->s, PERF_RECORD_COMM, 0);
	synth_u32x2(e->s, pid, tid);
	synth_string(e->s, comm);
	return emit(e, pid, tid);
}

static int emit_fork(struct pr__emitter *e, uint32_t pid, uint32_t tid)
{
	e->s->len = 0;
	synth_begin(e->s, PERF_RECORD_FORK, 0);
	synth_u32x2(e->s, pid, pid);     /* pid, ppid: a thread of pid */
	synth_u32x2(e->s, tid, pid);     /* tid, ptid */
	synth_u64(e->s, 0);
	return emit(e, pid, tid);
}

static void read_comm(const char *path, char *comm, size_t len)
{
	FILE *f = fopen(path, "re");

	snprintf(comm, len, "?");
	if (!f)
		return;
	if (fgets(comm, (int)len, f))
		comm[strcspn(comm, "\n")] = 0;
	fclose(f);
}

struct thread_walk {
	struct pr__emitter *e;
	pid_t pid;
};

/* A COMM for the thread, and a FORK first unless it is the main one. */
static int synth_thread(pid_t tid, void *arg)
{
	struct thread_walk *w = arg;
	char path[64], comm[32];
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)w->pid, (int)tid);
	read_comm(path, comm, sizeof(comm));
	if (tid != w->pid)
		err = emit_fork(w->e, (uint32_t)w->pid, (uint32_t)tid);
	return err ? err : emit_comm(w->e, (uint32_t)w->pid, (uint32_t)tid, comm);
}

/* One line of /proc/PID/maps into an MMAP2: executable mappings, and the
 * other file-backed ones (the read-only segment with .eh_frame_hdr is one),
 * as the kernel reports them with mmap_data. */
static int synth_map_line(struct pr__emitter *e, pid_t pid, const char *line)
{
	unsigned long long start, end, pgoff, ino;
	unsigned int maj, min;
	char perms[8];
	int name_at = 0;
	const char *name;
	uint32_t prot = 0, flags;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms,
		   &pgoff, &maj, &min, &ino, &name_at) < 7 || strlen(perms) < 4)
		return 0;
	name = line + name_at;
	if (perms[2] != 'x' && name[0] != '/')
		return 0;   /* heap, stacks, anonymous data */
	/* Anonymous executable memory is how JIT code looks; perf names it
	 * "//anon". */
	if (!*name || *name == '\n')
		name = "//anon";
	prot |= perms[0] == 'r' ? PROT_READ : 0;
	prot |= perms[1] == 'w' ? PROT_WRITE : 0;
	prot |= perms[2] == 'x' ? PROT_EXEC : 0;
	flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;

	e->s->len = 0;
	synth_begin(e->s, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER |
		    (prot & PROT_EXEC ? 0 : PERF_RECORD_MISC_MMAP_DATA));
	synth_u32x2(e->s, (uint32_t)pid, (uint32_t)pid);
	synth_u64(e->s, start);
	synth_u64(e->s, end - start);
	synth_u64(e->s, pgoff);
	synth_u32x2(e->s, maj, min);
	synth_u64(e->s, ino);
	synth_u64(e->s, 0);               /* ino_generation */
	synth_u32x2(e->s, prot, flags);
	{
		char copy[PATH_MAX + 32];

		snprintf(copy, sizeof(copy), "%s", name);
		copy[strcspn(copy, "\n")] = 0;
		synth_string(e->s, copy);
	}
	return emit(e, (uint32_t)pid, (uint32_t)pid);
}

static int synth_maps(struct pr__emitter *e, pid_t pid)
{
	char path[64];
	char *line = NULL;
	size_t cap = 0;
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	while (!err && getline(&line, &cap, f) > 0)
		err = synth_map_line(e, pid, line);
	free(line);
	fclose(f);
	return err;
}

int pr__emitter_init(struct pr__emitter *e, const struct perf_event_attr *attr, uint64_t id,
		     pr_record_fn cb, void *ctx)
{
	e->s = NULL;       /* freed by the caller whatever happens */
	if (!attr || !cb)
		return -EINVAL;
	e->attr = attr;
	e->id = id;
	e->cb = cb;
	e->ctx = ctx;
	pr__parse_cfg_from_attr(&e->cfg, attr);
	e->s = malloc(sizeof(*e->s));
	return e->s ? 0 : -ENOMEM;
}

static int synth_one(struct pr__emitter *e, pid_t pid)
{
	struct thread_walk w = { e, pid };
	int err = pr__proc_for_each(pid, synth_thread, &w);

	return err ? err : synth_maps(e, pid);
}

/* A process of the system's, gone or not. */
static int synth_any(pid_t pid, void *arg)
{
	int err = synth_one(arg, pid);

	return err == -ESRCH ? 0 : err;   /* exited while we looked */
}

int pr_process_synthesize(pid_t pid, const struct perf_event_attr *attr,
			  uint64_t id, pr_record_fn cb, void *ctx)
{
	struct pr__emitter e;
	int err = pr__emitter_init(&e, attr, id, cb, ctx);

	/* A thread's id reaches its process's /proc files too, but the
	 * records must name the process, as the samples do. */
	pid_t tgid = err ? 0 : pr_thread_process(pid);

	if (!err)
		err = synth_one(&e, tgid > 0 ? tgid : pid);
	free(e.s);
	return err;
}

int pr_cgroup_synthesize(const char *cgroup, const struct perf_event_attr *attr, uint64_t id,
			 pr_record_fn cb, void *ctx)
{
	struct pr__emitter e;
	int err;

	if (!cgroup)
		return -EINVAL;
	err = pr__emitter_init(&e, attr, id, cb, ctx);
	if (!err)
		err = pr__cgroup_for_each(cgroup, synth_any, &e, NULL);
	free(e.s);
	return err;
}

int pr_system_synthesize(const struct perf_event_attr *attr, uint64_t id,
			 pr_record_fn cb, void *ctx)
{
	struct pr__emitter e;
	int err = pr__emitter_init(&e, attr, id, cb, ctx);

	if (!err)
		err = pr__proc_for_each(0, synth_any, &e);
	free(e.s);
	return err;
}

/* The address of _text, or 0 when kallsyms hides it. */
static uint64_t kernel_text_start(void)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512];
	uint64_t addr = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char type, name[256];

		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 &&
		    !strcmp(name, "_text")) {
			addr = a;
			break;
		}
	}
	fclose(f);
	return addr;
}

int pr_kernel_synthesize(const struct perf_event_attr *attr, uint64_t id,
			 pr_record_fn cb, void *ctx)
{
	struct pr__emitter e;
	uint64_t start = kernel_text_start();
	int err;

	if (!start)
		return 0;
	err = pr__emitter_init(&e, attr, id, cb, ctx);
	if (err)
		return err;
	e.s->len = 0;
	synth_begin(e.s, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
	synth_u32x2(e.s, UINT32_MAX, 0);   /* pid -1: the kernel */
	synth_u64(e.s, start);
	synth_u64(e.s, UINT64_MAX - start);
	synth_u64(e.s, start);              /* pgoff: perf's convention */
	synth_string(e.s, "[kernel.kallsyms]_text");
	err = emit(&e, UINT32_MAX, 0);
	free(e.s);
	return err;
}
