/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the decoder of a sampled leaf's epilogue
 * (uw_leaf_exit(), unwind/leafexit.c).  Any bytes describe a sample: its
 * stack pointer and rbp, a function's code with the CFI rows a compiler
 * might give it, where in the code it was sampled, and its stack copy.
 * The code and its .eh_frame are written into an ELF file a process
 * maps, so that the decoder reads the code and the rows it checks the way
 * out against through the unwinder's accessors, as in a capture.  The
 * sample is unwound as a session unwinds it, by the compiled rules and by
 * libunwind alone: each steps a leaf by its code, the rules where its row
 * has rbp saved below the stack pointer, libunwind once its stack ended
 * in an error.  uw_leaf_exit() is then asked for the step directly, which
 * must be a step out of a frame (check_step()) and the one the unwinds
 * took.  See tests/fuzz/README.md.
 *
 * Input, little-endian: the stack pointer (8 bytes); rbp, as a distance
 * from it (8); the sampled address's offset in the code (1); the code's
 * length (1); the number of CFI operations (1); the operations, 3 bytes
 * each (describe()); the code, whose end is the end of the file; and the
 * rest is the stack copy.
 */
#include <elf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model/model.h"
#include "prunwind.h"
#include "unwind-int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PID 1

/*
 * The file, laid out as lld lays out a small one: a read-only segment
 * (the headers, .eh_frame_hdr, .eh_frame), then the code in an executable
 * segment a page higher in memory and on the same page of the file, which
 * ends with the code -- so that the decoder can run into the end of what
 * it can read.  ld.so maps the executable segment from the file's first
 * page, at a PIE's usual load address.
 */
#define HDR_AT 0x100
#define CODE_OFFSET 0xc00
#define CODE_VADDR 0x1c00
#define CODE_SIZE 0x100              /* at most; the input's code is less */
#define LOAD_BIAS UINT64_C(0x555555554000)
#define MAP_SIZE 0x1000

/* The input's fixed part (above). */
struct input {
	uint64_t sp;
	uint64_t bp_from_sp;
	uint8_t ip;
	uint8_t code_len;
	uint8_t nr_ops;
} __attribute__((packed));
#define MAX_OPS 16

/* DWARF's x86-64 register numbers. */
#define DW_RBP 6
#define DW_RSP 7
#define DW_RA 16
#define DW_GPRS 16

/* The CFA a code byte's row gives, as the compiled rules see it. */
struct cfa {
	bool described;
	bool from_rbp;
	uint32_t off;
};

/* At a function's entry (the CIE's row): rsp + 8. */
static const struct cfa entry_cfa = { .described = true, .off = 8 };

/* One FDE being written: the code offsets it covers and its CFA
 * program (each operation an advance and at most one instruction). */
struct fde {
	uint32_t lo, hi;
	uint8_t insns[MAX_OPS * 6];
	size_t len;
};

/* The file being written, and what its rows say. */
struct image {
	uint8_t bytes[MAP_SIZE];
	size_t size;
	struct cfa cfa[CODE_SIZE];   /* per byte of the code */
	struct fde fdes[MAX_OPS + 1];
	size_t nr_fdes;
};

