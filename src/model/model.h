/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The model: processes, their mappings and the files mapped, built from
 * records in time order; where a mapped file and its debug file are found.
 */
#ifndef PR_MODEL_H
#define PR_MODEL_H

#include <libelf.h>

#include "base/base.h"
#include "prmodel.h"

/* ---- buildid.c ---- */

/* The GNU build-id of an ELF file, of a notes blob, or of the running
 * kernel: 0 and up to PR_BUILD_ID_MAX bytes in `id`, -ENOENT when there is
 * none, -EINVAL when the file is not ELF, or -errno. */
int pr__build_id_fd(int fd, uint8_t *id, size_t *id_len);
int pr__build_id_path(const char *path, uint8_t *id, size_t *id_len);
int pr__build_id_from_notes(const void *buf, size_t len, uint8_t *id,
			    size_t *id_len);
int pr__build_id_kernel(uint8_t *id, size_t *id_len);
/* The running kernel's vDSO (every process maps the same image). */
int pr__build_id_vdso(uint8_t *id, size_t *id_len);
/* ... of an ELF file libelf has open (either class). */
int pr__build_id_elf(Elf *elf, uint8_t *id, size_t *id_len);
/* Where this process has the vDSO: 0, or -ENOENT. */
int pr__vdso_image(const void **image, size_t *size);

/* ---- model.c ---- */

/* A mapped file, shared by every mapping and process that maps it. */
struct pr_dso {
	char *path;
	uint32_t maj, min;
	uint64_t ino;
	uint8_t build_id[PR_BUILD_ID_MAX];
	uint8_t build_id_size;     /* 0: not known (yet) */
	/* Anonymous memory ("//anon"): what runs there is a JIT's, named
	 * per process by its perf map, not by a file. */
	bool anon;
	/* Set when a frame lands in it (pr_model_mark_sampled()); a trim
	 * reads and clears it (least recently sampled files go first). */
	bool sampled;
	uint64_t last_epoch;         /* the last trim that found it sampled */
	uint64_t mapped_epoch;       /* the last trim that found it mapped */
	uint64_t unmapped_at;        /* event time no mapping had it since; 0: mapped */
	bool going;                  /* forgotten by the trim under way (trim.c) */
	/* Which DSO of this process's this is, never reused: one freed by
	 * a trim and another made at its address are told apart. */
	uint64_t serial;
	struct pr_dso *next_same_key;
};

/* Hints on a file's build-id, by path (pr_model_set_build_id()). */
struct pr_build_id_hint {
	char *path;
	uint8_t id[PR_BUILD_ID_MAX];
	uint8_t len;
	struct pr_build_id_hint *next_same_key;
};

struct pr_map {
	uint64_t start, end;       /* [start, end) */
	uint64_t pgoff;            /* file offset of start */
	uint32_t prot;
	struct pr_dso *dso;
};

/* One process: its mappings sorted by address, never overlapping. */
struct pr_proc {
	uint32_t pid;
	uint32_t nr_threads;       /* announced and not yet exited */
	/* Changes whenever the mappings do; unique across processes, so a
	 * consumer caching per process notices a reused pid too. */
	uint64_t generation;
	/* Changes when a mapping that holds code (PROT_EXEC) comes, goes or
	 * is cut, and with every change of `generation` that is not a
	 * mapping's (fork, exec, the old image let go): what the unwinder's
	 * frame cache is keyed by.  A process that maps data all the time (a
	 * JIT's heap, a compiler's arenas: perf records those mappings too)
	 * keeps the frames it unwound.  From the same counter as
	 * `generation`, so unique across processes too. */
	uint64_t code_generation;
	/* Which process this is (pr_frame's proc_serial): set when the pid
	 * appears and at each exec, never 0. */
	uint32_t serial;
	struct pr_map *maps;
	size_t nr, cap;
	/* The image before the last exec, until a sample shows the new one
	 * running (a SAMPLE record applied). */
	struct pr_map *old;
	size_t nr_old;
	/* check_processes: when a trim first found the pid gone (the
	 * records' clock, CLOCK_MONOTONIC), 0 while it runs (trim.c). */
	uint64_t gone_at;
};

/* A thread: its process and name. */
struct pr_thread {
	uint32_t tid, pid;
	char comm[16];
};

/* How many threads that exited keep their names (pr_model's `exited`). */
#define PR_MODEL_EXITED 64

