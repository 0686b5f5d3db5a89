/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The address index as a file (symindex_file.h), little-endian:
 *
 *   header     96 bytes: magic "DSIX", the format (of this container),
 *              the layout (pr__symindex_layout(): of the tables'
 *              entries), the header's size, the file's size, the ELF's
 *              build-id and its size, the settings (PR_IX_*), the number
 *              of tables, a CRC-32 (zlib's) of everything after the
 *              header, the producing library's version (PR_VERSION,
 *              NUL-padded), 4 zero bytes
 *   directory  per table 24 bytes: its kind (PR_IX_*), the size of an
 *              entry, its offset in the file (8-byte aligned), how many
 *              entries
 *   tables     as the index holds them in memory, each at its offset,
 *              zeros between
 *
 * A table kind added later is one more directory entry; what a reader
 * does not know it refuses, and the layout's version says it in advance.
 * The header is not in the checksum: every field of it is compared with
 * what the reader expects.  A CRC rather than pr__hash_bytes(): zlib's
 * reads several bytes a step, FNV one, and an index of a large program is
 * tens of megabytes checked each time it is mapped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/base.h"
#include "symbols/symindex.h"
#include "symbols/symindex_file.h"

#define IXF_MAGIC "DSIX"
/* Of the header and the directory; the tables' own is symindex.c's. */
#define IXF_FORMAT 1
#define IXF_PRODUCER 32

struct ixf_header {
	char magic[4];
	uint32_t format, layout, header_size;
	uint64_t file_size;
	uint8_t build_id[PR_BUILD_ID_MAX];
	uint32_t build_id_size, settings, nr_tables, checksum;
	char producer[IXF_PRODUCER];
	uint32_t zero;
};

struct ixf_dirent {
	uint32_t kind, entry_size;
	uint64_t offset, count;
};

_Static_assert(sizeof(struct ixf_header) == 96, "the header's size is the format's");
_Static_assert(sizeof(struct ixf_dirent) == 24, "a directory entry's size is the format's");

static uint64_t align8(uint64_t n)
{
	return (n + 7) & ~(uint64_t)7;
}

/* An empty table may have no bytes at all (NULL), which to zlib would
 * mean starting again. */
static uint32_t crc(uint32_t c, const void *p, size_t len)
{
	return len ? (uint32_t)crc32_z(c, p, len) : c;
}

int pr__symindex_write(const struct pr__symindex *ix, const struct pr__ix_key *key, int fd)
{
	static const char zeros[8];
	struct pr__ix_table t[PR_IX_MAX_TABLES];
	struct ixf_dirent dir[PR_IX_MAX_TABLES];
	struct ixf_header h = { .format = IXF_FORMAT, .header_size = sizeof(h) };
	size_t nr = pr__symindex_tables(ix, t);
	uint64_t at;
	uint32_t c;
	int err;

	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		return -ENOTSUP;
	if (!key->build_id_size || key->build_id_size > PR_BUILD_ID_MAX)
		return -EINVAL;
	memcpy(h.magic, IXF_MAGIC, 4);
	h.layout = pr__symindex_layout();
	memcpy(h.build_id, key->build_id, key->build_id_size);
	h.build_id_size = key->build_id_size;
	h.settings = key->settings;
	h.nr_tables = (uint32_t)nr;
	snprintf(h.producer, sizeof(h.producer), "%s", PR_VERSION);
	at = sizeof(h) + nr * sizeof(*dir);
	for (size_t i = 0; i < nr; i++) {
		at = align8(at);
		dir[i] = (struct ixf_dirent){ t[i].kind, t[i].entry_size, at, t[i].count };
		at += t[i].count * t[i].entry_size;
	}
	h.file_size = align8(at);
	c = crc(crc32_z(0, NULL, 0), dir, nr * sizeof(*dir));
	at = sizeof(h) + nr * sizeof(*dir);
	for (size_t i = 0; i < nr; i++) {
		c = crc(c, zeros, align8(at) - at);
		c = crc(c, t[i].base, t[i].count * t[i].entry_size);
		at = dir[i].offset + t[i].count * t[i].entry_size;
	}
	c = crc(c, zeros, h.file_size - at);
	h.checksum = c;
	err = pr__write_all(fd, &h, sizeof(h));
	if (!err)
		err = pr__write_all(fd, dir, nr * sizeof(*dir));
	at = sizeof(h) + nr * sizeof(*dir);
	for (size_t i = 0; !err && i < nr; i++) {
		err = pr__write_all(fd, zeros, align8(at) - at);
		if (!err)
			err = pr__write_all(fd, t[i].base, t[i].count * t[i].entry_size);
		at = dir[i].offset + t[i].count * t[i].entry_size;
	}
	return err ? err : pr__write_all(fd, zeros, h.file_size - at);
}

