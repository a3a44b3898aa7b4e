/* Ops that move, select or describe data without arithmetic
 * (shape.c, shape-move.c, shape-index.c, shape-crop.c).
 * X(Name, min_in, max_in, min_out, max_out). */
#ifndef GC_K_SHAPE_H
#define GC_K_SHAPE_H

#define GC_OPS_SHAPE(X)                                                                            \
	X(Constant, 0, 0, 1, 1)                                                                    \
	X(ConstantOfShape, 1, 1, 1, 1)                                                             \
	X(Identity, 1, 1, 1, 1)                                                                    \
	X(Dropout, 1, 3, 1, 2)                                                                     \
	X(Shape, 1, 1, 1, 1)                                                                       \
	X(Size, 1, 1, 1, 1)                                                                        \
	X(Reshape, 2, 2, 1, 1)                                                                     \
	X(Flatten, 1, 1, 1, 1)                                                                     \
	X(Squeeze, 1, 2, 1, 1)                                                                     \
	X(Unsqueeze, 1, 2, 1, 1)                                                                   \
	X(Transpose, 1, 1, 1, 1)                                                                   \
	X(Concat, 1, GC_ARITY_MAX, 1, 1)                                                           \
	X(Split, 1, 2, 1, GC_ARITY_MAX)                                                            \
	X(Slice, 1, 5, 1, 1)                                                                       \
	X(Gather, 2, 2, 1, 1)                                                                      \
	X(Expand, 2, 2, 1, 1)                                                                      \
	X(Pad, 1, 4, 1, 1)                                                                         \
	X(CenterCropPad, 2, 2, 1, 1)                                                               \
	X(Tile, 2, 2, 1, 1)                                                                        \
	X(Range, 3, 3, 1, 1)                                                                       \
	X(GatherElements, 2, 2, 1, 1)                                                              \
	X(GatherND, 2, 2, 1, 1)                                                                    \
	X(ScatterElements, 3, 3, 1, 1)                                                             \
	X(ScatterND, 3, 3, 1, 1)                                                                   \
	X(DepthToSpace, 1, 1, 1, 1)                                                                \
	X(SpaceToDepth, 1, 1, 1, 1)                                                                \
	X(Trilu, 1, 2, 1, 1)                                                                       \
	X(OneHot, 3, 3, 1, 1)

#endif