struct pr_elf;
struct pr_elfcache;

/*
 * A user of the model's files (an unwinder, a symbolizer), told at a trim
 * what goes (trim.c).  Both members must not be NULL; `arg` is theirs.
 */
struct pr_model_user {
	/* Bytes of the user's own state built from file `e`. */
	size_t (*weigh)(void *arg, const struct pr_elf *e);
	/* Drop everything built from files marked `going` or keyed by DSOs
	 * marked `going` (both freed once every user returns), and what is
	 * kept of processes the model no longer has. */
	void (*trim)(void *arg);
	/* Optional: the pages of what it mapped from files leave the
	 * resident set (pr__model_release_pages()); nothing is freed. */
	void (*release)(void *arg);
	void *arg;
	/* What the user handed out is held elsewhere for the model's life
	 * (a symbolizer sharing a pool): pr_model_trim() refuses. */
	bool pins;
	struct pr_model_user *next;
};

struct pr_model {
	struct pr_hashmap procs;      /* pid -> struct pr_proc */
	struct pr_hashmap threads;    /* tid -> struct pr_thread */
	/* The threads that exited last, newest at next_exited - 1: a task
	 * still runs after its EXIT record, finishing its exit in the
	 * kernel, and those samples are named by it. */
	struct pr_thread exited[PR_MODEL_EXITED];
	uint32_t next_exited;
	struct pr_hashmap dso_index;  /* dso_key() -> struct pr_dso (chained) */
	struct pr_dso **dsos;
	size_t nr_dsos, cap_dsos;
	struct pr_hashmap hints;      /* pr__hash_str(path) -> build-id hint (chained) */
	uint64_t generation;
	uint32_t serial;              /* the last struct pr_proc's */
	/* The kernel's text as recorded: the symbol perf relocates by
	 * ("_text" of "[kernel.kallsyms]_text") and its address (pgoff). */
	char kernel_ref[32];
	uint64_t kernel_ref_addr;
	struct pr_elfcache *elves;    /* made on first use */
	/* pr_model_opts gave debug directories: those of the unwinders' and
	 * symbolizers' options (deprecated) are not added. */
	bool own_debug_dirs;

	/* Bounds (trim.c). */
	struct pr_model_user *users;
	uint64_t max_bytes, grace_ns, max_age_ns;
	bool check_processes;
	uint64_t epoch;               /* trims so far */
	struct pr_cache_stats cache;
};

/* Free a process taken out of the model. */
void pr__proc_free(struct pr_proc *p);
/* The dso_index key of a file. */
uint64_t pr__dso_key(const char *path, uint32_t maj, uint32_t min, uint64_t ino);
/* Tell `u` what goes at each trim, until pr__model_unlisten(). */
void pr__model_listen(struct pr_model *m, struct pr_model_user *u);
void pr__model_unlisten(struct pr_model *m, struct pr_model_user *u);
/* Between trims: the pages of the files held leave the resident set, as
 * a trim's last step does (they stay in the page cache, and are mapped
 * again as they are read).  Nothing is freed: it may run while what the
 * model handed out is held. */
void pr__model_release_pages(struct pr_model *m);


struct pr_model *pr__model_new(void);
void pr__model_free(struct pr_model *m);
/* pr_model_new() of each version node (libperfreader.map). */
PR_VERSIONED struct pr_model *pr__model_new_2_1(const struct pr_model_opts *opts);
PR_VERSIONED struct pr_model *pr__model_new_2_0(void);
/* Apply MMAP, MMAP2, FORK, EXIT, COMM and SAMPLE records, in time order;
 * others are ignored.  Returns 0 or -ENOMEM. */
int pr__model_apply(struct pr_model *m, const struct pr_record *rec);
/* The mapping of `pid` holding `addr`, or NULL.  Valid until the next
 * change to that process. */
const struct pr_map *pr__model_find(struct pr_model *m, uint32_t pid, uint64_t addr);
struct pr_proc *pr__model_proc(struct pr_model *m, uint32_t pid, bool create);

struct pr_dirs {
	char **v;
	size_t nr;
};

/* The directories files are looked up in by build-id: the caller's, then
 * /usr/lib/debug and perf's ~/.debug.  0, or -1 when out of memory. */
int pr__debug_dirs(const char *const *extra, size_t nr_extra, struct pr_dirs *out);
void pr__dirs_free(struct pr_dirs *d);

