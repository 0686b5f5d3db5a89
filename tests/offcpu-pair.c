/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pair the samples of two captures of the same context switches, taken
 * at once by two profilers: dwarfsample's off-CPU samples (the
 * context-switches event) and perf's sched:sched_switch samples, both as
 * `-F comm,tid,time,event,ip,dso --no-inline` listings.  Both events fire
 * in the same switch, the tracepoint first; how far apart depends on the
 * machine (up to 105 us apart here under load, 2.1 ms once when the host
 * descheduled the virtual CPU between the two), so no window of time
 * pairs them.  Their order does: a switch's sample of ours comes at or
 * after perf's of that switch, and before perf's of the thread's next
 * switch, which cannot fire until the thread has run again.  So, per
 * thread in time order, a sample of ours is paired with perf's latest
 * sample at or before it, one to one.  Each pair is written to OURS_OUT
 * and PERF_OUT under the same header ("TID TIME:"), with the user frames
 * only (perf's tracepoint samples carry the kernel's chain too; ours
 * carry none without -k, and a synthetic "[off-cpu: ...]" frame, dropped
 * here), for agree-compare.
 *
 * usage: offcpu-pair OURS PERF OURS_OUT PERF_OUT MIN_PAIRED_PERMILLE NAME
 *
 * Exit 0 when at least MIN_PAIRED_PERMILLE of the samples on each side
 * were paired: neither profiler missed a switch the other saw.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE 8192

struct sample {
	long tid;
	unsigned long long ns;
	char *header;     /* "TID TIME:" as perf printed it */
	char *frames;     /* user frame lines, each ending in '\n' */
	int nr_lines;     /* frame lines read, kernel and pseudo frames too */
	int paired;
	/* A wait under way when the capture started ("[off-cpu: blocked
	 * since before the start]", from the snapshot taken at attach):
	 * its switch came before either profiler sampled, so perf has no
	 * sample of it. */
	int before_start;
};

struct listing {
	struct sample *s;
	size_t nr, cap;
};

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		perror("offcpu-pair");
		exit(2);
	}
	return p;
}

static void append(char **buf, const char *line)
{
	size_t old = *buf ? strlen(*buf) : 0, n = strlen(line);

	*buf = xrealloc(*buf, old + n + 2);
	memcpy(*buf + old, line, n);
	(*buf)[old + n] = '\n';
	(*buf)[old + n + 1] = '\0';
}

/* "comm tid time: ..." -- the comm may hold spaces: the time is the first
 * word that is digits, a dot, digits and a colon, the tid the word before. */
static int parse_header(const char *line, struct sample *s)
{
	char copy[MAX_LINE], *words[64], *w, *save = NULL;
	int n = 0;

	snprintf(copy, sizeof(copy), "%s", line);
	for (w = strtok_r(copy, " ", &save); w && n < 64; w = strtok_r(NULL, " ", &save))
		words[n++] = w;
	for (int i = 1; i < n; i++) {
		unsigned long long sec;
		char frac[16], colon;
		int len;

		if (sscanf(words[i], "%llu.%15[0-9]%c", &sec, frac, &colon) != 3 || colon != ':')
			continue;
		s->tid = strtol(words[i - 1], NULL, 10);
		s->ns = sec * 1000000000ull;
		len = (int)strlen(frac);
		for (unsigned long long d = 0, scale = 100000000ull; d < (unsigned)len && scale;
		     d++, scale /= 10)
			s->ns += (unsigned long long)(frac[d] - '0') * scale;
		s->header = xrealloc(NULL, strlen(words[i - 1]) + strlen(words[i]) + 2);
		sprintf(s->header, "%s %s", words[i - 1], words[i]);
		return 0;
	}
	return -1;
}

static void read_listing(const char *path, struct listing *l)
{
	char line[MAX_LINE];
	struct sample *cur = NULL;
	FILE *f = fopen(path, "r");

	if (!f) {
		perror(path);
		exit(2);
	}
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);

		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		if (!n) {
			cur = NULL;
			continue;
		}
		if (line[0] != '\t') {
			if (l->nr == l->cap) {
				l->cap = l->cap ? 2 * l->cap : 1024;
				l->s = xrealloc(l->s, l->cap * sizeof(*l->s));
			}
			cur = &l->s[l->nr];
			memset(cur, 0, sizeof(*cur));
			if (parse_header(line, cur)) {
				fprintf(stderr, "%s: not a sample header: %s\n", path, line);
				exit(2);
			}
			l->nr++;
			continue;
		}
		if (!cur) {
			fprintf(stderr, "%s: a frame outside a sample: %s\n", path, line);
			exit(2);
		}
		/* Its frame, the sample's first (the leaf's place): the label
		 * with sym in the fields, else address 0 in no file (no frame
		 * of code is there).  The same "0 ([unknown])" last, after a
		 * stack's frames, is the "[truncated]" mark of a stack the copy
		 * cut: a thread preempted before its first instruction, whose
		 * fresh stack the kernel could not copy, has clone3's frame and
		 * that mark, and its switch is one perf sampled too. */
		if (strstr(line, "blocked since before the start") ||
		    (!cur->nr_lines && !strcmp(line + strspn(line, "\t "), "0 ([unknown])")))
			cur->before_start = 1;
		cur->nr_lines++;
		if (strstr(line, "([kernel.kallsyms])") || strstr(line, "off-cpu"))
			continue;
		append(&cur->frames, line);
	}
	fclose(f);
}

