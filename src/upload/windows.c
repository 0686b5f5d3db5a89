/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The windows (prupload.h): cut, grouped, labelled, handed on.
 * Memory stays flat window after window: the profile's tables are made
 * anew at each cut, and what is known of a process (its executable's name,
 * its container) is kept only while it keeps being sampled.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "prupload.h"

#define NS_PER_S UINT64_C(1000000000)
/* Windows a process may go unsampled before what is known of it goes. */
#define PROC_GRACE 4

/* What the labels say of a process sampled in the window. */
struct proc_info {
	uint32_t pid;
	char exe[64];                /* its executable's name, else its comm */
	char service[64];            /* exe as a service name (clean_service) */
	struct pr_container ct;
	uint64_t seen;               /* the last window it was sampled in */
	uint32_t group;              /* in the window being shipped */
};

struct pr_windows {
	struct pr_windows_opts o;    /* its strings and tags the caller's */
	struct pr_logger lg;
	struct pr_profile *live;
	uint64_t start, end;         /* the current window, event clock */
	int64_t wall_offset;         /* wall clock - event clock */
	uint64_t seq;
	struct proc_info *procs;     /* sorted by pid */
	size_t nr_procs, cap_procs;
	struct pr_windows_stats st;
	enum pr_profile_mode mode;   /* of the profiles */
};

static uint64_t wall_of(const struct pr_windows *w, uint64_t t)
{
	return (uint64_t)((int64_t)t + w->wall_offset);
}

/* The next wall-clock multiple of the interval after event time `t`. */
static uint64_t next_boundary(const struct pr_windows *w, uint64_t t)
{
	uint64_t iv = w->o.interval_ns;

	return (uint64_t)((int64_t)((wall_of(w, t) / iv + 1) * iv) - w->wall_offset);
}

/*
 * A profile made with `po`, its events named as Pyroscope takes sample
 * types: each byte outside [A-Za-z0-9_] a '_' ("page-faults" is
 * "page_faults", "cycles:u" "cycles_u"); Pyroscope refuses a window whose
 * sample type has a '-'.  Its pprof tells threads by their numbers
 * alone: Pyroscope makes a series label of a sample's string labels.
 */
static struct pr_profile *new_profile(const struct pr_profile_opts *po)
{
	size_t n = po && PR_OPTS_VALID(po) ? PR_OPTS_GET(po, nr_events, 0) : 0;
	struct pr_profile_opts pc = { .sz = sizeof(pc) };
	struct pr_profile *p = NULL;
	char **names;

	if (po && PR_OPTS_VALID(po))
		memcpy(&pc, po, po->sz < sizeof(pc) ? po->sz : sizeof(pc));
	else if (po)
		return pr_profile_new(po);
	/* Pyroscope would make a series of each thread name. */
	pc.sz = sizeof(pc);
	pc.pprof_numeric_thread_labels = true;
	if (!n || !po->events)
		return pr_profile_new(&pc);
	names = calloc(n, sizeof(*names));
	for (size_t i = 0; names && i < n; i++) {
		if (!(names[i] = strdup(po->events[i] ? po->events[i] : ""))) {
			errno = ENOMEM;
			goto out;
		}
		for (char *c = names[i]; *c; c++)
			if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			      (*c >= '0' && *c <= '9')))
				*c = '_';
	}
	if (names) {
		pc.events = (const char *const *)names;
		p = pr_profile_new(&pc);
	}
out:
	if (!names)
		errno = ENOMEM;
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	return p;
}

