/* SPDX-License-Identifier: Apache-2.0 */
#ifndef DS_REPORT_H
#define DS_REPORT_H

/* The `report` verb. */
int ds_cmd_report(int argc, char **argv);

#endif
