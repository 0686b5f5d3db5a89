/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A tracepoint's print fmt evaluated on a payload: the format string's
 * conversions, fed by arguments that are C expressions over the fields
 * (REC->fd, (unsigned long)(REC->buf), __get_str(filename), a ? b : c).
 * What is evaluated: numbers, strings and characters, REC->field, casts
 * to C's integer and pointer types, the unary and binary operators, the
 * conditional, __get_str().  Anything else (the kernel's helpers such as
 * __print_flags()) fails the argument, and the caller prints the fields
 * instead.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "records/tracepoint.h"

struct eval {
	const char *p;
	struct tp_payload *pl;
	bool err;
	int depth;
	/* The text __print_flags() and __print_symbolic() make. */
	char text[512];
	size_t used;
};

static void blanks(struct eval *e)
{
	while (*e->p == ' ' || *e->p == '\t' || *e->p == '\n')
		e->p++;
}

static bool accept(struct eval *e, const char *tok)
{
	size_t n = strlen(tok);

	blanks(e);
	if (strncmp(e->p, tok, n))
		return false;
	e->p += n;
	return true;
}

static bool is_ident(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

static struct tp_value number(uint64_t n, bool is_signed)
{
	struct tp_value v = { .n = n, .is_signed = is_signed };

	return v;
}

static struct tp_value fail(struct eval *e)
{
	e->err = true;
	return number(0, false);
}

static struct tp_value conditional(struct eval *e);
static struct tp_value unary(struct eval *e);

/* A cast's type, "(unsigned long)": its width in bytes (8 for a pointer)
 * and signedness; false when the parenthesis holds no type. */
static bool cast_type(const char *s, size_t len, unsigned *width, bool *is_signed)
{
	static const struct {
		const char *word;
		unsigned width;
		int sign;           /* -1: unsigned, 1: signed, 0: as said */
	} words[] = {
		{ "char", 1, 0 },  { "short", 2, 0 }, { "int", 4, 0 },   { "long", 8, 0 },
		{ "bool", 1, -1 }, { "_Bool", 1, -1 }, { "u8", 1, -1 },  { "u16", 2, -1 },
		{ "u32", 4, -1 },  { "u64", 8, -1 },  { "s8", 1, 1 },    { "s16", 2, 1 },
		{ "s32", 4, 1 },   { "s64", 8, 1 },   { "size_t", 8, -1 }, { "ssize_t", 8, 1 },
		{ "pid_t", 4, 1 }, { "void", 8, -1 }, { "unsigned", 4, -1 },
		{ "signed", 4, 1 }, { "const", 0, 0 }, { "volatile", 0, 0 },
	};
	bool known = false, uns = false, sig = false;
	unsigned w = 0;

	for (size_t i = 0; i < len;) {
		size_t n = 0, k;

		while (i < len && (s[i] == ' ' || s[i] == '*')) {
			if (s[i] == '*') {
				w = 8;
				uns = true;
				sig = false;
			}
			i++;
		}
		while (i + n < len && is_ident(s[i + n]))
			n++;
		if (!n)
			return i >= len && known;
		for (k = 0; k < PR_ARRAY_SIZE(words); k++)
			if (strlen(words[k].word) == n && !strncmp(words[k].word, s + i, n))
				break;
		if (k == PR_ARRAY_SIZE(words))
			return false;
		known = true;
		if (words[k].width > w || (words[k].width && s[i] != 'u' && s[i] != 's'))
			w = words[k].width > w ? words[k].width : w;
		uns |= words[k].sign < 0;
		sig |= words[k].sign > 0;
		i += n;
	}
	*width = w ? w : 4;
	*is_signed = !uns || sig;
	return known;
}

static struct tp_value field_ref(struct eval *e)
{
	const char *name;
	const struct tp_field *fl;
	struct tp_value v;

	blanks(e);
	name = e->p;
	while (is_ident(*e->p))
		e->p++;
	fl = pr__tp_field(e->pl->f, name, (size_t)(e->p - name));
	if (!fl || pr__tp_field_value(e->pl, fl, &v))
		return fail(e);
	return v;
}

static struct tp_value literal(struct eval *e)
{
	char *end;
	uint64_t n;

	if (*e->p == '\'') {
		n = (unsigned char)e->p[1];
		if (!e->p[1] || e->p[2] != '\'')
			return fail(e);
		e->p += 3;
		return number(n, true);
	}
	if (*e->p == '"') {
		struct tp_value v = { .is_str = true };
		const char *close = strchr(e->p + 1, '"');

		if (!close)
			return fail(e);
		v.s = e->p + 1;
		v.len = (size_t)(close - v.s);
		e->p = close + 1;
		return v;
	}
	n = strtoull(e->p, &end, 0);
	if (end == e->p)
		return fail(e);
	e->p = end;
	while (*e->p == 'u' || *e->p == 'U' || *e->p == 'l' || *e->p == 'L')
		e->p++;
	return number(n, true);
}

/* Append to e->text what a table's entry or number prints: false when
 * it is full. */
static bool put_text(struct eval *e, const char *s, size_t len)
{
	if (len >= sizeof(e->text) - e->used)
		return false;
	memcpy(e->text + e->used, s, len);
	e->used += len;
	e->text[e->used] = '\0';
	return true;
}

/*
 * __print_symbolic(value, { key, "name" }...): the name of the first key
 * equal to the value; __print_flags(value, "delim", { bit, "name" }...):
 * the names of the bits set, joined by the delimiter (a key 0 names a
 * value of 0).  What no key names is printed as 0x<hex>, as perf does.
 * Keys are numbers (an enum's name is not known here: the call fails).
 */
static struct tp_value symbols(struct eval *e, bool flags)
{
	struct tp_value v = conditional(e), delim = { .s = "", .len = 0 };
	struct tp_value out = { .is_str = true };
	size_t start = e->used;
	uint64_t left = v.n;
	bool printed = false, matched = false;
	char hex[24];

	if (flags && !accept(e, ","))
		return fail(e);
	if (flags && !(delim = unary(e)).is_str)
		return fail(e);
	while (!e->err && accept(e, ",")) {
		struct tp_value key, name;

		if (!accept(e, "{"))
			return fail(e);
		key = conditional(e);
		if (!accept(e, ","))
			return fail(e);
		name = unary(e);
		if (!name.is_str || !accept(e, "}") || key.is_str)
			return fail(e);
		if (!flags && !matched && key.n == v.n) {
			matched = put_text(e, name.s, name.len);
		} else if (flags && !v.n && !key.n && !printed) {
			printed = put_text(e, name.s, name.len);
		} else if (flags && key.n && (left & key.n) == key.n) {
			if ((printed && !put_text(e, delim.s, delim.len)) ||
			    !put_text(e, name.s, name.len))
				return fail(e);
			printed = true;
			left &= ~key.n;
		}
	}
	if (e->err || !accept(e, ")") || v.is_str)
		return fail(e);
	if ((!flags && !matched) || (flags && left)) {
		int n = snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)(flags ? left : v.n));

		if ((flags && printed && !put_text(e, delim.s, delim.len)) ||
		    !put_text(e, hex, (size_t)n))
			return fail(e);
	}
	out.s = e->text + start;
	out.len = e->used - start;
	/* Each string keeps its own bytes: the next one is appended. */
	if (!put_text(e, "", 1))
		return fail(e);
	return out;
}

