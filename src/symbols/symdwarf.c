/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The symbolizer's DWARF: the functions inlined at an address, innermost
 * first, with their lines as addr2line and perf give them, and named
 * whole: with the namespaces and classes they are declared in, where perf
 * and addr2line print an inlined function's bare DW_AT_name.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/symbolizer.h"
#include "symbols/symdwarf.h"
#include "symbols/symcache.h"
#include "symbols/ixshare.h"
#include "symbols/symindex.h"
#include "model/zsection.h"

/* The call site of an inlined scope: DW_AT_call_file and _line. */
void pr__sym_call_site(struct sym_module *m, struct sym_side *sd, Dwarf_Die *cu, Dwarf_Die *die,
		       const char **file, uint32_t *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx, ln;
	Dwarf_Files *files;
	size_t nfiles;
	const char *name;

	*file = NULL;
	*line = 0;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &ln) == 0)
		*line = (uint32_t)ln;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &idx) == 0 &&
	    pr__sym_side_files(sd, cu, &files, &nfiles) == 0 && idx < nfiles &&
	    (name = dwarf_filesrc(files, idx, NULL, NULL)))
		*file = pr__sym_intern_file(m, name);
}

/*
 * The scopes around `pc` under `parent` (a CU, or a function found
 * already, then path[0..n) holds it): the functions and inlined calls,
 * outermost first, looking through lexical blocks.  Returns how many in
 * all.
 */
static int scope_path(Dwarf_Die parent, Dwarf_Addr pc, Dwarf_Die *path, int n, int max)
{
	Dwarf_Die child;

	while (n < max && dwarf_child(&parent, &child) == 0) {
		bool found = false;

		do {
			int tag = dwarf_tag(&child);

			if ((tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
			     tag == DW_TAG_lexical_block) && dwarf_haspc(&child, pc) > 0) {
				if (tag != DW_TAG_lexical_block)
					path[n++] = child;
				parent = child;
				found = true;
			}
		} while (!found && dwarf_siblingof(&child, &child) == 0);
		if (!found)
			break;
	}
	return n;
}




/* Nested deeper than this, scopes are not walked (no compiler does). */
#define MAX_SCOPE_DEPTH 32

static int by_lo(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return (x->lo > y->lo) - (x->lo < y->lo);
}

static bool is_scope(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
	       tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
	       tag == DW_TAG_interface_type || tag == DW_TAG_module;
}

/* The functions and scopes among the children of `parent` (scope index
 * `scope`), into `x`; -1 when out of memory. */
static int index_children(struct cu_index *x, Dwarf_Die *parent, int32_t scope, int depth)
{
	Dwarf_Die child, next;
	int more;

	if (dwarf_child(parent, &child))
		return 0;
	do {
		int tag = dwarf_tag(&child);

		more = dwarf_siblingof(&child, &next) == 0;
		if (tag == DW_TAG_subprogram) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;

			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
				if (PR_ARRAY_RESERVE(x->r, x->cap, x->nr + 1))
					return -1;
				x->r[x->nr++] = (struct cu_range){ lo, hi, dwarf_dieoffset(&child) };
			}
		} else if (is_scope(tag) && depth < MAX_SCOPE_DEPTH && dwarf_haschildren(&child)) {
			int32_t at = (int32_t)x->nr_scopes;

			if (PR_ARRAY_RESERVE(x->scopes, x->cap_scopes, x->nr_scopes + 1))
				return -1;
			/* The end of the last child's subtree is its parent's. */
			x->scopes[x->nr_scopes++] = (struct cu_scope){
				.start = dwarf_dieoffset(&child),
				.end = more ? dwarf_dieoffset(&next) : 0,
				.name = dwarf_diename(&child), .parent = scope, .tag = tag };
			if (index_children(x, &child, at, depth + 1))
				return -1;
		}
		child = next;
	} while (more);
	return 0;
}




/* Scopes nested deeper than this in one function are not indexed. */
#define MAX_SCOPE_NEST 256

