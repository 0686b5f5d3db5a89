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

int main(int argc, char **argv)
{
	if (argc < 2) {
		ds_live_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("dwarfsample %s\n", DS_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "agent"))
		return ds_cmd_agent(argc - 1, argv + 1);
	if (!strcmp(argv[1], "dump"))
		return ds_cmd_dump(argc - 1, argv + 1);
	if (!strcmp(argv[1], "record"))
		return ds_cmd_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return ds_cmd_report(argc - 1, argv + 1);
	if (!strcmp(argv[1], "stat"))
		return ds_cmd_stat(argc - 1, argv + 1);
	if (argv[1][0] == '-')
		return ds_cmd_live(argc, argv);
	fprintf(stderr, "dwarfsample: unknown command '%s'; to sample a command, "
		"put '--' before it (dwarfsample -- %s ...)\n", argv[1], argv[1]);
	fputs("Try 'dwarfsample --help'.\n", stderr);
	return 2;
}
