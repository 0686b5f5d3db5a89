/* SPDX-License-Identifier: Apache-2.0 */
/* The public headers compile as strict C99 on its own (-std=c99 -pedantic
 * -Werror): embedders are not forced onto GNU C or C11. */
#include "perfreader.h"
#include "prunwind.h"
#include "prsym.h"
#include "prprofile.h"

int main(void)
{
	PR_OPTS(pr_event_opts, ev, .freq = 99);
	PR_OPTS(pr_reader_opts, o, .event = &ev);
	PR_OPTS(pr_symbolizer_opts, so, .no_inline = true);
	struct pr_record rec;

	rec.type = PR_RECORD_SAMPLE;
	rec.u.sample.ip = 0;
	return (int)(o.sz != sizeof(o)) + (int)(so.sz != sizeof(so)) + (int)rec.u.sample.ip;
}
