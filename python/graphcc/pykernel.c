/*
 * Python kernels (graphcc.python_kernel): NumPy functions as the kernels,
 * and as verify / shape inference / selection, of custom operations.
 *
 * The functions here are graphcc-interface trampolines registered once as
 * the in-process library "inprocess:python" (gc_inprocess_library_add);
 * manifests that graphcc/__init__.py writes name it. Each call takes the
 * GIL (runs release it), finds the Python callables registered for the
 * operation (by domain and type) and flavour in the two dicts the package
 * hands over with _python_tables(), and converts views to NumPy arrays and
 * back. A Python exception becomes the function's failure, its text the
 * reason graphcc reports (a KernelError for kernels).
 */
#include "_graphcc.h"

#include <graphcc/customop.h>

#include <string.h>

static PyObject *kernels; /* (domain, type, flavour) -> fn(inputs, params, out_specs) */
static PyObject *ops;	  /* (domain, type) -> {"verify", "infer", "flavour"} */

static const struct {
	const char *name;
	CustomOpDataType dt;
} dtypes[] = {
	{ "float32", DTFloat32 }, { "float16", DTFloat16 }, { "bfloat16", DTBFloat16 },
	{ "float64", DTFloat64 }, { "int8", DTIInt8 },	    { "int16", DTIInt16 },
	{ "int32", DTIInt32 },	  { "int64", DTIInt64 },    { "uint8", DTUInt8 },
	{ "uint16", DTUInt16 },	  { "uint32", DTUInt32 },   { "uint64", DTUInt64 },
	{ "bool", DTBool },	  { "string", DTString },   { "int8", DTQInt8 },
	{ "uint8", DTQUInt8 },	  { "int16", DTQInt16 },    { "int32", DTQInt32 },
};

static const char *dt_name(CustomOpDataType d)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (dtypes[i].dt == d)
			return dtypes[i].name;
	return "?";
}

static int dt_of(const char *name, CustomOpDataType *d)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (!strcmp(dtypes[i].name, name)) {
			*d = dtypes[i].dt;
			return 0;
		}
	return -1;
}

static int npy_of(CustomOpDataType d)
{
	switch (d) {
	case DTFloat32: return NPY_FLOAT32;
	case DTFloat16: return NPY_FLOAT16;
	case DTBFloat16: return NPY_FLOAT32; /* converted */
	case DTFloat64: return NPY_FLOAT64;
	case DTQInt8: case DTIInt8: return NPY_INT8;
	case DTQUInt8: case DTUInt8: return NPY_UINT8;
	case DTQInt16: case DTIInt16: return NPY_INT16;
	case DTQInt32: case DTIInt32: return NPY_INT32;
	case DTIInt64: return NPY_INT64;
	case DTUInt16: return NPY_UINT16;
	case DTUInt32: return NPY_UINT32;
	case DTUInt64: return NPY_UINT64;
	case DTBool: return NPY_BOOL;
	case DTString: return NPY_OBJECT;
	default: return -1;
	}
}

/* Records the pending Python exception as the call's failure. */
static GcStatus fail(GcOpContext *ctx, const char *what)
{
	PyObject *type, *value, *tb;
	PyErr_Fetch(&type, &value, &tb);
	PyErr_NormalizeException(&type, &value, &tb);
	PyObject *s = value ? PyObject_Str(value) : NULL;
	const char *msg = s ? PyUnicode_AsUTF8(s) : NULL;
	const char *tname = type ? ((PyTypeObject *)type)->tp_name : "error";
	ctx->set_error(ctx, "Python %s raised %s: %s", what, tname, msg ? msg : "(no message)");
	Py_XDECREF(s);
	Py_XDECREF(type);
	Py_XDECREF(value);
	Py_XDECREF(tb);
	PyErr_Clear();
	return GC_STATUS_FAIL;
}

/* (shape tuple, type name) of a view; None for an absent input. */
static PyObject *spec_of(const CustomOpIOTensor *t)
{
	if (t->dtype == DTCustomOpDataTypeCount) /* an absent optional input */
		Py_RETURN_NONE;
	PyObject *shape = PyTuple_New(t->rank);
	for (int32_t d = 0; shape && d < t->rank; d++)
		PyTuple_SET_ITEM(shape, d, PyLong_FromLongLong(t->dims[d]));
	if (!shape)
		return NULL;
	return Py_BuildValue("(Ns)", shape, dt_name(t->dtype));
}

