/*
 * graphcc._graphcc: the CPython extension under `import graphcc`, written
 * against CPython's C API and NumPy's C API. It wraps graphcc's public C
 * API (graphcc.h, runtime.h, debug.h) in five small types; the Python
 * package (graphcc/__init__.py) builds the user-facing API on them:
 *
 *   Registry  loaded op packages (gc_registry)
 *   Graph     an ONNX model, or a one-node graph for an eager call (gc_graph)
 *   Program   a compiled program, from a Graph or a .gcb file (gc_program)
 *   Runner    a session of a Program (gc_session): run() binds NumPy inputs
 *             (without copying when they are C-contiguous and of the right
 *             type), runs with the GIL released, and returns outputs as new
 *             arrays that own their memory
 * (Registry in registry.c) and, in pykernel.c, the trampolines that make
 * Python functions kernels.
 *
 * Errors raise the exception classes the package registers with
 * _set_errors(), carrying graphcc's own message.
 */
#define PY_SSIZE_T_CLEAN
#define GCPY_MAIN_FILE
#include "_graphcc.h"

#include <graphcc/debug.h>
#include <graphcc/graphcc.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ errors */

PyObject *gcpy_Error, *gcpy_ModelError, *gcpy_PackageError, *gcpy_InputError,
	*gcpy_KernelError;

/* Raises cls (graphcc.Error when the classes are not registered yet) with
 * graphcc's message; MemoryError for GC_ENOMEM. Returns NULL. */
PyObject *gcpy_raise(PyObject *cls, const gc_error *e)
{
	const char *msg = e->msg[0] ? e->msg : gc_strerror(e->code);
	if (e->code == GC_ENOMEM) {
		PyErr_SetString(PyExc_MemoryError, msg);
		return NULL;
	}
	if (!cls)
		cls = gcpy_Error ? gcpy_Error : PyExc_RuntimeError;
	PyObject *inst = PyObject_CallFunction(cls, "s", msg);
	if (!inst)
		return NULL;
	PyObject *code = PyUnicode_FromString(gc_strerror(e->code));
	if (!code || PyObject_SetAttrString(inst, "reason", code)) {
		Py_XDECREF(code);
		Py_DECREF(inst);
		return NULL;
	}
	Py_DECREF(code);
	PyErr_SetObject(cls, inst);
	Py_DECREF(inst);
	return NULL;
}

PyObject *gcpy_raisef(PyObject *cls, const char *fmt, ...)
{
	gc_error e = { .code = GC_EINVAL };
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e.msg, sizeof e.msg, fmt, ap);
	va_end(ap);
	return gcpy_raise(cls, &e);
}

/* Errors of a run: a kernel's failure or misbehaviour is a KernelError,
 * an unsupported construct the model's, anything else the inputs'. */
static PyObject *raise_run(const gc_error *e)
{
	PyObject *cls = e->code == GC_EKERNEL || e->code == GC_ECRASH ? gcpy_KernelError
			: e->code == GC_EUNSUPPORTED			   ? gcpy_ModelError
									   : gcpy_InputError;
	return gcpy_raise(cls, e);
}

static PyObject *set_errors(PyObject *self, PyObject *args)
{
	(void)self;
	PyObject *c[5];
	if (!PyArg_ParseTuple(args, "OOOOO", &c[0], &c[1], &c[2], &c[3], &c[4]))
		return NULL;
	PyObject **slots[5] = { &gcpy_Error, &gcpy_ModelError, &gcpy_PackageError,
				&gcpy_InputError, &gcpy_KernelError };
	for (int i = 0; i < 5; i++) {
		Py_INCREF(c[i]);
		Py_XSETREF(*slots[i], c[i]);
	}
	Py_RETURN_NONE;
}

/* ------------------------------------------------------------------ dtypes */

int gcpy_npy_type(gc_dtype d)
{
	switch (d) {
	case GC_DTYPE_FLOAT: return NPY_FLOAT32;
	case GC_DTYPE_DOUBLE: return NPY_FLOAT64;
	case GC_DTYPE_FLOAT16: return NPY_FLOAT16;
	case GC_DTYPE_INT8: return NPY_INT8;
	case GC_DTYPE_INT16: return NPY_INT16;
	case GC_DTYPE_INT32: return NPY_INT32;
	case GC_DTYPE_INT64: return NPY_INT64;
	case GC_DTYPE_UINT8: return NPY_UINT8;
	case GC_DTYPE_UINT16: return NPY_UINT16;
	case GC_DTYPE_UINT32: return NPY_UINT32;
	case GC_DTYPE_UINT64: return NPY_UINT64;
	case GC_DTYPE_BOOL: return NPY_BOOL;
	case GC_DTYPE_COMPLEX64: return NPY_COMPLEX64;
	case GC_DTYPE_COMPLEX128: return NPY_COMPLEX128;
	default: return -1;
	}
}

/* graphcc's type of a NumPy dtype (by kind and size, native byte order);
 * GC_DTYPE_STRING for str, bytes and object arrays; UNDEFINED otherwise. */
gc_dtype gcpy_dtype_of(PyArray_Descr *d)
{
	if (d->kind == 'U' || d->kind == 'S' || d->kind == 'O')
		return GC_DTYPE_STRING;
	if (!PyArray_ISNBO(d->byteorder))
		return GC_DTYPE_UNDEFINED;
	int n = (int)d->elsize;
	switch (d->kind) {
	case 'f':
		return n == 4 ? GC_DTYPE_FLOAT : n == 8 ? GC_DTYPE_DOUBLE
				: n == 2		    ? GC_DTYPE_FLOAT16
							    : GC_DTYPE_UNDEFINED;
	case 'i':
		return n == 1 ? GC_DTYPE_INT8 : n == 2 ? GC_DTYPE_INT16
				: n == 4	       ? GC_DTYPE_INT32
				: n == 8	       ? GC_DTYPE_INT64
						       : GC_DTYPE_UNDEFINED;
	case 'u':
		return n == 1 ? GC_DTYPE_UINT8 : n == 2 ? GC_DTYPE_UINT16
				: n == 4		? GC_DTYPE_UINT32
				: n == 8		? GC_DTYPE_UINT64
							: GC_DTYPE_UNDEFINED;
	case 'b': return GC_DTYPE_BOOL;
	case 'c':
		return n == 8 ? GC_DTYPE_COMPLEX64 : n == 16 ? GC_DTYPE_COMPLEX128 : GC_DTYPE_UNDEFINED;
	default: return GC_DTYPE_UNDEFINED;
	}
}

/* --------------------------------------------------- NumPy <-> gc_tensor */

/* Memory that lives as long as a feed (a capsule in its keep list). */
static void capsule_free(PyObject *cap)
{
	PyMem_Free(PyCapsule_GetPointer(cap, NULL));
}

void *gcpy_keep_alloc(gcpy_feed *f, size_t bytes)
{
	void *p = PyMem_Calloc(1, bytes ? bytes : 1);
	if (!p) {
		PyErr_NoMemory();
		return NULL;
	}
	PyObject *cap = PyCapsule_New(p, NULL, capsule_free);
	if (!cap) {
		PyMem_Free(p);
		return NULL;
	}
	int rc = PyList_Append(f->keep, cap);
	Py_DECREF(cap);
	return rc ? NULL : p;
}

