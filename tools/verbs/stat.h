/* SPDX-License-Identifier: Apache-2.0 */
#ifndef DS_STAT_H
#define DS_STAT_H

/* The `stat` verb. */
int ds_cmd_stat(int argc, char **argv);

#endif
