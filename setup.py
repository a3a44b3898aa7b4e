"""pip install --no-build-isolation .   (or: make wheel)

Builds the Python module `graphcc` (python/graphcc: the C extension
_graphcc against CPython's and NumPy's C APIs, and graphcc/__init__.py),
linked statically against graphcc's libraries in $GRAPHCC_BUILD (default:
build/), which `make` builds first when they are missing. Uses the system's setuptools and
NumPy; nothing is downloaded.
"""
import os
import subprocess
import sysconfig

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.abspath(os.environ.get("GRAPHCC_BUILD", os.path.join(ROOT, "build")))
LIBS = [os.path.join(BUILD, "lib", "libgraphcc.a"), os.path.join(BUILD, "lib", "libgraphcc-runtime.a")]


class BuildWithLibraries(build_ext):
    def run(self):
        if all(os.path.exists(x) for x in LIBS):
            # Built already (perhaps with SAN=...: running make here with other
            # flags would rebuild that tree's objects).
            return super().run()
        # B as `make` spells it (relative to the checkout): its objects
        # depend on the flags, which hold the build folder's name.
        rel = os.path.relpath(BUILD, ROOT)
        b = BUILD if rel.startswith("..") else rel
        subprocess.check_call(["make", "-C", ROOT, "--no-print-directory", "B=" + b] +
                              [os.path.join(b, "lib", os.path.basename(x)) for x in LIBS])
        super().run()


def version():
    with open(os.path.join(ROOT, "include", "graphcc", "runtime.h")) as f:
        for line in f:
            if line.startswith("#define GC_VERSION_STRING"):
                return line.split('"')[1]
    return "0"


setup(
    name="graphcc",
    version=version(),
    description="graphcc for Python: sessions on NumPy arrays, op packages, eager calls",
    packages=["graphcc"],
    package_dir={"": "python"},
    ext_modules=[Extension(
        "graphcc._graphcc",
        sources=sorted(os.path.join("python", "graphcc", f)
                       for f in os.listdir(os.path.join(ROOT, "python", "graphcc"))
                       if f.endswith(".c")),
        depends=[os.path.join("python", "graphcc", "_graphcc.h")] + LIBS,
        include_dirs=[os.path.join(ROOT, "include"), numpy.get_include()],
        extra_compile_args=["-std=c11", "-D_GNU_SOURCE", "-fvisibility=hidden"],
        extra_objects=LIBS,
        extra_link_args=["-Wl,--exclude-libs,ALL"],
        libraries=["protobuf-c", "yaml", "crypto", "xxhash", "dl", "m", "pthread"],
    )],
    cmdclass={"build_ext": BuildWithLibraries},
    # setuptools' own objects beside the libraries they link, not in the
    # checkout's build/: two build trees (SAN=1, SAN=thread) never share them
    options={"build": {"build_base": os.path.join(BUILD, "setuptools")}},
    install_requires=["numpy"],
    python_requires=">=3.9",
)