static int keep(gcpy_feed *f, PyObject *o)
{
	int rc = PyList_Append(f->keep, o);
	Py_DECREF(o);
	return rc;
}

static int set_shape(const char *what, PyArrayObject *a, gc_tensor *t)
{
	if (PyArray_NDIM(a) > GC_MAX_RANK) {
		gcpy_raisef(gcpy_InputError, "%s: rank %d is above graphcc's limit of %d", what,
			    PyArray_NDIM(a), GC_MAX_RANK);
		return -1;
	}
	t->rank = PyArray_NDIM(a);
	for (int d = 0; d < t->rank; d++)
		t->dims[d] = (int64_t)PyArray_DIM(a, d);
	return 0;
}

static const char *type_str(PyObject *o, char *buf, size_t len)
{
	PyObject *s = PyArray_Check(o) ? PyObject_Str((PyObject *)PyArray_DESCR((PyArrayObject *)o))
				       : PyObject_Str((PyObject *)Py_TYPE(o));
	const char *u = s ? PyUnicode_AsUTF8(s) : NULL;
	snprintf(buf, len, "%s", u ? u : "?");
	Py_XDECREF(s);
	PyErr_Clear();
	return buf;
}

static int string_tensor(PyObject *obj, const char *what, gcpy_feed *f, gc_tensor *t)
{
	PyArrayObject *a = (PyArrayObject *)PyArray_FROM_O(obj);
	if (!a)
		return -1;
	if (keep(f, (PyObject *)a))
		return -1;
	char k = PyArray_DESCR(a)->kind;
	if (k != 'U' && k != 'S' && k != 'O') {
		char b[64];
		gcpy_raisef(gcpy_InputError, "%s: expects strings (a str, bytes or object array), got %s",
			    what, type_str((PyObject *)a, b, sizeof b));
		return -1;
	}
	if (set_shape(what, a, t))
		return -1;
	t->dtype = GC_DTYPE_STRING;
	PyObject *flat = PyObject_CallMethod((PyObject *)a, "ravel", NULL);
	PyObject *items = flat ? PySequence_List(flat) : NULL;
	Py_XDECREF(flat);
	if (!items || keep(f, items))
		return -1;
	Py_ssize_t n = PyList_GET_SIZE(items);
	char **strs = gcpy_keep_alloc(f, (size_t)n * sizeof *strs);
	if (!strs)
		return -1;
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *it = PyList_GET_ITEM(items, i);
		const char *s = NULL;
		Py_ssize_t len = 0;
		if (PyUnicode_Check(it)) {
			s = PyUnicode_AsUTF8AndSize(it, &len);
		} else if (PyBytes_Check(it)) {
			s = PyBytes_AS_STRING(it);
			len = PyBytes_GET_SIZE(it);
		} else {
			char b[64];
			gcpy_raisef(gcpy_InputError, "%s: element %zd is %s, not str or bytes", what, i,
				    type_str(it, b, sizeof b));
			return -1;
		}
		if (!s)
			return -1;
		if ((Py_ssize_t)strlen(s) != len) {
			gcpy_raisef(gcpy_InputError, "%s: element %zd holds a NUL character", what, i);
			return -1;
		}
		strs[i] = (char *)s;
	}
	t->data = strs;
	return 0;
}