static void fn_scopes_free(struct fn_scopes *f)
{
	if (!f)
		return;
	free(f->s);
	free(f->r);
	free(f);
}

/* The scopes under `parent`, as scope_path() would find them, into `f`;
 * -1 when out of memory. */
static int fn_walk(struct fn_scopes *f, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;

	if (depth >= MAX_SCOPE_NEST || dwarf_child(parent, &child))
		return 0;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		size_t at;

		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine &&
		    tag != DW_TAG_lexical_block)
			continue;
		if (f->nr >= UINT32_MAX || PR_ARRAY_RESERVE(f->s, f->cap, f->nr + 1))
			return -1;
		at = f->nr++;
		f->s[at] = (struct fn_scope){ .die = dwarf_dieoffset(&child),
					      .range = (uint32_t)f->nr_r,
					      .lexical = tag == DW_TAG_lexical_block };
		/* As dwarf_haspc() reads them. */
		while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
			if (f->nr_r >= UINT32_MAX || PR_ARRAY_RESERVE(f->r, f->cap_r, f->nr_r + 1))
				return -1;
			f->r[f->nr_r++] = (struct fn_range){ lo, hi };
		}
		f->s[at].nr_ranges = (uint32_t)(f->nr_r - f->s[at].range);
		if (fn_walk(f, &child, depth + 1))
			return -1;
		f->s[at].end = (uint32_t)f->nr;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* scope_path() from a function, through its index: at each level the
 * first scope (in DIE order) holding `pc`, lexical blocks looked
 * through. */
static int fn_scope_path(const struct fn_scopes *f, Dwarf *dbg, Dwarf_Addr pc, Dwarf_Die *path,
			 int n, int max)
{
	size_t j = 0, end = f->nr;

	while (n < max && j < end) {
		const struct fn_scope *sc = &f->s[j];

		if (!pr__sym_fn_scope_has(f, sc, pc)) {
			j = sc->end;
			continue;
		}
		if (!sc->lexical) {
			if (!dwarf_offdie(dbg, sc->die, &path[n]))
				break;
			n++;
		}
		end = sc->end;
		j++;
	}
	return n;
}

static void cu_index_free(struct cu_index *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->fns.cap; i++)
		fn_scopes_free(x->fns.slots[i].value);
	pr__hashmap_free(&x->fns);
	free(x->r);
	free(x->scopes);
	free(x);
}

struct cu_index *pr__sym_cu_index(struct sym_module *m, Dwarf_Die *cu)
{
	/* By the unit itself: offsets are not unique (DWARF 4's type units
	 * have a section of their own, split units a file), and libdw keeps
	 * its units until the module goes. */
	uint64_t key = (uintptr_t)cu->cu;
	struct cu_index *x = pr__hashmap_get(&m->cus, key);

	if (x)
		return x;
	if (!(x = calloc(1, sizeof(*x))))
		return NULL;
	if (index_children(x, cu, -1, 0)) {
		cu_index_free(x);
		return NULL;
	}
	/* Scopes come parents first: their ends are known by their children's. */
	for (size_t i = 0; i < x->nr_scopes; i++)
		if (!x->scopes[i].end)
			x->scopes[i].end = x->scopes[i].parent < 0 ? UINT64_MAX :
					   x->scopes[x->scopes[i].parent].end;
	/* Never qsort(NULL, 0): its argument is declared non-null (a CU of
	 * types alone has no function, a file's DWARF may have no unit). */
	if (x->nr)
		qsort(x->r, x->nr, sizeof(x->r[0]), by_lo);
	if (pr__hashmap_put(&m->cus, key, x)) {
		cu_index_free(x);
		return NULL;
	}
	m->index_bytes += sizeof(*x) + x->cap * sizeof(*x->r) + x->cap_scopes * sizeof(*x->scopes);
	return x;
}

/* The scopes inside function `fn` of the unit indexed in `x`, indexed
 * the first time; NULL when out of memory. */
