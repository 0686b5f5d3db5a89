/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The address index cache (symcache.h).  One file per ELF file and
 * settings: BUILDID-sSETTINGS.dsix (symindex_file.c's format), written
 * under a name of its own (NAME.tmp.PID.N) and renamed into place, so
 * that a reader sees a whole file or none, and two programs storing the
 * same index both leave a valid one.  No fsync: a file cut short by a
 * crash is refused by its checks and made again.
 *
 * A file is used least recently when its mtime is oldest: mapping it sets
 * its mtime (atime is not kept by most mounts).  After each store, the
 * files over the bound go, oldest first, and writers' leftovers older
 * than an hour; a file mapped by another program stays valid for it.
 *
 * What is not ours is not trusted: a symbolic link, a FIFO or anything
 * but a regular file under an index's name, or one owned by another user,
 * is left alone (and replaced by the next store); the directory must be
 * ours.  Each index is opened without following links and without
 * waiting, and checked whole before use (pr__symindex_read()).
 *
 * Measured (2026-11-27, a -Dsymindex=true build, `report -o /dev/null`,
 * 5 runs each on this 2-core machine while other jobs ran; user CPU is
 * the steadier figure): on a capture of dwarfsample itself (2 332
 * samples, 4 files with DWARF, indexes 23-607 KB), libdw's path 0.19-0.31
 * s (0.06-0.09 s user) and 40 MB; the index built and stored 0.19-0.25 s
 * (0.10-0.12 user) and 63 MB; mapped from the cache 0.06-0.12 s
 * (0.01-0.04 user) and 31 MB.  On the cc1 capture (27 230 samples, 2
 * files with DWARF): 0.29-0.50 s and 64 MB; 0.25-0.39 s and 92 MB; 0.16-
 * 0.21 s and 62 MB.  The output is the same byte for byte each way.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symbols/symbolizer.h"
#include "symbols/symcache.h"
#include "symbols/symindex.h"
#include "symbols/symdwarf.h"
#include "symbols/ixshare.h"

#define IXC_SUFFIX ".dsix"
#define IXC_TMP ".tmp."
/* A writer's leftover (it died between writing and renaming) this old goes. */
#define IXC_TMP_AGE_S 3600

struct pr__ixcache {
	char *dir;
	uint64_t max_bytes;
	bool said;
	const struct pr_logger *lg;
	int fd;                      /* the directory; -1: not opened yet */
	bool tried, broken, no_writes;
	struct pr__ixcache_stats stats;
};

struct pr__ixcache *pr__ixcache_new(const char *dir, uint64_t max_bytes, bool said,
				    const struct pr_logger *lg)
{
	struct pr__ixcache *c = calloc(1, sizeof(*c));

	if (!c || !(c->dir = strdup(dir))) {
		free(c);
		return NULL;
	}
	c->max_bytes = max_bytes ? max_bytes : PR_IXCACHE_MAX;
	c->said = said;
	c->lg = lg;
	c->fd = -1;
	return c;
}

void pr__ixcache_free(struct pr__ixcache *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	free(c->dir);
	free(c);
}

void pr__ixcache_stats(const struct pr__ixcache *c, struct pr__ixcache_stats *st)
{
	*st = c ? c->stats : (struct pr__ixcache_stats){ 0 };
}

/* The cache's one note about its directory. */
static void dir_note(struct pr__ixcache *c, const char *what, int err)
{
	if (c->broken)
		return;
	c->broken = true;
	pr__log(c->lg, c->said ? PR_LOG_WARN : PR_LOG_DEBUG,
		"the address index cache %s %s%s%s: naming builds each file's index again",
		c->dir, what, err ? ": " : "", err ? strerror(err) : "");
}

/* The directory, opened the first time: false when it cannot be used.
 * Made only to store (`make`): a lookup in a directory not there yet is a
 * miss, and leaves nothing behind (names from libdw make no index). */
static bool dir_ready(struct pr__ixcache *c, bool make)
{
	struct stat st;
	int err;

	if (c->tried)
		return c->fd >= 0;
	if (!make && access(c->dir, F_OK) && errno == ENOENT)
		return false;
	c->tried = true;
	if ((err = pr__mkdirs(c->dir, 0700))) {
		dir_note(c, "cannot be made", -err);
		return false;
	}
	c->fd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->fd < 0) {
		dir_note(c, "cannot be opened", errno);
		return false;
	}
	if (fstat(c->fd, &st) || st.st_uid != geteuid()) {
		dir_note(c, "belongs to another user", 0);
		close(c->fd);
		c->fd = -1;
		return false;
	}
	return true;
}

