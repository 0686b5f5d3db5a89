/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An interactive SVG flame graph, one self-contained file a browser opens
 * with nothing else installed: the stacks merged into a tree ("all", then
 * a process or thread, then its frames root first), drawn root at the
 * bottom, with a script for details on hover, zoom on click and search.
 * In an off-CPU or wall-clock profile widths are time, the tooltips say
 * it in seconds, milliseconds or microseconds, and what was spent waiting
 * is drawn blue.
 *
 * The tree is flametree.c's; memory is the tree's, not the samples'.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"

enum {
	IMAGE_WIDTH = 1200,
	SIDE = 10,                   /* margin left and right */
	FRAME_HEIGHT = 16,
	TOP = 60,                    /* title, subtitle, controls */
	BOTTOM = 30,                 /* the details line */
	FONT_SIZE = 12,
};

#define FRAMES_WIDTH (IMAGE_WIDTH - 2 * SIDE)
/* Verdana's mean advance at 12px, for fitting names without measuring
 * them: an overrun of a character or two is hidden by the next frame. */
#define CHAR_WIDTH 7.0
/* Narrower frames are not drawn (their samples stay in their parents'):
 * a file of sub-pixel slivers is slow to open and shows nothing. */
#define MIN_WIDTH 0.1

/* ---- numbers, as printf writes them ---- */

/* A frame's line holds a dozen numbers, and printf's parsing and exact
 * float conversion were a tenth of writing a graph.  These write the same
 * text: `v` in decimal at `p`, and the text's end. */
static char *put_u64(char *p, uint64_t v)
{
	char digits[20];
	size_t n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = digits[--n];
	return p;
}

/* "%.*f" of a value >= 0 with 1 or 2 decimals, or NULL where rounding it
 * needs printf's exact expansion: a tie, or too large a number. */
static char *put_fixed(char *p, double v, int decimals)
{
	double scale = decimals == 1 ? 10.0 : 100.0, x = v * scale, r;
	uint64_t units;

	if (!(v >= 0) || x >= 1e9)
		return NULL;
	r = x - (double)(uint64_t)x;
	/* Within reach of a half, the scaled value's own rounding error
	 * could decide: printf's. */
	if (r > 0.5 - 1e-6 && r < 0.5 + 1e-6)
		return NULL;
	units = (uint64_t)x + (r > 0.5);
	p = put_u64(p, units / (uint64_t)scale);
	*p++ = '.';
	if (decimals == 2)
		*p++ = (char)('0' + units / 10 % 10);
	*p++ = (char)('0' + units % 10);
	return p;
}

static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

/* "%.*f" of `v` at `p`, by hand where that is exact. */
static char *put_double(char *p, double v, int decimals)
{
	char *e = put_fixed(p, v, decimals);

	return e ? e : p + sprintf(p, "%.*f", decimals, v);
}

/* ---- drawing ---- */

static double width_of(uint64_t count, uint64_t total)
{
	return (double)count * FRAMES_WIDTH / (double)total;
}

/* The palettes: one per kind of frame, then frames whose time was mostly
 * off the CPU. */
enum { PAL_OFF_CPU = PROF_TREE_KINDS, NR_PALETTES };

/*
 * A frame's fill: a hue range per palette, and a place in it by a hash of
 * the name, so that a function has the same colour wherever it is and in
 * every graph.  User code is warm (red to yellow), kernel a warm grey,
 * JIT green, inlined functions aqua.  Off the CPU, as off-CPU flame graphs
 * draw it, is blue: a frame mostly waiting is sky blue, and the wait
 * itself, the leaf, blue-violet when blocked and teal when preempted,
 * each one colour.  No other palette is near blue: a blue kernel, in a
 * wall-clock graph, read as waiting where it ran.
 */