struct pr_dso_query {
	const struct pr_dso *dso;
	const struct pr_map *map;    /* the mapping, for a live process; or NULL */
	uint32_t pid;
	bool live;                   /* the process runs on this machine */
	const struct pr_dirs *dirs;
	/* Not 0: the pid of a process in another mount namespace
	 * (pr__mntns_differs()), whose files are looked for only inside its
	 * root, never on the host. */
	uint32_t root;
	/* A live process whose mount namespace could not be told (it is
	 * gone): the path on the host is taken only when it is the very file
	 * mapped (the mapping's device and inode, or d's build-id). */
	bool unsure;
};

/* Offer `try` each place the file of q->dso may be, most specific first:
 * /proc/PID/map_files and the path inside the process's root (live,
 * opened by pr__open_in_root()), DIR/.build-id/xx/rest, DIR/xx/rest and
 * DIR/.build-id/xx/rest/elf (by build-id; inside q->root's root when
 * set), the path (not when q->root is set; when q->unsure, only if it is
 * the file mapped).  Each opened by
 * pr__open_target_file(): regular files only.  `try` gets each
 * that opens as an fd it owns, and the path it was found by (for
 * messages).  The first nonzero return ends the search and is returned;
 * 0 when none was taken. */
int pr__dso_find(const struct pr_dso_query *q,
		 int (*try)(int fd, const char *path, void *arg), void *arg);

/* The places the debug file of build-id `hex` may be in `dirs`, one by
 * one into `out` (*it 0 for the first): in each directory, a debug
 * package's DIR/.build-id/xx/rest.debug, then perf's build-id cache's
 * DIR/.build-id/xx/rest/debug.  False after the last. */
bool pr__debug_file_next(const struct pr_dirs *dirs, const char *hex, size_t *it, char *out,
			 size_t size);

/* ---- rootopen.c ---- */

/*
 * Open `path` of process `pid` as the process sees it: resolved inside
 * /proc/PID/root, its symlinks and ".." never leaving that root
 * (openat2 RESOLVE_IN_ROOT, or pr__open_beneath() where the kernel has no
 * openat2).  `flags` as open(2)'s (O_CLOEXEC is added).  The fd, or a
 * negative errno.
 */
int pr__open_in_root(uint32_t pid, const char *path, int flags);
/* The same walk a component at a time under the directory `root` (an
 * O_PATH fd): absolute links and ".." stop at `root`. */
int pr__open_beneath(int root, const char *path, int flags);
/* pr__open_in_root() under a root already open (an O_PATH fd of a
 * /proc/PID/root, kept: roots.c). */
int pr__open_under(int root, const char *path, int flags);
/* Whether process `pid` is in another mount namespace than ours (its
 * files are then its own, reached only through its root, never the
 * host's at the same path): 1 or 0, or a negative errno when that cannot
 * be told (the process is gone). */
int pr__mntns_differs(uint32_t pid);
/*
 * The one way a file of a target (a mapped file, a debug file, a perf
 * map) is opened: inside process `pid`'s root (pr__open_in_root()) when
 * `pid` is not 0, else `path` itself; read-only and non-blocking (a FIFO
 * never waits for a writer), and kept only when it is a regular file
 * (else -EINVAL, said at debug level).  The fd (O_NONBLOCK set, which
 * changes nothing for a regular file), or a negative errno.
 */
int pr__open_target_file(uint32_t pid, const char *path, const struct pr_logger *lg);
/* ---- runtime.c ---- */

enum pr__runtime {
	PR_RUNTIME_NONE,
	PR_RUNTIME_NODE,             /* node, nodejs, libnode.so */
	PR_RUNTIME_JAVA,             /* libjvm.so */
	PR_RUNTIME_DOTNET,           /* libcoreclr.so */
	PR_RUNTIME_PYTHON,           /* libpython3.X.so, python3.X */
};
/* The JIT runtime process `pid` maps (its first, in address order), and
 * a CPython's minor version in *minor (else 0). */
enum pr__runtime pr__model_runtime(struct pr_model *m, uint32_t pid, unsigned *minor);

/* ---- roots.c ---- */

/*
 * The roots of processes running JIT code, kept open from when the
 * capture thread sees them map executable anonymous memory (or a jitdump
 * file) until every user (a session's worker) has handled their EXIT, so
 * that their JIT files are read after they exited.  At most 128 at a
 * time: when full, the oldest of a process that exited, or else is gone,
 * makes room.  Thread-safe.  NULL when out of memory (or `users` is 0 or over
 * 256).
 */
