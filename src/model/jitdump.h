/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jitdump files (/tmp/jit-PID.dump and the like), read directly: the code
 * a JIT compiled, its names, source lines and unwind information, as Node
 * (--perf-prof), the JVM's jvmti agents, .NET and CPython 3.13 (-X
 * perf_jit) write them.  perf needs `perf inject --jit` to turn them into
 * ELF files first; this reads the records themselves.
 *
 * A jitdump grows while its process runs: a reader reads what is there
 * up to the last whole record and can be fed the rest later
 * (pr__jitdump_read_fd() again, or pr__jitdump_feed()).  Everything it
 * hands out is an offset or a pointer into its own copy of the bytes,
 * valid until the next read or pr__jitdump_free().
 */
#ifndef PR_JITDUMP_H
#define PR_JITDUMP_H

#include "base/base.h"

/* The largest jitdump read: it holds every compiled function's code, so
 * a long-running JVM's may reach hundreds of megabytes. */
#define PR_JITDUMP_MAX ((size_t)512 << 20)

/* A source line of compiled code (a JIT_CODE_DEBUG_INFO entry). */
struct jd_line {
	uint64_t addr;               /* in the code as it was loaded */
	uint32_t file;               /* offset of its file name in the buffer,
				      * or JD_NO_FILE (a name that is no text) */
	uint32_t line;
};

#define JD_NO_FILE UINT32_MAX

/* Compiled code: a JIT_CODE_LOAD, or where a JIT_CODE_MOVE put it. */
struct jd_code {
	uint64_t addr, size;         /* where it is now */
	uint64_t load_addr;          /* where it was loaded (its lines say that) */
	/* Added to an address to find its line: V8 writes each line's
	 * address 0x40 past the code's, where `perf inject` put the code
	 * in the ELF files it made (after their 64-byte header), so its
	 * code's lines are looked up that far on; 0 for other runtimes. */
	uint64_t line_bias;
	uint64_t index;              /* the runtime's code_index */
	uint64_t time;               /* the record's timestamp (the runtime's clock) */
	size_t name;                 /* offset of the NUL-terminated name */
	size_t code;                 /* offset of its bytes (size of them) */
	size_t lines, nr_lines;      /* into jitdump.lines, sorted by address */
	/* Its JIT_CODE_UNWINDING_INFO: .eh_frame then .eh_frame_hdr (as
	 * runtimes write it: the hdr is the last eh_hdr_size bytes), or
	 * unwind_size 0. */
	size_t unwind;
	uint64_t unwind_size, eh_hdr_size, mapped_size;
	bool moved;                  /* a later move took it elsewhere */
};

/* What a read ended at. */
enum jd_state {
	JD_EMPTY = 0,                /* nothing read yet (or no whole header) */
	JD_READING,                  /* whole records to the end: more may come */
	JD_CLOSED,                   /* a JIT_CODE_CLOSE record */
	JD_CORRUPT,                  /* a record that cannot be: read up to it */
	JD_REFUSED,                  /* not a jitdump, or a version not known */
};

/* An address range and the code that covers it last (a later load or
 * move over the same addresses wins). */
struct jd_range {
	uint64_t start, end;
	size_t code;
};

struct pr_jitdump {
	unsigned char *buf;          /* the file's bytes read so far */
	size_t len, cap;
	size_t parsed;               /* bytes of whole records read */
	bool swap;                   /* written in the other byte order */
	uint32_t version, elf_mach, pid;
	uint64_t time, flags;
	enum jd_state state;
	uint64_t records, unknown;   /* records read; of them, of unknown kind */
	struct jd_code *codes;
	size_t nr_codes, cap_codes;
	struct jd_line *lines;
	size_t nr_lines, cap_lines;
	/* The last JIT_CODE_DEBUG_INFO and JIT_CODE_UNWINDING_INFO, for the
	 * next load. */
	size_t pending_lines, nr_pending_lines;
	bool has_pending_unwind;
	size_t pending_unwind;
	uint64_t pending_unwind_size, pending_eh_hdr_size, pending_mapped_size;
	struct pr_hashmap by_index;  /* code_index -> the latest code with it, + 1 */
	struct jd_range *ranges;     /* sorted, disjoint */
	size_t nr_ranges;
	bool ranges_stale;
	/* The file read (pr__jitdump_read_fd()): a different one starts over. */
	uint64_t dev, ino;
};

/*
 * Append `len` bytes of a jitdump (what follows those fed before) and read
 * the whole records among them.  A record cut by the end waits for more; a
 * record that cannot be (a length past what it holds, a name without its
 * end) ends the reading there, keeping what was read before it, and says
 * so at debug level.  0, or -ENOMEM, or -EFBIG past PR_JITDUMP_MAX.
 */
int pr__jitdump_feed(struct pr_jitdump *jd, const void *buf, size_t len,
		     const char *what, const struct pr_logger *lg);
/*
 * Read regular file `fd` (a jitdump, from its start or, when it is the
 * file read last, from where that stopped) as pr__jitdump_feed() does.
 * `fd` stays open and its offset is not used.  0, or -EINVAL (not a
 * regular file), -EFBIG, -ENOMEM, -errno of a read; said at debug level
 * with `what` (a path).
 */
int pr__jitdump_read_fd(struct pr_jitdump *jd, int fd, const char *what,
			const struct pr_logger *lg);
/* Forget everything read (the structure can be reused); accepts NULL. */
void pr__jitdump_clear(struct pr_jitdump *jd);

/* The code covering `addr` (the last loaded or moved there), or NULL. */
const struct jd_code *pr__jitdump_find(struct pr_jitdump *jd, uint64_t addr);
static inline const char *pr__jitdump_str(const struct pr_jitdump *jd, size_t off)
{
	return (const char *)jd->buf + off;
}
/* The source line of `addr` in `c`: its file (NULL without) and line. */
const char *pr__jitdump_line(const struct pr_jitdump *jd, const struct jd_code *c,
			     uint64_t addr, uint32_t *line);

/* jitfind.c */

struct pr_proc;
struct pr_dso;
/* The jitdump process `p` (of `pid`) mapped: a file jit-N.dump, N its pid
 * first, else any (its pid in a container's namespace); NULL when none. */
const struct pr_dso *pr__jitdump_marker(const struct pr_proc *p, uint32_t pid);
/*
 * Process `pid`'s jitdump `path` (device maj:min, inode `ino` as mapped),
 * opened: for a `live` process inside its root (pr__open_target_file()),
 * owned by its user or root (as its perf map, pr__perf_map_open()); once
 * the process is gone, the host's file at that path only if it is the
 * very file it mapped.  The fd, or a negative errno (said at debug level).
 */
int pr__jitdump_open(uint32_t pid, bool live, const char *path, uint32_t maj, uint32_t min,
		     uint64_t ino, const struct pr_logger *lg);

#endif /* PR_JITDUMP_H */
