/* Resampling (resample.c; AffineGrid and GridSample: grid.c):
 * X(Name, min_in, max_in, min_out, max_out). */
#ifndef GC_K_RESAMPLE_H
#define GC_K_RESAMPLE_H

#define GC_OPS_RESAMPLE(X)                                                                         \
	X(Resize, 1, 4, 1, 1)                                                                      \
	X(Upsample, 1, 2, 1, 1)                                                                    \
	X(GridSample, 2, 2, 1, 1)                                                                  \
	X(AffineGrid, 2, 2, 1, 1)

#endif