/* bfloat16 from float32, rounding to nearest even (NaN stays NaN). */
static uint16_t to_bf16(float x)
{
	uint32_t u;
	memcpy(&u, &x, 4);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fffu + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

static int tensor_of(PyObject *obj, gc_dtype want, const char *what, gcpy_feed *f, gc_tensor *t);

static int sequence_of(PyObject *obj, gc_dtype want, const char *what, gcpy_feed *f, gc_tensor *t)
{
	if (!PyList_Check(obj) && !PyTuple_Check(obj)) {
		char b[64];
		gcpy_raisef(gcpy_InputError, "%s: expects a %s (a list of arrays), got %s", what,
			    gc_dtype_name(want), type_str(obj, b, sizeof b));
		return -1;
	}
	Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
	gc_sequence *sq = gcpy_keep_alloc(f, sizeof *sq);
	gc_tensor *items = sq ? gcpy_keep_alloc(f, (size_t)n * sizeof *items) : NULL;
	if (!items)
		return -1;
	gc_dtype elem = (gc_dtype)(want & GC_DTYPE_ELEM_MASK);
	for (Py_ssize_t i = 0; i < n; i++) {
		char w[300];
		snprintf(w, sizeof w, "%s, item %zd", what, i);
		PyObject *it = PySequence_Fast_GET_ITEM(obj, i);
		if (elem == GC_DTYPE_UNDEFINED && PyArray_Check(it))
			elem = gcpy_dtype_of(PyArray_DESCR((PyArrayObject *)it));
		if (tensor_of(it, elem, w, f, &items[i]))
			return -1;
	}
	sq->elem_dtype = elem;
	sq->n = (int32_t)n;
	sq->items = items;
	*t = (gc_tensor){ .data = sq, .dtype = (gc_dtype)(GC_DTYPE_SEQUENCE | elem) };
	return 0;
}

/* obj as a value of type `want` (what names it in messages). Plain
 * tensors of the right type in C order are used in place (no copy); other
 * arrays are converted; a NumPy array of another type is refused. */
static int tensor_of(PyObject *obj, gc_dtype want, const char *what, gcpy_feed *f, gc_tensor *t)
{
	memset(t, 0, sizeof *t);
	if (gc_dtype_is_optional(want)) {
		gc_optional *o = gcpy_keep_alloc(f, sizeof *o);
		if (!o)
			return -1;
		gc_dtype inner = gc_dtype_inner(want);
		o->value.dtype = inner;
		if (obj != Py_None) {
			if (tensor_of(obj, inner, what, f, &o->value))
				return -1;
			o->has_value = 1;
		}
		*t = (gc_tensor){ .data = o, .dtype = want };
		return 0;
	}
	if (obj == Py_None) {
		gcpy_raisef(gcpy_InputError, "%s: None given, but it is a %s, not an optional", what,
			    gc_dtype_name(want));
		return -1;
	}
	if (gc_dtype_is_sequence(want))
		return sequence_of(obj, want, what, f, t);
	if (want == GC_DTYPE_STRING)
		return string_tensor(obj, what, f, t);
	int npy = want == GC_DTYPE_BFLOAT16 ? NPY_FLOAT32 : gcpy_npy_type(want);
	if (npy < 0) {
		gcpy_raisef(gcpy_InputError, "%s: type %s has no NumPy form", what,
			    gc_dtype_name(want));
		return -1;
	}
	PyArrayObject *a;
	if (PyArray_Check(obj)) {
		a = (PyArrayObject *)obj;
		gc_dtype have = gcpy_dtype_of(PyArray_DESCR(a));
		if (have != want && !(want == GC_DTYPE_BFLOAT16 && have == GC_DTYPE_FLOAT)) {
			char b[64];
			gcpy_raisef(gcpy_InputError, "%s: expects %s, got a %s array (convert it with "
				    ".astype(np.%s))",
				    what, gc_dtype_name(want), type_str(obj, b, sizeof b),
				    want == GC_DTYPE_BFLOAT16 ? "float32" : gc_dtype_name(want));
			return -1;
		}
		if (PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISALIGNED(a) && want != GC_DTYPE_BFLOAT16) {
			Py_INCREF(a);
		} else {
			a = (PyArrayObject *)PyArray_FROM_OTF(obj, npy, NPY_ARRAY_IN_ARRAY |
									NPY_ARRAY_ENSURECOPY);
			f->copies++;
		}
	} else {
		/* Python scalars and lists: converted when the kind allows it
		 * (ints to floats, floats to float32), never truncated. */
		PyArrayObject *nat = (PyArrayObject *)PyArray_FROM_O(obj);
		if (!nat)
			return -1;
		PyArray_Descr *d = PyArray_DescrFromType(npy);
		if (!PyArray_CanCastArrayTo(nat, d, NPY_SAME_KIND_CASTING)) {
			char b[64];
			gcpy_raisef(gcpy_InputError, "%s: expects %s, got %s", what, gc_dtype_name(want),
				    type_str((PyObject *)nat, b, sizeof b));
			Py_DECREF(d);
			Py_DECREF(nat);
			return -1;
		}
		a = (PyArrayObject *)PyArray_FromAny((PyObject *)nat, d, 0, 0, NPY_ARRAY_IN_ARRAY |
								NPY_ARRAY_FORCECAST, NULL);
		Py_DECREF(nat);
		f->copies++;
	}
	if (!a || keep(f, (PyObject *)a) || set_shape(what, a, t))
		return -1;
	t->dtype = want;
	t->data = PyArray_DATA(a);
	if (want == GC_DTYPE_BFLOAT16) {
		npy_intp n = PyArray_SIZE(a);
		uint16_t *h = gcpy_keep_alloc(f, (size_t)n * 2);
		if (!h)
			return -1;
		const float *x = PyArray_DATA(a);
		for (npy_intp i = 0; i < n; i++)
			h[i] = to_bf16(x[i]);
		t->data = h;
	}
	return 0;
}

int gcpy_tensor_of(PyObject *obj, gc_dtype want, const char *what, gcpy_feed *f, gc_tensor *t)
{
	return tensor_of(obj, want, what, f, t);
}

/* A new Python object holding a copy of value t: an array that owns its
 * memory, a list for a sequence, None for an empty optional. */
PyObject *gcpy_from_tensor(const gc_tensor *t)
{
	if (gc_dtype_is_optional(t->dtype)) {
		const gc_optional *o = t->data;
		if (!o || !o->has_value)
			Py_RETURN_NONE;
		return gcpy_from_tensor(&o->value);
	}
	if (gc_dtype_is_sequence(t->dtype)) {
		const gc_sequence *sq = t->data;
		PyObject *l = PyList_New(sq ? sq->n : 0);
		for (int32_t i = 0; l && sq && i < sq->n; i++) {
			PyObject *it = gcpy_from_tensor(&sq->items[i]);
			if (!it) {
				Py_DECREF(l);
				return NULL;
			}
			PyList_SET_ITEM(l, i, it);
		}
		return l;
	}
	npy_intp dims[GC_MAX_RANK];
	for (int d = 0; d < t->rank; d++)
		dims[d] = (npy_intp)t->dims[d];
	int64_t n = gc_tensor_numel(t);
	if (t->dtype == GC_DTYPE_STRING) {
		PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(t->rank, dims, NPY_OBJECT);
		if (!a)
			return NULL;
		PyObject **slot = PyArray_DATA(a);
		char *const *s = t->data;
		for (int64_t i = 0; i < n; i++) {
			const char *v = s && s[i] ? s[i] : "";
			PyObject *u = PyUnicode_DecodeUTF8(v, (Py_ssize_t)strlen(v), NULL);
			if (!u) {
				PyErr_Clear();
				u = PyBytes_FromString(v);
			}
			if (!u) {
				Py_DECREF(a);
				return NULL;
			}
			Py_XSETREF(slot[i], u);
		}
		return (PyObject *)a;
	}
	if (t->dtype == GC_DTYPE_BFLOAT16) {
		PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(t->rank, dims, NPY_FLOAT32);
		if (!a)
			return NULL;
		const uint16_t *h = t->data;
		float *x = PyArray_DATA(a);
		for (int64_t i = 0; i < n; i++) {
			uint32_t u = (uint32_t)h[i] << 16;
			memcpy(&x[i], &u, 4);
		}
		return (PyObject *)a;
	}
	int npy = gcpy_npy_type(t->dtype);
	if (npy < 0)
		return gcpy_raisef(gcpy_Error, "a %s value has no NumPy form", gc_dtype_name(t->dtype));
	PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(t->rank, dims, npy);
	if (a && n > 0)
		memcpy(PyArray_DATA(a), t->data, (size_t)gc_tensor_nbytes(t));
	return (PyObject *)a;
}

/* (name, type, dims, dim names) of a declared value; dims < 0: unknown. */
static PyObject *value_info(const char *name, const gc_tensor *t, const gc_graph *g)
{
	if (t->rank < 0 && !gc_dtype_is_value(t->dtype)) /* rank unknown */
		return Py_BuildValue("(ssOO)", name, gc_dtype_name(t->dtype), Py_None, Py_None);
	Py_ssize_t rank = gc_dtype_is_value(t->dtype) ? 0 : t->rank;
	PyObject *dims = PyTuple_New(rank);
	PyObject *names = PyTuple_New(rank);
	for (Py_ssize_t d = 0; dims && names && d < PyTuple_GET_SIZE(dims); d++) {
		PyTuple_SET_ITEM(dims, d, PyLong_FromLongLong(t->dims[d]));
		const char *dn = g ? gc_graph_dim_name(g, name, (int)d) : NULL;
		PyObject *o = dn ? PyUnicode_FromString(dn) : Py_NewRef(Py_None);
		PyTuple_SET_ITEM(names, d, o);
	}
	if (!dims || !names) {
		Py_XDECREF(dims);
		Py_XDECREF(names);
		return NULL;
	}
	return Py_BuildValue("(ssNN)", name, gc_dtype_name(t->dtype), dims, names);
}

/* ------------------------------------------------------------------- Graph */

typedef struct {
	PyObject_HEAD
	gc_graph *g;
} Graph;

static void graph_dealloc(Graph *self)
{
	gc_graph_free(self->g);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Graph(path) or Graph(bytes, origin): an ONNX model. */
static int graph_init(Graph *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "model", "origin", NULL };
	PyObject *model;
	const char *origin = NULL;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|z", kwlist, &model, &origin))
		return -1;
	gc_error err = { 0 };
	gc_graph *g = NULL;
	int rc;
	if (PyBytes_Check(model) || PyByteArray_Check(model) || PyMemoryView_Check(model)) {
		Py_buffer view;
		if (PyObject_GetBuffer(model, &view, PyBUF_SIMPLE))
			return -1;
		Py_BEGIN_ALLOW_THREADS
		rc = gc_onnx_load_mem(view.buf, (size_t)view.len, origin ? origin : "(model bytes)",
				      &g, &err);
		Py_END_ALLOW_THREADS
		PyBuffer_Release(&view);
	} else {
		PyObject *path;
		if (!PyUnicode_FSConverter(model, &path))
			return -1;
		Py_BEGIN_ALLOW_THREADS
		rc = gc_onnx_load(PyBytes_AS_STRING(path), &g, &err);
		Py_END_ALLOW_THREADS
		Py_DECREF(path);
	}
	if (rc) {
		gcpy_raise(gcpy_ModelError, &err);
		return -1;
	}
	gc_graph_free(self->g);
	self->g = g;
	return 0;
}

/* io(is_output) -> [(name, type, dims, dim_names, has_default)] */
static PyObject *graph_io(Graph *self, PyObject *args)
{
	int out;
	if (!PyArg_ParseTuple(args, "p", &out))
		return NULL;
	int n = out ? gc_graph_num_outputs(self->g) : gc_graph_num_inputs(self->g);
	PyObject *l = PyList_New(n);
	for (int i = 0; l && i < n; i++) {
		const char *name = out ? gc_graph_output_name(self->g, i)
				       : gc_graph_input_name(self->g, i);
		gc_tensor t;
		gc_graph_tensor_info(self->g, name, &t);
		PyObject *vi = value_info(name, &t, self->g);
		PyObject *e = vi ? Py_BuildValue("(OO)", vi,
						 !out && gc_graph_input_has_default(self->g, i)
							 ? Py_True
							 : Py_False)
				 : NULL;
		Py_XDECREF(vi);
		if (!e) {
			Py_DECREF(l);
			return NULL;
		}
		PyList_SET_ITEM(l, i, e);
	}
	return l;
}

static int parse_shapes(PyObject *shapes, gc_shape_override **out, int32_t *n)
{
	*out = NULL;
	*n = 0;
	if (!shapes || shapes == Py_None)
		return 0;
	PyObject *items = PySequence_Fast(shapes, "shapes must be a list of (name, dims)");
	if (!items)
		return -1;
	Py_ssize_t m = PySequence_Fast_GET_SIZE(items);
	gc_shape_override *so = PyMem_Calloc((size_t)m + 1, sizeof *so);
	if (!so) {
		Py_DECREF(items);
		PyErr_NoMemory();
		return -1;
	}
	for (Py_ssize_t i = 0; i < m; i++) {
		PyObject *name, *dims;
		if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(items, i), "UO", &name, &dims))
			goto fail;
		so[i].name = PyUnicode_AsUTF8(name); /* lives as long as the caller's list */
		PyObject *d = PySequence_Fast(dims, "shape dims must be a sequence of ints");
		if (!so[i].name || !d)
			goto fail;
		Py_ssize_t r = PySequence_Fast_GET_SIZE(d);
		if (r > GC_MAX_RANK) {
			Py_DECREF(d);
			gcpy_raisef(gcpy_InputError, "shape of '%s': rank %zd is above %d", so[i].name,
				    r, GC_MAX_RANK);
			goto fail;
		}
		so[i].rank = (int32_t)r;
		for (Py_ssize_t k = 0; k < r; k++) {
			so[i].dims[k] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(d, k));
			if (so[i].dims[k] == -1 && PyErr_Occurred()) {
				Py_DECREF(d);
				goto fail;
			}
		}
		Py_DECREF(d);
	}
	Py_DECREF(items);
	*out = so;
	*n = (int32_t)m;
	return 0;
