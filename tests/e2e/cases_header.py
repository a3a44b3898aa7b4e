"""The op-package ABI header stands alone: C standard headers only, compiles
as strict C99 and as C++, and a package using either interface builds.

  header/c99, header/c++, header/c99-graphcc-interface

The folders depend one way (tools -> lib -> runtime -> include):

  header/layout/lib-includes   lib/ includes from runtime/ only build.h (its one
                               internal header); runtime/ and include/ never
                               include lib/; tools/ never include lib/ headers
"""
import glob
import os
import re
import subprocess

import run

SEED_SRC = r"""
#include <graphcc/customop.h>
bool customOpVerify(CustomOpIOTensor *i, int32_t ni, CustomOpIOTensor *o, int32_t no,
                    CustomOpParam *p, int32_t np)
{ (void)i; (void)ni; (void)o; (void)no; (void)p; (void)np; return true; }
void k(CustomOpIOTensor *i, int32_t ni, CustomOpIOTensor *o, int32_t no,
       CustomOpParam *p, int32_t np)
{ (void)i; (void)ni; (void)o; (void)no; (void)p; (void)np; }
"""

GRAPHCC_SRC = r"""
#include <graphcc/customop.h>
GC_CUSTOMOP_EXPORT_ABI();
GC_CUSTOMOP_API GcStatus kern(GcOpContext *ctx, const CustomOpIOTensor *i, int32_t ni,
                              CustomOpIOTensor *o, int32_t no, const CustomOpParam *p, int32_t np)
{
    (void)i; (void)ni; (void)o; (void)no; (void)p; (void)np;
    if (!ctx) return GC_STATUS_FAIL;
    ctx->set_error(ctx, "%s", "fine");
    return GC_STATUS_OK;
}
"""


def compile_case(ctx, name, compiler, flags, src, lang):
    def fn():
        d = run.fresh_dir(os.path.join(ctx.out, "header", name))
        path = os.path.join(d, "t." + ("cc" if lang == "c++" else "c"))
        with open(path, "w") as f:
            f.write(src)
        cmd = [compiler] + flags + ["-I", os.path.join(ctx.root, "include"), "-c", path,
                                    "-o", os.path.join(d, "t.o")]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        if p.returncode:
            return run.Result(False, "%s failed" % " ".join(cmd), p.stderr.decode())
        return run.Result(True, " ".join(flags))
    return ("header/" + name, fn)


def layout():
    root = run.ROOT
    bad = []
    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

    def scan(folder, ok):
        for path in sorted(glob.glob(os.path.join(root, folder, "**", "*.[ch]"),
                                     recursive=True)):
            for m in inc.finditer(open(path, encoding="utf-8", errors="replace").read()):
                target = os.path.normpath(os.path.join(os.path.dirname(path), m.group(1)))
                rel = os.path.relpath(target, root)
                if not ok(rel):
                    bad.append("%s includes %s" % (os.path.relpath(path, root), m.group(1)))
    scan("lib", lambda rel: not rel.startswith("runtime" + os.sep) or
         rel == os.path.join("runtime", "build.h"))
    scan("runtime", lambda rel: not rel.startswith("lib" + os.sep))
    scan("include", lambda rel: not rel.startswith("lib" + os.sep))
    scan(os.path.join("tools", "graphcc"), lambda rel: not rel.startswith("lib" + os.sep))
    if bad:
        return run.Result(False, "%d includes against the layout" % len(bad), "\n".join(bad))
    return run.Result(True, "lib -> runtime only through runtime/build.h")


def cases(ctx):
    strict = ["-Wall", "-Wextra", "-Wpedantic", "-Werror"]
    return [
        compile_case(ctx, "c99", "gcc", ["-std=c99"] + strict, SEED_SRC, "c"),
        compile_case(ctx, "c99-graphcc-interface", "gcc", ["-std=c99"] + strict,
                     GRAPHCC_SRC, "c"),
        compile_case(ctx, "c++", "g++", ["-std=c++11"] + strict, SEED_SRC, "c++"),
        compile_case(ctx, "c++-graphcc-interface", "g++", ["-std=c++11"] + strict,
                     GRAPHCC_SRC, "c++"),
        ("header/layout/lib-includes", layout),
    ]
