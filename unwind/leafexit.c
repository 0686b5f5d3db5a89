/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The step out of a sampled frame caught in its epilogue, worked out from
 * its code.
 *
 * GCC's x86-64 CFI moves the CFA at each pop of an epilogue but does not
 * say the register popped is back in its place: past `pop %rbp`, the row
 * still has rbp saved at CFA - 16, which is now below the stack pointer.
 * A snapshot starts at the stack pointer, so that word is not in it, and
 * the step fails as soon as a caller needs the register (a caller that
 * keeps rbp as its frame pointer: ld.so's _dl_relocate_object, every
 * function of a program built with frame pointers).  perf, which unwinds
 * the same copies, ends such a stack there too (perf 7.3: BENCHMARKS.md,
 * "Frames sampled in an epilogue").
 *
 * A frame in its epilogue is on its way out, and its code says where to:
 * decoded forward from the sampled address, through the pops, the moves
 * of the return value and the like, to its `ret` (or a jump out of the
 * function: a tail call).  The step is then the instructions' own: the
 * CFA is the stack pointer at that ret plus 8, each register still to be
 * popped is in its slot, and every other register already holds what the
 * caller will see -- the x86-64 ABI's rule for the callee-saved ones,
 * checked on the way: an instruction that would write one (other than a
 * pop of it), or the stack words still to be read, ends the decoding, and
 * the stack ends as it did.
 *
 * Reading each new leaf's code cost a fifth of an offline report's CPU in
 * page faults (fastpath.c), so it is read only where it is needed: by the
 * compiled rules where the sampled frame's row has rbp saved below the
 * stack pointer, and by libunwind's path once a stack has ended in an
 * unwinder error (unwinder.c).
 */
#include "unwind-int.h"

/* The most instructions followed from the leaf to its exit. */
#define MAX_STEPS 64

/* x86 register numbers (ModRM, opcode + r) to DWARF's. */
static const uint8_t dwarf_reg[16] = { 0, 2, 1, 3, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15 };

#define RSP 4
#define RBP 5
/* rbx, rsp, rbp, r12-r15: what the decoded code must not write. */
#define KEPT ((1u << 3) | (1u << RSP) | (1u << RBP) | (0xfu << 12))

/* Up to 16 bytes of code at `addr`, as many as the file has. */
static size_t code_at(struct uw_ctx *c, uint64_t addr, uint8_t *buf)
{
	uint64_t w[2];

	if (uw_read_mem(c, addr, &w[0]))
		return 0;
	memcpy(buf, &w[0], 8);
	if (uw_read_mem(c, addr + 8, &w[1]))
		return 8;
	memcpy(buf + 8, &w[1], 8);
	return 16;
}

/* An instruction's operand bytes after its opcode: ModRM, SIB,
 * displacement.  0 when it runs past `n`. */
static size_t modrm_size(const uint8_t *p, size_t n)
{
	uint8_t mod, rm;
	size_t size = 1;

	if (n < 1)
		return 0;
	mod = p[0] >> 6;
	rm = p[0] & 7;
	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (n < 2)
			return 0;
		size++;
		if (mod == 0 && (p[1] & 7) == 5)
			size += 4;
	} else if (mod == 0 && rm == 5) {
		size += 4;
	}
	size += mod == 1 ? 1 : mod == 2 ? 4 : 0;
	return size <= n ? size : 0;
}

/* What one decoded instruction does to the decoding. */
enum insn_kind {
	INSN_UNKNOWN,                /* not one followed: give up */
	INSN_PLAIN,                  /* writes at most `writes` */
	INSN_POP,                    /* pops `reg` */
	INSN_RSP_ADD,                /* rsp += imm */
	INSN_RSP_FROM_BP,            /* rsp = rbp + imm */
	INSN_LEAVE,
	INSN_RET,
	INSN_JMP,                    /* to `target` */
	INSN_JMP_OUT,                /* indirect: a tail call */
};

struct insn {
	enum insn_kind kind;
	size_t size;
	uint32_t writes;             /* x86 registers written, a mask */
	uint8_t reg;
	int64_t imm;
	uint64_t target;
};

/* Register `r` (with its REX bit) written, as a mask.  A byte operand
 * without a REX prefix numbered 4-7 is ah, ch, dh, bh: a part of rax,
 * rcx, rdx, rbx. */
static uint32_t written(unsigned r, bool byte, uint8_t rex)
{
	if (byte && !rex && r >= 4)
		r -= 4;
	return 1u << r;
}

