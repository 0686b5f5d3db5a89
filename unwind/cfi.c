/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unwind tables for files without .eh_frame_hdr.
 *
 * libunwind's remote interface finds an FDE through a sorted table of
 * (start address, FDE offset) pairs, the layout of .eh_frame_hdr.  For a
 * file that has .eh_frame but no header, we build that table by walking
 * the CIEs and FDEs.  For a file that has only .debug_frame (hand-written
 * assembly, code built with -fno-asynchronous-unwind-tables, or a stripped
 * binary whose separate debug file keeps it), we convert the section to
 * .eh_frame's conventions, which is all libunwind's remote path reads:
 * CIE ids become 0 and each FDE's CIE pointer becomes relative to itself.
 * Its FDEs hold absolute link-time addresses, so the image libunwind reads
 * is made per load bias with the addresses moved.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind-int.h"

#define DW_EH_PE_absptr 0x00
#define DW_EH_PE_omit 0xff
#define DW_EH_PE_pcrel 0x10

struct cur {
	const unsigned char *p, *end;
	bool bad;
};

static uint64_t get(struct cur *c, size_t n)
{
	uint64_t v = 0;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return 0;
	}
	memcpy(&v, c->p, n);
	c->p += n;
	return v;
}

static uint64_t uleb(struct cur *c)
{
	uint64_t v = 0;

	for (unsigned shift = 0; !c->bad; shift += 7) {
		uint8_t b = (uint8_t)get(c, 1);

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
	}
	return v;
}

static int64_t sleb(struct cur *c)
{
	int64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0x80;

	while (!c->bad && (b & 0x80)) {
		b = (uint8_t)get(c, 1);
		if (shift < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
	}
	if (shift < 64 && (b & 0x40))
		v |= -(INT64_C(1) << shift);
	return v;
}

/* A DW_EH_PE_* encoded value at c->p, whose own address is `at`.  Only
 * the encodings FDE start addresses use; others mark the cursor bad. */
static uint64_t encoded(struct cur *c, uint8_t enc, uint64_t at)
{
	uint64_t v;

	switch (enc & 0x0f) {
	case 0x00: v = get(c, 8); break;
	case 0x01: v = uleb(c); break;
	case 0x02: v = get(c, 2); break;
	case 0x03: v = get(c, 4); break;
	case 0x04: v = get(c, 8); break;
	case 0x09: v = (uint64_t)sleb(c); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)get(c, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)get(c, 4); break;
	case 0x0c: v = get(c, 8); break;
	default: c->bad = true; return 0;
	}
	switch (enc & 0x70) {
	case 0x00: return v;
	case DW_EH_PE_pcrel: return v + at;
	default: c->bad = true; return 0;
	}
}

/* The FDE address encoding a CIE gives (its 'R' augmentation); for a
 * .debug_frame CIE also what libunwind cannot read after conversion. */
static int cie_fde_encoding(const unsigned char *cie, const unsigned char *end,
			    bool debug_frame)
{
	struct cur c = { cie, end, false };
	const char *aug;
	uint8_t version, enc = DW_EH_PE_absptr;

	version = (uint8_t)get(&c, 1);
	if (c.bad || (version != 1 && version != 3 && version != 4))
		return -1;
	aug = (const char *)c.p;
	if (!memchr(aug, '\0', (size_t)(end - c.p)))
		return -1;
	c.p += strlen(aug) + 1;
	if (version == 4) {
		/* address_size, segment_selector_size */
		if (get(&c, 1) != 8 || get(&c, 1) != 0)
			return -1;
	}
	if (debug_frame && aug[0] && aug[0] != 'z')
		return -1;
	uleb(&c);                       /* code alignment */
	sleb(&c);                       /* data alignment */
	if (version == 1)
		get(&c, 1);             /* return address register */
	else
		uleb(&c);
	if (aug[0] == 'z') {
		uleb(&c);               /* augmentation data length */
		for (const char *a = aug + 1; *a && !c.bad; a++) {
			if (*a == 'R') {
				enc = (uint8_t)get(&c, 1);
			} else if (*a == 'P') {
				uint8_t penc = (uint8_t)get(&c, 1);

				encoded(&c, penc & 0x7f, 0);
			} else if (*a == 'L') {
				get(&c, 1);
			} else if (*a != 'S' && *a != 'B') {
				break;
			}
		}
	}
	return c.bad || enc == DW_EH_PE_omit ? -1 : enc;
}

