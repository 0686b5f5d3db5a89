/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Decoding records into typed values.  Every read is bounds-checked against
 * the record's own size, so a body that does not match its header or the
 * event's sample_type is reported, never read past.
 */
#include <errno.h>
#include <string.h>

#include "records/records.h"

struct cursor {
	const unsigned char *p;
	const unsigned char *end;
	const char *why;  /* first failure */
	bool tail_ok;     /* a sample may end before the record does */
};

static bool take(struct cursor *c, size_t n, const void **out,
		 const char *what)
{
	if (c->why)
		return false;
	if ((size_t)(c->end - c->p) < n) {
		c->why = what;
		return false;
	}
	if (out)
		*out = c->p;
	c->p += n;
	return true;
}

static uint64_t take_u64(struct cursor *c, const char *what)
{
	const void *v;
	uint64_t x = 0;

	if (take(c, 8, &v, what))
		memcpy(&x, v, 8);
	return x;
}

/* Two u32 in one u64 slot, as the kernel packs pid/tid and cpu/res. */
static void take_u32_pair(struct cursor *c, uint32_t *a, uint32_t *b,
			  const char *what)
{
	const void *v;

	if (take(c, 8, &v, what)) {
		memcpy(a, v, 4);
		memcpy(b, (const unsigned char *)v + 4, 4);
	}
}

bool pr__attr_takes_foreign_ids(const struct perf_event_attr *attr)
{
	if (attr->type != PERF_TYPE_SOFTWARE || !attr->sample_period)
		return false;
	switch (attr->config) {
	case PERF_COUNT_SW_CPU_CLOCK:
	case PERF_COUNT_SW_TASK_CLOCK:
	case PERF_COUNT_SW_DUMMY:
	case PERF_COUNT_SW_BPF_OUTPUT:
		return false;
	default:
		return true;
	}
}

void pr__parse_cfg_from_attr(struct pr_parse_cfg *cfg,
			     const struct perf_event_attr *attr)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->sample_type = attr->sample_type;
	cfg->read_format = attr->read_format;
	cfg->regs_user = attr->sample_regs_user;
	cfg->regs_intr = attr->sample_regs_intr;
	cfg->branch_sample_type = attr->branch_sample_type;
	cfg->sample_id_all = attr->sample_id_all;
	cfg->fixed_period = attr->freq ? 0 : attr->sample_period;
	cfg->nr_regs_user = (unsigned int)__builtin_popcountll(attr->sample_regs_user);
	cfg->nr_regs_intr = (unsigned int)__builtin_popcountll(attr->sample_regs_intr);
	/* The sample_id trailer of non-sample records. */
	if (attr->sample_id_all) {
		uint64_t t = attr->sample_type;

		cfg->sample_id_size = 8 * (size_t)(!!(t & PERF_SAMPLE_TID) +
			!!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ID) +
			!!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU) +
			!!(t & PERF_SAMPLE_IDENTIFIER));
	}
}

/* The trailer's order is fixed by the kernel (perf_event__output_id_sample). */
static void parse_sample_id(const struct pr_parse_cfg *cfg, struct cursor *c,
			    struct pr_record *rec)
{
	uint64_t t = cfg->sample_type;
	uint32_t pid = 0, tid = 0, cpu = 0, res;

	if (t & PERF_SAMPLE_TID) {
		take_u32_pair(c, &pid, &tid, "sample_id tid");
		/* The body's pid/tid (MMAP, COMM, FORK, EXIT) name the task the
		 * record is about; keep them over the trailer's. */
		if (!(rec->fields & PR_ID_TID)) {
			rec->pid = pid;
			rec->tid = tid;
			rec->fields |= PR_ID_TID;
		}
	}
	if (t & PERF_SAMPLE_TIME) {
		rec->time = take_u64(c, "sample_id time");
		rec->fields |= PR_ID_TIME;
	}
	if (t & PERF_SAMPLE_ID) {
		rec->id = take_u64(c, "sample_id id");
		rec->fields |= PR_ID_ID;
	}
	if (t & PERF_SAMPLE_STREAM_ID) {
		rec->stream_id = take_u64(c, "sample_id stream_id");
		rec->fields |= PR_ID_STREAM_ID;
	}
	if (t & PERF_SAMPLE_CPU) {
		take_u32_pair(c, &cpu, &res, "sample_id cpu");
		rec->cpu = cpu;
		rec->fields |= PR_ID_CPU;
	}
	if (t & PERF_SAMPLE_IDENTIFIER) {
		rec->id = take_u64(c, "sample_id identifier");
		rec->fields |= PR_ID_ID;
	}
}

