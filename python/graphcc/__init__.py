"""graphcc for Python: sessions on NumPy arrays, op packages, eager calls.

    import graphcc, numpy as np
    s = graphcc.Session("model.onnx", ops=["pkg.yaml"])
    y, = s.run({"x": np.zeros((1, 3, 224, 224), np.float32)})

    pkg = graphcc.load_package("pkg.yaml")
    y = pkg.RMSNorm(x, weight, eps=1e-6)

The work is done by graphcc's C library (the extension module _graphcc,
written against CPython's and NumPy's C APIs); this file only arranges it.
docs/python.md is the guide.
"""
import collections
import hashlib
import os
import pickle
import sys
import threading


def _openblas_coretype():
    """graphcc's runtime asks OpenBLAS for its SkylakeX kernels on AVX-512
    machines (runtime/blas.c), but OpenBLAS reads OPENBLAS_CORETYPE once,
    when it is first loaded -- and NumPy loads it too. Set it before NumPy
    loads OpenBLAS, so that graphcc computes what the graphcc command does
    (bit for bit) when graphcc is imported first."""
    if "numpy" in sys.modules or "OPENBLAS_CORETYPE" in os.environ:
        return
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    if " avx512f" in line:
                        os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
                    return
    except OSError:
        pass


_openblas_coretype()

import numpy as np  # noqa: E402

from . import _graphcc as _c  # noqa: E402


class Error(Exception):
    """Any graphcc failure. The message is graphcc's own: it names the
    file, node, tensor, manifest key or library symbol at fault. `reason`
    is graphcc's short description of the error code."""

    reason = None


class ModelError(Error):
    """A model or program that cannot be loaded or compiled."""


class PackageError(Error):
    """An op package that cannot be loaded (manifest, library, symbol), or a
    kernel library that changed since a program was compiled."""


class InputError(Error):
    """A value given to a run or an eager call that does not fit: a missing
    or unknown input, a wrong type or shape, arguments an operation's
    verify or shape inference refuses."""


class KernelError(Error):
    """A kernel that reported failure, or misbehaved under guard=True or
    check_nan=True. (A kernel that crashes ends the process: see
    docs/python.md.)"""


_c._set_errors(Error, ModelError, PackageError, InputError, KernelError)

__version__ = _c.version
__all__ = ["Session", "compile", "load_package", "call", "Package", "Operation",
           "ValueInfo", "Error", "ModelError", "PackageError", "InputError",
           "KernelError", "python_kernel"]

_DEBUG_KEYS = ("trace", "dump_dir", "dump_weights", "check_nan", "guard", "check_tensors",
               "profile", "break_before", "timeout")


class ValueInfo(collections.namedtuple("ValueInfo", "name type shape")):
    """An input or output: its name, graphcc's type name ("float32",
    "sequence(float32)", "optional(int64)", ...) and its shape: a tuple
    whose entries are ints, the symbolic name of a dim (str), or None
    for a size only known when it runs (the whole shape is None when not
    even the rank is known)."""

    __slots__ = ()

    @property
    def dtype(self):
        """The NumPy dtype of a tensor (object for strings; float32 for
        bfloat16, which NumPy lacks); None for sequences and optionals."""
        if "(" in self.type:
            return None
        if self.type == "string":
            return np.dtype(object)
        if self.type == "bfloat16":
            return np.dtype(np.float32)
        return np.dtype(self.type)


def _value_info(entry):
    name, type_, dims, names = entry
    if dims is None:
        return ValueInfo(name, type_, None)
    shape = tuple(d if d >= 0 else names[i] if names[i] else None
                  for i, d in enumerate(dims))
    return ValueInfo(name, type_, shape)


