/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Made-up jitdump files, record by record, in either byte order: what a
 * runtime (node --perf-prof, a JVM agent) writes, for the tests of the
 * jitdump reader and of naming and unwinding JIT code by it.  The layout
 * is the one in perf's jitdump specification: a 40-byte header, then
 * records of (kind, total size, timestamp) and their fields.
 */
#ifndef DS_JITDUMP_WRITER_H
#define DS_JITDUMP_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct jdw {
	unsigned char *buf;
	size_t len, cap;
	bool swap;                   /* the other byte order than this machine's */
};

/* A debug entry: the address's source line. */
struct jdw_line {
	uint64_t addr;
	uint32_t line;
	const char *file;
};

static inline void jdw_bytes(struct jdw *w, const void *p, size_t n)
{
	if (w->len + n > w->cap) {
		w->cap = (w->len + n) * 2 + 64;
		w->buf = realloc(w->buf, w->cap);
		if (!w->buf)
			abort();
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static inline void jdw_u32(struct jdw *w, uint32_t v)
{
	if (w->swap)
		v = __builtin_bswap32(v);
	jdw_bytes(w, &v, sizeof(v));
}

static inline void jdw_u64(struct jdw *w, uint64_t v)
{
	if (w->swap)
		v = __builtin_bswap64(v);
	jdw_bytes(w, &v, sizeof(v));
}

/* Start a file of process `pid`: the header (version 1, x86-64). */
static inline void jdw_header(struct jdw *w, uint32_t pid, bool swap)
{
	memset(w, 0, sizeof(*w));
	w->swap = swap;
	jdw_u32(w, 0x4A695444);      /* "JiTD" in the writer's order */
	jdw_u32(w, 1);
	jdw_u32(w, 40);
	jdw_u32(w, 62);              /* EM_X86_64 */
	jdw_u32(w, 0);
	jdw_u32(w, pid);
	jdw_u64(w, 1000);
	jdw_u64(w, 0);
}

static inline void jdw_record(struct jdw *w, uint32_t kind, uint32_t body, uint64_t time)
{
	jdw_u32(w, kind);
	jdw_u32(w, 16 + body);
	jdw_u64(w, time);
}

/* JIT_CODE_LOAD with these bytes of code. */
static inline void jdw_load_code(struct jdw *w, uint64_t time, uint64_t addr,
				 const void *code, size_t size, uint64_t index, const char *name)
{
	size_t n = strlen(name) + 1;

	jdw_record(w, 0, (uint32_t)(40 + n + size), time);
	jdw_u32(w, 4242);
	jdw_u32(w, 4243);
	jdw_u64(w, addr);
	jdw_u64(w, addr);
	jdw_u64(w, size);
	jdw_u64(w, index);
	jdw_bytes(w, name, n);
	jdw_bytes(w, code, size);
}

/* JIT_CODE_LOAD: `size` bytes of code at `addr`, each byte `fill`. */
static inline void jdw_load(struct jdw *w, uint64_t time, uint64_t addr, size_t size,
			    uint64_t index, const char *name, unsigned char fill)
{
	unsigned char *code = malloc(size + 1);

	if (!code)
		abort();
	memset(code, fill, size);
	jdw_load_code(w, time, addr, code, size, index, name);
	free(code);
}

/* JIT_CODE_MOVE of the code loaded with `index`. */
static inline void jdw_move(struct jdw *w, uint64_t time, uint64_t old_addr, uint64_t addr,
			    uint64_t size, uint64_t index)
{
	jdw_record(w, 1, 48, time);
	jdw_u32(w, 4242);
	jdw_u32(w, 4243);
	jdw_u64(w, addr);
	jdw_u64(w, old_addr);
	jdw_u64(w, addr);
	jdw_u64(w, size);
	jdw_u64(w, index);
}

/* JIT_CODE_DEBUG_INFO for the next load; a NULL file writes "\xff" (the
 * entry before's file). */
static inline void jdw_debug(struct jdw *w, uint64_t time, uint64_t code_addr,
			     const struct jdw_line *v, size_t nr)
{
	size_t body = 16;

	for (size_t i = 0; i < nr; i++)
		body += 16 + (v[i].file ? strlen(v[i].file) : 1) + 1;
	jdw_record(w, 2, (uint32_t)body, time);
	jdw_u64(w, code_addr);
	jdw_u64(w, nr);
	for (size_t i = 0; i < nr; i++) {
		jdw_u64(w, v[i].addr);
		jdw_u32(w, v[i].line);
		jdw_u32(w, 0);
		jdw_bytes(w, v[i].file ? v[i].file : "\xff", (v[i].file ? strlen(v[i].file) : 1) + 1);
	}
}

/* JIT_CODE_UNWINDING_INFO for the next load: .eh_frame, then its
 * .eh_frame_hdr (hdr_size bytes of `data`'s end). */
static inline void jdw_unwind(struct jdw *w, uint64_t time, const void *data, size_t size,
			      size_t hdr_size)
{
	jdw_record(w, 4, (uint32_t)(24 + size), time);
	jdw_u64(w, size);
	jdw_u64(w, hdr_size);
	jdw_u64(w, size);
	jdw_bytes(w, data, size);
}

/*
 * An .eh_frame of one CIE (x86-64: CFA = %rsp + 8, the return address at
 * CFA - 8) and one FDE for the `size` bytes of code at `addr`, with CFA
 * instructions `insns`, then its .eh_frame_hdr: laid out as runtimes do
 * (and perf inject after them), the .eh_frame right after the code and
 * the header right after it.  The bytes, malloc'd: *len of them, the
 * header's *hdr_len last.
 */
static inline unsigned char *jdw_eh_frame(uint64_t addr, uint64_t size,
					  const unsigned char *insns, size_t n, size_t *len,
					  size_t *hdr_len)
{
	static const unsigned char cie[24] = {
		20, 0, 0, 0,            /* length */
		0, 0, 0, 0,             /* CIE id */
		1, 'z', 'R', 0,         /* version, augmentation */
		1, 0x78, 16,            /* code align 1, data align -8, RA %r16 */
		1, 0x1b,                /* augmentation: FDE addresses pcrel sdata4 */
		0x0c, 7, 8,             /* DW_CFA_def_cfa %rsp, 8 */
		0x90, 1,                /* DW_CFA_offset %r16 (RA) at CFA - 8 */
		0, 0,                   /* DW_CFA_nop */
	};
	size_t fde_body = (4 + 4 + 4 + 1 + n + 3) & ~(size_t)3;
	size_t eh = sizeof(cie) + 4 + fde_body + 4, at = sizeof(cie);
	unsigned char *b = calloc(1, eh + 20);
	uint64_t e = addr + size, hdr = e + eh;
	int32_t v;
	uint32_t u;

	if (!b)
		abort();
	memcpy(b, cie, sizeof(cie));
	u = (uint32_t)fde_body;
	memcpy(b + at, &u, 4);
	u = (uint32_t)(at + 4);         /* back to the CIE */
	memcpy(b + at + 4, &u, 4);
	v = (int32_t)(addr - (e + at + 8));
	memcpy(b + at + 8, &v, 4);
	u = (uint32_t)size;
	memcpy(b + at + 12, &u, 4);
	b[at + 16] = 0;                 /* no augmentation data */
	memcpy(b + at + 17, insns, n);
	/* The header: version, encodings, .eh_frame's address, one entry. */
	b[eh] = 1;
	b[eh + 1] = 0x1b;
	b[eh + 2] = 0x03;
	b[eh + 3] = 0x3b;
	v = (int32_t)(e - (hdr + 4));
	memcpy(b + eh + 4, &v, 4);
	u = 1;
	memcpy(b + eh + 8, &u, 4);
	v = (int32_t)(addr - hdr);
	memcpy(b + eh + 12, &v, 4);
	v = (int32_t)(e + at - hdr);
	memcpy(b + eh + 16, &v, 4);
	*len = eh + 20;
	*hdr_len = 20;
	return b;
}

static inline void jdw_close(struct jdw *w, uint64_t time)
{
	jdw_record(w, 3, 0, time);
}

/* A record of a kind no reader knows, `size` bytes of body. */
static inline void jdw_unknown(struct jdw *w, uint64_t time, uint32_t kind, uint32_t size)
{
	jdw_record(w, kind, size, time);
	for (uint32_t i = 0; i < size; i++)
		jdw_bytes(w, "?", 1);
}

#endif /* DS_JITDUMP_WRITER_H */