static size_t put_uleb(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	do {
		p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* The operations, each [advance][op][arg]: move `advance` bytes into the
 * code, then change the row there.  The code's first byte starts a
 * function. */
enum cfi_op {
	OP_FUNCTION,                 /* the FDE ends; another begins here */
	OP_GAP,                      /* the FDE ends; none until a function */
	OP_CFA_RSP,                  /* CFA = rsp + 8 * arg */
	OP_CFA_RBP,                  /* CFA = rbp + 8 * arg */
	OP_RBP_AT,                   /* rbp saved at CFA - 8 * arg */
	OP_RBP_SAME,                 /* rbp holds its caller's value */
	OP_RA_AT,                    /* the return address at CFA - 8 * arg */
	NR_OPS
};

static void close_fde(struct image *im, bool *open, uint32_t at)
{
	struct fde *f = &im->fdes[im->nr_fdes];

	/* An FDE of no code is no function: no table entry for it. */
	if (*open && at > f->lo) {
		f->hi = at;
		im->nr_fdes++;
	}
	*open = false;
}

/* An advance of the FDE's rows by `delta` bytes of code. */
static void advance(struct fde *f, uint32_t delta)
{
	if (!delta)
		return;
	if (delta < 0x40) {
		f->insns[f->len++] = (uint8_t)(0x40 | delta);        /* advance_loc */
	} else {
		f->insns[f->len++] = 0x02;                           /* advance_loc1 */
		f->insns[f->len++] = (uint8_t)delta;
	}
}

/* The FDEs the operations write over the code's `size` bytes, and the
 * CFA at each of them. */
static void describe(struct image *im, uint32_t size, const uint8_t *ops, size_t nr_ops)
{
	struct cfa cfa = entry_cfa;
	bool open = true;
	uint32_t at = 0, row_at = 0;  /* row_at: where the FDE's last row begins */

	im->nr_fdes = 0;
	im->fdes[0] = (struct fde){ .lo = 0 };
	for (size_t i = 0; i < nr_ops; i++, ops += 3) {
		struct fde *f = &im->fdes[im->nr_fdes];
		uint32_t next = at + ops[0];
		unsigned op = ops[1] % NR_OPS;
		uint8_t arg = ops[2];

		/* Past the code there is nothing to describe (and every
		 * advance fits advance_loc1). */
		if (next >= size)
			break;
		for (; at < next; at++)
			im->cfa[at] = open ? cfa : (struct cfa){ 0 };
		if (op == OP_FUNCTION || op == OP_GAP) {
			close_fde(im, &open, at);
			if (op == OP_FUNCTION) {
				im->fdes[im->nr_fdes] = (struct fde){ .lo = at };
				open = true;
				cfa = entry_cfa;
				row_at = at;
			}
			continue;
		}
		if (!open)
			continue;
		advance(f, at - row_at);
		row_at = at;
		switch (op) {
		case OP_CFA_RSP:
		case OP_CFA_RBP:
			cfa = (struct cfa){ .described = true, .from_rbp = op == OP_CFA_RBP,
					    .off = 8u * arg };
			f->insns[f->len++] = 0x0c;                               /* def_cfa */
			f->insns[f->len++] = cfa.from_rbp ? DW_RBP : DW_RSP;
			f->len += put_uleb(f->insns + f->len, cfa.off);
			break;
		case OP_RBP_AT:
			f->insns[f->len++] = 0x80 | DW_RBP;                      /* offset */
			f->len += put_uleb(f->insns + f->len, arg);
			break;
		case OP_RBP_SAME:
			f->insns[f->len++] = 0x08;                               /* same_value */
			f->insns[f->len++] = DW_RBP;
			break;
		case OP_RA_AT:
			f->insns[f->len++] = 0x80 | DW_RA;
			f->len += put_uleb(f->insns + f->len, arg);
			break;
		}
	}
	for (; at < CODE_SIZE; at++)
		im->cfa[at] = open && at < size ? cfa : (struct cfa){ 0 };
	close_fde(im, &open, size);
}

/* The CIE every FDE shares: "zR", pc-relative 4-byte addresses, data
 * alignment -8, the entry's row (CFA rsp + 8, the return address below
 * it), as GCC writes it. */
static const uint8_t cie[] = {
	20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, DW_RA, 1, 0x1b,
	0x0c, DW_RSP, 8, 0x80 | DW_RA, 1, 0, 0,
};

/* The header's table, the CIE and an FDE per function, each with every
 * operation, fit below the code. */
_Static_assert(HDR_AT + 12 + 8 * (MAX_OPS + 1) + 3 + sizeof(cie) +
	       (MAX_OPS + 1) * (4 + 16 + sizeof(((struct fde *)0)->insns)) + 4 <= CODE_OFFSET,
	       "the tables end before the code");

/* .eh_frame_hdr at HDR_AT, then .eh_frame: the CIE, the FDEs, the
 * terminator.  The header's table is the binary search both unwinders
 * make. */
static uint32_t write_tables(struct image *im)
{
	uint8_t *hdr = im->bytes + HDR_AT;
	uint32_t eh = (HDR_AT + 12 + 8 * (uint32_t)im->nr_fdes + 3) & ~3u;
	uint32_t at = eh + sizeof(cie);

	memcpy(im->bytes + eh, cie, sizeof(cie));
	hdr[0] = 1;
	hdr[1] = 0x1b;               /* eh_frame_ptr: pc-relative sdata4 */
	hdr[2] = 0x03;               /* fde_count: udata4 */
	hdr[3] = 0x3b;               /* table: relative to the header, sdata4 */
	put32(hdr + 4, eh - (HDR_AT + 4));
	put32(hdr + 8, (uint32_t)im->nr_fdes);
	for (size_t i = 0; i < im->nr_fdes; i++) {
		const struct fde *f = &im->fdes[i];
		uint32_t len = (uint32_t)((4 + 4 + 4 + 1 + f->len + 3) & ~(size_t)3);
		uint8_t *p = im->bytes + at;

		put32(hdr + 12 + 8 * i, CODE_VADDR + f->lo - HDR_AT);
		put32(hdr + 16 + 8 * i, at - HDR_AT);
		put32(p, len);
		put32(p + 4, at + 4 - eh);                           /* to the CIE */
		put32(p + 8, CODE_VADDR + f->lo - (at + 8));         /* pc-relative */
		put32(p + 12, f->hi - f->lo);
		p[16] = 0;                                           /* augmentation */
		memcpy(p + 17, f->insns, f->len);
		memset(p + 17 + f->len, 0, len + 4 - 17 - f->len);  /* DW_CFA_nop */
		at += len + 4;
	}
	put32(im->bytes + at, 0);
	return at + 4;
}

static void write_headers(struct image *im, uint32_t tables_end, uint32_t code_len)
{
	uint32_t hdr_size = 12 + 8 * (uint32_t)im->nr_fdes;
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
			     EV_CURRENT },
		.e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
		.e_phoff = sizeof(Elf64_Ehdr), .e_ehsize = sizeof(Elf64_Ehdr),
		.e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 3,
	};
	Elf64_Phdr ph[3] = {
		{ .p_type = PT_LOAD, .p_flags = PF_R, .p_filesz = tables_end,
		  .p_memsz = tables_end, .p_align = 0x1000 },
		{ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = CODE_OFFSET,
		  .p_vaddr = CODE_VADDR, .p_filesz = code_len, .p_memsz = code_len,
		  .p_align = 0x1000 },
		{ .p_type = PT_GNU_EH_FRAME, .p_flags = PF_R, .p_offset = HDR_AT,
		  .p_vaddr = HDR_AT, .p_filesz = hdr_size, .p_memsz = hdr_size, .p_align = 4 },
	};

	memcpy(im->bytes, &eh, sizeof(eh));
	memcpy(im->bytes + sizeof(eh), ph, sizeof(ph));
}

