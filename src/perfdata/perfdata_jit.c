/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A capture's JIT files, carried in the perf.data file: the perf maps
 * (/tmp/perf-PID.map) and jitdump files (jit-PID.dump, where mapped) of
 * the processes that ran JIT code, read through the roots the recording kept
 * (model/roots.c) once it is over, so that a report on another machine,
 * or after /tmp is cleaned, names their frames.  They go in a feature
 * section of dwarfsample's own, FEAT_DS_JIT_FILES, which perf's tools skip
 * as a feature they do not know:
 *
 *   u32 version (1), u32 count, then per file:
 *   u32 pid, u32 kind (enum pr__jit_file), u64 born, u64 died (the
 *   process's span in record time; died UINT64_MAX: it outlived the
 *   capture), u64 size, its bytes, zeros to a multiple of 8.
 *
 * A jitdump file is carried as it is: its reader is another's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model.h"
#include "perfdata/perfdata.h"

/* The most carried of one jitdump file; a perf map's is PR_PERF_MAP_MAX's
 * 64 MiB, and of them all together. */
#define JIT_DUMP_MAX ((off_t)256 << 20)
#define CARRIED_MAX ((size_t)512 << 20)

struct jit_buf {
	unsigned char *p;
	size_t len, cap;
	uint32_t count;
	const struct pr_logger *lg;
	int err;
};

static unsigned char *jb_room(struct jit_buf *b, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		unsigned char *p;

		while (cap < b->len + n)
			cap *= 2;
		if (!(p = realloc(b->p, cap))) {
			b->err = -ENOMEM;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	return b->p + b->len;
}

/* One file of a kept process, read whole, or nothing of it. */
static void carry(struct jit_buf *b, uint32_t pid, uint64_t born, uint64_t died,
		  const struct pr__root_info *ri, enum pr__jit_file kind)
{
	off_t max = kind == PR_JIT_DUMP ? JIT_DUMP_MAX : ((off_t)64 << 20);
	int fd = pr__root_open(ri, kind, pid, max, b->lg);
	uint32_t head[2] = { pid, (uint32_t)kind };
	uint64_t size, at = b->len;
	struct stat st;
	unsigned char *p;

	if (fd < 0)
		return;
	if (fstat(fd, &st) || b->len + (size_t)st.st_size + 40 > CARRIED_MAX ||
	    !(p = jb_room(b, 40 + (size_t)st.st_size + 8))) {
		close(fd);
		return;
	}
	b->len += 40;
	size = 0;
	while (size < (uint64_t)st.st_size) {
		ssize_t n = read(fd, b->p + b->len + size, (size_t)st.st_size - size);

		if (n <= 0)
			break;
		size += (uint64_t)n;
	}
	close(fd);
	memcpy(p, head, 8);
	memcpy(p + 8, &born, 8);
	memcpy(p + 16, &died, 8);
	memcpy(p + 24, &size, 8);
	memset(p + 32, 0, 8);
	b->len = at + 40 + size;
	memset(b->p + b->len, 0, (8 - size % 8) % 8);
	b->len += (8 - size % 8) % 8;
	b->count++;
}

static int carry_both(uint32_t pid, uint64_t born, uint64_t died,
		      const struct pr__root_info *ri, void *arg)
{
	carry(arg, pid, born, died, ri, PR_JIT_PERF_MAP);
	carry(arg, pid, born, died, ri, PR_JIT_DUMP);
	return ((struct jit_buf *)arg)->err;
}

int pr__perfdata_jit_payload(struct pr__roots *r, unsigned char **out, size_t *len,
			     const struct pr_logger *lg)
{
	struct jit_buf b = { .lg = lg, .len = 8 };
	uint32_t head[2] = { 1, 0 };

	*out = NULL;
	*len = 0;
	if (!r || !jb_room(&b, 8) || pr__roots_each(r, carry_both, &b) || !b.count) {
		free(b.p);
		return b.err;
	}
	head[1] = b.count;
	memcpy(b.p, head, 8);
	*out = b.p;
	*len = b.len;
	return 0;
}

int pr__perfdata_jit_find(const unsigned char *sec, size_t len, uint32_t pid, int kind,
			  uint64_t time, const unsigned char **data,
			  size_t *size)
{
	uint32_t head[2];
	uint64_t best_born = 0;
	size_t at = 8;
	bool found = false;

	if (!sec || len < 8)
		return -ENOENT;
	memcpy(head, sec, 8);
	if (head[0] != 1)
		return -ENOENT;
	for (uint32_t i = 0; i < head[1] && len - at >= 40; i++) {
		uint32_t e[2];
		uint64_t born, n;

		memcpy(e, sec + at, 8);
		memcpy(&born, sec + at + 8, 8);
		memcpy(&n, sec + at + 24, 8);
		if (n > len - at - 40)
			break;
		/* The latest born by then: the process of `pid` at `time`. */
		if (e[0] == pid && e[1] == (uint32_t)kind && born <= time &&
		    (!found || born >= best_born)) {
			found = true;
			best_born = born;
			*data = sec + at + 40;
			*size = (size_t)n;
		}
		at += 40 + (size_t)n + (size_t)((8 - n % 8) % 8);
		if (at > len)
			break;
	}
	return found ? 0 : -ENOENT;
}