struct pr__roots;
struct pr__roots *pr__roots_new(size_t users, const struct pr_logger *lg);
void pr__roots_free(struct pr__roots *r);
/* The capture thread: every record, as it is read, before any user gets
 * it.  `r` may be NULL. */
void pr__roots_record(struct pr__roots *r, const struct pr_record *rec);
/* What was kept of process `pid` as it was at record time `time`. */
struct pr__root_info {
	int root;                    /* a copy of the kept root (the caller closes it), or -1 */
	uint32_t nspid;              /* its pid in its own pid namespace */
	uint32_t uid;                /* the owner of its /proc/PID */
	bool known_ns, same_ns;      /* ... whether its mount namespace is ours */
	bool exited;                 /* the capture thread saw its EXIT */
	/* The jitdump file it mapped, as its path in its root: only in
	 * pr__roots_each()'s call (NULL otherwise, and when none). */
	const char *dump;
};
/* 0, or -ENOENT when nothing was kept of it (`out` then says so too). */
int pr__roots_get(struct pr__roots *r, uint32_t pid, uint64_t time, struct pr__root_info *out);
/* Whether the capture thread saw that process exit. */
bool pr__roots_exited(struct pr__roots *r, uint32_t pid, uint64_t time);
/* A JIT's files. */
enum pr__jit_file {
	PR_JIT_PERF_MAP,             /* /tmp/perf-PID.map */
	PR_JIT_DUMP,                 /* jit-PID.dump where it mapped it, else in /tmp */
};
/*
 * Open JIT file `kind` of a kept process (named by its pid in its own
 * namespace; a jitdump file where it mapped it, ri->dump, when known): under its kept root, else the host's file
 * where it shared our mount namespace, else -ENOENT.  Non-blocking, and
 * refused (said in the log at debug level) unless a regular file (-EINVAL,
 * a FIFO), not a symbolic link (-ELOOP), of at most `max` bytes (-EFBIG),
 * owned by root or by the process's user (-EPERM).  The fd, or a negative
 * errno.
 */
int pr__root_open(const struct pr__root_info *ri, enum pr__jit_file kind, uint32_t pid,
		  off_t max, const struct pr_logger *lg);
/* The checks of pr__root_open() on `fd` (a negative errno passes through,
 * said in the log too; `check`: the owner too, against `owner`). */
int pr__jit_file_checked(int fd, const char *path, uint32_t pid, bool check, uid_t owner,
			 off_t max, const struct pr_logger *lg);
/* Each entry kept, oldest first: `fn`'s nonzero return ends the walk and
 * is returned.  ri->root is the entry's own (not to be closed). */
typedef int (*pr__roots_fn)(uint32_t pid, uint64_t born, uint64_t died,
			    const struct pr__root_info *ri, void *arg);
int pr__roots_each(struct pr__roots *r, pr__roots_fn fn, void *arg);
/* User `user` handled the EXIT of `pid`'s main thread at `time`: what
 * every user has is closed. */
void pr__roots_passed(struct pr__roots *r, size_t user, uint32_t pid, uint64_t time);

/* A thread's name (COMM, inherited at FORK), or NULL when unknown. */
const char *pr__model_comm(const struct pr_model *m, uint32_t tid);
int pr__proc_insert(struct pr_proc *p, const struct pr_map *nm);
const struct pr_map *pr__proc_find(const struct pr_proc *p, uint64_t addr);
/* The DSO for a file, created on first use; NULL when out of memory. */
struct pr_dso *pr__model_dso(struct pr_model *m, const char *path, uint32_t maj,
			    uint32_t min, uint64_t ino);
/* The build-id recorded for `path` (pr_model_set_build_id()) into `id`
 * (PR_BUILD_ID_MAX bytes): its length, 0 when none. */
size_t pr__model_build_id_hint(const struct pr_model *m, const char *path, uint8_t *id);
/* Where the kernel was when recorded: the symbol its text mapping is
 * relative to ("_text"), *addr its address; NULL when no record said. */
const char *pr__model_kernel_ref(const struct pr_model *m, uint64_t *addr);
size_t pr__model_nr_dsos(const struct pr_model *m);
struct pr_dso *pr__model_dso_at(const struct pr_model *m, size_t i);

#endif /* PR_MODEL_H */
