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

	if (c->bad || c->p > c->end || (size_t)(c->end - c->p) < n) {
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
		v = (int64_t)((uint64_t)v | (~UINT64_C(0) << shift));
	return v;
}

/* A DW_EH_PE_* encoded value at c->p, whose own address is `at`.  Only
 * the encodings FDE start addresses use; others mark the cursor bad. */
static uint64_t encoded(struct cur *c, uint8_t enc, uint64_t at)
{
	uint64_t v;

	/* DW_EH_PE_indirect: a pointer to the value, never an FDE's. */
	if (enc & 0x80) {
		c->bad = true;
		return 0;
	}
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
	if (c.p >= end || !memchr(aug, '\0', (size_t)(end - c.p)))
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
	int64_t rel = (int64_t)(start - e->img->text_lo);

	/* Outside the file's code, or a table offset past 32 bits: not an
	 * FDE libunwind could use. */
	if (start < e->img->text_lo || start >= e->img->text_hi || rel > INT32_MAX || fde > INT32_MAX)
		return 0;
	if (PR_ARRAY_RESERVE(t->index, *cap, t->nr + 1))
		return -ENOMEM;
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
		if (len < 4) {          /* not even an id: skip it */
			pos = end;
			continue;
		}
		memcpy(&id, sec + content, 4);
		if (convert ? id == 0xffffffffu : id == 0) {
			if (convert)
				memset(sec + content, 0, 4);
		} else {
			size_t cie = convert ? id : content - id;
			uint32_t cie_len = 0;
			struct cur c;
			uint32_t rel;
			int enc;

			/* The CIE must be whole, inside the section. */
			if ((!convert && id > content) || cie > size - 9 || len < 8) {
				pos = end;
				continue;
			}
			memcpy(&cie_len, sec + cie, 4);
			if (cie_len < 5 || cie_len > size - cie - 4) {
				pos = end;
				continue;
			}
			enc = cie_fde_encoding(sec + cie + 8, sec + cie + 4 + cie_len, convert);
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

static int index_eh_frame(struct uw_elf *e, const struct pr_logger *lg)
{
	const struct pr_elf *f = e->img;
	/* walk() does not write to .eh_frame (convert is false), so the
	 * read-only mapping is safe despite the cast. */
	int err = walk(e, &e->eh, (unsigned char *)f->data + f->eh_frame.offset,
		       (size_t)f->eh_frame.size, f->eh_frame.vaddr, false);

	if (err || !e->eh.nr) {
		uw_cfi_table_free(&e->eh);
		return err ? err : -ENOENT;
	}
	e->table = UW_TABLE_EH_FRAME;
	pr__log(lg, PR_LOG_DEBUG, "%s: no .eh_frame_hdr; indexed %zu FDEs of .eh_frame",
		f->path, e->eh.nr);
	return 0;
}

/* .eh_frame_hdr encodings (DW_EH_PE_*) the fast path understands: the
 * table of (initial location, FDE address) pairs as signed 32-bit values
 * relative to the header, which is what every GNU linker writes. */
#define EH_PE_udata4 0x03
#define EH_PE_sdata4 0x0b
#define EH_PE_datarel 0x30

void uw_cfi_find_table(struct uw_elf *e, const struct pr_logger *lg)
{
	const struct pr_elf *f = e->img;
	const struct pr_elf_section *hs = &f->eh_frame_hdr;
	const unsigned char *h = f->data + hs->offset;
	size_t seg_size;
	uint64_t seg_vaddr;
	uint32_t count;

	if (hs->size >= 12 && h[0] == 1 && h[1] == (DW_EH_PE_pcrel | EH_PE_sdata4) &&
	    h[2] == EH_PE_udata4 && h[3] == (EH_PE_datarel | EH_PE_sdata4)) {
		memcpy(&count, h + 8, 4);
		/* The table must be in the file's loaded bytes, where
		 * libunwind reads it. */
		if ((uint64_t)count * 8 <= hs->size - 12 &&
		    pr__elf_segment(f, hs->vaddr + 12, &seg_size, &seg_vaddr) &&
		    (uint64_t)count * 8 <= seg_size - (hs->vaddr + 12 - seg_vaddr)) {
			e->table = UW_TABLE_EH_HDR;
			e->eh_hdr_vaddr = hs->vaddr;
			e->eh_table_vaddr = hs->vaddr + 12;
			e->fde_count = count;
			return;
		}
	}
	if (f->eh_frame.size)
		index_eh_frame(e, lg);
}

int uw_cfi_load_debug_frame(struct uw_elf *e, const struct pr_elf *src,
			    const struct pr_logger *lg)
{
	struct uw_cfi_table t = { 0 };
	int err;

	if (!src->debug_frame.size)
		return -ENOENT;
	err = pr__elf_section(src, &src->debug_frame, &t.frames, &t.frames_size, lg);
	if (err)
		return err;
	err = walk(e, &t, t.frames, t.frames_size, 0, true);
	if (err || !t.nr) {
		uw_cfi_table_free(&t);
		return err ? err : -ENOENT;
	}
	uw_cfi_table_free(&e->dbg);
	e->dbg = t;
	pr__log(lg, PR_LOG_DEBUG, "%s: %zu FDEs of .debug_frame%s%s", e->img->path, t.nr,
		src != e->img ? " from " : "", src != e->img ? src->path : "");
	return 0;
}

unsigned char *uw_cfi_image(const struct uw_cfi_table *t, uint64_t bias,
			    size_t *size, size_t *frames_at)
{
	size_t table = t->nr * sizeof(struct uw_fde);
	unsigned char *img = malloc(table + t->frames_size + 8);

	if (!img)
		return NULL;
	if (table)
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

/* ---- one row of a CFA program, compiled for the fast path ---- */

/* DWARF's x86-64 register numbers that matter here; libunwind keeps
 * rules for columns 0-16 and refuses the others. */
#define DW_RBP 6
#define DW_RSP 7
#define DW_RA 16
#define DW_NUM_COLUMNS 17
#define MAX_REMEMBERED 8

enum { COL_SAME, COL_UNDEF, COL_AT_CFA, COL_OTHER };

struct col {
	uint8_t how;
	int64_t off;
};

struct row_state {
	uint64_t cfa_reg;
	int64_t cfa_off;
	bool cfa_expr;
	/* The CFA of an x86-64 PLT entry (plt_expr()): rsp + cfa_off, plus 8
	 * from byte plt_from of each 16-byte entry on (after its push). */
	bool plt;
	uint8_t plt_from;
	struct col rbp, rsp, ra;
};

struct cie_info {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra;
	uint8_t fde_enc;
	bool z, signal;
	const unsigned char *insns, *end;
};

/* The CIE at `cie` (its length field), in a buffer whose first byte is
 * at link-time `vaddr`.  false when it is not one the fast path reads. */
static bool read_cie(const unsigned char *buf, size_t size, size_t cie, struct cie_info *ci)
{
	struct cur c;
	uint32_t len, id;
	const char *aug;
	uint8_t version;

	if (cie > size || size - cie < 9)
		return false;
	memcpy(&len, buf + cie, 4);
	memcpy(&id, buf + cie + 4, 4);
	if (len == 0xffffffffu || len < 5 || len > size - cie - 4 || id != 0)
		return false;
	c = (struct cur){ buf + cie + 8, buf + cie + 4 + len, false };
	/* What libunwind 1.6 reads alike: versions 1 and 3, augmentations
	 * it knows, their data exactly as long as it says. */
	version = (uint8_t)get(&c, 1);
	if (c.bad || (version != 1 && version != 3))
		return false;
	aug = (const char *)c.p;
	if (c.p >= c.end || !memchr(aug, '\0', (size_t)(c.end - c.p)))
		return false;
	c.p += strlen(aug) + 1;
	memset(ci, 0, sizeof(*ci));
	ci->code_align = uleb(&c);
	ci->data_align = sleb(&c);
	ci->ra = version == 1 ? get(&c, 1) : uleb(&c);
	ci->fde_enc = DW_EH_PE_absptr;
	if (aug[0] == 'z') {
		uint64_t n = uleb(&c);
		const unsigned char *data_end;

		if (c.bad || c.p > c.end || n > (uint64_t)(c.end - c.p))
			return false;
		data_end = c.p + n;
		ci->z = true;
		for (const char *a = aug + 1; *a && !c.bad; a++) {
			if (*a == 'R')
				ci->fde_enc = (uint8_t)get(&c, 1);
			else if (*a == 'P')
				encoded(&c, (uint8_t)get(&c, 1) & 0x7f, 0);
			else if (*a == 'L')
				get(&c, 1);
			else if (*a == 'S')
				ci->signal = true;
			else
				return false;
		}
		if (c.p != data_end)
			return false;
	} else if (aug[0]) {
		return false;
	}
	ci->insns = c.p;
	ci->end = c.end;
	return !c.bad && ci->fde_enc != DW_EH_PE_omit;
}

/* A factored offset, wrapping rather than overflowing. */
static int64_t factored(uint64_t v, int64_t align)
{
	return (int64_t)(v * (uint64_t)align);
}

static struct col *column(struct row_state *s, const struct cie_info *ci, uint64_t reg,
			  struct col *ignored, bool *bad)
{
	if (reg >= DW_NUM_COLUMNS) {
		*bad = true;
		return ignored;
	}
	if (reg == ci->ra)
		return &s->ra;
	if (reg == DW_RBP)
		return &s->rbp;
	if (reg == DW_RSP)
		return &s->rsp;
	return ignored;
}

/*
 * The one CFA expression the fast path follows: the x86-64 PLT's, which
 * GNU ld writes for .plt (and gcc's crt for its stubs): "rsp + N, and 8
 * more from byte K of each 16-byte entry", where the lazy stub has pushed
 * its index --
 *   DW_OP_breg7 N; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_litK;
 *   DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus
 * Programs call their libraries through it all the time (memcpy@plt), and
 * every sample that met one went to libunwind, which evaluates it.  true,
 * with N and K in *s, for exactly that expression.
 */
static bool plt_expr(const unsigned char *p, uint64_t len, struct row_state *s)
{
	static const unsigned char tail[] = { 0x80, 0x00, 0x3f, 0x1a, 0xff, 0x2a, 0x33, 0x24, 0x22 };
	struct cur c = { p, p + len, false };
	int64_t n;

	if (len < 3 || p[0] != 0x77)
		return false;
	c.p++;
	n = sleb(&c);
	if (c.bad || (uint64_t)(c.end - c.p) != sizeof(tail))
		return false;
	for (size_t i = 0; i < sizeof(tail); i++)
		if (tail[i] != 0xff && c.p[i] != tail[i])
			return false;
	/* DW_OP_lit0 .. DW_OP_lit15: a byte of the entry. */
	if (c.p[4] < 0x30 || c.p[4] > 0x3f)
		return false;
	s->cfa_reg = DW_RSP;
	s->cfa_off = n;
	s->cfa_expr = false;
	s->plt = true;
	s->plt_from = (uint8_t)(c.p[4] - 0x30);
	return true;
}

/*
 * Run CFA instructions [c->p, c->end) from `*loc`.  For an FDE
 * (`init` set: the CIE's rules, for DW_CFA_restore), stop at the row
 * holding `addr`, setting *next to where the following row starts.
 * false when an instruction is one the fast path does not follow.
 */
static bool run(struct cur *c, const struct cie_info *ci, struct row_state *s,
		const struct row_state *init, uint64_t *loc, uint64_t addr, uint64_t *next)
{
	struct row_state stack[MAX_REMEMBERED];
	size_t depth = 0;
	struct col ignored;
	bool bad = false;

	while (c->p < c->end && !c->bad && !bad) {
		uint8_t op = (uint8_t)get(c, 1);
		uint64_t operand = op & 0x3f, reg, delta = 0;
		struct col *col;

		switch (op & 0xc0) {
		case 0x40:              /* DW_CFA_advance_loc */
			delta = operand;
			goto advance;
		case 0x80:              /* DW_CFA_offset */
			col = column(s, ci, operand, &ignored, &bad);
			col->how = COL_AT_CFA;
			col->off = factored(uleb(c), ci->data_align);
			continue;
		case 0xc0:              /* DW_CFA_restore */
			col = column(s, ci, operand, &ignored, &bad);
			if (!init)
				return false;
			*col = *column((struct row_state *)init, ci, operand, &ignored, &bad);
			continue;
		}
		switch (op) {
		case 0x00:              /* DW_CFA_nop */
			break;
		case 0x02:              /* DW_CFA_advance_loc1 */
			delta = get(c, 1);
			goto advance;
		case 0x03:              /* DW_CFA_advance_loc2 */
			delta = get(c, 2);
			goto advance;
		case 0x04:              /* DW_CFA_advance_loc4 */
			delta = get(c, 4);
			goto advance;
		case 0x05:              /* DW_CFA_offset_extended */
			col = column(s, ci, uleb(c), &ignored, &bad);
			col->how = COL_AT_CFA;
			col->off = factored(uleb(c), ci->data_align);
			break;
		case 0x11:              /* DW_CFA_offset_extended_sf */
			col = column(s, ci, uleb(c), &ignored, &bad);
			col->how = COL_AT_CFA;
			col->off = factored((uint64_t)sleb(c), ci->data_align);
			break;
		case 0x2f:              /* DW_CFA_GNU_negative_offset_extended */
			col = column(s, ci, uleb(c), &ignored, &bad);
			col->how = COL_AT_CFA;
			col->off = factored(-uleb(c), ci->data_align);
			break;
		case 0x06:              /* DW_CFA_restore_extended */
			reg = uleb(c);
			col = column(s, ci, reg, &ignored, &bad);
			if (!init)
				return false;
			*col = *column((struct row_state *)init, ci, reg, &ignored, &bad);
			break;
		case 0x07:              /* DW_CFA_undefined */
			column(s, ci, uleb(c), &ignored, &bad)->how = COL_UNDEF;
			break;
		case 0x08:              /* DW_CFA_same_value */
			column(s, ci, uleb(c), &ignored, &bad)->how = COL_SAME;
			break;
		case 0x09:              /* DW_CFA_register */
			column(s, ci, uleb(c), &ignored, &bad)->how = COL_OTHER;
			if (uleb(c) >= DW_NUM_COLUMNS)
				bad = true;
			break;
		/* libunwind 1.6 evaluates expressions for every register
		 * (and may fail where the fast path would not look), and
		 * does not know DW_CFA_val_offset: those are its to unwind. */
		case 0x0a:              /* DW_CFA_remember_state */
			if (depth == MAX_REMEMBERED)
				return false;
			stack[depth++] = *s;
			break;
		case 0x0b:              /* DW_CFA_restore_state */
			if (!depth)
				return false;
			*s = stack[--depth];
			break;
		case 0x0c:              /* DW_CFA_def_cfa */
			s->cfa_reg = uleb(c);
			s->cfa_off = (int64_t)uleb(c);
			s->cfa_expr = false;
			s->plt = false;
			break;
		case 0x0f:              /* DW_CFA_def_cfa_expression */
			reg = uleb(c);  /* the block's length */
			if (c->bad || reg > (uint64_t)(c->end - c->p) || !plt_expr(c->p, reg, s))
				return false;
			c->p += reg;
			break;
		case 0x12:              /* DW_CFA_def_cfa_sf */
			s->cfa_reg = uleb(c);
			s->cfa_off = factored((uint64_t)sleb(c), ci->data_align);
			s->cfa_expr = false;
			s->plt = false;
			break;
		case 0x0d:              /* DW_CFA_def_cfa_register */
			s->cfa_reg = uleb(c);
			s->cfa_expr = false;
			s->plt = false;
			break;
		/* An offset for a CFA that is an expression means nothing to
		 * DWARF, and libunwind keeps the expression: that row is
		 * libunwind's. */
		case 0x0e:              /* DW_CFA_def_cfa_offset */
			if (s->plt)
				return false;
			s->cfa_off = (int64_t)uleb(c);
			break;
		case 0x13:              /* DW_CFA_def_cfa_offset_sf */
			if (s->plt)
				return false;
			s->cfa_off = factored((uint64_t)sleb(c), ci->data_align);
			break;

		case 0x2e:              /* DW_CFA_GNU_args_size */
			uleb(c);
			break;
		default:                /* set_loc, MIPS/SPARC extensions, unknown */
			return false;
		}
		continue;
advance:
		/* The CIE's instructions describe the function's entry; an
		 * advance that wraps around is nothing libunwind agrees on. */
		if (!init || (ci->code_align && delta > UINT64_MAX / ci->code_align) ||
		    *loc + delta * ci->code_align < *loc)
			return false;
		if (addr < *loc + delta * ci->code_align) {
			*next = *loc + delta * ci->code_align;
			return !c->bad && !bad;
		}
		*loc += delta * ci->code_align;
	}
	return !c->bad && !bad;
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* The state at a row, for the frame at `addr`, as the fast path's rule,
 * or not usable. */
static void compile(const struct row_state *s, bool signal, uint64_t addr, struct uw_rule *r)
{
	int64_t cfa_off = s->cfa_off;

	/* A PLT's row holds at one address: the CFA depends on it. */
	if (s->plt) {
		cfa_off += (addr & 15) >= s->plt_from ? 8 : 0;
		r->lo = addr;
		r->hi = addr + 1;
	}
	r->usable = !signal && !s->cfa_expr && (s->cfa_reg == DW_RSP || s->cfa_reg == DW_RBP) &&
		    fits32(cfa_off) && s->rsp.how == COL_SAME &&
		    s->rbp.how != COL_OTHER && fits32(s->rbp.off) &&
		    (s->ra.how == COL_AT_CFA || s->ra.how == COL_UNDEF) && fits32(s->ra.off);
	if (!r->usable)
		return;
	r->cfa_rbp = s->cfa_reg == DW_RBP;
	r->cfa_off = (int32_t)cfa_off;
	r->rbp = s->rbp.how == COL_SAME ? UW_LOC_SAME :
		 s->rbp.how == COL_UNDEF ? UW_LOC_UNDEF : UW_LOC_AT_CFA;
	r->rbp_off = (int32_t)s->rbp.off;
	r->ra = s->ra.how == COL_UNDEF ? UW_LOC_UNDEF : UW_LOC_AT_CFA;
	r->ra_off = (int32_t)s->ra.off;
}

int uw_cfi_row(const unsigned char *buf, size_t size, uint64_t vaddr, size_t fde,
	       uint64_t addr, struct uw_rule *r)
{
	struct row_state s, init;
	struct cie_info ci;
	struct cur c;
	uint32_t len, id;
	uint64_t start, range, loc, next;

	memset(r, 0, sizeof(*r));
	if (fde > size || size - fde < 8)
		return -1;
	memcpy(&len, buf + fde, 4);
	memcpy(&id, buf + fde + 4, 4);
	if (len == 0xffffffffu || len < 4 || len > size - fde - 4 || id == 0 || id > fde + 4)
		return -1;
	if (!read_cie(buf, size, fde + 4 - id, &ci))
		return -1;
	c = (struct cur){ buf + fde + 8, buf + fde + 4 + len, false };
	start = encoded(&c, ci.fde_enc, vaddr + fde + 8);
	range = encoded(&c, ci.fde_enc & 0x0f, 0);
	if (c.bad || start + range < start)
		return -1;
	r->lo = start;
	r->hi = start + range;
	if (addr < start || addr - start >= range)
		return 0;
	if (ci.z) {
		uint64_t n = uleb(&c);

		if (c.bad || c.p > c.end || n > (uint64_t)(c.end - c.p))
			return -1;
		c.p += n;
	}
	/* Unusable rows still say where they end (the FDE's range, when the
	 * row's is not known), so the next lookup in the same row does not
	 * interpret the FDE again. */
	memset(&s, 0, sizeof(s));
	loc = start;
	if (ci.ra != DW_RA ||
	    !run(&(struct cur){ ci.insns, ci.end, false }, &ci, &s, NULL, &loc, addr, &next))
		return 1;
	init = s;
	next = start + range;
	if (!run(&c, &ci, &s, &init, &loc, addr, &next))
		return 1;
	/* The row ends with the FDE, whatever its last advance says. */
	r->lo = loc;
	r->hi = next < start + range ? next : start + range;
	compile(&s, ci.signal, addr, r);
	return 1;
}
