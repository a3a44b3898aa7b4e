/* Object-detection ops: X(Name, min_in, max_in, min_out, max_out). */
#ifndef GC_K_DETECTION_H
#define GC_K_DETECTION_H

#define GC_OPS_DETECTION(X)                                                                        \
	X(NonMaxSuppression, 2, 5, 1, 1)                                                           \
	X(RoiAlign, 3, 3, 1, 1)                                                                    \
	X(MaxRoiPool, 2, 2, 1, 1)

#endif