static void frame_color(const char *label, int palette, int rgb[3])
{
	static const struct { uint8_t lo[3], span[3]; } palettes[NR_PALETTES] = {
		[PROF_TREE_USER] = { { 205, 40, 0 }, { 50, 190, 55 } },
		[PROF_TREE_KERNEL] = { { 165, 150, 130 }, { 45, 40, 35 } },
		[PROF_TREE_JIT] = { { 50, 185, 50 }, { 70, 55, 70 } },
		[PROF_TREE_INLINE] = { { 60, 200, 200 }, { 60, 40, 40 } },
		[PROF_TREE_BLOCKED] = { { 120, 105, 235 }, { 0, 0, 0 } },
		[PROF_TREE_PREEMPTED] = { { 0, 185, 160 }, { 0, 0, 0 } },
		[PAL_OFF_CPU] = { { 40, 150, 225 }, { 60, 50, 30 } },
	};
	uint64_t h = prof__tree_hash(0, label);
	/* One value moves along the range's axis, so a warm frame goes
	 * from red to yellow rather than to a muddy mix. */
	double v = (double)(h & 0xffff) / 0xffff, w = (double)(h >> 16 & 0xffff) / 0xffff;

	for (int c = 0; c < 3; c++)
		rgb[c] = palettes[palette].lo[c] +
			 (int)(palettes[palette].span[c] * (c == 2 ? w : v));
}

/* A frame's palette: its kind's, unless over half its time was spent off
 * the CPU (a wait's pseudo-frame keeps its own). */
static int palette_of(const struct prof_tree_node *n)
{
	if (n->kind < PROF_TREE_BLOCKED && n->off_cpu > n->count / 2)
		return PAL_OFF_CPU;
	return n->kind;
}

/* A time for people: three figures in the unit that suits it. */
static void format_time(char *buf, size_t len, uint64_t ns)
{
	static const struct { double div; const char *unit; } units[] = {
		{ 1e9, "s" }, { 1e6, "ms" }, { 1e3, "\xc2\xb5s" },
	};

	for (size_t i = 0; i < PR_ARRAY_SIZE(units); i++) {
		double v = (double)ns / units[i].div;

		if (v >= 1) {
			snprintf(buf, len, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v,
				 units[i].unit);
			return;
		}
	}
	snprintf(buf, len, "%" PRIu64 " ns", ns);
}

/* What a frame's or the graph's value is, "12 samples" or "1.23 s"; of
 * a profile's `event`, "12 page-faults" or "1.23 s task-clock". */
static void format_value(char *buf, size_t len, const struct pr_profile *p, size_t event,
			 uint64_t v)
{
	char time[32];

	if (p->nr_events && p->events[event].ns) {
		format_time(time, sizeof(time), v);
		snprintf(buf, len, "%s %s", time, prof_str(p, p->events[event].name));
	} else if (p->nr_events) {
		snprintf(buf, len, "%" PRIu64 " %s", v, prof_str(p, p->events[event].name));
	} else if (prof__in_ns(p, event)) {
		format_time(buf, len, v);
	} else if (len >= 32) {
		strcpy(put_u64(buf, v), v == 1 ? " sample" : " samples");
	} else {
		snprintf(buf, len, "%" PRIu64 " sample%s", v, v == 1 ? "" : "s");
	}
}

/* The name, cut with ".." to what `width` pixels hold (nothing when even
 * that does not fit), escaped.  Cuts fall between UTF-8 characters. */
static void write_fitted(FILE *out, const char *s, double width)
{
	long fit = (long)((width - 6) / CHAR_WIDTH);
	size_t chars = 0, cut = 0;
	char buf[1024];

	for (const char *c = s; *c; c++)
		if ((*c & 0xc0) != 0x80 && chars++ == (size_t)(fit > 2 ? fit - 2 : 0))
			cut = (size_t)(c - s);
	if ((long)chars <= fit) {
		pr__xml_text(out, s);
	} else if (fit >= 3 && cut < sizeof(buf) - 3) {
		memcpy(buf, s, cut);
		memcpy(buf + cut, "..", 3);
		pr__xml_text(out, buf);
	}
}

