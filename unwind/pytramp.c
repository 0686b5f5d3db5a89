/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPython's perf trampolines (3.12 and later, started with -X perf or
 * PYTHONPERFSUPPORT=1, or after sys.activate_stack_trampoline("perf")).
 *
 * CPython evaluates each Python function through its own copy of one small
 * template, the code from _Py_trampoline_func_start to
 * _Py_trampoline_func_end of the interpreter's executable or libpython,
 * copied into anonymous executable memory and named in /tmp/perf-PID.map
 * ("py::func:file.py").  The copies have no unwind information, and the
 * x86-64 template of 3.12 and 3.13 keeps no frame pointer (endbr64;
 * sub $8,%rsp; call *%rcx; add $8,%rsp; ret): following rbp out of one
 * skips its caller, or leaves the stack.  Later templates push rbp.
 *
 * The rows of a copy are read from the template itself, in the
 * interpreter's file: every instruction of it must be one of the few the
 * known templates are made of, one call, a ret last, or the template is
 * not used.  A frame in anonymous executable memory is stepped as a copy
 * only when all of these hold:
 *   - the return address its row reads is in the code of a file holding
 *     a known template, right after a call instruction (the interpreter
 *     calls every copy);
 *   - the frame's address is, in its mapping, where that row applies:
 *     for a caller, the return address of the template's call.  The
 *     copies are laid end to end from the mapping's start, each at the
 *     template's size (3.12) or rounded up to 16 bytes (3.13): either
 *     is taken.
 * Anything else is left to the frame-pointer rules of JIT code.  The step
 * itself is what CFI for the copy would say, for the fast path (a struct
 * uw_rule) and for libunwind (an FDE built for the one address).
 */
#include <gelf.h>
#include <string.h>
#include <sys/mman.h>

#include "unwind-int.h"

/* The instructions templates are made of: how each moves the CFA's
 * distance above rsp, and what it does with rbp. */
static const struct tramp_insn {
	uint8_t len;
	unsigned char bytes[4];
	int8_t cfa;                  /* change of CFA - rsp */
	int8_t rbp;                  /* 1: pushed; -1: popped */
	bool call, ret;
} tramp_insns[] = {
	{ 4, { 0xf3, 0x0f, 0x1e, 0xfa }, 0, 0, false, false },   /* endbr64 */
	{ 4, { 0x48, 0x83, 0xec, 0x08 }, 8, 0, false, false },   /* sub $8,%rsp */
	{ 4, { 0x48, 0x83, 0xc4, 0x08 }, -8, 0, false, false },  /* add $8,%rsp */
	{ 1, { 0x55 }, 8, 1, false, false },                     /* push %rbp */
	{ 3, { 0x48, 0x89, 0xe5 }, 0, 0, false, false },         /* mov %rsp,%rbp */
	{ 3, { 0x48, 0x8b, 0xec }, 0, 0, false, false },         /* mov %rsp,%rbp */
	{ 1, { 0x5d }, -8, -1, false, false },                   /* pop %rbp */
	{ 2, { 0xff, 0xd1 }, 0, 0, true, false },                /* call *%rcx */
	{ 1, { 0xc3 }, 0, 0, false, true },                      /* ret */
};

/* Decode the template's `n` bytes at `p` into t's rows; false when an
 * instruction is not one of tramp_insns or the frame is not the one-slot
 * frame every known template has (CFA rsp + 16 at its call). */
static bool decode(struct uw_pytemplate *t, const unsigned char *p, size_t n)
{
	unsigned cfa = 8, rbp_at = 0;
	bool called = false;
	size_t off = 0;

	while (off < n) {
		const struct tramp_insn *in = NULL;

		for (size_t i = 0; i < PR_ARRAY_SIZE(tramp_insns) && !in; i++)
			if (tramp_insns[i].len <= n - off &&
			    !memcmp(p + off, tramp_insns[i].bytes, tramp_insns[i].len))
				in = &tramp_insns[i];
		if (!in || (in->call && (called || cfa != 16)) || (in->ret && off + 1 != n))
			return false;
		t->cfa[off] = (uint8_t)cfa;
		t->rbp_at[off] = (uint8_t)rbp_at;
		if (in->rbp > 0 && !rbp_at)
			rbp_at = cfa + 8;
		else if (in->rbp < 0)
			rbp_at = 0;
		cfa = (unsigned)((int)cfa + in->cfa);
		if (cfa < 8 || cfa > 16)
			return false;
		off += in->len;
		if (in->call) {
			called = true;
			t->ret = (uint8_t)off;
		}
		if (in->ret)
			return called && cfa == 8;
	}
	return false;
}

