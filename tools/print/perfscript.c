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
#include <string.h>

#include "perfscript.h"

static const struct {
	const char *name;
	unsigned bit;
} field_names[] = {
	{ "comm", PS_COMM }, { "pid", PS_PID }, { "tid", PS_TID }, { "cpu", PS_CPU },
	{ "time", PS_TIME }, { "period", PS_PERIOD }, { "event", PS_EVENT },
	{ "ip", PS_IP }, { "sym", PS_SYM }, { "symoff", PS_SYMOFF }, { "dso", PS_DSO },
	{ "srcline", PS_SRCLINE },
};

int ps_parse_fields(const char *list, unsigned *fields, const char **bad, size_t *bad_len)
{
	*fields = 0;
	while (*list) {
		size_t len = strcspn(list, ",");
		size_t i;

		for (i = 0; i < sizeof(field_names) / sizeof(field_names[0]); i++)
			if (strlen(field_names[i].name) == len &&
			    !strncmp(field_names[i].name, list, len))
				break;
		if (i == sizeof(field_names) / sizeof(field_names[0])) {
			*bad = list;
			*bad_len = len;
			return -1;
		}
		*fields |= field_names[i].bit;
		list += len + (list[len] == ',');
	}
	/* perf prints symoff only with sym. */
	if (!(*fields & PS_SYM))
		*fields &= ~PS_SYMOFF;
	return 0;
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

static void note_error(struct ps_writer *w)
{
	if (!w->err && ferror(w->out))
		w->err = errno ? errno : EIO;
}

int ps_error(struct ps_writer *w)
{
	note_error(w);
	return ferror(w->out) ? -w->err : 0;
}

void ps_header(struct ps_writer *w, const struct pr_record *rec, const char *comm,
	       const char *event)
{
	unsigned f = w->fields;
	char buf[64], *end = buf + sizeof(buf), *p;

	if (f & PS_COMM) {
		if (comm)
			fputs(comm, w->out);
		else
			fprintf(w->out, ":%u", rec->tid);
		putc_unlocked(' ', w->out);
	}
	if ((f & PS_PID) && (f & PS_TID))
		fprintf(w->out, "%5u/%-5u ", rec->pid, rec->tid);
	else if (f & (PS_PID | PS_TID)) {
		p = decimal(end, (f & PS_TID) ? rec->tid : rec->pid, 5);
		fwrite_unlocked(p, 1, (size_t)(end - p), w->out);
		putc_unlocked(' ', w->out);
	}
	if ((f & PS_CPU) && (rec->fields & PR_ID_CPU)) {
		/* "[%03u] " */
		*--end = ' ';
		*--end = ']';
		p = decimal(end, rec->cpu, 3);
		for (char *z = p; *z == ' '; z++)
			*z = '0';
		*--p = '[';
		fwrite_unlocked(p, 1, (size_t)(buf + sizeof(buf) - p), w->out);
		end = buf + sizeof(buf);
	}
	if (f & PS_TIME) {
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
		fwrite_unlocked(p, 1, (size_t)(end - p), w->out);
		fputs(": ", w->out);
	}
	if (f & PS_PERIOD) {
		*--end = ' ';
		p = decimal(end, rec->u.sample.period, 10);
		fwrite_unlocked(p, 1, (size_t)(buf + sizeof(buf) - p), w->out);
		end = buf + sizeof(buf);
	}
	if (f & PS_EVENT) {
		size_t len = event ? strlen(event) : 0;

		for (int pad = (int)len; pad < w->event_width; pad++)
			putc_unlocked(' ', w->out);
		fwrite_unlocked(event ? event : "", 1, len, w->out);
		fwrite_unlocked(": ", 1, 2, w->out);
	}
	putc_unlocked('\n', w->out);
	note_error(w);
}

/* The name perf gives a frame's mapping when no symbolizer says. */
static const char *frame_module(struct ps_writer *w, const struct pr_frame *f, uint32_t pid)
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
		snprintf(w->anon, sizeof(w->anon), "/tmp/perf-%u.map", pid);
		return w->anon;
	}
	return path;
}

