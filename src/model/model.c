/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The process model: each process's mappings, kept current from MMAP,
 * MMAP2, FORK, EXIT, COMM-exec and SAMPLE records applied in order (a
 * sample in the image exec loaded ends the old one), and the DSOs
 * (mapped files) they share.  A DSO is one file however many processes and
 * mappings refer to it, identified by device and inode when the record has
 * them, by name otherwise.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model/elfcache.h"

static void touched(struct pr_model *m, struct pr_proc *p)
{
	p->generation = ++m->generation;
	p->code_generation = p->generation;
}

/* `p` is a new process (a new pid, or an exec): a serial number of its
 * own, skipping 0 (unknown) when the counter wraps. */
static void new_serial(struct pr_model *m, struct pr_proc *p)
{
	if (!++m->serial)
		++m->serial;
	p->serial = m->serial;
}

uint64_t pr__dso_key(const char *path, uint32_t maj, uint32_t min, uint64_t ino)
{
	return pr__hash_mix(pr__hash_mix(pr__hash_str(path), ino), (uint64_t)maj << 32 | min);
}

#define KERNEL_MAP "[kernel.kallsyms]"

struct pr_model *pr__model_new(void)
{
	return calloc(1, sizeof(struct pr_model));
}

void pr__proc_free(struct pr_proc *p)
{
	if (p) {
		free(p->maps);
		free(p->old);
		free(p);
	}
}

struct pr_elfcache *pr__model_elfcache(struct pr_model *m)
{
	if (!m->elves)
		m->elves = pr__elfcache_new();
	return m->elves;
}

struct pr_elfcache *pr__model_files(struct pr_model *m, const char *const *dirs, size_t nr,
				    const char *who, const struct pr_logger *lg)
{
	struct pr_elfcache *c = pr__model_elfcache(m);

	if (!c || !nr)
		return c;
	if (m->own_debug_dirs) {
		pr__log(lg, PR_LOG_DEBUG, "the %s's debug directories are ignored: the model "
			"has its own (pr_model_opts), where every file is looked for", who);
		return c;
	}
	return pr__elfcache_add_dirs(c, dirs, nr) ? NULL : c;
}

void pr__model_free(struct pr_model *m)
{
	if (!m)
		return;
	pr__elfcache_free(m->elves);
	for (size_t i = 0; i < m->procs.cap; i++)
		if (m->procs.slots[i].value)
			pr__proc_free(m->procs.slots[i].value);
	pr__hashmap_free(&m->procs);
	for (size_t i = 0; i < m->threads.cap; i++)
		free(m->threads.slots[i].value);
	pr__hashmap_free(&m->threads);
	pr__hashmap_free(&m->dso_index);
	for (size_t i = 0; i < m->hints.cap; i++) {
		struct pr_build_id_hint *h = m->hints.slots[i].value;

		while (h) {
			struct pr_build_id_hint *next = h->next_same_key;

			free(h->path);
			free(h);
			h = next;
		}
	}
	pr__hashmap_free(&m->hints);
	for (size_t i = 0; i < m->nr_dsos; i++) {
		free(m->dsos[i]->path);
		free(m->dsos[i]);
	}
	free(m->dsos);
	free(m);
}

static const struct pr_build_id_hint *find_hint(const struct pr_model *m,
						 const char *path)
{
	const struct pr_build_id_hint *h = pr__hashmap_get(&m->hints, pr__hash_str(path));

	for (; h; h = h->next_same_key)
		if (!strcmp(h->path, path))
			return h;
	return NULL;
}

size_t pr__model_build_id_hint(const struct pr_model *m, const char *path, uint8_t *id)
{
	const struct pr_build_id_hint *h = find_hint(m, path);

	if (!h)
		return 0;
	memcpy(id, h->id, h->len);
	return h->len;
}

const char *pr__model_kernel_ref(const struct pr_model *m, uint64_t *addr)
{
	*addr = m->kernel_ref_addr;
	return m->kernel_ref[0] ? m->kernel_ref : NULL;
}

static void apply_hint(const struct pr_model *m, struct pr_dso *d)
{
	const struct pr_build_id_hint *h = find_hint(m, d->path);

	if (h && !d->build_id_size) {
		memcpy(d->build_id, h->id, h->len);
		d->build_id_size = h->len;
	}
}

