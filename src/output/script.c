/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The perf script layout (perf 6.1), measured against perf on the same
 * files (tests/test-agree.sh, tests/test-symbols.sh):
 *
 *   comm tid [cpu] secs.usecs: period event: \n      the header
 *   \t%16x sym+0xoff (dso)\n                         a frame
 *   \t%16x inlined_fn+0xoff (inlined)\n              a function inlined there
 *   \n                                               after every sample
 *
 * A frame's address is the offset in its file (for anonymous memory and
 * the kernel, the address); callers are at their return address minus
 * one.  Inlined functions come first, the function the address is in
 * last; a function whose name is not the symbol's is marked inlined, as
 * perf marks it, and the offset is always from the symbol's start.
 * Formatting is by hand: a report prints hundreds of thousands of lines.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "output/output.h"
#include "symbols/symbolizer.h"

static const struct {
	const char *name;
	uint32_t bit;
} field_names[] = {
	{ "comm", PR_SCRIPT_COMM }, { "pid", PR_SCRIPT_PID }, { "tid", PR_SCRIPT_TID },
	{ "cpu", PR_SCRIPT_CPU }, { "time", PR_SCRIPT_TIME }, { "period", PR_SCRIPT_PERIOD },
	{ "event", PR_SCRIPT_EVENT }, { "ip", PR_SCRIPT_IP }, { "sym", PR_SCRIPT_SYM },
	{ "symoff", PR_SCRIPT_SYMOFF }, { "dso", PR_SCRIPT_DSO },
	{ "srcline", PR_SCRIPT_SRCLINE },
};

#define ALL_FIELDS ((uint32_t)PR_SCRIPT_SRCLINE * 2 - 1)

int pr_script_fields_parse(const char *list, uint32_t *fields, const char **bad,
			   size_t *bad_len)
{
	uint32_t got = 0;

	if (!list || !fields)
		return -EINVAL;
	while (*list) {
		size_t len = strcspn(list, ",");
		size_t i;

		for (i = 0; i < PR_ARRAY_SIZE(field_names); i++)
			if (strlen(field_names[i].name) == len &&
			    !strncmp(field_names[i].name, list, len))
				break;
		if (i == PR_ARRAY_SIZE(field_names)) {
			if (bad)
				*bad = list;
			if (bad_len)
				*bad_len = len;
			return -EINVAL;
		}
		got |= field_names[i].bit;
		list += len + (list[len] == ',');
	}
	/* perf prints symoff only with sym. */
	if (!(got & PR_SCRIPT_SYM))
		got &= ~(uint32_t)PR_SCRIPT_SYMOFF;
	*fields = got;
	return 0;
}

struct pr_script *pr_script_new(FILE *out, const struct pr_script_opts *opts)
{
	struct pr_script *s;
	uint32_t fields = PR_OPTS_GET(opts, fields, (uint32_t)PR_SCRIPT_DEFAULT);

