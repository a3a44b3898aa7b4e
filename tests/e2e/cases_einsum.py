"""Einsum against NumPy (`graphcc run`, at 1 and 2 threads):

  einsum/<case>   one Einsum node; the output against np.einsum of the
                  inputs in float64. Two float operands whose labels are
                  batch, contracted, one-sided or summed in one input take
                  the batched GEMM (einsum.c); diagonals stay on the loop.
                  Tolerance: float32 |got - want| <= 1e-5 * einsum(|a|, |b|)
                  + 1e-6 (GEMM rounding grows with the sum of |products|);
                  float64 the same with 1e-12. 1 and 2 threads must give
                  the same bytes.

The cases cover what the GEMM plan decides: operands read in place (either
transposition), packed (labels out of order, summed alone), the output
written in place or unpacked (permuted), the operands swapped so that C is
row-major, broadcast batch labels, ellipses, empty dimensions; one operand
(one strided gather: transposes, reductions); and the loop's diagonals and
three operands.
"""
import os

import numpy as np

import run

f32, f64 = np.float32, np.float64

# (name, equation, shapes, dtype)
EQUATIONS = [
    ("maxvit-qk", "B G H I D, B G H J D -> B G H I J", [(1, 8, 2, 49, 32)] * 2, f32),
    ("maxvit-av", "B G H I J, B G H J D -> B G H I D", [(1, 8, 2, 49, 49), (1, 8, 2, 49, 32)],
     f32),
    ("attn-qk", "bhid,bhjd->bhij", [(2, 3, 5, 4), (2, 3, 6, 4)], f32),
    ("attn-av", "bhij,bhjd->bhid", [(2, 3, 5, 6), (2, 3, 6, 4)], f32),
    ("matmul", "ij,jk->ik", [(7, 5), (5, 9)], f32),
    ("matmul-bt", "ij,kj->ik", [(7, 5), (9, 5)], f32),
    ("matmul-at", "ji,jk->ik", [(5, 7), (5, 9)], f32),
    ("matmul-out-t", "ik,kj->ji", [(7, 5), (5, 9)], f32),
    ("bmm", "bij,bjk->bik", [(3, 4, 5), (3, 5, 6)], f32),
    ("bmm-f64", "bij,bjk->bik", [(3, 4, 5), (3, 5, 6)], f64),
    ("bmm-big", "bij,bjk->bik", [(6, 70, 40), (6, 40, 50)], f32),
    ("ellipsis-broadcast", "...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 6)], f32),
    ("batch-size1", "bij,bjk->bik", [(1, 3, 4), (5, 4, 2)], f32),
    ("batch-middle", "ibj,jbk->bik", [(3, 4, 5), (5, 4, 6)], f32),
    ("contract-broadcast", "ij,ij->i", [(3, 1), (3, 4)], f32),
    ("contract-broadcast-b", "bij,bjk->bik", [(2, 3, 4), (2, 1, 5)], f32),
    ("dot", "i,i->", [(11,), (11,)], f32),
    ("rowdot", "ij,ij->i", [(6, 7), (6, 7)], f32),
    ("matvec", "ij,j->i", [(6, 7), (7,)], f32),
    ("outer", "i,j->ij", [(4,), (5,)], f32),
    ("implicit", "ij,jk", [(3, 4), (4, 5)], f32),
    ("out-permuted", "bij,bjk->kbi", [(3, 4, 5), (3, 5, 6)], f32),
    ("out-batch-last", "bij,bjk->ikb", [(3, 4, 5), (3, 5, 6)], f32),
    ("matmul-big", "ij,jk->ik", [(200, 64), (64, 300)], f32),
    ("sum-left", "ijk,jl->il", [(3, 4, 5), (4, 6)], f32),
    ("sum-right", "ij,jkl->ik", [(3, 4), (4, 5, 6)], f32),
    ("sum-both", "ij,kl->", [(3, 4), (5, 6)], f32),
    ("two-k", "ijkl,klm->ijm", [(2, 3, 4, 5), (4, 5, 6)], f32),
    ("two-k-crossed", "ijkl,lkm->ijm", [(2, 3, 4, 5), (5, 4, 6)], f32),
    ("empty-rows", "bij,bjk->bik", [(2, 0, 4), (2, 4, 3)], f32),
    ("empty-inner", "bij,bjk->bik", [(2, 3, 0), (2, 0, 4)], f32),
    ("empty-summed", "ijk,jl->il", [(3, 4, 0), (4, 2)], f32),
    ("diagonal", "ii,ij->j", [(4, 4), (4, 3)], f32),
    ("one-transpose", "ijk->kij", [(3, 4, 5)], f32),
    ("one-reduce", "ijk->ik", [(3, 4, 5)], f32),
    ("one-reduce-f64", "ijk->k", [(3, 4, 5)], f64),
    ("one-sum-all", "ij->", [(6, 7)], f32),
    ("one-implicit", "ji", [(3, 4)], f32),
    ("one-ellipsis", "...ij->...ji", [(2, 3, 4, 5)], f32),
    ("one-empty-summed", "ij->i", [(3, 0)], f32),
    ("one-trace", "ii->", [(5, 5)], f32),
    ("three", "ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)], f32),
]


def _case(ctx, name, eq, shapes, dt):
    def fn():
        import onnx
        from onnx import helper
        r = np.random.default_rng(sum(map(ord, name)))
        ins = {"x%d" % i: r.standard_normal(s).astype(dt) for i, s in enumerate(shapes)}
        a = [v.astype(f64) for v in ins.values()]
        want = np.einsum(eq.replace(" ", ""), *a)
        bound = np.einsum(eq.replace(" ", ""), *[np.abs(v) for v in a])
        tol = (1e-5 if dt == f32 else 1e-12) * bound + (1e-6 if dt == f32 else 1e-12)
        elem = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE
        g = helper.make_graph(
            [helper.make_node("Einsum", list(ins), ["y"], equation=eq)], name,
            [helper.make_tensor_value_info(k, elem[v.dtype], list(v.shape))
             for k, v in ins.items()],
            [helper.make_tensor_value_info("y", elem[np.dtype(dt)], None)])
        d = run.fresh_dir(os.path.join(ctx.work, "einsum", name))
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 12)]),
                  os.path.join(d, "model.onnx"))
        args = ["run", os.path.join(d, "model.onnx")]
        for k, v in ins.items():
            np.save(os.path.join(d, k + ".npy"), v)
            args += ["--input", "%s=%s" % (k, os.path.join(d, k + ".npy"))]
        first = None
        for t in ("1", "2"):
            od = run.fresh_dir(os.path.join(d, "out" + t))
            rc, _, err = run.run_graphcc(ctx, args + ["--threads", t, "--output-dir", od])
            if rc != 0:
                return run.Result(False, "%s threads: %s" % (t, run.describe_rc(rc)), err)
            got = np.load(os.path.join(od, "y.npy"))
            if got.dtype != dt or got.shape != want.shape:
                return run.Result(False, "%s threads: got %s %s, expected %s %s" % (
                    t, got.dtype, got.shape, np.dtype(dt), want.shape))
            err = np.abs(got.astype(f64) - want)
            if not (err <= tol).all():
                i = np.unravel_index(np.argmax(err - tol), err.shape)
                return run.Result(False, "%s threads: %d values off; at %s got %r, NumPy %r" % (
                    t, int((err > tol).sum()), i, got[i], want[i]))
            if first is not None and not np.array_equal(got, first):
                return run.Result(False, "2 threads differ from 1 thread")
            first = got
        return run.Result(True, "%s %s -> %s" % (eq, " ".join(map(str, shapes)), want.shape))
    return ("einsum/" + name, fn)


def cases(ctx):
    return [_case(ctx, *c) for c in EQUATIONS]
