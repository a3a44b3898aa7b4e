/* Text: X(Name, min_in, max_in, min_out, max_out). */
#ifndef GC_K_TEXT_H
#define GC_K_TEXT_H

#define GC_OPS_TEXT(X)                                                                             \
	X(TfIdfVectorizer, 1, 1, 1, 1)                                                             \
	X(StringNormalizer, 1, 1, 1, 1)

#endif
