/* What a compiled program says about itself: its origin (a .gcb's pins),
 * its nodes and their bindings, and its session state. */
#include "_graphcc.h"

/* origin() -> {format_version, graphcc_version, libraries: [(path, sha256)]} */
PyObject *gcpy_program_origin(gcpy_Program *self, PyObject *unused)
{
	(void)unused;
	gc_program_origin o;
	gc_program_get_origin(self->p, &o);
	PyObject *libs = PyList_New(o.n_libraries);
	for (int i = 0; libs && i < o.n_libraries; i++) {
		PyObject *e = Py_BuildValue("(ss)", o.library_paths[i], o.library_sha256[i]);
		if (!e) {
			Py_CLEAR(libs);
			break;
		}
		PyList_SET_ITEM(libs, i, e);
	}
	if (!libs)
		return NULL;
	return Py_BuildValue("{s:I,s:z,s:N}", "format_version", o.format_version,
			     "graphcc_version", o.graphcc_version, "libraries", libs);
}

/* nodes() -> [dict]: name, domain, op_type and, for custom nodes, the
 * binding (operation, flavour, library, symbol, manifest). */
PyObject *gcpy_program_nodes(gcpy_Program *self, PyObject *unused)
{
	(void)unused;
	int n = gc_program_num_nodes(self->p);
	PyObject *l = PyList_New(n);
	for (int i = 0; l && i < n; i++) {
		gc_node_desc d;
		gc_program_node(self->p, i, &d);
		PyObject *e = Py_BuildValue("{s:s,s:s,s:s,s:z,s:z,s:z,s:z,s:z}", "name", d.name,
					    "domain", d.domain, "op_type", d.op_type, "operation",
					    d.op_name, "flavour", d.flavour, "library", d.library,
					    "symbol", d.symbol, "manifest", d.manifest);
		if (!e) {
			Py_DECREF(l);
			return NULL;
		}
		PyList_SET_ITEM(l, i, e);
	}
	return l;
}

/* states() -> [(input, output)]: each input the session keeps (a training
 * program's params and optimizer buffers) and the output whose value it
 * takes after each run. */
PyObject *gcpy_program_states(gcpy_Program *self, PyObject *unused)
{
	(void)unused;
	PyObject *l = PyList_New(0);
	for (int i = 0; l && i < gc_program_num_inputs(self->p); i++) {
		int o = gc_program_input_state(self->p, i);
		if (o < 0)
			continue;
		const char *in, *out;
		gc_program_input(self->p, i, &in);
		gc_program_output(self->p, o, &out);
		PyObject *e = Py_BuildValue("(ss)", in, out);
		if (!e || PyList_Append(l, e))
			Py_CLEAR(l);
		Py_XDECREF(e);
	}
	return l;
}
