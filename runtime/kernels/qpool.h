/* MaxPool of 8-bit tensors over rows (qpool.c; pool.c calls it). */
#ifndef GC_K_QPOOL_H
#define GC_K_QPOOL_H

#include <stdbool.h>
#include <stdint.h>

#include "nn.h"

/* MaxPool without Indices of uint8 (or int8, sgn) x into y for channels
 * [c0, c1) of window w (1 or 2 spatial dims: w->in[0] == 1), each channel
 * in_sp inputs and out_sp outputs; buf holds the padded row (row_len bytes:
 * (out[2] - 1) stride[2] + (k[2] - 1) dil[2] + 1). A window wholly in the
 * padding gives the type's lowest value, as the window loops. */
void gc_maxpool8_rows(const gc_nn_window *w, bool sgn, bool v512, const void *x, void *y,
		      int64_t in_sp, int64_t out_sp, int64_t c0, int64_t c1, uint8_t *buf,
		      int64_t row_len);

/* Whether gc_maxpool8_rows may take its AVX-512 (BW, VBMI) loops (v512):
 * asked once at prepare. */
bool gc_maxpool8_v512(void);

#endif