const struct fn_scopes *pr__sym_fn_scopes(struct sym_module *m, struct cu_index *x,
					  Dwarf_Die *fn)
{
	uint64_t key = dwarf_dieoffset(fn) + 1;
	struct fn_scopes *f;

	if ((f = pr__hashmap_get(&x->fns, key)))
		return f;
	if (!(f = calloc(1, sizeof(*f))) || fn_walk(f, fn, 0) || pr__hashmap_put(&x->fns, key, f)) {
		fn_scopes_free(f);
		return NULL;
	}
	m->index_bytes += sizeof(*f) + f->cap * sizeof(*f->s) + f->cap_r * sizeof(*f->r);
	return f;
}

void pr__sym_fn_scopes_drop(struct sym_module *m, struct cu_index *x, Dwarf_Off fn)
{
	struct fn_scopes *f = pr__hashmap_del(&x->fns, fn + 1);

	if (!f)
		return;
	m->index_bytes -= sizeof(*f) + f->cap * sizeof(*f->s) + f->cap_r * sizeof(*f->r);
	fn_scopes_free(f);
}

/* The unit's function around `pc`, through its index `x`: 1 and *fn, 0
 * when no function has it, -1 when its DIE cannot be read. */
static int top_function(const struct cu_index *x, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *fn)
{
	size_t i;

	/* The last range starting at or below pc, then back over the few
	 * that may start earlier and still hold it (nested or aliased). */
	i = pr__upper_bound(x->r, x->nr, sizeof(x->r[0]), pc);
	for (size_t k = 0; i > 0 && k < 16; k++, i--) {
		const struct cu_range *r = &x->r[i - 1];

		if (pc >= r->lo && pc < r->hi)
			return dwarf_offdie(dwarf_cu_getdwarf(cu->cu), r->die, fn) ? 1 : -1;
	}
	return 0;
}

/*
 * `name` qualified with the scopes the DIE at `off` is declared in,
 * "ns::Class::name", as a linkage name demangled would have it (for what
 * has none: gcc writes none for constructors, nor for what involves an
 * anonymous namespace).  NULL when out of memory.
 */
static const char *qualify(struct sym_module *m, const struct cu_index *x, Dwarf_Off off,
			   const char *name)
{
	const char *parts[MAX_SCOPE_DEPTH + 1];
	size_t n = 0, len = strlen(name) + 1;
	int32_t k = (int32_t)pr__upper_bound(x->scopes, x->nr_scopes, sizeof(x->scopes[0]),
					     off - 1) - 1;
	char *out, *p;

	/* The last scope starting before `off` holds it, or one of its
	 * parents does (they nest). */
	while (k >= 0 && n < MAX_SCOPE_DEPTH) {
		const struct cu_scope *sc = &x->scopes[k];

		if (off < sc->end) {
			parts[n] = sc->name ? sc->name : sc->tag == DW_TAG_namespace ?
				   "(anonymous namespace)" : "(anonymous)";
			len += strlen(parts[n++]) + 2;
		}
		k = sc->parent;
	}
	if (!n)
		return pr__arena_strdup(&m->arena, name);
	p = out = pr__arena_alloc(&m->arena, len);
	if (!out)
		return NULL;
	while (n--)
		p = stpcpy(stpcpy(p, parts[n]), "::");
	strcpy(p, name);
	return out;
}

/* The DIE that names a function: through DW_AT_abstract_origin (from an
 * inlined call or a concrete instance) and DW_AT_specification (from a
 * definition to its declaration, in its class or namespace). */
static bool name_die(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute attr;

	*out = *die;
	for (int i = 0; i < 8 && !dwarf_hasattr(out, DW_AT_name); i++) {
		Dwarf_Attribute *ref = dwarf_attr(out, DW_AT_abstract_origin, &attr);

		if (!ref)
			ref = dwarf_attr(out, DW_AT_specification, &attr);
		if (!dwarf_formref_die(ref, out))
			return false;
	}
	return dwarf_hasattr(out, DW_AT_name);
}