/*
 * PERF_SAMPLE_READ, laid out by read_format (perf_output_read()):
 *   alone:  value, [enabled], [running], [id], [lost]
 *   GROUP:  nr, [enabled], [running], then nr x (value, [id], [lost])
 */
static void parse_read_values(const struct pr_parse_cfg *cfg, struct cursor *c,
			      struct pr_sample *s)
{
	uint64_t rf = cfg->read_format;
	bool enabled = rf & PERF_FORMAT_TOTAL_TIME_ENABLED;
	bool running = rf & PERF_FORMAT_TOTAL_TIME_RUNNING;
	uint32_t tail = !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	const void *v;
	uint64_t nr = 1;

	if (rf & PERF_FORMAT_GROUP) {
		nr = take_u64(c, "read group nr");
		if (enabled)
			s->read_time_enabled = take_u64(c, "read time_enabled");
		if (running)
			s->read_time_running = take_u64(c, "read time_running");
		s->read_stride = 1 + tail;
		s->read_id_offset = rf & PERF_FORMAT_ID ? 1 : 0;
		if (nr > (uint64_t)(c->end - c->p) / (s->read_stride * 8)) {
			c->why = c->why ? c->why : "read group longer than the record";
			return;
		}
		if (!take(c, nr * s->read_stride * 8, &v, "read group values"))
			return;
	} else {
		const uint64_t *p;

		s->read_stride = 1 + enabled + running + tail;
		s->read_id_offset = rf & PERF_FORMAT_ID ? 1 + enabled + running : 0;
		if (!take(c, s->read_stride * 8, &v, "read value"))
			return;
		p = v;
		if (enabled)
			memcpy(&s->read_time_enabled, p + 1, 8);
		if (running)
			memcpy(&s->read_time_running, p + 1 + enabled, 8);
	}
	s->read = nr ? v : NULL;
	s->nr_read = (uint32_t)nr;
}

static int parse_sample(const struct pr_parse_cfg *cfg, struct cursor *c,
			struct pr_record *rec)
{
	struct pr_sample *s = &rec->u.sample;
	uint64_t t = cfg->sample_type;
	const void *v;

	if (t & PERF_SAMPLE_IDENTIFIER) {
		rec->id = take_u64(c, "identifier");
		rec->fields |= PR_ID_ID;
	}
	if (t & PERF_SAMPLE_IP)
		s->ip = take_u64(c, "ip");
	if (t & PERF_SAMPLE_TID) {
		take_u32_pair(c, &rec->pid, &rec->tid, "pid/tid");
		rec->fields |= PR_ID_TID;
	}
	if (t & PERF_SAMPLE_TIME) {
		rec->time = take_u64(c, "time");
		rec->fields |= PR_ID_TIME;
	}
	if (t & PERF_SAMPLE_ADDR)
		s->addr = take_u64(c, "addr");
	if (t & PERF_SAMPLE_ID) {
		rec->id = take_u64(c, "id");
		rec->fields |= PR_ID_ID;
	}
	if (t & PERF_SAMPLE_STREAM_ID) {
		rec->stream_id = take_u64(c, "stream_id");
		rec->fields |= PR_ID_STREAM_ID;
	}
	if (t & PERF_SAMPLE_CPU) {
		uint32_t res;

		take_u32_pair(c, &rec->cpu, &res, "cpu");
		rec->fields |= PR_ID_CPU;
	}
	if (t & PERF_SAMPLE_PERIOD)
		s->period = take_u64(c, "period");
	else
		s->period = cfg->fixed_period;
	if (t & PERF_SAMPLE_READ)
		parse_read_values(cfg, c, s);
	if (t & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr = take_u64(c, "callchain nr");

		if (nr > (uint64_t)(c->end - c->p) / 8) {
			c->why = c->why ? c->why : "callchain longer than the record";
		} else if (take(c, nr * 8, &v, "callchain")) {
			s->nr_callchain = nr;
			s->callchain = nr ? v : NULL;
		}
	}
	if (t & PERF_SAMPLE_RAW) {
		uint32_t size = 0;

		/* u32 size, then the bytes, padded so the total is 8-aligned. */
		if (take(c, 4, &v, "raw size")) {
			memcpy(&size, v, 4);
			if (take(c, size, &v, "raw data")) {
				s->raw = v;
				s->raw_size = size;
			}
			take(c, (8 - (4 + size) % 8) % 8, NULL, "raw padding");
		}
	}
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		uint64_t nr = take_u64(c, "branch nr");