int pr_model_set_build_id(struct pr_model *m, const char *path, const uint8_t *id,
			  size_t len)
{
	struct pr_build_id_hint *h;
	uint64_t key;

	if (!m || !path || !id || !len || len > PR_BUILD_ID_MAX)
		return -EINVAL;
	if (find_hint(m, path))
		return 0;
	key = pr__hash_str(path);
	h = calloc(1, sizeof(*h));
	if (!h || !(h->path = strdup(path))) {
		free(h);
		return -ENOMEM;
	}
	memcpy(h->id, id, len);
	h->len = (uint8_t)len;
	h->next_same_key = pr__hashmap_get(&m->hints, key);
	if (pr__hashmap_put(&m->hints, key, h)) {
		free(h->path);
		free(h);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->nr_dsos; i++)
		if (!strcmp(m->dsos[i]->path, path))
			apply_hint(m, m->dsos[i]);
	return 0;
}

/* Through the file's public accessors, as any user of the library reads
 * them: the model needs none of perfdata/'s internals, and perf.data's
 * reader needs nothing of the model. */
int pr_model_use_file(struct pr_model *m, const struct pr_file *f)
{
	if (!m || !f)
		return -EINVAL;
	for (size_t i = 0; i < pr_file_nr_build_ids(f); i++) {
		const struct pr_build_id *b = pr_file_build_id(f, i);
		int err;

		if (!b->size)
			continue;
		err = pr_model_set_build_id(m, b->filename, b->id, b->size);
		if (err && err != -EINVAL)
			return err;
	}
	return 0;
}

/* The serials DSOs have been given (struct pr_dso), across models. */
static _Atomic uint64_t dso_serials;

/* The DSO of the file at `path` on device maj:min, inode `ino`, and with
 * build-id `id` (`len` bytes; 0: any), created when none is; NULL when
 * out of memory. */
static struct pr_dso *dso_of(struct pr_model *m, const char *path, uint32_t maj, uint32_t min,
			     uint64_t ino, const uint8_t *id, size_t len)
{
	uint64_t key = pr__dso_key(path, maj, min, ino);
	struct pr_dso *d = pr__hashmap_get(&m->dso_index, key);

	for (; d; d = d->next_same_key)
		if (d->maj == maj && d->min == min && d->ino == ino &&
		    !strcmp(d->path, path) &&
		    (!len || !d->build_id_size ||
		     (d->build_id_size == len && !memcmp(d->build_id, id, len))))
			return d;
	if (PR_ARRAY_RESERVE(m->dsos, m->cap_dsos, m->nr_dsos + 1))
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->path = strdup(path);
	if (!d->path) {
		free(d);
		return NULL;
	}
	d->maj = maj;
	d->min = min;
	d->ino = ino;
	d->anon = !strncmp(path, "//anon", 6);
	d->serial = atomic_fetch_add_explicit(&dso_serials, 1, memory_order_relaxed) + 1;
	if (len) {
		memcpy(d->build_id, id, len);
		d->build_id_size = (uint8_t)len;
	}
	apply_hint(m, d);
	d->next_same_key = pr__hashmap_get(&m->dso_index, key);
	if (pr__hashmap_put(&m->dso_index, key, d)) {
		free(d->path);
		free(d);
		return NULL;
	}
	m->dsos[m->nr_dsos++] = d;
	return d;
}

struct pr_dso *pr__model_dso(struct pr_model *m, const char *path, uint32_t maj,
			    uint32_t min, uint64_t ino)
{
	return dso_of(m, path, maj, min, ino, NULL, 0);
}

size_t pr__model_nr_dsos(const struct pr_model *m)
{
	return m->nr_dsos;
}

struct pr_dso *pr__model_dso_at(const struct pr_model *m, size_t i)
{
	return i < m->nr_dsos ? m->dsos[i] : NULL;
}

struct pr_proc *pr__model_proc(struct pr_model *m, uint32_t pid, bool create)
{
	struct pr_proc *p = pr__hashmap_get(&m->procs, pid);

	if (p || !create)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	touched(m, p);
	new_serial(m, p);
	if (pr__hashmap_put(&m->procs, pid, p)) {
		free(p);
		return NULL;
	}
	return p;
}

