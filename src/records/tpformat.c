/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tracepoint formats: a tracefs format file parsed into its fields and
 * its print fmt, kept by "system:name", and a sample's payload printed
 * through them (prtrace.h).  A format file reads
 *
 *   name: sys_enter_write
 *   ID: 840
 *   format:
 *   \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
 *   ...
 *   \tfield:size_t count;\toffset:32;\tsize:8;\tsigned:0;
 *
 *   print fmt: "fd: 0x%08lx, ...", ((unsigned long)(REC->fd)), ...
 *
 * The text comes from tracefs or from a perf.data file: anything may be
 * in it, and nothing in it is trusted (tests/fuzz/fuzz-perfdata.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "records/tracepoint.h"

struct pr_tp_formats *pr_tp_formats_new(void)
{
	struct pr_tp_formats *t = calloc(1, sizeof(*t));

	if (!t)
		errno = ENOMEM;
	return t;
}

static void format_free(struct tp_format *f)
{
	free(f->event);
	for (size_t i = 0; i < f->nr_fields; i++)
		free(f->fields[i].name);
	free(f->fields);
	free(f->fmt);
	for (size_t i = 0; i < f->nr_args; i++)
		free(f->args[i]);
	free(f->args);
}

void pr_tp_formats_free(struct pr_tp_formats *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nr; i++)
		format_free(&t->v[i]);
	free(t->v);
	free(t);
}

/* The length of `event` without a modifier after its second colon. */
static size_t event_len(const char *event)
{
	const char *colon = strchr(event, ':');

	if (colon && (colon = strchr(colon + 1, ':')))
		return (size_t)(colon - event);
	return strlen(event);
}

static const struct tp_format *find(const struct pr_tp_formats *t, const char *event)
{
	size_t len = event_len(event);

	for (size_t i = 0; t && i < t->nr; i++)
		if (!strncmp(t->v[i].event, event, len) && !t->v[i].event[len])
			return &t->v[i];
	return NULL;
}

/* ---- parsing ---- */

/* The next line of [*p, end) into line (NUL-terminated, at most size-1
 * bytes kept); false at the end. */
static bool next_line(const char **p, const char *end, char *line, size_t size)
{
	const char *nl;
	size_t n;

	if (*p >= end)
		return false;
	nl = memchr(*p, '\n', (size_t)(end - *p));
	if (!nl)
		nl = end;
	n = (size_t)(nl - *p);
	if (n >= size)
		n = size - 1;
	memcpy(line, *p, n);
	line[n] = '\0';
	*p = nl < end ? nl + 1 : end;
	return true;
}

/* "key:VALUE;" in `line`: VALUE's number, or false without the key. */
static bool key_u32(const char *line, const char *key, uint32_t *v)
{
	const char *k = strstr(line, key);
	char *end;
	unsigned long n;

	if (!k)
		return false;
	n = strtoul(k + strlen(key), &end, 10);
	if (*end != ';' || n > UINT32_MAX)
		return false;
	*v = (uint32_t)n;
	return true;
}

/* "\tfield:TYPE NAME[N];\toffset:O;\tsize:S;\tsigned:G;" into fl. */
static int parse_field(const char *line, struct tp_field *fl)
{
	const char *decl = strstr(line, "field:"), *semi, *name, *bracket;
	uint32_t sign = 0;
	size_t len;

	if (!decl || !(semi = strchr(decl, ';')))
		return -EBADMSG;
	decl += 6;
	if (!key_u32(semi, "offset:", &fl->offset) || !key_u32(semi, "size:", &fl->size))
		return -EBADMSG;
	key_u32(semi, "signed:", &sign);
	fl->is_signed = sign;
	/* "char comm[16]", "__data_loc char[] filename": the name is the
	 * last word, before the array's size when it has one. */
	bracket = memchr(decl, '[', (size_t)(semi - decl));
	name = semi;
	if (name > decl && name[-1] == ']')
		while (name > decl && name[-1] != '[')
			name--;
	if (name < semi)
		name--;
	while (name > decl && name[-1] == ' ')
		name--;
	len = 0;
	while (name > decl && (name[-1] == '_' || (name[-1] >= 'a' && name[-1] <= 'z') ||
			       (name[-1] >= 'A' && name[-1] <= 'Z') ||
			       (name[-1] >= '0' && name[-1] <= '9'))) {
		name--;
		len++;
	}
	if (!len || fl->offset > UINT32_MAX - fl->size)
		return -EBADMSG;
	fl->name = strndup(name, len);
	if (!fl->name)
		return -ENOMEM;
	fl->common = !strncmp(fl->name, "common_", 7);
	fl->dynamic = !strncmp(decl, "__data_loc", 10);
	fl->text = (bracket || fl->dynamic) && strstr(decl, "char") &&
		   strstr(decl, "char") < name;
	fl->array = (bracket || fl->dynamic) && !fl->text;
	return 0;
}