fail:
	Py_DECREF(items);
	PyMem_Free(so);
	return -1;
}

static PyObject *program_new(gc_program *p, PyObject *registry);

/* compile(registry=None, shapes=None, flavour=None, eager=False) -> Program.
 * Errors are ModelErrors (InputErrors for an eager call: the arrays and
 * params given are what verify and shape inference refused). */
static PyObject *graph_compile(Graph *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "registry", "shapes", "flavour", "eager", NULL };
	PyObject *reg = Py_None, *shapes = Py_None;
	const char *flavour = NULL;
	int eager = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOzp", kwlist, &reg, &shapes, &flavour,
					 &eager))
		return NULL;
	if (reg != Py_None && !PyObject_TypeCheck(reg, &gcpy_RegistryType))
		return PyErr_Format(PyExc_TypeError, "registry must be a Registry or None");
	gc_compile_options co = { 0 };
	if (parse_shapes(shapes, (gc_shape_override **)&co.shapes, &co.n_shapes))
		return NULL;
	co.registry = reg == Py_None ? NULL : ((gcpy_Registry *)reg)->r;
	co.flavour = flavour;
	if (eager) {
		co.no_fold = 1;
		co.no_optimize = 1;
	}
	gc_error err = { 0 };
	gc_program *p = NULL;
	int rc;
	Py_BEGIN_ALLOW_THREADS
	rc = gc_compile(self->g, &co, &p, &err);
	Py_END_ALLOW_THREADS
	PyMem_Free((void *)co.shapes);
	if (rc)
		return gcpy_raise(eager ? gcpy_InputError : gcpy_ModelError, &err);
	return program_new(p, reg);
}

static PyMethodDef graph_methods[] = {
	{ "io", (PyCFunction)graph_io, METH_VARARGS,
	  "io(is_output) -> [((name, type, dims, dim_names), has_default)]" },
	{ "compile", (PyCFunction)(void (*)(void))graph_compile, METH_VARARGS | METH_KEYWORDS,
	  "compile(registry=None, shapes=None, flavour=None, eager=False) -> Program" },
	{ NULL, NULL, 0, NULL },
};

static PyTypeObject GraphType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "graphcc._graphcc.Graph",
	.tp_basicsize = sizeof(Graph),
	.tp_dealloc = (destructor)graph_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "An ONNX model or a one-node graph (gc_graph).",
	.tp_methods = graph_methods,
	.tp_init = (initproc)graph_init,
	.tp_new = PyType_GenericNew,
};

/* Converts one attribute (name, kind, value): kind is "int", "float",
 * "string", "ints", "floats" or "strings". Memory lives in f. */
