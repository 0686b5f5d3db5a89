/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by test-symbolize.c and its C++ part, sym-cxx.cc. */
#ifndef DS_TEST_SYM_TEST_H
#define DS_TEST_SYM_TEST_H

#ifdef __cplusplus
extern "C" {
#endif

/* Records its return address in ds_sym_ret: an address in its caller. */
void ds_sym_leaf(void);
extern void *volatile ds_sym_ret;

/* Calls ds::sym::Box<int>::twice(), which inlines ds::sym::helper(),
 * which calls ds_sym_leaf(). */
int ds_sym_cxx(int x);
/* Calls ds::sym::(anonymous namespace)::level<std::string>(),
 * which inlines quiet(), which inlines the constructor Counter::Counter(),
 * which calls ds_sym_leaf(). */
int ds_sym_cxx_anon(int x);

#ifdef __cplusplus
}
#endif

#endif
