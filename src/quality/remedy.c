/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What would make each row of the quality report go away.  The remedies
 * name the distribution's debug package where its package database says
 * which package installed the file (Debian's and Ubuntu's dpkg:
 * PKG-dbgsym, libc6-dbg for libc6), the build-id path the debug file
 * goes to, and debuginfod: what the system says is read when the report
 * is written, on the caller's thread (prquality.h).  CPython's files are
 * told by their symbols: no debug file names a Python function, and
 * Debian ships no PKG-dbgsym for them (python3.X-minimal-dbgsym does not
 * exist), so theirs names none, and says what does name them.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/model.h"
#include "model/pyruntime.h"
#include "quality/quality.h"

bool pr__quality_is_file(const struct pr_dso *dso)
{
	const char *path = dso ? pr_dso_path(dso) : NULL;

	/* "//anon": a JIT's code, in no file. */
	return path && path[0] == '/' && strncmp(path, "//anon", 6);
}

/* What to start the runtime of row `r`'s process with, for its JIT code
 * to be named: its perf map or jitdump option. */
static void jit_remedy(const struct pr__quality_row *r, char *buf, size_t len)
{
	int n = snprintf(buf, len, "JIT code, no perf map or jitdump for pid %" PRIu32 ": ", r->pid);

	if (n < 0 || (size_t)n >= len)
		return;
	buf += n;
	len -= (size_t)n;
	switch (r->runtime) {
	case PR_RUNTIME_NODE:
		snprintf(buf, len, "start the runtime with node --perf-basic-prof (a perf map) or "
			 "--perf-prof (jitdump)");
		return;
	case PR_RUNTIME_JAVA:
		snprintf(buf, len, "start the runtime with a perf-map agent (-agentpath:...), or on "
			 "Java 17+ with -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit "
			 "(written at exit)");
		return;
	case PR_RUNTIME_DOTNET:
		snprintf(buf, len, "start the runtime with DOTNET_PerfMapEnabled=1 in its "
			 "environment");
		return;
	case PR_RUNTIME_PYTHON:
		if (r->minor >= 12) {
			snprintf(buf, len, "start the runtime with python3.%u -X perf (or "
				 "PYTHONPERFSUPPORT=1), or profile it with dwarfsample --python",
				 r->minor);
			return;
		}
		snprintf(buf, len, "CPython 3.%u writes none (3.12 and later do, with -X perf)",
			 r->minor);
		return;
	default:
		snprintf(buf, len, "start the runtime with its perf map option (node "
			 "--perf-basic-prof, python3.12 -X perf, java -XX:+DumpPerfMapAtExit, "
			 "DOTNET_PerfMapEnabled=1)");
	}
}

/* Whether dpkg's file list `name` (in `dir`) has a line "path" or "alt". */
static bool list_has(int dir, const char *name, const char *path, const char *alt)
{
	size_t cap = 0, len = 1, plen = strlen(path), alen = strlen(alt);
	char *buf = NULL, *nb, probe[4200];
	bool found = false;
	ssize_t n = 1;
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	/* The whole list, a newline before it and one after. */
	while (n > 0) {
		if (len + 65536 + 2 > cap) {
			nb = realloc(buf, cap = 2 * cap + 65536 + 2);
			if (!nb)
				break;
			buf = nb;
		}
		buf[0] = '\n';
		n = read(fd, buf + len, cap - len - 2);
		if (n > 0)
			len += (size_t)n;
	}
	close(fd);
	if (buf && !n) {
		buf[len++] = '\n';
		snprintf(probe, sizeof(probe), "\n%s\n", path);
		found = plen < sizeof(probe) - 2 && memmem(buf, len, probe, plen + 2);
		snprintf(probe, sizeof(probe), "\n%s\n", alt);
		found = found || (alen < sizeof(probe) - 2 && memmem(buf, len, probe, alen + 2));
	}
	free(buf);
	return found;
}

/*
 * The package whose dpkg file list has `path` (or its /usr-merged twin),
 * into pkg; false when none does or there is no dpkg.  The lists named
 * like the file go first ("libstdc++6:amd64.list" for libstdc++.so.6),
 * the rest after: a whole scan reads every list on the system, a few
 * milliseconds that every run's summary would otherwise pay.  A file
 * outside the trees packages install into (a build directory, a home)
 * is nobody's, and not looked for.
 */
static bool dpkg_owner(const char *path, char *pkg, size_t len)
{
	static const char *const trees[] = { "/usr/", "/lib", "/bin/", "/sbin/", "/opt/" };
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t stem = strcspn(base, ".-_");
	char alt[4096];
	bool found = false, packaged = false;
	DIR *d;

	for (size_t i = 0; i < PR_ARRAY_SIZE(trees); i++)
		packaged = packaged || !strncmp(path, trees[i], strlen(trees[i]));
	if (!packaged || !(d = opendir("/var/lib/dpkg/info")))
		return false;
	if (!strncmp(path, "/usr/", 5))
		snprintf(alt, sizeof(alt), "%s", path + 4);
	else
		snprintf(alt, sizeof(alt), "/usr%s", path);
	for (int pass = 0; pass < 2 && !found; pass++) {
		struct dirent *e;

		rewinddir(d);
		while (!found && (e = readdir(d))) {
			size_t n = strlen(e->d_name);
			bool named = stem && !strncmp(e->d_name, base, stem);

			if (n < 6 || strcmp(e->d_name + n - 5, ".list") || named != !pass ||
			    !list_has(dirfd(d), e->d_name, path, alt))
				continue;
			found = true;
			/* "zlib1g:amd64.list" -> "zlib1g" */
			snprintf(pkg, len, "%.*s", (int)(n - 5), e->d_name);
			pkg[strcspn(pkg, ":")] = 0;
		}
	}
	closedir(d);
	return found;
}

