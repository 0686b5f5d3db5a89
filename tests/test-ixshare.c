/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Address indexes shared by symbolizers (src/symbols/ixshare.c), as a
 * session's workers share them: two symbolizers over models of their own
 * name every address as a lone symbolizer does while each file's index is
 * made once between them, one copy; with the index cache, it is mapped
 * once; from two threads at once, the same; a file or the set outlives
 * whichever holder goes first, and a trim puts what it drops; with
 * DS_SYMINDEX=0 nothing is shared.
 *
 * usage: test-ixshare FILE[:STEP]... @FILE...   (test-symindex's files:
 * @ marks one without DWARF)
 */
#include <dirent.h>
#include <pthread.h>
#include <sys/sysmacros.h>

#include "symindex-files.h"

#define SECOND UINT64_C(1000000000)

static bool same_sym(const struct pr_symbol *a, const struct pr_symbol *b)
{
	if (!same_str(a->name, b->name) || a->offset != b->offset || a->nr != b->nr ||
	    a->source != b->source || !same_str(a->module, b->module))
		return false;
	for (size_t i = 0; i < a->nr; i++)
		if (!same_str(a->funcs[i].name, b->funcs[i].name) ||
		    !same_str(a->funcs[i].file, b->funcs[i].file) ||
		    a->funcs[i].line != b->funcs[i].line ||
		    a->funcs[i].inlined != b->funcs[i].inlined)
			return false;
	return true;
}

/* Name the addresses `first`, `first + step`, ... of `o`'s code as
 * `want` does; how many were named otherwise (*nr: of how many). */
static size_t name_like(struct opened *o, struct opened *want, uint64_t first, uint64_t step,
			size_t *nr)
{
	size_t differ = 0;

	*nr = 0;
	for (size_t i = 0; i < o->m->elf->nr_seg; i++) {
		const struct pr_elf_segment *seg = &o->m->elf->seg[i];

		if (!(seg->flags & PF_X))
			continue;
		for (uint64_t off = seg->offset + first; off < seg->offset + seg->filesz;
		     off += step) {
			struct pr_symbol a, b;

			o->f.dso_ip = want->f.dso_ip = off;
			o->f.ip = want->f.ip = MAP_AT + off;
			if (pr_symbolizer_symbolize(want->s, PID, &want->f, &b) ||
			    pr_symbolizer_symbolize(o->s, PID, &o->f, &a) || !same_sym(&a, &b))
				differ++;
			(*nr)++;
		}
	}
	return differ;
}

static struct pr__ixshare_stats set_stats(struct pr__ixshare *set)
{
	struct pr__ixshare_stats st;

	pr__ixshare_stats(set, &st);
	return st;
}

/*
 * Every file, a lone symbolizer and two sharing a set (each over a model
 * of its own, as workers): both name every address (every STEP-th) as
 * the lone one, the first half of them each first in turn; of each file
 * with DWARF one index was made, which both hold (the same copy), and the
 * second took it; of one without, none.  Returns the number of files with
 * DWARF.
 */
static size_t name_all_shared(const struct pr_symbolizer_opts *opts, struct pr__ixshare *set)
{
	size_t with_dwarf = 0;

	for (int i = 0; i < nr_files; i++) {
		struct opened lone, a, b;
		uint64_t step;
		bool small, dwarf = files[i][0] != '@';
		char *path = file_arg(i, &step, &small);
		size_t nr, differ;

		open_file(&lone, path, NULL, true);
		open_file_shared(&a, path, opts, set);
		open_file_shared(&b, path, opts, set);
		/* a names the even addresses first, b the odd ones. */
		differ = name_like(&a, &lone, 0, 2 * step, &nr);
		differ += name_like(&b, &lone, step, 2 * step, &nr);
		differ += name_like(&b, &lone, 0, step, &nr);
		differ += name_like(&a, &lone, 0, step, &nr);
		ck_assert_msg(nr > 10 && !differ, "%s: %zu of %zu frames named otherwise", path,
			      differ, nr);
		if (dwarf) {
			ck_assert_msg(a.m->index && a.m->index == b.m->index && a.m->shared &&
				      a.m->shared == b.m->shared,
				      "%s: the two symbolizers hold copies of their own", path);
			with_dwarf++;
		} else {
			/* No DWARF index; the index of its symbols alone, when
			 * the cache held one, one copy for both. */
			ck_assert(!a.m->index && !b.m->index && a.m->shared == b.m->shared &&
				  a.m->names_index == b.m->names_index);
		}
		close_file(&a);
		close_file(&b);
		close_file(&lone);
		free(path);
	}
	return with_dwarf;
}