/* The register a ModRM's r/m names when it is one (mod 3), as a mask.
 * A memory operand is written: `*stack` when it is based on rsp, where
 * the words still to be popped are (a store elsewhere -- an out
 * parameter, a global -- is no concern of the step). */
static uint32_t rm_dest(const uint8_t *m, bool byte, uint8_t rex, bool *stack)
{
	if (m[0] >> 6 != 3) {
		if ((m[0] & 7) == 4 && ((m[1] & 7) | (rex & 1) << 3) == RSP)
			*stack = true;
		return 0;
	}
	return written((m[0] & 7) | (rex & 1) << 3, byte, rex);
}

static uint32_t reg_dest(uint8_t modrm, bool byte, uint8_t rex)
{
	return written((modrm >> 3 & 7) | (rex & 4) << 1, byte, rex);
}

/* Decode the instruction at `p` (`n` bytes there, at address `addr`). */
static struct insn decode(const uint8_t *p, size_t n, uint64_t addr)
{
	struct insn in = { .kind = INSN_UNKNOWN };
	size_t i = 0, ms;
	uint8_t rex = 0, op;
	bool opsize = false, rep = false, stack = false, two = false, byte;

	for (; i < n && i < 8; i++) {
		if (p[i] == 0x66)
			opsize = true;
		else if (p[i] == 0xf3)
			rep = true;
		else if (p[i] != 0x2e && p[i] != 0x3e)
			break;
	}
	if (i < n && (p[i] & 0xf0) == 0x40)
		rex = p[i++];
	if (i >= n)
		return in;
	op = p[i++];
	if (op == 0x0f) {
		if (i >= n)
			return in;
		two = true;
		op = p[i++];
	}
	in.kind = INSN_PLAIN;
	if (!two) {
		switch (op) {
		case 0x58: case 0x59: case 0x5a: case 0x5b:
		case 0x5c: case 0x5d: case 0x5e: case 0x5f:
			in.kind = INSN_POP;
			in.reg = (uint8_t)((op & 7) | (rex & 1) << 3);
			if (in.reg == RSP || opsize)
				in.kind = INSN_UNKNOWN;
			in.size = i;
			return in;
		case 0xc3:               /* (66 c3, 66 c9: 16-bit, no) */
			in.kind = opsize ? INSN_UNKNOWN : INSN_RET;
			in.size = i;
			return in;
		case 0xc9:
			in.kind = opsize ? INSN_UNKNOWN : INSN_LEAVE;
			in.size = i;
			return in;
		case 0x90:
			in.size = i;
			return in;
		case 0x98: case 0x99:    /* cltq, cqto: rax, rdx */
			in.size = i;
			in.writes = 1u << 0 | 1u << 2;
			return in;
		case 0xeb:
			if (i + 1 > n)
				break;
			in.kind = INSN_JMP;
			in.size = i + 1;
			in.target = addr + in.size + (uint64_t)(int64_t)(int8_t)p[i];
			return in;
		case 0xe9: {
			int32_t rel;

			if (i + 4 > n)
				break;
			memcpy(&rel, p + i, 4);
			in.kind = INSN_JMP;
			in.size = i + 4;
			in.target = addr + in.size + (uint64_t)(int64_t)rel;
			return in;
		}
		case 0xb8: case 0xb9: case 0xba: case 0xbb:
		case 0xbc: case 0xbd: case 0xbe: case 0xbf: {
			size_t imm = rex & 8 ? 8 : opsize ? 2 : 4;

			if (i + imm > n)
				break;
			in.size = i + imm;
			in.writes = 1u << ((op & 7) | (rex & 1) << 3);
			return in;
		}
		case 0xc5:               /* vzeroupper */
			if (i + 2 > n || p[i] != 0xf8 || p[i + 1] != 0x77)
				break;
			in.size = i + 2;
			return in;
		case 0xff:               /* jmp *r/m: a tail call */
			if (i >= n || (p[i] >> 3 & 7) != 4 || !(ms = modrm_size(p + i, n - i)))
				break;
			in.kind = INSN_JMP_OUT;
			in.size = i + ms;
			return in;
		default:
			break;
		}
		/* ModRM forms: the ALU's register/memory pairs (cmp writes
		 * nothing), test, mov, lea, movsxd. */
		if ((op < 0x40 && (op & 7) < 4) || op == 0x84 || op == 0x85 || op == 0x63 ||
		    (op >= 0x88 && op <= 0x8b) || op == 0x8d) {
			if (i >= n || !(ms = modrm_size(p + i, n - i)))
				return (struct insn){ .kind = INSN_UNKNOWN };
			in.size = i + ms;
			if (op == 0x84 || op == 0x85 || (op >= 0x38 && op < 0x3c))
				return in;
			/* lea disp(%rbp),%rsp: a frame kept by rbp, let go. */
			if (op == 0x8d && (rex & 0xd) == 8 && (p[i] & 0x38) == RSP << 3 &&
			    (p[i] & 7) == RBP && (p[i] >> 6 == 1 || p[i] >> 6 == 2)) {
				int32_t d32 = 0;

				if (p[i] >> 6 == 1)
					d32 = (int8_t)p[i + 1];
				else
					memcpy(&d32, p + i + 1, 4);
				in.kind = INSN_RSP_FROM_BP;
				in.imm = d32;
				return in;
			}
			byte = op < 0x40 || op == 0x88 || op == 0x8a ? !(op & 1) : false;
			if (op == 0x63 || op == 0x8d || (op & 2))
				in.writes = reg_dest(p[i], byte, rex);
			else
				in.writes = rm_dest(p + i, byte, rex, &stack);
			return stack ? (struct insn){ .kind = INSN_UNKNOWN } : in;
		}
		/* Immediate forms: 83 /op ib, 81 /op iz; add or sub to rsp
		 * is the frame's deallocation. */
		if (op == 0x83 || op == 0x81) {
			size_t imm = op == 0x83 ? 1 : (rex & 8) || !opsize ? 4 : 2;
			uint8_t sub;

			if (i >= n || !(ms = modrm_size(p + i, n - i)) || i + ms + imm > n)
				return (struct insn){ .kind = INSN_UNKNOWN };
			in.size = i + ms + imm;
			sub = p[i] >> 3 & 7;
			if (sub == 7)
				return in;
			in.writes = rm_dest(p + i, false, rex, &stack);
			if (stack)
				return (struct insn){ .kind = INSN_UNKNOWN };
			if (in.writes == 1u << RSP && (rex & 8) && (sub == 0 || sub == 5)) {
				int64_t v;

				if (op == 0x83) {
					v = (int8_t)p[i + ms];
				} else {
					int32_t v32;

					memcpy(&v32, p + i + ms, 4);
					v = v32;
				}
				in.kind = INSN_RSP_ADD;
				in.imm = sub == 0 ? v : -v;
				in.writes = 0;
			}
			return in;
		}
		return (struct insn){ .kind = INSN_UNKNOWN };
	}
	/* Two-byte opcodes: endbr64, nopw/nopl, movzx/movsx, cmovcc, setcc,
	 * imul.  SSE moves of a float return value are not decoded (yet). */
	if (op == 0x1e && rep && i < n && p[i] == 0xfa) {        /* endbr64 */
		in.size = i + 1;
		return in;
	}
	if (op == 0x1f || op == 0xb6 || op == 0xb7 || op == 0xbe || op == 0xbf ||
	    (op >= 0x40 && op <= 0x4f) || (op >= 0x90 && op <= 0x9f) || op == 0xaf) {
		if (i >= n || !(ms = modrm_size(p + i, n - i)))
			return (struct insn){ .kind = INSN_UNKNOWN };
		in.size = i + ms;
		if (op == 0x1f)
			return in;
		if (op >= 0x90 && op <= 0x9f)
			in.writes = rm_dest(p + i, true, rex, &stack);
		else
			in.writes = reg_dest(p[i], false, rex);
		return stack ? (struct insn){ .kind = INSN_UNKNOWN } : in;
	}
	return (struct insn){ .kind = INSN_UNKNOWN };
}

