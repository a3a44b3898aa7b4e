/*
 * Runs one built-in op outside any graph, for kernel unit tests: builds a
 * node, calls the op's prepare with the given inputs (all treated as known
 * values), allocates the outputs and calls the chosen run function.
 */
#ifndef GC_HARNESS_H
#define GC_HARNESS_H

#include <graphcc/runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "kernel.h"
#include "kernels/kutil.h" /* float16 and bfloat16 to float */
#include "kernels/value-impl.h" /* an element as a double */
#include "ops.h" /* the gc_prepare_<Name> declarations */
#include "strpool.h"

typedef struct {
	gc_node node;
	gc_tensor out[8];
	gc_error err;
	gc_strpool *strings; /* the strings the kernel makes, as a session's */
} harness_run;

/* The thread count kernels are told (gc_kctx.threads). */
static int harness_threads = 1;

/* Returns 0 or the error code; h->err.msg says why. Inputs may be NULL
 * (absent). Outputs are left in h->out; free with harness_free. */
/* `prepare` is the op's gc_prepare_<Name>; calling it directly (not through
 * the op table) lets a family's tests link before the other families exist. */
static inline int harness_op(harness_run *h, gc_prepare_fn prepare, const char *op_type,
			     int opset, int n_in, gc_tensor **in, int n_out, int n_attr,
			     gc_attr *attrs)
{
	memset(h, 0, sizeof *h);
	static int32_t idx[16];
	for (int i = 0; i < 16; i++)
		idx[i] = i;
	h->node.name = "test";
	h->node.domain = "";
	h->node.op_type = op_type;
	h->node.opset = opset;
	h->node.n_in = n_in;
	h->node.n_out = n_out;
	h->node.in = idx;
	h->node.out = idx;
	h->node.n_attr = n_attr;
	h->node.attrs = attrs;
	gc_tensor *outp[8];
	for (int i = 0; i < n_out; i++)
		outp[i] = &h->out[i];
	h->strings = gc_strpool_new();
	gc_kctx k = { .err = &h->err, .node = &h->node, .threads = harness_threads, .strings = h->strings };
	int rc = prepare(&k, &h->node, in, outp);
	if (rc)
		return rc;
	if (!h->node.run) {
		h->err.code = GC_EINVAL;
		strcpy(h->err.msg, "prepare chose no run function");
		return h->err.code;
	}
	for (int i = 0; i < n_out; i++) {
		/* prepare may have set data for a value known at build time */
		void *known = h->out[i].data;
		h->out[i].data = NULL;
		if (gc_tensor_alloc(&h->out[i], &h->err))
			return h->err.code;
		(void)known;
	}
	/* scratch as the arena hands it out: what the last node left there
	 * (NaN bytes), so that a kernel relying on zeros fails */
	if (h->node.scratch_bytes && (k.scratch = malloc(h->node.scratch_bytes)))
		memset(k.scratch, 0xff, h->node.scratch_bytes);
	rc = h->node.run(&k, &h->node, in, outp);
	free(k.scratch);
	return rc;
}

static inline void harness_free(harness_run *h)
{
	for (int i = 0; i < 8; i++) {
		/* A string output's strings are the kernel's inputs' or h->strings'. */
		if (h->out[i].dtype == GC_DTYPE_STRING) {
			gc_free(h->out[i].data);
			h->out[i].data = NULL;
		}
		gc_tensor_release(&h->out[i]);
	}
	gc_strpool_free(h->strings);
	h->strings = NULL;
	if (h->node.state) {
		if (h->node.state_free)
			h->node.state_free(h->node.state);
		else
			free(h->node.state);
	}
	gc_packed_release(&h->node); /* packed weights (gc_kpacked) */
}

static inline gc_tensor harness_tensor(gc_dtype dt, int32_t rank, const int64_t *dims,
				       const void *data)
{
	gc_tensor t;
	memset(&t, 0, sizeof t);
	t.dtype = dt;
	t.rank = rank;
	for (int i = 0; i < rank; i++)
		t.dims[i] = dims[i];
	t.data = (void *)data;
	return t;
}

/* Element i of t as a double (NaN for a type without a number): the
 * kernels' own loader. */
static inline double harness_at(const gc_tensor *t, int64_t i)
{
	return gc_kv_numeric(t->dtype) ? gc_kv_load(t, i) : NAN;
}

#endif