/* The link-time addresses of the template's two symbols in `img`. */
static bool template_symbols(const struct pr_elf *img, uint64_t *start, uint64_t *end)
{
	Elf *elf = elf_memory((char *)img->data, img->size);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;

	*start = *end = 0;
	while (elf && (scn = elf_nextscn(elf, scn)) && !(*start && *end)) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && gelf_getsym(d, (int)i, &sym); i++) {
			const char *name;

			if (sym.st_shndx == SHN_UNDEF ||
			    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)) ||
			    strncmp(name, "_Py_trampoline_func_", 20))
				continue;
			if (!strcmp(name + 20, "start"))
				*start = sym.st_value;
			else if (!strcmp(name + 20, "end"))
				*end = sym.st_value;
		}
	}
	if (elf)
		elf_end(elf);
	return *start && *end > *start;
}

/* e's template, read the first time (its own symbols only: a file
 * without them is not looked up in debug files for this). */
static const struct uw_pytemplate *template_of(struct pr_unwinder *u, struct uw_elf *e)
{
	struct uw_pytemplate *t = &e->py;
	const unsigned char *seg;
	uint64_t start, end, seg_vaddr;
	size_t size;

	if (t->read)
		return t->size ? t : NULL;
	t->read = true;
	if (!template_symbols(e->img, &start, &end))
		return NULL;
	seg = pr__elf_segment(e->img, start, &size, &seg_vaddr);
	if (!seg || end - start > UW_PY_TEMPLATE_MAX || start - seg_vaddr > size ||
	    size - (start - seg_vaddr) < end - start ||
	    !decode(t, seg + (start - seg_vaddr), (size_t)(end - start))) {
		memset(t, 0, sizeof(*t));
		t->read = true;
		pr__log(&u->lg, PR_LOG_INFO, "%s: CPython's perf trampoline template is not one "
			"this unwinder knows: stacks through Python functions end at them",
			e->img->path);
		return NULL;
	}
	t->size = (uint8_t)(end - start);
	pr__log(&u->lg, PR_LOG_DEBUG, "%s: CPython's perf trampoline, %u bytes, returns "
		"at +%u", e->img->path, t->size, t->ret);
	return t;
}

/* Whether the 8 code bytes before return address `ra` end with a call:
 * call rel32, or an indirect call (ff /2) through a register or memory. */
static bool after_call(struct uw_ctx *c, uint64_t ra)
{
	unsigned char b[8];
	uint64_t w;

	if (uw_read_file(c, ra - 8, &w))
		return false;
	memcpy(b, &w, 8);
	if (b[3] == 0xe8)
		return true;
	for (unsigned k = 2; k <= 7; k++) {
		uint8_t modrm = b[8 - k + 1], mod = modrm >> 6, rm = modrm & 7;
		unsigned len = 2;

		if (b[8 - k] != 0xff || (modrm >> 3 & 7) != 2)
			continue;
		if (mod != 3 && rm == 4) {
			/* A SIB byte; without a base, a disp32. */
			if (k < 3)
				continue;
			len++;
			if (mod == 0 && (b[8 - k + 2] & 7) == 5)
				len += 4;
		}
		if (mod == 1)
			len += 1;
		else if (mod == 2 || (mod == 0 && rm == 5))
			len += 4;
		if (len == k)
			return true;
	}
	return false;
}

/* Whether the row of `t` at `off` (a frame's address less the copy's
 * start) applies: for a caller, off is the return address of its call. */
static bool row_applies(const struct uw_pytemplate *t, uint64_t off, bool leaf, unsigned cfa)
{
	if (off >= t->size)
		return false;
	return leaf ? t->cfa[off] == cfa : off == t->ret;
}

