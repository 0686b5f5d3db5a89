/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Compare two listings of the same samples in the layout of `perf script
 * -F comm,tid,time,ip,dso --no-inline`, frame by frame: dwarfsample
 * report's and perf script's.
 *
 * usage: agree-compare OURS PERFS MIN_EQUAL_PERMILLE NAME
 *
 * usage: agree-compare --frames OURS PERFS MIN_EQUAL_PERMILLE NAME
 *
 * usage: agree-compare --or-longer OURS PERFS MIN_PERMILLE NAME
 *
 * Samples are paired in order and must have the same header lines.  A
 * sample is "equal" when every frame is; "longer" when perf's frames are
 * a prefix of ours and our extra frames are valid (see valid_frames():
 * perf stopped early, as where it never reads the last word of a copied
 * stack); anything else is a disagreement.  perf's trailing
 * "ffffffffffffffff ([unknown])" frames are dropped first: they are what
 * perf prints when its memory accessor fails (it answers 0 and libunwind
 * takes that as a return address), not frames of the program, as are
 * its last callers at addresses in no mapping or in data (unmapped_caller());
 * and so is dwarfsample's "[truncated]" line after a cut stack.  Exit 0
 * when there is no disagreement and at least MIN_EQUAL_PERMILLE of the
 * samples are equal, or longer where perf listed no user frame at all
 * (no_user_frame()).
 *
 * With --or-longer the samples that are equal or longer in dwarfsample
 * must be at least MIN_PERMILLE of all, and the rest may disagree: for
 * samples paired from two captures of the same switches (offcpu-pair.c),
 * where each side copied its own snapshot of the stack.
 *
 * With --frames the listings are perf script's default layout, names and
 * inlined frames included, and the unit is the frame line: over the frames
 * both list for a sample (the shorter stack's), at least
 * MIN_EQUAL_PERMILLE must be the same line -- address, symbol, offset and
 * DSO, or the "(inlined)" mark.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE 8192
#define MAX_FRAMES 2048
#define EXAMPLES 3

struct sample {
	char header[MAX_LINE];
	char *frames[MAX_FRAMES];
	size_t nr;
};

static void clear(struct sample *s)
{
	for (size_t i = 0; i < s->nr; i++)
		free(s->frames[i]);
	s->nr = 0;
	s->header[0] = '\0';
}

/* The next sample of `f`: false at the end of the file. */
static bool next_sample(FILE *f, const char *path, struct sample *s)
{
	char line[MAX_LINE];

	clear(s);
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);

		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		if (!n) {
			if (s->header[0])
				return true;
			continue;
		}
		if (line[0] != '\t') {
			if (s->header[0]) {
				fprintf(stderr, "%s: a sample header without a blank line "
					"before it: %s\n", path, line);
				exit(2);
			}
			memcpy(s->header, line, n + 1);
			continue;
		}
		if (!s->header[0] || s->nr == MAX_FRAMES) {
			fprintf(stderr, "%s: a frame line outside a sample, or more "
				"than %d frames: %s\n", path, MAX_FRAMES, line);
			exit(2);
		}
		s->frames[s->nr] = strdup(line + 1 + strspn(line + 1, " "));
		if (!s->frames[s->nr]) {
			perror("agree-compare");
			exit(2);
		}
		s->nr++;
	}
	return s->header[0] != '\0';
}

/* dwarfsample's "[truncated]" pseudo-frame after a cut stack's frames
 * (address 0, as listed without symbols: "0 ([unknown])"): where the
 * callers would be, not a frame perf lists. */
static void drop_truncated_mark(struct sample *s)
{
	if (s->nr && (!strcmp(s->frames[s->nr - 1], "0 ([unknown])") ||
		      !strncmp(s->frames[s->nr - 1], "0 [truncated]", 13))) {
		free(s->frames[--s->nr]);
		s->frames[s->nr] = NULL;
	}
}

/* perf's last frame at an address in no mapping ("200000001 ([unknown])")
 * or in data (data_caller()),
 * when it is not the sampled instruction: a word of the stack its
 * unwinder took for a return address (seen in a cc1 exit handler, under
 * libc's exit(), where dwarfsample went on through exit to _start).  Code
 * runs only where something is mapped. */
/* A frame in a mapping of data the kernel names, "([heap])" or
 * "([stack])": no code runs there (seen as perf's caller of a GMP
 * assembly routine without CFI in cc1, where dwarfsample stopped). */
static bool data_caller(const char *frame)
{
	return strstr(frame, " ([heap])") || strstr(frame, " ([stack])");
}

static bool unmapped_caller(const struct sample *s)
{
	size_t i = s->nr - 1;

	return i > 0 && (strstr(s->frames[i], " ([unknown])") || data_caller(s->frames[i])) &&
	       !strstr(s->frames[i - 1], "([kernel.kallsyms])");
}

/* Whether perf listed no frame of the user stack: every frame the
 * kernel's.  A sample in the kernel's page-fault path whose user stack
 * the kernel could not copy has the user registers still, whose
 * instruction dwarfsample lists as the leaf and perf leaves out; how many
 * such samples there are follows page faults, which load changes. */
static bool no_user_frame(const struct sample *s)
{
	for (size_t i = 0; i < s->nr; i++)
		if (!strstr(s->frames[i], "([kernel.kallsyms])"))
			return false;
	return true;
}

static unsigned long dropped_unmapped;

static void drop_perf_failures(struct sample *s)
{
	while (s->nr && (!strncmp(s->frames[s->nr - 1], "ffffffffffffffff ", 17) ||
			 unmapped_caller(s))) {
		dropped_unmapped += !!strncmp(s->frames[s->nr - 1], "ffffffffffffffff ", 17);
		free(s->frames[--s->nr]);
		s->frames[s->nr] = NULL;
	}
}