static void write_frame(FILE *out, const struct pr_profile *p, size_t event,
			const struct prof_tree_node *n, uint64_t total, int height)
{
	double x = SIDE + width_of(n->offset, total), w = width_of(n->count, total);
	int y = height - BOTTOM - (int)(n->depth + 1) * FRAME_HEIGHT, rgb[3];
	char value[256], buf[512], *b = buf;

	frame_color(n->label, palette_of(n), rgb);
	format_value(value, sizeof(value), p, event, n->count);
	/* What fprintf wrote: "<g class="f" data-o="%lu" data-n="%lu"
	 * data-d="%u"><title>", the name, " (%s, %.2f%%[, %.1f%% off-CPU])
	 * </title><rect x="%.1f" y="%d" width="%.1f" height="%d"
	 * fill="rgb(%d,%d,%d)" rx="2"/><text x="%.1f" y="%.1f">". */
	b = put_str(b, "<g class=\"f\" data-o=\"");
	b = put_u64(b, n->offset);
	b = put_str(b, "\" data-n=\"");
	b = put_u64(b, n->count);
	b = put_str(b, "\" data-d=\"");
	b = put_u64(b, n->depth);
	b = put_str(b, "\"><title>");
	fwrite(buf, 1, (size_t)(b - buf), out);
	pr__xml_text(out, n->label);
	b = buf;
	*b++ = ' ';
	*b++ = '(';
	b = put_str(b, value);
	b = put_str(b, ", ");
	b = put_double(b, 100.0 * (double)n->count / (double)total, 2);
	*b++ = '%';
	/* Where both are, say how much of it was waiting. */
	if (p->mode == PR_PROFILE_WALL && n->off_cpu && n->count) {
		b = put_str(b, ", ");
		b = put_double(b, 100.0 * (double)n->off_cpu / (double)n->count, 1);
		b = put_str(b, "% off-CPU");
	}
	b = put_str(b, ")</title><rect x=\"");
	b = put_double(b, x, 1);
	b = put_str(b, "\" y=\"");
	b += sprintf(b, "%d", y);
	b = put_str(b, "\" width=\"");
	b = put_double(b, w, 1);
	b = put_str(b, "\" height=\"");
	b = put_u64(b, FRAME_HEIGHT - 1);
	b = put_str(b, "\" fill=\"rgb(");
	for (int c = 0; c < 3; c++) {
		b = put_u64(b, (uint64_t)rgb[c]);
		*b++ = c < 2 ? ',' : ')';
	}
	b = put_str(b, "\" rx=\"2\"/><text x=\"");
	b = put_double(b, x + 3, 1);
	b = put_str(b, "\" y=\"");
	b = put_double(b, y + FRAME_HEIGHT * 0.72, 1);
	b = put_str(b, "\">");
	fwrite(buf, 1, (size_t)(b - buf), out);
	write_fitted(out, n->label, w);
	fputs("</text></g>\n", out);
}

/* Swatches and their names from `x` on the legend's line, or ending at
 * `x` with `right`. */
static void write_swatches(FILE *out, const int *palettes, const char *const *names, int nr,
			   int x, bool right)
{
	int rgb[3];

	if (right)
		for (int i = 0; i < nr; i++)
			x -= 14 + (int)(strlen(names[i]) * CHAR_WIDTH) + (i + 1 < nr ? 12 : 0);
	for (int i = 0; i < nr; i++) {
		frame_color("", palettes[i], rgb);
		fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" rx=\"2\""
			" fill=\"rgb(%d,%d,%d)\"/><text x=\"%d\" y=\"%d\" class=\"ctl-off\">%s</text>\n",
			x, TOP - 20, rgb[0], rgb[1], rgb[2], x + 14, TOP - 11, names[i]);
		x += 14 + (int)(strlen(names[i]) * CHAR_WIDTH) + 12;
	}
}

/* The kinds of frame on the left; with waits, what blue means on the
 * right. */
