/*
 * --profile: a Chrome trace-event file (the JSON Object Format: open it in
 * https://ui.perfetto.dev or chrome://tracing) with one complete ("X")
 * event per node -- name the node, cat its op type, ts/dur in microseconds,
 * args with its inputs and outputs and, for custom nodes, the operation,
 * flavour, library and symbol -- and a per-op-type summary table.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "custom.h"
#include "debug-impl.h"
#include "fileio.h"
#include "kernels/nn-par.h"

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_tensors(FILE *f, const gc_session *s, const int32_t *list, int32_t n)
{
	char all[4096], one[512];
	size_t at = 0;
	all[0] = 0;
	for (int32_t j = 0; j < n && at + 1 < sizeof all; j++) {
		int w = snprintf(all + at, sizeof all - at, "%s%s", j ? ", " : "",
				 gc_debug_tensor_str(s, list[j], one, sizeof one));
		if (w < 0)
			break;
		at += (size_t)w;
	}
	json_str(f, all);
}

/* A node's jobs on the worker pool, in microseconds: their wall time, the
 * threads' time in parts, the threads' idle time in them (wall x threads -
 * busy), the caller's wait after its own last part, the workers' delay to
 * their first part; and the calls that ran on the caller alone. */
static void json_pool(FILE *f, const gc_nn_par_stats *ps)
{
	if (!ps->jobs && !ps->single)
		return;
	fprintf(f,
		", \"pool\": {\"jobs\": %" PRIu64 ", \"wall\": %.1f, \"busy\": %.1f, "
		"\"idle\": %.1f, \"tail\": %.1f, \"late\": %.1f, \"alone\": %" PRIu64 "}",
		ps->jobs, (double)ps->wall_ns / 1e3, (double)ps->busy_ns / 1e3,
		((double)ps->cap_ns - (double)ps->busy_ns) / 1e3, (double)ps->tail_ns / 1e3,
		(double)ps->late_ns / 1e3, ps->single);
}

int gc_profile_write(const char *path, const gc_session *s, const double *start_us,
		     const double *dur_us, const gc_nn_par_stats *pool, int32_t n_done,
		     gc_error *err)
{
	const gc_program *p = s->p;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return gc_error_set(err, GC_ENOMEM, "--profile: out of memory");
	fputs("{\"traceEvents\": [\n", f);
	fputs("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, "
	      "\"args\": {\"name\": \"graphcc\"}},\n",
	      f);
	fputs("{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, "
	      "\"args\": {\"name\": \"Interpreter\"}}",
	      f);
	for (int32_t i = 0; i < n_done; i++) {
		const gc_node *n = &p->nodes[i];
		const gc_custom *c = n->custom;
		char op[256];
		gc_debug_op_str(n, op, sizeof op);
		fputs(",\n{\"name\": ", f);
		json_str(f, n->name[0] ? n->name : op);
		fputs(", \"cat\": ", f);
		json_str(f, op);
		fprintf(f,
			", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, \"pid\": 1, \"tid\": 1, "
			"\"args\": {\"index\": %d, \"op\": ",
			start_us[i], dur_us[i], (int)i);
		json_str(f, op);
		if (c) {
			const char *keys[] = {"operation", "flavour", "library", "symbol"};
			const char *vals[] = {c->op_name, c->flavour, c->library, c->symbol};
			for (int k = 0; k < 4; k++) {
				fprintf(f, ", \"%s\": ", keys[k]);
				json_str(f, vals[k]);
			}
		}
		fputs(", \"inputs\": ", f);
		json_tensors(f, s, n->in, n->n_in);
		fputs(", \"outputs\": ", f);
		json_tensors(f, s, n->out, n->n_out);
		if (pool)
			json_pool(f, &pool[i]);
		fputs("}}", f);
	}
	fprintf(f,
		"\n],\n\"displayTimeUnit\": \"ms\",\n\"otherData\": {\"tool\": \"graphcc "
		"%s\", \"nodes\": %d}\n}\n",
		GC_VERSION_STRING, (int)n_done);
	if (fclose(f)) {
		free(buf);
		return gc_error_set(err, GC_ENOMEM, "--profile: out of memory");
	}
	int rc = gc_write_file_atomic(path, buf, len, NULL, 0, err);
	free(buf);
	if (rc)
		gc_error_prefix(err, "--profile");
	return rc;
}

typedef struct op_row {
	char op[256];
	int32_t count;
	double total_us;
} op_row;

static int by_total(const void *a, const void *b)
{
	const op_row *x = a, *y = b;
	if (x->total_us != y->total_us)
		return x->total_us < y->total_us ? 1 : -1;
	return strcmp(x->op, y->op);
}

void gc_profile_summary(FILE *f, const gc_program *p, const double *dur_us, int32_t n_done)
{
	op_row *rows = gc_calloc((size_t)n_done + 1, sizeof *rows);
	if (!rows)
		return;
	int32_t n_rows = 0;
	double all = 0;
	for (int32_t i = 0; i < n_done; i++) {
		char op[256];
		gc_debug_op_str(&p->nodes[i], op, sizeof op);
		int32_t r = 0;
		while (r < n_rows && strcmp(rows[r].op, op))
			r++;
		if (r == n_rows)
			snprintf(rows[n_rows++].op, sizeof rows[r].op, "%s", op);
		rows[r].count++;
		rows[r].total_us += dur_us[i];
		all += dur_us[i];
	}
	qsort(rows, (size_t)n_rows, sizeof *rows, by_total);
	fprintf(f, "profile: %d nodes, %.3f ms in kernels\n", (int)n_done, all / 1e3);
	fprintf(f, "  %-40s %6s %11s %7s\n", "op type", "count", "total ms", "share");
	for (int32_t r = 0; r < n_rows; r++)
		fprintf(f, "  %-40s %6d %11.3f %6.1f%%\n", rows[r].op, (int)rows[r].count,
			rows[r].total_us / 1e3, all > 0 ? 100.0 * rows[r].total_us / all : 0.0);
	gc_free(rows);
}