/* Append `str` of `len` bytes (at most 4096 of them) at w->buf. */
static void put(struct ps_writer *w, const char *str, size_t len)
{
	if (len > 4096)
		len = 4096;
	memcpy(w->buf + w->len, str, len);
	w->len += len;
}

/* Write out what the frames built; room for the longest line after. */
static void flush(struct ps_writer *w, bool always)
{
	if (always || w->len > sizeof(w->buf) - 4 * 4096) {
		fwrite_unlocked(w->buf, 1, w->len, w->out);
		note_error(w);
		w->len = 0;
	}
}

/* One printed line, "\t<addr>[ name[+0xoff]][ (module)]" and the source
 * line when asked for, appended to w->buf. */
static void line(struct ps_writer *w, uint64_t addr, const char *name, uint64_t offset,
		 const char *module, size_t module_len, const char *file, uint32_t lineno)
{
	char num[24], *end = num + sizeof(num), *p;

	flush(w, false);
	/* "\t%16lx": an address has at most 16 digits. */
	p = w->buf + w->len;
	p[0] = '\t';
	memcpy(p + 1, "                ", 16);
	p += 17;
	do {
		*--p = "0123456789abcdef"[addr & 15];
		addr >>= 4;
	} while (addr);
	w->len += 17;
	if (w->fields & PS_SYM) {
		w->buf[w->len++] = ' ';
		put(w, name ? name : "[unknown]", name ? strlen(name) : 9);
		if (name && (w->fields & PS_SYMOFF)) {
			memcpy(w->buf + w->len, "+0x", 3);
			w->len += 3;
			w->len += hex(w->buf + w->len, offset);
		}
	}
	if (w->fields & PS_DSO) {
		w->buf[w->len++] = ' ';
		w->buf[w->len++] = '(';
		put(w, module, module_len);
		w->buf[w->len++] = ')';
	}
	if (w->fields & PS_SRCLINE) {
		if (file) {
			put(w, "\n  ", 3);
			put(w, file, strlen(file));
			p = decimal(end, lineno, 0);
			*--p = ':';
			put(w, p, (size_t)(end - p));
		} else {
			put(w, "\n  ??:0", 7);
		}
	}
	w->buf[w->len++] = '\n';
}

void ps_frames(struct ps_writer *w, const struct pr_record *rec, const struct pr_stack *st,
	       struct pr_symbolizer *sym)
{
	for (size_t i = 0; i < st->nr; i++) {
		const struct pr_frame *f = &st->frames[i];
		struct pr_symbol s = { 0 };
		const char *module;
		size_t module_len;
		bool expand;

		if (!sym || pr_symbolizer_symbolize(sym, rec->pid, f, &s)) {
			s = (struct pr_symbol){ 0 };
			module = frame_module(w, f, rec->pid);
		} else {
			module = s.module ? s.module : "[unknown]";
		}
		module_len = strlen(module);
		/* perf expands a frame into the functions inlined there when
		 * it has a symbol, in a file (not the kernel, the vDSO or a
		 * perf map) with debug information. */
		expand = w->inline_frames && s.name && s.nr && module[0] != '[' &&
			 strncmp(module, "/tmp/perf-", 10);
		if (!expand) {
			const struct pr_sym_func *fn = s.nr ? &s.funcs[0] : NULL;

			line(w, f->dso_ip, s.name, s.offset, module, module_len,
			     fn ? fn->file : NULL, fn ? fn->line : 0);
			continue;
		}
		for (size_t k = 0; k < s.nr; k++) {
			const struct pr_sym_func *fn = &s.funcs[k];
			const char *name = fn->name ? fn->name : "??";
			bool inlined = strcmp(name, s.name);

			line(w, f->dso_ip, name, s.offset, inlined ? "inlined" : module,
			     inlined ? 7 : module_len, fn->file, fn->line);
		}
	}
	w->buf[w->len++] = '\n';
	flush(w, true);
}

void ps_sample(struct ps_writer *w, const struct pr_record *rec, const char *comm,
	       const char *event, const struct pr_stack *st, struct pr_symbolizer *sym)
{
	ps_header(w, rec, comm, event);
	ps_frames(w, rec, st, sym);
}
