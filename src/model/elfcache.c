/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one cache of mapped files and their debug files (elfcache.h): each
 * found, mapped and checked once per model, whoever asks first, the
 * unwinder or the symbolizer; and one set of rules for where a debug file
 * may be, so a file the symbolizer names from is also the one the
 * unwinder takes .debug_frame from.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "model/elfcache.h"

struct pr_elfcache {
	char **user_dirs;            /* as added, before realpath() */
	size_t nr_user_dirs;
	struct pr_dirs dirs;         /* the search order (pr__debug_dirs()) */
	struct pr_hashmap by_dso;    /* struct pr_dso * -> pr_elf, or &missing */
	struct pr_hashmap by_file;   /* (dev, inode) or build-id key -> pr_elf */
	struct pr_elf **elves;       /* every file mapped, to free */
	size_t nr_elves, cap_elves;
	struct pr_elf *vdso;         /* the running kernel's, once read */
	bool vdso_tried;
	struct pr_debuginfod *debuginfod;
	size_t foreign_missing;      /* pr__elfcache_foreign_missing() */
};

/* The mark for "looked, not found" in by_dso. */
static struct pr_elf missing;

struct pr_elfcache *pr__elfcache_new(void)
{
	struct pr_elfcache *c = calloc(1, sizeof(*c));

	if (c && pr__debug_dirs(NULL, 0, &c->dirs)) {
		free(c);
		return NULL;
	}
	return c;
}

void pr__elfcache_free(struct pr_elfcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr_elves; i++)
		pr__elf_free(c->elves[i]);
	free(c->elves);
	pr__hashmap_free(&c->by_dso);
	pr__hashmap_free(&c->by_file);
	for (size_t i = 0; i < c->nr_user_dirs; i++)
		free(c->user_dirs[i]);
	free(c->user_dirs);
	pr__dirs_free(&c->dirs);
	pr__debuginfod_free(c->debuginfod);
	free(c);
}

int pr__elfcache_add_dirs(struct pr_elfcache *c, const char *const *dirs, size_t nr)
{
	char **v = realloc(c->user_dirs, (c->nr_user_dirs + nr + 1) * sizeof(*v));
	struct pr_dirs order;

	if (!v)
		return -ENOMEM;
	c->user_dirs = v;
	for (size_t i = 0; i < nr; i++) {
		bool known = !dirs[i];

		for (size_t k = 0; !known && k < c->nr_user_dirs; k++)
			known = !strcmp(c->user_dirs[k], dirs[i]);
		if (known)
			continue;
		if (!(v[c->nr_user_dirs] = strdup(dirs[i])))
			return -ENOMEM;
		c->nr_user_dirs++;
	}
	if (pr__debug_dirs((const char *const *)c->user_dirs, c->nr_user_dirs, &order))
		return -ENOMEM;
	pr__dirs_free(&c->dirs);
	c->dirs = order;
	return 0;
}

const struct pr_dirs *pr__elfcache_dirs(const struct pr_elfcache *c)
{
	return &c->dirs;
}

static int keep(struct pr_elfcache *c, struct pr_elf *e)
{
	if (PR_ARRAY_RESERVE(c->elves, c->cap_elves, c->nr_elves + 1))
		return -ENOMEM;
	c->elves[c->nr_elves++] = e;
	return 0;
}

/* by_file holds both keys: 64-bit hashes of different inputs, which meet
 * no more often than any two hashes do. */
static uint64_t id_key(const uint8_t *id, size_t len)
{
	return pr__hash_bytes(PR_HASH_INIT, id, len);
}

static uint64_t devino_key(uint64_t dev, uint64_t ino)
{
	return pr__hash_mix(pr__hash_mix(PR_HASH_INIT, dev), ino);
}

/* ---- mapped files ---- */

struct try_arg {
	struct pr_elfcache *c;
	const struct pr_dso *dso;
	const struct pr_logger *lg;
	uint32_t root;               /* pr_dso_query's */
	struct pr_elf *found;
};

/* The file open at `fd` (ours to close), found as `cand`, if it is the
 * one wanted: opened once, however many names it is found under. */