static int reserve(struct pr_proc *p, size_t extra)
{
	if (p->nr + extra > p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct pr_map *v;

		while (cap < p->nr + extra)
			cap *= 2;
		v = realloc(p->maps, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->maps = v;
		p->cap = cap;
	}
	return 0;
}

/* Index of the first of `maps` that ends after `addr`. */
static size_t ending_after(const struct pr_map *maps, size_t nr, uint64_t addr)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t first_ending_after(const struct pr_proc *p, uint64_t addr)
{
	return ending_after(p->maps, p->nr, addr);
}

/*
 * Insert `nm`, replacing whatever it overlaps, as the kernel does for a
 * MAP_FIXED mapping: old mappings are trimmed or split around it.
 */
int pr__proc_insert(struct pr_proc *p, const struct pr_map *nm)
{
	size_t i, j;
	struct pr_map head, tail;
	bool has_head = false, has_tail = false;

	if (nm->end <= nm->start)
		return -EINVAL;
	if (reserve(p, 2))
		return -ENOMEM;
	i = first_ending_after(p, nm->start);
	for (j = i; j < p->nr && p->maps[j].start < nm->end; j++)
		;
	/* maps[i, j) overlap the new mapping. */
	if (i < j && p->maps[i].start < nm->start) {
		head = p->maps[i];
		head.end = nm->start;
		has_head = true;
	}
	if (i < j && p->maps[j - 1].end > nm->end) {
		tail = p->maps[j - 1];
		tail.pgoff += nm->end - tail.start;
		tail.start = nm->end;
		has_tail = true;
	}
	{
		size_t add = (size_t)has_head + 1 + (size_t)has_tail;
		size_t removed = j - i;

		memmove(&p->maps[i + add], &p->maps[j],
			(p->nr - j) * sizeof(*p->maps));
		p->nr = p->nr - removed + add;
		if (has_head)
			p->maps[i++] = head;
		p->maps[i++] = *nm;
		if (has_tail)
			p->maps[i] = tail;
	}
	return 0;
}

const struct pr_map *pr__proc_find(const struct pr_proc *p, uint64_t addr)
{
	size_t i;

	if (!p)
		return NULL;
	i = first_ending_after(p, addr);
	if (i < p->nr && p->maps[i].start <= addr)
		return &p->maps[i];
	/* Not in the new image: perhaps a sample from inside exec, whose
	 * registers are still the old image's. */
	i = ending_after(p->old, p->nr_old, addr);
	if (i < p->nr_old && p->old[i].start <= addr)
		return &p->old[i];
	return NULL;
}

/*
 * A sample of `rec->pid` whose user registers put it in the image exec
 * loaded: the new image runs, so samples inside exec are over and the old
 * image's mappings are let go.  A sample without user registers says so
 * only when it was taken in user mode.
 */
static void apply_sample(struct pr_model *m, const struct pr_record *rec)
{
	struct pr_proc *p = pr__model_proc(m, rec->pid, false);
	uint64_t ip;
	size_t i;

	if (!p || !p->nr_old)
		return;
	if (pr_sample_reg(&rec->u.sample, PR_REG_IP, &ip)) {
		if ((rec->misc & PERF_RECORD_MISC_CPUMODE_MASK) != PERF_RECORD_MISC_USER)
			return;
		ip = rec->u.sample.ip;
	}
	i = first_ending_after(p, ip);
	if (i < p->nr && p->maps[i].start <= ip) {
		free(p->old);
		p->old = NULL;
		p->nr_old = 0;
		touched(m, p);
	}
}

const struct pr_map *pr__model_find(struct pr_model *m, uint32_t pid, uint64_t addr)
{
	return pr__proc_find(pr__model_proc(m, pid, false), addr);
}

/* Whether mappings of `p` that hold code overlap [start, end). */
static bool cuts_code(const struct pr_proc *p, uint64_t start, uint64_t end)
{
	for (size_t i = first_ending_after(p, start); i < p->nr && p->maps[i].start < end; i++)
		if (p->maps[i].prot & PROT_EXEC)
			return true;
	return false;
}

static int apply_mmap(struct pr_model *m, const struct pr_record *rec)
{
	const struct pr_mmap *mm = &rec->u.mmap;
	struct pr_proc *p;
	struct pr_map nm;

	/* The kernel's own mappings (pid -1) are not a process's; its text's
	 * says where the kernel was (KASLR moves it at every boot). */
	if (rec->pid == UINT32_MAX && !strncmp(mm->filename, KERNEL_MAP, strlen(KERNEL_MAP)) &&
	    mm->filename[strlen(KERNEL_MAP)] &&
	    strlen(mm->filename + strlen(KERNEL_MAP)) < sizeof(m->kernel_ref)) {
		strcpy(m->kernel_ref, mm->filename + strlen(KERNEL_MAP));
		m->kernel_ref_addr = mm->pgoff;
	}
	if (rec->pid == UINT32_MAX || !mm->len || mm->addr + mm->len < mm->addr)
		return 0;
	p = pr__model_proc(m, rec->pid, true);
	if (!p)
		return -ENOMEM;
	nm.start = mm->addr;
	nm.end = mm->addr + mm->len;
	nm.pgoff = mm->pgoff;
	/* MMAP records carry no permissions: the kernel sends them for
	 * executable mappings, and for others (perf record -d) with
	 * PERF_RECORD_MISC_MMAP_DATA.  The load bias depends on which. */
	if (mm->is_mmap2)
		nm.prot = mm->prot;
	else
		nm.prot = rec->misc & PERF_RECORD_MISC_MMAP_DATA ? PROT_READ :
							       PROT_READ | PROT_EXEC;
	/* A record with the file's build-id instead of its device and inode
	 * (perf 6.x and later): the same path with another build-id is
	 * another file, as a container's libc at the host's path. */
	nm.dso = dso_of(m, mm->filename, mm->maj, mm->min, mm->ino, mm->build_id,
			mm->has_build_id ? mm->build_id_size : 0);
	if (!nm.dso)
		return -ENOMEM;
	if (mm->has_build_id && !nm.dso->build_id_size) {
		memcpy(nm.dso->build_id, mm->build_id, mm->build_id_size);
		nm.dso->build_id_size = mm->build_id_size;
	}
	if ((nm.prot & PROT_EXEC) || cuts_code(p, nm.start, nm.end))
		touched(m, p);
	else
		p->generation = ++m->generation;
	return pr__proc_insert(p, &nm);
}

/* Start tracking thread `tid` of `pid`, named `comm`, unless known. */
static struct pr_thread *add_thread(struct pr_model *m, uint32_t pid, uint32_t tid,
				    const char *comm)
{
	struct pr_thread *t = pr__hashmap_get(&m->threads, tid);
	struct pr_proc *p;

	if (t && t->pid == pid)
		return t;
	if (t) {
		/* A reused tid: the old thread's exit was not seen. */
		p = pr__model_proc(m, t->pid, false);
		if (p && p->nr_threads)
			p->nr_threads--;
		free(pr__hashmap_del(&m->threads, tid));
	}
	p = pr__model_proc(m, pid, true);
	t = calloc(1, sizeof(*t));
	if (!p || !t || pr__hashmap_put(&m->threads, tid, t)) {
		free(t);
		return NULL;
	}
	t->tid = tid;
	t->pid = pid;
	snprintf(t->comm, sizeof(t->comm), "%s", comm ? comm : "");
	p->nr_threads++;
	return t;
}

/* A new process starts with a copy of its parent's address space; a new
 * thread of either kind starts with its creator's name. */
static int apply_fork(struct pr_model *m, const struct pr_record *rec)
{
	const struct pr_thread *creator = pr__hashmap_get(&m->threads, rec->u.task.ptid);
	struct pr_proc *parent, *child;

	if (rec->pid != rec->u.task.ppid) {
		parent = pr__model_proc(m, rec->u.task.ppid, false);
		pr__proc_free(pr__hashmap_del(&m->procs, rec->pid));
		child = pr__model_proc(m, rec->pid, true);
		if (!child)
			return -ENOMEM;
		if (parent && parent->nr) {
			if (reserve(child, parent->nr))
				return -ENOMEM;
			memcpy(child->maps, parent->maps,
			       parent->nr * sizeof(*parent->maps));
			child->nr = parent->nr;
			touched(m, child);
		}
	}
	return add_thread(m, rec->pid, rec->tid, creator ? creator->comm : NULL)
	       ? 0 : -ENOMEM;
}

/* A process is gone when its last thread is; threads never announced
 * (sampling began without synthesis) count as its main thread. */
static void apply_exit(struct pr_model *m, const struct pr_record *rec)
{
	struct pr_thread *t = pr__hashmap_del(&m->threads, rec->tid);
	struct pr_proc *p = pr__model_proc(m, rec->pid, false);

	if (t)
		m->exited[m->next_exited++ % PR_MODEL_EXITED] = *t;
	if (!p) {
		free(t);
		return;
	}
	if (t) {
		if (p->nr_threads)
			p->nr_threads--;
		free(t);
		if (!p->nr_threads)
			pr__proc_free(pr__hashmap_del(&m->procs, rec->pid));
	} else if (rec->tid == rec->pid && p->nr_threads == 0) {
		pr__proc_free(pr__hashmap_del(&m->procs, rec->pid));
	}
}

static int apply_comm(struct pr_model *m, const struct pr_record *rec)
{
	struct pr_thread *t = add_thread(m, rec->pid, rec->tid, rec->u.comm.comm);

	if (!t)
		return -ENOMEM;
	snprintf(t->comm, sizeof(t->comm), "%s", rec->u.comm.comm);
	if (rec->u.comm.exec) {
		struct pr_proc *p = pr__model_proc(m, rec->pid, false);

		/* exec replaces the address space; the new image's MMAP
		 * records follow.  Samples taken inside exec, after this
		 * record, still carry the old image's registers until the
		 * new one runs: its mappings stay, second in line, until a
		 * sample shows the new image running (apply_sample). */
		if (p) {
			free(p->old);
			p->old = p->maps;
			p->nr_old = p->nr;
			p->maps = NULL;
			p->nr = p->cap = 0;
			touched(m, p);
			new_serial(m, p);
		}
	}
	return 0;
}

int pr__model_apply(struct pr_model *m, const struct pr_record *rec)
{
	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return apply_mmap(m, rec);
	case PERF_RECORD_FORK:
		return apply_fork(m, rec);
	case PERF_RECORD_EXIT:
		apply_exit(m, rec);
		return 0;
	case PERF_RECORD_COMM:
		return apply_comm(m, rec);
	case PERF_RECORD_SAMPLE:
		apply_sample(m, rec);
		return 0;
	default:
		return 0;
	}
}