/*
 * The name a function goes by, whole: its linkage name demangled (as
 * perf shows a symbol: "ns::Class<int>::run", "mycrate::module::func"),
 * else its DW_AT_name with the scopes it is declared in.  perf and
 * addr2line name an inlined function by DW_AT_name alone ("run").  Each
 * function's once: inlined calls of it share its abstract origin.
 */
const char *pr__sym_func_name(struct pr_symbolizer *s, struct sym_module *m, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Die origin = *die, named, cu;
	struct cu_index *x;
	const char *name = NULL, *out;
	uint64_t key;

	for (int i = 0; i < 4 && dwarf_formref_die(dwarf_attr(&origin, DW_AT_abstract_origin,
								   &attr), &origin); i++)
		;
	/* Offsets are the main file's (not a dwz supplementary file's). */
	key = dwarf_cu_getdwarf(origin.cu) == m->dwarf ? dwarf_dieoffset(&origin) + 1 : 0;
	if (key && (out = pr__hashmap_get(&m->func_names, key)))
		return out;
	if (dwarf_attr_integrate(&origin, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(&origin, DW_AT_MIPS_linkage_name, &attr))
		name = dwarf_formstring(&attr);
	if (name)
		out = pr__sym_demangle(s, &m->arena, name);
	else if (!name_die(&origin, &named) || !(name = dwarf_diename(&named)))
		return NULL;
	else if (!s->no_demangle && dwarf_diecu(&named, &cu, NULL, NULL) &&
		 (x = pr__sym_cu_index(m, &cu)))
		out = qualify(m, x, dwarf_dieoffset(&named), name);
	else
		out = pr__arena_strdup(&m->arena, name);
	/* Not kept when the table cannot grow: found again next time. */
	if (key && out)
		pr__hashmap_put(&m->func_names, key, (void *)out);
	return out;
}

/* The units' indexes, once the module's address index has what they
 * gave (names stay, in the arena). */
static void drop_units(struct sym_module *m)
{
	for (size_t i = 0; i < m->cus.cap; i++)
		cu_index_free(m->cus.slots[i].value);
	pr__hashmap_free(&m->cus);
	pr__hashmap_free(&m->func_names);
}

void pr__sym_dwarf_free_units(struct sym_module *m)
{
	drop_units(m);
	free(m->spans);
	m->spans = NULL;
	m->nr_spans = 0;
	m->spans_read = false;
}

void pr__sym_dwarf_free(struct sym_module *m)
{
	pr__sym_dwarf_free_units(m);
	pr__hashmap_free(&m->units_seen);
	if (m->shared) {
		pr__ixshare_file_put(m->shared);
	} else {
		pr__symindex_free(m->index);
		pr__symindex_free(m->names_index);
	}
	free(m->a2l);
}
/*
 * The assembler describes a function once per name it has: aliases are
 * DW_TAG_subprograms with the same range.  addr2line takes the last of
 * those that fit the address best; so does this, into *fn.
 */
static void last_alias(Dwarf_Die *cu, uint64_t pc, Dwarf_Die *fn)
{
	Dwarf_Die child;
	Dwarf_Addr lo, hi, best = UINT64_MAX;

	if (dwarf_child(cu, &child))
		return;
	do {
		if (dwarf_tag(&child) != DW_TAG_subprogram || dwarf_lowpc(&child, &lo) ||
		    dwarf_highpc(&child, &hi) || pc < lo || pc >= hi || hi - lo > best)
			continue;
		best = hi - lo;
		*fn = child;
	} while (dwarf_siblingof(&child, &child) == 0);
}

/*
 * The compile unit holding `pc`, for files libdw finds none in: clang
 * writes no .debug_aranges, and libdw 0.188 looks nowhere else (0.189
 * does), so no address of a clang-built file had a function, an inlined
 * call or a line.  The units' own ranges, read once and sorted.
 */
const struct cu_span *pr__sym_cu_spans(struct sym_module *m, size_t *nr)
{
	if (!m->spans_read) {
		Dwarf_CU *cu = NULL, *next;
		Dwarf_Die cudie;
		Dwarf_Half version;
		uint8_t type;
		size_t cap = 0;

		m->spans_read = true;
		while (dwarf_get_units(m->dwarf, cu, &next, &version, &type, &cudie, NULL) == 0) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;

			cu = next;
			while ((type == DW_UT_compile || type == DW_UT_skeleton) &&
			       (off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
				if (PR_ARRAY_RESERVE(m->spans, cap, m->nr_spans + 1))
					goto out;
				m->spans[m->nr_spans++] = (struct cu_span){ lo, hi,
									    dwarf_dieoffset(&cudie) };
			}
		}
out:
		if (m->nr_spans)
			qsort(m->spans, m->nr_spans, sizeof(m->spans[0]), by_lo);
	}
	*nr = m->nr_spans;
	return m->spans;
}

static bool cu_by_ranges(struct sym_module *m, Dwarf_Addr pc, Dwarf_Die *out)
{
	size_t nr;
	const struct cu_span *spans = pr__sym_cu_spans(m, &nr);
	size_t i = pr__upper_bound(spans, nr, sizeof(spans[0]), pc);

	return i && pc < spans[i - 1].hi && dwarf_offdie(m->dwarf, m->spans[i - 1].die, out);
}

/*
 * DWARF compressed with zstd (ELFCOMPRESS_ZSTD sections: what ld and
 * objcopy --compress-debug-sections=zstd write) is read by libdw from
 * elfutils 0.189 on; an older one finds no DWARF in the file at all.  The
 * sections are inflated here before libdw is asked, whatever its version
 * (a separate debug file is, as it is found: debugfile.c).  A section
 * whose header lies about its size is not believed past
 * MAX_DWARF_SECTION, and stays compressed.
 */
static void inflate_zstd(struct pr_symbolizer *s, struct sym_module *m)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	int err = pr__zsection_inflate_zstd_dwarf(elf, MAX_DWARF_SECTION, &m->zbufs,
						  &m->nr_zbufs);
	Elf_Scn *scn = NULL;

	/* What they weigh, for a trim (model/trim.c). */
	while (m->nr_zbufs && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *d = elf_getdata(scn, NULL);

		for (size_t i = 0; d && i < m->nr_zbufs; i++)
			if (d->d_buf == m->zbufs[i])
				m->zbytes += d->d_size;
	}
	if (err)
		pr__log(&s->lg, PR_LOG_DEBUG, "%s: a DWARF section compressed with zstd not "
			"inflated: %s", m->origin, strerror(-err));
}