def _debug_options(kw):
    unknown = set(kw) - set(_DEBUG_KEYS)
    if unknown:
        raise TypeError("unknown option%s %s (debugging options: %s)" % (
            "s" if len(unknown) > 1 else "", ", ".join(sorted(unknown)),
            ", ".join(_DEBUG_KEYS)))
    d = {k: v for k, v in kw.items() if v not in (None, False)}
    if "profile" in d:
        d["profile"] = os.fspath(d["profile"])
    if "dump_dir" in d:
        d["dump_dir"] = os.fspath(d["dump_dir"])
    if isinstance(d.get("trace"), os.PathLike):
        d["trace"] = os.fspath(d["trace"])
    return d or None


def _registry(ops):
    """A Registry holding the packages of ops: manifest paths (str or
    PathLike), folders of manifests, Package objects, or one of those."""
    if ops is None:
        ops = ()
    if isinstance(ops, (str, bytes, os.PathLike, Package)):
        ops = [ops]
    reg = _c.Registry()
    for o in ops:
        if isinstance(o, Package):
            o._add_to(reg)
        else:
            reg.load(os.fspath(o))
    return reg, list(ops)


def _shape_list(shapes):
    if not shapes:
        return []
    out = []
    for name, dims in shapes.items():
        out.append((name, (int(dims),) if np.isscalar(dims) else tuple(int(d) for d in dims)))
    return out


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# Programs loaded from .gcb files in this process, by (path, file hash):
# a process that unpickles many sessions of one program loads it once.
_programs = {}
_programs_lock = threading.Lock()


def _load_program(path, sha256=None, pins=None, allow_changed_kernels=False):
    path = os.path.abspath(os.fspath(path))
    key = (path, sha256, bool(allow_changed_kernels))
    with _programs_lock:
        p = _programs.get(key) if sha256 else None
        if p is not None:
            return p
        if sha256 is not None:
            got = _sha256(path)
            if got != sha256:
                raise ModelError("%s: the program changed since the session was pickled "
                                 "(SHA-256 %s, pickled with %s)" % (path, got, sha256))
        p = _c.load_program(path, allow_changed_kernels=allow_changed_kernels)
        if pins is not None:
            have = [tuple(x) for x in p.origin()["libraries"]]
            if have != [tuple(x) for x in pins]:
                raise ModelError("%s: its kernel libraries differ from the ones pinned when "
                                 "the session was pickled (%s, pickled: %s)" % (path, have, pins))
        if sha256:
            _programs[key] = p
        return p