/* The first file: a lone symbolizer over it, and two sharing a set (a
 * and b, with options `ao` and `bo`; NULL: none). */
struct trio {
	struct pr__ixshare *set;
	struct opened lone, a, b;
	char *path;
	uint64_t step;
};

static void trio_open(struct trio *t, const struct pr_symbolizer_opts *ao,
		      const struct pr_symbolizer_opts *bo)
{
	bool small;

	ck_assert_ptr_nonnull(t->set = pr__ixshare_new());
	t->path = file_arg(0, &t->step, &small);
	open_file(&t->lone, t->path, NULL, true);
	open_file_shared(&t->a, t->path, ao, t->set);
	open_file_shared(&t->b, t->path, bo, t->set);
}

/* Close `o` unless closed already. */
static void close_once(struct opened *o)
{
	if (o->s)
		close_file(o);
	o->s = NULL;
}

/* trio_open(), with a and then b naming every fourth address (of STEP)
 * as the lone one: none named otherwise. */
static void trio_open_named(struct trio *t)
{
	size_t nr, differ;

	trio_open(t, NULL, NULL);
	differ = name_like(&t->a, &t->lone, 0, 4 * t->step, &nr);
	differ += name_like(&t->b, &t->lone, 0, 4 * t->step, &nr);
	ck_assert_msg(nr > 10 && !differ, "%zu of %zu named otherwise", differ, nr);
}

/* What trio_open() opened and is still open, the set's reference last. */
static void trio_close(struct trio *t)
{
	close_once(&t->a);
	close_once(&t->b);
	close_once(&t->lone);
	free(t->path);
	pr__ixshare_put(t->set);
}

START_TEST(two_symbolizers_sharing_indexes_name_as_one_alone_each_file_made_once)
{
	struct pr__ixshare *set = pr__ixshare_new();
	struct pr__ixshare_stats st;
	size_t with_dwarf;

	ck_assert_ptr_nonnull(set);
	with_dwarf = name_all_shared(NULL, set);
	st = set_stats(set);
	ck_assert_uint_gt(with_dwarf, 0);
	ck_assert_msg(st.built == with_dwarf && st.mapped == 0 && st.shared == with_dwarf,
		      "%zu files with DWARF: built %llu, mapped %llu, shared %llu", with_dwarf,
		      (unsigned long long)st.built, (unsigned long long)st.mapped,
		      (unsigned long long)st.shared);
	/* Every holder gone: nothing held. */
	ck_assert_uint_eq(st.files, 0);
	ck_assert_uint_eq(st.bytes, 0);
	pr__ixshare_put(set);
}
END_TEST

/* With the index cache: the first pair builds each index once (and one
 * of them stores it, and the symbols of each file without DWARF), the
 * second pair maps each once. */
START_TEST(with_the_index_cache_each_index_is_stored_then_mapped_once)
{
	char *dir = make_dir();
	PR_OPTS(pr_symbolizer_opts, opts, .index_cache_dir = dir);
	struct pr__ixshare *set = pr__ixshare_new();
	struct pr__ixshare_stats st;
	uint64_t bytes;
	size_t with_dwarf, nodwarf = 0;

	ck_assert_ptr_nonnull(set);
	with_dwarf = name_all_shared(&opts, set);
	st = set_stats(set);
	ck_assert_uint_eq(st.built, with_dwarf);
	ck_assert_uint_eq(st.mapped, 0);
	/* And one of its symbols alone for each file without DWARF. */
	for (int i = 0; i < nr_files; i++)
		nodwarf += files[i][0] == '@';
	ck_assert_uint_eq(dir_files(dir, &bytes), with_dwarf + nodwarf);
	pr__ixshare_put(set);

	ck_assert_ptr_nonnull(set = pr__ixshare_new());
	ck_assert_uint_eq(name_all_shared(&opts, set), with_dwarf);
	st = set_stats(set);
	ck_assert_msg(st.built == 0 && st.mapped == with_dwarf + nodwarf &&
		      st.shared == with_dwarf + nodwarf,
		      "built %llu, mapped %llu, shared %llu",
		      (unsigned long long)st.built, (unsigned long long)st.mapped,
		      (unsigned long long)st.shared);
	pr__ixshare_put(set);
	remove_dir(dir);
	free(dir);
}
END_TEST