/* The compiled CFI row at `addr`, when there is a usable one. */
static bool row_at(struct uw_ctx *c, uint64_t addr, struct uw_rule *r)
{
	const struct pr_map *m = pr__proc_find(c->proc, addr);
	struct uw_elf *e;
	uint64_t bias;

	if (!m || !uw_has_image(m) || !(e = uw_resolve(c->u, c->pid, m)))
		return false;
	bias = pr__elf_bias(e->img, m);
	return addr >= e->img->text_lo + bias && addr < e->img->text_hi + bias &&
	       uw_rule_find(c->u, e, addr - bias, r) && r->usable;
}

/* Whether the CFI at `target` has the frame as at a function's entry:
 * the return address at the stack pointer.  (Where rbp is saved it does
 * not say: past the pops, GCC's rows still have it below the stack
 * pointer.)  A jump there is a tail call, or as good as one; and an
 * indirect jump from there leaves the function. */
static bool exits_at(struct uw_ctx *c, uint64_t target)
{
	struct uw_rule r;

	return row_at(c, target, &r) && !r.cfa_rbp && r.cfa_off == 8 &&
	       r.ra == UW_LOC_AT_CFA && r.ra_off == -8;
}

/* The step out of the frame: its return address at `sp`, where the way
 * out leaves; the registers popped on the way in their slots. */