static int attr_of(PyObject *spec, gcpy_feed *f, gc_attr *a)
{
	const char *name, *kind;
	PyObject *v;
	if (!PyArg_ParseTuple(spec, "ssO", &name, &kind, &v))
		return -1;
	a->name = name;
	if (!strcmp(kind, "int")) {
		a->type = GC_ATTR_INT;
		a->v.i = PyLong_AsLongLong(v);
		return a->v.i == -1 && PyErr_Occurred() ? -1 : 0;
	}
	if (!strcmp(kind, "float")) {
		a->type = GC_ATTR_FLOAT;
		a->v.f = (float)PyFloat_AsDouble(v);
		return PyErr_Occurred() ? -1 : 0;
	}
	if (!strcmp(kind, "string")) {
		Py_ssize_t len;
		a->type = GC_ATTR_STRING;
		a->v.s = PyUnicode_AsUTF8AndSize(v, &len);
		a->n = len;
		return a->v.s ? 0 : -1;
	}
	PyObject *seq = PySequence_Fast(v, "a vector param takes a sequence");
	if (!seq || keep(f, seq))
		return -1;
	Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
	a->n = n;
	if (!strcmp(kind, "ints")) {
		int64_t *x = gcpy_keep_alloc(f, (size_t)n * 8);
		for (Py_ssize_t i = 0; x && i < n; i++)
			if ((x[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i))) == -1 &&
			    PyErr_Occurred())
				return -1;
		a->type = GC_ATTR_INTS;
		a->v.ints = x;
		return x ? 0 : -1;
	}
	if (!strcmp(kind, "floats")) {
		float *x = gcpy_keep_alloc(f, (size_t)n * 4);
		for (Py_ssize_t i = 0; x && i < n; i++) {
			x[i] = (float)PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
			if (PyErr_Occurred())
				return -1;
		}
		a->type = GC_ATTR_FLOATS;
		a->v.floats = x;
		return x ? 0 : -1;
	}
	if (!strcmp(kind, "strings")) {
		const char **x = gcpy_keep_alloc(f, (size_t)n * sizeof *x);
		for (Py_ssize_t i = 0; x && i < n; i++)
			if (!(x[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i))))
				return -1;
		a->type = GC_ATTR_STRINGS;
		a->v.strings = x;
		return x ? 0 : -1;
	}
	PyErr_Format(PyExc_ValueError, "unknown attribute kind '%s'", kind);
	return -1;
}

/*
 * op_graph(domain, type, version, inputs, outputs, attrs, origin) -> Graph:
 * one custom node. inputs: [(name, array or None, constant)] (None: an
 * absent optional input; constant: the array becomes an initializer, as the
 * manifest's `constant: true` requires); outputs: [names]; attrs:
 * [(name, kind, value)].
 */
static PyObject *op_graph(PyObject *mod, PyObject *args)
{
	(void)mod;
	const char *domain, *type, *origin;
	long long version;
	PyObject *ins, *outs, *attrs;
	if (!PyArg_ParseTuple(args, "ssLOOOs", &domain, &type, &version, &ins, &outs, &attrs,
			      &origin))
		return NULL;
	gcpy_feed f = { .keep = PyList_New(0) };
	Graph *G = NULL;
	if (!f.keep)
		return NULL;
	PyObject *in_f = PySequence_Fast(ins, "inputs"), *out_f = PySequence_Fast(outs, "outputs"),
		 *at_f = PySequence_Fast(attrs, "attrs");
	if (!in_f || !out_f || !at_f)
		goto out;
	Py_ssize_t n_in = PySequence_Fast_GET_SIZE(in_f), n_out = PySequence_Fast_GET_SIZE(out_f),
		   n_at = PySequence_Fast_GET_SIZE(at_f);
	const char **in_names = gcpy_keep_alloc(&f, ((size_t)n_in + 1) * sizeof(char *));
	const char **out_names = gcpy_keep_alloc(&f, ((size_t)n_out + 1) * sizeof(char *));
	gc_attr *at = gcpy_keep_alloc(&f, ((size_t)n_at + 1) * sizeof *at);
	if (!in_names || !out_names || !at)
		goto out;
	G = PyObject_New(Graph, &GraphType);
	if (!G)
		goto out;
	G->g = gc_graph_new(origin);
	gc_error err = { 0 };
	if (!G->g) {
		PyErr_NoMemory();
		goto fail;
	}
	if (gc_graph_set_opset(G->g, "", 17, &err) ||
	    gc_graph_set_opset(G->g, domain, version >= 0 ? version : 1, &err))
		goto gcfail;
	for (Py_ssize_t i = 0; i < n_in; i++) {
		const char *name;
		PyObject *arr;
		int constant;
		if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(in_f, i), "sOp", &name, &arr,
				      &constant))
			goto fail;
		if (arr == Py_None) {
			in_names[i] = "";
			continue;
		}
		in_names[i] = name;
		PyArrayObject *a = (PyArrayObject *)arr;
		gc_tensor t;
		gc_dtype dt = gcpy_dtype_of(PyArray_DESCR(a));
		char what[300];
		snprintf(what, sizeof what, "input '%s'", name);
		if (dt == GC_DTYPE_UNDEFINED) {
			char b[64];
			gcpy_raisef(gcpy_InputError, "%s: graphcc has no type for a %s array", what,
				    type_str(arr, b, sizeof b));
			goto fail;
		}
		if (tensor_of(arr, dt, what, &f, &t))
			goto fail;
		if (constant ? gc_graph_add_constant(G->g, name, &t, &err)
			     : gc_graph_add_input(G->g, name, t.dtype, t.rank, t.dims, NULL, &err))
			goto gcfail;
	}
	for (Py_ssize_t i = 0; i < n_out; i++)
		if (!(out_names[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(out_f, i))))
			goto fail;
	for (Py_ssize_t i = 0; i < n_at; i++)
		if (attr_of(PySequence_Fast_GET_ITEM(at_f, i), &f, &at[i]))
			goto fail;
	if (gc_graph_add_node(G->g, type, domain, type, (int32_t)n_in, in_names, (int32_t)n_out,
			      out_names, (int32_t)n_at, at, &err))
		goto gcfail;
	for (Py_ssize_t i = 0; i < n_out; i++)
		if (gc_graph_add_output(G->g, out_names[i], &err))
			goto gcfail;
	goto out;
gcfail:
	gcpy_raise(gcpy_InputError, &err);
fail:
	Py_CLEAR(G);
out:
	Py_XDECREF(in_f);
	Py_XDECREF(out_f);
	Py_XDECREF(at_f);
	Py_DECREF(f.keep);
	return (PyObject *)G;
}

/* ----------------------------------------------------------------- Program */

static void program_dealloc(gcpy_Program *self)
{
	gc_program_free(self->p);
	Py_XDECREF(self->registry);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *program_new(gc_program *p, PyObject *registry)
{
	gcpy_Program *P = PyObject_New(gcpy_Program, &gcpy_ProgramType);
	if (!P) {
		gc_program_free(p);
		return NULL;
	}
	P->p = p;
	P->registry = Py_NewRef(registry ? registry : Py_None);
	return (PyObject *)P;
}

static void load_warning(void *user, const char *msg)
{
	(void)user;
	PyGILState_STATE st = PyGILState_Ensure();
	if (PyErr_WarnFormat(PyExc_RuntimeWarning, 1, "%s", msg))
		PyErr_Clear();
	PyGILState_Release(st);
}

/* load_program(path, allow_changed_kernels=False) -> Program (.gcb). */
static PyObject *load_program(PyObject *mod, PyObject *args, PyObject *kw)
{
	(void)mod;
	static char *kwlist[] = { "path", "allow_changed_kernels", NULL };
	PyObject *path;
	int allow = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|p", kwlist, PyUnicode_FSConverter, &path,
					 &allow))
		return NULL;
	gc_load_options lo = { .allow_changed_kernels = allow, .warn = load_warning };
	gc_error err = { 0 };
	gc_program *p = NULL;
	int rc;
	Py_BEGIN_ALLOW_THREADS
	rc = gc_program_load(PyBytes_AS_STRING(path), &lo, &p, &err);
	Py_END_ALLOW_THREADS
	Py_DECREF(path);
	if (rc)
		return gcpy_raise(err.code == GC_ECHANGED ? gcpy_PackageError : gcpy_ModelError, &err);
	return program_new(p, NULL);
}