/* Where `ip` (in mapping `m`) is in a copy of `t`, the copies laid out at
 * either stride: *off, when the row there applies. */
static bool placed_at(const struct uw_pytemplate *t, const struct pr_map *m, uint64_t ip,
		      bool leaf, unsigned cfa, uint64_t *off)
{
	for (unsigned k = 0; k < 2; k++) {
		uint64_t stride = k ? (t->size + 15u) & ~15u : t->size;

		*off = (ip - m->start) % stride;
		if (row_applies(t, *off, leaf, cfa))
			return true;
	}
	return false;
}

/* The offset of the row a caller's frame in a copy of `t` has: its
 * call's. */
static uint64_t call_row(const struct uw_pytemplate *t)
{
	uint64_t off = (uint64_t)t->ret - 1;

	while (off && !t->cfa[off])
		off--;
	return off;
}

int uw_py_keeps_fp(struct pr_unwinder *u, const struct pr_proc *proc, const struct pr_map *m,
		   uint64_t ra)
{
	for (size_t i = 0; i < proc->nr; i++) {
		const struct pr_map *fm = &proc->maps[i];
		const struct uw_pytemplate *t;
		struct uw_elf *e;
		uint64_t off;

		if (!(fm->prot & PROT_EXEC) || !uw_has_image(fm) || !(e = uw_resolved(u, fm)) ||
		    !(t = template_of(u, e)) || !placed_at(t, m, ra, false, 16, &off))
			continue;
		return t->rbp_at[call_row(t)] != 0;
	}
	return -1;
}

bool uw_py_trampoline(struct pr_unwinder *u, struct uw_ctx *c, const struct pr_map *m,
		      uint64_t ip, uint64_t sp, bool leaf, struct uw_rule *r)
{
	/* At its call every known template's CFA is rsp + 16 (rows before
	 * and after it, + 8: a leaf only). */
	for (unsigned cfa = 16; cfa >= 8 && (cfa == 16 || leaf); cfa -= 8) {
		const struct uw_pytemplate *t;
		const struct pr_map *fm;
		struct uw_elf *e;
		uint64_t ra, bias, off = 0;

		if (uw_read_mem(c, sp + cfa - 8, &ra) || ra < 8 ||
		    !(fm = pr__proc_find(c->proc, ra - 1)) || !(fm->prot & PROT_EXEC) ||
		    !uw_has_image(fm) || !(e = uw_resolve(u, c->pid, fm)) || !(t = template_of(u, e)))
			continue;
		bias = pr__elf_bias(e->img, fm);
		if (ra - 1 < e->img->text_lo + bias || ra - 1 >= e->img->text_hi + bias ||
		    !after_call(c, ra) || !placed_at(t, m, ip, leaf, cfa, &off))
			continue;
		memset(r, 0, sizeof(*r));
		r->lo = ip;
		r->hi = ip + 1;
		r->usable = 1;
		r->cfa_off = (int32_t)cfa;
		r->ra = UW_LOC_AT_CFA;
		r->ra_off = -8;
		/* A leaf's row is its offset's; a caller's, its call's. */
		off = leaf ? off : call_row(t);
		r->rbp = t->rbp_at[off] ? UW_LOC_AT_CFA : UW_LOC_SAME;
		r->rbp_off = -(int32_t)t->rbp_at[off];
		return true;
	}
	return false;
}

/* ---- for libunwind ---- */

int uw_py_proc_info(unw_addr_space_t as, struct uw_ctx *c, const struct pr_map *m,
		    uint64_t ip, unw_proc_info_t *pi, int need_unwind_info)
{
	struct uw_rule r;
	bool leaf = ip == c->frame_ip;

	/* Only the frame being stepped: its stack pointer is known. */
	if ((!leaf && ip + 1 != c->frame_ip) ||
	    !uw_py_trampoline(c->u, c, m, c->frame_ip, c->frame_sp, leaf, &r))
		return -UNW_ENOINFO;
	return uw_one_fde_proc_info(as, c, &r, false, ip, pi, need_unwind_info);
}