/* The build-id path a debug package installs the file's debug file at. */
static void debug_path(const struct pr_dso *dso, char *buf, size_t len)
{
	const uint8_t *id;
	size_t n = dso ? pr_dso_build_id(dso, &id) : 0, at;

	buf[0] = 0;
	if (n < 2)
		return;
	at = (size_t)snprintf(buf, len, "/usr/lib/debug/.build-id/%02x/", id[0]);
	for (size_t i = 1; i < n && at + 3 < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%02x", id[i]);
	snprintf(buf + at, len - at, ".debug");
}

/* The distribution's debuginfod server, from /etc/os-release's ID. */
static const char *debuginfod_server(void)
{
	static const struct {
		const char *id, *url;
	} known[] = {
		{ "debian", "https://debuginfod.debian.net" },
		{ "ubuntu", "https://debuginfod.ubuntu.com" },
		{ "fedora", "https://debuginfod.fedoraproject.org" },
		{ "arch", "https://debuginfod.archlinux.org" },
	};
	char line[256];
	FILE *f = fopen("/etc/os-release", "re");
	const char *url = NULL;

	while (f && !url && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		for (size_t i = 0; i < PR_ARRAY_SIZE(known) && !url; i++)
			if (!strncmp(line, "ID=", 3) && !strcmp(line + 3, known[i].id))
				url = known[i].url;
	}
	if (f)
		fclose(f);
	return url;
}

/* The CPython version of the file of `dso` (read from the file), into
 * *minor and *micro; false when it is not CPython's. */
static bool cpython_file(const struct pr_dso *dso, unsigned *minor, unsigned *micro)
{
	const char *path = pr_dso_path(dso);
	unsigned major = 0;
	struct pr_elf *e;
	int fd;
	bool is;

	if (!pr__quality_is_file(dso) || (fd = pr__open_target_file(0, path, NULL)) < 0)
		return false;
	if (!(e = pr__elf_open(fd, path, false, NULL)))
		return false;
	is = pr__python_file(e, strrchr(path, '/') + 1, &major, minor, micro) && major == 3;
	pr__elf_free(e);
	return is;
}

/* CPython's remedy: what names its Python functions, then its C ones. */
static void cpython_remedy(const struct pr__quality_words *w, unsigned minor, unsigned micro,
			   const char *server, char *buf, size_t len)
{
	if (minor < 12)
		snprintf(buf, len, "CPython 3.%u.%u: its Python functions run inside "
			 "_PyEval_EvalFrameDefault, which no symbols name by function (it has "
			 "no perf trampoline); CPython 3.12 or later names them, started with -X "
			 "perf (or PYTHONPERFSUPPORT=1), or by %s in a running one.  Its C "
			 "functions: DEBUGINFOD_URLS=%s", minor, micro, w->python,
			 server ? server : "(a debuginfod server)");
	else
		snprintf(buf, len, "CPython 3.%u.%u's C functions: DEBUGINFOD_URLS=%s (no debug "
			 "package: its Python functions are named by its perf map, written "
			 "with -X perf, PYTHONPERFSUPPORT=1 or after %s)", minor, micro,
			 server ? server : "(a debuginfod server)", w->python);
}

/* What installs the debug file of `dso`, when its package is known. */
static void debug_package(const struct pr_dso *dso, char *buf, size_t len)
{
	char pkg[256], where[128];
	unsigned minor, micro;

	buf[0] = 0;
	debug_path(dso, where, sizeof(where));
	/* Installed already: nothing to install. */
	if (*where && !access(where, R_OK))
		return;
	if (!pr__quality_is_file(dso) || cpython_file(dso, &minor, &micro) ||
	    !dpkg_owner(pr_dso_path(dso), pkg, sizeof(pkg)))
		return;
	/* Debian's libc ships its debug files as libc6-dbg. */
	snprintf(buf, len, "apt-get install %s%s (the distribution's debug archive%s%s)", pkg,
		 strcmp(pkg, "libc6") ? "-dbgsym" : "-dbg", *where ? "; it installs " : "",
		 where);
}

void pr__quality_remedy(const struct pr_quality *q, const struct pr__quality_row *r,
			const struct pr__quality_words *w, char *buf, size_t len)
{
	/* A wait's stack was copied at its switch out, by the off-CPU
	 * event, with a size of its own. */
	const char *setting = r->off_cpu ? w->off_cpu_stack_size : w->stack_size;
	const char *copy = r->off_cpu ? "stack copy at the switch out" : "stack copy";
	uint64_t size;
	char pkg[512];

	switch (r->why) {
	case PR_END_TRUNCATED:
		size = pr__quality_asked(q, r->off_cpu);
		if (size && size < 65528)
			snprintf(buf, len, "the %" PRIu64 "-byte %s ran out here: a larger %s (up "
				 "to 65528)", size, copy, setting);
		else
			snprintf(buf, len, "the %s ran out here, at the kernel's largest (65528 "
				 "bytes): deeper than any copy", copy);
		return;
	case PR_END_NO_UNWIND_INFO:
		debug_package(r->dso, pkg, sizeof(pkg));
		if (pr__quality_is_file(r->dso) && access(pr_dso_path(r->dso), R_OK))
			snprintf(buf, len, "the file was not found here: a copy of it (or of its "
				 "debug file) by build-id in a %s", w->debug_dir);
		else
			snprintf(buf, len, "no unwind information for this code: %s%srebuild "
				 "it with -fasynchronous-unwind-tables (assembly: CFI "
				 "directives); frame pointers are followed where there is none",
				 pkg, *pkg ? ", whose .debug_frame may have it, or " : "");
		return;
	case PR_END_NO_MAPPING:
		snprintf(buf, len, "code in no file (JIT) that frame pointers do not lead out of: "
			 "node --perf-basic-prof, python3.12 -X perf or the JVM's perf-map-agent "
			 "write /tmp/perf-PID.map, and keep frame pointers");
		return;
	case PR_END_DEPTH:
		if (q->max_depth >= PR_UNWIND_MAX_DEPTH)
			snprintf(buf, len, "deeper than %s %u, the most there is: the stack "
				 "copy was not what ended these", w->max_depth, q->max_depth);
		else
			snprintf(buf, len, "deeper than %s %u: raise it (up to %u)", w->max_depth,
				 q->max_depth, PR_UNWIND_MAX_DEPTH);
		return;
	case PR_END_ERROR:
		snprintf(buf, len, "the unwinder could not go on (%s says why): please report "
			 "it with the capture", w->log);
		return;
	case PR_END_NO_USER:
		snprintf(buf, len, "no user registers (kernel threads): %s shows their kernel "
			 "stacks", w->kernel);
		return;
	case PR_END_CHAIN:
		snprintf(buf, len, "no copy of the stack, only the kernel's frame-pointer chain, "
			 "which ended here: at the outermost frame, or at code built without "
			 "frame pointers (most distributions' libc), whose callers it cannot "
			 "find; which, the chain does not say.  A stack copy (perf record "
			 "--call-graph dwarf) unwinds through such code");
		return;
	case PR_QUALITY_CHAIN_DEPTH:
		snprintf(buf, len, "the kernel stopped walking the frame pointers at its depth "
			 "limit (kernel entries included): raise it before recording, sysctl "
			 "kernel.perf_event_max_stack=1024 (perf record --max-stack too)");
		return;
	case PR_QUALITY_UNMAPPED:
		snprintf(buf, len, "the last return address found is in no mapping: not JIT code "
			 "but a frame whose caller's address was none (a thread begun by a raw "
			 "clone(), as the sanitizers' tracer threads are) or a stack overwritten");
		return;
	case PR_QUALITY_NO_FP:
		snprintf(buf, len, "the %s ran out, and the frame-pointer chain that went on "
			 "from it stops at this code, built without frame pointers (its CFI says "
			 "so): a larger %s (up to 65528) lets DWARF unwind through it", copy,
			 setting);
		return;
	case PR_QUALITY_KERNEL_SHORT:
		size = pr__quality_asked(q, r->off_cpu);
		snprintf(buf, len, "the kernel copied less of the stack than the %" PRIu64 " bytes "
			 "asked: the next page was not in memory when the sample was taken (a "
			 "frame just pushed onto a new page, or one swapped out); a larger "
			 "%s does not help", size, setting);
		return;
	case PR_QUALITY_CUT_SHORT:
		snprintf(buf, len, "copied only up to where this thread's stacks had ended "
			 "before; it also runs on stacks carved from its own (coroutines), and is "
			 "copied whole since");
		return;
	case PR_QUALITY_UNNAMED: {
		const char *server = debuginfod_server();
		unsigned minor, micro;

		if (cpython_file(r->dso, &minor, &micro)) {
			cpython_remedy(w, minor, micro, server, buf, len);
			return;
		}
		debug_package(r->dso, pkg, sizeof(pkg));
		if (!pr__quality_is_file(r->dso))
			jit_remedy(r, buf, len);
		else if (*pkg)
			snprintf(buf, len, "stripped; its debug symbols: %s, or DEBUGINFOD_URLS="
				 "%s to fetch them", pkg, server ? server : "(a debuginfod server)");
		else
			snprintf(buf, len, "no symbols: build it with -g, or keep its debug "
				 "file and pass %s; DEBUGINFOD_URLS=%s fetches a "
				 "distribution's", w->debug_dir,
				 server ? server : "(a debuginfod server)");
		return;
	}
	default:
		buf[0] = 0;
	}
}