/*
 * An index made without lines (its symbolizer shows none) does not serve
 * one that shows them, which makes its own, as the cache's rule is; one
 * with lines serves both.  Each names as a lone symbolizer of its kind.
 */
START_TEST(an_index_without_lines_serves_only_symbolizers_without)
{
	PR_OPTS(pr_symbolizer_opts, bare, .no_index_cache = true, .no_lines = true);
	struct pr__ixshare_stats st;
	struct opened lone_bare;
	struct trio t;
	size_t nr, differ;

	/* Without lines first: the one with lines makes its own. */
	trio_open(&t, &bare, NULL);
	open_file(&lone_bare, t.path, &bare, true);
	differ = name_like(&t.a, &lone_bare, 0, 4 * t.step, &nr);
	differ += name_like(&t.b, &t.lone, 0, 4 * t.step, &nr);
	ck_assert_msg(!differ, "%zu named otherwise", differ);
	ck_assert(t.a.m->index && t.b.m->index && t.a.m->index != t.b.m->index);
	ck_assert(!pr__symindex_has_lines(t.a.m->index) && pr__symindex_has_lines(t.b.m->index));
	st = set_stats(t.set);
	ck_assert_uint_eq(st.built, 2);
	ck_assert_uint_eq(st.shared, 0);
	close_once(&t.a);
	close_once(&t.b);
	/* With lines first: both take it. */
	open_file_shared(&t.b, t.path, NULL, t.set);
	open_file_shared(&t.a, t.path, &bare, t.set);
	differ = name_like(&t.b, &t.lone, 0, 4 * t.step, &nr);
	differ += name_like(&t.a, &lone_bare, 0, 4 * t.step, &nr);
	ck_assert_msg(!differ, "%zu named otherwise", differ);
	ck_assert_ptr_eq(t.a.m->index, t.b.m->index);
	st = set_stats(t.set);
	ck_assert_uint_eq(st.built, 3);
	ck_assert_uint_eq(st.shared, 1);
	close_file(&lone_bare);
	trio_close(&t);
}
END_TEST

/* libdw's alone (DS_SYMINDEX=0): no index, nothing in the set. */
START_TEST(with_libdw_alone_nothing_is_shared)
{
	struct pr__ixshare_stats st;
	struct trio t;
	size_t nr, differ;

	setenv("DS_SYMINDEX", "0", 1);
	trio_open(&t, NULL, NULL);
	unsetenv("DS_SYMINDEX");
	/* open_file() asks for the index's path, which DS_SYMINDEX=0 turns
	 * off. */
	pr__symbolizer_use_index(t.a.s, false);
	pr__symbolizer_use_index(t.b.s, false);
	differ = name_like(&t.a, &t.lone, 0, 4 * t.step, &nr);
	differ += name_like(&t.b, &t.lone, 0, 4 * t.step, &nr);
	ck_assert_msg(nr > 10 && !differ, "%zu of %zu named otherwise", differ, nr);
	ck_assert(!t.a.m->index && !t.b.m->index && !t.a.m->shared && !t.b.m->shared);
	st = set_stats(t.set);
	ck_assert_uint_eq(st.built + st.mapped + st.shared + st.files, 0);
	trio_close(&t);
}
END_TEST

/* The answers at `o`'s addresses `step` apart, in order (malloc'd; *nr
 * of them); they point into `o`'s symbolizer. */
static struct pr_symbol *answers(struct opened *o, uint64_t step, size_t *nr)
{
	struct pr_symbol *v = NULL;
	size_t cap = 0;

	*nr = 0;
	for (size_t i = 0; i < o->m->elf->nr_seg; i++) {
		const struct pr_elf_segment *seg = &o->m->elf->seg[i];

		if (!(seg->flags & PF_X))
			continue;
		for (uint64_t off = seg->offset; off < seg->offset + seg->filesz; off += step) {
			ck_assert_int_eq(PR_ARRAY_RESERVE(v, cap, *nr + 1), 0);
			o->f.dso_ip = off;
			o->f.ip = MAP_AT + off;
			ck_assert_int_eq(pr_symbolizer_symbolize(o->s, PID, &o->f, &v[(*nr)++]), 0);
		}
	}
	return v;
}

/* Two threads, each a symbolizer of its own naming every file, from the
 * same start. */
#define MAX_FILES 64

struct worker {
	struct pr__ixshare *set;
	pthread_barrier_t *go;
	struct pr_symbol *want[MAX_FILES];      /* the lone symbolizers' answers */
	size_t nr_want[MAX_FILES];
	uint64_t step[MAX_FILES];
	size_t differ, nr;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct opened own[MAX_FILES];

