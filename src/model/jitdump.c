/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jitdump files, read record by record (see jitdump.h).  The format: a
 * header (magic "JiTD" as a u32 in the writer's byte order, version 1, its
 * own size, the ELF machine, the pid, a timestamp and flags), then records
 * that each start with (kind, total size, timestamp): code loaded (its
 * address, size, index, name and bytes), moved, its source lines and its
 * unwind information (each for the next load), the end.
 *
 * Every length comes from a file a runtime, or anyone who could write to
 * its directory, wrote: each is checked against what the record holds
 * before anything is read under it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/jitdump.h"

#define JD_MAGIC 0x4A695444u
#define JD_HEADER_SIZE 40
#define JD_RECORD_HEADER 16

enum {
	JD_CODE_LOAD = 0,
	JD_CODE_MOVE = 1,
	JD_CODE_DEBUG_INFO = 2,
	JD_CODE_CLOSE = 3,
	JD_CODE_UNWINDING_INFO = 4,
};

/* A record's fixed fields past its header. */
#define LOAD_FIXED 40    /* pid, tid, vma, code_addr, code_size, code_index */
#define MOVE_FIXED 48    /* pid, tid, vma, old_code_addr, new_code_addr, code_size, code_index */
#define DEBUG_FIXED 16   /* code_addr, nr_entry */
#define ENTRY_FIXED 16   /* code_addr, line, discrim */
#define UNWIND_FIXED 24  /* unwinding_size, eh_frame_hdr_size, mapped_size */

static uint32_t get32(const struct pr_jitdump *jd, const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return jd->swap ? __builtin_bswap32(v) : v;
}

static uint64_t get64(const struct pr_jitdump *jd, const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return jd->swap ? __builtin_bswap64(v) : v;
}

/* The length of the NUL-terminated string at p, within `room` bytes; or
 * `room` when it has no end there. */
static size_t str_in(const unsigned char *p, size_t room)
{
	const unsigned char *end = memchr(p, 0, room);

	return end ? (size_t)(end - p) : room;
}

/* Whether `n` bytes are text a file name can be: UTF-8, no control
 * characters. */
static bool text(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t more = p[i] < 0x80 ? 0 : p[i] >= 0xc2 && p[i] < 0xe0 ? 1 :
			      p[i] >= 0xe0 && p[i] < 0xf0 ? 2 : p[i] >= 0xf0 && p[i] < 0xf5 ? 3 : 4;

		if (more == 4 || p[i] < 0x20 || p[i] == 0x7f || n - i <= more)
			return false;
		for (size_t k = 1; k <= more; k++)
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
		i += more + 1;
	}
	return true;
}

static int read_header(struct pr_jitdump *jd, const char *what, const struct pr_logger *lg)
{
	uint32_t magic, size;

	if (jd->len < JD_HEADER_SIZE)
		return 0;
	memcpy(&magic, jd->buf, sizeof(magic));
	if (magic != JD_MAGIC && __builtin_bswap32(magic) != JD_MAGIC) {
		jd->state = JD_REFUSED;
		pr__log(lg, PR_LOG_DEBUG, "%s: not a jitdump (magic 0x%08x); not read", what, magic);
		return 0;
	}
	jd->swap = magic != JD_MAGIC;
	jd->version = get32(jd, jd->buf + 4);
	size = get32(jd, jd->buf + 8);
	if (jd->version != 1) {
		jd->state = JD_REFUSED;
		pr__log(lg, PR_LOG_DEBUG, "%s: jitdump version %u, not 1 (the only one known); "
			"not read", what, jd->version);
		return 0;
	}
	if (size < JD_HEADER_SIZE || size > PR_JITDUMP_MAX) {
		jd->state = JD_REFUSED;
		pr__log(lg, PR_LOG_DEBUG, "%s: a jitdump header of %u bytes cannot be; not read",
			what, size);
		return 0;
	}
	if (jd->len < size)
		return 0;
	jd->elf_mach = get32(jd, jd->buf + 12);
	jd->pid = get32(jd, jd->buf + 20);
	jd->time = get64(jd, jd->buf + 24);
	jd->flags = get64(jd, jd->buf + 32);
	jd->parsed = size;
	jd->state = JD_READING;
	return 0;
}

