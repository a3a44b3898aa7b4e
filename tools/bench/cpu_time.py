#!/usr/bin/python3
"""Whole-model on-CPU time per run, graphcc against ONNX Runtime, round-robin.

Usage: cpu_time.py --graphcc BIN --ort-modules DIR --model M.onnx
                   --input NAME=FILE.npy [--baseline BUILD] [--threads 1]
                   [--repeat 16] [--k 1]

On a loaded machine (load 8-20 on 2 cores) a run's wall time is mostly time
spent waiting for a CPU: resnet50 at 1 thread takes 100-560 ms of wall time
for 60 ms of work, and a minimum over a few runs of either runtime is no
better than chance. This tool measures what each process spends on a CPU
instead: Linux's per-thread run time (/proc/PID/task/*/schedstat, first
field, nanoseconds), summed over the process's threads, read before and after
each request. At 1 thread it is the run's latency without the waiting (cache
refills after being preempted stay in it, for both runtimes alike); at more
threads it is the total work, spin-waiting included, not the latency.

The workers are the bench's own: BUILD/bench/graphcc-worker (next to
BUILD/bin/graphcc; rebuild it with `make BUILD/bench/graphcc-worker` after a
change) and tools/bench/ort-worker.js; --baseline BUILD adds an older build's
worker to the round. Each round runs every worker K times in turn.
"""
import argparse
import glob
import os
import statistics
import subprocess


def start(argv):
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, bufsize=1)
    line = p.stdout.readline()
    if not line.startswith("ready"):
        raise SystemExit("%s did not start: %s" % (argv[0], line.strip()))
    return p


def on_cpu_ms(p):
    t = 0
    for f in glob.glob("/proc/%d/task/*/schedstat" % p.pid):
        try:
            with open(f) as fh:
                t += int(fh.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended between glob and read
    return t / 1e6


def run(p, k):
    """(on-CPU ms per run, wall ms per run as the worker timed it)."""
    a = on_cpu_ms(p)
    p.stdin.write("run %d\n" % k)
    p.stdin.flush()
    r = p.stdout.readline()
    b = on_cpu_ms(p)
    if not r.startswith("ok"):
        raise SystemExit("worker: run %d -> %s" % (k, r.strip()))
    return (b - a) / k, float(r.split()[1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphcc", required=True)
    ap.add_argument("--baseline")
    ap.add_argument("--ort-modules", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", action="append", default=[])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=16)
    ap.add_argument("--k", type=int, default=1)
    a = ap.parse_args()
    t = str(a.threads)
    here = os.path.dirname(os.path.abspath(__file__))
    workers = {"graphcc": os.path.join(os.path.dirname(os.path.dirname(a.graphcc)), "bench",
                                       "graphcc-worker")}
    if a.baseline:
        workers["baseline"] = os.path.join(a.baseline, "bench", "graphcc-worker")
    ps = {k: start([w, "--threads", t, a.model] + a.input) for k, w in workers.items()}
    ps["ORT"] = start(["node", os.path.join(here, "ort-worker.js"),
                       os.path.abspath(a.ort_modules), a.model, t] + a.input)
    try:
        for p in ps.values():
            run(p, 2)  # warm-up
        res = {k: [] for k in ps}
        for _ in range(a.repeat):
            for k, p in ps.items():
                res[k].append(run(p, a.k))
    finally:
        for p in ps.values():
            p.stdin.write("quit\n")
            p.stdin.close()
            p.wait()
    med = statistics.median
    print("| runtime | on-CPU ms/run median | min | wall ms median | x ORT (CPU median) |")
    print("|---|---:|---:|---:|---:|")
    oc = med([c for c, _ in res["ORT"]])
    for k, v in res.items():
        c = [x for x, _ in v]
        print("| %s | %.2f | %.2f | %.2f | %.3f |" % (k, med(c), min(c), med([w for _, w in v]),
                                                      med(c) / oc))


if __name__ == "__main__":
    main()