const char *pr__model_comm(const struct pr_model *m, uint32_t tid)
{
	const struct pr_thread *t = pr__hashmap_get(&m->threads, tid);

	/* Thread 0 is each CPU's idle task, which no record announces:
	 * named as perf names it, so that idle time is told apart in every
	 * output and agrees with perf's. */
	if (!t && tid == 0)
		return "swapper";
	if (t)
		return t->comm;
	/* A thread that exited, sampled on its way out: the newest first. */
	for (uint32_t i = 1; i <= PR_MODEL_EXITED && i <= m->next_exited; i++) {
		t = &m->exited[(m->next_exited - i) % PR_MODEL_EXITED];
		if (t->tid == tid)
			return t->comm;
	}
	return NULL;
}

/* ---- the public face ---- */

PR_SYMVER(pr__model_new_2_1, "pr_model_new@@LIBPERFREADER_2.1");
struct pr_model *pr__model_new_2_1(const struct pr_model_opts *opts)
{
	size_t nr_dirs = PR_OPTS_GET(opts, nr_debug_dirs, 0);
	const struct pr_cache_opts *cache = PR_OPTS_GET(opts, cache, NULL);
	struct pr_model *m;

	if (!PR_OPTS_VALID(opts) || (nr_dirs && !opts->debug_dirs) || !PR_OPTS_VALID(cache)) {
		errno = EINVAL;
		return NULL;
	}
	m = pr__model_new();
	if (!m)
		return NULL;
	if (nr_dirs && (!pr__model_elfcache(m) ||
			pr__elfcache_add_dirs(m->elves, opts->debug_dirs, nr_dirs))) {
		pr__model_free(m);
		errno = ENOMEM;
		return NULL;
	}
	m->own_debug_dirs = nr_dirs > 0;
	if (cache)
		pr_model_set_cache(m, cache);
	return m;
}

/* 2.0 had no options. */
PR_SYMVER(pr__model_new_2_0, "pr_model_new@LIBPERFREADER_2");
struct pr_model *pr__model_new_2_0(void)
{
	return pr__model_new_2_1(NULL);
}

void pr_model_free(struct pr_model *m)
{
	pr__model_free(m);
}

int pr_model_apply(struct pr_model *m, const struct pr_record *rec)
{
	return m && rec ? pr__model_apply(m, rec) : -EINVAL;
}

const char *pr_model_comm(const struct pr_model *m, uint32_t tid)
{
	return m ? pr__model_comm(m, tid) : NULL;
}

const char *pr_dso_path(const struct pr_dso *d)
{
	return d ? d->path : NULL;
}

size_t pr_dso_build_id(const struct pr_dso *d, const uint8_t **id)
{
	if (!d)
		return 0;
	if (id)
		*id = d->build_id;
	return d->build_id_size;
}
