/* SPDX-License-Identifier: Apache-2.0 */
/* dwarfsample: the command-line entry point and its verbs. */
#include <stdio.h>
#include <string.h>

#include "dump.h"
#include "record.h"
#include "report.h"

#ifndef DS_VERSION
#define DS_VERSION "unknown"
#endif

static void usage(FILE *out)
{
	fputs("usage: dwarfsample <command> [options]\n"
	      "\n"
	      "A sampling CPU profiler that unwinds user stacks with DWARF CFI.\n"
	      "\n"
	      "Commands:\n"
	      "  record   sample a process, a command or the system into a perf.data\n"
	      "           file that dwarfsample and Linux perf both read\n"
	      "  report   unwind the samples of a perf.data file and print the stacks\n"
	      "  dump     print every record of a live capture or of a perf.data\n"
	      "           file (a debugging aid)\n"
	      "\n"
	      "Run 'dwarfsample <command> --help' for the options of a command.\n",
	      out);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("dwarfsample %s\n", DS_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "dump"))
		return ds_cmd_dump(argc - 1, argv + 1);
	if (!strcmp(argv[1], "record"))
		return ds_cmd_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return ds_cmd_report(argc - 1, argv + 1);
	fprintf(stderr, "dwarfsample: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