	for (int i = 0; i < nr_files; i++) {
		uint64_t step;
		bool small;
		char *path = file_arg(i, &step, &small);

		open_file_shared(&own[i], path, NULL, w->set);
		free(path);
	}
	pthread_barrier_wait(w->go);
	for (int i = 0; i < nr_files; i++) {
		size_t nr;
		struct pr_symbol *got = answers(&own[i], w->step[i], &nr);

		w->differ += nr != w->nr_want[i];
		for (size_t k = 0; k < nr && k < w->nr_want[i]; k++)
			w->differ += !same_sym(&got[k], &w->want[i][k]);
		w->nr += nr;
		free(got);
	}
	/* Both done before either lets its files go (the last holder's
	 * going takes an index, which the next to ask makes again). */
	pthread_barrier_wait(w->go);
	for (int i = 0; i < nr_files; i++)
		close_file(&own[i]);
	return NULL;
}

/* Two threads at once over the same files in the same order (so that one
 * waits for an index the other builds): each names every address as a
 * lone symbolizer does, and each index is made once. */
START_TEST(two_threads_sharing_indexes_name_as_one_alone_each_file_made_once)
{
	struct pr__ixshare *set = pr__ixshare_new();
	struct pr__ixshare_stats st;
	struct opened lone[MAX_FILES];
	pthread_barrier_t go;
	static struct worker w[2];
	pthread_t t[2];
	size_t with_dwarf = 0;

	ck_assert_ptr_nonnull(set);
	ck_assert_int_le(nr_files, MAX_FILES);
	ck_assert_int_eq(pthread_barrier_init(&go, NULL, 2), 0);
	w[0] = (struct worker){ .set = set, .go = &go };
	for (int i = 0; i < nr_files; i++) {
		bool small;
		char *path = file_arg(i, &w[0].step[i], &small);

		/* Fewer addresses than alone: each thread names them all. */
		w[0].step[i] *= 4;
		open_file(&lone[i], path, NULL, true);
		w[0].want[i] = answers(&lone[i], w[0].step[i], &w[0].nr_want[i]);
		with_dwarf += files[i][0] != '@';
		free(path);
	}
	w[1] = w[0];
	for (int k = 0; k < 2; k++)
		ck_assert_int_eq(pthread_create(&t[k], NULL, work, &w[k]), 0);
	for (int k = 0; k < 2; k++)
		ck_assert_int_eq(pthread_join(t[k], NULL), 0);
	st = set_stats(set);
	fprintf(stderr, "two threads: %llu of %llu indexes taken after waiting for the other\n",
		(unsigned long long)st.waited, (unsigned long long)st.shared);
	for (int k = 0; k < 2; k++)
		ck_assert_msg(w[k].nr > 10 && !w[k].differ, "thread %d: %zu of %zu named otherwise",
			      k, w[k].differ, w[k].nr);
	ck_assert_msg(st.built == with_dwarf && st.shared == with_dwarf && !st.files,
		      "%zu files with DWARF: built %llu, shared %llu, held %llu", with_dwarf,
		      (unsigned long long)st.built, (unsigned long long)st.shared,
		      (unsigned long long)st.files);
	for (int i = 0; i < nr_files; i++) {
		free(w[0].want[i]);
		close_file(&lone[i]);
	}
	pthread_barrier_destroy(&go);
	pr__ixshare_put(set);
}
END_TEST

/*
 * The holder that made the index goes first: the other still names from
 * it (addresses it had not named yet), and the index goes with it.  The
 * caller's reference to the set put before theirs: the set stays until
 * the last file and symbolizer go (ASan's leak check sees it freed).
 */
START_TEST(an_index_outlives_the_holder_that_made_it)
{
	struct pr__ixshare_stats st;
	struct trio t;
	size_t nr, differ;

	trio_open_named(&t);
	ck_assert_ptr_eq(t.a.m->index, t.b.m->index);
	close_once(&t.a);
	st = set_stats(t.set);
	ck_assert_uint_eq(st.files, 1);
	ck_assert_uint_gt(st.bytes, 0);
	differ = name_like(&t.b, &t.lone, t.step, 2 * t.step, &nr);
	ck_assert_msg(!differ, "%zu named otherwise", differ);
	pr__ixshare_put(t.set);
	t.set = NULL;
	trio_close(&t);
}
END_TEST

