/* SPDX-License-Identifier: Apache-2.0 */
#ifndef DS_LIVE_H
#define DS_LIVE_H

#include <stdio.h>

/* The live command, `dwarfsample [options] TARGET`; argv[0] is the
 * program. */
int ds_cmd_live(int argc, char **argv);
/* Its help, which is dwarfsample's. */
void ds_live_usage(FILE *out);

#endif
