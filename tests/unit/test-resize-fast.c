/*
 * Resize's float32 path (nearest and linear over the last two axes: row
 * copies, repeats, gathers and two-tap blends in float) against its float64
 * path (the axis-by-axis double interpolation that the conformance and
 * ONNX node tests check against ONNX's reference), on the same values: odd
 * sizes, channel counts that are no multiple of 16, integer and
 * non-integer scales, up and down, given sizes, every coordinate mode and
 * nearest mode, exclude_outside, tf_crop_and_resize with a roi inside
 * (float path) and beyond the input (extrapolation: float64 path for both),
 * ranks 2, 3 and 5, sizes that split over threads, a resized leading axis (float64 path for both), and
 * infinities in the input. Each float result must be within 2e-6 x
 * max(1, |float64 result|) (float rounding of a 4-tap sum), an infinity or
 * NaN exactly where the float64 path has one; at 2 and 3 threads the float
 * path must give the 1-thread bytes.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

typedef struct rcase {
	const char *name;
	int opset, rank;
	int64_t dims[5];
	double scales[5]; /* or 0: sizes */
	int64_t sizes[5];
	const char *mode, *ct, *nm;
	int exclude;
	double roi[10];
	int infs; /* put infinities in the input */
} rcase;

static const rcase cases[] = {
    {"linear x2", 13, 4, {1, 3, 5, 7}, {1, 1, 2, 2}, {0}, "linear", "half_pixel", NULL, 0, {0}, 0},
    {"linear 1.7 x 2.3, 17 channels", 13, 4, {2, 17, 5, 7}, {1, 1, 1.7, 2.3}, {0}, "linear",
     "half_pixel", NULL, 0, {0}, 0},
    {"linear align_corners sizes", 13, 4, {1, 2, 4, 6}, {0}, {1, 2, 9, 13}, "linear",
     "align_corners", NULL, 0, {0}, 0},
    {"linear pytorch_half_pixel to 1 row", 13, 4, {1, 3, 4, 5}, {0}, {1, 3, 1, 11}, "linear",
     "pytorch_half_pixel", NULL, 0, {0}, 0},
    {"linear asymmetric down 0.6 x 0.5", 13, 4, {1, 5, 10, 9}, {1, 1, 0.6, 0.5}, {0}, "linear",
     "asymmetric", NULL, 0, {0}, 0},
    {"linear exclude_outside down", 13, 4, {1, 3, 9, 11}, {1, 1, 0.45, 0.7}, {0}, "linear",
     "half_pixel", NULL, 1, {0}, 0},
    {"linear only the width", 13, 4, {1, 2, 3, 5}, {1, 1, 1, 2.5}, {0}, "linear", "half_pixel",
     NULL, 0, {0}, 0},
    {"linear only the height", 13, 4, {1, 2, 5, 3}, {1, 1, 3, 1}, {0}, "linear", "half_pixel",
     NULL, 0, {0}, 0},
    {"linear tf_crop roi inside", 13, 4, {1, 2, 6, 7}, {0}, {1, 2, 5, 9}, "linear",
     "tf_crop_and_resize", NULL, 0, {0, 0, 0.1, 0.2, 1, 1, 0.8, 0.9}, 0},
    {"linear tf_crop roi beyond", 13, 4, {1, 2, 6, 7}, {0}, {1, 2, 5, 9}, "linear",
     "tf_crop_and_resize", NULL, 0, {0, 0, -0.3, 0.2, 1, 1, 1.4, 0.9}, 0},
    {"linear infinities", 13, 4, {1, 2, 6, 5}, {1, 1, 2, 2}, {0}, "linear", "half_pixel", NULL,
     0, {0}, 1},
    {"linear rank 3", 13, 3, {3, 6, 10}, {1, 1.5, 2}, {0}, "linear", "half_pixel", NULL, 0, {0},
     0},
    {"linear rank 2", 13, 2, {6, 10}, {2, 0.5}, {0}, "linear", "half_pixel", NULL, 0, {0}, 0},
    {"linear rank 5", 13, 5, {1, 2, 3, 4, 5}, {1, 1, 1, 2, 2}, {0}, "linear", "half_pixel",
     NULL, 0, {0}, 0},
    {"linear leading axis resized", 13, 4, {1, 3, 4, 5}, {1, 2, 2, 2}, {0}, "linear",
     "half_pixel", NULL, 0, {0}, 0},
    {"nearest x2 floor", 13, 4, {1, 3, 5, 7}, {1, 1, 2, 2}, {0}, "nearest", "asymmetric",
     "floor", 0, {0}, 0},
    {"nearest x3 floor, 19 channels", 13, 4, {2, 19, 3, 5}, {1, 1, 3, 3}, {0}, "nearest",
     "asymmetric", "floor", 0, {0}, 0},
    {"nearest 1.5 x 2.5 round_prefer_floor", 13, 4, {1, 3, 5, 7}, {1, 1, 1.5, 2.5}, {0},
     "nearest", "half_pixel", "round_prefer_floor", 0, {0}, 0},
    {"nearest round_prefer_ceil down", 13, 4, {1, 3, 9, 8}, {1, 1, 0.7, 0.4}, {0}, "nearest",
     "half_pixel", "round_prefer_ceil", 0, {0}, 0},
    {"nearest ceil align_corners", 13, 4, {1, 2, 5, 6}, {0}, {1, 2, 7, 11}, "nearest",
     "align_corners", "ceil", 0, {0}, 0},
    {"nearest tf_half_pixel_for_nn", 11, 4, {1, 2, 5, 6}, {1, 1, 1.6, 2}, {0}, "nearest",
     "tf_half_pixel_for_nn", "round_prefer_floor", 0, {0}, 0},
    {"nearest only the width x2", 13, 4, {1, 2, 4, 5}, {1, 1, 1, 2}, {0}, "nearest",
     "asymmetric", "floor", 0, {0}, 0},
    {"nearest only the height x2", 13, 4, {1, 2, 4, 5}, {1, 1, 2, 1}, {0}, "nearest",
     "asymmetric", "floor", 0, {0}, 0},
    {"nearest exclude_outside", 13, 4, {1, 2, 5, 6}, {1, 1, 1.5, 0.5}, {0}, "nearest",
     "half_pixel", "round_prefer_ceil", 1, {0}, 0},
    {"linear 1.9 x 2.1, large enough to split", 13, 4, {1, 21, 37, 45}, {1, 1, 1.9, 2.1}, {0},
     "linear", "half_pixel", NULL, 0, {0}, 0},
    {"nearest x2, large enough to split", 13, 4, {1, 21, 37, 45}, {1, 1, 2, 2}, {0}, "nearest",
     "asymmetric", "floor", 0, {0}, 0},
    {"nearest infinities", 13, 4, {1, 2, 3, 4}, {1, 1, 2, 2}, {0}, "nearest", "asymmetric",
     "floor", 0, {0}, 1},
};