static int try_file(int fd, const char *cand, void *arg)
{
	struct try_arg *t = arg;
	const struct pr_dso *d = t->dso;
	struct pr_elf *e, *known;
	struct stat st;

	if (fstat(fd, &st)) {
		close(fd);
		return 0;
	}
	known = pr__hashmap_get(&t->c->by_file, devino_key(st.st_dev, st.st_ino));
	if (known) {
		close(fd);
		t->found = pr__elf_is(known, d->build_id, d->build_id_size) ? known : NULL;
		return t->found != NULL;
	}
	/* A path of the process goes when it does: what it found is kept
	 * open, for pr__elf_fd(). */
	e = pr__elf_open(fd, cand, !strncmp(cand, "/proc/", 6), t->lg);
	if (!e)
		return 0;
	e->root = t->root;
	if (!pr__elf_is(e, d->build_id, d->build_id_size)) {
		pr__log(t->lg, PR_LOG_DEBUG, "%s is not the %s that was sampled "
			"(build-id differs); not used", cand, d->path);
		pr__elf_free(e);
		return 0;
	}
	if (e->build_id_size) {
		known = pr__hashmap_get(&t->c->by_file, id_key(e->build_id, e->build_id_size));
		if (known && pr__elf_is(known, e->build_id, e->build_id_size)) {
			pr__elf_free(e);
			pr__hashmap_put(&t->c->by_file, devino_key(st.st_dev, st.st_ino), known);
			t->found = known;
			return 1;
		}
	}
	if (!(e->origin = strdup(d->path)) || keep(t->c, e)) {
		pr__elf_free(e);
		return 0;
	}
	pr__hashmap_put(&t->c->by_file, devino_key(e->dev, e->ino), e);
	if (e->build_id_size)
		pr__hashmap_put(&t->c->by_file, id_key(e->build_id, e->build_id_size), e);
	t->found = e;
	return 1;
}

/* The running kernel's vDSO, for live targets and for files recorded on
 * this kernel (the same build-id). */
static struct pr_elf *own_vdso(struct pr_elfcache *c, const struct pr_dso *d,
			       const struct pr_logger *lg)
{
	const void *image;
	size_t size;

	if (!c->vdso_tried) {
		c->vdso_tried = true;
		if (!pr__vdso_image(&image, &size) &&
		    (c->vdso = pr__elf_from_memory(image, size, "[vdso]", lg)) &&
		    ((c->vdso->origin = strdup("[vdso]")) == NULL || keep(c, c->vdso))) {
			pr__elf_free(c->vdso);
			c->vdso = NULL;
		}
	}
	return c->vdso && pr__elf_is(c->vdso, d->build_id, d->build_id_size) ? c->vdso : NULL;
}

static struct pr_elf *locate(struct pr_elfcache *c, const struct pr_dso *d,
			     const struct pr_map *m, uint32_t pid, bool live,
			     const struct pr_logger *lg)
{
	struct pr_dso_query q = { .dso = d, .map = m, .pid = pid, .live = live,
				  .dirs = &c->dirs };
	struct try_arg t = { c, d, lg, 0, NULL };
	struct pr_elf *e;

	if (!strcmp(d->path, "[vdso]")) {
		e = live || d->build_id_size ? own_vdso(c, d, lg) : NULL;
		if (e || !d->build_id_size)
			return e;
	} else if (d->path[0] != '/') {
		return NULL;
	}
	/* A process in another mount namespace has files of its own at the
	 * host's paths: only its root has them. */
	if (live && pid) {
		int differs = pr__mntns_differs(pid);

		if (differs > 0)
			q.root = t.root = pid;
		q.unsure = differs < 0;
	}
	pr__dso_find(&q, try_file, &t);
	if (!t.found && q.root) {
		c->foreign_missing++;
		pr__log(lg, PR_LOG_INFO, "%s of process %u: not usable inside its root; its "
			"frames stay unnamed (the host's file at that path is not used)", d->path,
			pid);
	}
	return t.found;
}