static void write_legend(FILE *out, bool waits)
{
	static const int kinds[] = {
		PROF_TREE_USER, PROF_TREE_KERNEL, PROF_TREE_JIT, PROF_TREE_INLINE,
	};
	static const char *const kind_names[] = { "user", "kernel", "JIT", "inlined" };
	static const int off[] = { PAL_OFF_CPU, PROF_TREE_BLOCKED, PROF_TREE_PREEMPTED };
	static const char *const off_names[] = {
		"blue: mostly off the CPU", "blocked", "preempted",
	};

	write_swatches(out, kinds, kind_names, (int)PR_ARRAY_SIZE(kinds), SIDE, false);
	if (waits)
		write_swatches(out, off, off_names, (int)PR_ARRAY_SIZE(off), IMAGE_WIDTH - SIDE,
			       true);
}

/* Runs when the document has been parsed (it is the last element).  Each
 * frame's data-o, data-n and data-d (offset, samples, depth) say where it
 * is, exactly, so zooming needs no geometry read back from the page. */
static const char script[] =
"var frames = [], total = 0, zoomed = null, searching = null, lastRe = '';\n"
"var byId = function (id) { return document.getElementById(id); };\n"
"var details = byId('details'), matched = byId('matched');\n"
"var unzoom = byId('unzoom'), searchCtl = byId('search');\n"
"var gs = byId('frames').getElementsByTagName('g');\n"
"for (var i = 0; i < gs.length; i++) {\n"
"  var g = gs[i], info = g.getElementsByTagName('title')[0].textContent;\n"
"  var f = { g: g, rect: g.getElementsByTagName('rect')[0],\n"
"    text: g.getElementsByTagName('text')[0], info: info,\n"
"    name: info.slice(0, info.lastIndexOf(' (')),\n"
"    o: +g.getAttribute('data-o'), n: +g.getAttribute('data-n'),\n"
"    d: +g.getAttribute('data-d') };\n"
"  f.fill = f.rect.getAttribute('fill');\n"
"  g.frame = f;\n"
"  frames.push(f);\n"
"  if (f.d === 0) total = f.n;\n"
"}\n"
"function frameOf(el) {\n"
"  while (el && !el.frame) el = el.parentNode;\n"
"  return el ? el.frame : null;\n"
"}\n"
"function fitName(f, w) {\n"
"  var room = Math.floor((w - 6) / CHAR_W), s = f.name;\n"
"  if (s.length > room) s = room < 3 ? '' : s.slice(0, room - 2) + '..';\n"
"  f.text.textContent = s;\n"
"}\n"
"/* Fill the width with z (null: everything); its ancestors span the\n"
"   width dimmed, what is neither it, below it nor above it is hidden. */\n"
"function zoom(z) {\n"
"  var zo = z ? z.o : 0, zn = z ? z.n : total, zd = z ? z.d : 0;\n"
"  zoomed = z;\n"
"  unzoom.setAttribute('class', z ? 'ctl' : 'ctl-off');\n"
"  frames.forEach(function (f) {\n"
"    var inside = f.o >= zo && f.o + f.n <= zo + zn;\n"
"    var above = f.d < zd && f.o <= zo && f.o + f.n >= zo + zn;\n"
"    var x = SIDE, w = WIDTH;\n"
"    if (!(above || (inside && f.d >= zd))) {\n"
"      f.g.setAttribute('display', 'none');\n"
"      return;\n"
"    }\n"
"    f.g.removeAttribute('display');\n"
"    f.g.setAttribute('class', above ? 'f dim' : 'f');\n"
"    if (!above) {\n"
"      x = SIDE + (f.o - zo) * WIDTH / zn;\n"
"      w = f.n * WIDTH / zn;\n"
"    }\n"
"    f.rect.setAttribute('x', x.toFixed(1));\n"
"    f.rect.setAttribute('width', w.toFixed(1));\n"
"    f.text.setAttribute('x', (x + 3).toFixed(1));\n"
"    fitName(f, w);\n"
"  });\n"
"}\n"
"/* Colour the frames whose name matches re (null: none).  The matched\n"
"   share counts a sample once even when a match is below another. */\n"
"function highlight(re) {\n"
"  var hits = [], sum = 0, end = -1;\n"
"  searching = re;\n"
"  frames.forEach(function (f) {\n"
"    var hit = re !== null && re.test(f.name);\n"
"    f.rect.setAttribute('fill', hit ? HIT : f.fill);\n"
"    if (hit) hits.push(f);\n"
"  });\n"
"  hits.sort(function (a, b) { return a.o - b.o || a.d - b.d; });\n"
"  hits.forEach(function (f) {\n"
"    if (f.o >= end) { sum += f.n; end = f.o + f.n; }\n"
"  });\n"
"  searchCtl.textContent = re ? 'Reset Search' : 'Search';\n"
"  matched.textContent = re ? 'Matched: ' + (total ? 100 * sum / total : 0).toFixed(2) +\n"
"    '% (' + hits.length + ' frames)' : '';\n"
"}\n"
"function askSearch() {\n"
"  var s = prompt('Search for (regular expression):', lastRe), re;\n"
"  if (s === null || s === '') return;\n"
"  try { re = new RegExp(s); } catch (e) { alert('Not a regular expression: ' + e.message); return; }\n"
"  lastRe = s;\n"
"  highlight(re);\n"
"}\n"
"byId('frames').addEventListener('mouseover', function (e) {\n"
"  var f = frameOf(e.target);\n"
"  if (f) details.textContent = f.info;\n"
"});\n"
"byId('frames').addEventListener('mouseout', function () { details.textContent = ' '; });\n"
"byId('frames').addEventListener('click', function (e) {\n"
"  var f = frameOf(e.target);\n"
"  if (f) zoom(f.d === 0 ? null : f);\n"
"});\n"
"unzoom.addEventListener('click', function () { zoom(null); });\n"
"searchCtl.addEventListener('click', function () {\n"
"  if (searching) highlight(null); else askSearch();\n"
"});\n"
"window.addEventListener('keydown', function (e) {\n"
"  if ((e.ctrlKey || e.metaKey) && (e.key === 'f' || e.key === 'F' || e.keyCode === 70)) {\n"
"    e.preventDefault();\n"
"    askSearch();\n"
"  } else if (e.key === 'Escape') {\n"
"    if (searching) highlight(null); else if (zoomed) zoom(null);\n"
"  }\n"
"});\n"
"})();\n";