static PyObject *is_program_file(PyObject *mod, PyObject *args)
{
	(void)mod;
	PyObject *path;
	if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path))
		return NULL;
	int r = gc_is_program_file(PyBytes_AS_STRING(path));
	Py_DECREF(path);
	return PyBool_FromLong(r);
}

static PyObject *program_io(gcpy_Program *self, PyObject *args)
{
	int out;
	if (!PyArg_ParseTuple(args, "p", &out))
		return NULL;
	int n = out ? gc_program_num_outputs(self->p) : gc_program_num_inputs(self->p);
	PyObject *l = PyList_New(n);
	for (int i = 0; l && i < n; i++) {
		const char *name;
		const gc_tensor *t = out ? gc_program_output(self->p, i, &name)
					 : gc_program_input(self->p, i, &name);
		PyObject *e = value_info(name, t, NULL);
		if (!e) {
			Py_DECREF(l);
			return NULL;
		}
		PyList_SET_ITEM(l, i, e);
	}
	return l;
}

static PyObject *program_save(gcpy_Program *self, PyObject *args)
{
	PyObject *path;
	if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path))
		return NULL;
	gc_error err = { 0 };
	int rc;
	Py_BEGIN_ALLOW_THREADS
	rc = gc_program_save(self->p, PyBytes_AS_STRING(path), &err);
	Py_END_ALLOW_THREADS
	Py_DECREF(path);
	if (rc)
		return gcpy_raise(gcpy_ModelError, &err);
	Py_RETURN_NONE;
}

static PyMethodDef program_methods[] = {
	{ "io", (PyCFunction)program_io, METH_VARARGS, "io(is_output) -> [(name, type, dims, names)]" },
	{ "save", (PyCFunction)program_save, METH_VARARGS, "save(path): write a .gcb file" },
	{ "origin", (PyCFunction)gcpy_program_origin, METH_NOARGS, "what a .gcb records (its pins)" },
	{ "nodes", (PyCFunction)gcpy_program_nodes, METH_NOARGS, "the program's nodes and bindings" },
	{ "states", (PyCFunction)gcpy_program_states, METH_NOARGS,
	  "states() -> [(input, output)]: the session state (training programs)" },
	{ NULL, NULL, 0, NULL },
};

PyTypeObject gcpy_ProgramType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "graphcc._graphcc.Program",
	.tp_basicsize = sizeof(gcpy_Program),
	.tp_dealloc = (destructor)program_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A compiled program (gc_program).",
	.tp_methods = program_methods,
};

/* ------------------------------------------------------------------ Runner */

typedef struct {
	PyObject_HEAD
	gc_session *s;
	gcpy_Program *prog;
	PyThread_type_lock lock;
	int n_in;
	int copies; /* inputs the last run had to copy or convert */
} Runner;

static void runner_dealloc(Runner *self)
{
	gc_session_free(self->s);
	if (self->lock)
		PyThread_free_lock(self->lock);
	Py_XDECREF(self->prog);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* What the library says beyond errors (the debug instruments' notes and
 * profile table, warnings), on stderr as the graphcc command shows it. */
static void session_log(void *user, gc_log_level level, const char *msg)
{
	(void)user;
	if (level <= GC_LOG_INFO)
		fprintf(stderr, "graphcc: %s%s\n", level == GC_LOG_INFO ? "" : "warning: ", msg);
}

/* Runner(program, threads=0, no_arena=False) */
static int runner_init(Runner *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "program", "threads", "no_arena", NULL };
	PyObject *prog;
	int threads = 0, no_arena = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|ip", kwlist, &gcpy_ProgramType, &prog,
					 &threads, &no_arena))
		return -1;
	if (threads < 0) {
		PyErr_SetString(PyExc_ValueError, "threads must be >= 0 (0: all cores)");
		return -1;
	}
	if (self->s) {
		PyErr_SetString(PyExc_RuntimeError, "Runner initialised twice");
		return -1;
	}
	self->lock = PyThread_allocate_lock();
	if (!self->lock) {
		PyErr_NoMemory();
		return -1;
	}
	gc_session_options so = { .threads = threads, .log = session_log, .no_arena = no_arena };
	gc_error err = { 0 };
	gcpy_Program *P = (gcpy_Program *)prog;
	int rc;
	Py_BEGIN_ALLOW_THREADS
	rc = gc_session_new(P->p, &so, &self->s, &err);
	Py_END_ALLOW_THREADS
	if (rc) {
		gcpy_raise(gcpy_ModelError, &err);
		return -1;
	}
	self->prog = (gcpy_Program *)Py_NewRef(prog);
	self->n_in = gc_program_num_inputs(P->p);
	return 0;
}

static int closed(Runner *self)
{
	if (self->s)
		return 0;
	gcpy_raisef(gcpy_Error, "the session is closed");
	return 1;
}

/* A thread that runs kernels gets an alternate signal stack, so that the
 * crash report also works for a kernel that overflows its stack there. */
static pthread_key_t altstack_key;
static void altstack_free(void *p)
{
	stack_t off = { .ss_flags = SS_DISABLE };
	sigaltstack(&off, NULL);
	free(p);
}
static void ensure_altstack(void)
{
	static _Thread_local int done;
	if (done)
		return;
	done = 1;
	stack_t cur;
	if (sigaltstack(NULL, &cur) || !(cur.ss_flags & SS_DISABLE))
		return; /* one is set already (the main thread's, a sanitizer's) */
	size_t size = 64 * 1024;
	void *mem = malloc(size);
	stack_t ss = { .ss_sp = mem, .ss_size = size };
	if (mem && !sigaltstack(&ss, NULL))
		pthread_setspecific(altstack_key, mem);
	else
		free(mem);
}

/* Parses the debugging instruments from a dict: trace (True: stderr, or a
 * path), dump_dir, dump_weights, check_nan, guard, check_tensors, profile,
 * break_before, timeout. Opened
 * trace files go to *trace_file (closed by the caller). Returns 1 when any
 * instrument is on, 0 when none, -1 on error. */
