/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which container a process runs in, read from the cgroup path its runtime
 * gave it.  Each line of /proc/PID/cgroup is "ID:CONTROLLERS:PATH"; the
 * container's id is the last path component that names one, in the
 * spelling of the runtime that made it (systemd's scopes, or plain
 * directories under cgroupfs), and the pod is the component above it that
 * a kubelet named.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/model.h"

#define ID_LEN 64
#define UID_LEN 36

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* Component [c, c + n): a container's id, and the runtime its spelling
 * says; false when it names none. */
static bool container_of_part(const char *c, size_t n, const char *parent, size_t plen,
			      struct pr_container *out)
{
	static const struct {
		const char *prefix, *runtime;
	} scopes[] = {
		{ "docker-", "docker" },
		{ "cri-containerd-", "containerd" },
		{ "crio-", "cri-o" },
		{ "libpod-", "podman" },
	};
	const char *id = NULL, *runtime = "";

	for (size_t i = 0; i < PR_ARRAY_SIZE(scopes); i++) {
		size_t pl = strlen(scopes[i].prefix);

		/* docker-ID.scope (systemd), libpod-ID (cgroupfs). */
		if (n >= pl + ID_LEN && !strncmp(c, scopes[i].prefix, pl) &&
		    (n == pl + ID_LEN || (n == pl + ID_LEN + 6 && !strncmp(c + pl + ID_LEN, ".scope", 6)))) {
			id = c + pl;
			runtime = scopes[i].runtime;
			break;
		}
	}
	if (!id && n == ID_LEN) {
		/* A bare id: under cgroupfs, docker's /docker/ID, a kubelet's
		 * /kubepods/QOS/podUID/ID (its runtime unsaid). */
		id = c;
		if (plen == 6 && !strncmp(parent, "docker", 6))
			runtime = "docker";
	}
	if (!id || !all_hex(id, ID_LEN))
		return false;
	memcpy(out->id, id, ID_LEN);
	out->id[ID_LEN] = '\0';
	snprintf(out->runtime, sizeof(out->runtime), "%s", runtime);
	return true;
}

/* Component [c, c + n): a pod's uid, "podUID" or
 * "kubepods[-QOS]-podUID.slice" (systemd, dashes as '_'). */
static bool pod_of_part(const char *c, size_t n, struct pr_container *out)
{
	const char *pod = NULL;
	char uid[UID_LEN + 1];

	if (n == 3 + UID_LEN && !strncmp(c, "pod", 3)) {
		pod = c + 3;
	} else if (n > 6 + 3 + UID_LEN && !strncmp(c, "kubepods", 8) &&
		   !strncmp(c + n - 6, ".slice", 6) && !strncmp(c + n - 6 - UID_LEN - 3, "pod", 3)) {
		pod = c + n - 6 - UID_LEN;
	}
	if (!pod)
		return false;
	for (size_t i = 0; i < UID_LEN; i++) {
		char ch = pod[i] == '_' ? '-' : pod[i];
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? ch != '-' : !all_hex(&ch, 1))
			return false;
		uid[i] = ch;
	}
	uid[UID_LEN] = '\0';
	memcpy(out->pod_uid, uid, sizeof(uid));
	return true;
}

/* One cgroup path: the deepest container id and pod uid in it. */
static void parse_path(const char *p, const char *end, struct pr_container *out)
{
	const char *parent = "";
	size_t plen = 0;

	while (p < end) {
		const char *c, *slash;
		size_t n;

		while (p < end && *p == '/')
			p++;
		c = p;
		slash = memchr(p, '/', (size_t)(end - p));
		n = slash ? (size_t)(slash - p) : (size_t)(end - p);
		p = c + n;
		if (!n)
			break;
		/* The runtimes' monitors live beside their containers. */
		if (!strncmp(c, "crio-conmon-", 12) || !strncmp(c, "libpod-conmon-", 14)) {
			parent = c;
			plen = n;
			continue;
		}
		container_of_part(c, n, parent, plen, out);
		pod_of_part(c, n, out);
		parent = c;
		plen = n;
	}
}

int pr_container_parse(const char *text, struct pr_container *out)
{
	struct pr_container found = { 0 };

	if (!text || !out)
		return -EINVAL;
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		const char *end = nl ? nl : line + strlen(line);
		const char *c1 = memchr(line, ':', (size_t)(end - line));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;

		if (c2) {
			struct pr_container here = { 0 };

			parse_path(c2 + 1, end, &here);
			/* The first line that names a container says it. */
			if (here.id[0] && !found.id[0])
				found = here;
			if (here.pod_uid[0] && !found.pod_uid[0])
				memcpy(found.pod_uid, here.pod_uid, sizeof(found.pod_uid));
		}
		line = nl ? nl + 1 : end;
	}
	*out = found;
	return 0;
}

int pr_container_of(uint32_t pid, struct pr_container *out)
{
	char path[64], buf[16384];
	ssize_t n;
	int fd;

	if (!out)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return errno == ESRCH ? -ESRCH : -errno;
	buf[n] = '\0';
	return pr_container_parse(buf, out);
}