class Session:
    """Runs a model: an ONNX file (path or bytes) or a compiled .gcb.

    Session(model, ops=[...], threads=0, shapes={...}, allow_changed_kernels=False,
            compare_flavours=False, trace=..., dump_dir=..., check_nan=..., guard=...,
            profile=..., break_before=..., timeout=...)

    ops: op packages (manifest paths or Package objects) for an ONNX model's
    custom nodes. shapes: sizes for dynamic dims, by input name (a full
    shape) or by symbolic dim name (an int); dims left open are taken from
    the arrays of each run (one compiled program per distinct shape, kept).
    threads: threads graphcc and OpenBLAS may use in a run (0: all cores).
    no_arena: every tensor and scratch buffer in its own exact-size block
    (graphcc run --no-arena: for AddressSanitizer and valgrind).
    The debugging instruments apply to every run (see docs/python.md).
    A session may be used from several threads; runs of one session take
    turns, runs of different sessions go in parallel (the GIL is released).
    """

    def __init__(self, model, ops=None, threads=0, shapes=None, allow_changed_kernels=False,
                 compare_flavours=False, no_arena=False, **debug):
        self._closed = False
        self._threads = int(threads)
        self._no_arena = bool(no_arena)
        self._debug = _debug_options(debug)
        self._compare = bool(compare_flavours)
        self._allow_changed = bool(allow_changed_kernels)
        self._path = None
        self._graph = None
        self._runner = None
        self._state = {}
        self._runners = collections.OrderedDict()
        self._lock = threading.Lock()
        self._last_comparison = None
        if isinstance(model, (bytes, bytearray, memoryview)):
            self._registry, self._ops = _registry(ops)
            self._graph = _c.Graph(bytes(model), "(model bytes)")
        elif _c.is_program_file(os.fspath(model)):
            if ops or shapes:
                raise ModelError("%s is a compiled program: ops= and shapes= only mean "
                                 "something when compiling an ONNX model" % os.fspath(model))
            self._registry, self._ops = None, []
            self._path = os.path.abspath(os.fspath(model))
            self._set_program(_c.load_program(self._path,
                                              allow_changed_kernels=self._allow_changed))
            return
        else:
            self._registry, self._ops = _registry(ops)
            self._graph = _c.Graph(os.fspath(model))
        self._shapes = _shape_list(shapes)
        io_in = self._graph.io(False)
        self._inputs = [_value_info(e) for e, has_default in io_in if not has_default]
        self._outputs = [_value_info(e) for e, _ in self._graph.io(True)]
        given = {n for n, _ in self._shapes}
        self._dynamic = [e[0] for e, has_default in io_in if not has_default and any(
            d < 0 and e[0] not in given and (e[3][i] is None or e[3][i] not in given)
            for i, d in enumerate(e[2] or ()))]
        self._out_index = {v.name: i for i, v in enumerate(self._outputs)}
        if not self._dynamic:
            self._runner = self._compile(self._shapes, _c.Runner)

    def _set_program(self, prog):
        self._state = collections.OrderedDict(prog.states())
        self._inputs = [_value_info(e) for e in prog.io(False) if e[0] not in self._state]
        self._outputs = [_value_info(e) for e in prog.io(True)]
        self._out_index = {v.name: i for i, v in enumerate(self._outputs)}
        self._runner = _c.Runner(prog, self._threads, self._no_arena)
        self._feed_names = None

    def _compile(self, shapes, runner_type):
        prog = self._graph.compile(self._registry, shapes)
        self._state = collections.OrderedDict(prog.states())
        names = {e[0] for e in prog.io(False)}
        # Inputs nothing reads are not in the program; their feeds are dropped.
        self._feed_names = names if names != {v.name for v in self._inputs} else None
        return runner_type(prog, self._threads, self._no_arena)

    def _runner_for(self, feeds):
        if self._closed:
            raise Error("the session is closed")
        key = []
        for name in self._dynamic:
            if name not in feeds:
                raise InputError("no value given for input '%s'; the model's inputs: %s" % (
                    name, ", ".join("'%s'" % v.name for v in self._inputs)))
            key.append((name, tuple(np.shape(feeds[name]))))
        key = tuple(key)
        with self._lock:
            r = self._runners.get(key)
            if r is not None:
                self._runners.move_to_end(key)
                return r
            try:
                r = self._compile(self._shapes + list(key), _c.Runner)
            except ModelError as e:
                raise InputError(str(e)) from None
            self._runners[key] = r
            while len(self._runners) > 8:
                self._runners.popitem(last=False)[1].close()
            return r

    @property
    def inputs(self):
        """The inputs a run takes, as ValueInfo (name, type, shape)."""
        return list(self._inputs)

    @property
    def outputs(self):
        """The outputs a run returns, as ValueInfo (name, type, shape)."""
        return list(self._outputs)

    @property
    def state(self):
        """The session state of a training program (graphcc train-program):
        {input: output} for each parameter and optimizer buffer the session
        keeps. Such an input starts at the program's initial value, takes its
        output's value after each run, and may be left out of run's feeds
        (give it to reset it). Read the parameters as those outputs, e.g.
        run(feeds, outputs=["loss", session.state["W"]])."""
        return dict(self._state)

    @property
    def path(self):
        """The .gcb file the session runs, or None (an ONNX model)."""
        return self._path

    @property
    def last_comparison(self):
        """What the last run with compare_flavours=True found (a dict)."""
        return self._last_comparison

    def run(self, feeds, outputs=None):
        """Runs the model on feeds (a dict: input name -> array, list of
        arrays for a sequence, None for an empty optional) and returns the
        outputs named in `outputs` (default: all), in that order, as new
        arrays. Arrays already in C order and of the input's type are read
        in place, not copied. Inputs in `state` (a training program's
        parameters) may be left out: the session keeps them."""
        r = self._runner or self._runner_for(feeds)
        if self._feed_names is not None:
            feeds = {k: v for k, v in feeds.items() if k in self._feed_names or
                     k not in {i.name for i in self._inputs}}
        idx = None
        if outputs is not None:
            if isinstance(outputs, str):
                outputs = [outputs]
            try:
                idx = [self._out_index[n] for n in outputs]
            except KeyError as e:
                raise InputError("the model has no output named '%s' (its outputs: %s)" % (
                    e.args[0], ", ".join("'%s'" % v.name for v in self._outputs))) from None
        if not self._compare:
            return r.run(feeds, idx, self._debug)
        out, self._last_comparison = r.run(feeds, idx, self._debug, True, self._registry)
        import sys
        sys.stderr.write(self._last_comparison["report"])
        return out

    def compare_flavours(self, feeds):
        """Runs every implementation of each custom node's operation on the
        node's inputs in a run on feeds, and returns what differs: a dict
        with max_abs, max_rel, node, flavour_a, flavour_b (the worst pair),
        counts, and the full report text."""
        r = self._runner or self._runner_for(feeds)
        _, cmp = r.run(feeds, [], self._debug, True, self._registry)
        self._last_comparison = cmp
        return cmp

    @property
    def _last_copies(self):
        r = self._runner or (next(reversed(self._runners.values())) if self._runners else None)
        return r.copies if r is not None else 0

    def close(self):
        """Frees the session's memory; a run afterwards raises graphcc.Error."""
        self._closed = True
        if self._runner is not None:
            self._runner.close()
        for r in self._runners.values():
            r.close()

    @property
    def closed(self):
        return self._closed

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __reduce__(self):
        if self._path is None:
            raise pickle.PicklingError(
                "a Session pickles as the path of its compiled program: compile the model "
                "first (graphcc.compile(model, ops=..., path='m.gcb')) and open the .gcb")
        prog = self._runner.program
        state = {"path": self._path, "sha256": _sha256(self._path),
                 "pins": [tuple(x) for x in prog.origin()["libraries"]],
                 "threads": self._threads, "allow_changed_kernels": self._allow_changed,
                 "debug": self._debug, "no_arena": self._no_arena}
        return (_restore_session, (state,))

    def __repr__(self):
        what = self._path or "ONNX model"
        return "<graphcc.Session %s: %d inputs, %d outputs%s>" % (
            what, len(self._inputs), len(self._outputs), " (closed)" if self._closed else "")