struct pr_elf *pr__elfcache_file(struct pr_elfcache *c, struct pr_dso *d,
				 const struct pr_map *m, uint32_t pid, bool live,
				 const struct pr_logger *lg)
{
	struct pr_elf *e = pr__hashmap_get(&c->by_dso, (uintptr_t)d);

	if (e)
		return e == &missing ? NULL : e;
	e = locate(c, d, m, pid, live, lg);
	/* A live process's file is opened as the very file it maps: its
	 * build-id is the mapping's, which no live record carries and the
	 * outputs that name files by build-id (pprof) need. */
	if (e && live && !d->build_id_size && e->build_id_size) {
		memcpy(d->build_id, e->build_id, e->build_id_size);
		d->build_id_size = (uint8_t)e->build_id_size;
	}
	pr__hashmap_put(&c->by_dso, (uintptr_t)d, e ? e : &missing);
	return e;
}

/* ---- debug files ---- */

/* .gnu_debuglink's check of a file with no build-id: the CRC-32 of it all. */
static bool has_crc(const struct pr_elf *e, uint32_t want)
{
	uLong crc = crc32(0, NULL, 0);

	for (size_t off = 0; off < e->size; off += 1u << 30) {
		size_t n = e->size - off < (1u << 30) ? e->size - off : (1u << 30);

		crc = crc32(crc, e->data + off, (uInt)n);
	}
	return (uint32_t)crc == want;
}

/* The file open at `fd` (closed), if it is the debug file of `e`: `e`'s
 * build-id (or the link's CRC), and debug information, which keeps the
 * stripped file itself from passing. */
static struct pr_elf *debug_file_at(const struct pr_elf *e, int fd, const char *path,
				    const struct pr_logger *lg)
{
	struct pr_elf *dbg;

	/* One found in a process's root keeps its fd: its path is never
	 * opened again (pr__elf_fd()). */
	if (fd < 0 || !(dbg = pr__elf_open(fd, path, e->root != 0, lg)))
		return NULL;
	dbg->root = e->root;
	if (e->build_id_size ? !pr__elf_is(dbg, e->build_id, e->build_id_size)
			     : !has_crc(dbg, e->debuglink_crc)) {
		pr__log(lg, PR_LOG_DEBUG, "%s: not the debug file of %s (%s differs); ignored",
			path, e->path, e->build_id_size ? "build-id" : "CRC");
	} else if (!dbg->has_debug_info && !dbg->debug_frame.size) {
		pr__log(lg, PR_LOG_DEBUG, "%s: no debug information; ignored", path);
	} else {
		return dbg;
	}
	pr__elf_free(dbg);
	return NULL;
}

/* The debug file of `e` at `path`, inside e's process's root when it was
 * found in one. */
static struct pr_elf *try_debug_file(const struct pr_elf *e, const char *path,
				     const struct pr_logger *lg)
{
	char name[4200];
	int fd = pr__open_target_file(e->root, path, lg);

	if (fd >= 0 && e->root && pr__path_fmt(name, sizeof(name), "/proc/%u/root%s", e->root,
						path))
		return debug_file_at(e, fd, name, lg);
	return debug_file_at(e, fd, path, lg);
}

static struct pr_elf *fetch_debug_file(struct pr_elfcache *c, const struct pr_elf *e,
				       const struct pr_logger *lg)
{
	char *path = NULL;
	int fd = pr__debuginfod_find(&c->debuginfod, e->build_id, e->build_id_size, &path, lg);
	struct pr_elf *dbg = debug_file_at(e, fd, path ? path : "(debuginfod)", lg);

	free(path);
	if (dbg)
		dbg->root = 0;
	return dbg;
}

/* Whether .gnu_debuglink's `name` is a file name, as gdb takes it: one
 * with a directory in it could name any file, in the root or (before
 * pr__open_target_file()) outside it. */
static bool link_is_name(const struct pr_elf *e, const char *name, const struct pr_logger *lg)
{
	if (name[0] && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, ".."))
		return true;
	pr__log(lg, PR_LOG_DEBUG, "%s: its .gnu_debuglink \"%s\" is not a file name; "
		"not followed", e->path, name);
	return false;
}

