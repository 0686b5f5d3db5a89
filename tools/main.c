/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dwarfsample: the command-line entry point.  Without a verb it profiles
 * (live.c); record, report, dump, stat and agent are verbs of their own.
 */
#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "dump.h"
#include "live.h"
#include "record.h"
#include "report.h"
#include "stat.h"

#ifndef DS_VERSION
#define DS_VERSION "unknown"
#endif

/* What a bare `dwarfsample` and `dwarfsample help` print: the commands
 * people start with, and where the rest is. */
static void short_usage(FILE *out)
{
	fputs("usage: dwarfsample [options] -- CMD [ARGS...]  profile a command: a flame graph\n"
	      "       dwarfsample [options] -p PID | -a        profile processes, or every CPU\n"
	      "       dwarfsample record [options] -- CMD      sample into ./perf.data\n"
	      "       dwarfsample report [-i FILE] [-o OUT]    its stacks, or a profile\n"
	      "       dwarfsample stat [options] -- CMD        count events, as perf stat\n"
	      "       dwarfsample dump | agent ...             records as text; always on\n"
	      "\n"
	      "  e.g. dwarfsample -F 999 -d 10s -o out.svg -- ./myprog arg\n"
	      "\n"
	      "All the options: dwarfsample -h; a command's: dwarfsample help VERB\n"
	      "(or dwarfsample VERB -h); everything: man dwarfsample.\n", out);
}

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} verbs[] = {
	{ "agent", ds_cmd_agent }, { "dump", ds_cmd_dump }, { "record", ds_cmd_record },
	{ "report", ds_cmd_report }, { "stat", ds_cmd_stat },
};

/* `dwarfsample help [VERB]`: the short usage, or VERB --help. */
static int help(int argc, char **argv)
{
	char help_opt[] = "--help";

	/* `help VERB --help` (and `help --help`) asks for the same. */
	if (argc > 1 && (!strcmp(argv[argc - 1], "--help") || !strcmp(argv[argc - 1], "-h")))
		argc--;
	if (argc < 2) {
		short_usage(stdout);
		return 0;
	}
	if (argc > 2) {
		fprintf(stderr, "dwarfsample: help takes one command: dwarfsample help VERB\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(argv[1], verbs[i].name))
			return verbs[i].run(2, (char *[]){ argv[1], help_opt, NULL });
	/* The profiling command's options are the bare command's. */
	if (!strcmp(argv[1], "profile") || !strcmp(argv[1], "live")) {
		ds_live_usage(stdout);
		return 0;
	}
	fprintf(stderr, "dwarfsample: no command '%s': the commands are record, report, dump, "
		"stat and agent (dwarfsample -h: the profiling options)\n", argv[1]);
	return 2;
}

int main(int argc, char **argv)
{
	/* No arguments is a usage error (status 2, as before): a script
	 * that ran it by mistake still sees it fail. */
	if (argc < 2) {
		short_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("dwarfsample %s\n", DS_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "help"))
		return help(argc - 1, argv + 1);
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(argv[1], verbs[i].name))
			return verbs[i].run(argc - 1, argv + 1);
	if (argv[1][0] == '-')
		return ds_cmd_live(argc, argv);
	fprintf(stderr, "dwarfsample: unknown command '%s'; to sample a command, "
		"put '--' before it (dwarfsample -- %s ...)\n", argv[1], argv[1]);
	fputs("Try 'dwarfsample --help'.\n", stderr);
	return 2;
}