static int add_fde(const struct uw_elf *e, struct uw_cfi_table *t, size_t *cap,
		   uint64_t start, uint64_t fde)
{
	int64_t rel = (int64_t)(start - e->text_lo);

	/* Outside the file's code, or a table offset past 32 bits: not an
	 * FDE libunwind could use. */
	if (start < e->text_lo || start >= e->text_hi || rel > INT32_MAX || fde > INT32_MAX)
		return 0;
	if (t->nr == *cap) {
		size_t n = *cap ? *cap * 2 : 256;
		struct uw_fde *v = realloc(t->index, n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->index = v;
		*cap = n;
	}
	t->index[t->nr++] = (struct uw_fde){ (int32_t)rel, (int32_t)fde };
	return 0;
}

static int cmp_fde(const void *a, const void *b)
{
	int32_t x = ((const struct uw_fde *)a)->start;
	int32_t y = ((const struct uw_fde *)b)->start;

	return (x > y) - (x < y);
}

/*
 * Walk a frame section (`sec`, `size` bytes, loaded at link-time `vaddr`
 * for .eh_frame), indexing each FDE.  For .debug_frame (`convert`), also
 * rewrite CIE ids and CIE pointers in place to .eh_frame's conventions.
 * Entries in the 64-bit DWARF format, or whose CIE cannot be read, are
 * left out: their code unwinds as if it had no information.
 */
static int walk(const struct uw_elf *e, struct uw_cfi_table *t, unsigned char *sec,
		size_t size, uint64_t vaddr, bool convert)
{
	size_t pos = 0, cap = 0;
	int err = 0;

	while (!err && size - pos >= 8) {
		uint32_t len, id;
		size_t content = pos + 4, end;

		memcpy(&len, sec + pos, 4);
		if (len == 0 && !convert)
			break;          /* .eh_frame's terminator */
		if (len == 0xffffffffu || len > size - content)
			break;
		end = content + len;
		memcpy(&id, sec + content, 4);
		if (convert ? id == 0xffffffffu : id == 0) {
			if (convert)
				memset(sec + content, 0, 4);
		} else {
			size_t cie = convert ? id : content - id;
			struct cur c;
			uint32_t rel;
			int enc;

			if ((convert && cie > size - 8) || (!convert && id > content)) {
				pos = end;
				continue;
			}
			enc = cie_fde_encoding(sec + cie + 8, sec + size, convert);
			if (convert) {
				/* Relative to the pointer field, as in .eh_frame. */
				rel = (uint32_t)(content - cie);
				memcpy(sec + content, &rel, 4);
			}
			if (enc < 0 || (convert && enc != DW_EH_PE_absptr)) {
				pos = end;
				continue;
			}
			c = (struct cur){ sec + content + 4, sec + end, false };
			{
				uint64_t start = encoded(&c, (uint8_t)enc, vaddr + content + 4);

				if (!c.bad)
					err = add_fde(e, t, &cap, start, pos);
			}
		}
		pos = end;
	}
	if (!err && t->nr)
		qsort(t->index, t->nr, sizeof(*t->index), cmp_fde);
	return err;
}

void uw_cfi_table_free(struct uw_cfi_table *t)
{
	free(t->index);
	free(t->frames);
	memset(t, 0, sizeof(*t));
}

int uw_cfi_index_eh_frame(struct uw_elf *e, const struct pr_logger *lg)
{
	/* walk() does not write to .eh_frame (convert is false), so the
	 * read-only mapping is safe despite the cast. */
	int err = walk(e, &e->eh, (unsigned char *)e->data + e->eh_frame.offset,
		       (size_t)e->eh_frame.size, e->eh_frame.vaddr, false);

	if (err || !e->eh.nr) {
		uw_cfi_table_free(&e->eh);
		return err ? err : -ENOENT;
	}
	e->table = UW_TABLE_EH_FRAME;
	pr__log(lg, PR_LOG_DEBUG, "%s: no .eh_frame_hdr; indexed %zu FDEs of .eh_frame",
		e->path, e->eh.nr);
	return 0;
}

int uw_cfi_load_debug_frame(struct uw_elf *e, const struct uw_elf *src,
			    const struct pr_logger *lg)
{
	struct uw_cfi_table t = { 0 };
	int err;

	if (!src->debug_frame.size)
		return -ENOENT;
	t.frames = malloc(src->debug_frame.size);
	if (!t.frames)
		return -ENOMEM;
	t.frames_size = (size_t)src->debug_frame.size;
	memcpy(t.frames, src->data + src->debug_frame.offset, t.frames_size);
	err = walk(e, &t, t.frames, t.frames_size, 0, true);
	if (err || !t.nr) {
		uw_cfi_table_free(&t);
		return err ? err : -ENOENT;
	}
	uw_cfi_table_free(&e->dbg);
	e->dbg = t;
	pr__log(lg, PR_LOG_DEBUG, "%s: %zu FDEs of .debug_frame%s%s", e->path, t.nr,
		src != e ? " from " : "", src != e ? src->path : "");
	return 0;
}

unsigned char *uw_cfi_image(const struct uw_cfi_table *t, uint64_t bias,
			    size_t *size, size_t *frames_at)
{
	size_t table = t->nr * sizeof(struct uw_fde);
	unsigned char *img = malloc(table + t->frames_size + 8);

	if (!img)
		return NULL;
	memcpy(img, t->index, table);
	memset(img + table + t->frames_size, 0, 8);
	if (t->frames) {
		memcpy(img + table, t->frames, t->frames_size);
		/* Each indexed FDE's start address, after its length and CIE
		 * pointer, moves with the load bias. */
		for (size_t i = 0; i < t->nr; i++) {
			unsigned char *at = img + table + (size_t)t->index[i].fde + 8;
			uint64_t start;

			memcpy(&start, at, 8);
			start += bias;
			memcpy(at, &start, 8);
		}
	}
	*size = table + t->frames_size;
	*frames_at = table;
	return img;
}
