/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The roots of processes that run JIT code, kept open while they live.
 *
 * A JIT names its code in files of its own (/tmp/perf-PID.map, jitdump),
 * reached through /proc/PID/root.  That link is gone once the process has
 * exited (its EXIT record comes after the kernel dropped its root), and the
 * workers that name its frames run behind the capture thread: a process
 * that exits right after its work is over before they reach its samples.
 * So the capture thread, which sees the records first, opens the root of
 * each process that maps executable anonymous memory (a JIT's code) as it
 * appears, with its mount namespace (held open, that namespace and its
 * mounts -- a container's own /tmp -- outlive the process), and the
 * workers open its files relative to that root later.  Each entry lives
 * from that record's time to its EXIT's, so that a pid reused by another
 * process is another entry; it is closed once every worker has handled
 * the EXIT, after which none names a frame of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model.h"

/* Processes kept at most: two descriptors each, beside those the reader
 * needs for the events of threads still to come. */
#define MAX_ROOTS 128

struct root {
	uint32_t pid, nspid, uid;
	uint64_t born, died;         /* record times; died UINT64_MAX: alive */
	int root, mntns;             /* -1: not open (it was gone already) */
	bool known_ns, same_ns;
	char *dump;                  /* its jitdump file, as it mapped it; or NULL */
	uint64_t passed[4];          /* the users that handled its EXIT */
};

struct pr__roots {
	pthread_mutex_t lock;
	struct pr_logger lg;
	struct root v[MAX_ROOTS];
	size_t nr, users;
	bool full_said;
};

struct pr__roots *pr__roots_new(size_t users, const struct pr_logger *lg)
{
	struct pr__roots *r;

	if (!users || users > 256)
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
	r->users = users;
	if (lg)
		r->lg = *lg;
	return r;
}

static void close_root(struct root *e)
{
	if (e->root >= 0)
		close(e->root);
	if (e->mntns >= 0)
		close(e->mntns);
	free(e->dump);
}

void pr__roots_free(struct pr__roots *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nr; i++)
		close_root(&r->v[i]);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/* The pid process `pid` has in its own pid namespace (the name its
 * runtime gives its files): the last of /proc/PID/status's NSpid. */
static uint32_t ns_pid(uint32_t pid)
{
	char path[64], line[256];
	uint32_t inner = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		char *p = line + 6, *end;

		if (strncmp(line, "NSpid:", 6))
			continue;
		for (;;) {
			unsigned long v = strtoul(p, &end, 10);

			if (end == p)
				break;
			inner = (uint32_t)v;
			p = end;
		}
		break;
	}
	if (f)
		fclose(f);
	return inner;
}

/* Open what is kept of process `pid`, alive now (or not: then nothing
 * is, and the entry says so). */
static void open_root(struct root *e)
{
	char path[64];
	struct stat theirs, ours, proc;
	int dir;

	e->root = e->mntns = -1;
	snprintf(path, sizeof(path), "/proc/%u", e->pid);
	dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return;
	if (!fstat(dir, &proc))
		e->uid = proc.st_uid;
	e->root = openat(dir, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	e->mntns = openat(dir, "ns/mnt", O_RDONLY | O_CLOEXEC);
	if (e->mntns >= 0 && !fstat(e->mntns, &theirs) && !stat("/proc/self/ns/mnt", &ours)) {
		e->known_ns = true;
		e->same_ns = theirs.st_ino == ours.st_ino && theirs.st_dev == ours.st_dev;
	}
	close(dir);
	e->nspid = ns_pid(e->pid);
}

/* Whether `path` is a jitdump file's, "jit-PID.dump" (V8 writes it in
 * its working directory, others in /tmp: its runtime maps it executable
 * to say where). */
static bool is_jitdump(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	return !strncmp(base, "jit-", 4) && n > 9 && !strcmp(base + n - 5, ".dump");
}

/* Whether `rec` maps code a JIT wrote: executable anonymous memory, or
 * a jitdump file. */
static bool maps_jit_code(const struct pr_record *rec)
{
	const struct pr_mmap *mm = &rec->u.mmap;

	if (!mm->filename ||
	    (mm->is_mmap2 ? !(mm->prot & PROT_EXEC) : (rec->misc & PERF_RECORD_MISC_MMAP_DATA)))
		return false;
	return !strncmp(mm->filename, "//anon", 6) || is_jitdump(mm->filename);
}

/* The entry of `pid` alive at the capture thread's present, or NULL. */
static struct root *alive(struct pr__roots *r, uint32_t pid)
{
	for (size_t i = 0; i < r->nr; i++)
		if (r->v[i].pid == pid && r->v[i].died == UINT64_MAX)
			return &r->v[i];
	return NULL;
}

/*
 * A full table: the oldest entry of a process that has exited, which only
 * a worker far behind still wants, or else of one that is gone (its EXIT
 * lost with a ring's overflow, say) goes.  Under the lock.
 */
static void make_room(struct pr__roots *r)
{
	struct root *old = NULL;
	char proc[32];

	for (int pass = 0; pass < 2 && !old; pass++)
		for (size_t i = 0; i < r->nr; i++) {
			struct root *e = &r->v[i];

			if (old && e->born >= old->born)
				continue;
			snprintf(proc, sizeof(proc), "/proc/%u", e->pid);
			if (pass ? access(proc, F_OK) != 0 : e->died != UINT64_MAX)
				old = e;
		}
	if (!old)
		return;
	close_root(old);
	*old = r->v[--r->nr];
}

void pr__roots_record(struct pr__roots *r, const struct pr_record *rec)
{
	uint64_t time = rec->fields & PR_ID_TIME ? rec->time : 0;
	struct root *e;

	if (!r)
		return;
	if (rec->type == PR_RECORD_EXIT && rec->pid == rec->tid) {
		pthread_mutex_lock(&r->lock);
		if ((e = alive(r, rec->pid)))
			e->died = time;
		pthread_mutex_unlock(&r->lock);
		return;
	}
	if ((rec->type != PR_RECORD_MMAP && rec->type != PR_RECORD_MMAP2) ||
	    rec->pid == UINT32_MAX || !maps_jit_code(rec))
		return;
	pthread_mutex_lock(&r->lock);
	if ((e = alive(r, rec->pid))) {
		if (!e->dump && is_jitdump(rec->u.mmap.filename))
			e->dump = strdup(rec->u.mmap.filename);
		pthread_mutex_unlock(&r->lock);
		return;
	}
	if (r->nr == MAX_ROOTS)
		make_room(r);
	if (r->nr == MAX_ROOTS) {
		if (!r->full_said)
			pr__log(&r->lg, PR_LOG_DEBUG, "%d processes with JIT code kept already: "
				"the perf map of process %u is read only while it lives",
				MAX_ROOTS, rec->pid);
		r->full_said = true;
		pthread_mutex_unlock(&r->lock);
		return;
	}
	e = &r->v[r->nr];
	memset(e, 0, sizeof(*e));
	e->pid = rec->pid;
	e->born = time;
	e->died = UINT64_MAX;
	/* Opened outside the lock would need the slot reserved; a few
	 * system calls, once per process, that no worker waits on long. */
	open_root(e);
	if (is_jitdump(rec->u.mmap.filename))
		e->dump = strdup(rec->u.mmap.filename);
	r->nr++;
	pthread_mutex_unlock(&r->lock);
}

/* The latest entry of `pid` born by `time`: the process of `pid` then.
 * Under the lock. */
static const struct root *at_time(const struct pr__roots *r, uint32_t pid, uint64_t time)
{
	const struct root *best = NULL;

	for (size_t i = 0; i < r->nr; i++)
		if (r->v[i].pid == pid && r->v[i].born <= time &&
		    (!best || r->v[i].born >= best->born))
			best = &r->v[i];
	return best;
}

int pr__roots_get(struct pr__roots *r, uint32_t pid, uint64_t time, struct pr__root_info *out)
{
	const struct root *e;

	memset(out, 0, sizeof(*out));
	out->root = -1;
	if (!r)
		return -ENOENT;
	pthread_mutex_lock(&r->lock);
	e = at_time(r, pid, time);
	if (e) {
		out->root = e->root >= 0 ? fcntl(e->root, F_DUPFD_CLOEXEC, 0) : -1;
		out->nspid = e->nspid ? e->nspid : pid;
		out->uid = e->uid;
		out->known_ns = e->known_ns;
		out->same_ns = e->same_ns;
		out->exited = e->died != UINT64_MAX;
	}
	pthread_mutex_unlock(&r->lock);
	return e ? 0 : -ENOENT;
}

bool pr__roots_exited(struct pr__roots *r, uint32_t pid, uint64_t time)
{
	const struct root *e;
	bool exited;

	if (!r)
		return false;
	pthread_mutex_lock(&r->lock);
	e = at_time(r, pid, time);
	exited = e && e->died != UINT64_MAX;
	pthread_mutex_unlock(&r->lock);
	return exited;
}

/* Why a JIT file was not read, for the log. */
static const char *refusal(int err)
{
	return err == -EINVAL ? "not a regular file" :
	       err == -EFBIG ? "larger than the most that is read of it" :
	       err == -ELOOP ? "a symbolic link (a runtime writes it as a file)" :
	       err == -EPERM ? "owned by neither the process's user nor root" : strerror(-err);
}

int pr__jit_file_checked(int fd, const char *path, uint32_t pid, bool check, uid_t owner,
			 off_t max, const struct pr_logger *lg)
{
	struct stat st;
	int err = 0;

	if (fd < 0)
		err = fd;
	else if (fstat(fd, &st))
		err = -errno;
	else if (!S_ISREG(st.st_mode))
		err = -EINVAL;
	else if (st.st_size > max)
		err = -EFBIG;
	else if (check && st.st_uid && st.st_uid != owner)
		err = -EPERM;
	if (!err)
		return fd;
	if (fd >= 0)
		close(fd);
	pr__log(lg, PR_LOG_DEBUG, "%s of process %u not read: %s (%lld MiB)", path, pid,
		refusal(err), (long long)(max >> 20));
	return err;
}

int pr__root_open(const struct pr__root_info *ri, enum pr__jit_file kind, uint32_t pid,
		  off_t max, const struct pr_logger *lg)
{
	char path[PATH_MAX];
	int fd;

	/* A jitdump file where the process mapped it, else where most
	 * runtimes write it. */
	if (kind == PR_JIT_DUMP && ri->dump)
		snprintf(path, sizeof(path), "%s", ri->dump);
	else if (kind == PR_JIT_DUMP)
		snprintf(path, sizeof(path), "/tmp/jit-%u.dump", ri->nspid);
	else
		snprintf(path, sizeof(path), "/tmp/perf-%u.map", ri->nspid);
	/* Its root, kept; else the host's file where it shared our mount
	 * namespace; else nothing says where it is.  Non-blocking: a FIFO
	 * put there must not hang the reader. */
	if (ri->root >= 0) {
		fd = pr__open_under(ri->root, path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
	} else if (ri->known_ns && ri->same_ns) {
		fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
	} else {
		return -ENOENT;
	}
	if (fd == -ENOENT)
		return fd;
	return pr__jit_file_checked(fd, path, pid, true, ri->uid, max, lg);
}

int pr__roots_each(struct pr__roots *r, pr__roots_fn fn, void *arg)
{
	int err = 0;

	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; !err && i < r->nr; i++) {
		const struct root *e = &r->v[i];
		struct pr__root_info ri = {
			.root = e->root, .nspid = e->nspid ? e->nspid : e->pid, .uid = e->uid,
			.known_ns = e->known_ns, .same_ns = e->same_ns,
			.exited = e->died != UINT64_MAX, .dump = e->dump,
		};

		err = fn(e->pid, e->born, e->died, &ri, arg);
	}
	pthread_mutex_unlock(&r->lock);
	return err;
}

void pr__roots_passed(struct pr__roots *r, size_t user, uint32_t pid, uint64_t time)
{
	if (!r || user >= r->users)
		return;
	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < r->nr;) {
		struct root *e = &r->v[i];
		size_t all = 0;

		if (e->pid != pid || e->died > time) {
			i++;
			continue;
		}
		e->passed[user / 64] |= UINT64_C(1) << (user % 64);
		for (size_t u = 0; u < r->users; u++)
			all += (e->passed[u / 64] >> (u % 64)) & 1;
		if (all < r->users) {
			i++;
			continue;
		}
		close_root(e);
		*e = r->v[--r->nr];
	}
	pthread_mutex_unlock(&r->lock);
}
