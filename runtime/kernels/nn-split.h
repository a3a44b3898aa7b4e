/*
 * Cutting a kernel's items into parts for gc_nn_parallel (nn-par.h), whose
 * threads take their home range of the parts from the front and, when it
 * is done, other ranges' parts from the back: parts that shrink toward the
 * end of each range ("guided"), so that the threads finish together.
 *
 * Parts of equal size (gc_nn_par_parts: a few a thread) leave the threads
 * apart by up to a part at the end of a job: whichever claims the last part
 * runs it while the others wait. At 2 threads with 8 parts that was ~half a
 * part, 5-10 % of a convolution's time (traced per part on resnet50: issue
 * 19); the threads also run at slightly different speeds (a part on the
 * worker took up to 10 % longer than on the caller), which equal parts
 * cannot absorb. So the items are cut into `threads` home ranges of about
 * equal size, the pool's ranges of parts, and each range into up to
 * GC_NN_HOME_PARTS parts of half of it, a quarter, an eighth, ..., the last
 * at least `least` items: few claims and long runs through the same
 * weights first, and small parts at the ends for the others to take.
 * Items numbered by place in the output (rows, pixel panels) keep each
 * thread on the same places from one node to the next.
 */
#ifndef GC_K_NN_SPLIT_H
#define GC_K_NN_SPLIT_H

#include <stdint.h>

#include "nn-par.h"

#define GC_NN_HOME_PARTS 6

/* Parts of each home range of `items` at `threads` threads (> 1), or 0
 * when the items are too few to share out so: then a part is an item. */
static inline int gc_nn_home_parts(int64_t items, int threads, int64_t least)
{
	int64_t n = items / threads; /* the smallest range */
	least = least > 1 ? least : 1;
	if (n < 2 * least)
		return 0;
	int k = 1;
	while (k < GC_NN_HOME_PARTS && (n >> k) >= least)
		k++;
	return k;
}

/* How many guided parts `items` make at `threads` threads (parts of at
 * least `least` items, the last of a range maybe fewer); 1 at one thread. */
static inline int gc_nn_guided_parts(int64_t items, int threads, int64_t least)
{
	if (threads <= 1 || items <= 1)
		return 1;
	int k = gc_nn_home_parts(items, threads, least);
	return k ? threads * k : (int)items;
}

/* [*lo, *hi): guided part `part` of `items` (gc_nn_guided_parts made
 * `parts` of them; parts == 1: all of them). */
static inline void gc_nn_guided_range(int64_t items, int threads, int64_t least, int part,
				      int parts, int64_t *lo, int64_t *hi)
{
	int k = parts <= 1 ? 0 : gc_nn_home_parts(items, threads, least);
	if (parts <= 1 || !k) {
		*lo = parts <= 1 ? 0 : part;
		*hi = parts <= 1 ? items : part + 1;
		return;
	}
	int s = part / k, i = part % k;
	int64_t r0 = items * s / threads, n = items * (s + 1) / threads - r0;
	*lo = r0 + n - (n >> i);
	*hi = i + 1 < k ? r0 + n - (n >> (i + 1)) : r0 + n;
}

#endif