/* BUILDID-sSETTINGS.dsix */
static void file_name(const struct pr__ix_key *key, char *out, size_t size)
{
	char hex[2 * PR_BUILD_ID_MAX + 1];

	pr__hex(hex, key->build_id, key->build_id_size);
	snprintf(out, size, "%s-s%" PRIx32 IXC_SUFFIX, hex, key->settings);
}

struct pr__symindex *pr__ixcache_get(struct pr__ixcache *c, const struct pr__ix_key *key,
				     const char *what)
{
	static const struct timespec touch[2] = { { .tv_nsec = UTIME_OMIT },
						  { .tv_nsec = UTIME_NOW } };
	struct pr__symindex *ix = NULL;
	const char *why = NULL;
	char name[128];
	struct stat st;
	void *map;
	int fd, guard;

	if (!dir_ready(c, false))
		return NULL;
	file_name(key, name, sizeof(name));
	fd = openat(c->fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			why = errno == ELOOP ? "a symbolic link" : strerror(errno);
		goto out;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (st.st_uid != geteuid())
		why = "owned by another user";
	else if (st.st_size <= 0)
		why = "empty: a write cut short, or a full disk";
	else if ((uint64_t)st.st_size > c->max_bytes || (uint64_t)st.st_size > SIZE_MAX)
		why = "larger than the cache";
	/* Populated at once: its checksum reads every page right away, and
	 * a fault per 64 KiB (the kernel's fault-around) is slower. */
	else if ((map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd,
			     0)) == MAP_FAILED)
		why = strerror(errno);
	/* Guarded from here on: the file cut short (by anything but this
	 * cache, which replaces files whole) reads as zeros, and the index
	 * is dropped (symbolizer.c), where it would have been a SIGBUS. */
	else if ((guard = pr__busguard_add(map, (size_t)st.st_size)) < 0) {
		why = "too many files mapped to guard another";
		munmap(map, (size_t)st.st_size);
	} else if (!(ix = pr__symindex_read(map, (size_t)st.st_size, map, key, &why)) ||
		   pr__busguard_hit(guard)) {
		if (ix)
			why = "cut short while read";
		pr__busguard_remove(guard);
		if (ix)
			pr__symindex_free(ix);
		else
			munmap(map, (size_t)st.st_size);
		ix = NULL;
	} else {
		pr__symindex_guarded(ix, guard);
		/* Checked, its pages leave this process's resident set: they
		 * stay in the page cache, and a lookup maps again the few it
		 * reads.  Left in, every index of an agent's cache counted
		 * whole in its RSS (BENCHMARKS.md, issue 32, fourteenth
		 * pass). */
		madvise(map, (size_t)st.st_size, MADV_DONTNEED);
		futimens(fd, touch);
	}
	close(fd);
out:
	if (ix) {
		c->stats.mapped++;
		pr__log(c->lg, PR_LOG_DEBUG, "%s: its address index mapped from %s/%s", what,
			c->dir, name);
	} else if (why) {
		c->stats.refused++;
		pr__log(c->lg, PR_LOG_DEBUG, "%s: its cached address index %s/%s is not used (%s): "
			"built again", what, c->dir, name, why);
	}
	return ix;
}

void pr__ixcache_put(struct pr__ixcache *c, const struct pr__ix_key *key,
		     const struct pr__symindex *ix, const char *what,
		     struct pr__symindex **written)
{
	static atomic_uint seq;
	char name[128], tmp[192];
	struct pr__symindex *own = NULL;
	int fd, err;

