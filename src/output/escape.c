/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Names as JSON strings and XML text.  Symbol names come from binaries and
 * process names from the kernel, so any byte can be in them: both writers
 * decode UTF-8 strictly and put U+FFFD for a byte that is not part of a
 * valid sequence, since one bad byte makes a whole JSON or XML file
 * unreadable to a strict parser.
 */
#include <stdint.h>

#include "output/output.h"

static const char replacement[] = "\xef\xbf\xbd";  /* U+FFFD in UTF-8 */

/* Write the bytes of `s` that need no escaping up to the first that does
 * (`special` says which) in one call; return where that one is. */
static const unsigned char *copy_plain(FILE *out, const unsigned char *s,
				       bool (*special)(unsigned char))
{
	const unsigned char *end = s;

	while (*end && !special(*end))
		end++;
	if (end > s)
		fwrite(s, 1, (size_t)(end - s), out);
	return end;
}

static bool json_special(unsigned char c)
{
	return c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
}

void pr__json_string(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");

	fputc('"', out);
	while (*(s = copy_plain(out, s, json_special))) {
		uint32_t cp;
		size_t n;

		if (*s == '"' || *s == '\\') {
			fputc('\\', out);
			fputc(*s++, out);
		} else if (*s < 0x20) {
			fprintf(out, "\\u%04x", *s++);
		} else if ((n = pr__utf8_decode(s, &cp))) {
			fwrite(s, 1, n, out);
			s += n;
		} else {
			fputs(replacement, out);
			s++;
		}
	}
	fputc('"', out);
}

static bool xml_special(unsigned char c)
{
	return c < 0x20 || c == '&' || c == '<' || c == '>' || c == '"' || c == '\'' ||
	       c >= 0x80;
}

void pr__xml_text(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");

	while (*(s = copy_plain(out, s, xml_special))) {
		uint32_t cp;
		size_t n;

		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		case '\t':
		case '\n':
			fputc(*s, out);
			break;
		default:
			/* XML 1.0 has no way to write the other C0 controls,
			 * not even as a character reference: leave them out.
			 * A carriage return is allowed, but a parser turns
			 * it into a line feed anyway. */
			if (*s < 0x80)
				break;
			n = pr__utf8_decode(s, &cp);
			/* U+FFFE and U+FFFF are not XML characters either. */
			if (n && cp != 0xfffe && cp != 0xffff)
				fwrite(s, 1, n, out);
			else if (!n)
				fputs(replacement, out);
			s += n ? n - 1 : 0;
			break;
		}
		s++;
	}
}