/* Say so when the file's DWARF (or its debug file's) could not be read
 * because it stayed compressed with zstd, its frames otherwise losing
 * their inlined functions and lines without a word. */
static void say_if_zstd(struct pr_symbolizer *s, struct sym_module *m)
{
	GElf_Addr bias;
	const char *debug = NULL, *where = NULL;
	int fd;

	if (pr__zsection_zstd_dwarf(dwfl_module_getelf(m->mod, &bias)))
		where = m->origin;
	dwfl_module_info(m->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debug);
	/* One found in a process's root (/proc/PID/root/...) is not opened
	 * again by its name, which could lead out of that root. */
	if (!where && debug && strncmp(debug, "/proc/", 6) &&
	    (fd = pr__open_target_file(0, debug, NULL)) >= 0) {
		Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);

		if (pr__zsection_zstd_dwarf(elf))
			where = debug;
		elf_end(elf);
		close(fd);
	}
	if (where)
		pr__log(&s->lg, PR_LOG_WARN, "%s: its DWARF is compressed with zstd and could not "
			"be inflated (damaged?): its frames are named from its symbols alone, "
			"without inlined functions or source lines", where);
}

/* Split DWARF (-gsplit-dwarf): a skeleton unit holds no DIEs but itself;
 * its functions are in the split unit, in a .dwo file that libdw finds
 * (by DW_AT_dwo_name, in DW_AT_comp_dir) and reads with it.  `cu`, or
 * that split unit's DIE in *split. */
