#!/usr/bin/python3
"""Generate ONNX's backend node and simple tests into a directory.

Usage: generate.py OUTDIR

The same as `backend-test-tools generate-data -o OUTDIR`, but onnx 1.12's
generators use np.float, np.object, ... which numpy 1.24 removed: restore
those aliases in this process first (system files stay untouched).
"""
import sys

import numpy as np

for _name, _type in (("float", float), ("int", int), ("bool", bool),
                     ("object", object), ("complex", complex), ("str", str)):
    if _name not in np.__dict__:
        setattr(np, _name, _type)

from onnx.backend.test import cmd_tools  # noqa: E402  (after the aliases)


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: generate.py OUTDIR\n")
        return 2
    sys.argv = ["backend-test-tools", "generate-data", "-o", argv[1]]
    cmd_tools.main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