		if (cfg->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			take(c, 8, NULL, "branch hw_idx");
		if (nr > (uint64_t)(c->end - c->p) / 24)
			c->why = c->why ? c->why : "branch stack longer than the record";
		else
			take(c, nr * 24, NULL, "branch entries");
	}
	if (t & PERF_SAMPLE_REGS_USER) {
		s->regs_abi = take_u64(c, "regs abi");
		if (s->regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
			if (take(c, cfg->nr_regs_user * 8u, &v, "user registers")) {
				s->regs = v;
				s->regs_mask = cfg->regs_user;
			}
		}
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		uint64_t size = take_u64(c, "stack_size");

		if (size) {
			if (size > (uint64_t)(c->end - c->p)) {
				c->why = c->why ? c->why : "stack longer than the record";
			} else if (take(c, size, &v, "stack")) {
				s->stack = v;
				s->stack_size = size;
				s->stack_dyn_size = take_u64(c, "stack dyn_size");
				if (s->stack_dyn_size > size && !c->why)
					c->why = "stack dyn_size exceeds stack_size";
			}
		}
	}
	if (t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		take(c, 8, NULL, "weight");
	if (t & PERF_SAMPLE_DATA_SRC)
		take(c, 8, NULL, "data_src");
	if (t & PERF_SAMPLE_TRANSACTION)
		take(c, 8, NULL, "transaction");
	if (t & PERF_SAMPLE_REGS_INTR) {
		uint64_t abi = take_u64(c, "intr regs abi");

		if (abi != PERF_SAMPLE_REGS_ABI_NONE)
			take(c, cfg->nr_regs_intr * 8u, NULL, "intr registers");
	}
	if (t & PERF_SAMPLE_PHYS_ADDR)
		take(c, 8, NULL, "phys_addr");
	if (t & PERF_SAMPLE_CGROUP)
		take(c, 8, NULL, "cgroup");
	if (t & PERF_SAMPLE_DATA_PAGE_SIZE)
		take(c, 8, NULL, "data_page_size");
	if (t & PERF_SAMPLE_CODE_PAGE_SIZE)
		take(c, 8, NULL, "code_page_size");

	if (!c->why && c->p != c->end && !c->tail_ok)
		c->why = "record longer than its sample_type describes";
	if (s->regs) {
		/* The copied stack starts at the user SP. */
		pr_sample_reg(s, PR_REG_SP, &s->stack_addr);
	}
	return c->why ? -EBADMSG : 0;
}

/* A NUL-terminated string filling [p, end); the kernel pads it to 8 bytes. */
static const char *take_string(struct cursor *c, const unsigned char *end,
			       const char *what)
{
	const unsigned char *start = c->p;

	if (c->why)
		return "";
	if (end < c->p || !memchr(c->p, '\0', (size_t)(end - c->p))) {
		c->why = what;
		return "";
	}
	c->p = end;
	return (const char *)start;
}

static int parse_other(const struct pr_parse_cfg *cfg, struct cursor *c,
		       struct pr_record *rec)
{
	const unsigned char *body_end;
	struct cursor body;