/* A symbolizer asking for a file another is making, on a thread. */
struct asker {
	struct pr__ixshare *set;
	const struct pr__ixshare_id *id;
	struct pr__ixshare_file *f;
	bool make;
	_Atomic bool done;
};

static void *ask(void *arg)
{
	struct asker *k = arg;

	k->f = pr__ixshare_find(k->set, k->id, true, &k->make);
	k->done = true;
	return NULL;
}

/* The asker on its way, and seen waiting a tenth of a second later. */
static void start_asking(pthread_t *t, struct asker *k)
{
	k->done = false;
	ck_assert_int_eq(pthread_create(t, NULL, ask, k), 0);
	usleep(100000);
	ck_assert_msg(!k->done, "did not wait for the file being made");
}

/*
 * One asking for a file another is making waits, and takes what is
 * published: the index (the same file, not to make); or nothing, and then
 * makes it itself.
 */
START_TEST(one_asking_while_another_makes_waits_for_what_it_publishes)
{
	struct pr__ixshare *set = pr__ixshare_new();
	struct pr__ixshare_id id = { 0 };
	struct pr__ixshare_file *f;
	struct pr__symindex *ix;
	struct asker k = { .set = set, .id = &id };
	struct opened o;
	uint64_t step, bias;
	bool small, make;
	char *path = file_arg(0, &step, &small);
	pthread_t t;

	ck_assert_ptr_nonnull(set);
	open_file(&o, path, NULL, true);
	ck_assert(pr__sym_index_key(o.s, o.m, &id.key));
	ck_assert_ptr_nonnull(f = pr__ixshare_find(set, &id, true, &make));
	ck_assert(make);
	start_asking(&t, &k);
	ck_assert_ptr_nonnull(ix = pr__symindex_build(o.s, o.m));
	pr__ixshare_publish(f, ix, 0x1000, false);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert(!k.make && k.f == f && pr__ixshare_index(k.f, &bias) == ix && bias == 0x1000);
	ck_assert_uint_eq(set_stats(set).waited, 1);
	pr__ixshare_file_put(k.f);
	ck_assert_uint_eq(set_stats(set).files, 1);
	pr__ixshare_file_put(f);
	ck_assert_uint_eq(set_stats(set).files, 0);

	/* Nothing published: the one waiting makes it. */
	ck_assert_ptr_nonnull(f = pr__ixshare_find(set, &id, true, &make));
	ck_assert(make);
	start_asking(&t, &k);
	pr__ixshare_publish(f, NULL, 0, false);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert(k.make && k.f);
	pr__ixshare_publish(k.f, NULL, 0, false);
	ck_assert_uint_eq(set_stats(set).built + set_stats(set).files, 1);
	close_file(&o);
	free(path);
	pr__ixshare_put(set);
}
END_TEST

static struct pr_record exit_of(uint32_t pid)
{
	struct pr_record r = { .type = PR_RECORD_EXIT, .pid = pid, .tid = pid };

	r.u.task.ppid = r.u.task.ptid = pid;
	return r;
}

/* Let `o`'s process exit and its file go, as a model's trim does once the
 * grace period is over. */
static void exit_and_trim(struct opened *o)
{
	PR_OPTS(pr_cache_opts, co, .grace_ns = SECOND);
	struct pr_record r = exit_of(PID);

	ck_assert_int_eq(pr_model_set_cache(o->model, &co), 0);
	ck_assert_int_eq(pr_model_apply(o->model, &r), 0);
	ck_assert_int_eq(pr_model_trim(o->model, SECOND), 0);
	ck_assert_int_eq(pr_model_trim(o->model, 3 * SECOND), 0);
}

/* A trim that drops a file puts the symbolizer's reference: the index
 * stays while the other holds it, and goes with the other's trim. */
START_TEST(a_trim_puts_the_files_it_drops)
{
	struct pr__ixshare_stats st;
	struct trio t;

	trio_open_named(&t);
	ck_assert_uint_eq(set_stats(t.set).files, 1);
	exit_and_trim(&t.a);
	st = set_stats(t.set);
	ck_assert_uint_eq(st.files, 1);
	exit_and_trim(&t.b);
	st = set_stats(t.set);
	ck_assert_msg(st.files == 0 && st.bytes == 0, "after both trims: %llu held, %llu bytes",
		      (unsigned long long)st.files, (unsigned long long)st.bytes);
	trio_close(&t);
}
END_TEST

static int nr_cut_logged;

static void count_cut(enum pr_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == PR_LOG_WARN && strstr(msg, "cut short while this process had it mapped"))
		nr_cut_logged++;
}

