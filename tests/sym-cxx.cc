// SPDX-License-Identifier: Apache-2.0
// C++ for test-symbolize.c: a method of a class template in a namespace,
// with a function inlined into it, so names come mangled in the ELF symbol
// table and in DWARF's linkage names.  Then the same in an anonymous
// namespace, where gcc writes no linkage names: DWARF's scopes name them.
#include <string>

#include "sym-test.h"

namespace ds {
namespace sym {

static volatile int cxx_sink;

__attribute__((always_inline)) inline int helper(int x)
{
	ds_sym_leaf();
	return x + cxx_sink;
}

template <typename T> struct Box {
	T v;
	__attribute__((noinline)) T twice(T x);
};

template <typename T> T Box<T>::twice(T x)
{
	return helper(static_cast<int>(x)) * 2 + v;
}

template struct Box<int>;

namespace {

struct Counter {
	int n;
	__attribute__((always_inline)) explicit Counter(int x) : n(x + cxx_sink)
	{
		ds_sym_leaf();
	}
};

__attribute__((always_inline)) inline int quiet(int x)
{
	Counter c(x);

	return c.n * 3;
}

// A function template's DW_AT_name, as gcc writes it, spells its argument
// "std::__cxx11::basic_string<char>"; the demangled symbol with the
// defaults, "...<char, std::char_traits<char>, std::allocator<char> >".
template <typename T> __attribute__((noinline)) int level(int x)
{
	return quiet(x) + static_cast<int>(sizeof(T));
}

} // namespace

} // namespace sym
} // namespace ds

extern "C" int ds_sym_cxx(int x)
{
	ds::sym::Box<int> b = { 1 };

	return b.twice(x);
}

extern "C" int ds_sym_cxx_anon(int x)
{
	return ds::sym::level<std::string>(x);
}