static int by_tid_time(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->ns < y->ns ? -1 : x->ns > y->ns;
}

static void emit(FILE *f, const char *header, const struct sample *s)
{
	fprintf(f, "%s\n%s\n", header, s->frames ? s->frames : "");
}

int main(int argc, char **argv)
{
	struct listing ours = { 0 }, perf = { 0 };
	unsigned long permille, pairs = 0, before = 0;
	size_t i = 0, j = 0;
	FILE *oo, *po;
	int ok;

	if (argc != 7) {
		fputs("usage: offcpu-pair OURS PERF OURS_OUT PERF_OUT MIN_PAIRED_PERMILLE NAME\n",
		      stderr);
		return 2;
	}
	read_listing(argv[1], &ours);
	read_listing(argv[2], &perf);
	/* Ours of waits begun before the start are not switches perf could
	 * see: left out, and said. */
	for (size_t k = 0; k < ours.nr; k++) {
		if (ours.s[k].before_start) {
			free(ours.s[k].header);
			free(ours.s[k].frames);
			before++;
		} else {
			ours.s[k - before] = ours.s[k];
		}
	}
	ours.nr -= before;
	permille = strtoul(argv[5], NULL, 10);
	oo = fopen(argv[3], "w");
	po = fopen(argv[4], "w");
	if (!oo || !po) {
		perror("offcpu-pair");
		return 2;
	}
	qsort(ours.s, ours.nr, sizeof(*ours.s), by_tid_time);
	qsort(perf.s, perf.nr, sizeof(*perf.s), by_tid_time);
	while (i < ours.nr && j < perf.nr) {
		struct sample *o = &ours.s[i], *p = &perf.s[j];
		const struct sample *next = j + 1 < perf.nr ? &perf.s[j + 1] : NULL;

		if (o->tid != p->tid) {
			if (o->tid < p->tid)
				i++;
			else
				j++;
		} else if (o->ns < p->ns) {
			/* Before perf's sample of the switch: ours of a switch
			 * perf did not see. */
			i++;
		} else if (next && next->tid == p->tid && next->ns <= o->ns) {
			/* Ours is of a later switch: perf's of one we missed. */
			j++;
		} else {
			o->paired = p->paired = 1;
			emit(oo, p->header, o);
			emit(po, p->header, p);
			pairs++;
			i++;
			j++;
		}
	}
	fclose(oo);
	fclose(po);
	ok = ours.nr && perf.nr && pairs * 1000 >= ours.nr * permille &&
	     pairs * 1000 >= perf.nr * permille;
	printf("# %s: %zu off-CPU samples of ours, %zu of perf's, %lu paired in switch order "
	       "(%.2f%% of ours, %.2f%% of perf's)\n", argv[6], ours.nr, perf.nr, pairs,
	       ours.nr ? 100.0 * (double)pairs / (double)ours.nr : 0.0,
	       perf.nr ? 100.0 * (double)pairs / (double)perf.nr : 0.0);
	if (before)
		printf("# %s: %lu of ours left out: waits begun before the start, a switch "
		       "neither saw\n", argv[6], before);
	if (!ok) {
		int shown = 0;

		for (size_t k = 0; k < ours.nr && shown < 5; k++)
			if (!ours.s[k].paired && ++shown)
				printf("#   ours unpaired: %s\n", ours.s[k].header);
		shown = 0;
		for (size_t k = 0; k < perf.nr && shown < 5; k++)
			if (!perf.s[k].paired && ++shown)
				printf("#   perf's unpaired: %s\n", perf.s[k].header);
	}
	for (size_t k = 0; k < ours.nr; k++) {
		free(ours.s[k].header);
		free(ours.s[k].frames);
	}
	for (size_t k = 0; k < perf.nr; k++) {
		free(perf.s[k].header);
		free(perf.s[k].frames);
	}
	free(ours.s);
	free(perf.s);
	return ok ? 0 : 1;
}
