/*
 * Cutting a kernel's items into parts for gc_nn_parallel (nn-par.h), whose
 * threads claim parts one at a time in order: parts that shrink toward the
 * end ("guided"), so that the threads finish together.
 *
 * Parts of equal size (gc_nn_par_parts: a few a thread) leave the threads
 * apart by up to a part at the end of a job: whichever claims the last part
 * runs it while the others wait. At 2 threads with 8 parts that was ~half a
 * part, 5-10 % of a convolution's time (traced per part on resnet50: issue
 * 19); the threads also run at slightly different speeds (a part on the
 * worker took up to 10 % longer than on the caller), which equal parts
 * cannot absorb. Guided parts take 1 / (2 x threads) of the items left
 * each, down to `least` items: the first are as large as an even share's
 * half (few claims, long runs through the same weights), the last a single
 * item, so the threads end at most about one item apart.
 */
#ifndef GC_K_NN_SPLIT_H
#define GC_K_NN_SPLIT_H

#include <stdint.h>

#include "nn-par.h"

/* Items of guided part `left` items from the end, of `threads` threads. */
static inline int64_t gc_nn_guided_step(int64_t left, int threads, int64_t least)
{
	int64_t d = 2 * (int64_t)(threads > 1 ? threads : 1);
	int64_t n = (left + d - 1) / d;
	n = n < least ? least : n;
	return n < left ? n : left;
}

/* How many guided parts `items` make at `threads` threads (parts of at
 * least `least` items, the last maybe fewer); 1 at one thread. */
static inline int gc_nn_guided_parts(int64_t items, int threads, int64_t least)
{
	if (threads <= 1 || items <= 1)
		return 1;
	int parts = 0;
	for (int64_t left = items; left > 0; parts++)
		left -= gc_nn_guided_step(left, threads, least);
	return parts;
}

/* [*lo, *hi): guided part `part` of `items` (gc_nn_guided_parts made
 * `parts` of them; parts == 1: all of them). */
static inline void gc_nn_guided_range(int64_t items, int threads, int64_t least, int part,
				      int parts, int64_t *lo, int64_t *hi)
{
	if (parts <= 1) {
		*lo = 0;
		*hi = items;
		return;
	}
	int64_t at = 0, n = gc_nn_guided_step(items, threads, least);
	for (int p = 0; p < part; p++) {
		at += n;
		n = gc_nn_guided_step(items - at, threads, least);
	}
	*lo = at;
	*hi = at + n;
}

#endif
