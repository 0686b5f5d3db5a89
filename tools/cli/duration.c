/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one duration syntax of every option that takes a time (-d,
 * --off-cpu-min, the agent's intervals and timeouts, --debuginfod-timeout,
 * stat's -I): a number, fractions allowed, with a unit ns, us, ms, s, m,
 * h or d; a bare number is seconds, as perf's -d and py-spy's -d have it
 * (stat's -I alone counts bare numbers in milliseconds, as perf stat -I).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct {
	const char *unit;
	double ns;
} units[] = {
	{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	{ "m", 60e9 }, { "h", 3600e9 }, { "d", 86400e9 },
};

int ds_parse_duration_in(const char *arg, const char *what, uint64_t bare_ns, uint64_t *ns)
{
	char *end;
	double d, scale = 0;

	errno = 0;
	d = strtod(arg, &end);
	/* strtod takes "inf", "nan" and hex: only digits and a point here. */
	if (end == arg || errno || !isfinite(d) || d < 0 || strspn(arg, "0123456789.") !=
	    (size_t)(end - arg))
		goto bad;
	if (!*end)
		scale = (double)bare_ns;
	for (size_t i = 0; !scale && i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit))
			scale = units[i].ns;
	if (scale && d * scale < 1e18) {
		*ns = (uint64_t)(d * scale + 0.5);
		return 0;
	}
bad:
	if (bare_ns == 1000000)
		ds_err("%s: '%s' is not a duration: give milliseconds (500) or 500ms, 1s, "
		       "2m", what, arg);
	else
		ds_err("%s: '%s' is not a duration: give seconds (10) or 10s, 500ms, 2m",
		       what, arg);
	return -1;
}

int ds_parse_duration(const char *arg, const char *what, uint64_t *ns)
{
	return ds_parse_duration_in(arg, what, UINT64_C(1000000000), ns);
}
