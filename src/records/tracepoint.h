/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tracepoint formats (prtrace.h): their fields, parsed from a format
 * file (tpformat.c), and their print fmt evaluated on a payload
 * (tpprint.c).
 */
#ifndef PR_TRACEPOINT_H
#define PR_TRACEPOINT_H

#include <stdio.h>

#include "prtrace.h"
#include "base/base.h"

struct tp_field {
	char *name;
	uint32_t offset, size;
	bool is_signed;
	bool common;        /* common_type, common_pid...: never printed */
	bool text;          /* a char array: a NUL-terminated string */
	bool dynamic;       /* __data_loc: a u32 (length << 16 | offset) */
	bool array;         /* any other array: its bytes */
};

struct tp_format {
	char *event;        /* "system:name" */
	struct tp_field *fields;
	size_t nr_fields;
	/* The print fmt: its format string and its arguments' text; `fmt`
	 * NULL when the format has none, or one the evaluator cannot
	 * evaluate (each field is then printed as name=value). */
	char *fmt;
	char **args;
	size_t nr_args;
	uint32_t need;      /* bytes the fields span */
};

struct pr_tp_formats {
	struct tp_format *v;
	size_t nr, cap;
};

/* A value a print fmt argument evaluates to: a number or a string. */
struct tp_value {
	bool is_str;
	bool is_signed;
	uint64_t n;
	const char *s;
	size_t len;
};

/* A payload being printed. */
struct tp_payload {
	const struct tp_format *f;
	const uint8_t *raw;
	size_t size;
	bool short_read;    /* a field past the payload's end was read */
	bool dry;           /* zeros, not a sample's: any divisor is fine */
};

/* Field `name` of the payload's format (NULL: none). */
const struct tp_field *pr__tp_field(const struct tp_format *f, const char *name, size_t len);
/* Field `fl`'s value in `p` (a field past the end reads as 0 or "",
 * noted in p->short_read).  0, or -EINVAL for an array of numbers. */
int pr__tp_field_value(struct tp_payload *p, const struct tp_field *fl, struct tp_value *v);

/* Print `p` through its format's print fmt to `out` (NULL: only see
 * that it evaluates): 0, or -EINVAL when an argument does not evaluate
 * (nothing printed then: the caller falls back to the fields). */
int pr__tp_print_fmt(struct tp_payload *p, FILE *out);

#endif /* PR_TRACEPOINT_H */
