/*
 * graphcc._graphcc's Registry type: loaded op packages (gc_registry), and
 * what each operation declares (inputs, outputs, params, flavours), for
 * graphcc.load_package and pkg.operations.
 */
#define PY_SSIZE_T_CLEAN
#include "_graphcc.h"

#include <graphcc/graphcc.h>

#include <string.h>

/* ---------------------------------------------------------------- Registry */

static void reg_dealloc(gcpy_Registry *self)
{
	gc_registry_free(self->r);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static int reg_init(gcpy_Registry *self, PyObject *args, PyObject *kw)
{
	(void)args;
	(void)kw;
	if (!self->r && !(self->r = gc_registry_new())) {
		PyErr_NoMemory();
		return -1;
	}
	return 0;
}

static PyObject *reg_load(gcpy_Registry *self, PyObject *args)
{
	PyObject *pathobj;
	if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &pathobj))
		return NULL;
	gc_error err = { 0 };
	int rc;
	Py_BEGIN_ALLOW_THREADS
	rc = gc_registry_load(self->r, PyBytes_AS_STRING(pathobj), &err);
	Py_END_ALLOW_THREADS
	Py_DECREF(pathobj);
	if (rc)
		return gcpy_raise(gcpy_PackageError, &err);
	Py_RETURN_NONE;
}

static PyObject *dtypes_list(uint32_t mask)
{
	PyObject *l = PyList_New(0);
	for (int d = 1; l && d < GC_DTYPE_COUNT && d < 32; d++)
		if (mask & (1u << d)) {
			PyObject *s = PyUnicode_FromString(gc_dtype_name((gc_dtype)d));
			if (!s || PyList_Append(l, s)) {
				Py_XDECREF(s);
				Py_DECREF(l);
				return NULL;
			}
			Py_DECREF(s);
		}
	return l;
}

static PyObject *param_default(const gc_param_desc *p)
{
	if (!p->has_default)
		Py_RETURN_NONE;
	int n = p->scalar ? 1 : p->default_count;
	PyObject *l = PyList_New(n);
	for (int i = 0; l && i < n; i++) {
		PyObject *v;
		if (!strcmp(p->datatype, "int"))
			v = PyLong_FromLongLong(((const int64_t *)p->default_data)[i]);
		else if (!strcmp(p->datatype, "float"))
			v = PyFloat_FromDouble(((const float *)p->default_data)[i]);
		else if (!strcmp(p->datatype, "bool"))
			v = PyBool_FromLong(((const uint8_t *)p->default_data)[i]);
		else
			v = PyUnicode_FromString(p->scalar ? (const char *)p->default_data
							   : ((char *const *)p->default_data)[i]);
		if (!v) {
			Py_DECREF(l);
			return NULL;
		}
		PyList_SET_ITEM(l, i, v);
	}
	if (l && p->scalar) {
		PyObject *v = Py_NewRef(PyList_GET_ITEM(l, 0));
		Py_DECREF(l);
		return v;
	}
	return l;
}

/* Every operation as a dict: name, type, domain, version, manifest,
 * functions_library, interface, pure, inputs, outputs, params, flavours. */