/* The samples of event `event`. */
static uint64_t event_samples(const struct pr_profile *p, size_t event)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < p->nr_stacks; i++)
		if (p->stacks[i].event == event)
			n += p->stacks[i].count;
	return n;
}

/* The subtitle: how much was sampled (of which event), and over what
 * time.  Short in a profile with waits: the legend of their colours is
 * on its right. */
static void write_summary(FILE *out, const struct pr_profile *p, size_t event, uint64_t total,
			  uint64_t off_cpu)
{
	char all[256], on[64], off[64];

	format_value(all, sizeof(all), p, event, total);
	if (p->mode == PR_PROFILE_CPU) {
		fputs(all, out);
		if (p->nr_events) {
			uint64_t n = event_samples(p, event);

			fprintf(out, " in %" PRIu64 " sample%s", n, n == 1 ? "" : "s");
		}
		if (p->freq)
			fprintf(out, " at %" PRIu64 " Hz", p->freq);
		if (p->duration_ns)
			fprintf(out, " over %.2f s", (double)p->duration_ns / 1e9);
		return;
	}
	if (p->mode == PR_PROFILE_OFF_CPU) {
		fprintf(out, "%s off the CPU", all);
	} else {
		format_time(on, sizeof(on), total - off_cpu);
		format_time(off, sizeof(off), off_cpu);
		fprintf(out, "%s wall-clock: %s on the CPU, %s off it", all, on, off);
	}
	/* The threads' times add up to more than the run's when several
	 * ran at once. */
	if (p->duration_ns) {
		format_time(all, sizeof(all), p->duration_ns);
		fprintf(out, " (a %s run)", all);
	}
}