static int debug_options(PyObject *d, gc_debug_options *o, FILE **trace_file)
{
	memset(o, 0, sizeof *o);
	*trace_file = NULL;
	if (!d || d == Py_None)
		return 0;
	if (!PyDict_Check(d)) {
		PyErr_SetString(PyExc_TypeError, "debug options must be a dict");
		return -1;
	}
	PyObject *k, *v;
	Py_ssize_t pos = 0;
	int any = 0;
	while (PyDict_Next(d, &pos, &k, &v)) {
		const char *key = PyUnicode_AsUTF8(k);
		if (!key)
			return -1;
		if (v == Py_None || v == Py_False)
			continue;
		if (!strcmp(key, "trace")) {
			if (v == Py_True) {
				o->trace = stderr;
			} else {
				const char *path = PyUnicode_AsUTF8(v);
				if (!path)
					return -1;
				if (!(*trace_file = fopen(path, "w"))) {
					PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
					return -1;
				}
				o->trace = *trace_file;
			}
		} else if (!strcmp(key, "check_nan")) {
			o->check_nan = PyObject_IsTrue(v);
		} else if (!strcmp(key, "guard")) {
			o->guard = PyObject_IsTrue(v);
		} else if (!strcmp(key, "check_tensors") || !strcmp(key, "dump_weights")) {
			*(key[0] == 'c' ? &o->check_tensors : &o->dump_weights) = PyObject_IsTrue(v);
		} else if (!strcmp(key, "dump_dir") || !strcmp(key, "profile") ||
			   !strcmp(key, "break_before")) {
			const char *s = PyUnicode_AsUTF8(v);
			if (!s)
				return -1;
			if (key[0] == 'd')
				o->dump_dir = s;
			else if (key[0] == 'p')
				o->profile_path = s;
			else
				o->break_before = s;
		} else if (!strcmp(key, "timeout")) {
			o->timeout_seconds = PyFloat_AsDouble(v);
			if (PyErr_Occurred())
				return -1;
		} else {
			PyErr_Format(PyExc_TypeError,
				     "unknown debugging option '%s' (trace, dump_dir, dump_weights, "
				     "check_nan, guard, check_tensors, profile, break_before, timeout)",
				     key);
			return -1;
		}
		any = 1;
	}
	return any;
}

/* The names of a program's inputs, for messages. */
static void input_names(const gc_program *p, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	for (int k = 0; k < gc_program_num_inputs(p) && at < len; k++) {
		const char *n;
		gc_program_input(p, k, &n);
		at += (size_t)snprintf(buf + at, len - at, "%s'%s'", k ? ", " : "", n);
	}
}

static PyObject *summary_dict(const gc_flavours_summary *s, const char *report)
{
	return Py_BuildValue("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:d,s:d,s:d,s:s,s:s,s:s,s:s}",
			     "custom_nodes", s->n_custom, "compared", s->n_compared, "failed",
			     s->n_failed, "declined", s->n_declined, "disagree", s->n_disagree,
			     "invalid", s->n_invalid, "overrun", s->n_overrun, "tolerance",
			     s->tolerance, "max_abs", s->max_abs, "max_rel", s->max_rel, "node",
			     s->node, "flavour_a", s->flavour_a, "flavour_b", s->flavour_b, "report",
			     report ? report : "");
}

/*
 * run(feeds, outputs=None, debug=None, compare=False, registry=None)
 *   -> list of values (or (list, comparison dict) when compare).
 * feeds: dict name -> value; outputs: list of output indices (None: all).
 */
static PyObject *runner_run(Runner *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "feeds", "outputs", "debug", "compare", "registry", NULL };
	PyObject *feeds, *outs = Py_None, *debug = Py_None, *regobj = Py_None;
	int compare = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOpO", kwlist, &feeds, &outs, &debug,
					 &compare, &regobj))
		return NULL;
	if (closed(self))
		return NULL;
	if (!PyDict_Check(feeds))
		return PyErr_Format(PyExc_TypeError, "feeds must be a dict of input name -> array");
	const gc_program *p = self->prog->p;
	gcpy_feed f = { .keep = PyList_New(0) };
	if (!f.keep)
		return NULL;
	PyObject *result = NULL, *cmp = NULL;
	FILE *trace_file = NULL;
	gc_tensor tensors[64], *ts = tensors;
	if (self->n_in > 64 && !(ts = gcpy_keep_alloc(&f, (size_t)self->n_in * sizeof *ts)))
		goto out;
	/* Every input, by name (session state may be left out: the session
	 * keeps it from run to run); then nothing unknown. */
	Py_ssize_t used = 0;
	char *kept = gcpy_keep_alloc(&f, (size_t)self->n_in + 1);
	if (!kept)
		goto out;
	for (int i = 0; i < self->n_in; i++) {
		const char *name;
		const gc_tensor *decl = gc_program_input(p, i, &name);
		PyObject *v = PyDict_GetItemString(feeds, name);
		kept[i] = !v && gc_program_input_state(p, i) >= 0;
		if (kept[i])
			continue;
		if (!v) {
			char shp[160], names[600];
			input_names(p, names, sizeof names);
			gcpy_raisef(gcpy_InputError,
				    "no value given for input '%s' (%s, shape %s); the model's "
				    "inputs: %s",
				    name, gc_dtype_name(decl->dtype),
				    gc_shape_str(decl->dims, decl->rank, shp, sizeof shp), names);
			goto out;
		}
		used++;
		char what[300];
		snprintf(what, sizeof what, "input '%s'", name);
		if (tensor_of(v, decl->dtype, what, &f, &ts[i]))
			goto out;
	}
	if (used != PyDict_GET_SIZE(feeds)) {
		PyObject *k, *v;
		Py_ssize_t pos = 0;
		while (PyDict_Next(feeds, &pos, &k, &v)) {
			const char *key = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
			if (!key || gc_program_find_input(p, key) < 0) {
				char names[600];
				input_names(p, names, sizeof names);
				PyObject *r = PyObject_Repr(k);
				gcpy_raisef(gcpy_InputError, "the model has no input named %s (its inputs: %s)",
					    r ? PyUnicode_AsUTF8(r) : "?", names);
				Py_XDECREF(r);
				goto out;
			}
		}
	}
	int n_out = gc_program_num_outputs(p);
	int *which = gcpy_keep_alloc(&f, (size_t)(n_out + 1) * sizeof *which);
	Py_ssize_t n_want = n_out;
	if (!which)
		goto out;
	if (outs == Py_None) {
		for (int i = 0; i < n_out; i++)
			which[i] = i;
	} else {
		PyObject *l = PySequence_Fast(outs, "outputs must be a list of indices");
		if (!l || keep(&f, l))
			goto out;
		n_want = PySequence_Fast_GET_SIZE(l);
		which = gcpy_keep_alloc(&f, (size_t)(n_want + 1) * sizeof *which);
		for (Py_ssize_t i = 0; which && i < n_want; i++) {
			long k = PyLong_AsLong(PySequence_Fast_GET_ITEM(l, i));
			if (k == -1 && PyErr_Occurred())
				goto out;
			if (k < 0 || k >= n_out) {
				PyErr_Format(PyExc_IndexError, "output index %ld out of range", k);
				goto out;
			}
			which[i] = (int)k;
		}
		if (!which)
			goto out;
	}
	gc_debug_options dopt;
	int dbg = debug_options(debug, &dopt, &trace_file);
	if (dbg < 0)
		goto out;
	const gc_registry *reg = regobj != Py_None && PyObject_TypeCheck(regobj, &gcpy_RegistryType)
					 ? ((gcpy_Registry *)regobj)->r
					 : NULL;
	/* One thread in this session at a time; the others wait without
	 * holding the GIL. */
	if (!PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) {
		Py_BEGIN_ALLOW_THREADS
		PyThread_acquire_lock(self->lock, WAIT_LOCK);
		Py_END_ALLOW_THREADS
	}
	if (!self->s) { /* closed while this thread waited */
		PyThread_release_lock(self->lock);
		closed(self);
		goto out;
	}
	gc_error err = { 0 };
	int rc = 0, phase = 0;
	gc_flavours_summary sum;
	char *report = NULL;
	size_t report_len = 0;
	Py_BEGIN_ALLOW_THREADS
	ensure_altstack();
	for (int i = 0; i < self->n_in && !rc; i++)
		rc = kept[i] ? 0 : gc_session_use_input(self->s, i, &ts[i], &err);
	if (!rc) {
		phase = 1;
		rc = dbg ? gc_session_run_debug(self->s, &dopt, &err) : gc_session_run(self->s, &err);
	}
	if (!rc && compare) {
		phase = 2;
		FILE *mem = open_memstream(&report, &report_len);
		memset(&sum, 0, sizeof sum);
		rc = gc_flavours_compare(reg, self->s, mem, 0.0, &sum, &err);
		/* Flavours that disagree are what the comparison reports (in the
		 * dict); only a flavour writing outside its outputs is an error. */
		if (rc == GC_ECRASH && sum.n_overrun == 0)
			rc = 0;
		if (mem)
			fclose(mem);
	}
	Py_END_ALLOW_THREADS
	self->copies = f.copies;
	if (rc) {
		PyThread_release_lock(self->lock);
		free(report);
		if (phase == 0)
			gcpy_raise(gcpy_InputError, &err);
		else
			raise_run(&err);
		goto out;
	}
	result = PyList_New(n_want);
	for (Py_ssize_t i = 0; result && i < n_want; i++) {
		PyObject *o = gcpy_from_tensor(gc_session_output(self->s, which[i]));
		if (!o)
			Py_CLEAR(result);
		else
			PyList_SET_ITEM(result, i, o);
	}
	PyThread_release_lock(self->lock);
	if (result && compare) {
		cmp = summary_dict(&sum, report);
		PyObject *pair = cmp ? PyTuple_Pack(2, result, cmp) : NULL;
		Py_DECREF(result);
		result = pair;
	}
	free(report);
