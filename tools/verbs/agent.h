/* SPDX-License-Identifier: Apache-2.0 */
#ifndef DS_AGENT_H
#define DS_AGENT_H

/* `dwarfsample agent ...` (argv[0] is "agent"); the exit status. */
int ds_cmd_agent(int argc, char **argv);

#endif