static void build_image(struct image *im, const uint8_t *code, uint32_t code_len,
			const uint8_t *ops, size_t nr_ops)
{
	memset(im->bytes, 0, sizeof(im->bytes));
	describe(im, code_len, ops, nr_ops);
	write_headers(im, write_tables(im), code_len);
	memcpy(im->bytes + CODE_OFFSET, code, code_len);
	im->size = CODE_OFFSET + code_len;
}

/* The file, mapped by process PID as ld.so maps it; false when the
 * model refuses it. */
static bool map_image(struct pr_model *m, int fd)
{
	char path[64];
	struct pr_record r;

	/* The model opens a mapped file by its path: the memfd's own. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	memset(&r, 0, sizeof(r));
	r.type = PR_RECORD_MMAP2;
	r.pid = r.tid = PID;
	/* The file's first page, where the code's address lands in it. */
	r.u.mmap = (struct pr_mmap){ .addr = LOAD_BIAS + CODE_VADDR - CODE_OFFSET, .len = MAP_SIZE,
				     .filename = path, .is_mmap2 = true,
				     .prot = PROT_READ | PROT_EXEC };
	return !pr_model_apply(m, &r);
}

static void require(bool ok, const char *what)
{
	if (ok)
		return;
	fprintf(stderr, "fuzz-leafexit: %s\n", what);
	abort();
}

/*
 * What a step out of the leaf is, whatever the code: the CFA counted
 * from rsp with the return address just below it, at or above the
 * sampled stack pointer (a ret pops it from the stack the sample copied)
 * and no farther than the largest copy; each register popped on the way
 * a general register but rsp, once, its word between the sampled stack
 * pointer and the return address.  Where the leaf's own row counts the
 * CFA from rsp, the step has that CFA (leafexit.c's agrees()).
 */
static void check_step(const struct uw_row *row, const struct cfa *leaf)
{
	int64_t cfa_off = row->cfa_off;
	uint32_t saved = 0;

	require(row->cfa_reg == DW_RSP && row->ra_off == -8,
		"the CFA is not rsp's, or the return address not just below it");
	require(cfa_off >= 8, "the return address is below the sampled stack pointer");
	require(cfa_off <= PR_MAX_STACK_SIZE + 8, "a frame larger than any stack copy");
	require(row->nr < DW_GPRS, "more registers saved than there are to pop");
	for (unsigned i = 0; i < row->nr; i++) {
		uint8_t reg = row->at[i].reg;
		int64_t off = row->at[i].off;

		require(reg < DW_GPRS && reg != DW_RSP, "a saved register that is not one popped");
		require(!(saved >> reg & 1), "a register saved in two places");
		saved |= 1u << reg;
		require(off >= -cfa_off, "a register saved below the sampled stack pointer");
		require(off < -8, "a register saved at or above the return address");
	}
	if (leaf->described && !leaf->from_rbp)
		require(cfa_off == leaf->off, "the CFA is not the one the leaf's row gives");
}