/* A copy of an input view as a NumPy array (None: absent). */
static PyObject *array_of(const CustomOpIOTensor *t)
{
	if (t->dtype == DTCustomOpDataTypeCount || (!t->data && t->numel > 0))
		Py_RETURN_NONE;
	int npy = npy_of(t->dtype);
	if (npy < 0)
		return PyErr_Format(PyExc_TypeError, "a %s input has no NumPy form", dt_name(t->dtype));
	npy_intp dims[GC_MAX_RANK];
	for (int32_t d = 0; d < t->rank && d < GC_MAX_RANK; d++)
		dims[d] = (npy_intp)t->dims[d];
	PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(t->rank, dims, npy);
	if (!a)
		return NULL;
	int64_t n = t->numel;
	if (t->dtype == DTString) {
		PyObject **slot = PyArray_DATA(a);
		char *const *s = t->data;
		for (int64_t i = 0; i < n; i++) {
			PyObject *u = PyUnicode_DecodeUTF8(s[i], (Py_ssize_t)strlen(s[i]), "replace");
			if (!u) {
				Py_DECREF(a);
				return NULL;
			}
			Py_XSETREF(slot[i], u);
		}
	} else if (t->dtype == DTBFloat16) {
		const uint16_t *h = t->data;
		float *x = PyArray_DATA(a);
		for (int64_t i = 0; i < n; i++) {
			uint32_t u = (uint32_t)h[i] << 16;
			memcpy(&x[i], &u, 4);
		}
	} else if (n > 0) {
		memcpy(PyArray_DATA(a), t->data, (size_t)n * gcDataTypeSize(t->dtype));
	}
	return (PyObject *)a;
}

/* {name: value}: a scalar param as a Python scalar, a vector as a list. */
static PyObject *params_of(const CustomOpParam *params, int32_t n)
{
	PyObject *d = PyDict_New();
	for (int32_t i = 0; d && i < n; i++) {
		const CustomOpParam *p = &params[i];
		int32_t n_vals = p->size ? p->size : 1; /* a scalar has size 0 */
		PyObject *l = PyList_New(n_vals);
		for (int32_t k = 0; l && k < n_vals; k++) {
			PyObject *v = NULL;
			switch (p->dtype) {
			case DTIInt64: v = PyLong_FromLongLong(((const int64_t *)p->data)[k]); break;
			case DTFloat32: v = PyFloat_FromDouble(((const float *)p->data)[k]); break;
			case DTBool: v = PyBool_FromLong(((const uint8_t *)p->data)[k]); break;
			case DTString:
				v = PyUnicode_FromString(p->size == 0 ? (const char *)p->data
								 : ((char *const *)p->data)[k]);
				break;
			default: v = Py_NewRef(Py_None);
			}
			if (!v) {
				Py_CLEAR(l);
				break;
			}
			PyList_SET_ITEM(l, k, v);
		}
		if (l && p->size == 0) { /* a scalar as itself */
			PyObject *v = Py_NewRef(PyList_GET_ITEM(l, 0));
			Py_SETREF(l, v);
		}
		if (!l || PyDict_SetItemString(d, p->name, l)) {
			Py_XDECREF(l);
			Py_DECREF(d);
			return NULL;
		}
		Py_DECREF(l);
	}
	return d;
}

static PyObject *op_entry(GcOpContext *ctx)
{
	PyObject *key = Py_BuildValue("(ss)", ctx->op_domain, ctx->op_type);
	PyObject *e = key && ops ? PyDict_GetItemWithError(ops, key) : NULL;
	Py_XDECREF(key);
	if (!e && !PyErr_Occurred())
		PyErr_Format(PyExc_LookupError, "no Python operation %s::%s is registered",
			     ctx->op_domain, ctx->op_type);
	return e; /* borrowed */
}

static PyObject *specs(const CustomOpIOTensor *t, int32_t n)
{
	PyObject *l = PyList_New(n);
	for (int32_t i = 0; l && i < n; i++) {
		PyObject *s = spec_of(&t[i]);
		if (!s) {
			Py_DECREF(l);
			return NULL;
		}
		PyList_SET_ITEM(l, i, s);
	}
	return l;
}

/* r (what a Python function returned, NULL when it raised) as a sequence
 * of one entry per output; NULL with the failure recorded otherwise. */
