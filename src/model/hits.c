/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which mapped files samples landed in, and their build-ids (hits.h says
 * why in two passes).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model/hits.h"

struct pr_hits {
	struct pr_model *maps;       /* as records are written */
	struct pr_model *replay;     /* as they are replayed in time order */
	struct pr_hashmap files;     /* struct pr_dso * of either -> struct hit_file */
	struct pr_hashmap done;      /* generations hit_executables() marked */
	bool kernel;                 /* a replayed sample was in the kernel */
};

/* What is learnt of a mapped file, kept here rather than in the model's
 * struct pr_dso, which the model's users share. */
struct hit_file {
	bool build_id_tried;         /* read through map_files already */
	bool hit;                    /* a sample landed in it */
	/* Mapped by a process in another mount namespace: the host's file at
	 * its path is another file, never asked for its build-id. */
	bool foreign;
	uint8_t build_id_size;
	uint8_t build_id[PR_BUILD_ID_MAX];
};

/* The entry for `d`, made on first use; NULL when out of memory. */
static struct hit_file *file_of(struct pr_hits *h, const struct pr_dso *d)
{
	struct hit_file *f = pr__hashmap_get(&h->files, (uintptr_t)d);

	if (f)
		return f;
	f = calloc(1, sizeof(*f));
	if (!f || pr__hashmap_put(&h->files, (uintptr_t)d, f)) {
		free(f);
		return NULL;
	}
	return f;
}

struct pr_hits *pr__hits_new(void)
{
	struct pr_hits *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->maps = pr__model_new();
	h->replay = pr__model_new();
	if (!h->maps || !h->replay) {
		pr__hits_free(h);
		return NULL;
	}
	return h;
}

void pr__hits_free(struct pr_hits *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->files.cap; i++)
		free(h->files.slots[i].value);
	pr__hashmap_free(&h->files);
	pr__hashmap_free(&h->done);
	pr__model_free(h->maps);
	pr__model_free(h->replay);
	free(h);
}

/* The build-id of a file a sample landed in, read while the process still
 * runs: its map_files entry is the very file mapped, even if it has since
 * been replaced or deleted on disk.  Best effort and first hit only: the
 * reads are few, and hit_build_id() fills in what this misses. */
static void note_hit(struct pr_hits *h, const struct pr_record *rec, const struct pr_map *m)
{
	struct hit_file *f;
	size_t len = 0;
	char path[128];

	if (m->dso->build_id_size || !(f = file_of(h, m->dso)) || f->build_id_tried)
		return;
	f->build_id_tried = true;
	f->foreign = pr__mntns_differs(rec->pid) > 0;
	snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", rec->pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	if (!pr__build_id_path(path, f->build_id, &len))
		f->build_id_size = (uint8_t)len;
}

static bool is_kernel_sample(const struct pr_record *rec)
{
	return (rec->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
}

/* Where a sample was in user mode: its ip, or for one taken in the kernel
 * (every switch-out sample is) the user registers' ip.  False when the
 * task has no user mode to speak of (a kernel thread). */
static bool sample_user_ip(const struct pr_record *rec, uint64_t *ip)
{
	if (!is_kernel_sample(rec)) {
		*ip = rec->u.sample.ip;
		return true;
	}
	return !pr_sample_reg(&rec->u.sample, PR_REG_IP, ip);
}

int pr__hits_track(struct pr_hits *h, const struct pr_record *rec)
{
	const struct pr_map *m;
	uint64_t ip;

	if (pr__model_apply(h->maps, rec))
		return -ENOMEM;
	if (rec->type == PERF_RECORD_SAMPLE && sample_user_ip(rec, &ip)) {
		m = pr__model_find(h->maps, rec->pid, ip);
		if (m)
			note_hit(h, rec, m);
	}
	return 0;
}

/*
 * A sampled process's callers may be in any file it maps executable --
 * which ones, only unwinding its copied stacks tells -- and a replay
 * elsewhere finds each by build-id, so every one counts as hit (perf
 * marks only the sampled address's file).  Once per state of the
 * process's mappings: `done` holds the generations marked.
 */
static int hit_executables(struct pr_hits *h, struct pr_hashmap *done, struct pr_proc *p)
{
	if (!p || pr__hashmap_get(done, p->generation))
		return 0;
	for (size_t i = 0; i < p->nr; i++) {
		struct hit_file *f;

		if (!(p->maps[i].prot & PROT_EXEC))
			continue;
		if (!(f = file_of(h, p->maps[i].dso)))
			return -ENOMEM;
		f->hit = true;
	}
	return pr__hashmap_put(done, p->generation, p);
}

int pr__hits_replay(struct pr_hits *h, const struct pr_record *rec)
{
	const struct pr_map *m;
	struct hit_file *hit;
	uint64_t ip;

	if (pr__model_apply(h->replay, rec))
		return -ENOMEM;
	if (rec->type != PERF_RECORD_SAMPLE)
		return 0;
	if (is_kernel_sample(rec))
		h->kernel = true;
	/* Switch-out samples are taken in the kernel, but it is
	 * their user stack that is unwound. */
	if (!sample_user_ip(rec, &ip))
		return 0;
	m = pr__model_find(h->replay, rec->pid, ip);
	if (m) {
		if (!(hit = file_of(h, m->dso)))
			return -ENOMEM;
		hit->hit = true;
	}
	return hit_executables(h, &h->done, pr__model_proc(h->replay, rec->pid, false));
}

/* A build-id copied into `id` (PR_BUILD_ID_MAX bytes): its length. */
static size_t copy_id(uint8_t *id, const uint8_t *from, size_t len)
{
	memcpy(id, from, len);
	return len;
}

/* A hit file's build-id into `id`: the one read through map_files while
 * it ran, else the one the mapping record carried, else the file's on
 * disk.  Its length, 0 when none. */
static size_t hit_build_id(struct pr_hits *h, const struct pr_dso *d, uint8_t *id)
{
	const struct pr_dso *live = pr__model_dso(h->maps, d->path, d->maj, d->min, d->ino);
	const struct hit_file *f = live ? pr__hashmap_get(&h->files, (uintptr_t)live) : NULL;
	size_t len = 0;

	if (f && f->build_id_size)
		return copy_id(id, f->build_id, f->build_id_size);
	if (live && live->build_id_size)
		return copy_id(id, live->build_id, live->build_id_size);
	if (d->build_id_size)
		return copy_id(id, d->build_id, d->build_id_size);
	if (!strcmp(d->path, "[vdso]"))
		return pr__build_id_vdso(id, &len) ? 0 : len;
	if (d->path[0] == '/' && !(f && f->foreign) && !pr__build_id_path(d->path, id, &len))
		return len;
	return 0;
}

const char *pr__hits_next(struct pr_hits *h, size_t *it, uint8_t *id, size_t *len)
{
	while (*it < pr__model_nr_dsos(h->replay)) {
		const struct pr_dso *d = pr__model_dso_at(h->replay, (*it)++);
		const struct hit_file *f = pr__hashmap_get(&h->files, (uintptr_t)d);

		if (f && f->hit) {
			*len = hit_build_id(h, d, id);
			return d->path;
		}
	}
	return NULL;
}

bool pr__hits_kernel(const struct pr_hits *h)
{
	return h->kernel;
}