static int by_addr(const void *a, const void *b)
{
	const struct jd_line *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

/* A JIT_CODE_DEBUG_INFO body: its entries, for the next load.  NULL, or
 * what is wrong with it. */
static const char *read_lines(struct pr_jitdump *jd, const unsigned char *p, size_t len)
{
	uint64_t nr;
	size_t at = DEBUG_FIXED, first = jd->nr_lines;
	uint32_t last_file = 0;

	if (len < DEBUG_FIXED)
		return "a debug-info record shorter than its fields";
	nr = get64(jd, p + 8);
	if (nr > (len - DEBUG_FIXED) / (ENTRY_FIXED + 1))
		return "a debug-info record with more entries than it holds";
	if (PR_ARRAY_RESERVE(jd->lines, jd->cap_lines, jd->nr_lines + nr))
		return "out of memory";
	for (uint64_t i = 0; i < nr; i++) {
		size_t room, n;
		struct jd_line *l = &jd->lines[jd->nr_lines];

		if (len - at < ENTRY_FIXED + 1)
			return "a debug entry past the end of its record";
		room = len - at - ENTRY_FIXED;
		n = str_in(p + at + ENTRY_FIXED, room);
		if (n == room)
			return "a debug entry's file name without its end";
		l->addr = get64(jd, p + at);
		l->line = get32(jd, p + at + 8);
		l->file = (uint32_t)(p + at + ENTRY_FIXED - jd->buf);
		/* "\xff" names the entry before's file again (perf's jvmti
		 * agent writes that).  A name that is no text is none: node
		 * 20 writes a freed copy of it (allocator words over its
		 * start), which is not said as a file. */
		if (n == 1 && p[at + ENTRY_FIXED] == 0xff && jd->nr_lines > first)
			l->file = last_file;
		else if (!text(p + at + ENTRY_FIXED, n))
			l->file = JD_NO_FILE;
		last_file = l->file;
		jd->nr_lines++;
		at += ENTRY_FIXED + n + 1;
	}
	if (nr)
		qsort(jd->lines + first, jd->nr_lines - first, sizeof(*jd->lines), by_addr);
	jd->pending_lines = first;
	jd->nr_pending_lines = jd->nr_lines - first;
	return NULL;
}

/* What V8 adds to its lines' addresses (its kElfHdrSize). */
#define V8_LINE_BIAS 0x40

/* Whether code is V8's by its name: V8 names a JS function's code
 * "JS:" and its tier and name (before V8 9, "LazyCompile:", "Function:",
 * "Script:" or "Eval:"); no other runtime writing jitdumps does. */
static bool v8_code(const char *name)
{
	static const char *const kinds[] = { "JS:", "LazyCompile:", "Function:", "Script:", "Eval:" };

	for (size_t i = 0; i < PR_ARRAY_SIZE(kinds); i++)
		if (!strncmp(name, kinds[i], strlen(kinds[i])))
			return true;
	return false;
}

static struct jd_code *new_code(struct pr_jitdump *jd)
{
	struct jd_code *c;

	if (PR_ARRAY_RESERVE(jd->codes, jd->cap_codes, jd->nr_codes + 1) ||
	    pr__hashmap_reserve(&jd->by_index, 1))
		return NULL;
	c = &jd->codes[jd->nr_codes];
	memset(c, 0, sizeof(*c));
	jd->ranges_stale = true;
	return c;
}

static const char *read_load(struct pr_jitdump *jd, const unsigned char *p, size_t len,
			     uint64_t time)
{
	size_t n, room;
	uint64_t addr, size;
	struct jd_code *c;

	if (len < LOAD_FIXED + 1)
		return "a code-load record shorter than its fields";
	room = len - LOAD_FIXED;
	n = str_in(p + LOAD_FIXED, room);
	if (n == room)
		return "a code-load record's name without its end";
	addr = get64(jd, p + 8);
	size = get64(jd, p + 24);
	if (size > room - n - 1)
		return "a code-load record with less code than its size";
	if (addr + size < addr)
		return "code past the end of the address space";
	c = new_code(jd);
	if (!c)
		return "out of memory";
	c->addr = c->load_addr = addr;
	c->size = size;
	c->index = get64(jd, p + 32);
	c->time = time;
	c->name = (size_t)(p + LOAD_FIXED - jd->buf);
	c->code = c->name + n + 1;
	c->lines = jd->pending_lines;
	c->nr_lines = jd->nr_pending_lines;
	c->line_bias = v8_code(pr__jitdump_str(jd, c->name)) ? V8_LINE_BIAS : 0;
	if (jd->has_pending_unwind) {
		c->unwind = jd->pending_unwind;
		c->unwind_size = jd->pending_unwind_size;
		c->eh_hdr_size = jd->pending_eh_hdr_size;
		c->mapped_size = jd->pending_mapped_size;
	}
	jd->nr_pending_lines = 0;
	jd->has_pending_unwind = false;
	/* Room reserved in new_code(). */
	pr__hashmap_put(&jd->by_index, c->index, (void *)(uintptr_t)(jd->nr_codes + 1));
	jd->nr_codes++;
	return NULL;
}

static const char *read_move(struct pr_jitdump *jd, const unsigned char *p, size_t len,
			     uint64_t time)
{
	uint64_t index, addr;
	uintptr_t at;
	struct jd_code *c;

	if (len < MOVE_FIXED)
		return "a code-move record shorter than its fields";
	index = get64(jd, p + 40);
	addr = get64(jd, p + 8);
	at = (uintptr_t)pr__hashmap_get(&jd->by_index, index);
	/* Moving code never loaded: nothing to name there. */
	if (!at)
		return NULL;
	if (addr + jd->codes[at - 1].size < addr)
		return "code moved past the end of the address space";
	c = new_code(jd);
	if (!c)
		return "out of memory";
	*c = jd->codes[at - 1];
	jd->codes[at - 1].moved = true;
	c->addr = addr;
	c->time = time;
	pr__hashmap_put(&jd->by_index, index, (void *)(uintptr_t)(jd->nr_codes + 1));
	jd->nr_codes++;
	return NULL;
}

static const char *read_unwind(struct pr_jitdump *jd, const unsigned char *p, size_t len)
{
	uint64_t size, hdr;

	if (len < UNWIND_FIXED)
		return "an unwinding-info record shorter than its fields";
	size = get64(jd, p);
	hdr = get64(jd, p + 8);
	if (size > len - UNWIND_FIXED || hdr > size)
		return "an unwinding-info record with less data than its sizes";
	jd->has_pending_unwind = true;
	jd->pending_unwind = (size_t)(p + UNWIND_FIXED - jd->buf);
	jd->pending_unwind_size = size;
	jd->pending_eh_hdr_size = hdr;
	jd->pending_mapped_size = get64(jd, p + 16);
	return NULL;
}

/* The whole records from jd->parsed on. */
static void read_records(struct pr_jitdump *jd, const char *what, const struct pr_logger *lg)
{
	while (jd->state == JD_READING && jd->len - jd->parsed >= JD_RECORD_HEADER) {
		const unsigned char *r = jd->buf + jd->parsed;
		uint32_t kind = get32(jd, r), size = get32(jd, r + 4);
		uint64_t time = get64(jd, r + 8);
		const unsigned char *body = r + JD_RECORD_HEADER;
		size_t len = size - JD_RECORD_HEADER;
		const char *bad = NULL;

		if (size < JD_RECORD_HEADER) {
			bad = "a record shorter than its header";
		} else if (size > jd->len - jd->parsed) {
			/* Still being written, or cut: wait for the rest. */
			break;
		} else if (kind == JD_CODE_LOAD) {
			bad = read_load(jd, body, len, time);
		} else if (kind == JD_CODE_MOVE) {
			bad = read_move(jd, body, len, time);
		} else if (kind == JD_CODE_DEBUG_INFO) {
			bad = read_lines(jd, body, len);
		} else if (kind == JD_CODE_UNWINDING_INFO) {
			bad = read_unwind(jd, body, len);
		} else if (kind == JD_CODE_CLOSE) {
			jd->state = JD_CLOSED;
		} else {
			jd->unknown++;
		}
		if (bad) {
			jd->state = JD_CORRUPT;
			pr__log(lg, PR_LOG_DEBUG, "%s: record %llu (kind %u, %u bytes) at byte %zu: "
				"%s; the jitdump is read up to it", what,
				(unsigned long long)jd->records, kind, size, jd->parsed, bad);
			break;
		}
		jd->records++;
		jd->parsed += size;
	}
}

int pr__jitdump_feed(struct pr_jitdump *jd, const void *buf, size_t len, const char *what,
		     const struct pr_logger *lg)
{
	if (len > PR_JITDUMP_MAX - jd->len) {
		pr__log(lg, PR_LOG_DEBUG, "%s: larger than %zu MiB; read up to there", what,
			PR_JITDUMP_MAX >> 20);
		return -EFBIG;
	}
	if (len && PR_ARRAY_RESERVE(jd->buf, jd->cap, jd->len + len))
		return -ENOMEM;
	if (len)
		memcpy(jd->buf + jd->len, buf, len);
	jd->len += len;
	if (jd->state == JD_EMPTY)
		read_header(jd, what, lg);
	read_records(jd, what, lg);
	return 0;
}

int pr__jitdump_read_fd(struct pr_jitdump *jd, int fd, const char *what,
			const struct pr_logger *lg)
{
	struct stat st;
	size_t want;
	int err = 0;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode)) {
		pr__log(lg, PR_LOG_DEBUG, "%s: not a regular file; not read", what);
		return -EINVAL;
	}
	/* Another file, or this one cut short: start over. */
	if (jd->dev != (uint64_t)st.st_dev || jd->ino != (uint64_t)st.st_ino ||
	    (uint64_t)st.st_size < jd->len)
		pr__jitdump_clear(jd);
	jd->dev = st.st_dev;
	jd->ino = st.st_ino;
	/* A runtime's stays far below: anything larger is not read at all
	 * (what was read of it stays). */
	if ((uint64_t)st.st_size > PR_JITDUMP_MAX) {
		pr__log(lg, PR_LOG_DEBUG, "%s: larger than %zu MiB; not read", what,
			PR_JITDUMP_MAX >> 20);
		return -EFBIG;
	}
	want = (size_t)st.st_size;
	if (want <= jd->len || jd->state > JD_READING)
		return 0;
	if (PR_ARRAY_RESERVE(jd->buf, jd->cap, want))
		return -ENOMEM;
	while (jd->len < want) {
		ssize_t n = pread(fd, jd->buf + jd->len, want - jd->len, (off_t)jd->len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			pr__log(lg, PR_LOG_DEBUG, "%s: %s", what, strerror(errno));
			break;
		}
		if (!n)
			break;
		jd->len += (size_t)n;
	}
	if (jd->state == JD_EMPTY)
		read_header(jd, what, lg);
	read_records(jd, what, lg);
	return err;
}