static bool way_out(const struct uw_ctx *c, uint64_t sp, uint32_t popped, const uint64_t *slot,
		    struct uw_row *out)
{
	uint64_t cfa = sp + 8;

	/* The return address and every slot in the copy, which starts at
	 * the sampled rsp: no frame is larger than the largest copy; a slot
	 * is below the return address. */
	if (sp < c->sp || cfa - c->sp > PR_MAX_STACK_SIZE + 8)
		return false;
	for (unsigned r = 0; r < 16; r++)
		if ((popped >> r & 1) && (slot[r] < c->sp || slot[r] >= sp))
			return false;
	memset(out, 0, sizeof(*out));
	out->cfa_reg = dwarf_reg[RSP];
	out->cfa_off = (int32_t)(cfa - c->sp);
	out->ra_off = -8;
	for (unsigned r = 0; r < 16; r++) {
		if (!(popped >> r & 1))
			continue;
		out->at[out->nr].reg = dwarf_reg[r];
		out->at[out->nr].off = (int32_t)(slot[r] - cfa);
		out->nr++;
	}
	return true;
}

/* Whether step `out` has the CFA the sampled frame's own row gives, where
 * that row counts it from rsp (the CFA is what GCC's rows keep right in
 * an epilogue; from rbp, before a leave, the row is not checked). */
static bool agrees(const struct uw_rule *leaf, const struct uw_row *out)
{
	return !leaf->usable || leaf->cfa_rbp || leaf->cfa_off == out->cfa_off;
}

bool uw_leaf_exit(struct uw_ctx *c, uint64_t ip, struct uw_row *out)
{
	uint64_t sp = c->sp, bp = c->regs[PR_REG_BP];
	uint64_t slot[16];
	uint32_t popped = 0;
	struct uw_rule leaf;
	bool left_bp = false;

	if (!(c->reg_mask >> PR_REG_BP & 1))
		return false;
	if (!row_at(c, ip, &leaf))
		leaf.usable = 0;
	for (int step = 0; step < MAX_STEPS; step++) {
		uint8_t buf[16];
		size_t n = code_at(c, ip, buf);
		struct insn in = decode(buf, n, ip);

		switch (in.kind) {
		case INSN_UNKNOWN:
			return false;
		case INSN_PLAIN:
			/* A kept register written past its pop would be
			 * the frame's own again: not an epilogue. */
			if (in.writes & KEPT)
				return false;
			break;
		case INSN_POP:
			if (sp < c->sp)
				return false;
			slot[in.reg] = sp;
			popped |= 1u << in.reg;
			sp += 8;
			break;
		case INSN_RSP_ADD:
			/* (A sub would put the words popped next above the
			 * CFA: no epilogue's.) */
			if (in.imm % 8 || in.imm < 0)
				return false;
			sp += (uint64_t)in.imm;
			break;
		case INSN_RSP_FROM_BP:
			if (popped >> RBP & 1)
				return false;
			sp = bp + (uint64_t)in.imm;
			break;
		case INSN_LEAVE:
			/* mov %rbp,%rsp; pop %rbp -- once. */
			if (left_bp || (popped >> RBP & 1) || bp < c->sp)
				return false;
			left_bp = true;
			sp = bp;
			slot[RBP] = sp;
			popped |= 1u << RBP;
			sp += 8;
			break;
		case INSN_JMP:
			if (!exits_at(c, in.target)) {
				ip = in.target;
				continue;
			}
			/* a tail call */
			return way_out(c, sp, popped, slot, out) && agrees(&leaf, out);
		case INSN_JMP_OUT:
			return exits_at(c, ip) && way_out(c, sp, popped, slot, out) && agrees(&leaf, out);
		case INSN_RET:
			/* A ret the CFI does not take for a return (a
			 * retpoline's, push; ret) is not one. */
			return exits_at(c, ip) && way_out(c, sp, popped, slot, out) && agrees(&leaf, out);
		}
		ip += in.size;
	}
	return false;
}
