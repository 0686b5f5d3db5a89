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

void pr__script_header(struct pr_script *s, const struct pr_record *rec, const char *comm,
		       const char *event)
{
	unsigned f = s->fields;
	char buf[64], *end = buf + sizeof(buf), *p;
	/* A sample of a tracepoint whose format is known. */
	bool tracepoint = s->tp && event && rec->type == PR_RECORD_SAMPLE &&
			  pr_tp_formats_has(s->tp, event);

	if (f & PR_SCRIPT_COMM) {
		if (comm)
			fputs(comm, s->out);
		else
			fprintf(s->out, ":%u", rec->tid);
		putc_unlocked(' ', s->out);
	}
	if ((f & PR_SCRIPT_PID) && (f & PR_SCRIPT_TID))
		fprintf(s->out, "%5u/%-5u ", rec->pid, rec->tid);
	else if (f & (PR_SCRIPT_PID | PR_SCRIPT_TID)) {
		p = decimal(end, (f & PR_SCRIPT_TID) ? rec->tid : rec->pid, 5);
		fwrite_unlocked(p, 1, (size_t)(end - p), s->out);
		putc_unlocked(' ', s->out);
	}
	if ((f & PR_SCRIPT_CPU) && (rec->fields & PR_ID_CPU)) {
		/* "[%03u] " */
		*--end = ' ';
		*--end = ']';
		p = decimal(end, rec->cpu, 3);
		for (char *z = p; *z == ' '; z++)
			*z = '0';
		*--p = '[';
		fwrite_unlocked(p, 1, (size_t)(buf + sizeof(buf) - p), s->out);
		end = buf + sizeof(buf);
	}
	if (f & PR_SCRIPT_TIME) {
		/* "secs.usecs" right-aligned in 12 columns: perf truncates. */
		uint64_t usecs = rec->time / 1000;
		char *secs;
		int len;

		p = decimal(end, usecs % 1000000, 6);
		for (char *z = p; *z == ' '; z++)
			*z = '0';
		*--p = '.';
		secs = decimal(p, usecs / 1000000, 0);
		len = (int)(end - secs);
		p = secs;
		while (len++ < 12)
			*--p = ' ';
		fwrite_unlocked(p, 1, (size_t)(end - p), s->out);
		fputs(": ", s->out);
	}
	/* perf script shows a tracepoint's fields, not its period. */
	if (tracepoint && s->default_fields)
		f &= ~(unsigned)PR_SCRIPT_PERIOD;
	if (f & PR_SCRIPT_PERIOD) {
		*--end = ' ';
		p = decimal(end, rec->u.sample.period, 10);
		fwrite_unlocked(p, 1, (size_t)(buf + sizeof(buf) - p), s->out);
		end = buf + sizeof(buf);
	}
	if (f & PR_SCRIPT_EVENT) {
		size_t len = event ? strlen(event) : 0;

		for (int pad = (int)len; pad < s->event_width; pad++)
			putc_unlocked(' ', s->out);
		fwrite_unlocked(event ? event : "", 1, len, s->out);
		fwrite_unlocked(": ", 1, 2, s->out);
	}
	if (tracepoint && (f & PR_SCRIPT_EVENT))
		pr_tp_formats_print(s->tp, event, rec->u.sample.raw, rec->u.sample.raw_size,
				    s->out);
	putc_unlocked('\n', s->out);
	note_error(s);
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

/* Append `str` of `len` bytes (at most 4096 of them) at s->buf. */
static void put(struct pr_script *s, const char *str, size_t len)
{
	if (len > 4096)
		len = 4096;
	memcpy(s->buf + s->len, str, len);
	s->len += len;
}

/* Write out what the frames built; room for the longest line after. */
static void flush(struct pr_script *s, bool always)
{
	if (always || s->len > sizeof(s->buf) - 4 * 4096) {
		fwrite_unlocked(s->buf, 1, s->len, s->out);
		note_error(s);
		s->len = 0;
	}
}

static const char truncated[] = PROF_TRUNCATED_LABEL;

/* One printed line, "\t<addr>[ name[+0xoff]][ (module)]" and the source
 * line when asked for, appended to s->buf. */
static void line(struct pr_script *s, uint64_t addr, const char *name, uint64_t offset,
		 const char *module, size_t module_len, const char *file, uint32_t lineno)
{
	char num[24], *end = num + sizeof(num), *p;
	bool pseudo = !addr && name && name[0] == '[';

	flush(s, false);
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

void pr__script_frames(struct pr_script *s, const struct pr_record *rec,
		       const struct pr_stack *st, struct pr_symbolizer *sym)
{
	for (size_t i = 0; i < st->nr; i++) {
		const struct pr_frame *f = &st->frames[i];
		struct pr_symbol sy = { 0 };
		const char *module;
		size_t module_len;
		bool expand;

		if (!sym || pr_symbolizer_symbolize(sym, rec->pid, f, &sy)) {
			sy = (struct pr_symbol){ 0 };
			module = frame_module(s, f, rec->pid);
		} else {
			module = sy.module ? sy.module : "[unknown]";
		}
		module_len = strlen(module);
		/* perf expands a frame into the functions inlined there when
		 * it has a symbol, in a file (not the kernel, the vDSO or a
		 * perf map) with debug information. */
		expand = s->inline_frames && sy.name && sy.nr && module[0] != '[' &&
			 strncmp(module, "/tmp/perf-", 10);
		if (!expand) {
			const struct pr_sym_func *fn = sy.nr ? &sy.funcs[0] : NULL;

			line(s, f->dso_ip, marked_name(s, f, sy.name), sy.offset, module,
			     module_len, fn ? fn->file : NULL, fn ? fn->line : 0);
			continue;
		}
		for (size_t k = 0; k < sy.nr; k++) {
			const struct pr_sym_func *fn = &sy.funcs[k];
			const char *name = fn->name ? fn->name : "??";
			bool inlined = strcmp(name, sy.name);

			line(s, f->dso_ip, marked_name(s, f, name), sy.offset,
			     inlined ? "inlined" : module, inlined ? 7 : module_len, fn->file,
			     fn->line);
		}
	}
	/* Where the callers of a cut stack would be, a pseudo-frame that
	 * stackcollapse-perf.pl and the like take as any other. */
	if (prof__end_cut(st->end))
		line(s, 0, truncated, 0, "[unknown]", 9, NULL, 0);
	s->buf[s->len++] = '\n';
	flush(s, true);
}

void pr__script_pseudo_frame(struct pr_script *s, const char *name)
{
	line(s, 0, name, 0, "[unknown]", 9, NULL, 0);
	flush(s, true);
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