Dwarf_Die *pr__sym_unit_with_functions(Dwarf_Die *cu, Dwarf_Die *split)
{
	uint8_t type;

	if (dwarf_cu_info(cu->cu, NULL, &type, NULL, split, NULL, NULL, NULL) == 0 &&
	    type == DW_UT_skeleton && split->cu)
		return split;
	return cu;
}

/* Fill `funcs` (room for MAX_INLINE) innermost first from the DWARF at
 * `vaddr`: the functions inlined there and the one it is in, with their
 * lines, for a file with DWARF.  Code no DWARF function covers (assembly)
 * is one entry, named as addr2line names it.  Returns how many. */
bool pr__sym_dwarf_open(struct pr_symbolizer *s, struct sym_module *m)
{
	if (!m->dwarf_checked) {
		m->dwarf_checked = true;
		inflate_zstd(s, m);
		m->dwarf = dwfl_module_getdwarf(m->mod, &m->dwarf_bias);
		m->has_dwarf = m->dwarf != NULL;
		if (m->dwarf)
			pr__sym_module_guard(m, dwarf_getelf(m->dwarf));
		if (m->has_dwarf) {
			s->stats.debug_files++;
			pr__log(&s->lg, PR_LOG_DEBUG, "%s: its DWARF opened", m->origin);
		} else {
			say_if_zstd(s, m);
		}
	}
	return m->has_dwarf;
}

/* The unit holding link-time address `vaddr` (libdw's own, or *own_cu),
 * its bias, and the address's line (*file interned, or NULL). */
static Dwarf_Die *unit_and_line(struct pr_symbolizer *s, struct sym_module *m, uint64_t vaddr,
				Dwarf_Die *own_cu, Dwarf_Addr *bias, const char **file,
				int *lineno)
{
	Dwarf_Die *cu = dwfl_module_addrdie(m->mod, vaddr, bias);
	Dwfl_Line *line = cu && !s->no_lines ? dwfl_module_getsrc(m->mod, vaddr) : NULL;
	Dwarf_Line *dline;

	*lineno = 0;
	*file = line ? dwfl_lineinfo(line, NULL, lineno, NULL, NULL, NULL) : NULL;
	if (!cu && cu_by_ranges(m, vaddr - m->dwarf_bias, own_cu)) {
		cu = own_cu;
		*bias = m->dwarf_bias;
		dline = s->no_lines ? NULL : dwarf_getsrc_die(cu, vaddr - *bias);
		*file = dline ? dwarf_linesrc(dline, NULL, NULL) : NULL;
		if (*file)
			dwarf_lineno(dline, lineno);
	}
	if (*file)
		*file = pr__sym_intern_file(m, *file);
	return cu;
}

/* When it finds no function (0), funcs[0].file and .line still hold the
 * address's line, for the symbol that names it instead. */