static uint32_t rng = 7;

static double rnd(void)
{
	rng = rng * 1664525u + 1013904223u;
	return (double)(rng >> 8) / (double)(1u << 24) * 4.0 - 2.0;
}

/* Runs Resize on x of dtype dt (input values v), at `threads`. */
static int run_case(const rcase *c, gc_dtype dt, const double *v, int64_t n, int threads,
		    harness_run *h)
{
	void *x = malloc((size_t)n * 8);
	for (int64_t i = 0; i < n; i++) {
		if (dt == GC_DTYPE_FLOAT)
			((float *)x)[i] = (float)v[i];
		else
			((double *)x)[i] = v[i];
	}
	int r = c->rank;
	float scales[5], roi[10];
	for (int i = 0; i < r; i++) {
		scales[i] = (float)c->scales[i];
		roi[i] = (float)c->roi[i];
		roi[r + i] = (float)c->roi[r + i];
	}
	bool crop = !strcmp(c->ct, "tf_crop_and_resize");
	gc_tensor tx = harness_tensor(dt, r, c->dims, x);
	gc_tensor troi = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){2 * r}, roi);
	gc_tensor ts = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){r}, scales);
	gc_tensor tz = harness_tensor(GC_DTYPE_INT64, 1, (int64_t[]){r}, c->sizes);
	gc_tensor *ins[] = {&tx, crop ? &troi : NULL, c->scales[0] ? &ts : NULL,
			    c->scales[0] ? NULL : &tz};
	gc_attr attrs[4] = {
	    {.name = "mode", .type = GC_ATTR_STRING, .n = (int)strlen(c->mode), .v.s = c->mode},
	    {.name = "coordinate_transformation_mode",
	     .type = GC_ATTR_STRING,
	     .n = (int)strlen(c->ct),
	     .v.s = c->ct},
	    {.name = "exclude_outside", .type = GC_ATTR_INT, .v.i = c->exclude},
	    {.name = "nearest_mode",
	     .type = GC_ATTR_STRING,
	     .n = c->nm ? (int)strlen(c->nm) : 0,
	     .v.s = c->nm}};
	harness_threads = threads;
	int rc = harness_op(h, gc_prepare_Resize, "Resize", c->opset, 4, ins, 1, c->nm ? 4 : 3,
			    attrs);
	harness_threads = 1;
	if (rc)
		fprintf(stderr, "  %s: %s\n", c->name, h->err.msg);
	free(x);
	return rc;
}

static int close_to(double got, double want)
{
	if (isnan(want) || isinf(want))
		return isnan(want) ? isnan(got) : got == want;
	return fabs(got - want) <= 2e-6 * fmax(1.0, fabs(want));
}

static void test_float_path_matches_double(void)
{
	for (int ci = 0; ci < LEN(cases); ci++) {
		const rcase *c = &cases[ci];
		int64_t n = 1;
		for (int i = 0; i < c->rank; i++)
			n *= c->dims[i];
		double *v = malloc((size_t)n * sizeof *v);
		for (int64_t i = 0; i < n; i++)
			v[i] = rnd();
		if (c->infs) {
			v[1] = INFINITY;
			v[n / 2] = -INFINITY;
			v[n - 1] = INFINITY;
		}
		harness_run hd, hf[3];
		int rc = run_case(c, GC_DTYPE_DOUBLE, v, n, 1, &hd);
		for (int t = 0; t < 3; t++)
			rc = rc ? rc : run_case(c, GC_DTYPE_FLOAT, v, n, t + 1, &hf[t]);
		CHECK_INT(rc, 0);
		int64_t m = gc_tensor_numel(&hd.out[0]);
		CHECK_INT(gc_tensor_numel(&hf[0].out[0]), m);
		const double *want = hd.out[0].data;
		const float *got = hf[0].out[0].data;
		for (int64_t i = 0; i < m; i++)
			if (!close_to(got[i], want[i])) {
				fprintf(stderr, "  %s: element %lld is %.9g, float64 path %.9g\n",
					c->name, (long long)i, got[i], want[i]);
				CHECK(0);
			}
		for (int t = 1; t < 3; t++)
			if (memcmp(hf[t].out[0].data, got, (size_t)m * sizeof *got)) {
				fprintf(stderr, "  %s: %d threads differ from 1\n", c->name, t + 1);
				CHECK(0);
			}
		harness_free(&hd);
		for (int t = 0; t < 3; t++)
			harness_free(&hf[t]);
		free(v);
	}
}

TEST_MAIN(TEST(test_float_path_matches_double))
