/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The perf.data on-disk layout (tools/perf/Documentation/
 * perf.data-file-format.txt), shared by the writer and the reader:
 *
 *   file header | attrs (attr + ids section each) | id arrays | data |
 *   feature section table | feature payloads
 *
 * Everything is little-endian x86-64 here; other files are refused.
 */
#ifndef PR_PERFDATA_H
#define PR_PERFDATA_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>

/* "PERFILE2" read as a little-endian u64. */
#define PERFDATA_MAGIC UINT64_C(0x32454c4946524550)
/* The same bytes written by a big-endian machine. */
#define PERFDATA_MAGIC_SWAPPED UINT64_C(0x50455246494c4532)

struct perfdata_section {
	uint64_t offset;
	uint64_t size;
};

struct perfdata_header {
	uint64_t magic;
	uint64_t size;            /* sizeof(struct perfdata_header) */
	uint64_t attr_size;       /* one attrs entry: attr + ids section */
	struct perfdata_section attrs;
	struct perfdata_section data;
	struct perfdata_section event_types;   /* unused */
	uint64_t features[4];     /* HEADER_FEAT_BITS = 256 */
};

/* The attr size written to files: PERF_ATTR_SIZE_VER7, which every perf
 * since 6.3 and before reads; this library sets no field past it.  Built
 * against newer kernel headers, sizeof(struct perf_event_attr) would make
 * older perf refuse the file. */
#define PERFDATA_ATTR_SIZE 128u

/* Pipe-mode files (perf record -o -) have only magic and size (16). */
#define PERFDATA_PIPE_HEADER_SIZE 16

/* Feature bits: perf's HEADER_* numbers. */
enum perfdata_feature {
	FEAT_TRACING_DATA = 1,
	FEAT_BUILD_ID = 2,
	FEAT_HOSTNAME = 3,
	FEAT_OSRELEASE = 4,
	FEAT_VERSION = 5,
	FEAT_ARCH = 6,
	FEAT_NRCPUS = 7,
	FEAT_CPUDESC = 8,
	FEAT_CPUID = 9,
	FEAT_TOTAL_MEM = 10,
	FEAT_CMDLINE = 11,
	FEAT_EVENT_DESC = 12,
	FEAT_SAMPLE_TIME = 21,
	FEAT_CLOCKID = 23,
	FEAT_COMPRESSED = 27,
	FEAT_BITS = 256,
};

/* FEAT_COMPRESSED's method: the only one perf writes. */
#define PERFDATA_COMP_ZSTD 1

/* Strings in feature sections: u32 length (padded, NUL included), then
 * the bytes, padded with zeros to NAME_ALIGN. */
#define PERFDATA_NAME_ALIGN 64

/* Record types perf's tools add to the data section (>= 64). */
enum perfdata_user_record {
	PERFDATA_RECORD_USER_START = 64,
	PERFDATA_RECORD_HEADER_BUILD_ID = 67,
	PERFDATA_RECORD_FINISHED_ROUND = 68,
	PERFDATA_RECORD_AUXTRACE = 71,
	PERFDATA_RECORD_HEADER_FEATURE = 80,
	PERFDATA_RECORD_COMPRESSED = 81,
	PERFDATA_RECORD_COMPRESSED2 = 83,
};

/* A BUILD_ID feature entry: header, pid, 20 id bytes + size + 3 reserved,
 * then the file name padded to NAME_ALIGN. */
struct perfdata_build_id {
	uint32_t type;               /* perf_event_header */
	uint16_t misc;
	uint16_t size;
	int32_t pid;
	uint8_t data[20];
	uint8_t id_size;
	uint8_t reserved[3];
};
#define PERFDATA_BUILD_ID_FIXED 36
_Static_assert(sizeof(struct perfdata_build_id) == PERFDATA_BUILD_ID_FIXED,
	       "perf's build-id entry is 36 bytes before the name");
/* header.misc: the id_size byte is valid. */
#define PERFDATA_MISC_BUILD_ID_SIZE (1u << 15)

struct pr_logger;

/*
 * The TRACING_DATA feature for the tracepoints among `attrs` (their
 * formats from tracefs), allocated into *buf (*len bytes; the caller
 * frees it).  0 with *len 0 when there is no tracepoint; -ENODEV (tracefs
 * not mounted), -ENOENT (a tracepoint tracefs does not list) with a
 * warning saying what to do, or -ENOMEM.  perfdata_tracing.c.
 */
int pr__perfdata_tracing_data(const struct perf_event_attr *const *attrs, size_t nr,
			      char **buf, size_t *len, const struct pr_logger *lg);

/*
 * The tracepoint formats a TRACING_DATA feature of `len` bytes at `p`
 * holds, by "system:name" (prtrace.h), into *out (NULL when it holds
 * none).  0, -EBADMSG (it does not parse: nothing kept), -ENOMEM.
 * perfdata_tracing.c.
 */
struct pr_tp_formats;
int pr__perfdata_read_tracing(const unsigned char *p, size_t len, struct pr_tp_formats **out);

/* dwarfsample's own feature: the JIT files of a capture's processes
 * (perfdata_jit.c), far above perf's numbers (31 in perf 6.1), which
 * perf's tools skip. */
#define FEAT_DS_JIT_FILES 192

struct pr__roots;

/* FEAT_DS_JIT_FILES's payload from what `r` kept, into *out (*len bytes,
 * the caller frees it; NULL and 0 when no file could be read): 0 or
 * -ENOMEM.  perfdata_jit.c. */
int pr__perfdata_jit_payload(struct pr__roots *r, unsigned char **out, size_t *len,
			     const struct pr_logger *lg);
/* In such a payload `sec` (`len` bytes), file `kind` (enum pr__jit_file) of the process `pid`
 * was at record time `time`: 0 with *data, *size a view into `sec`, or
 * -ENOENT. */
int pr__perfdata_jit_find(const unsigned char *sec, size_t len, uint32_t pid, int kind, uint64_t time, const unsigned char **data,
			  size_t *size);

#endif