def _restore_session(state):
    """Unpickling: the same .gcb (checked by its SHA-256 and its library
    pins), loaded once per process, with a session of its own."""
    s = Session.__new__(Session)
    s._closed = False
    s._threads = state["threads"]
    s._no_arena = state.get("no_arena", False)
    s._debug = state["debug"]
    s._compare = False
    s._allow_changed = state["allow_changed_kernels"]
    s._path = state["path"]
    s._graph = None
    s._runners = collections.OrderedDict()
    s._lock = threading.Lock()
    s._last_comparison = None
    s._registry, s._ops = None, []
    s._set_program(_load_program(state["path"], state["sha256"], state["pins"],
                                 state["allow_changed_kernels"]))
    return s


def compile(model, ops=None, path=None, shapes=None):
    """Compiles an ONNX model (path or bytes) with its op packages and
    writes the program to `path` (a .gcb file). Returns the path."""
    if path is None:
        raise TypeError("compile() needs path= (where to write the .gcb program)")
    reg, _ = _registry(ops)
    g = _c.Graph(bytes(model), "(model bytes)") if isinstance(
        model, (bytes, bytearray, memoryview)) else _c.Graph(os.fspath(model))
    g.compile(reg, _shape_list(shapes)).save(os.fspath(path))
    return os.fspath(path)