	if ((size_t)(c->end - c->p) < cfg->sample_id_size) {
		c->why = "record shorter than its sample_id";
		return -EBADMSG;
	}
	/* Fixed-size trailer: the variable part (a file name or comm) ends
	 * where the trailer begins. */
	body_end = c->end - cfg->sample_id_size;
	body = (struct cursor){ c->p, body_end, NULL, false };

	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		struct pr_mmap *m = &rec->u.mmap;

		take_u32_pair(&body, &rec->pid, &rec->tid, "mmap pid/tid");
		rec->fields |= PR_ID_TID;
		m->addr = take_u64(&body, "mmap addr");
		m->len = take_u64(&body, "mmap len");
		m->pgoff = take_u64(&body, "mmap pgoff");
		if (rec->type == PERF_RECORD_MMAP2) {
			const void *v;

			m->is_mmap2 = true;
			if (take(&body, 24, &v, "mmap2 file identity")) {
				const unsigned char *u = v;

				if (rec->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
					m->has_build_id = true;
					m->build_id_size = u[0] > 20 ? 20 : u[0];
					memcpy(m->build_id, u + 4, 20);
				} else {
					memcpy(&m->maj, u, 4);
					memcpy(&m->min, u + 4, 4);
					memcpy(&m->ino, u + 8, 8);
					memcpy(&m->ino_generation, u + 16, 8);
				}
			}
			take_u32_pair(&body, &m->prot, &m->flags, "mmap2 prot/flags");
		}
		m->filename = take_string(&body, body_end, "mmap file name not terminated");
		break;
	}
	case PERF_RECORD_COMM:
		take_u32_pair(&body, &rec->pid, &rec->tid, "comm pid/tid");
		rec->fields |= PR_ID_TID;
		rec->u.comm.exec = !!(rec->misc & PERF_RECORD_MISC_COMM_EXEC);
		rec->u.comm.comm = take_string(&body, body_end, "comm not terminated");
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		take_u32_pair(&body, &rec->pid, &rec->u.task.ppid, "task pid/ppid");
		take_u32_pair(&body, &rec->tid, &rec->u.task.ptid, "task tid/ptid");
		rec->fields |= PR_ID_TID;
		rec->u.task.time = take_u64(&body, "task time");
		break;
	case PERF_RECORD_LOST:
		rec->u.lost.id = take_u64(&body, "lost id");
		rec->u.lost.lost = take_u64(&body, "lost count");
		break;
	case PERF_RECORD_LOST_SAMPLES:
		rec->u.lost.lost = take_u64(&body, "lost_samples count");
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		take_u32_pair(&body, &rec->u.sw.next_prev_pid,
			      &rec->u.sw.next_prev_tid, "switch next_prev pid/tid");
		/* fall through */
	case PERF_RECORD_SWITCH:
		rec->u.sw.out = !!(rec->misc & PERF_RECORD_MISC_SWITCH_OUT);
		rec->u.sw.preempt = !!(rec->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		rec->u.throttle.time = take_u64(&body, "throttle time");
		rec->u.throttle.id = take_u64(&body, "throttle id");
		rec->u.throttle.stream_id = take_u64(&body, "throttle stream_id");
		break;
	default:
		/* Handed out raw; the trailer still gives its identity. */
		body.p = body_end;
		break;
	}
	if (body.why) {
		c->why = body.why;
		return -EBADMSG;
	}
	c->p = body_end;
	parse_sample_id(cfg, c, rec);
	if ((rec->type == PERF_RECORD_FORK || rec->type == PERF_RECORD_EXIT) &&
	    !(rec->fields & PR_ID_TIME)) {
		rec->time = rec->u.task.time;
		rec->fields |= PR_ID_TIME;
	}
	return c->why ? -EBADMSG : 0;
}