/* Frames from `from` on are valid: in mapped files, not addresses that
 * lead nowhere -- except the first user frame, the sampled instruction
 * itself, which perf leaves out when it is in no mapping it knows (a
 * sample taken across an exec, or in code mapped without a record). */
static bool valid_frames(const struct sample *s, size_t from)
{
	for (size_t i = from; i < s->nr; i++) {
		bool kernel = strstr(s->frames[i], "([kernel.kallsyms])") != NULL;
		bool leaf = !kernel && (i == 0 || strstr(s->frames[i - 1], "([kernel.kallsyms])"));

		if (!kernel && !leaf && !strstr(s->frames[i], " (/") &&
		    !strstr(s->frames[i], " (inlined)"))
			return false;
	}
	return true;
}

static void show(const char *name, const char *what, const struct sample *ours,
		 const struct sample *perf)
{
	size_t n = ours->nr > perf->nr ? ours->nr : perf->nr;

	printf("# %s: %s at %s\n#   %-60s | %s\n", name, what, ours->header,
	       "dwarfsample", "perf");
	for (size_t i = 0; i < n; i++)
		printf("#   %-60s | %s\n", i < ours->nr ? ours->frames[i] : "",
		       i < perf->nr ? perf->frames[i] : "");
}

int main(int argc, char **argv)
{
	static struct sample ours, perf;
	unsigned long equal = 0, longer = 0, other = 0, total = 0, permille, no_user = 0;
	unsigned long frames = 0, same_frames = 0, shown_frames = 0;
	FILE *fo, *fp;
	const char *name;
	bool more_ours, more_perf, by_frame = false, or_longer = false;

	if (argc == 6 && !strcmp(argv[1], "--frames")) {
		by_frame = true;
		argc--;
		argv++;
	} else if (argc == 6 && !strcmp(argv[1], "--or-longer")) {
		or_longer = true;
		argc--;
		argv++;
	}
	if (argc != 5) {
		fputs("usage: agree-compare [--frames | --or-longer] OURS PERFS "
		      "MIN_EQUAL_PERMILLE NAME\n", stderr);
		return 2;
	}
	permille = strtoul(argv[3], NULL, 10);
	name = argv[4];
	fo = fopen(argv[1], "r");
	fp = fopen(argv[2], "r");
	if (!fo || !fp) {
		perror("agree-compare");
		return 2;
	}
	for (;;) {
		size_t same = 0;

		more_ours = next_sample(fo, argv[1], &ours);
		more_perf = next_sample(fp, argv[2], &perf);
		if (!more_ours || !more_perf)
			break;
		total++;
		if (strcmp(ours.header, perf.header)) {
			printf("# %s: sample %lu differs: '%s' (dwarfsample) and '%s' (perf)\n",
			       name, total, ours.header, perf.header);
			other++;
			break;
		}
		drop_perf_failures(&perf);
		drop_truncated_mark(&ours);
		if (by_frame) {
			size_t n = ours.nr < perf.nr ? ours.nr : perf.nr;
			bool differs = false;

			for (size_t i = 0; i < n; i++) {
				frames++;
				if (!strcmp(ours.frames[i], perf.frames[i]))
					same_frames++;
				else
					differs = true;
			}
			if (differs && shown_frames++ < EXAMPLES)
				show(name, "disagreement", &ours, &perf);
			continue;
		}
		while (same < ours.nr && same < perf.nr && !strcmp(ours.frames[same],
								    perf.frames[same]))
			same++;
		if (same == ours.nr && same == perf.nr) {
			equal++;
		} else if (same == perf.nr && valid_frames(&ours, same)) {
			no_user += no_user_frame(&perf);
			if (longer++ < EXAMPLES)
				show(name, "longer in dwarfsample", &ours, &perf);
		} else {
			if (other++ < EXAMPLES)
				show(name, "disagreement", &ours, &perf);
		}
	}
	if (more_ours != more_perf) {
		printf("# %s: %s lists more samples than %s\n", name,
		       more_ours ? "dwarfsample" : "perf", more_ours ? "perf" : "dwarfsample");
		other++;
	}
	if (by_frame) {
		bool ok = frames && !more_ours && !more_perf &&
			  same_frames * 1000 >= frames * permille;

		printf("# %s: %lu samples, %lu frames listed by both: %lu the same "
		       "(%.3f%%)\n", name, total, frames, same_frames,
		       frames ? 100.0 * (double)same_frames / (double)frames : 0.0);
		clear(&ours);
		clear(&perf);
		fclose(fo);
		fclose(fp);
		return ok ? 0 : 1;
	}
	printf("# %s: %lu samples: %lu equal (%.2f%%), %lu longer in dwarfsample, "
	       "%lu disagreeing\n", name, total, equal,
	       total ? 100.0 * (double)equal / (double)total : 0.0, longer, other);
	if (no_user)
		printf("# %s: of them, %lu where perf listed no user frame (the kernel "
		       "copied none of the stack), counted with the equal\n", name, no_user);
	if (dropped_unmapped)
		printf("# %s: %lu of perf's last frames in no mapping or in data left out\n",
		       name, dropped_unmapped);
	clear(&ours);
	clear(&perf);
	fclose(fo);
	fclose(fp);
	if (or_longer)
		return total && (equal + longer) * 1000 >= total * permille ? 0 : 1;
	return total && !other && (equal + no_user) * 1000 >= total * permille ? 0 : 1;
}
