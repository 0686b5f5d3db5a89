/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Containers from /proc/PID/cgroup, in the layouts the runtimes write:
 * lines as docker, containerd, CRI-O and podman leave them under systemd
 * and under cgroupfs, cgroup v1 (many lines) and v2 ("0::/..."), with and
 * without a Kubernetes pod; and processes in no container at all.
 */
#include <check.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "checkmain.h"
#include "prmodel.h"

#define ID "3f9c1b2e5d7a4c6b8e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d"
#define ID2 "aaaabbbbccccddddeeeeffff0000111122223333444455556666777788889999"
#define UID "1b4e28ba-2fa1-41d2-883f-0016d3cca427"
#define UID_ "1b4e28ba_2fa1_41d2_883f_0016d3cca427"

static const struct {
	const char *what, *cgroup, *id, *pod, *runtime;
} cases[] = {
	{ "docker, cgroup v2 under systemd",
	  "0::/system.slice/docker-" ID ".scope\n", ID, "", "docker" },
	{ "docker, cgroup v1 under cgroupfs, every controller",
	  "12:memory:/docker/" ID "\n11:cpu,cpuacct:/docker/" ID "\n1:name=systemd:/docker/" ID "\n",
	  ID, "", "docker" },
	{ "containerd in a burstable pod, systemd driver",
	  "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	  ".slice/cri-containerd-" ID ".scope\n", ID, UID, "containerd" },
	{ "a guaranteed pod (no QoS slice)",
	  "0::/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID ".scope\n",
	  ID, UID, "containerd" },
	{ "CRI-O in a besteffort pod",
	  "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
	  ".slice/crio-" ID ".scope\n", ID, UID, "cri-o" },
	{ "CRI-O's conmon is not the container",
	  "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
	  ".slice/crio-conmon-" ID ".scope\n", "", UID, "" },
	{ "a kubelet with cgroupfs: /kubepods/QOS/podUID/ID",
	  "4:pids:/kubepods/burstable/pod" UID "/" ID "\n", ID, UID, "" },
	{ "podman, rootful, cgroup v2",
	  "0::/machine.slice/libpod-" ID ".scope/container\n", ID, "", "podman" },
	{ "podman's conmon",
	  "0::/machine.slice/libpod-conmon-" ID ".scope\n", "", "", "" },
	{ "podman, rootless, a user's slice",
	  "0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope\n",
	  ID, "", "podman" },
	{ "docker in docker: the innermost",
	  "0::/system.slice/docker-" ID2 ".scope/docker/" ID "\n", ID, "", "docker" },
	{ "a login shell", "0::/user.slice/user-1000.slice/session-3.scope\n", "", "", "" },
	{ "a system service", "0::/system.slice/ssh.service\n", "", "", "" },
	{ "init", "0::/init.scope\n", "", "", "" },
	{ "the root", "0::/\n", "", "", "" },
	{ "not quite an id (63 digits)", "0::/docker/" "3f9c1b2e5d7a4c6b8e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2\n",
	  "", "", "" },
	{ "an id with upper case is no runtime's", "0::/docker-3F9C1B2E5D7A4C6B8E0F1A2B3C4D5E6F7A8B9C0D1E2F3A4B5C6D7E8F9A0B1C2D.scope\n",
	  "", "", "" },
	{ "a pod uid with a wrong dash", "0::/kubepods/burstable/pod1b4e28ba2-fa1-41d2-883f-0016d3cca427/x\n",
	  "", "", "" },
	{ "no final newline", "0::/system.slice/docker-" ID ".scope", ID, "", "docker" },
	{ "empty", "", "", "", "" },
	{ "garbage", "no colons here\n::\n:\n", "", "", "" },
};

START_TEST(each_runtimes_layout_names_its_container)
{
	struct pr_container c;

	memset(&c, 'x', sizeof(c));
	ck_assert_int_eq(pr_container_parse(cases[_i].cgroup, &c), 0);
	ck_assert_msg(!strcmp(c.id, cases[_i].id), "%s: id '%s'", cases[_i].what, c.id);
	ck_assert_msg(!strcmp(c.pod_uid, cases[_i].pod), "%s: pod '%s'", cases[_i].what, c.pod_uid);
	ck_assert_msg(!strcmp(c.runtime, cases[_i].runtime), "%s: runtime '%s'", cases[_i].what,
		      c.runtime);
}
END_TEST

/* This test runs in no container the checks above would name (CI runs it
 * on the host or in a VM): its own cgroup file reads, and a pid that does
 * not exist says so. */
START_TEST(a_live_process_is_read_and_a_gone_one_is_an_error)
{
	struct pr_container c;

	ck_assert_int_eq(pr_container_of((uint32_t)getpid(), &c), 0);
	ck_assert_int_lt(pr_container_of(0x7ffffffe, &c), 0);
	ck_assert_int_eq(pr_container_parse(NULL, &c), -EINVAL);
	ck_assert_int_eq(pr_container_parse("", NULL), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("container");
	TCase *tc = tcase_create("cgroup");

	tcase_add_loop_test(tc, each_runtimes_layout_names_its_container, 0,
			    sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, a_live_process_is_read_and_a_gone_one_is_an_error);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