/* The C string literal at *p (past its opening quote) unescaped into a
 * new string; *p left past the closing quote. */
static char *string_literal(const char **p)
{
	const char *s = *p;
	char *out = malloc(strlen(s) + 1), *o = out;

	if (!out)
		return NULL;
	while (*s && *s != '"') {
		if (*s == '\\' && s[1]) {
			s++;
			*o++ = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
			s++;
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
	*p = *s ? s + 1 : s;
	return out;
}

/* The print fmt's arguments, split at the commas outside parentheses
 * and strings. */
static int split_args(struct tp_format *f, const char *s)
{
	while (*s) {
		const char *start;
		int depth = 0;
		bool quoted = false;
		char **grown;

		while (*s == ' ' || *s == ',')
			s++;
		if (!*s)
			break;
		for (start = s; *s && (quoted || depth || *s != ','); s++) {
			if (*s == '"' && (s == start || s[-1] != '\\'))
				quoted = !quoted;
			else if (!quoted && *s == '(')
				depth++;
			else if (!quoted && *s == ')')
				depth--;
			if (depth < 0)
				return -EBADMSG;
		}
		grown = realloc(f->args, (f->nr_args + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		f->args = grown;
		if (!(f->args[f->nr_args] = strndup(start, (size_t)(s - start))))
			return -ENOMEM;
		f->nr_args++;
	}
	return 0;
}

static int parse_print_fmt(struct tp_format *f, const char *line)
{
	const char *p = strchr(line, '"');
	int err;

	/* One print fmt: a second line is not tracefs's. */
	if (!p || f->fmt || f->nr_args)
		return 0;
	p++;
	f->fmt = string_literal(&p);
	if (!f->fmt)
		return -ENOMEM;
	err = split_args(f, p);
	if (err == -EBADMSG) {
		free(f->fmt);
		f->fmt = NULL;
		err = 0;
	}
	return err;
}

static int add_field(struct tp_format *f, const char *line)
{
	struct tp_field fl = { 0 }, *grown;
	int err = parse_field(line, &fl);

	if (err)
		return err;
	grown = realloc(f->fields, (f->nr_fields + 1) * sizeof(*grown));
	if (!grown) {
		free(fl.name);
		return -ENOMEM;
	}
	f->fields = grown;
	f->fields[f->nr_fields++] = fl;
	if (fl.offset + fl.size > f->need)
		f->need = fl.offset + fl.size;
	return 0;
}

/* A print fmt is kept only if it evaluates on an empty payload: every
 * argument one this decoder understands. */
static void check_print_fmt(struct tp_format *f)
{
	struct tp_payload p = { .f = f, .dry = true };

	if (f->fmt && pr__tp_print_fmt(&p, NULL)) {
		free(f->fmt);
		f->fmt = NULL;
	}
}

static int parse_format(struct tp_format *f, const char *system, const char *text,
			size_t len)
{
	const char *p = text, *end = text + len;
	char line[8192], name[256] = "";
	int err = 0;

	while (!err && next_line(&p, end, line, sizeof(line))) {
		if (!strncmp(line, "name: ", 6))
			snprintf(name, sizeof(name), "%.*s", (int)sizeof(name) - 1, line + 6);
		else if (strstr(line, "field:"))
			err = add_field(f, line);
		else if (!strncmp(line, "print fmt:", 10))
			err = parse_print_fmt(f, line);
	}
	if (err)
		return err;
	if (!name[0] || !f->nr_fields)
		return -EBADMSG;
	if (asprintf(&f->event, "%s:%s", system, name) < 0) {
		f->event = NULL;
		return -ENOMEM;
	}
	check_print_fmt(f);
	return 0;
}

int pr_tp_formats_add(struct pr_tp_formats *t, const char *system, const char *text,
		      size_t len)
{
	struct tp_format f = { 0 };
	int err;

	if (!t || !system || (!text && len))
		return -EINVAL;
	err = parse_format(&f, system, text, len);
	if (!err && find(t, f.event)) {
		format_free(&f);
		return 0;
	}
	if (!err && t->nr == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 8;
		struct tp_format *grown = realloc(t->v, cap * sizeof(*grown));

		if (grown) {
			t->v = grown;
			t->cap = cap;
		} else {
			err = -ENOMEM;
		}
	}
	if (err) {
		format_free(&f);
		return err;
	}
	t->v[t->nr++] = f;
	return 0;
}

/* ---- payloads ---- */

const struct tp_field *pr__tp_field(const struct tp_format *f, const char *name, size_t len)
{
	for (size_t i = 0; i < f->nr_fields; i++)
		if (!strncmp(f->fields[i].name, name, len) && !f->fields[i].name[len])
			return &f->fields[i];
	return NULL;
}

/* `size` bytes at `off` of the payload, or NULL when past its end. */
static const uint8_t *bytes(struct tp_payload *p, uint32_t off, uint32_t size)
{
	if ((uint64_t)off + size > p->size) {
		p->short_read = true;
		return NULL;
	}
	return p->raw + off;
}

int pr__tp_field_value(struct tp_payload *p, const struct tp_field *fl, struct tp_value *v)
{
	const uint8_t *b;
	uint32_t off = fl->offset, size = fl->size;

	memset(v, 0, sizeof(*v));
	if (fl->dynamic) {
		uint32_t loc;

		b = bytes(p, fl->offset, 4);
		if (!b) {
			v->is_str = fl->text;
			v->s = "";
			return fl->text ? 0 : -EINVAL;
		}
		memcpy(&loc, b, 4);
		off = loc & 0xffff;
		size = loc >> 16;
	}
	if (fl->text) {
		v->is_str = true;
		b = bytes(p, off, size);
		v->s = b ? (const char *)b : "";
		v->len = b ? strnlen(v->s, size) : 0;
		return 0;
	}
	if (fl->array || (size != 1 && size != 2 && size != 4 && size != 8))
		return -EINVAL;
	v->is_signed = fl->is_signed;
	b = bytes(p, off, size);
	if (!b)
		return 0;
	switch (size) {
	case 1: v->n = fl->is_signed ? (uint64_t)(int64_t)(int8_t)b[0] : b[0]; break;
	case 2: {
		uint16_t x;

		memcpy(&x, b, 2);
		v->n = fl->is_signed ? (uint64_t)(int64_t)(int16_t)x : x;
		break;
	}
	case 4: {
		uint32_t x;

		memcpy(&x, b, 4);
		v->n = fl->is_signed ? (uint64_t)(int64_t)(int32_t)x : x;
		break;
	}
	default:
		memcpy(&v->n, b, 8);
		break;
	}
	return 0;
}

/* An array of numbers: its bytes. */
static void print_array(struct tp_payload *p, const struct tp_field *fl, FILE *out)
{
	const uint8_t *b = bytes(p, fl->offset, fl->size);

	fputs("ARRAY[", out);
	for (uint32_t k = 0; b && k < fl->size; k++)
		fprintf(out, "%s%02x", k ? ", " : "", b[k]);
	fputc(']', out);
}

/* Each field as name=value, as perf prints the fields of a format whose
 * print fmt it cannot parse. */
static void print_fields(struct tp_payload *p, FILE *out)
{
	bool first = true;

	for (size_t i = 0; i < p->f->nr_fields; i++) {
		const struct tp_field *fl = &p->f->fields[i];
		struct tp_value v;

		if (fl->common)
			continue;
		fprintf(out, "%s%s=", first ? "" : " ", fl->name);
		first = false;
		if (!pr__tp_field_value(p, fl, &v)) {
			if (v.is_str)
				fprintf(out, "%.*s", (int)v.len, v.s);
			else if (v.is_signed)
				fprintf(out, "%lld", (long long)v.n);
			else
				fprintf(out, "%llu", (unsigned long long)v.n);
			continue;
		}
		print_array(p, fl, out);
	}
}

bool pr_tp_formats_has(const struct pr_tp_formats *t, const char *event)
{
	return event && find(t, event);
}

int pr_tp_formats_print(const struct pr_tp_formats *t, const char *event, const void *raw,
			size_t size, FILE *out)
{
	struct tp_payload p = { .raw = raw, .size = raw ? size : 0 };

	if (!t || !event || !out)
		return -EINVAL;
	p.f = find(t, event);
	if (!p.f)
		return -ENOENT;
	if (!p.f->fmt || pr__tp_print_fmt(&p, out))
		print_fields(&p, out);
	if (p.size < p.f->need)
		fprintf(out, " [truncated: %zu of %u bytes]", p.size, p.f->need);
	else if (p.short_read)
		fprintf(out, " [truncated: a field's data lies past the %zu bytes]", p.size);
	return 0;
}
