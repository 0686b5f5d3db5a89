/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared by the files of unwind/: ELF images (elf.c), the unwind tables
 * built for files without .eh_frame_hdr (cfi.c), libunwind's accessors
 * (accessors.c) and the unwinder itself (unwinder.c).
 */
#ifndef PR_UNWIND_INT_H
#define PR_UNWIND_INT_H

#include <libunwind.h>

#include "model/model.h"
#include "prunwind.h"
#include "model/zsection.h"

#define UW_MAX_SEGMENTS 16
/* Functions of Go's runtime a stack ends at (see read_go_tops()). */
#define UW_MAX_TOPS 16

struct uw_segment {
	uint64_t vaddr, offset, filesz, memsz;
	uint32_t flags;              /* PF_X, PF_W, PF_R */
};

/* How a file's .eh_frame is searched. */
enum uw_table_kind {
	UW_TABLE_NONE,
	UW_TABLE_EH_HDR,             /* .eh_frame_hdr's binary-search table */
	UW_TABLE_EH_FRAME,           /* .eh_frame without the table: we index it */
};

/* One FDE of a table we built: where its code starts (link-time address,
 * relative to text_lo) and where the FDE is in its section. */
struct uw_fde {
	int32_t start;
	int32_t fde;
};

/* A table we built, sorted by start; for .debug_frame also the section
 * converted to .eh_frame's conventions (CIE ids 0, CIE pointers
 * relative), its FDEs' link-time addresses moved per load bias later. */
struct uw_cfi_table {
	struct uw_fde *index;
	size_t nr;
	unsigned char *frames;       /* NULL for .eh_frame: read in place */
	size_t frames_size;
};

/* Where the fast path finds rbp or the return address of the caller. */
enum uw_loc {
	UW_LOC_SAME,                 /* unchanged */
	UW_LOC_UNDEF,                /* undefined: the outermost frame */
	UW_LOC_AT_CFA,               /* saved at CFA + offset */
};

/*
 * One row of a CFA program compiled for x86-64, for link-time addresses
 * [lo, hi): the CFA is rsp or rbp plus an offset, rbp and the return
 * address are unchanged, undefined or saved at CFA + offset.  Rows
 * anything else describes (expressions, other registers, signal frames)
 * are not `usable`: libunwind unwinds those.
 */
struct uw_rule {
	uint64_t lo, hi;
	int32_t cfa_off, rbp_off, ra_off;
	uint8_t usable;
	uint8_t cfa_rbp;             /* CFA from rbp, else from rsp */
	uint8_t rbp, ra;             /* enum uw_loc */
};

/* A mapped ELF file, opened once and shared by every process mapping it. */
struct uw_elf {
	char *path;                  /* what was opened, for messages */
	char *origin;                /* the path the process mapped it from */
	const unsigned char *data;   /* the whole file, mapped read-only */
	size_t size;
	bool owns_mapping;           /* munmap on free (else malloc'd copy) */
	uint16_t type;               /* ET_EXEC, ET_DYN */
	struct uw_segment seg[UW_MAX_SEGMENTS];
	size_t nr_seg;
	uint64_t text_lo, text_hi;   /* link-time range of executable code */
	/* Link-time ranges of the functions stacks end at, beyond what the
	 * CFI says: Go's runtime only, for now. */
	struct uw_range {
		uint64_t lo, hi;
	} tops[UW_MAX_TOPS];
	size_t nr_tops;
	uint8_t build_id[PR_BUILD_ID_MAX];
	size_t build_id_size;
	char *debuglink;             /* .gnu_debuglink's name, or NULL */
	struct uw_section {
		uint64_t offset, size, vaddr;   /* size 0: absent */
		enum pr_zsection z;             /* compressed: as stored */
	} eh_frame, debug_frame;

	enum uw_table_kind table;
	/* UW_TABLE_EH_HDR: link-time addresses of the header and its table */
	uint64_t eh_hdr_vaddr, eh_table_vaddr, fde_count;
	/* UW_TABLE_EH_FRAME: our index of .eh_frame */
	struct uw_cfi_table eh;
	/* Code .eh_frame does not cover may have .debug_frame, here or in
	 * a separate debug file: loaded on the first miss. */
	bool dbg_tried;
	struct uw_cfi_table dbg;
	/* Rows compiled so far, sorted by lo, not overlapping. */
	struct uw_rule *rules;
	size_t nr_rules, cap_rules;
};

/* ---- elf.c ---- */

/* Map and parse the ELF file open at `fd` (which is closed); NULL when it
 * is not a usable ELF file (the reason goes to the log at debug level). */
struct uw_elf *uw_elf_open(int fd, const char *path, const struct pr_logger *lg);
/* An ELF image already in memory (the vDSO), copied. */
struct uw_elf *uw_elf_from_memory(const void *image, size_t size, const char *name,
				  const struct pr_logger *lg);
void uw_elf_free(struct uw_elf *e);

/* The load bias of `e` in a process where mapping `m` maps part of it:
 * runtime address = link-time address + bias. */
uint64_t uw_elf_bias(const struct uw_elf *e, const struct pr_map *m);

/* Read 8 bytes at link-time address `vaddr` from the file's loaded
 * contents: read-only segments, or also writable ones (their bytes as in
 * the file, before any relocation).  0, or -1 when not file-backed. */
int uw_elf_read(const struct uw_elf *e, uint64_t vaddr, bool writable, uint64_t *val);

/* Whether link-time address `vaddr` of `e` is in a function no stack
 * goes beyond (e->tops). */
bool uw_elf_is_top(const struct uw_elf *e, uint64_t vaddr);