void pr__jitdump_clear(struct pr_jitdump *jd)
{
	if (!jd)
		return;
	free(jd->buf);
	free(jd->codes);
	free(jd->lines);
	free(jd->ranges);
	pr__hashmap_free(&jd->by_index);
	memset(jd, 0, sizeof(*jd));
}

/* One end of a code's range, for the sweep in build_ranges(). */
struct edge {
	uint64_t addr;
	size_t code;
	bool start;
};

static int by_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

/* A max-heap of code indexes: the latest code covering an address. */
static void heap_push(size_t *h, size_t *n, size_t v)
{
	size_t i = (*n)++;

	for (; i && h[(i - 1) / 2] < v; i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = v;
}

static void heap_pop(size_t *h, size_t *n)
{
	size_t v = h[--*n], i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

/*
 * Which code covers each address: a runtime reuses the room of code it
 * freed, and a later load (or move) there is what runs now.  A sweep over
 * the ranges' ends with the covering codes in a heap, the latest on top:
 * O(n log n) for n codes however they overlap.
 */
static int build_ranges(struct pr_jitdump *jd)
{
	struct edge *e = malloc(2 * jd->nr_codes * sizeof(*e) + 1);
	size_t *heap = malloc(jd->nr_codes * sizeof(*heap) + 1);
	bool *gone = calloc(jd->nr_codes + 1, sizeof(*gone));
	size_t nr = 0, nh = 0, cap = 0;
	int err = 0;

	free(jd->ranges);
	jd->ranges = NULL;
	jd->nr_ranges = 0;
	if (!e || !heap || !gone) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < jd->nr_codes; i++) {
		const struct jd_code *c = &jd->codes[i];

		if (c->moved || !c->size)
			continue;
		e[nr++] = (struct edge){ c->addr, i, true };
		e[nr++] = (struct edge){ c->addr + c->size, i, false };
	}
	qsort(e, nr, sizeof(*e), by_edge);
	for (size_t i = 0; i < nr;) {
		uint64_t at = e[i].addr;

		for (; i < nr && e[i].addr == at; i++) {
			if (e[i].start)
				heap_push(heap, &nh, e[i].code);
			else
				gone[e[i].code] = true;
		}
		while (nh && gone[heap[0]])
			heap_pop(heap, &nh);
		if (!nh || i == nr)
			continue;
		if (jd->nr_ranges && jd->ranges[jd->nr_ranges - 1].end == at &&
		    jd->ranges[jd->nr_ranges - 1].code == heap[0]) {
			jd->ranges[jd->nr_ranges - 1].end = e[i].addr;
			continue;
		}
		if (PR_ARRAY_RESERVE(jd->ranges, cap, jd->nr_ranges + 1)) {
			err = -ENOMEM;
			goto out;
		}
		jd->ranges[jd->nr_ranges++] = (struct jd_range){ at, e[i].addr, heap[0] };
	}
	jd->ranges_stale = false;
out:
	free(e);
	free(heap);
	free(gone);
	return err;
}

const struct jd_code *pr__jitdump_find(struct pr_jitdump *jd, uint64_t addr)
{
	size_t i;

	if (jd->ranges_stale && build_ranges(jd))
		return NULL;
	i = pr__upper_bound(jd->ranges, jd->nr_ranges, sizeof(*jd->ranges), addr);
	if (!i || addr >= jd->ranges[i - 1].end)
		return NULL;
	return &jd->codes[jd->ranges[i - 1].code];
}

const char *pr__jitdump_line(const struct pr_jitdump *jd, const struct jd_code *c,
			     uint64_t addr, uint32_t *line)
{
	const struct jd_line *v;
	size_t i;

	*line = 0;
	if (!c->nr_lines)
		return NULL;
	v = jd->lines + c->lines;
	i = pr__upper_bound(v, c->nr_lines, sizeof(*v),
			    addr - c->addr + c->load_addr + c->line_bias);
	if (!i)
		return NULL;
	if (v[i - 1].file == JD_NO_FILE)
		return NULL;
	*line = v[i - 1].line;
	return pr__jitdump_str(jd, v[i - 1].file);
}
