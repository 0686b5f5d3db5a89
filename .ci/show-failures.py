#!/usr/bin/env python3
"""Print, last, what each failed test of a meson test log said.

.ci/run calls this when a suite fails, so that the end of CI's output --
often the only part a reader sees -- names the failed checks and their
messages rather than only "exit status 1".  Usage: show-failures.py LOG.json
"""
import json
import sys

TAIL = 40
# Lines kept after a "not ok" line: its detail, indented.
DETAIL = 12


def failed_checks(text):
    """Each "not ok" line with the indented detail after it: a TAP-like
    test that prints its failure early and goes on would otherwise show
    only its last, passing, lines."""
    out, keep = [], 0
    for l in text.splitlines():
        if l.lstrip().startswith("not ok"):
            out.append(l)
            keep = DETAIL
        elif keep and l.startswith(" "):
            out.append(l)
            keep -= 1
        else:
            keep = 0
    return out


def said(text):
    # valgrind's own report is long and already printed above; keep the
    # test's words and valgrind's error lines only.
    lines = [l for l in text.splitlines()
             if not l.startswith("==") or "ERROR SUMMARY" in l or "Invalid" in l]
    return lines[-TAIL:]


def main(path):
    failed = 0
    with open(path) as f:
        for line in f:
            test = json.loads(line)
            if test["result"] in ("OK", "SKIP", "EXPECTEDFAIL"):
                continue
            failed += 1
            print(f"--- {test['name']}: {test['result']}, exit {test.get('returncode')}, "
                  f"{test['duration']:.1f} s")
            for key in ("stdout", "stderr"):
                text = test.get(key) or ""
                bad = failed_checks(text)
                if bad:
                    print(f"  ({key}: the checks that failed)")
                    for l in bad:
                        print(f"  {l}")
                    print(f"  ({key}: its last lines)")
                for l in said(text):
                    print(f"  {l}")
    if not failed:
        print("(the log names no failed test)")


if __name__ == "__main__":
    main(sys.argv[1])