static struct tp_value primary(struct eval *e)
{
	blanks(e);
	if (accept(e, "__print_symbolic("))
		return symbols(e, false);
	if (accept(e, "__print_flags("))
		return symbols(e, true);
	if (accept(e, "REC->"))
		return field_ref(e);
	if (accept(e, "__get_str(")) {
		struct tp_value v = field_ref(e);

		if (!accept(e, ")") || !v.is_str)
			return fail(e);
		return v;
	}
	if ((*e->p >= '0' && *e->p <= '9') || *e->p == '\'' || *e->p == '"')
		return literal(e);
	return fail(e);
}

static struct tp_value convert(struct tp_value v, unsigned width, bool is_signed)
{
	uint64_t n = v.n;

	if (width < 8) {
		unsigned bits = width * 8;

		n &= (UINT64_C(1) << bits) - 1;
		if (is_signed && (n >> (bits - 1)))
			n |= ~((UINT64_C(1) << bits) - 1);
	}
	return number(n, is_signed);
}

static struct tp_value unary(struct eval *e)
{
	struct tp_value v;

	if (++e->depth > 64)
		return fail(e);
	blanks(e);
	if (accept(e, "!")) {
		v = unary(e);
		v = number(!v.n, true);
	} else if (accept(e, "~")) {
		v = unary(e);
		v.n = ~v.n;
	} else if (accept(e, "-")) {
		v = unary(e);
		v.n = -v.n;
		v.is_signed = true;
	} else if (accept(e, "(")) {
		const char *close = strchr(e->p, ')');
		unsigned width = 8;
		bool is_signed = false;

		if (close && cast_type(e->p, (size_t)(close - e->p), &width, &is_signed)) {
			e->p = close + 1;
			v = unary(e);
			if (!v.is_str)
				v = convert(v, width, is_signed);
		} else {
			v = conditional(e);
			if (!accept(e, ")"))
				v = fail(e);
		}
	} else {
		v = primary(e);
	}
	e->depth--;
	return v;
}

