#!/usr/bin/python3
"""Run every test: the C unit tests, the end-to-end tests, then each suite
in tests/suites/ (ONNX conformance, package self-tests, ...).

Usage: run-all.py --graphcc PATH --work DIR [UNIT_BINARY...]

Streams both suites' output and ends with the line "N passed, N failed"
(the sum of both). Exit status is non-zero if anything failed, if a suite
did not report its count, or if no test ran at all.
"""
import argparse
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def stream(cmd, pattern):
    """Run cmd, echo its output line by line; -> (returncode, (passed, failed)
    from the last line matching pattern, or None)."""
    counts = None
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT)
    for raw in p.stdout:
        line = raw.decode("utf-8", "replace").rstrip("\n")
        print(line, flush=True)
        m = re.match(pattern, line)
        if m:
            counts = (int(m.group(1)), int(m.group(2)))
    rc = p.wait()
    print("== took %.0f s: %s" % (time.monotonic() - t0, " ".join(os.path.basename(c) for c in cmd[:2])), flush=True)
    return rc, counts


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphcc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("units", nargs="*", metavar="UNIT_BINARY")
    a = ap.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)
    graphcc, work = os.path.abspath(a.graphcc), os.path.abspath(a.work)
    units = [os.path.abspath(u) for u in a.units]
    passed = failed = 0
    if units:
        rc, c = stream(["sh", os.path.join(ROOT, "tests", "run-unit.sh")] + units,
                       r"^unit: (\d+) passed, (\d+) failed$")
        if c is None:
            print("unit tests: no summary line (exit %d)" % rc)
            c = (0, 1)
        elif rc != 0 and c[1] == 0:
            c = (c[0], 1)
        passed, failed = passed + c[0], failed + c[1]
    else:
        print("unit tests: none given")
    rc, c = stream([sys.executable, os.path.join(ROOT, "tests", "e2e", "run.py"),
                    "--graphcc", graphcc, "--work", os.path.join(work, "e2e")],
                   r"^(\d+) passed, (\d+) failed$")
    if c is None:
        print("e2e tests: no summary line (exit %d)" % rc)
        c = (0, 1)
    elif rc != 0 and c[1] == 0:
        c = (c[0], 1)
    passed, failed = passed + c[0], failed + c[1]
    # More suites: each tests/suites/<name> is an executable run as
    # `<name> GRAPHCC WORKDIR` that ends with "N passed, N failed".
    suites = os.path.join(ROOT, "tests", "suites")
    for name in sorted(os.listdir(suites)) if os.path.isdir(suites) else []:
        path = os.path.join(suites, name)
        if not os.access(path, os.X_OK) or name.startswith("."):
            continue
        print("== suite %s" % name, flush=True)
        rc, c = stream([path, graphcc, os.path.join(work, "suites", name)],
                       r"^(?:\w+: )?(\d+) passed, (\d+) failed$")
        if c is None:
            print("suite %s: no summary line (exit %d)" % (name, rc))
            c = (0, 1)
        elif rc != 0 and c[1] == 0:
            c = (c[0], 1)
        passed, failed = passed + c[0], failed + c[1]
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