# ------------------------------------------------------------------ packages

_PARAM_KINDS = {("int", True): "int", ("float", True): "float", ("bool", True): "int",
                ("string", True): "string", ("int", False): "ints",
                ("float", False): "floats", ("bool", False): "ints",
                ("string", False): "strings"}


class Operation:
    """One operation of a package. Calling it runs it on arrays:

        y = op(x, w, eps=1e-6, flavour=None, threads=1, guard=True, ...)

    verify, shape inference and selection run as for a node of a model;
    the compiled one-node program is kept per signature (types, shapes,
    params, flavour) and reused. Returns the output array, or a tuple of
    them when the operation has several outputs."""

    def __init__(self, package, desc):
        self.package = package
        self.name = desc["name"]
        self.type = desc["type"]
        self.domain = desc["domain"]
        self.version = desc["version"]
        self.manifest = desc["manifest"]
        self.inputs = desc["inputs"]
        self.outputs = desc["outputs"]
        self.params = desc["params"]
        self.flavours = desc["flavours"]
        self.pure = desc["pure"]
        self._cache = {}
        self._lock = threading.Lock()

    def __repr__(self):
        return "<graphcc.Operation %s (%s::%s): inputs %s, outputs %s, params %s, flavours %s>" % (
            self.name, self.domain, self.type, [i["name"] for i in self.inputs],
            [o["name"] for o in self.outputs], [p["name"] for p in self.params],
            [f["type"] for f in self.flavours])

    def _attrs(self, kw):
        by_name = {p["name"]: p for p in self.params}
        attrs = []
        for k, v in kw.items():
            p = by_name.get(k)
            if p is None:
                raise InputError("%s: operation '%s' has no param '%s' (its params: %s)" % (
                    self.manifest, self.name, k,
                    ", ".join("'%s'" % q["name"] for q in self.params) or "none"))
            kind = _PARAM_KINDS[(p["datatype"], p["scalar"])]
            if kind in ("ints", "floats", "strings"):
                v = list(np.asarray(v).ravel().tolist()) if not isinstance(v, (list, tuple)) \
                    else list(v)
            elif kind == "int":
                v = int(v)
            elif kind == "float":
                v = float(v)
            else:
                v = str(v)
            attrs.append((p["attribute"], kind, v))
        return attrs

    def _arrays(self, args):
        decl = self.inputs
        variadic = bool(decl) and decl[-1]["variadic"]
        if len(args) > len(decl) and not variadic:
            raise InputError("%s: operation '%s' takes %d inputs (%s), %d given" % (
                self.manifest, self.name, len(decl),
                ", ".join(i["name"] for i in decl), len(args)))
        ins = []
        for i, a in enumerate(args):
            d = decl[min(i, len(decl) - 1)]
            name = d["name"] if i < len(decl) else "%s_%d" % (d["name"], i)
            if a is None:
                ins.append((name, None, False))
                continue
            if not isinstance(a, np.ndarray):
                a = np.asarray(a)
            ins.append((name, a, d["constant"]))
        return ins

    def _runner(self, args, flavour, threads, kw):
        """The compiled call for this signature (compiled on first use) and
        its feeds."""
        attrs = self._attrs(kw)
        ins = self._arrays(args)
        key = (flavour, tuple((n, None) if a is None else
                              (n, a.dtype.str, a.shape, a.tobytes() if c else None)
                              for n, a, c in ins), repr(attrs), threads)
        r = self._cache.get(key)
        if r is None:
            with self._lock:
                r = self._cache.get(key)
                if r is None:
                    outs = ["%s_out" % o["name"] for o in self.outputs]
                    g = _c.op_graph(self.domain, self.type, self.version, ins, outs, attrs,
                                    "%s (call of %s)" % (self.manifest, self.name))
                    prog = g.compile(self.package._registry, None, flavour, True)
                    r = _c.Runner(prog, threads)
                    self._cache[key] = r
        return r, {n: a for n, a, c in ins if a is not None and not c}

    def __call__(self, *args, flavour=None, threads=1, **kw):
        debug = _debug_options({k: kw.pop(k) for k in list(kw) if k in _DEBUG_KEYS})
        r, feeds = self._runner(args, flavour, threads, kw)
        out = r.run(feeds, None, debug)
        return out[0] if len(out) == 1 else tuple(out)

    def bound_flavour(self, *args, flavour=None, threads=1, **kw):
        """The flavour a call with these arguments is bound to (selection's
        choice, or `flavour`): compiles the call, does not run it."""
        r, _ = self._runner(args, flavour, threads, kw)
        return next((n["flavour"] for n in r.program.nodes() if n["flavour"]), None)