static void give_inode(const struct pr_dso *dso, const struct stat *sb)
{
	struct pr_dso *d = (struct pr_dso *)dso;

	d->maj = major(sb->st_dev);
	d->min = minor(sb->st_dev);
	d->ino = sb->st_ino;
}

/*
 * An index in the cache cut short (truncate, a cp over it) while two
 * symbolizers sharing it, and a pool of answers, have it mapped: the one
 * that had not named the file takes the other's pooled answers, reads
 * zeros in them (base/busguard.c), and names the file again; both then
 * name every address as a lone symbolizer, each noticing once.
 */
START_TEST(an_index_cut_under_symbolizers_sharing_it_and_a_pool_names_as_before)
{
	char *dir = make_dir(), name[4300] = "";
	struct pr_sym_pool *pool = pr_sym_pool_new();
	PR_OPTS(pr_symbolizer_opts, store, .index_cache_dir = dir);
	PR_OPTS(pr_symbolizer_opts, opts, .index_cache_dir = dir, .pool = pool, .log = count_cut);
	struct pr__ixshare *set = pr__ixshare_new();
	struct opened lone, a, b;
	uint64_t step, hits, lookups;
	struct dirent *de;
	struct stat sb;
	size_t nr, differ;
	bool small;
	char *path = file_arg(0, &step, &small);
	DIR *d;

	ck_assert_ptr_nonnull(pool);
	ck_assert_ptr_nonnull(set);
	open_file(&lone, path, NULL, true);
	/* Stored first, then mapped by the two. */
	open_file(&a, path, &store, true);
	ck_assert_uint_eq(name_like(&a, &lone, 0, 16 * step, &nr), 0);
	close_file(&a);
	ck_assert_ptr_nonnull(d = opendir(dir));
	while ((de = readdir(d)))
		if (strstr(de->d_name, ".dsix"))
			snprintf(name, sizeof(name), "%s/%s", dir, de->d_name);
	closedir(d);
	nr_cut_logged = 0;
	open_file_shared(&a, path, &opts, set);
	open_file_shared(&b, path, &opts, set);
	ck_assert_msg(a.m->index && a.m->index == b.m->index, "%s: not one mapped index", path);
	/* One file to the pool, as a live MMAP2 record's device and inode
	 * say (this test's records have none). */
	ck_assert_int_eq(stat(path, &sb), 0);
	give_inode(a.f.dso, &sb);
	give_inode(b.f.dso, &sb);
	ck_assert_uint_eq(name_like(&a, &lone, 0, 8 * step, &nr), 0);
	ck_assert_int_eq(truncate(name, sysconf(_SC_PAGESIZE)), 0);
	differ = name_like(&b, &lone, 0, 8 * step, &nr);
	ck_assert_msg(nr > 10 && !differ, "b: %zu of %zu named otherwise", differ, nr);
	ck_assert_int_eq(pr_sym_pool_stats(pool, &hits, &lookups), 0);
	ck_assert_msg(hits > 0, "b took no pooled answer (%llu lookups)",
		      (unsigned long long)lookups);
	differ = name_like(&a, &lone, 0, 8 * step, &nr);
	ck_assert_msg(!differ, "a: %zu of %zu named otherwise", differ, nr);
	ck_assert_int_eq(nr_cut_logged, 2);
	close_file(&a);
	close_file(&b);
	close_file(&lone);
	pr__ixshare_put(set);
	pr_sym_pool_free(pool);
	remove_dir(dir);
	free(dir);
	free(path);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("ixshare");
	TCase *tc = tcase_create("share");

	files = argv + 1;
	nr_files = argc - 1;
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, two_symbolizers_sharing_indexes_name_as_one_alone_each_file_made_once);
	tcase_add_test(tc, with_the_index_cache_each_index_is_stored_then_mapped_once);
	tcase_add_test(tc, an_index_without_lines_serves_only_symbolizers_without);
	tcase_add_test(tc, with_libdw_alone_nothing_is_shared);
	tcase_add_test(tc, two_threads_sharing_indexes_name_as_one_alone_each_file_made_once);
	tcase_add_test(tc, one_asking_while_another_makes_waits_for_what_it_publishes);
	tcase_add_test(tc, an_index_outlives_the_holder_that_made_it);
	tcase_add_test(tc, a_trim_puts_the_files_it_drops);
	tcase_add_test(tc, an_index_cut_under_symbolizers_sharing_it_and_a_pool_names_as_before);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