struct pr_windows *pr_windows_new(const struct pr_windows_opts *o,
				  const struct pr_profile_opts *po, uint64_t start,
				  uint64_t start_wall)
{
	uint64_t iv = PR_OPTS_GET(o, interval_ns, 0);
	struct pr_windows *w;

	if (!PR_OPTS_VALID(o) || !iv || iv % NS_PER_S || !PR_OPTS_GET(o, host, NULL) ||
	    !PR_OPTS_GET(o, ship, NULL) || (PR_OPTS_GET(o, nr_tags, 0) && !o->tags)) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w || !(w->live = new_profile(po))) {
		free(w);
		return NULL;
	}
	memcpy(&w->o, o, o->sz < sizeof(w->o) ? o->sz : sizeof(w->o));
	w->lg = (struct pr_logger){ w->o.log, w->o.log_ctx };
	w->st.sz = sizeof(w->st);
	w->mode = PR_OPTS_GET(po, mode, PR_PROFILE_CPU);
	w->wall_offset = (int64_t)start_wall - (int64_t)start;
	w->start = start;
	w->end = next_boundary(w, start);
	for (size_t i = 0; i < w->o.nr_tags; i++)
		if (pr_profile_tag(w->live, w->o.tags[i].key, w->o.tags[i].value)) {
			pr_windows_free(w);
			errno = ENOMEM;
			return NULL;
		}
	return w;
}

static int cmp_pid(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = ((const struct proc_info *)b)->pid;

	return x < y ? -1 : x > y;
}

/* What is known of process `pid`, or NULL. */
static struct proc_info *find_proc(const struct pr_windows *w, uint32_t pid)
{
	return w->nr_procs ? bsearch(&pid, w->procs, w->nr_procs, sizeof(*w->procs), cmp_pid)
			   : NULL;
}

/* A byte Pyroscope takes in a service name: [A-Za-z0-9_./-]. */
static bool service_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '/' || c == '-';
}

/* `s` as a service name Pyroscope takes: "[unknown]" is "unknown", each
 * other byte outside the set a '_' ("g++" is "g__"); "unknown" when
 * nothing is left.  The same name always becomes the same. */
static void clean_service(char *s, size_t len)
{
	size_t n = strlen(s), k = 0;

	if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
		memmove(s, s + 1, n - 2);
		s[n -= 2] = '\0';
	}
	for (size_t i = 0; i < n; i++)
		s[k++] = service_byte((unsigned char)s[i]) ? s[i] : '_';
	s[k] = '\0';
	if (!k)
		snprintf(s, len, "unknown");
}

/* The systemd service whose cgroup holds process `pid` ("nginx" for
 * .../nginx.service), into buf. */