class Package:
    """A loaded op package: `operations` (name -> Operation), and each
    operation as an attribute (pkg.RMSNorm) by name and by type."""

    def __init__(self, manifest):
        self.path = os.path.abspath(os.fspath(manifest))
        self._registry = _c.Registry()
        self._registry.load(self.path)
        self.operations = {}
        for d in self._registry.operations():
            self.operations[d["name"]] = Operation(self, d)

    def _add_to(self, reg):
        reg.load(self.path)

    def __getattr__(self, name):
        ops = self.__dict__.get("operations", {})
        if name in ops:
            return ops[name]
        for op in ops.values():
            if op.type == name:
                return op
        raise AttributeError("package %s has no operation '%s' (it has: %s)" % (
            self.__dict__.get("path"), name, ", ".join(ops)))

    def __dir__(self):
        return list(super().__dir__()) + list(self.operations)

    def __repr__(self):
        return "<graphcc.Package %s: %s>" % (self.path, ", ".join(self.operations))


def load_package(manifest):
    """Loads an op package (its YAML manifest and libraries)."""
    return Package(manifest)


def call(package, operation, *args, flavour=None, **kw):
    """Calls an operation of a package on arrays:
    graphcc.call(pkg, 'RMSNorm', x, w, eps=1e-6, flavour='rmsnormAvx2')."""
    if not isinstance(package, Package):
        package = load_package(package)
    return getattr(package, operation)(*args, flavour=flavour, **kw)


# ------------------------------------------------------------ Python kernels

# What the trampolines of pykernel.c call: (domain, type, flavour) -> kernel
# wrapper, and (domain, type) -> {"verify", "infer", "flavour"} for
# operations defined wholly in Python.
_py_kernels = {}
_py_ops = {}
_c._python_tables(_py_kernels, _py_ops)
_py_dir = []
_py_count = [0]

ShapeType = collections.namedtuple("ShapeType", "shape dtype")
ShapeType.__doc__ = """An input as a shape function sees it: its shape (a tuple) and dtype
(a NumPy dtype; object for strings)."""


def _np_dtype(name):
    return np.dtype(object) if name == "string" else np.dtype(
        np.float32 if name == "bfloat16" else name)


def _type_name(dtype):
    d = np.dtype(dtype)
    return "string" if d.kind in "OUS" else d.name


def _params_for_python(values, specs):
    del specs  # scalars come as scalars, vectors as lists
    return values


def _kernel_wrapper(fn, specs, what):
    def call(inputs, params, out_specs):
        res = fn(*inputs, **_params_for_python(params, specs))
        if not isinstance(res, (tuple, list)):
            res = (res,)
        if len(res) != len(out_specs):
            raise ValueError("%s returned %d outputs; the operation has %d" % (
                what, len(res), len(out_specs)))
        out = []
        for i, (r, (shape, tname)) in enumerate(zip(res, out_specs)):
            want = _np_dtype(tname)
            a = np.asarray(r)
            if tname in ("string", "bfloat16"):
                raise TypeError("%s: a %s output cannot come from Python" % (what, tname))
            if a.shape != tuple(shape):
                raise ValueError("%s: output %d has shape %s; shape inference said %s" % (
                    what, i, a.shape, tuple(shape)))
            if a.dtype != want:
                if not np.can_cast(a.dtype, want, "same_kind"):
                    raise TypeError("%s: output %d is %s; shape inference said %s" % (
                        what, i, a.dtype, want))
                a = a.astype(want)
            out.append(np.ascontiguousarray(a))
        return out
    return call