/* The header, checked against `key` and the file's `len`. */
static bool header_sound(const struct ixf_header *h, size_t len, const struct pr__ix_key *key,
			 const char **why)
{
	char producer[IXF_PRODUCER] = { 0 };

	snprintf(producer, sizeof(producer), "%s", PR_VERSION);
	if (memcmp(h->magic, IXF_MAGIC, 4))
		*why = "not an index (its magic)";
	else if (h->format != IXF_FORMAT || h->layout != pr__symindex_layout() ||
		 memcmp(h->producer, producer, sizeof(producer)))
		*why = "written by another version";
	else if (h->header_size != sizeof(*h) || h->zero)
		*why = "its header is damaged";
	else if (h->file_size != len)
		*why = "its size is not the one written";
	else if (h->build_id_size != key->build_id_size ||
		 memcmp(h->build_id, key->build_id, key->build_id_size))
		*why = "made for another file (its build-id)";
	else if (h->settings != key->settings)
		*why = "made with other settings";
	else if (!h->nr_tables || h->nr_tables > PR_IX_MAX_TABLES ||
		 sizeof(*h) + h->nr_tables * sizeof(struct ixf_dirent) > len)
		*why = "its table directory is damaged";
	else
		return true;
	return false;
}

static int by_offset(const void *a, const void *b)
{
	const struct ixf_dirent *x = a, *y = b;

	return (x->offset > y->offset) - (x->offset < y->offset);
}

/* The directory's tables, each inside the file after the directory,
 * aligned and apart from the others, into `t`. */
static bool tables_placed(const unsigned char *buf, size_t len, uint32_t nr,
			  struct pr__ix_table *t, const char **why)
{
	struct ixf_dirent dir[PR_IX_MAX_TABLES];
	uint64_t end = sizeof(struct ixf_header) + nr * sizeof(*dir);

	memcpy(dir, buf + sizeof(struct ixf_header), nr * sizeof(*dir));
	qsort(dir, nr, sizeof(*dir), by_offset);
	for (uint32_t i = 0; i < nr; i++) {
		const struct ixf_dirent *d = &dir[i];

		if (!d->entry_size || d->offset % 8 || d->offset < end || d->offset > len ||
		    d->count > (len - d->offset) / d->entry_size) {
			*why = "a table lies outside the file or over another";
			return false;
		}
		end = d->offset + d->count * d->entry_size;
		t[i] = (struct pr__ix_table){ d->kind, d->entry_size, d->count, buf + d->offset };
	}
	return true;
}

struct pr__symindex *pr__symindex_read(const void *buf, size_t len, void *map,
				       const struct pr__ix_key *key, const char **why)
{
	struct pr__ix_table t[PR_IX_MAX_TABLES];
	struct ixf_header h;
	const unsigned char *b = buf;

	errno = EINVAL;
	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__) {
		*why = "written little-endian";
		return NULL;
	}
	if (len < sizeof(h)) {
		*why = "shorter than its header";
		return NULL;
	}
	if ((uintptr_t)buf % 8) {
		*why = "not read at an aligned address";
		return NULL;
	}
	memcpy(&h, buf, sizeof(h));
	if (!header_sound(&h, len, key, why) || !tables_placed(b, len, h.nr_tables, t, why))
		return NULL;
	if (crc(crc32_z(0, NULL, 0), b + sizeof(h), len - sizeof(h)) != h.checksum) {
		*why = "its checksum does not match";
		return NULL;
	}
	return pr__symindex_adopt(t, h.nr_tables, map, len, false, why);
}

struct pr__symindex *pr__symindex_map_written(int fd, const struct pr__ix_key *key)
{
	struct pr__ix_table t[PR_IX_MAX_TABLES];
	struct pr__symindex *ix = NULL;
	struct ixf_header h;
	const char *why = NULL;
	struct stat st;
	void *map;
	int guard;

	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(h) || (uint64_t)st.st_size > SIZE_MAX)
		return NULL;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return NULL;
	/* Guarded as an index mapped from the cache is (symcache.c). */
	if ((guard = pr__busguard_add(map, (size_t)st.st_size)) < 0) {
		munmap(map, (size_t)st.st_size);
		return NULL;
	}
	memcpy(&h, map, sizeof(h));
	/* The header and directory alone: a page or two. */
	if (header_sound(&h, (size_t)st.st_size, key, &why) &&
	    tables_placed(map, (size_t)st.st_size, h.nr_tables, t, &why))
		ix = pr__symindex_adopt(t, h.nr_tables, map, (size_t)st.st_size, true, &why);
	if (ix && !pr__busguard_hit(guard)) {
		pr__symindex_guarded(ix, guard);
		return ix;
	}
	pr__busguard_remove(guard);
	if (ix)
		pr__symindex_free(ix);
	else
		munmap(map, (size_t)st.st_size);
	return NULL;
}