static bool unit_name(uint32_t pid, char *buf, size_t len)
{
	char path[64], line[1024];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/cgroup", pid);
	if (!(f = fopen(path, "re")))
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *last, *nl = strchr(line, '\n');
		size_t n;

		if (strncmp(line, "0::/", 4))
			continue;
		if (nl)
			*nl = '\0';
		last = strrchr(line, '/') + 1;
		n = strlen(last);
		if (n > 8 && n - 8 < len && !strcmp(last + n - 8, ".service")) {
			memcpy(buf, last, n - 8);
			buf[n - 8] = '\0';
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* Process `pid`'s parent, or 0. */
static uint32_t parent_of(uint32_t pid)
{
	char path[64], stat[512], *close;
	unsigned ppid = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/stat", pid);
	if (!(f = fopen(path, "re")))
		return 0;
	n = fread(stat, 1, sizeof(stat) - 1, f);
	fclose(f);
	stat[n] = '\0';
	/* After the name, which may hold anything: ") S PPID". */
	close = strrchr(stat, ')');
	if (!close || sscanf(close + 1, " %*c %u", &ppid) != 1)
		return 0;
	return ppid;
}

/* How many parents an executable without a file of its own goes up. */
#define PARENT_DEPTH 4

/*
 * The name of process `pid`'s executable, while the process lives: the
 * basename of /proc/PID/exe (an executable deleted since it started, its
 * old name).  One without a file of its own (run from a memfd, or
 * anonymous) has no stable name of its own: it is named by its systemd
 * service, else by its parent's executable, else "memfd".
 */
static bool exe_name(uint32_t pid, char *buf, size_t len, int depth)
{
	char path[64], target[4096];
	ssize_t n;
	const char *base;
	uint32_t ppid;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/exe", pid);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	if (!strncmp(target, "/memfd:", 7) || target[0] != '/') {
		if (unit_name(pid, buf, len))
			return true;
		ppid = parent_of(pid);
		if (depth < PARENT_DEPTH && ppid > 1 && exe_name(ppid, buf, len, depth + 1))
			return true;
		snprintf(buf, len, "%s", target[0] == '/' ? "memfd" : "anonymous");
		return true;
	}
	/* An executable deleted since it started: its old name. */
	if (n > 10 && !strcmp(target + n - 10, " (deleted)"))
		target[n - 10] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	/* A name longer than the buffer is cut. */
	n = (ssize_t)strlen(base);
	if ((size_t)n >= len)
		n = (ssize_t)len - 1;
	memcpy(buf, base, (size_t)n);
	buf[n] = '\0';
	return n > 0;
}

/* What is known of process `pid` sampled in window `win`: looked up again
 * while it lives (it may have exec'd), kept from earlier windows once it is
 * gone.  NULL when out of memory. */
static struct proc_info *proc_info(struct pr_windows *w, const struct pr_profile *win,
				   uint32_t pid)
{
	struct proc_info *pi = find_proc(w, pid);
	struct pr_container ct;
	char exe[64];

	if (!pi) {
		size_t at = 0;

		if (w->nr_procs == w->cap_procs) {
			size_t cap = w->cap_procs ? 2 * w->cap_procs : 64;
			struct proc_info *v = realloc(w->procs, cap * sizeof(*v));

			if (!v)
				return NULL;
			w->procs = v;
			w->cap_procs = cap;
		}
		while (at < w->nr_procs && w->procs[at].pid < pid)
			at++;
		memmove(&w->procs[at + 1], &w->procs[at], (w->nr_procs - at) * sizeof(*pi));
		w->nr_procs++;
		pi = &w->procs[at];
		memset(pi, 0, sizeof(*pi));
		pi->pid = pid;
	}
	if (exe_name(pid, exe, sizeof(exe), 0)) {
		memcpy(pi->exe, exe, sizeof(exe));
	} else if (!pi->exe[0]) {
		/* Gone before its window was cut: its name as the kernel kept
		 * it, the first 15 characters, stands for the executable a
		 * process seen alive had, if one had those. */
		const char *comm = pr_profile_process(win, pid);

		snprintf(pi->exe, sizeof(pi->exe), "%s", comm && comm[0] ? comm : "unknown");
		for (size_t i = 0; comm && strlen(comm) == 15 && i < w->nr_procs; i++)
			if (&w->procs[i] != pi && strlen(w->procs[i].exe) > 15 &&
			    !strncmp(w->procs[i].exe, comm, 15)) {
				memcpy(pi->exe, w->procs[i].exe, sizeof(pi->exe));
				break;
			}
	}
	memcpy(pi->service, pi->exe, sizeof(pi->service));
	clean_service(pi->service, sizeof(pi->service));
	if (!pr_container_of(pid, &ct))
		pi->ct = ct;
	pi->seen = w->seq;
	return pi;
}

/* Forget the processes not sampled for a while. */
static void prune_procs(struct pr_windows *w)
{
	size_t n = 0;

	for (size_t i = 0; i < w->nr_procs; i++)
		if (w->procs[i].seen + PROC_GRACE >= w->seq)
			w->procs[n++] = w->procs[i];
	w->nr_procs = n;
}

static const char *group_key(const struct pr_windows *w, const struct proc_info *pi,
			     char *buf, size_t len)
{
	switch (w->o.group_by) {
	case PR_GROUP_PROCESS:
		snprintf(buf, len, "%" PRIu32, pi->pid);
		return buf;
	case PR_GROUP_HOST:
		return "";
	default:
		return w->o.service ? w->o.service : pi->service;
	}
}

/* ---- a group's window ---- */

struct kv_list {
	struct pr_label *v;
	size_t nr;
	struct pr_attr *a;
	size_t nr_a;
	bool oom;
};

/* `s` as valid UTF-8 (pr__utf8_clean), as Pyroscope and OTLP want label
 * values: one bad byte in a tag or a host name would have the whole
 * window refused. */
static char *dup_str(struct kv_list *l, const char *s)
{
	size_t size = 3 * strlen(s) + 1;
	char *d = malloc(size);

	if (!d)
		l->oom = true;
	return d ? pr__utf8_clean(d, size, s) : NULL;
}

/* A Pyroscope label (its names are Prometheus label names). */
static void add_label(struct kv_list *l, const char *key, const char *value)
{
	l->v[l->nr].key = dup_str(l, key);
	l->v[l->nr].value = dup_str(l, value);
	l->nr++;
}

/* An OTLP resource attribute: a string, or with `value` NULL a number. */
static void add_attr(struct kv_list *l, const char *key, const char *value, int64_t num)
{
	l->a[l->nr_a].key = dup_str(l, key);
	l->a[l->nr_a].str = value ? dup_str(l, value) : NULL;
	l->a[l->nr_a].num = num;
	l->nr_a++;
}

/* The processes of a group [first, first + n) of `procs`, all sharing a
 * container, or NULL. */
static const struct pr_container *shared_container(struct proc_info *const *procs, size_t n)
{
	const struct pr_container *ct = &procs[0]->ct;

	if (!ct->id[0])
		return NULL;
	for (size_t i = 1; i < n; i++)
		if (strcmp(procs[i]->ct.id, ct->id))
			return NULL;
	return ct;
}

/* Hand the uploader group `procs` (n of them) of window `win`, whose
 * profile `g` it takes. */
static int ship_group(struct pr_windows *w, struct pr_profile *g, struct proc_info *const *procs,
		      size_t n, const char *service, uint64_t from, uint64_t until)
{
	const struct pr_container *ct = shared_container(procs, n);
	/* The tags, then host, pid, container and pod; as attributes, also
	 * the service and the executable. */
	size_t max = w->o.nr_tags + 8;
	struct pr_window *win = calloc(1, sizeof(*win));
	struct kv_list l = { .v = calloc(max, sizeof(*l.v)), .a = calloc(max, sizeof(*l.a)) };
	char pid[16];

	if (!win || !l.v || !l.a) {
		free(win);
		free(l.v);
		free(l.a);
		pr_profile_free(g);
		return -ENOMEM;
	}
	snprintf(pid, sizeof(pid), "%" PRIu32, procs[0]->pid);
	for (size_t i = 0; i < w->o.nr_tags; i++)
		add_label(&l, w->o.tags[i].key, w->o.tags[i].value);
	add_label(&l, "host_name", w->o.host);
	add_attr(&l, "service.name", service, 0);
	add_attr(&l, "host.name", w->o.host, 0);
	if (n == 1) {
		if (w->o.group_by == PR_GROUP_PROCESS)
			add_label(&l, "pid", pid);
		add_attr(&l, "process.pid", NULL, procs[0]->pid);
		add_attr(&l, "process.executable.name", procs[0]->exe, 0);
	}
	if (ct) {
		add_label(&l, "container_id", ct->id);
		add_attr(&l, "container.id", ct->id, 0);
		if (ct->pod_uid[0]) {
			add_label(&l, "pod_uid", ct->pod_uid);
			add_attr(&l, "k8s.pod.uid", ct->pod_uid, 0);
		}
	}
	for (size_t i = 0; i < w->o.nr_tags; i++)
		add_attr(&l, w->o.tags[i].key, w->o.tags[i].value, 0);
	win->profile = g;
	win->service = strdup(service);
	win->seq = w->seq;
	win->start_ns = from;
	win->end_ns = until;
	win->freq = w->o.freq;
	win->labels = l.v;
	win->nr_labels = l.nr;
	win->resource = l.a;
	win->nr_resource = l.nr_a;
	if (l.oom || !win->service) {
		pr_window_free(win);
		return -ENOMEM;
	}
	w->st.profiles++;
	return w->o.ship(w->o.ship_ctx, win);
}

static int cmp_group(const void *a, const void *b)
{
	const struct proc_info *x = *(struct proc_info *const *)a;
	const struct proc_info *y = *(struct proc_info *const *)b;

	return x->group != y->group ? (x->group < y->group ? -1 : 1)
				    : (x->pid > y->pid) - (x->pid < y->pid);
}

/* Group the processes of window `win` (which is freed) and ship each
 * group. */
static int ship(struct pr_windows *w, struct pr_profile *win, uint64_t from, uint64_t until)
{
	size_t n = pr_profile_pids(win, NULL, 0), groups = 0;
	uint32_t *pids = calloc(n ? n : 1, sizeof(*pids));
	struct proc_info **procs = calloc(n ? n : 1, sizeof(*procs));
	char **keys = calloc(n ? n : 1, sizeof(*keys));
	int err = 0;

	if (!pids || !procs || !keys) {
		err = -ENOMEM;
		goto out;
	}
	pr_profile_pids(win, pids, n);
	/* Found first, all of them: proc_info() may move the array. */
	for (size_t i = 0; i < n; i++)
		if (!proc_info(w, win, pids[i])) {
			err = -ENOMEM;
			goto out;
		}
	for (size_t i = 0; i < n; i++) {
		struct proc_info *pi = find_proc(w, pids[i]);
		char buf[16];
		const char *key = group_key(w, pi, buf, sizeof(buf));
		size_t g;

		for (g = 0; g < groups && strcmp(keys[g], key); g++)
			;
		if (g == groups && !(keys[groups++] = strdup(key))) {
			err = -ENOMEM;
			goto out;
		}
		pi->group = (uint32_t)g;
		procs[i] = pi;
		/* Every sample says which container it came from. */
		if ((pi->ct.id[0] && pr_profile_process_tag(win, pi->pid, "container.id",
							    pi->ct.id)) ||
		    (pi->ct.pod_uid[0] && pr_profile_process_tag(win, pi->pid, "k8s.pod.uid",
								 pi->ct.pod_uid))) {
			err = -ENOMEM;
			goto out;
		}
	}
	qsort(procs, n, sizeof(*procs), cmp_group);
	for (size_t i = 0, j; i < n; i = j) {
		struct pr_profile *g;
		char service[256];

		for (j = i; j < n && procs[j]->group == procs[i]->group; j++)
			pids[j - i] = procs[j]->pid;
		snprintf(service, sizeof(service), "%s",
			 w->o.group_by == PR_GROUP_SERVICE ? keys[procs[i]->group]
			 : w->o.service ? w->o.service
			 : w->o.group_by == PR_GROUP_HOST ? w->o.host : procs[i]->service);
		clean_service(service, sizeof(service));
		g = groups == 1 ? win : pr_profile_select(win, pids, j - i);
		if (g == win)
			win = NULL;
		if (!g || ship_group(w, g, procs + i, j - i, service, from, until)) {
			pr__log(&w->lg, PR_LOG_WARN, "window %" PRIu64 ": the profile of %s was lost: %s",
				w->seq, service, strerror(g ? ENOMEM : errno));
			w->st.lost++;
		}
	}
out:
	for (size_t i = 0; keys && i < groups; i++)
		free(keys[i]);
	free(keys);
	free(procs);
	free(pids);
	pr_profile_free(win);
	prune_procs(w);
	return err;
}

/* End the current window at `end` and ship it. */
static int cut(struct pr_windows *w, uint64_t end)
{
	struct pr_profile *win = pr_profile_cut(w->live, end);
	uint64_t from = wall_of(w, w->start), until = wall_of(w, end);
	int err;

	if (!win) {
		/* The samples stay in the live profile: the next window has
		 * them. */
		pr__log(&w->lg, PR_LOG_WARN, "window %" PRIu64 " could not be cut: %s; its samples go "
			"to the next", w->seq, strerror(errno));
		w->st.lost++;
		return 0;
	}
	pr_profile_set_time(win, from, until - from);
	err = ship(w, win, from, until);
	w->st.windows++;
	w->seq++;
	w->start = end;
	return err;
}

/* Cut every window that ends at or before `time` (event clock). */
static int advance(struct pr_windows *w, uint64_t time)
{
	while (time >= w->end) {
		int err = cut(w, w->end);

		w->end += w->o.interval_ns;
		if (err)
			return err;
	}
	return 0;
}

/* A record's time, before it is counted: one older than the current
 * window (it came after its window was cut) is counted there, as late. */
static int record_time(struct pr_windows *w, uint64_t time)
{
	if (time < w->start)
		w->st.late++;
	return advance(w, time);
}

int pr_windows_finish(struct pr_windows *w, uint64_t end)
{
	int err = advance(w, end);

	if (err)
		return err;
	err = pr_profile_end(w->live, end > w->start ? end : w->start);
	/* -EINVAL: a CPU profile, which has no waits. */
	if (err && err != -EINVAL)
		return err;
	return end > w->start ? cut(w, end) : 0;
}

int pr_windows_stats(const struct pr_windows *w, struct pr_windows_stats *st)
{
	if (!w)
		return -EINVAL;
	return pr__stats_copy(st, &w->st, sizeof(w->st));
}

void pr_windows_free(struct pr_windows *w)
{
	if (!w)
		return;
	pr_profile_free(w->live);
	free(w->procs);
	free(w);
}

/* Records are handed over in time order a round late; what is read
 * later than that still lands in an open window if it is this much
 * older than the horizon. */
#define HORIZON_SLACK_NS UINT64_C(100000000)

/* A window cut: nothing holds what the model handed out for the
 * profile just cut, so its caches may be trimmed. */
static int released(const struct pr_windows *w, uint64_t before, int err)
{
	return err ? err : w->st.windows != before ? PR_SINK_RELEASED : 0;
}

static int session_time(void *ctx, uint64_t time)
{
	struct pr_windows *w = ctx;
	uint64_t before = w->st.windows;

	return released(w, before, record_time(w, time));
}

static int session_record(void *ctx, const struct pr_record *rec)
{
	struct pr_windows *w = ctx;

	/* Switches and exits end waits; in CPU time only samples count. */
	if (w->mode == PR_PROFILE_CPU)
		return 0;
	return pr_profile_apply(w->live, rec);
}

/* A thread's or a process's name as the kernel has it, any bytes, as
 * valid UTF-8 (label values must be): `buf` when it needed cleaning. */
static const char *utf8_name(const char *s, char *buf, size_t size)
{
	for (const unsigned char *u = (const unsigned char *)s; u && *u; u++) {
		uint32_t cp;
		size_t n = *u < 0x80 ? 1 : pr__utf8_decode(u, &cp);

		if (!n)
			return pr__utf8_clean(buf, size, s);
		u += n - 1;
	}
	return s;
}

static int session_sample(void *ctx, const struct pr_sink_sample *smp)
{
	struct pr_profile *p = ((struct pr_windows *)ctx)->live;
	char cbuf[3 * 16 + 1], pbuf[3 * 256 + 1];
	const char *comm = utf8_name(smp->comm, cbuf, sizeof(cbuf));
	const char *process = utf8_name(smp->process, pbuf, sizeof(pbuf));

	if (smp->off_cpu)
		return pr_profile_add_switch(p, smp->sym, smp->rec, smp->st, comm, process);
	return pr_profile_add_event(p, smp->event, smp->sym, smp->rec, smp->st, comm, process);
}

/* Windows end even when no record comes. */
static int session_tick(void *ctx, uint64_t horizon)
{
	struct pr_windows *w = ctx;
	uint64_t before = w->st.windows;

	if (horizon <= HORIZON_SLACK_NS)
		return 0;
	return released(w, before, advance(w, horizon - HORIZON_SLACK_NS));
}

void pr_windows_sink(struct pr_windows *w, struct pr_sink *out)
{
	*out = (struct pr_sink){
		.sz = sizeof(*out), .ctx = w, .time = session_time, .record = session_record,
		.sample = session_sample, .tick = session_tick,
	};
}