size_t pr__sym_dwarf_chain(struct pr_symbolizer *s, struct sym_module *m, uint64_t vaddr,
			   const char *sym_name, uint64_t sym_start, struct pr_sym_func *funcs)
{
	Dwarf_Addr bias = 0, entry;
	Dwarf_Die *cu, path[MAX_INLINE], own_cu, split;
	const char *file;
	int lineno = 0, n;
	size_t nr = 0;

	funcs[0] = (struct pr_sym_func){ 0 };
	if (!pr__sym_dwarf_open(s, m))
		return 0;
	cu = unit_and_line(s, m, vaddr, &own_cu, &bias, &file, &lineno);
	/* Not kept when the table cannot grow: the partial index built at
	 * the end leaves the unit out, and the next run finds it here. */
	if (cu && s->ixcache && !s->use_index)
		pr__hashmap_put(&m->units_seen, dwarf_dieoffset(cu), (void *)1);
	if (cu)
		cu = pr__sym_unit_with_functions(cu, &split);
	/* The functions around the address, as they nest where they were
	 * inlined; innermost first from here. */
	if (!cu) {
		n = 0;
	} else if (dwarf_srclang(cu) == DW_LANG_Mips_Assembler) {
		n = scope_path(*cu, vaddr - bias, path, 0, MAX_INLINE);
		if (n > 0)
			last_alias(cu, vaddr - bias, &path[0]);
	} else {
		struct cu_index *x = pr__sym_cu_index(m, cu);
		const struct fn_scopes *f;

		n = x ? top_function(x, cu, vaddr - bias, &path[0]) : -1;
		if (n < 0)
			n = scope_path(*cu, vaddr - bias, path, 0, MAX_INLINE);
		else if (n && (f = pr__sym_fn_scopes(m, x, &path[0])))
			n = fn_scope_path(f, dwarf_cu_getdwarf(path[0].cu), vaddr - bias, path, 1,
					  MAX_INLINE);
		else if (n)
			n = scope_path(path[0], vaddr - bias, path, 1, MAX_INLINE);
	}
	for (int k = n - 1; k >= 0 && nr < MAX_INLINE; k--) {
		int t = dwarf_tag(&path[k]);
		const char *name = pr__sym_func_name(s, m, &path[k]);

		/* The function the address is in, named with scopes by DWARF
		 * and otherwise by the symbol starting where it does, takes the
		 * symbol's name: gcc writes no linkage name for what involves
		 * an anonymous namespace, and DW_AT_name spells template
		 * arguments its own way ("basic_string<char>"); Rust's
		 * #[no_mangle] and C++'s extern "C" are bare in the symbol
		 * table; of code folded into one, perf names it by the symbol
		 * it picks; Go's assembly functions are "runtime.goexit" in
		 * DWARF, "runtime.goexit.abi0" in the symbol table (and to
		 * llvm-symbolizer).  Otherwise perf script's layout would mark
		 * it inlined.  C names, unscoped, stay DWARF's ("f" in
		 * "f.part.0", as perf shows it). */
		if (k == 0 && name && sym_name && strcmp(name, sym_name) &&
		    (strstr(name, "::") || dwarf_srclang(cu) == DW_LANG_Go) &&
		    dwarf_entrypc(&path[0], &entry) == 0 && entry + bias == sym_start)
			name = sym_name;
		funcs[nr] = (struct pr_sym_func){ .name = name,
						  .file = file, .line = (uint32_t)lineno,
						  .inlined = t == DW_TAG_inlined_subroutine };
		nr++;
		/* The caller's line is where it inlined this one (reading
		 * the unit's file names reads its whole line table). */
		if (t == DW_TAG_inlined_subroutine && !s->no_lines)
			pr__sym_call_site(m, NULL, cu, &path[k], &file, (uint32_t *)&lineno);
	}
	if (!nr)
		funcs[0] = (struct pr_sym_func){ .file = file, .line = (uint32_t)lineno };
	return nr;
}

/* The module's address index, NULL for none: the one mapped from the
 * cache when the file was opened (symfile.c), its own
 * (pr__sym_index_own()), or, shared with other workers' symbolizers, the
 * one the first of them to ask made, with the bias its DWARF had (the
 * cache keeps no index of a file with one, so the taker, which opens no
 * DWARF, learns it here).  The units' indexes it was built from are
 * dropped then. */