/* Where an unwinder stepped the leaf by its code (its stats say so), it
 * stepped by this step: the caller's stack pointer, its second frame's
 * (the sample has no kernel frames), is the CFA. */
static void check_unwind(const struct pr_unwinder *u, const struct pr_stack *st, bool stepped,
			 const struct uw_row *row, uint64_t sp)
{
	struct pr_unwind_stats stats = { .sz = sizeof(stats) };

	require(!pr_unwinder_stats(u, &stats), "no unwinder stats");
	if (!stats.leaf_exits)
		return;
	require(stepped, "an unwinder stepped the leaf by its code, uw_leaf_exit() finds no step");
	if (st->nr >= 2)
		require(u->sps[1] == sp + (uint64_t)(int64_t)row->cfa_off,
			"the caller's stack pointer is not the step's CFA");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	PR_OPTS(pr_unwinder_opts, libunwind_only, .no_rule_cache = true);
	static struct image im;
	struct input in;
	uint64_t regs[PR_REG_MAX] = { 0 }, dense[PR_REG_MAX];
	const uint8_t *code;
	size_t code_len, nr_ops, n = 0;
	struct pr_model *m;
	struct pr_unwinder *fast, *slow;
	struct pr_record rec;
	struct pr_stack a, b;
	struct uw_ctx c;
	struct uw_row row;
	bool stepped;
	int fd;

	if (size < sizeof(in))
		return 0;
	memcpy(&in, data, sizeof(in));
	nr_ops = in.nr_ops < MAX_OPS ? in.nr_ops : MAX_OPS;
	if (nr_ops * 3 > size - sizeof(in))
		nr_ops = (size - sizeof(in)) / 3;
	code = data + sizeof(in) + nr_ops * 3;
	code_len = in.code_len;
	if (code_len > size - (size_t)(code - data))
		code_len = size - (size_t)(code - data);
	build_image(&im, code, (uint32_t)code_len, data + sizeof(in), nr_ops);

	fd = memfd_create("fuzz-leafexit", MFD_CLOEXEC);
	if (fd < 0 || write(fd, im.bytes, im.size) != (ssize_t)im.size)
		abort();
	m = pr_model_new(NULL);
	fast = m ? pr_unwinder_new(m, NULL) : NULL;
	slow = m ? pr_unwinder_new(m, &libunwind_only) : NULL;
	if (!fast || !slow || !map_image(m, fd))
		abort();

	regs[PR_REG_IP] = LOAD_BIAS + CODE_VADDR + in.ip;
	regs[PR_REG_SP] = in.sp;
	regs[PR_REG_BP] = in.sp + in.bp_from_sp;
	for (int r = 0; r < PR_REG_MAX; r++)
		if (PR_REGS_DWARF >> r & 1)
			dense[n++] = regs[r];
	memset(&rec, 0, sizeof(rec));
	rec.type = PR_RECORD_SAMPLE;
	rec.pid = rec.tid = PID;
	rec.u.sample = (struct pr_sample){
		.ip = regs[PR_REG_IP], .regs_abi = PERF_SAMPLE_REGS_ABI_64,
		.regs_mask = PR_REGS_DWARF, .regs = dense, .stack_addr = in.sp,
		.stack = code + code_len,
	};
	rec.u.sample.stack_size = size - (size_t)(code + code_len - data);
	if (rec.u.sample.stack_size > PR_MAX_STACK_SIZE)
		rec.u.sample.stack_size = PR_MAX_STACK_SIZE;
	rec.u.sample.stack_dyn_size = rec.u.sample.stack_size;
	require(!pr_unwinder_unwind(fast, &rec, &a), "a sample not unwound");
	require(!pr_unwinder_unwind(slow, &rec, &b), "a sample not unwound");

	/* The unwinder's own context for the sample (unwinder.c's
	 * user_frames()), over the file as the unwinds left it. */
	memset(&c, 0, sizeof(c));
	c.u = fast;
	c.proc = pr__model_proc(m, PID, false);
	c.pid = PID;
	c.regs = regs;
	c.reg_mask = PR_REGS_DWARF;
	c.sp = in.sp;
	c.stack = rec.u.sample.stack;
	c.stack_size = rec.u.sample.stack_dyn_size;
	stepped = uw_leaf_exit(&c, regs[PR_REG_IP], &row);
	if (stepped)
		check_step(&row, &im.cfa[in.ip]);
	check_unwind(fast, &a, stepped, &row, in.sp);
	check_unwind(slow, &b, stepped, &row, in.sp);

	pr_unwinder_free(slow);
	pr_unwinder_free(fast);
	pr_model_free(m);
	close(fd);
	return 0;
}