static void write_header(FILE *out, const struct pr_profile *p, size_t event, const char *title,
			 uint64_t total, uint64_t off_cpu, int height)
{
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\""
		" height=\"%d\" viewBox=\"0 0 %d %d\">\n", IMAGE_WIDTH, height, IMAGE_WIDTH, height);
	fputs("<defs><linearGradient id=\"bg\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
	      "<stop offset=\"0\" stop-color=\"#fbfbf8\"/>"
	      "<stop offset=\"1\" stop-color=\"#eeecdc\"/></linearGradient></defs>\n"
	      "<style>\n"
	      "text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }\n"
	      "#title { font-size: 17px; }\n"
	      ".f { cursor: pointer; }\n"
	      ".f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	      ".f text { pointer-events: none; }\n"
	      ".dim { opacity: 0.5; }\n"
	      ".ctl { cursor: pointer; fill: #2a55a0; }\n"
	      ".ctl-off { fill: #555; }\n"
	      "#unzoom.ctl-off { opacity: 0; cursor: default; }\n"
	      "</style>\n", out);
	fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"url(#bg)\"/>\n"
		"<text id=\"title\" x=\"%d\" y=\"24\" text-anchor=\"middle\">",
		IMAGE_WIDTH / 2);
	pr__xml_text(out, title);
	fprintf(out, "</text>\n<text id=\"subtitle\" x=\"%d\" y=\"%d\" text-anchor=\"middle\""
		" class=\"ctl-off\">", IMAGE_WIDTH / 2, TOP - 11);
	write_summary(out, p, event, total, off_cpu);
	fprintf(out, "</text>\n"
		"<text id=\"unzoom\" x=\"%d\" y=\"24\" class=\"ctl-off\">Reset Zoom</text>\n"
		"<text id=\"search\" x=\"%d\" y=\"24\" text-anchor=\"end\" class=\"ctl\">Search</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"></text>\n",
		SIDE, IMAGE_WIDTH - SIDE, SIDE, height - 10, IMAGE_WIDTH - SIDE, height - 10);
	write_legend(out, off_cpu != 0);
}

int pr__out_svg(const struct pr_profile *p, FILE *out, const struct pr_profile_write_opts *o)
{
	struct prof_tree t = { 0 };
	uint32_t max_depth = 0;
	uint64_t total;
	int ret, height;

	if ((ret = prof__tree_build(&t, p, o)) || (ret = prof__tree_layout(&t, NULL)))
		goto out;
	total = t.nodes[0].count;
	for (uint32_t i = 0; total && i < t.nr; i++)
		if (width_of(t.nodes[i].count, total) >= MIN_WIDTH && t.nodes[i].depth > max_depth)
			max_depth = t.nodes[i].depth;
	height = TOP + (int)(max_depth + 1) * FRAME_HEIGHT + BOTTOM;
	write_header(out, p, o->event, o->title ? o->title : "dwarfsample", total,
		     t.nodes[0].off_cpu, height);
	fputs("<g id=\"frames\">\n", out);
	/* A narrow frame's children are narrower still: skipping by width
	 * alone drops whole subtrees. */
	for (uint32_t i = 0; total && i < t.nr && !ferror(out); i++)
		if (width_of(t.nodes[i].count, total) >= MIN_WIDTH)
			write_frame(out, p, o->event, &t.nodes[i], total, height);
	fputs("</g>\n", out);
	if (!total)
		fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" class=\"ctl-off\">"
			"No samples</text>\n", IMAGE_WIDTH / 2, TOP + FRAME_HEIGHT - 4);
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n(function () {\n"
		"\"use strict\";\nvar SIDE = %d, WIDTH = %d, CHAR_W = %.1f, HIT = 'rgb(230,0,230)';\n",
		SIDE, FRAMES_WIDTH, CHAR_WIDTH);
	fputs(script, out);
	fputs("]]></script>\n</svg>\n", out);
	if (ferror(out))
		ret = -EIO;
out:
	prof__tree_free(&t);
	return ret;
}
