/* Text and encoded data: X(Name, min_in, max_in, min_out, max_out).
 * StringConcat and StringSplit (opset 20) in text-string.c,
 * RegexFullMatch (20) in text-regex.c, ImageDecoder (20) in
 * image-decode.c. */
#ifndef GC_K_TEXT_H
#define GC_K_TEXT_H

#define GC_OPS_TEXT(X)                                                                             \
	X(TfIdfVectorizer, 1, 1, 1, 1)                                                             \
	X(StringNormalizer, 1, 1, 1, 1)                                                            \
	X(StringConcat, 2, 2, 1, 1)                                                                \
	X(RegexFullMatch, 1, 1, 1, 1)                                                              \
	X(ImageDecoder, 1, 1, 1, 1)                                                                \
	X(StringSplit, 1, 1, 1, 2)

#endif