def _infer_wrapper(infer, specs, n_out):
    def call(in_specs, params):
        ins = [None if x is None else ShapeType(tuple(x[0]), _np_dtype(x[1])) for x in in_specs]
        if infer is None:
            first = next(x for x in ins if x is not None)
            return [(first.shape, _type_name(first.dtype))] * n_out
        r = infer(*ins, **_params_for_python(params, specs))
        # One (shape, dtype) pair, or one per output.
        if isinstance(r, ShapeType) or (len(r) == 2 and isinstance(r[0], (tuple, list)) and
                                        not isinstance(r[1], (tuple, list))):
            r = [r]
        return [(tuple(int(d) for d in shape), _type_name(dt)) for shape, dt in r]
    return call


def _verify_wrapper(verify, specs):
    def call(in_specs, params):
        ins = [None if x is None else ShapeType(tuple(x[0]), _np_dtype(x[1])) for x in in_specs]
        return verify(*ins, **_params_for_python(params, specs))
    return call


def _param_specs(params):
    """params: a dict name -> default (datatype from the default) or a list
    of manifest-style dicts."""
    if not params:
        return []
    if isinstance(params, dict):
        out = []
        for name, default in params.items():
            vec = isinstance(default, (list, tuple))
            first = default[0] if vec and default else default
            dt = ("bool" if isinstance(first, bool) else "int" if isinstance(first, int)
                  else "float" if isinstance(first, float) else "string")
            out.append({"name": name, "datatype": dt, "scalar": not vec, "default": default,
                        "has_default": True, "attribute": name, "size": -1})
        return out
    return [dict({"scalar": True, "attribute": p["name"], "size": -1,
                  "has_default": "default" in p}, **p) for p in params]


def _io_doc(io):
    d = {"name": io["name"], "maxDims": io.get("max_dims", 8)}
    for k in ("constant", "optional", "variadic"):
        if io.get(k):
            d[k] = True
    if io.get("dtypes"):
        d["dtypes"] = list(io["dtypes"])
    return d


def _param_doc(p):
    d = {"name": p["name"], "datatype": p["datatype"], "scalar": bool(p["scalar"]),
         "attribute": p.get("attribute") or p["name"]}
    if not p["scalar"] and p.get("size", -1) >= 0:
        d["size"] = p["size"]
    if p.get("has_default") and p.get("default") is not None:
        d["default"] = p["default"]
    return d


def _impl_doc(f):
    d = {"backend": f["backend"], "type": f["type"], "impl": f["library"],
         "symbol": f["symbol"]}
    for k, key in (("config", "config"), ("init", "init"), ("destroy", "destroy"),
                   ("scratch", "scratch")):
        if f.get(k):
            d[key] = f[k]
    if f.get("scratch_bytes") is not None:
        d["scratchBytes"] = f["scratch_bytes"]
    if f.get("inplace"):
        d["inplace"] = True
    return d


def _op_doc(op):
    d = {"name": op["name"], "type": op["type"], "package": op["domain"]}
    if op["version"] >= 0:
        d["version"] = op["version"]
    if op.get("pure"):
        d["pure"] = True
    d["inputs"] = [_io_doc(i) for i in op["inputs"]]
    d["outputs"] = [_io_doc(o) for o in op["outputs"]]
    if op["params"]:
        d["params"] = [_param_doc(p) for p in op["params"]]
    d["functionsLibrary"] = op["functions_library"]
    for k, key in (("verify", "verify"), ("infer_shape", "inferShape"),
                   ("select_impl", "selectImpl")):
        if op.get(k):
            d[key] = op[k]
    d["implementations"] = [_impl_doc(f) for f in op["flavours"] if not f["skipped"]]
    return d


