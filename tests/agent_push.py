# SPDX-License-Identifier: Apache-2.0
"""test-agent.py's checks of what the agent pushes to Pyroscope: the
series of a window, their labels and the profile types they are filed
under, read from the log entries of tests/receiver.py.  Each function
takes test-agent.py's check(what, ok, detail)."""


def check_cpu_windows(check, got, labels):
    """The windows of a CPU profile (`got`, accepted pushes): one series,
    process_cpu, with `labels` (their values as given) and Pyroscope's own
    on every window."""
    ls = [s["labels"] for e in got for s in e["series"]]
    check("labels: the service, --tag and the host, on every series",
          ls and all(all(l.get(k) == v for k, v in labels.items() if k != "odd")
                     for l in ls), ls[:2])
    check("labels: a --tag value with ',', '}' and '=' arrives as given (%r)" % labels["odd"],
          ls and all(l.get("odd") == labels["odd"] for l in ls), ls[:2])
    check("a push of one series, process_cpu, pyroscope_spy=dwarfsample, __delta__=false",
          all([s["name"] for s in e["series"]] == ["process_cpu"] for e in got)
          and all(l.get("pyroscope_spy") == "dwarfsample" and l.get("__delta__") == "false"
                  for l in ls), got[0]["series"])
    check("its profile types are CPU time and samples, sampled in CPU time",
          all(sorted(e["profile_types"]) == ["process_cpu:cpu:nanoseconds:cpu:nanoseconds",
                                             "process_cpu:samples:count:cpu:nanoseconds"]
              for e in got), {tuple(e["profile_types"]) for e in got})


def check_kinds(check, got):
    """The profile types of the names runs (`got`: run -> accepted
    pushes): -e page-faults, --wall and --off-cpu."""
    def kinds(run):
        """The profile types of a run's windows, each window's sorted."""
        return {tuple(sorted(e["profile_types"])) for e in got.get(run, [])}
    types = kinds("process")
    check("names: -e page-faults is the sample type page_faults, a CPU sample's, filed as "
          "process_cpu", types == {("process_cpu:page_faults:count:page_faults:count",)},
          types)
    # Issue 28: off-CPU and wall windows under their own profile types.
    types = kinds("wall")
    check("names: a --wall window is filed as process_cpu (its CPU samples), off_cpu (its "
          "waits) and wall (both)",
          not got.get("wall") or types == {(
              "off_cpu:off_cpu:nanoseconds:off_cpu:nanoseconds",
              "off_cpu:samples:count:off_cpu:nanoseconds",
              "process_cpu:cpu:nanoseconds:cpu:nanoseconds",
              "process_cpu:samples:count:cpu:nanoseconds",
              "wall:wall:nanoseconds:wall:nanoseconds")}, types)
    types = kinds("offcpu")
    check("names: an --off-cpu window is filed as off_cpu alone (it has no CPU samples)",
          not got.get("offcpu") or types == {(
              "off_cpu:off_cpu:nanoseconds:off_cpu:nanoseconds",
              "off_cpu:samples:count:off_cpu:nanoseconds")}, types)
    # The workload sleeps 200 us a loop, a process of it 3 s a run.
    waits = [s for e in got.get("offcpu", []) for s in e["series"]]
    ns = sum(s["totals"].get("off_cpu", 0) for s in waits)
    check("names: the off_cpu series hold the waits, in nanoseconds (%.2f s in %d windows)"
          % (ns / 1e9, len(got.get("offcpu", []))),
          not got.get("offcpu") or (ns > 10**8 and all(s["waits"] == s["samples"]
                                                      for s in waits)),
          [(s["samples"], s["waits"], s["totals"]) for s in waits][:5])
    split = [{s["name"]: s for s in e["series"]} for e in got.get("wall", [])]
    # The --off-cpu agent's switch events run beside the --wall agent's
    # on the same threads, and Linux 6.3+ gives the samples of both one
    # id: a switch sample taken for a CPU sample would stand for 1 ns
    # where a CPU sample stands for its period, 20 ms at 49 Hz.
    check("names: a --wall window's process_cpu series has no wait, its off_cpu series "
          "only waits, and wall time is the two together",
          not split or all(d["process_cpu"]["waits"] == 0
                           and d["process_cpu"]["totals"].get("cpu", 0)
                           >= d["process_cpu"]["totals"].get("samples", 0) * 10**6
                           and d["off_cpu"]["waits"] == d["off_cpu"]["samples"]
                           and d["wall"]["samples"] == d["process_cpu"]["samples"]
                           + d["off_cpu"]["samples"]
                           and d["wall"]["totals"]["wall"] >= d["off_cpu"]["totals"]["off_cpu"]
                           for d in split)
          and sum(d["off_cpu"]["totals"]["off_cpu"] for d in split) > 0,
          [{k: (v["samples"], v["waits"], v["totals"]) for k, v in d.items()}
           for d in split][:3])
