/* SPDX-License-Identifier: Apache-2.0 */
#ifndef DS_TEST_WORKLOAD_H
#define DS_TEST_WORKLOAD_H

/* The value `workload serve` keeps on its stack during command 'c'. */
#define WORKLOAD_CANARY 0x5eed0fca11ab1e55ull

#endif