static PyObject *per_output(GcOpContext *ctx, PyObject *r, int32_t n_out, const char *what)
{
	PyObject *seq = r ? PySequence_Fast(r, "it must return one entry per output") : NULL;
	if (!seq) {
		fail(ctx, what);
		return NULL;
	}
	if (PySequence_Fast_GET_SIZE(seq) != n_out) {
		ctx->set_error(ctx, "the Python %s gave %zd outputs; the operation has %d", what,
			       PySequence_Fast_GET_SIZE(seq), n_out);
		Py_DECREF(seq);
		return NULL;
	}
	return seq;
}

static GcStatus py_verify(GcOpContext *ctx, const CustomOpIOTensor *in, int32_t n_in,
			  const CustomOpIOTensor *out, int32_t n_out, const CustomOpParam *params,
			  int32_t n_params)
{
	(void)out;
	(void)n_out;
	PyGILState_STATE st = PyGILState_Ensure();
	GcStatus rc = GC_STATUS_OK;
	PyObject *e = op_entry(ctx), *fn = e ? PyDict_GetItemString(e, "verify") : NULL;
	if (!e) {
		rc = fail(ctx, "verify");
	} else if (fn && fn != Py_None) {
		PyObject *r = PyObject_CallFunction(fn, "NN", specs(in, n_in),
						    params_of(params, n_params));
		if (!r)
			rc = fail(ctx, "verify");
		else if (!PyObject_IsTrue(r)) {
			ctx->set_error(ctx, "the Python verify function returned false");
			rc = GC_STATUS_FAIL;
		}
		Py_XDECREF(r);
	}
	PyGILState_Release(st);
	return rc;
}

static GcStatus py_infer(GcOpContext *ctx, CustomOpIOTensor *out, int32_t n_out,
			 const CustomOpIOTensor *in, int32_t n_in, const CustomOpParam *params,
			 int32_t n_params)
{
	PyGILState_STATE st = PyGILState_Ensure();
	GcStatus rc = GC_STATUS_OK;
	PyObject *e = op_entry(ctx), *fn = e ? PyDict_GetItemString(e, "infer") : NULL;
	PyObject *r = NULL, *seq = NULL;
	if (!e || !fn) {
		rc = fail(ctx, "shape inference");
		goto out;
	}
	r = PyObject_CallFunction(fn, "NN", specs(in, n_in), params_of(params, n_params));
	if (!(seq = per_output(ctx, r, n_out, "shape inference"))) {
		rc = GC_STATUS_FAIL;
		goto out;
	}
	for (int32_t i = 0; i < n_out; i++) {
		PyObject *shape;
		const char *tname;
		if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "Os", &shape, &tname)) {
			rc = fail(ctx, "shape inference");
			goto out;
		}
		PyObject *sh = PySequence_Fast(shape, "a shape must be a sequence of ints");
		if (!sh) {
			rc = fail(ctx, "shape inference");
			goto out;
		}
		Py_ssize_t rank = PySequence_Fast_GET_SIZE(sh);
		if (rank > out[i].maxDims || rank > GC_MAX_RANK || dt_of(tname, &out[i].dtype)) {
			ctx->set_error(ctx, "the Python shape function gave output %d rank %zd and type "
				       "'%s' (maxDims %d; types: float32, int64, ...)",
				       i, rank, tname, out[i].maxDims);
			Py_DECREF(sh);
			rc = GC_STATUS_FAIL;
			goto out;
		}
		out[i].rank = (int32_t)rank;
		int64_t numel = 1;
		for (Py_ssize_t d = 0; d < rank; d++) {
			out[i].dims[d] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(sh, d));
			numel *= out[i].dims[d];
		}
		out[i].numel = numel;
		Py_DECREF(sh);
		if (PyErr_Occurred()) {
			rc = fail(ctx, "shape inference");
			goto out;
		}
	}
out:
	Py_XDECREF(seq);
	Py_XDECREF(r);
	PyGILState_Release(st);
	return rc;
}

static GcStatus py_select(GcOpContext *ctx, const CustomOpIOTensor *in, int32_t n_in,
			  const CustomOpIOTensor *out, int32_t n_out, const CustomOpParam *params,
			  int32_t n_params, const char **flavour)
{
	(void)in, (void)n_in, (void)out, (void)n_out, (void)params, (void)n_params;
	PyGILState_STATE st = PyGILState_Ensure();
	GcStatus rc = GC_STATUS_OK;
	PyObject *e = op_entry(ctx), *f = e ? PyDict_GetItemString(e, "flavour") : NULL;
	/* The str lives in the table as long as the operation is registered. */
	*flavour = f ? PyUnicode_AsUTF8(f) : NULL;
	if (!*flavour)
		rc = fail(ctx, "selection");
	PyGILState_Release(st);
	return rc;
}