	if (written)
		*written = NULL;
	if (c->no_writes || pr__symindex_bytes(ix) > c->max_bytes || !dir_ready(c, true))
		return;
	file_name(key, name, sizeof(name));
	snprintf(tmp, sizeof(tmp), "%s" IXC_TMP "%d.%u", name, (int)getpid(),
		 atomic_fetch_add(&seq, 1));
	fd = openat(c->fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (errno == EACCES || errno == EROFS || errno == EPERM || errno == ENOSPC ||
		    errno == EDQUOT) {
			c->no_writes = true;
			dir_note(c, "cannot be written", errno);
		}
		return;
	}
	err = pr__symindex_write(ix, key, fd);
	/* Mapped through the descriptor it was written by (opened to read
	 * too for it): the bytes are these, whatever the directory holds by
	 * the time it is used. */
	if (!err && written)
		own = pr__symindex_map_written(fd, key);
	if (close(fd) && !err)
		err = -EIO;
	if (!err && renameat(c->fd, tmp, c->fd, name))
		err = -errno;
	if (err) {
		pr__symindex_free(own);
		unlinkat(c->fd, tmp, 0);
		pr__log(c->lg, PR_LOG_DEBUG, "%s: its address index not kept in %s: %s", what,
			c->dir, strerror(-err));
		return;
	}
	c->stats.stored++;
	if (written)
		*written = own;
	pr__ixcache_evict(c);
}

struct ixc_file {
	char name[128];
	struct timespec mtime;
	uint64_t size;
};