static PyObject *reg_operations(gcpy_Registry *self, PyObject *unused)
{
	(void)unused;
	int n = gc_registry_num_ops(self->r);
	PyObject *ops = PyList_New(n);
	for (int i = 0; ops && i < n; i++) {
		gc_op_desc d;
		gc_registry_op(self->r, i, &d);
		PyObject *io[2];
		for (int k = 0; k < 2; k++) {
			int m = k ? d.n_outputs : d.n_inputs;
			io[k] = PyList_New(m);
			for (int j = 0; io[k] && j < m; j++) {
				gc_io_desc x;
				gc_registry_op_io(self->r, i, k, j, &x);
				PyObject *e = Py_BuildValue("{s:s,s:i,s:O,s:O,s:O,s:N}", "name", x.name,
							    "max_dims", x.max_dims, "constant",
							    x.constant ? Py_True : Py_False, "optional",
							    x.optional ? Py_True : Py_False, "variadic",
							    x.variadic ? Py_True : Py_False, "dtypes",
							    dtypes_list(x.dtypes));
				if (!e)
					Py_CLEAR(io[k]);
				else
					PyList_SET_ITEM(io[k], j, e);
			}
		}
		PyObject *params = PyList_New(d.n_params);
		for (int j = 0; params && j < d.n_params; j++) {
			gc_param_desc p;
			gc_registry_op_param(self->r, i, j, &p);
			PyObject *e = Py_BuildValue("{s:s,s:s,s:s,s:O,s:i,s:O,s:N}", "name", p.name,
						    "attribute", p.attribute ? p.attribute : p.name,
						    "datatype", p.datatype, "scalar",
						    p.scalar ? Py_True : Py_False, "size", (int)p.size,
						    "has_default", p.has_default ? Py_True : Py_False,
						    "default", param_default(&p));
			if (!e)
				Py_CLEAR(params);
			else
				PyList_SET_ITEM(params, j, e);
		}
		PyObject *fl = PyList_New(d.n_impls);
		for (int j = 0; fl && j < d.n_impls; j++) {
			gc_impl_desc m;
			gc_impl_functions x;
			gc_registry_impl(self->r, i, j, &m);
			gc_registry_impl_functions(self->r, i, j, &x);
			PyObject *sb = x.has_scratch_bytes ? PyLong_FromUnsignedLongLong(x.scratch_bytes)
							   : Py_NewRef(Py_None);
			PyObject *e = Py_BuildValue(
				"{s:s,s:s,s:s,s:s,s:z,s:O,s:O,s:z,s:z,s:z,s:N,s:O}", "type", m.type,
				"backend", m.backend, "library", m.library ? m.library : "", "symbol",
				m.symbol ? m.symbol : "", "config", m.config, "skipped",
				m.skipped ? Py_True : Py_False, "graphcc_interface",
				m.graphcc_interface ? Py_True : Py_False, "init", x.init, "destroy",
				x.destroy, "scratch", x.scratch, "scratch_bytes", sb, "inplace",
				x.inplace ? Py_True : Py_False);
			if (!e)
				Py_CLEAR(fl);
			else
				PyList_SET_ITEM(fl, j, e);
		}
		gc_op_functions fn;
		gc_registry_op_functions(self->r, i, &fn);
		PyObject *op = NULL;
		if (io[0] && io[1] && params && fl)
			op = Py_BuildValue("{s:z,s:z,s:z,s:s,s:s,s:s,s:L,s:s,s:s,s:O,s:O,s:O,s:O,s:O,s:O}",
					   "verify", fn.verify, "infer_shape", fn.infer_shape,
					   "select_impl", fn.select_impl, "name",
					   d.name, "type", d.type, "domain", d.domain, "version",
					   (long long)d.version, "manifest", d.manifest,
					   "functions_library",
					   d.functions_library ? d.functions_library : "",
					   "graphcc_interface", d.graphcc_interface ? Py_True : Py_False,
					   "pure", d.pure ? Py_True : Py_False, "inputs", io[0],
					   "outputs", io[1], "params", params, "flavours", fl);
		Py_XDECREF(io[0]);
		Py_XDECREF(io[1]);
		Py_XDECREF(params);
		Py_XDECREF(fl);
		if (!op) {
			Py_DECREF(ops);
			return NULL;
		}
		PyList_SET_ITEM(ops, i, op);
	}
	return ops;
}

static PyMethodDef reg_methods[] = {
	{ "load", (PyCFunction)reg_load, METH_VARARGS, "load(manifest): load an op package" },
	{ "operations", (PyCFunction)reg_operations, METH_NOARGS,
	  "operations() -> list of dicts describing every operation" },
	{ NULL, NULL, 0, NULL },
};

PyTypeObject gcpy_RegistryType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "graphcc._graphcc.Registry",
	.tp_basicsize = sizeof(gcpy_Registry),
	.tp_dealloc = (destructor)reg_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "Loaded op packages (gc_registry).",
	.tp_methods = reg_methods,
	.tp_init = (initproc)reg_init,
	.tp_new = PyType_GenericNew,
};