/* The binary operators, loosest first; within a level, the longer
 * spelling first ("<<" before "<"). */
static const char *const levels[][4] = {
	{ "||" }, { "&&" }, { "|" }, { "^" }, { "&" }, { "==", "!=" },
	{ "<=", ">=", "<", ">" }, { "<<", ">>" }, { "+", "-" }, { "*", "/", "%" },
};

static uint64_t apply(const char *op, struct tp_value a, struct tp_value b, bool *bad)
{
	bool s = a.is_signed && b.is_signed;
	int64_t x = (int64_t)a.n, y = (int64_t)b.n;

	switch (op[0]) {
	case '|': return op[1] ? a.n || b.n : a.n | b.n;
	case '&': return op[1] ? a.n && b.n : a.n & b.n;
	case '^': return a.n ^ b.n;
	case '=': return a.n == b.n;
	case '!': return a.n != b.n;
	case '<':
		if (op[1] == '<')
			return b.n < 64 ? a.n << b.n : 0;
		return op[1] ? (s ? x <= y : a.n <= b.n) : (s ? x < y : a.n < b.n);
	case '>':
		if (op[1] == '>')
			return b.n < 64 ? (s ? (uint64_t)(x >> b.n) : a.n >> b.n) : 0;
		return op[1] ? (s ? x >= y : a.n >= b.n) : (s ? x > y : a.n > b.n);
	case '+': return a.n + b.n;
	case '-': return a.n - b.n;
	case '*': return a.n * b.n;
	default:
		if (!b.n || (s && x == INT64_MIN && y == -1)) {
			*bad = true;
			return 0;
		}
		if (op[0] == '/')
			return s ? (uint64_t)(x / y) : a.n / b.n;
		return s ? (uint64_t)(x % y) : a.n % b.n;
	}
}

static struct tp_value binary(struct eval *e, size_t level)
{
	struct tp_value a;

	if (level == PR_ARRAY_SIZE(levels))
		return unary(e);
	a = binary(e, level + 1);
	for (;;) {
		const char *op = NULL;
		struct tp_value b;
		bool bad = false;

		blanks(e);
		for (size_t i = 0; i < 4 && levels[level][i]; i++) {
			const char *cand = levels[level][i];
			size_t n = strlen(cand);

			/* "|" is not the start of "||", nor "&" of "&&". */
			if (!strncmp(e->p, cand, n) && !(n == 1 && e->p[1] == cand[0] &&
							 (cand[0] == '|' || cand[0] == '&'))) {
				op = cand;
				break;
			}
		}
		if (!op || e->err)
			return a;
		e->p += strlen(op);
		b = binary(e, level + 1);
		if (a.is_str || b.is_str)
			return fail(e);
		a = number(apply(op, a, b, &bad), a.is_signed && b.is_signed);
		if (bad && !e->pl->dry)
			return fail(e);
	}
}

static struct tp_value conditional(struct eval *e)
{
	struct tp_value c, a, b;

	if (++e->depth > 64)
		return fail(e);
	c = binary(e, 0);
	if (!accept(e, "?")) {
		e->depth--;
		return c;
	}
	a = conditional(e);
	if (!accept(e, ":"))
		return fail(e);
	b = conditional(e);
	e->depth--;
	return c.is_str ? fail(e) : c.n ? a : b;
}

static bool evaluate(struct tp_payload *p, const char *arg, struct tp_value *v)
{
	struct eval e = { .p = arg, .pl = p };

	*v = conditional(&e);
	blanks(&e);
	return !e.err && !*e.p;
}

/* One conversion, its text (between '%' and the conversion letter, both
 * included) in spec: printed with the argument as C prints it, the value
 * cut to the length the spec says (int without one). */
