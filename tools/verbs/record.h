/* SPDX-License-Identifier: Apache-2.0 */
#ifndef DS_RECORD_H
#define DS_RECORD_H

/* The `record` verb. */
int ds_cmd_record(int argc, char **argv);

#endif