def _write_manifest(docs):
    import json
    import tempfile
    if not _py_dir:
        import atexit
        import shutil
        _py_dir.append(tempfile.mkdtemp(prefix="graphcc-python-kernels-"))
        atexit.register(shutil.rmtree, _py_dir[0], True)
    _py_count[0] += 1
    path = os.path.join(_py_dir[0], "python-%d.yaml" % _py_count[0])
    with open(path, "w") as f:
        f.write("\n---\n".join(json.dumps(d, indent=1) for d in docs) + "\n")
    return path


def python_kernel(domain, type, fn, infer=None, verify=None, flavour="python", package=None,
                  inputs=("x",), outputs=("y",), params=None, version=1, name=None):
    """Registers a NumPy function as a kernel and returns the Package that
    serves it (for Session(ops=[...]) and eager calls).

    With package=None the whole operation (domain, type) is Python: inputs
    and outputs (names), params (a dict name -> default, or manifest-style
    dicts), `infer(*inputs, **params) -> (shape, dtype)` (or a list of them,
    one per output; inputs come as ShapeType(shape, dtype); default: the
    first input's shape and type), optional `verify(*inputs, **params)`.

    With package=pkg (a Package that has the operation), fn becomes one more
    flavour of it, named `flavour`, beside the C ones: the package's own
    verify, shape inference and selection stay in charge, and
    Session(..., ops=[the returned package], compare_flavours=True) or
    pkg.Op(..., flavour=flavour) run the prototype against the C kernels.

    fn(*arrays, **params) gets copies of the inputs (None for an absent
    optional one) and returns the output array(s), of the inferred shapes
    and types. A Python exception fails the call (KernelError). Programs
    using Python kernels live in this process: they cannot be saved as .gcb.
    """
    if package is None:
        specs = _param_specs(params)
        doc = {"name": name or type, "type": type, "package": domain, "version": version,
               "inputs": [_io_doc({"name": n} if isinstance(n, str) else n) for n in inputs],
               "outputs": [_io_doc({"name": n} if isinstance(n, str) else n) for n in outputs],
               "functionsLibrary": "inprocess:python", "verify": "python_verify",
               "inferShape": "python_infer", "selectImpl": "python_select",
               "implementations": [{"backend": "Interpreter", "type": flavour,
                                    "impl": "inprocess:python", "symbol": "python_kernel"}]}
        if specs:
            doc["params"] = [_param_doc(p) for p in specs]
        _py_ops[(domain, type)] = {
            "verify": _verify_wrapper(verify, specs) if verify else None,
            "infer": _infer_wrapper(infer, specs, len(outputs)), "flavour": flavour}
        docs = [doc]
    else:
        if not isinstance(package, Package):
            package = load_package(package)
        ops = package._registry.operations()
        target = [o for o in ops if o["domain"] == domain and o["type"] == type]
        if not target:
            raise PackageError("%s has no operation %s::%s" % (package.path, domain, type))
        if any(f["type"] == flavour for f in target[0]["flavours"]):
            raise PackageError("operation %s::%s has a flavour '%s' already" % (
                domain, type, flavour))
        if infer is not None or verify is not None:
            raise TypeError("infer= and verify= are for operations defined in Python; "
                            "the package's own functions serve %s::%s" % (domain, type))
        specs = target[0]["params"]
        docs = []
        for o in ops:
            d = _op_doc(o)
            if o is target[0]:
                d["implementations"].append({"backend": "Interpreter", "type": flavour,
                                             "impl": "inprocess:python", "symbol": "python_kernel"})
            docs.append(d)
    _py_kernels[(domain, type, flavour)] = _kernel_wrapper(
        fn, specs, "Python kernel %s::%s flavour '%s'" % (domain, type, flavour))
    return Package(_write_manifest(docs))