static int record_parse(const struct pr_parse_cfg *cfg, const void *buf, size_t size,
			struct pr_record *rec, const char **why, size_t *used)
{
	const struct perf_event_header *h = buf;
	struct cursor c;
	int err;

	memset(rec, 0, sizeof(*rec));
	rec->ring_cpu = -1;
	if (size < sizeof(*h) || h->size != size) {
		*why = "header size does not match the record";
		return -EBADMSG;
	}
	rec->type = h->type;
	rec->misc = h->misc;
	rec->size = h->size;
	rec->raw = buf;

	c.p = (const unsigned char *)buf + sizeof(*h);
	c.end = (const unsigned char *)buf + size;
	c.why = NULL;
	c.tail_ok = used != NULL;
	if (h->type == PERF_RECORD_SAMPLE)
		err = parse_sample(cfg, &c, rec);
	else
		err = parse_other(cfg, &c, rec);
	if (err)
		*why = c.why;
	else if (used)
		*used = (size_t)(c.p - (const unsigned char *)buf);
	return err;
}

int pr__record_parse(const struct pr_parse_cfg *cfg, const void *buf,
		     size_t size, struct pr_record *rec, const char **why)
{
	return record_parse(cfg, buf, size, rec, why, NULL);
}

int pr__sample_parse_used(const struct pr_parse_cfg *cfg, const void *buf, size_t size,
			  struct pr_record *rec, const char **why, size_t *used)
{
	const struct perf_event_header *h = buf;

	if (size < sizeof(*h) || h->type != PERF_RECORD_SAMPLE) {
		*why = "not a sample";
		return -EBADMSG;
	}
	return record_parse(cfg, buf, size, rec, why, used);
}

int pr_sample_reg(const struct pr_sample *s, enum pr_reg reg, uint64_t *val)
{
	uint64_t bit;

	if (!s || !s->regs || (unsigned)reg >= 64)
		return -ENOENT;
	bit = UINT64_C(1) << reg;
	if (!(s->regs_mask & bit))
		return -ENOENT;
	if (!val)
		return -EINVAL;
	/* Registers are packed densely in ascending bit order. */
	*val = s->regs[__builtin_popcountll(s->regs_mask & (bit - 1))];
	return 0;
}

int pr_sample_read(const struct pr_sample *s, uint32_t i, uint64_t *value,
		   uint64_t *id)
{
	const uint64_t *v;

	if (!s || !s->read || i >= s->nr_read)
		return -ERANGE;
	v = s->read + (size_t)i * s->read_stride;
	if (value)
		*value = v[0];
	if (id)
		*id = s->read_id_offset ? v[s->read_id_offset] : 0;
	return 0;
}

const char *pr_record_type_name(uint32_t type)
{
	static const char *const names[] = {
		[PERF_RECORD_MMAP] = "MMAP",
		[PERF_RECORD_LOST] = "LOST",
		[PERF_RECORD_COMM] = "COMM",
		[PERF_RECORD_EXIT] = "EXIT",
		[PERF_RECORD_THROTTLE] = "THROTTLE",
		[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
		[PERF_RECORD_FORK] = "FORK",
		[PERF_RECORD_READ] = "READ",
		[PERF_RECORD_SAMPLE] = "SAMPLE",
		[PERF_RECORD_MMAP2] = "MMAP2",
		[PERF_RECORD_AUX] = "AUX",
		[PERF_RECORD_ITRACE_START] = "ITRACE_START",
		[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
		[PERF_RECORD_SWITCH] = "SWITCH",
		[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
		[PERF_RECORD_NAMESPACES] = "NAMESPACES",
		[PERF_RECORD_KSYMBOL] = "KSYMBOL",
		[PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
		[PERF_RECORD_CGROUP] = "CGROUP",
		[PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
		[21] = "AUX_OUTPUT_HW_ID",
	};

	if (type < PR_ARRAY_SIZE(names) && names[type])
		return names[type];
	return "UNKNOWN";
}