static int convert_one(char *spec, size_t len, const struct tp_value *v, FILE *out)
{
	char conv = spec[len - 1], fmt[48];
	const char *p = spec + 1, *lenmod;
	size_t flags;
	uint64_t n = v->n;
	int width;

	/* %p and the kernel's %ps, %pS...: the address. */
	if (conv == 'p') {
		if (v->is_str)
			return -EINVAL;
		fprintf(out, "0x%llx", (unsigned long long)n);
		return 0;
	}
	flags = strspn(p, "-+ #0123456789.");
	lenmod = p + flags;
	if (conv == 's') {
		const char *dot = memchr(p, '.', flags);
		int w = atoi(p + strspn(p, "-+ #0")), prec = (int)v->len;

		if (!v->is_str)
			return -EINVAL;
		if (dot && atoi(dot + 1) < prec)
			prec = atoi(dot + 1);
		fprintf(out, "%*.*s", memchr(p, '-', flags) ? -w : w, prec, v->s);
		return 0;
	}
	if (v->is_str)
		return -EINVAL;
	if (lenmod[0] == 'h')
		width = lenmod[1] == 'h' ? 1 : 2;
	else if (lenmod[0] == 'l' || lenmod[0] == 'z' || lenmod[0] == 'j' || lenmod[0] == 't' ||
		 lenmod[0] == 'L' || lenmod[0] == 'q')
		width = 8;
	else
		width = 4;
	if (conv == 'c')
		width = 1;
	if (width < 8) {
		n &= (UINT64_C(1) << (width * 8)) - 1;
		if ((conv == 'd' || conv == 'i') && (n >> (width * 8 - 1)))
			n |= ~((UINT64_C(1) << (width * 8)) - 1);
	}
	if (snprintf(fmt, sizeof(fmt), "%%%.*sll%c", (int)flags, p, conv == 'c' ? 'u' : conv) >=
	    (int)sizeof(fmt))
		return -EINVAL;
	/* fmt is the tracepoint's own spec, its flags, width and precision
	 * checked to be digits and "-+ #." (render()), with "ll" for the
	 * length: a format for exactly the argument passed. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	if (conv == 'c') {
		snprintf(fmt, sizeof(fmt), "%%%.*sc", (int)flags, p);
		fprintf(out, fmt, (int)(unsigned char)n);
	} else if (conv == 'd' || conv == 'i') {
		fprintf(out, fmt, (long long)n);
	} else {
		fprintf(out, fmt, (unsigned long long)n);
	}
#pragma GCC diagnostic pop
	return 0;
}

static int render(struct tp_payload *p, FILE *out)
{
	const struct tp_format *f = p->f;
	size_t next = 0;

	for (const char *s = f->fmt; *s; s++) {
		struct tp_value v;
		char spec[32];
		size_t len;

		if (*s != '%') {
			fputc(*s, out);
			continue;
		}
		if (s[1] == '%') {
			fputc('%', out);
			s++;
			continue;
		}
		len = 1 + strspn(s + 1, "-+ #0123456789.hlzjtLq");
		if (!strchr("diouxXcsp", s[len]) || !s[len] || len + 1 >= sizeof(spec) ||
		    memchr(s, '*', len))
			return -EINVAL;
		/* A width or precision past three digits is no field's. */
		for (size_t i = 1, run = 0; i < len; i++)
			if ((run = s[i] >= '0' && s[i] <= '9' ? run + 1 : 0) > 3)
				return -EINVAL;
		memcpy(spec, s, len + 1);
		spec[len + 1] = '\0';
		if (next >= f->nr_args || !evaluate(p, f->args[next++], &v) ||
		    convert_one(spec, len + 1, &v, out))
			return -EINVAL;
		s += len;
		/* The kernel's %p extensions: %ps, %pS, %pK... */
		if (s[0] == 'p' && ((s[1] >= 'a' && s[1] <= 'z') || (s[1] >= 'A' && s[1] <= 'Z')))
			s++;
	}
	return next == f->nr_args ? 0 : -EINVAL;
}

int pr__tp_print_fmt(struct tp_payload *p, FILE *out)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	int err;

	if (!mem)
		return -ENOMEM;
	err = render(p, mem);
	if (fclose(mem) && !err)
		err = -ENOMEM;
	if (!err && out)
		fwrite(buf, 1, len, out);
	free(buf);
	return err;
}