static int by_age(const void *a, const void *b)
{
	const struct ixc_file *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Whether `name` is one of ours: an index, or a writer's leftover. */
static bool ours(const char *name, bool *tmp)
{
	size_t len = strlen(name), suffix = strlen(IXC_SUFFIX);

	*tmp = strstr(name, IXC_SUFFIX IXC_TMP) != NULL;
	return len < sizeof(((struct ixc_file *)0)->name) &&
	       (*tmp || (len > suffix && !strcmp(name + len - suffix, IXC_SUFFIX)));
}

void pr__ixcache_evict(struct pr__ixcache *c)
{
	struct ixc_file *v = NULL;
	size_t nr = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *de;
	time_t now = time(NULL);
	int fd;
	DIR *d;

	if (!dir_ready(c, false) || (fd = openat(c->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st;
		bool tmp;

		if (!ours(de->d_name, &tmp) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		if (tmp && now - st.st_mtime > IXC_TMP_AGE_S) {
			unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (PR_ARRAY_RESERVE(v, cap, nr + 1))
			break;
		snprintf(v[nr].name, sizeof(v[nr].name), "%s", de->d_name);
		v[nr].mtime = st.st_mtim;
		v[nr].size = (uint64_t)st.st_size;
		total += v[nr++].size;
	}
	if (nr)
		qsort(v, nr, sizeof(*v), by_age);
	for (size_t i = 0; i < nr && total > c->max_bytes; i++) {
		if (unlinkat(dirfd(d), v[i].name, 0) && errno != ENOENT)
			continue;
		total -= v[i].size;
		c->stats.evicted++;
	}
	closedir(d);
	free(v);
}

bool pr__sym_index_key(const struct pr_symbolizer *s, const struct sym_module *m,
		       struct pr__ix_key *key)
{
	if (!m->elf || !m->elf->build_id_size || m->elf->build_id_size > PR_BUILD_ID_MAX)
		return false;
	*key = (struct pr__ix_key){ .build_id_size = (uint32_t)m->elf->build_id_size,
				    .settings = s->no_demangle ? 0 : PR_IX_DEMANGLED };
	memcpy(key->build_id, m->elf->build_id, m->elf->build_id_size);
	return true;
}

struct pr__symindex *pr__sym_index_cached(struct pr_symbolizer *s, struct sym_module *m)
{
	struct pr__ix_key key;
	struct pr__symindex *ix = s->ixcache && pr__sym_index_key(s, m, &key) ?
				  pr__ixcache_get(s->ixcache, &key, m->origin) : NULL;

	/* One without lines does not serve a run that shows them: built
	 * again with them, it takes the file's place. */
	if (ix && !s->no_lines && !pr__symindex_has_lines(ix) && pr__symindex_has_dwarf(ix)) {
		pr__symindex_free(ix);
		ix = NULL;
	}
	return ix;
}

/* `ix` kept in the cache, when it has one: the file kept, mapped, in its
 * place (the built index freed), else `ix`.  What an index built by an
 * agent holds is then its pages in the page cache, mapped as lookups read
 * them, not all of its bytes on the heap (BENCHMARKS.md, issue 32,
 * fourteenth pass).  Kept only at the file's own addresses: a cached
 * index is used without opening the DWARF, so without the bias it would
 * give. */
static struct pr__symindex *keep(struct pr_symbolizer *s, struct sym_module *m,
				 struct pr__symindex *ix)
{
	struct pr__symindex *written = NULL;
	struct pr__ix_key key;

	if (ix && s->ixcache && !m->dwarf_bias && pr__sym_index_key(s, m, &key))
		pr__ixcache_put(s->ixcache, &key, ix, m->origin, &written);
	if (!written)
		return ix;
	pr__symindex_free(ix);
	return written;
}

struct pr__symindex *pr__sym_index_build(struct pr_symbolizer *s, struct sym_module *m)
{
	return pr__sym_index_build_units(s, m, NULL, 0);
}

struct pr__symindex *pr__sym_index_build_units(struct pr_symbolizer *s, struct sym_module *m,
					       const uint64_t *units, size_t nr)
{
	return keep(s, m, units ? pr__symindex_build_units(s, m, units, nr) :
			  pr__symindex_build(s, m));
}

void pr__sym_index_keep_symbols(struct pr_symbolizer *s, struct sym_module *m)
{
	struct pr__symindex *ix;

	if (!s->ixcache || s->libdw_only || !pr__sym_index_key(s, m, &(struct pr__ix_key){ 0 }) ||
	    !(ix = pr__symindex_build_symbols(m)))
		return;
	pr__symindex_free(keep(s, m, ix));
}

/* Bytes of the module's .debug_info (its DWARF open): what building its
 * index whole costs grows with. */
static uint64_t debug_info_size(struct sym_module *m)
{
	Elf *elf = m->dwarf ? dwarf_getelf(m->dwarf) : NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	size_t shstrndx;
	const char *name;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return UINT64_MAX;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Chdr chdr;

		if (!gelf_getshdr(scn, &shdr) || !(name = elf_strptr(elf, shstrndx, shdr.sh_name)) ||
		    strcmp(name, ".debug_info"))
			continue;
		if (!(shdr.sh_flags & SHF_COMPRESSED))
			return shdr.sh_size;
		return gelf_getchdr(scn, &chdr) ? chdr.ch_size : UINT64_MAX;
	}
	return UINT64_MAX;
}

/* Whether to build the module's index now, its DWARF open: always on the
 * index's path; on libdw's, to fill the cache, when the build costs about
 * what libdw's own first lookups would (a small .debug_info; symindex.c
 * has the figures), so that a run without the index cached is not made
 * slower by it. */
static bool build_now(struct pr_symbolizer *s, struct sym_module *m)
{
	return s->use_index ||
	       (s->ixcache && !s->libdw_only && debug_info_size(m) <= s->index_fill_max);
}

/* Bytes of the units `units` (sorted DIE offsets) of the module's DWARF,
 * as debug_info_size() counts the whole. */
static uint64_t units_size(struct sym_module *m, const uint64_t *units, size_t nr)
{
	Dwarf_Off off = 0, next;
	size_t header;
	uint64_t total = 0;

	while (dwarf_next_unit(m->dwarf, off, &next, &header, NULL, NULL, NULL, NULL, NULL,
			       NULL) == 0) {
		if (pr__sym_unit_in(units, nr, off + header))
			total += next - off;
		off = next;
	}
	return total;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The units of module `m`'s partial index to build: those libdw's path
 * named addresses in, and those of the partial indexes `had` (its own)
 * and `stored` (another worker's or run's), either NULL; sorted, without
 * repeats, into *out (malloc'd).  How many; 0 when none is new (or out
 * of memory). */
static size_t units_wanted(struct sym_module *m, const struct pr__symindex *had,
			   const struct pr__symindex *stored, uint64_t **out)
{
	const uint64_t *u[2] = { NULL, NULL };
	size_t nr_u[2] = { 0, 0 }, nr = 0, k = 0, cap = m->units_seen.n;
	uint64_t *v;
	bool fresh = false;

	if (had)
		cap += nr_u[0] = pr__symindex_units(had, &u[0]);
	if (stored)
		cap += nr_u[1] = pr__symindex_units(stored, &u[1]);
	if (!m->units_seen.n || !(v = malloc(cap * sizeof(*v))))
		return 0;
	for (size_t i = 0; i < m->units_seen.cap; i++)
		if (m->units_seen.slots[i].value) {
			uint64_t unit = m->units_seen.slots[i].key;

			/* (NULL to pr__sym_unit_in() is every unit.) */
			fresh |= !(u[0] && pr__sym_unit_in(u[0], nr_u[0], unit)) &&
				 !(u[1] && pr__sym_unit_in(u[1], nr_u[1], unit));
			v[nr++] = unit;
		}
	for (int j = 0; j < 2; j++)
		for (size_t i = 0; i < nr_u[j]; i++)
			v[nr++] = u[j][i];
	qsort(v, nr, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < nr; i++)
		if (!k || v[k - 1] != v[i])
			v[k++] = v[i];
	if (!fresh) {
		free(v);
		return 0;
	}
	*out = v;
	return k;
}

/* What building an index whole costs per byte of .debug_info, rounded up
 * from the figures in symbolizer.h (libc's debug file 55 ns, the churn
 * workload's C++ 76 ns): an estimate, to decide by, never shown.  A
 * partial one costs as much per byte of its units, and the reading of
 * every unit's ranges and of the symbols besides (libc's debug file: about
 * PARTIAL_NS). */
#define BUILD_NS_PER_BYTE 80
#define PARTIAL_NS 10000000

/* Module `m`'s partial index, of the units it named addresses in through
 * libdw and those its earlier one had, when that fits `budget` (ns, less
 * what it spends).  `stored`: the cache's, another worker's or run's,
 * partial too. */
static void fill_partial(struct pr_symbolizer *s, struct sym_module *m,
			 const struct pr__symindex *stored, uint64_t now, uint64_t *budget)
{
	const struct pr__symindex *had = m->index && pr__symindex_partial(m->index) ?
					 m->index : NULL;
	uint64_t *units = NULL, cost;
	size_t nr = units_wanted(m, had, stored, &units);

	if (!nr)
		return;
	cost = units_size(m, units, nr) * BUILD_NS_PER_BYTE + PARTIAL_NS;
	if (cost <= *budget) {
		*budget -= cost;
		pr__log(&s->lg, PR_LOG_DEBUG, "%s: its partial address index (%zu units) built at "
			"the end, for the next run (%.0f ms estimated, a tenth of the run is %.0f "
			"ms)", m->origin, nr, (double)cost / 1e6, (double)(now - s->born_ns) / 1e7);
		pr__symindex_free(pr__sym_index_build_units(s, m, units, nr));
	}
	free(units);
}

uint64_t pr__sym_index_whole_ns(struct sym_module *m)
{
	uint64_t size = debug_info_size(m);

	return size > UINT64_MAX / BUILD_NS_PER_BYTE ? UINT64_MAX : size * BUILD_NS_PER_BYTE;
}

void pr__sym_index_fill_late(struct pr_symbolizer *s)
{
	uint64_t now = pr__monotonic_ns(), budget;

	if (!s->ixcache || s->libdw_only || s->use_index)
		return;
	budget = s->fill_budget_ns ? s->fill_budget_ns :
		 now > s->born_ns ? (now - s->born_ns) / 10 : 0;
	for (size_t i = 0; i < s->modules.cap && budget; i++) {
		struct sym_module *m = s->modules.slots[i].value;
		struct pr__symindex *stored;
		uint64_t cost;

		/* Its DWARF named frames through libdw, still open, and left
		 * out by the fill rule; or named some through libdw where its
		 * partial index did not. */
		if (!m || (m->index && !pr__symindex_partial(m->index)) || !m->has_dwarf ||
		    !m->dwarf || !m->index_tried)
			continue;
		/* Another worker's symbolizer, or another run, stored it whole. */
		if ((stored = pr__sym_index_cached(s, m)) && !pr__symindex_partial(stored)) {
			pr__symindex_free(stored);
			continue;
		}
		if ((cost = pr__sym_index_whole_ns(m)) <= budget) {
			budget -= cost;
			pr__log(&s->lg, PR_LOG_DEBUG, "%s: its address index built at the end, for "
				"the next run (%.0f ms estimated, a tenth of the run is %.0f ms)",
				m->origin, (double)cost / 1e6, (double)(now - s->born_ns) / 1e7);
			pr__symindex_free(pr__sym_index_build(s, m));
		} else {
			fill_partial(s, m, stored, now, &budget);
		}
		pr__symindex_free(stored);
	}
}

struct pr__symindex *pr__sym_index_own(struct pr_symbolizer *s, struct sym_module *m,
				       bool *mapped)
{
	struct pr__symindex *ix = NULL;

	*mapped = false;
	/* Looked for when the file was opened (symfile.c's from_index(),
	 * unless it was not: a file some test opens by hand).  One of
	 * symbols alone is not of this file's DWARF. */
	if (!m->dwarf_checked && !s->libdw_only && !m->cache_looked &&
	    (ix = pr__sym_index_cached(s, m)) && !pr__symindex_has_dwarf(ix)) {
		pr__symindex_free(ix);
		ix = NULL;
	}
	if (ix) {
		m->dwarf_checked = m->has_dwarf = true;
		s->stats.debug_files++;
		*mapped = true;
		return ix;
	}
	/* A file found to have no DWARF has its symbols kept, for the next
	 * run to take from the cache: they cost nothing more to store. */
	if (!pr__sym_dwarf_open(s, m)) {
		if (m->opened && m->mod)
			pr__sym_index_keep_symbols(s, m);
		return NULL;
	}
	if (!build_now(s, m))
		return NULL;
	if (!(ix = pr__sym_index_build(s, m)) && errno != ENOENT)
		pr__log(&s->lg, PR_LOG_DEBUG, "%s: no address index: %s", m->origin,
			strerror(errno));
	return ix;
}

bool pr__sym_index_share_id(const struct pr_symbolizer *s, const struct sym_module *m,
			    struct pr__ixshare_id *id)
{
	*id = (struct pr__ixshare_id){ 0 };
	if (!m->elf)
		return false;
	if (pr__sym_index_key(s, m, &id->key))
		return true;
	id->key.settings = s->no_demangle ? 0 : PR_IX_DEMANGLED;
	id->dev = m->elf->dev;
	id->ino = m->elf->ino;
	id->size = m->elf->size;
	return id->dev || id->ino;
}

struct pr__symindex *pr__sym_index_shared(struct pr_symbolizer *s, struct sym_module *m,
					  pr__sym_index_make_fn make,
					  struct pr__ixshare_file **shared, bool *taken,
					  uint64_t *bias)
{
	struct pr__ixshare_id id;
	struct pr__symindex *ix;
	bool make_it = true, mapped = false;

	*shared = NULL;
	*taken = false;
	if (s->ixshare && !s->libdw_only && pr__sym_index_share_id(s, m, &id))
		*shared = pr__ixshare_find(s->ixshare, &id, !s->no_lines, &make_it);
	if (!make_it) {
		*taken = true;
		return (struct pr__symindex *)pr__ixshare_index(*shared, bias);
	}
	ix = make(s, m, &mapped);
	if (*shared)
		pr__ixshare_publish(*shared, ix, m->dwarf_bias, mapped);
	/* Published as none, the file left the set with our reference. */
	if (!ix)
		*shared = NULL;
	return ix;
}
