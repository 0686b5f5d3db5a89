/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JIT code unwound by the unwind information its runtime wrote into the
 * process's jitdump (JIT_CODE_UNWINDING_INFO, model/jitdump.h): an
 * .eh_frame and its .eh_frame_hdr for the code loaded next.  Runtimes lay
 * them out as perf inject places them in the ELF files it makes: the
 * .eh_frame right after the code, the .eh_frame_hdr right after it, their
 * pc-relative and data-relative addresses counted from there.  So the
 * unwinder reads them as if they were in memory there, from the jitdump,
 * with the code itself: the process need not be alive.  Code without
 * unwind information (V8 writes a header alone for most) keeps the
 * frame-pointer walk.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/jitdump.h"
#include "model/model.h"
#include "unwind-int.h"

/* .eh_frame_hdr's encodings of a table libunwind can search: fde_count
 * udata4, table entries datarel sdata4 (every writer's). */
#define HDR_FIXED 12
#define EH_PE_UDATA4 0x03
#define EH_PE_DATAREL_SDATA4 0x3b

/* A live process's jitdump is read again on a miss at most this often. */
#define JIT_REREAD_NS 1000000000ull

/* A process's jitdump, as the unwinder reads it. */
struct uw_jit {
	uint32_t serial;             /* the process it was read for */
	uint64_t maps_generation;    /* of the mappings last searched for it */
	char *path;                  /* NULL: none found (yet) */
	uint32_t maj, min;
	uint64_t ino;
	uint64_t read_at;
	struct pr_jitdump jd;
};

static void jit_clear(struct uw_jit *j)
{
	pr__jitdump_clear(&j->jd);
	free(j->path);
	memset(j, 0, sizeof(*j));
}

void uw_jits_free(struct pr_unwinder *u)
{
	for (size_t i = 0; i < u->jits.cap; i++) {
		struct uw_jit *j = u->jits.slots[i].value;

		if (j) {
			jit_clear(j);
			free(j);
		}
	}
	pr__hashmap_free(&u->jits);
}

/* Read whole (tens of MB for a long-running runtime): kept while its
 * process is, and no longer. */
static bool jit_stays(uint64_t key, void *value, void *arg)
{
	struct pr_unwinder *u = arg;
	struct uw_jit *j = value;
	const struct pr_proc *p = pr__model_proc(u->model, (uint32_t)key, false);

	if (p && p->serial == j->serial)
		return true;
	jit_clear(j);
	free(j);
	return false;
}

uint64_t uw_jits_bytes(const struct pr_unwinder *u)
{
	uint64_t n = 0;

	for (size_t i = 0; i < u->jits.cap; i++) {
		const struct uw_jit *j = u->jits.slots[i].value;

		if (j)
			n += j->jd.cap + j->jd.cap_codes * sizeof(*j->jd.codes) +
			     j->jd.cap_lines * sizeof(*j->jd.lines);
	}
	return n;
}

void uw_jits_trim(struct pr_unwinder *u)
{
	pr__hashmap_filter(&u->jits, jit_stays, u);
}

static void jit_read(struct pr_unwinder *u, uint32_t pid, struct uw_jit *j)
{
	int fd;

	j->read_at = pr__monotonic_ns();
	fd = pr__jitdump_open(pid, u->live, j->path, j->maj, j->min, j->ino, &u->lg);
	if (fd < 0)
		return;
	pr__jitdump_read_fd(&j->jd, fd, j->path, &u->lg);
	close(fd);
}

/* Process c->pid's jitdump, found and read the first time; NULL when it
 * has none (or out of memory). */
static struct uw_jit *jit_of(struct uw_ctx *c)
{
	struct pr_unwinder *u = c->u;
	struct uw_jit *j = pr__hashmap_get(&u->jits, c->pid);
	const struct pr_dso *d;

	if (!j) {
		j = calloc(1, sizeof(*j));
		if (!j || pr__hashmap_put(&u->jits, c->pid, j)) {
			free(j);
			return NULL;
		}
	}
	if (j->serial != c->proc->serial) {
		jit_clear(j);
		j->serial = c->proc->serial;
	}
	if (j->path)
		return j;
	if (j->maps_generation == c->proc->generation)
		return NULL;
	j->maps_generation = c->proc->generation;
	d = pr__jitdump_marker(c->proc, c->pid);
	if (!d || !(j->path = strdup(pr_dso_path(d))))
		return NULL;
	j->maj = d->maj;
	j->min = d->min;
	j->ino = d->ino;
	jit_read(u, c->pid, j);
	return j;
}

int uw_jit_proc_info(struct uw_ctx *c, unw_addr_space_t as, uint64_t ip,
		     unw_proc_info_t *pi, int need_unwind_info)
{
	struct uw_jit *j = c->proc ? jit_of(c) : NULL;
	const struct jd_code *code;
	const unsigned char *h;
	uint64_t hdr;
	uint32_t count;
	unw_dyn_info_t di;
	int ret;

	if (!j)
		return -UNW_ENOINFO;
	code = pr__jitdump_find(&j->jd, ip);
	/* The runtime appends as it compiles: a miss may be new code. */
	if (!code && c->u->live && pr__monotonic_ns() - j->read_at >= JIT_REREAD_NS) {
		jit_read(c->u, c->pid, j);
		code = pr__jitdump_find(&j->jd, ip);
	}
	/* Its own byte order only, and a table to search. */
	if (!code || j->jd.swap || code->eh_hdr_size < HDR_FIXED ||
	    code->unwind_size <= code->eh_hdr_size)
		return -UNW_ENOINFO;
	h = j->jd.buf + code->unwind + (code->unwind_size - code->eh_hdr_size);
	memcpy(&count, h + 8, sizeof(count));
	if (h[0] != 1 || h[2] != EH_PE_UDATA4 || h[3] != EH_PE_DATAREL_SDATA4 || !count ||
	    count > (code->eh_hdr_size - HDR_FIXED) / 8)
		return -UNW_ENOINFO;
	hdr = code->addr + code->size + code->unwind_size - code->eh_hdr_size;
	c->jit = &j->jd;
	c->jit_code = code;
	memset(&di, 0, sizeof(di));
	di.start_ip = code->addr;
	di.end_ip = code->addr + code->size;
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.u.rti.segbase = hdr;
	di.u.rti.table_data = hdr + HDR_FIXED;
	di.u.rti.table_len = count * 8 / sizeof(unw_word_t);
	c->reading_cfi = true;
	ret = dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, c);
	c->reading_cfi = false;
	return ret;
}

int uw_jit_read(struct uw_ctx *c, uint64_t addr, uint64_t *val)
{
	const struct jd_code *code = c->jit_code;
	unsigned char b[8];
	uint64_t total;

	if (!code)
		return -1;
	/* libunwind reads whole aligned words: one that overlaps the code
	 * and its unwind information has the bytes around them 0. */
	total = code->size + code->unwind_size;
	if (addr > UINT64_MAX - sizeof(b) || addr + sizeof(b) <= code->addr ||
	    (addr >= code->addr && addr - code->addr >= total))
		return -1;
	for (size_t i = 0; i < sizeof(b); i++) {
		uint64_t off = addr + i - code->addr;

		b[i] = addr + i < code->addr || off >= total ? 0 :
		       off < code->size ? c->jit->buf[code->code + off] :
					  c->jit->buf[code->unwind + (off - code->size)];
	}
	memcpy(val, b, sizeof(*val));
	return 0;
}
