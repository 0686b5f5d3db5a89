/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Events by name, as perf spells them: parsing "page-faults:u",
 * "sched:sched_switch" and lists with "{a,b}:k" groups into event
 * descriptions; naming an attr back; checking that an event opens here.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "capture/capture.h"

struct known_event {
	const char *name;       /* perf's canonical spelling */
	const char *alias;      /* perf's other spelling, or NULL */
	uint32_t type;
	uint64_t config;
};

/* Software first: the events every machine has. */
static const struct known_event known[] = {
	{ "cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
	{ "cgroup-switches", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CGROUP_SWITCHES },
	{ "cycles", "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", "branch-instructions", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", "idle-cycles-frontend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", "idle-cycles-backend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
};

/* Privilege levels a modifier lets the event count in. */
enum {
	MODE_USER = 1,
	MODE_KERNEL = 2,
};

/* Longest item of a list we look at: a tracepoint name with a modifier
 * fits PR_EVENT_NAME_MAX, so anything longer is wrong anyway. */
#define ITEM_MAX (2 * PR_EVENT_NAME_MAX)

static const struct known_event *find_known(const char *name)
{
	for (size_t i = 0; i < PR_ARRAY_SIZE(known); i++)
		if (!strcmp(known[i].name, name) ||
		    (known[i].alias && !strcmp(known[i].alias, name)))
			return &known[i];
	return NULL;
}

/* The close known names for `name`, as "did you mean ...? " or "";
 * whether there are any. */
static bool suggest_known(const char *name, char *hint, size_t size)
{
	struct pr_suggest sg;

	pr__suggest_init(&sg, name);
	for (size_t i = 0; i < PR_ARRAY_SIZE(known); i++) {
		pr__suggest_offer(&sg, known[i].name);
		if (known[i].alias)
			pr__suggest_offer(&sg, known[i].alias);
	}
	pr__suggest_text(&sg, "", hint, size);
	return sg.n > 0;
}

static int unknown_event(const char *name, const struct pr_logger *lg)
{
	char hint[3 * (PR_SUGGEST_LEN + 16)];

	if (strchr(name, '/')) {
		pr__log(lg, PR_LOG_ERROR,
			"event '%s': PMU events (pmu/config/) are not supported; use a "
			"named event (`perf list` shows them) or a tracepoint subsystem:name",
			name);
		return -ENOENT;
	}
	suggest_known(name, hint, sizeof(hint));
	pr__log(lg, PR_LOG_ERROR,
		"unknown event '%s': %s`perf list` shows the events this kernel has "
		"(tracepoints are named subsystem:name)", name, hint);
	return -ENOENT;
}

/* Modifier letters -> MODE_* mask.  `event` is the whole item, for the
 * message. */
static int parse_modifier(const char *mod, const char *event, unsigned int *modes,
			  const struct pr_logger *lg)
{
	*modes = 0;
	if (!*mod) {
		pr__log(lg, PR_LOG_ERROR,
			"'%s' ends in ':' without a modifier: use :u (user mode only), "
			":k (kernel only) or :uk (both), or drop the ':'", event);
		return -EINVAL;
	}
	for (const char *c = mod; *c; c++) {
		if (*c == 'u') {
			*modes |= MODE_USER;
		} else if (*c == 'k') {
			*modes |= MODE_KERNEL;
		} else {
			pr__log(lg, PR_LOG_ERROR,
				"unknown modifier '%c' in '%s': use :u (user mode only), "
				":k (kernel only) or :uk (both)", *c, event);
			return -EINVAL;
		}
	}
	return 0;
}

/* Whether `s` could only be meant as modifiers (perf's letters). */
static bool looks_like_modifier(const char *s)
{
	return *s && strspn(s, "ukhpPGHSDIWeb") == strlen(s);
}

/*
 * One event (no commas, no braces) into *ev, with `group_mod` (or NULL)
 * applied too.  `item` is a writable copy, split in place.
 */
static int parse_item(char *item, const char *group_mod, struct pr_event_desc *ev,
		      const struct pr_logger *lg)
{
	char whole[ITEM_MAX], mods[16], hint[3 * (PR_SUGGEST_LEN + 16)];
	const struct known_event *k;
	char *name = item, *second, *mod = NULL;
	unsigned int modes = 0, group_modes = 0;
	uint32_t type;
	uint64_t config;
	int err;

	snprintf(whole, sizeof(whole), "%s", item);
	second = strchr(item, ':');
	if (second)
		*second++ = '\0';
	k = find_known(name);
	if (k) {
		mod = second;
		type = k->type;
		config = k->config;
		name = (char *)k->name;
	} else if (!second || (!strchr(second, ':') && looks_like_modifier(second) &&
			       suggest_known(name, hint, sizeof(hint)))) {
		/* "pagefaults:u" is a misspelt event, not a tracepoint. */
		return unknown_event(name, lg);
	} else {
		mod = strchr(second, ':');
		if (mod)
			*mod++ = '\0';
	}
	/* The syntax is checked before tracefs is asked. */
	if (mod && (err = parse_modifier(mod, whole, &modes, lg)))
		return err;
	if (group_mod && (err = parse_modifier(group_mod, whole, &group_modes, lg)))
		return err;
	if (!k) {
		err = pr__tracepoint_id(name, second, &config, lg);
		if (err)
			return err;
		type = PERF_TYPE_TRACEPOINT;
		second[-1] = ':';
	}
	/* A member's own modes join the group's, as perf combines them. */
	if (group_modes)
		modes |= group_modes;

	mods[0] = '\0';
	if (mod)
		snprintf(mods, sizeof(mods), "%.*s", (int)(sizeof(mods) - 1), mod);
	for (const char *c = group_mod; c && *c; c++)
		if (!strchr(mods, *c) && strlen(mods) + 1 < sizeof(mods))
			strncat(mods, c, 1);

	memset(ev, 0, sizeof(*ev));
	if (!pr__path_fmt(ev->name, sizeof(ev->name), "%s%s%s", name, mods[0] ? ":" : "",
			  mods)) {
		pr__log(lg, PR_LOG_ERROR, "event name '%s' is longer than %d characters",
			whole, PR_EVENT_NAME_MAX - 1);
		return -EINVAL;
	}
	ev->type = type;
	ev->config = config;
	ev->exclude_user = modes && !(modes & MODE_USER);
	ev->exclude_kernel = modes && !(modes & MODE_KERNEL);
	return 0;
}

/* s[0..len) without surrounding blanks, into item (NUL-terminated). */
static int copy_item(const char *s, size_t len, char *item, const char *list,
		     const struct pr_logger *lg)
{
	while (len && (*s == ' ' || *s == '\t'))
		s++, len--;
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (len >= ITEM_MAX) {
		pr__log(lg, PR_LOG_ERROR, "event '%.*s...' in '%s' is too long to be an event",
			40, s, list);
		return -EINVAL;
	}
	memcpy(item, s, len);
	item[len] = '\0';
	return 0;
}

int pr__lookup_logger(const struct pr_event_lookup_opts *opts, struct pr_logger *lg)
{
	if (!PR_OPTS_VALID(opts))
		return -EINVAL;
	*lg = (struct pr_logger){ 0 };
	if (PR_OPTS_HAS(opts, log_ctx)) {
		lg->fn = opts->log;
		lg->ctx = opts->log_ctx;
	}
	return 0;
}

static int parse_event(const char *s, struct pr_event_desc *ev, const struct pr_logger *lg)
{
	struct pr_event_desc parsed;
	char item[ITEM_MAX];
	int err;

	if (!s || !ev)
		return -EINVAL;
	if (s[strcspn(s, ",{}")]) {
		pr__log(lg, PR_LOG_ERROR,
			"'%s' is a list or a group: one event is expected here", s);
		return -EINVAL;
	}
	err = copy_item(s, strlen(s), item, s, lg);
	if (err)
		return err;
	if (!item[0]) {
		pr__log(lg, PR_LOG_ERROR, "no event given: name one, such as cpu-clock");
		return -EINVAL;
	}
	err = parse_item(item, NULL, &parsed, lg);
	if (err)
		return err;
	*ev = parsed;
	return 0;
}

PR_SYMVER(pr__event_parse_2_1, "pr_event_parse@@LIBPERFREADER_2.1");
int pr__event_parse_2_1(const char *s, struct pr_event_desc *ev,
			const struct pr_event_lookup_opts *opts)
{
	struct pr_logger lg;

	return pr__lookup_logger(opts, &lg) ? -EINVAL : parse_event(s, ev, &lg);
}

/* 2.0 took the log callback bare. */
PR_SYMVER(pr__event_parse_2_0, "pr_event_parse@LIBPERFREADER_2");
int pr__event_parse_2_0(const char *s, struct pr_event_desc *ev, pr_log_fn log, void *log_ctx)
{
	struct pr_logger lg = { log, log_ctx };

	return parse_event(s, ev, &lg);
}

/* The state of a list being parsed. */
struct list_parse {
	const char *list;
	struct pr_event_desc *evs;
	size_t max, n;
	const struct pr_logger *lg;
};

static int empty_item(const struct list_parse *lp, const char *at)
{
	if (!*lp->list)
		pr__log(lp->lg, PR_LOG_ERROR, "no events given: name one, such as cpu-clock");
	else
		pr__log(lp->lg, PR_LOG_ERROR,
			"empty event at character %zu of '%s': name one there or remove the extra ','",
			(size_t)(at - lp->list) + 1, lp->list);
	return -EINVAL;
}

/* Parse s[0..len) (one event) as the next, with its group's modifier. */
static int add_event(struct list_parse *lp, const char *s, size_t len,
		     const char *group_mod, uint32_t leader)
{
	char item[ITEM_MAX];
	int err;

	err = copy_item(s, len, item, lp->list, lp->lg);
	if (err)
		return err;
	if (!item[0])
		return empty_item(lp, s);
	if (lp->n == lp->max) {
		pr__log(lp->lg, PR_LOG_ERROR, "'%s' has more than %zu events: name fewer",
			lp->list, lp->max);
		return -E2BIG;
	}
	err = parse_item(item, group_mod, &lp->evs[lp->n], lp->lg);
	if (err)
		return err;
	lp->evs[lp->n].leader = leader;
	lp->n++;
	return 0;
}

/* "{a,b}:mod" at *pp; on return *pp is past it. */
static int parse_group(struct list_parse *lp, const char **pp)
{
	const char *open = *pp, *close, *end, *p;
	char mod[16] = "", group[ITEM_MAX];
	bool has_mod = false;
	uint32_t leader = (uint32_t)lp->n;
	unsigned int modes;
	int err;

	close = strpbrk(open + 1, "{}");
	if (!close) {
		pr__log(lp->lg, PR_LOG_ERROR,
			"the group at character %zu of '%s' has no closing '}'",
			(size_t)(open - lp->list) + 1, lp->list);
		return -EINVAL;
	}
	if (*close == '{') {
		pr__log(lp->lg, PR_LOG_ERROR,
			"groups cannot nest ('{' at character %zu of '%s'): close the first "
			"group before opening another", (size_t)(close - lp->list) + 1, lp->list);
		return -EINVAL;
	}
	end = close + 1;
	if (*end == ':') {
		size_t len = strcspn(end + 1, ",");

		if (len >= sizeof(mod) || strcspn(end + 1, "{}") < len) {
			pr__log(lp->lg, PR_LOG_ERROR, "bad group modifier '%.*s' in '%s': "
				"use :u (user mode only), :k (kernel only) or :uk (both)",
				(int)len, end + 1, lp->list);
			return -EINVAL;
		}
		memcpy(mod, end + 1, len);
		has_mod = true;
		end += 1 + len;
		/* Said once, of the group, rather than of each member. */
		snprintf(group, sizeof(group), "%.*s", (int)(end - open), open);
		err = parse_modifier(mod, group, &modes, lp->lg);
		if (err)
			return err;
	}
	for (p = open + 1; p <= close; ) {
		size_t len = strcspn(p, ",}");

		err = add_event(lp, p, len, has_mod ? mod : NULL, leader);
		if (err)
			return err;
		p += len + 1;
	}
	*pp = end;
	return 0;
}

static int parse_list(const char *s, struct pr_event_desc *evs, size_t max,
		      const struct pr_logger *lg)
{
	struct list_parse lp = { s, evs, max, 0, lg };
	const char *p = s;
	int err;

	if (!s || (!evs && max))
		return -EINVAL;
	for (;;) {
		p += strspn(p, " \t");
		if (*p == '{') {
			err = parse_group(&lp, &p);
		} else {
			size_t len = strcspn(p, ",{}");

			if (p[len] == '}' || p[len] == '{') {
				pr__log(lg, PR_LOG_ERROR,
					"unexpected '%c' at character %zu of '%s': a group is "
					"written {a,b} and stands between commas", p[len],
					(size_t)(p + len - s) + 1, s);
				return -EINVAL;
			}
			err = add_event(&lp, p, len, NULL, (uint32_t)lp.n);
			p += len;
		}
		if (err)
			return err;
		p += strspn(p, " \t");
		if (!*p)
			break;
		if (*p != ',') {
			pr__log(lg, PR_LOG_ERROR,
				"unexpected '%c' at character %zu of '%s': separate events with ','",
				*p, (size_t)(p - s) + 1, s);
			return -EINVAL;
		}
		p++;
		if (!p[strspn(p, " \t")])
			return empty_item(&lp, p);
	}
	return (int)lp.n;
}

PR_SYMVER(pr__event_list_parse_2_1, "pr_event_list_parse@@LIBPERFREADER_2.1");
int pr__event_list_parse_2_1(const char *s, struct pr_event_desc *evs, size_t max,
			     const struct pr_event_lookup_opts *opts)
{
	struct pr_logger lg;

	return pr__lookup_logger(opts, &lg) ? -EINVAL : parse_list(s, evs, max, &lg);
}

PR_SYMVER(pr__event_list_parse_2_0, "pr_event_list_parse@LIBPERFREADER_2");
int pr__event_list_parse_2_0(const char *s, struct pr_event_desc *evs, size_t max,
			     pr_log_fn log, void *log_ctx)
{
	struct pr_logger lg = { log, log_ctx };

	return parse_list(s, evs, max, &lg);
}

int pr_event_desc_from_attr(const struct perf_event_attr *attr, struct pr_event_desc *ev)
{
	char name[PR_EVENT_NAME_MAX];
	const char *mod = "";

	if (!attr || !ev)
		return -EINVAL;
	name[0] = '\0';
	for (size_t i = 0; i < PR_ARRAY_SIZE(known) && !name[0]; i++)
		if (known[i].type == attr->type && known[i].config == attr->config)
			snprintf(name, sizeof(name), "%s", known[i].name);
	if (name[0])
		;
	else if (attr->type == PERF_TYPE_TRACEPOINT) {
		if (pr__tracepoint_name(attr->config, name, sizeof(name)))
			snprintf(name, sizeof(name), "tracepoint %llu",
				 (unsigned long long)attr->config);
	} else if (attr->type == PERF_TYPE_RAW)
		snprintf(name, sizeof(name), "raw 0x%llx", (unsigned long long)attr->config);
	else
		snprintf(name, sizeof(name), "%u:0x%llx", attr->type,
			 (unsigned long long)attr->config);

	if (attr->exclude_kernel && !attr->exclude_user)
		mod = ":u";
	else if (attr->exclude_user && !attr->exclude_kernel)
		mod = ":k";
	else if (attr->exclude_user && attr->exclude_kernel && !attr->exclude_hv)
		mod = ":h";
	memset(ev, 0, sizeof(*ev));
	snprintf(ev->name, sizeof(ev->name), "%.*s%s", (int)(sizeof(name) - 3), name, mod);
	ev->type = attr->type;
	ev->config = attr->config;
	ev->exclude_user = attr->exclude_user;
	ev->exclude_kernel = attr->exclude_kernel;
	return 0;
}

bool pr_event_counts_ns(const struct pr_event_desc *ev)
{
	return ev && ev->type == PERF_TYPE_SOFTWARE &&
	       (ev->config == PERF_COUNT_SW_CPU_CLOCK || ev->config == PERF_COUNT_SW_TASK_CLOCK);
}

uint64_t pr_event_default_period(const struct pr_event_desc *ev)
{
	/* Faults, switches and migrations come in bursts and pauses: the
	 * kernel's frequency mode sets each period from the rate just
	 * before, so a burst after a pause is sampled at a stale period
	 * and counts go wrong.  Each hit is the point of a tracepoint. */
	if (!ev)
		return 0;
	if (ev->type == PERF_TYPE_TRACEPOINT)
		return 1;
	if (ev->type != PERF_TYPE_SOFTWARE)
		return 0;
	switch (ev->config) {
	case PERF_COUNT_SW_PAGE_FAULTS:
	case PERF_COUNT_SW_PAGE_FAULTS_MIN:
	case PERF_COUNT_SW_PAGE_FAULTS_MAJ:
	case PERF_COUNT_SW_CONTEXT_SWITCHES:
	case PERF_COUNT_SW_CPU_MIGRATIONS:
	case PERF_COUNT_SW_ALIGNMENT_FAULTS:
	case PERF_COUNT_SW_EMULATION_FAULTS:
		return 1;
	default:
		return 0;
	}
}

const char *pr_event_known_name(size_t i)
{
	return i < PR_ARRAY_SIZE(known) ? known[i].name : NULL;
}

/* ---- pr_event_check ---- */

/* Messages about an event, prefixed with its name. */
struct named_logger {
	struct pr_logger to;
	const char *name;
};

static void log_named(enum pr_log_level level, const char *msg, void *ctx)
{
	struct named_logger *nl = ctx;

	pr__log(&nl->to, level, "event '%s': %s", nl->name, msg);
}

static int check_event(const struct pr_event_desc *ev, const struct pr_logger *to)
{
	struct named_logger nl = { *to, ev ? ev->name : "" };
	struct pr_logger lg = { log_named, &nl };
	PR_OPTS(pr_event_opts, o, .desc = ev, .log = log_named, .log_ctx = &nl);
	struct perf_event_attr attr;
	int fd;

	if (!ev)
		return -EINVAL;
	fd = pr_event_attr(&o, PR_SOURCE_EVENT, PR_ATTR_COUNT, &attr);
	if (fd < 0)
		return fd;
	fd = pr__perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (ev->type == PERF_TYPE_HARDWARE &&
	    (fd == -ENOENT || fd == -EOPNOTSUPP || fd == -ENODEV)) {
		pr__log(&nl.to, PR_LOG_ERROR,
			"the hardware event %s is not available on this machine (no PMU: a VM?); "
			"use a software event such as cpu-clock", ev->name);
		return fd;
	}
	pr__explain_open_error(&lg, -fd, &attr, 0, -1);
	/* kernel.perf_event_paranoid 2 still lets anyone count their own
	 * user mode. */
	if ((fd == -EACCES || fd == -EPERM) && !ev->exclude_kernel && !ev->exclude_user &&
	    ev->type != PERF_TYPE_TRACEPOINT)
		pr__log(&lg, PR_LOG_INFO,
			"counting user mode only (the :u modifier) may need no privileges");
	return fd;
}

PR_SYMVER(pr__event_check_2_1, "pr_event_check@@LIBPERFREADER_2.1");
int pr__event_check_2_1(const struct pr_event_desc *ev, const struct pr_event_lookup_opts *opts)
{
	struct pr_logger lg;

	return pr__lookup_logger(opts, &lg) ? -EINVAL : check_event(ev, &lg);
}

PR_SYMVER(pr__event_check_2_0, "pr_event_check@LIBPERFREADER_2");
int pr__event_check_2_0(const struct pr_event_desc *ev, pr_log_fn log, void *log_ctx)
{
	struct pr_logger lg = { log, log_ctx };

	return check_event(ev, &lg);
}
