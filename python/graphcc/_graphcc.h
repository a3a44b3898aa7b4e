/* Shared between the files of the graphcc._graphcc extension. */
#ifndef GCPY_GRAPHCC_H
#define GCPY_GRAPHCC_H

#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#ifndef GCPY_MAIN_FILE
#define NO_IMPORT_ARRAY
#endif
#define PY_ARRAY_UNIQUE_SYMBOL gcpy_ARRAY_API
#include <numpy/arrayobject.h>

#include <graphcc/graphcc.h>

extern PyObject *gcpy_Error, *gcpy_ModelError, *gcpy_PackageError, *gcpy_InputError,
	*gcpy_KernelError;

/* Raises cls with graphcc's message in e (MemoryError for GC_ENOMEM). */
PyObject *gcpy_raise(PyObject *cls, const gc_error *e);
PyObject *gcpy_raisef(PyObject *cls, const char *fmt, ...);

/* What a conversion keeps alive until the run that uses it ends. */
typedef struct gcpy_feed {
	PyObject *keep; /* list */
	int copies;	/* inputs that had to be copied or converted */
} gcpy_feed;

void *gcpy_keep_alloc(gcpy_feed *f, size_t bytes);
int gcpy_npy_type(gc_dtype d);
gc_dtype gcpy_dtype_of(PyArray_Descr *d);
/* obj as a value of type want (in place when it can be). */
int gcpy_tensor_of(PyObject *obj, gc_dtype want, const char *what, gcpy_feed *f, gc_tensor *t);
/* A copy of t as a Python value (arrays own their memory). */
PyObject *gcpy_from_tensor(const gc_tensor *t);

typedef struct {
	PyObject_HEAD
	gc_registry *r;
} gcpy_Registry;

typedef struct {
	PyObject_HEAD
	gc_program *p;
	PyObject *registry; /* kept alive: the program's kernels are its libraries */
} gcpy_Program;

extern PyTypeObject gcpy_RegistryType, gcpy_ProgramType;

/* Program methods (program.c). */
PyObject *gcpy_program_origin(gcpy_Program *self, PyObject *unused);
PyObject *gcpy_program_nodes(gcpy_Program *self, PyObject *unused);
PyObject *gcpy_program_states(gcpy_Program *self, PyObject *unused);

/* Python kernels (pykernel.c): registers "inprocess:python" and the
 * module's _python_tables. */
int gcpy_kernel_init(PyObject *m);

#endif
