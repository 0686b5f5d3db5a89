/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The open perf.data file, shared by perfdata_read.c (header, attrs,
 * records) and perfdata_feat.c (feature sections).
 */
#ifndef PR_PERFDATA_READ_H
#define PR_PERFDATA_READ_H

#include "internal.h"
#include "perfdata.h"

struct pr_file_attr {
	struct perf_event_attr attr;
	struct pr_parse_cfg cfg;
	const unsigned char *ids;    /* nr_ids u64s in the file, unaligned */
	size_t nr_ids;
};

/* id -> attr, sorted by id; only built when there are several attrs. */
struct pr_file_id {
	uint64_t id;
	size_t attr;
};

/* One record to hand out: its time and where it is. */
struct pr_file_index {
	uint64_t time;
	uint64_t off;
};

struct pr_file {
	struct pr_logger lg;
	char *name;                  /* the path, for messages */
	const unsigned char *buf;
	size_t len;
	bool mapped;
	struct perfdata_header h;

	struct pr_file_attr *attrs;
	size_t nr_attrs;
	struct pr_file_id *ids;
	size_t nr_ids;
	int64_t sample_id_word;      /* id's u64 index after a sample's header */
	int64_t other_id_word;       /* ... before the end of other records */

	struct pr_file_index *index;
	size_t nr_index, cap_index, next;
	uint32_t *chunk_left;        /* records not yet read, per 4 MiB chunk */
	size_t nr_chunks;
	unsigned char *bounce;       /* for records that are not 8-aligned */
	bool truncated;
	struct pr_file_stats stats;

	/* Features. */
	char *strings[PR_FILE_CPUDESC + 1];
	bool has_nr_cpus;
	uint32_t nr_cpus_avail, nr_cpus_online;
	char **cmdline;
	size_t nr_cmdline;
	struct pr_build_id *build_ids;
	size_t nr_build_ids;
};

/* perfdata_feat.c: parse the feature sections after the data; a malformed
 * section is skipped with a warning (the records are still good). */
int pr__file_read_features(struct pr_file *f);
void pr__file_free_features(struct pr_file *f);

const struct pr_file_attr *pr__file_attr_of(const struct pr_file *f,
					    const unsigned char *p, uint64_t size);

#endif