/* Where gdb, perf and libdwfl look (elfcache.h), first found first. */
static struct pr_elf *find_debug(struct pr_elfcache *c, const struct pr_elf *e,
				 const struct pr_logger *lg)
{
	/* .gnu_debuglink is relative to where the process mapped the file
	 * from, not to /proc/PID/map_files. */
	const char *from = e->origin ? e->origin : e->path;
	const char *slash = strrchr(from, '/');
	char path[4096], dir[4096], hex[2 * PR_BUILD_ID_MAX + 1];
	struct pr_elf *dbg = NULL;

	if (e->build_id_size >= 2) {
		pr__hex(hex, e->build_id, e->build_id_size);
		for (size_t it = 0;
		     !dbg && pr__debug_file_next(&c->dirs, hex, &it, path, sizeof(path));)
			dbg = try_debug_file(e, path, lg);
	}
	if (!dbg && e->debuglink && slash && link_is_name(e, e->debuglink, lg) &&
	    pr__path_fmt(dir, sizeof(dir), "%.*s", (int)(slash - from), from)) {
		if (pr__path_fmt(path, sizeof(path), "%s/%s", dir, e->debuglink))
			dbg = try_debug_file(e, path, lg);
		if (!dbg && pr__path_fmt(path, sizeof(path), "%s/.debug/%s", dir, e->debuglink))
			dbg = try_debug_file(e, path, lg);
		for (size_t i = 0; !dbg && i < c->dirs.nr; i++)
			if (pr__path_fmt(path, sizeof(path), "%s%s/%s", c->dirs.v[i], dir,
					 e->debuglink))
				dbg = try_debug_file(e, path, lg);
	}
	return dbg ? dbg : fetch_debug_file(c, e, lg);
}

struct pr_elf *pr__elfcache_debug(struct pr_elfcache *c, struct pr_elf *e,
				  const struct pr_logger *lg)
{
	if (e->debug_tried)
		return e->debug;
	e->debug_tried = true;
	e->debug = find_debug(c, e, lg);
	if (e->debug)
		e->debug->is_debug = true;
	if (e->debug && keep(c, e->debug)) {
		pr__elf_free(e->debug);
		e->debug = NULL;
	}
	return e->debug;
}

size_t pr__elfcache_foreign_missing(const struct pr_elfcache *c)
{
	return c ? c->foreign_missing : 0;
}

/* ---- trimming (model/trim.c) ---- */

void pr__elfcache_each(struct pr_elfcache *c,
		       void (*fn)(struct pr_elf *e, struct pr_dso *d, void *arg), void *arg)
{
	for (size_t i = 0; i < c->by_dso.cap; i++) {
		struct pr_elf *e = c->by_dso.slots[i].value;

		if (e && e != &missing && e != c->vdso)
			fn(e, (struct pr_dso *)(uintptr_t)c->by_dso.slots[i].key, arg);
	}
}

static bool dso_stays(uint64_t key, void *value, void *arg)
{
	(void)arg;
	return !((struct pr_dso *)(uintptr_t)key)->going && !((struct pr_elf *)value)->going;
}

static bool file_stays(uint64_t key, void *value, void *arg)
{
	(void)key, (void)arg;
	return !((struct pr_elf *)value)->going;
}

void pr__elfcache_release_pages(struct pr_elfcache *c)
{
	for (size_t i = 0; i < c->nr_elves; i++) {
		const struct pr_elf *e = c->elves[i];

		if (e->owns_mapping && e->size)
			madvise((void *)e->data, e->size, MADV_DONTNEED);
	}
}

void pr__elfcache_drop(struct pr_elfcache *c)
{
	size_t kept = 0;

	for (size_t i = 0; i < c->nr_elves; i++)
		if (c->elves[i]->going && c->elves[i]->debug)
			c->elves[i]->debug->going = true;
	pr__hashmap_filter(&c->by_dso, dso_stays, NULL);
	pr__hashmap_filter(&c->by_file, file_stays, NULL);
	for (size_t i = 0; i < c->nr_elves; i++) {
		if (c->elves[i]->going)
			pr__elf_free(c->elves[i]);
		else
			c->elves[kept++] = c->elves[i];
	}
	c->nr_elves = kept;
}