static GcStatus py_kernel(GcOpContext *ctx, const CustomOpIOTensor *in, int32_t n_in,
			  CustomOpIOTensor *out, int32_t n_out, const CustomOpParam *params,
			  int32_t n_params)
{
	PyGILState_STATE st = PyGILState_Ensure();
	GcStatus rc = GC_STATUS_OK;
	PyObject *key = Py_BuildValue("(sss)", ctx->op_domain, ctx->op_type, ctx->flavour);
	PyObject *fn = key && kernels ? PyDict_GetItemWithError(kernels, key) : NULL;
	PyObject *args = NULL, *r = NULL, *seq = NULL;
	Py_XDECREF(key);
	if (!fn) {
		if (!PyErr_Occurred())
			PyErr_Format(PyExc_LookupError, "no Python kernel %s::%s flavour '%s'",
				     ctx->op_domain, ctx->op_type, ctx->flavour);
		rc = fail(ctx, "kernel");
		goto out;
	}
	args = PyTuple_New(n_in);
	for (int32_t i = 0; args && i < n_in; i++) {
		PyObject *a = array_of(&in[i]);
		if (!a) {
			Py_CLEAR(args);
			break;
		}
		PyTuple_SET_ITEM(args, i, a);
	}
	if (!args) {
		rc = fail(ctx, "kernel");
		goto out;
	}
	r = PyObject_CallFunction(fn, "ONN", args, params_of(params, n_params), specs(out, n_out));
	if (!(seq = per_output(ctx, r, n_out, "kernel"))) {
		rc = GC_STATUS_FAIL;
		goto out;
	}
	for (int32_t i = 0; i < n_out; i++) {
		PyObject *o = PySequence_Fast_GET_ITEM(seq, i);
		if (!PyArray_Check(o) || !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)o) ||
		    PyArray_TYPE((PyArrayObject *)o) != npy_of(out[i].dtype) ||
		    PyArray_SIZE((PyArrayObject *)o) != out[i].numel || out[i].dtype == DTString ||
		    out[i].dtype == DTBFloat16) {
			ctx->set_error(ctx, "the Python kernel's output %d does not fit the inferred %s "
				       "output (graphcc's wrapper should have said why)",
				       i, dt_name(out[i].dtype));
			rc = GC_STATUS_FAIL;
			goto out;
		}
		if (out[i].numel > 0)
			memcpy(out[i].data, PyArray_DATA((PyArrayObject *)o),
			       (size_t)out[i].numel * gcDataTypeSize(out[i].dtype));
	}
out:
	Py_XDECREF(seq);
	Py_XDECREF(r);
	Py_XDECREF(args);
	PyGILState_Release(st);
	return rc;
}

static PyObject *python_tables(PyObject *mod, PyObject *args)
{
	(void)mod;
	PyObject *k, *o;
	if (!PyArg_ParseTuple(args, "O!O!", &PyDict_Type, &k, &PyDict_Type, &o))
		return NULL;
	Py_INCREF(k);
	Py_INCREF(o);
	Py_XSETREF(kernels, k);
	Py_XSETREF(ops, o);
	Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
	{ "_python_tables", python_tables, METH_VARARGS,
	  "_python_tables(kernels, ops): where the Python kernels are registered" },
	{ NULL, NULL, 0, NULL },
};

/* Registers "inprocess:python" and the module's _python_tables. */
int gcpy_kernel_init(PyObject *m)
{
	static const char *const names[] = { "python_verify", "python_infer", "python_select",
						 "python_kernel" };
	gcOpVerify_t v = py_verify;
	gcOpInferShape_t i = py_infer;
	gcOpSelectImpl_t s = py_select;
	gcOpKernel_t k = py_kernel;
	void (*fns[4])(void);
	memcpy(&fns[0], &v, sizeof v);
	memcpy(&fns[1], &i, sizeof i);
	memcpy(&fns[2], &s, sizeof s);
	memcpy(&fns[3], &k, sizeof k);
	gc_error err = { 0 };
	if (gc_inprocess_library_add("python", 4, names, (void (*const *)(void))fns, &err) &&
	    !strstr(err.msg, "registered already")) {
		gcpy_raise(gcpy_Error, &err);
		return -1;
	}
	return PyModule_AddFunctions(m, methods);
}