out:
	if (trace_file)
		fclose(trace_file);
	Py_XDECREF(cmp);
	Py_DECREF(f.keep);
	return result;
}

static PyObject *runner_close(Runner *self, PyObject *unused)
{
	(void)unused;
	if (self->s) {
		Py_BEGIN_ALLOW_THREADS
		PyThread_acquire_lock(self->lock, WAIT_LOCK);
		Py_END_ALLOW_THREADS
		gc_session_free(self->s);
		self->s = NULL;
		PyThread_release_lock(self->lock);
	}
	Py_RETURN_NONE;
}

static PyObject *runner_copies(Runner *self, void *closure)
{
	(void)closure;
	return PyLong_FromLong(self->copies);
}

static PyObject *runner_closed(Runner *self, void *closure)
{
	(void)closure;
	return PyBool_FromLong(self->s == NULL);
}

static PyObject *runner_program(Runner *self, void *closure)
{
	(void)closure;
	return Py_NewRef(self->prog ? (PyObject *)self->prog : Py_None);
}

static PyMethodDef runner_methods[] = {
	{ "run", (PyCFunction)(void (*)(void))runner_run, METH_VARARGS | METH_KEYWORDS,
	  "run(feeds, outputs=None, debug=None, compare=False, registry=None) -> list" },
	{ "close", (PyCFunction)runner_close, METH_NOARGS, "free the session" },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef runner_getset[] = {
	{ "copies", (getter)runner_copies, NULL, "inputs the last run copied or converted", NULL },
	{ "closed", (getter)runner_closed, NULL, "whether close() was called", NULL },
	{ "program", (getter)runner_program, NULL, "the Program it runs", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyTypeObject RunnerType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "graphcc._graphcc.Runner",
	.tp_basicsize = sizeof(Runner),
	.tp_dealloc = (destructor)runner_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "A session of a program (gc_session).",
	.tp_methods = runner_methods,
	.tp_getset = runner_getset,
	.tp_init = (initproc)runner_init,
	.tp_new = PyType_GenericNew,
};

/* ------------------------------------------------------------------ module */

static PyObject *dtype_size(PyObject *mod, PyObject *args)
{
	(void)mod;
	const char *name;
	if (!PyArg_ParseTuple(args, "s", &name))
		return NULL;
	return PyLong_FromSize_t(gc_dtype_size(gc_dtype_from_name(name)));
}

static PyMethodDef module_methods[] = {
	{ "_set_errors", set_errors, METH_VARARGS,
	  "_set_errors(Error, ModelError, PackageError, InputError, KernelError)" },
	{ "op_graph", op_graph, METH_VARARGS,
	  "op_graph(domain, type, version, inputs, outputs, attrs, origin) -> Graph" },
	{ "load_program", (PyCFunction)(void (*)(void))load_program, METH_VARARGS | METH_KEYWORDS,
	  "load_program(path, allow_changed_kernels=False) -> Program" },
	{ "is_program_file", is_program_file, METH_VARARGS, "whether a file is a .gcb program" },
	{ "dtype_size", dtype_size, METH_VARARGS, "bytes per element of a graphcc type name" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "graphcc._graphcc", "graphcc's C API for Python (see graphcc).",
	-1, module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__graphcc(void)
{
	import_array();
	PyTypeObject *types[] = { &gcpy_RegistryType, &GraphType, &gcpy_ProgramType, &RunnerType };
	const char *names[] = { "Registry", "Graph", "Program", "Runner" };
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (PyType_Ready(types[i]))
			return NULL;
	PyObject *m = PyModule_Create(&module);
	if (!m)
		return NULL;
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (PyModule_AddObjectRef(m, names[i], (PyObject *)types[i])) {
			Py_DECREF(m);
			return NULL;
		}
	if (PyModule_AddStringConstant(m, "version", GC_VERSION_STRING) || gcpy_kernel_init(m)) {
		Py_DECREF(m);
		return NULL;
	}
	pthread_key_create(&altstack_key, altstack_free);
	/* A kernel that crashes ends the process with graphcc's report, as the
	 * command does (GRAPHCC_CRASH_CAPTURE=0 turns it off: the library reads
	 * no environment, its host decides). */
	gc_runtime_init(&(gc_init_options){ .from_environment = 1, .amx = 1 }, NULL); /* as the command */
	const char *capture = getenv("GRAPHCC_CRASH_CAPTURE");
	if (!capture || strcmp(capture, "0"))
		gc_crash_capture_install();
	return m;
}