static const struct pr__symindex *module_index(struct pr_symbolizer *s, struct sym_module *m)
{
	uint64_t bias = 0;
	bool taken;

	if (m->index_tried)
		return m->index;
	m->index_tried = true;
	m->index = pr__sym_index_shared(s, m, pr__sym_index_own, &m->shared, &taken, &bias);
	/* The set's, read-only: never freed through m->index. */
	if (taken && !m->dwarf_checked) {
		m->dwarf_checked = m->has_dwarf = true;
		m->dwarf_bias = bias;
		s->stats.debug_files++;
	}
	if (!m->index)
		return NULL;
	drop_units(m);
	m->index_bytes = pr__symindex_bytes(m->index);
	return m->index;
}

/* The chain from the module's index, and the innermost line from its
 * line table (from libdw when it was built without). */
static size_t index_chain(struct pr_symbolizer *s, struct sym_module *m,
			  const struct pr__symindex *ix, uint64_t vaddr, const char *sym_name,
			  uint64_t sym_start, struct pr_sym_func *funcs)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die own_cu;
	const char *file;
	uint32_t line;
	int lineno = 0;
	size_t nr;

	if (s->no_lines) {
		file = NULL;
		line = 0;
	} else if (!pr__symindex_line(ix, vaddr - m->dwarf_bias, &file, &line)) {
		unit_and_line(s, m, vaddr, &own_cu, &bias, &file, &lineno);
		line = (uint32_t)lineno;
	}
	nr = pr__symindex_chain(ix, vaddr - m->dwarf_bias, s->no_lines, sym_name,
				sym_start - m->dwarf_bias, funcs);
	if (!nr)
		funcs[0] = (struct pr_sym_func){ 0 };
	funcs[0].file = file;
	funcs[0].line = line;
	return nr;
}

struct units_at {
	uint64_t pc;
	struct pr_hashmap *seen;
};

/* pr__symindex_range_fn: every unit holding the address a partial index
 * did not cover, for the next one to: not only the unit libdw's path
 * named it in, which the index may have had. */
static int note_unit_at(uint64_t lo, uint64_t hi, uint64_t unit, void *arg)
{
	struct units_at *u = arg;

	if (u->pc >= lo && u->pc < hi && unit != UINT64_MAX)
		pr__hashmap_put(u->seen, unit, (void *)1);
	return 0;
}

size_t pr__sym_inline_chain(struct pr_symbolizer *s, struct sym_module *m, uint64_t vaddr,
			    const char *sym_name, uint64_t sym_start, struct pr_sym_func *funcs)
{
	const struct pr__symindex *ix = module_index(s, m);
	uint64_t start;
	const char *at;
	size_t nr;

	/* libdw only to build: on the index's path, once the index has what
	 * this symbolizer shows (or the file has no DWARF), its session goes.
	 * On libdw's, a session whose DWARF the cache spared stays: closing
	 * it reads the symbols addr2line would pick, which few addresses
	 * need (9 % of a warm report's instructions over a capture of
	 * dwarfsample), and it holds only the ELF files then. */
	if (s->use_index && m->dwfl &&
	    (ix ? s->no_lines || pr__symindex_has_lines(ix) : !m->has_dwarf))
		pr__sym_module_close(m);
	/* Where a partial index does not answer, libdw's path does, the
	 * file opened for it the first time. */
	if (ix && !pr__symindex_covers(ix, vaddr - m->dwarf_bias)) {
		ix = NULL;
		if (!pr__sym_module_reopen(s, m))
			return 0;
		pr__symindex_unit_ranges(m, note_unit_at,
					 &(struct units_at){ vaddr - m->dwarf_bias, &m->units_seen });
	}
	nr = ix ? index_chain(s, m, ix, vaddr, sym_name, sym_start, funcs) :
	     pr__sym_dwarf_chain(s, m, vaddr, sym_name, sym_start, funcs);
	if (nr || !m->has_dwarf)
		return nr;
	/* Code no DWARF function covers: addr2line names it by its symbol. */
	if ((at = pr__sym_addr2line_symbol(m, vaddr, &start)))
		sym_name = pr__sym_demangle(s, &m->arena, at);
	if (!sym_name)
		return 0;
	funcs[0].name = sym_name;
	return 1;
}
