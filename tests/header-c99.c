/* SPDX-License-Identifier: Apache-2.0 */
/* The public headers compile as strict C99 (-std=c99 -pedantic -Werror):
 * embedders are not forced onto GNU C or C11.  perfreader.h includes every
 * other header; each also compiles alone (header-alone.c). */
#include "perfreader.h"

int main(void)
{
	PR_OPTS(pr_event_opts, ev, .freq = 99);
	PR_OPTS(pr_reader_opts, o, .event = &ev);
	PR_OPTS(pr_symbolizer_opts, so, .no_inline = true);
	PR_OPTS(pr_file_opts, fo, .log = NULL);
	PR_OPTS(pr_writer_opts, wo, .argc = 0);
	PR_OPTS(pr_unwinder_opts, uo, .max_depth = 8);
	PR_OPTS(pr_profile_opts, po, .freq = 99);
	PR_OPTS(pr_counter_opts, co, .per_thread = true);
	PR_OPTS(pr_model_opts, mo, .nr_debug_dirs = 0);
	PR_OPTS(pr_event_lookup_opts, lo, .log = NULL);
	PR_OPTS(pr_script_opts, sc, .fields = PR_SCRIPT_DEFAULT);
	PR_OPTS(pr_output_opts, ou, .mode = PR_PROFILE_CPU);
	PR_OPTS(pr_uploader_opts, up, .timeout_s = 1);
	PR_OPTS(pr_windows_opts, win, .group_by = PR_GROUP_HOST);
	struct pr_record rec;

	rec.type = PR_RECORD_SAMPLE;
	rec.u.sample.ip = 0;
	return (int)(o.sz != sizeof(o)) + (int)(so.sz != sizeof(so)) + (int)(fo.sz != sizeof(fo)) +
	       (int)(wo.sz != sizeof(wo)) + (int)(uo.sz != sizeof(uo)) + (int)(po.sz != sizeof(po)) +
	       (int)(co.sz != sizeof(co)) + (int)(mo.sz != sizeof(mo)) + (int)(lo.sz != sizeof(lo)) +
	       (int)(sc.sz != sizeof(sc)) + (int)(ou.sz != sizeof(ou)) + (int)(up.sz != sizeof(up)) +
	       (int)(win.sz != sizeof(win)) +
	       (int)rec.u.sample.ip;
}
