#!/usr/bin/python3
"""Run every test: the C unit tests, the end-to-end tests, then each suite
in tests/suites/ (ONNX conformance, package self-tests, ...).

Usage: run-all.py --graphcc PATH --work DIR [UNIT_BINARY...]

Streams the unit and end-to-end tests' output, prints each further suite's
output whole when it ends (they run side by side), and ends with the line
"N passed, N failed" (the sum of all). Exit status is non-zero if anything failed, if a suite
did not report its count, or if no test ran at all.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def stream(cmd, pattern, echo=True):
    """Run cmd, echo its output line by line (or keep it, echo=False);
    -> (returncode, (passed, failed) from the last line matching pattern, or
    None, the kept lines with a last line giving the time taken)."""
    counts, kept = None, []
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT)
    for raw in p.stdout:
        line = raw.decode("utf-8", "replace").rstrip("\n")
        if echo:
            print(line, flush=True)
        else:
            kept.append(line)
        m = re.match(pattern, line)
        if m:
            counts = (int(m.group(1)), int(m.group(2)))
    rc = p.wait()
    took = "== took %.0f s: %s" % (time.monotonic() - t0,
                                   " ".join(os.path.basename(c) for c in cmd[:2]))
    if echo:
        print(took, flush=True)
    return rc, counts, kept + [took]


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
        rc, c, _ = stream(["sh", os.path.join(ROOT, "tests", "run-unit.sh")] + units,
                          r"^unit: (\d+) passed, (\d+) failed$")
        if c is None:
            print("unit tests: no summary line (exit %d)" % rc)
            c = (0, 1)
        elif rc != 0 and c[1] == 0:
            c = (c[0], 1)
        passed, failed = passed + c[0], failed + c[1]
    else:
        print("unit tests: none given")
    rc, c, _ = stream([sys.executable, os.path.join(ROOT, "tests", "e2e", "run.py"),
                       "--graphcc", graphcc, "--work", os.path.join(work, "e2e")],
                      r"^(\d+) passed, (\d+) failed$")
    if c is None:
        print("e2e tests: no summary line (exit %d)" % rc)
        c = (0, 1)
    elif rc != 0 and c[1] == 0:
        c = (c[0], 1)
    passed, failed = passed + c[0], failed + c[1]
    # More suites: each tests/suites/<name> is an executable run as
    # `<name> GRAPHCC WORKDIR` that ends with "N passed, N failed". They run
    # side by side, as many as there are cores; each one's output is printed
    # whole, in name order.
    suites = os.path.join(ROOT, "tests", "suites")
    names = [n for n in sorted(os.listdir(suites)) if os.path.isdir(suites)
             and os.access(os.path.join(suites, n), os.X_OK) and not n.startswith(".")]
    run_suite = lambda name: stream([os.path.join(suites, name), graphcc,
                                     os.path.join(work, "suites", name)],
                                    r"^(?:\w+: )?(\d+) passed, (\d+) failed$", echo=False)
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        for name, (rc, c, lines) in zip(names, pool.map(run_suite, names)):
            print("== suite %s" % name)
            print("\n".join(lines), flush=True)
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