/* The contents of section `s` of `e`, inflated when it is compressed,
 * in *out (malloc'd: the caller frees it) and *size.  0 or -errno (why,
 * also in the log at debug level). */
int uw_elf_section(const struct uw_elf *e, const struct uw_section *s, unsigned char **out,
		   size_t *size, const struct pr_logger *lg);

/* The file bytes of the loaded segment holding link-time address
 * `vaddr`: their start (at link-time *seg_vaddr) and *size; or NULL. */
const unsigned char *uw_elf_segment(const struct uw_elf *e, uint64_t vaddr, size_t *size,
				    uint64_t *seg_vaddr);


/* ---- cfi.c ---- */

/* Index .eh_frame (no .eh_frame_hdr), setting e->table and e->eh; or
 * convert the .debug_frame of `src` (`e` itself, or its separate debug
 * file) into e->dbg.  0 or -errno. */
int uw_cfi_index_eh_frame(struct uw_elf *e, const struct pr_logger *lg);
int uw_cfi_load_debug_frame(struct uw_elf *e, const struct uw_elf *src,
			    const struct pr_logger *lg);
void uw_cfi_table_free(struct uw_cfi_table *t);

/* The row for link-time address `addr` of the FDE at offset `fde` of
 * `buf` (frames in .eh_frame's conventions, the first byte at link-time
 * `vaddr`).  1 when the FDE covers `addr` (*r filled in, perhaps not
 * usable); 0 when it does not (r->lo and r->hi are the FDE's range);
 * -1 when it cannot be read. */
int uw_cfi_row(const unsigned char *buf, size_t size, uint64_t vaddr, size_t fde,
	       uint64_t addr, struct uw_rule *r);

/* The bytes libunwind reads for a table we built: the index entries (as
 * .eh_frame_hdr's table lays them out), then any converted frames with
 * their FDE addresses moved by `bias`.  Allocated; the caller frees.
 * *frames_at is where the FDEs start in the image. */
unsigned char *uw_cfi_image(const struct uw_cfi_table *t, uint64_t bias,
			    size_t *size, size_t *frames_at);

/* ---- rules.c ---- */

/* The compiled row for link-time address `addr` of `e`, found through
 * the same tables libunwind searches; not usable where there is no
 * unwind information.  false only when out of memory. */
bool uw_rule_find(struct pr_unwinder *u, struct uw_elf *e, uint64_t addr,
		  struct uw_rule *out);

/* ---- accessors.c ---- */

/* What one unwind needs from the accessors (the `arg` libunwind passes). */
struct uw_ctx {
	struct pr_unwinder *u;
	const struct pr_proc *proc;
	uint32_t pid;
	const uint64_t *regs;        /* by perf register number */
	uint64_t reg_mask;
	uint64_t sp;
	const uint8_t *stack;
	uint64_t stack_size;         /* valid bytes from sp */
	/* What went wrong in the current step. */
	bool stack_exhausted;        /* a read just past the copied stack */
	bool no_info;                /* find_proc_info found no unwind info */
	bool no_info_unmapped;       /* ... the address is in no file mapping */
	bool not_code;               /* ... nor in any executable mapping */
	bool file_missing;           /* ... its mapped file was not found */
	bool reading_cfi;            /* libunwind is in a CIE or FDE */
	/* The file whose unwind information this step reads, and its load
	 * bias: set by find_proc_info. */
	const struct uw_elf *cfi_elf;
	uint64_t cfi_bias;
	/* Last file region read: most reads hit the same one. */
	uint64_t hit_lo, hit_hi;
	const unsigned char *hit_data;
};

extern unw_accessors_t uw_accessors;

/* Memory as libunwind's access_mem sees it: the copied stack, the tables
 * we built, the mapped files' read-only bytes.  0, or -1 (setting
 * c->stack_exhausted for a read just past the copied stack). */
int uw_read_mem(struct uw_ctx *c, uint64_t addr, uint64_t *val);
/* Only the mapped files' read-only bytes; the region last hit first. */
int uw_read_file(struct uw_ctx *c, uint64_t addr, uint64_t *val);
/* Mappings whose bytes we can have: files, and the vDSO. */
bool uw_has_image(const struct pr_map *m);

/* ---- unwinder.c ---- */

/* Mappings perf shows addresses in as they are, not as file offsets:
 * anonymous memory and the like (its is_anon_memory() and
 * is_no_dso_memory() names). */
bool uw_shown_as_address(const char *path);

/* ---- unwinder.c (for the accessors) ---- */

/* The ELF file mapping `m` of process `pid`, or NULL when it cannot be
 * found; looked up once per mapped file. */
struct uw_elf *uw_resolve(struct pr_unwinder *u, uint32_t pid, const struct pr_map *m);

/* e->dbg, loaded the first time it is asked for; NULL when the file has
 * no .debug_frame, here or in a debug file. */
const struct uw_cfi_table *uw_debug_frame(struct pr_unwinder *u, struct uw_elf *e);

/* Where libunwind reads a built table `t` at load bias `bias`: its address
 * in the unwinder's synthetic range; NULL when out of memory. */
const unsigned char *uw_synthetic(struct pr_unwinder *u, const struct uw_cfi_table *t,
				  uint64_t bias, uint64_t *addr, size_t *frames_at);
/* Read from the synthetic range: 0, or -1 when `addr` is not in it. */
int uw_synthetic_read(struct pr_unwinder *u, uint64_t addr, uint64_t *val);

/* Addresses no process can have (non-canonical on x86-64) hold the
 * tables built for files without .eh_frame_hdr. */
#define UW_SYNTHETIC_BASE UINT64_C(0x4000000000000000)
#define UW_SYNTHETIC_SHIFT 32

#endif
