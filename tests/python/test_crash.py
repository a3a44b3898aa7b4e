"""A kernel that crashes inside Python ends the process as the graphcc
command does: a report naming node, operation, flavour, library and symbol
on stderr, exit status 3 -- from the main thread and from another thread
(its own alternate signal stack, so a stack overflow is reported too). A
crash outside any kernel goes on to Python's faulthandler."""
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import BUILD, fixture_pkg

BUGGY = fixture_pkg("debug/buggy", "buggy")


def run_py(code, *args):
    env = dict(os.environ)
    env.pop("GRAPHCC_CRASH_CAPTURE", None)
    return subprocess.run([sys.executable, *args, "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("bug,thread,signal", [
    ("nullWrite", False, "SIGSEGV"), ("callAbort", False, "SIGABRT"),
    ("seedNullWrite", True, "SIGSEGV"), ("overflowStack", True, "SIGSEGV"),
    ("divideByZero", True, "SIGFPE")])
def test_crashing_kernel_is_reported_and_ends_the_process(bug, thread, signal):
    r = run_py("""
        import threading, numpy as np, graphcc
        pkg = graphcc.load_package(%r)
        def call():
            pkg.Buggy(np.ones((2, 3), np.float32), bug=%r)
        if %r:
            t = threading.Thread(target=call); t.start(); t.join()
        else:
            call()
        print("survived")
        """ % (BUGGY, bug, thread))
    assert r.returncode == 3, (r.returncode, r.stderr[-2000:])
    assert "survived" not in r.stdout
    err = r.stderr
    assert "graphcc: kernel crashed: " in err and signal in err, err
    assert "node 'Buggy'" in err and "flavour '%s'" % bug in err, err
    assert "libbuggy" in err and "symbol" in err, err


def test_crash_outside_kernels_reaches_faulthandler():
    r = run_py("""
        import ctypes, graphcc
        ctypes.string_at(0)
        """, "-X", "faulthandler")
    assert r.returncode != 0 and r.returncode != 3
    assert "crashed outside any kernel" in r.stderr, r.stderr
    assert "Fatal Python error" in r.stderr, r.stderr


def test_crash_capture_can_be_turned_off():
    env = dict(os.environ, GRAPHCC_CRASH_CAPTURE="0")
    r = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import numpy as np, graphcc
        graphcc.load_package(%r).Buggy(np.ones(3, np.float32), bug="nullWrite")
        """ % BUGGY)], capture_output=True, text=True, env=env, timeout=120)
    # The plain signal (or a sanitizer's report, in those builds), not ours.
    assert r.returncode not in (0, 3) and "kernel crashed" not in r.stderr, r.stderr