	if (!out || !PR_OPTS_VALID(opts) || (fields & ~ALL_FIELDS)) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->out = out;
	s->fields = fields;
	s->inline_frames = !PR_OPTS_GET(opts, no_inline, false);
	s->annotate = PR_OPTS_GET(opts, annotate, false);
	s->event_width = PR_OPTS_GET(opts, event_width, 0);
	s->freq = PR_OPTS_GET(opts, freq, 0);
	s->period_is_ns = PR_OPTS_GET(opts, period_is_ns, false);
	s->min_ns = PR_OPTS_GET(opts, off_cpu_min_ns, 0);
	s->tp = PR_OPTS_GET(opts, tp_formats, NULL);
	s->default_fields = fields == (uint32_t)PR_SCRIPT_DEFAULT;
	s->buf = s->bufs[0];
	if (pr__script_waits_init(s)) {
		pr_script_free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void pr_script_free(struct pr_script *s)
{
	if (!s)
		return;
	pr__script_waits_fini(s);
	free(s->memo[0].v);
	free(s->memo[1].v);
	free(s);
}

/* `v` in decimal, right-aligned in `width` columns (at least), ending at
 * `end`; returns where it starts. */
static char *decimal(char *end, uint64_t v, int width)
{
	char *p = end;

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
		width--;
	} while (v);
	while (width-- > 0)
		*--p = ' ';
	return p;
}

/* `v` in lowercase hex at `buf`; returns the length. */
static size_t hex(char *buf, uint64_t v)
{
	size_t len = v ? (size_t)(67 - __builtin_clzll(v)) / 4 : 1;

	for (size_t i = len; i--; v >>= 4)
		buf[i] = "0123456789abcdef"[v & 15];
	return len;
}

static void note_error(struct pr_script *s)
{
	if (!s->err && ferror(s->out))
		s->err = errno ? errno : EIO;
}

int pr_script_error(struct pr_script *s)
{
	if (!s)
		return -EINVAL;
	note_error(s);
	return ferror(s->out) ? -s->err : 0;
}

/* Append `str` of `len` bytes (at most 4096 of them) at s->buf. */
static void put(struct pr_script *s, const char *str, size_t len)
{
	if (len > 4096)
		len = 4096;
	/* Knowing the bound, GCC copies with `rep movsq`, slow to start
	 * for strings this short (43 % of line()'s time on AMD EPYC, the
	 * cc1 capture's addresses): the bound forgotten, it calls libc's. */
	__asm__("" : "+r"(len));
	memcpy(s->buf + s->len, str, len);
	s->len += len;
}

/* Write out what is built. */
static void flush(struct pr_script *s)
{
	if (s->len) {
		fwrite_unlocked(s->buf, 1, s->len, s->out);
		note_error(s);
		s->len = 0;
		s->flushes++;
	}
}

/* Room for the longest line (or header) after what is built. */
static inline void make_room(struct pr_script *s)
{
	if (s->len > SCRIPT_BUF - 4 * 4096)
		flush(s);
}

void pr__script_flush(struct pr_script *s)
{
	flush(s);
}

/* A header's text of any length: built in s->buf, or written through
 * when longer than a line may be. */
static void put_any(struct pr_script *s, const char *str, size_t len)
{
	make_room(s);
	if (len <= 4096) {
		put(s, str, len);
		return;
	}
	flush(s);
	fwrite_unlocked(str, 1, len, s->out);
	note_error(s);
}

/* `v` in decimal, right-aligned in `width` columns, with `pad` before. */
static void put_decimal(struct pr_script *s, uint64_t v, int width, char pad)
{
	char num[24], *end = num + sizeof(num), *p = decimal(end, v, width);

	for (char *z = p; *z == ' '; z++)
		*z = pad;
	put(s, p, (size_t)(end - p));
}

void pr__script_header(struct pr_script *s, const struct pr_record *rec, const char *comm,
		       const char *event)
{
	unsigned f = s->fields;
	/* A sample of a tracepoint whose format is known. */
	bool tracepoint = s->tp && event && rec->type == PR_RECORD_SAMPLE &&
			  pr_tp_formats_has(s->tp, event);

	make_room(s);
	if (f & PR_SCRIPT_COMM) {
		if (comm) {
			put_any(s, comm, strlen(comm));
		} else {
			s->buf[s->len++] = ':';
			put_decimal(s, rec->tid, 0, ' ');
		}
		s->buf[s->len++] = ' ';
	}
	if ((f & PR_SCRIPT_PID) && (f & PR_SCRIPT_TID)) {
		/* "%5u/%-5u " */
		size_t at;

		put_decimal(s, rec->pid, 5, ' ');
		s->buf[s->len++] = '/';
		at = s->len;
		put_decimal(s, rec->tid, 0, ' ');
		while (s->len - at < 5)
			s->buf[s->len++] = ' ';
		s->buf[s->len++] = ' ';
	} else if (f & (PR_SCRIPT_PID | PR_SCRIPT_TID)) {
		put_decimal(s, (f & PR_SCRIPT_TID) ? rec->tid : rec->pid, 5, ' ');
		s->buf[s->len++] = ' ';
	}
	if ((f & PR_SCRIPT_CPU) && (rec->fields & PR_ID_CPU)) {
		/* "[%03u] " */
		s->buf[s->len++] = '[';
		put_decimal(s, rec->cpu, 3, '0');
		put(s, "] ", 2);
	}
	if (f & PR_SCRIPT_TIME) {
		/* "secs.usecs" right-aligned in 12 columns: perf truncates. */
		uint64_t usecs = rec->time / 1000;
		char num[32], *end = num + sizeof(num), *p, *secs;

		p = decimal(end, usecs % 1000000, 6);
		for (char *z = p; *z == ' '; z++)
			*z = '0';
		*--p = '.';
		secs = decimal(p, usecs / 1000000, 0);
		p = secs;
		for (int len = (int)(end - secs); len < 12; len++)
			*--p = ' ';
		put(s, p, (size_t)(end - p));
		put(s, ": ", 2);
	}
	/* perf script shows a tracepoint's fields, not its period. */
	if (tracepoint && s->default_fields)
		f &= ~(unsigned)PR_SCRIPT_PERIOD;
	if (f & PR_SCRIPT_PERIOD) {
		put_decimal(s, rec->u.sample.period, 10, ' ');
		s->buf[s->len++] = ' ';
	}
	if (f & PR_SCRIPT_EVENT) {
		size_t len = event ? strlen(event) : 0;

		for (int pad = (int)len; pad < s->event_width; pad++) {
			make_room(s);
			s->buf[s->len++] = ' ';
		}
		put_any(s, event ? event : "", len);
		put(s, ": ", 2);
	}
	if (tracepoint && (f & PR_SCRIPT_EVENT)) {
		flush(s);
		pr_tp_formats_print(s->tp, event, rec->u.sample.raw, rec->u.sample.raw_size,
				    s->out);
		note_error(s);
	}
	s->buf[s->len++] = '\n';
}

/* The name perf gives a frame's mapping when no symbolizer says. */
static const char *frame_module(struct pr_script *s, const struct pr_frame *f, uint32_t pid)
{
	const char *path;

	if (f->flags & PR_FRAME_KERNEL)
		return "[kernel.kallsyms]";
	if (!f->dso)
		return "[unknown]";
	path = pr_dso_path(f->dso);
	/* perf names anonymous executable memory after the JIT map file
	 * that would describe it. */
	if (path[0] == '/' && path[1] == '/' && !strncmp(path, "//anon", 6)) {
		snprintf(s->anon, sizeof(s->anon), "/tmp/perf-%u.map", pid);
		return s->anon;
	}
	return path;
}

static const char truncated[] = PROF_TRUNCATED_LABEL;

/* One printed line, "\t<addr>[ name[+0xoff]][ (module)]" and the source
 * line when asked for, appended to s->buf. */
static void line(struct pr_script *s, uint64_t addr, const char *name, uint64_t offset,
		 const char *module, size_t module_len, const char *file, uint32_t lineno)
{
	char num[24], *end = num + sizeof(num), *p;
	bool pseudo = !addr && name && name[0] == '[';

	make_room(s);
	/* "\t%16lx": an address has at most 16 digits. */
	p = s->buf + s->len;
	p[0] = '\t';
	memcpy(p + 1, "                ", 16);
	p += 17;
	do {
		*--p = "0123456789abcdef"[addr & 15];
		addr >>= 4;
	} while (addr);
	s->len += 17;
	if (s->fields & PR_SCRIPT_SYM) {
		s->buf[s->len++] = ' ';
		put(s, name ? name : "[unknown]", name ? strlen(name) : 9);
		/* The pseudo-frames (a cut stack's, a wait's) are at no
		 * offset of anything. */
		if (name && !pseudo && (s->fields & PR_SCRIPT_SYMOFF)) {
			memcpy(s->buf + s->len, "+0x", 3);
			s->len += 3;
			s->len += hex(s->buf + s->len, offset);
		}
	}
	if (s->fields & PR_SCRIPT_DSO) {
		s->buf[s->len++] = ' ';
		s->buf[s->len++] = '(';
		put(s, module, module_len);
		s->buf[s->len++] = ')';
	}
	if (s->fields & PR_SCRIPT_SRCLINE) {
		if (file) {
			put(s, "\n  ", 3);
			put(s, file, strlen(file));
			p = decimal(end, lineno, 0);
			*--p = ':';
			put(s, p, (size_t)(end - p));
		} else {
			put(s, "\n  ??:0", 7);
		}
	}
	s->buf[s->len++] = '\n';
}

/* A joined frame's name (PR_FRAME_JOINED) marked as --annotate marks it
 * in folded output: perf shows no such frames, nothing reads it otherwise.
 * A frame from the call chain (PR_FRAME_CHAIN) is one perf shows too,
 * as it is: marked only when asked. */
static const char *marked_name(struct pr_script *s, const struct pr_frame *f, const char *name)
{
	const char *mark = f->flags & PR_FRAME_JOINED			? PROF_JOINED_MARK
			   : s->annotate && (f->flags & PR_FRAME_CHAIN) ? PROF_CHAIN_MARK
									: NULL;

	if (!mark)
		return name;
	snprintf(s->marked, sizeof(s->marked), "%s%s", name ? name : "[unknown]", mark);
	return s->marked;
}

/* Frame `f`'s lines, appended to s->buf; whether the next sample may
 * copy them for a frame with the same key (same_frame()): whether they
 * are what the symbolizer keeps (or, without one, the file's path), not
 * JIT code's (named anew every time, and after its process, its module
 * the process's perf map) nor a failed lookup's. */
static bool frame_lines(struct pr_script *s, const struct pr_record *rec,
			const struct pr_frame *f, struct pr_symbolizer *sym)
{
	struct pr_symbol sy = { 0 };
	const char *module;
	size_t module_len;
	bool expand, kept = !(f->dso && f->dso->anon);

	if (!sym || pr_symbolizer_symbolize(sym, rec->pid, f, &sy)) {
		sy = (struct pr_symbol){ 0 };
		module = frame_module(s, f, rec->pid);
		kept = kept && !sym;
	} else {
		module = sy.module ? sy.module : "[unknown]";
	}
	/* Frames in a row are mostly of one file. */
	if (module != s->last_module || module == s->anon) {
		s->last_module = module;
		s->last_module_len = strlen(module);
	}
	module_len = s->last_module_len;
	/* perf expands a frame into the functions inlined there when it has
	 * a symbol, in a file (not the kernel, the vDSO or a perf map) with
	 * debug information. */
	expand = s->inline_frames && sy.name && sy.nr && module[0] != '[' &&
		 strncmp(module, "/tmp/perf-", 10);
	if (!expand) {
		const struct pr_sym_func *fn = sy.nr ? &sy.funcs[0] : NULL;

		line(s, f->dso_ip, marked_name(s, f, sy.name), sy.offset, module, module_len,
		     fn ? fn->file : NULL, fn ? fn->line : 0);
		return kept;
	}
	for (size_t k = 0; k < sy.nr; k++) {
		const struct pr_sym_func *fn = &sy.funcs[k];
		const char *name = fn->name ? fn->name : "??";
		bool inlined = strcmp(name, sy.name);

		line(s, f->dso_ip, marked_name(s, f, name), sy.offset,
		     inlined ? "inlined" : module, inlined ? 7 : module_len, fn->file, fn->line);
	}
	return kept;
}

/*
 * The memo.  A stack mostly shares its outer frames with the stack
 * before it (57 % of the frames of the cc1 capture, BENCHMARKS.md): those
 * frames' lines are copied from the buffer the sample before was built in
 * rather than named and formatted again.  A frame's lines depend on
 * nothing but its key below, the writer's options and what the
 * symbolizer keeps for (file or kernel, address), which stands while its
 * epoch does; without a symbolizer, on the DSO's path, which stands while
 * the DSO does (its serial: a trim may free it, and another be made at
 * its address).
 */
static bool same_frame(const struct pr_frame *f, const struct script_memo_frame *m)
{
	return m->kept && f->dso == m->dso && f->dso_ip == m->dso_ip && f->ip == m->ip &&
	       f->flags == m->flags && (!f->dso || f->dso->serial == m->dso_serial);
}

static uint64_t sym_epoch(const struct pr_symbolizer *sym)
{
	return sym ? pr__symbolizer_epoch(sym) : 0;
}

/* How many outermost frames of `st` the frames before have. */
static size_t memo_shared(const struct pr_script *s, const struct pr_stack *st,
			  const struct pr_symbolizer *sym, uint64_t epoch)
{
	const struct script_memo *m = &s->memo[s->cur ^ 1];
	size_t k = 0;

	if (!s->memo_valid || sym != s->memo_sym || epoch != s->memo_epoch)
		return 0;
	while (k < st->nr && k < m->nr &&
	       same_frame(&st->frames[st->nr - 1 - k], &m->v[m->nr - 1 - k]))
		k++;
	return k;
}

void pr__script_frames(struct pr_script *s, const struct pr_record *rec,
		       const struct pr_stack *st, struct pr_symbolizer *sym)
{
	struct script_memo *m = &s->memo[s->cur], *prev = &s->memo[s->cur ^ 1];
	uint64_t flushes, epoch = sym_epoch(sym);
	size_t shared = memo_shared(s, st, sym, epoch), from = 0, i;
	bool keep = !PR_ARRAY_RESERVE(m->v, m->cap, st->nr);

	make_room(s);
	flushes = s->flushes;
	/* What a module's name points at may be freed between samples. */
	s->last_module = NULL;
	for (i = 0; sym && i < st->nr - shared; i++)
		pr__symbolizer_prefetch(sym, &st->frames[i]);
	for (i = 0; i < st->nr; i++) {
		const struct pr_frame *f = &st->frames[i];
		uint32_t at;
		bool kept;

		if (i == st->nr - shared) {
			from = prev->v[prev->nr - shared].at;
			/* Copied whole, or not at all; and not once the
			 * names kept may have changed (naming the frames
			 * above trimmed). */
			if (s->len + (s->memo_len - from) <= SCRIPT_BUF - 4 * 4096 &&
			    sym_epoch(sym) == epoch)
				break;
			shared = 0;
		}
		make_room(s);
		at = (uint32_t)s->len;
		kept = frame_lines(s, rec, f, sym);
		if (keep)
			m->v[i] = (struct script_memo_frame){
				.ip = f->ip, .dso_ip = f->dso_ip, .dso = f->dso,
				.dso_serial = f->dso ? f->dso->serial : 0, .flags = f->flags,
				.at = at, .kept = kept };
	}
	if (shared) {
		uint32_t at = (uint32_t)s->len;

		memcpy(s->buf + s->len, s->bufs[s->cur ^ 1] + from, s->memo_len - from);
		s->len += s->memo_len - from;
		for (size_t k = 0; keep && k < shared; k++) {
			m->v[i + k] = prev->v[prev->nr - shared + k];
			m->v[i + k].at = m->v[i + k].at - (uint32_t)from + at;
		}
	}
	m->nr = keep ? st->nr : 0;
	s->memo_len = s->len;
	/* Where the callers of a cut stack would be, a pseudo-frame that
	 * stackcollapse-perf.pl and the like take as any other. */
	if (prof__end_cut(st->end))
		line(s, 0, truncated, 0, "[unknown]", 9, NULL, 0);
	s->buf[s->len++] = '\n';
	/* Lines written out before the end (a stack too long for the
	 * buffer) are not there to copy. */
	s->memo_valid = keep && s->flushes == flushes && sym_epoch(sym) == epoch;
	s->memo_sym = sym;
	s->memo_epoch = epoch;
	flush(s);
	s->cur ^= 1;
	s->buf = s->bufs[s->cur];
}

void pr__script_pseudo_frame(struct pr_script *s, const char *name)
{
	line(s, 0, name, 0, "[unknown]", 9, NULL, 0);
	flush(s);
}

int pr_script_sample(struct pr_script *s, struct pr_symbolizer *sym,
		     const struct pr_record *rec, const struct pr_stack *stack,
		     const char *comm, const char *process, const char *event)
{
	/* What the sample stands for, as the profile counts it. */
	uint64_t period, ns;
	int err;

	if (!s || !rec || !stack)
		return -EINVAL;
	period = rec->u.sample.period;
	ns = s->period_is_ns && period ? period : s->freq ? UINT64_C(1000000000) / s->freq : 0;
	pr__script_header(s, rec, comm, event);
	pr__script_frames(s, rec, stack, sym);
	/* A reader that went away (a pager quit): the caller stops. */
	err = pr_script_error(s);
	return err ? err : pr__script_count_cpu(s, rec->pid, process, ns);
}
