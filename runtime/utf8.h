/* UTF-8: graphcc's strings are NUL-terminated bytes; text is UTF-8. */
#ifndef GC_UTF8_H
#define GC_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether cp is a Unicode scalar value (not a surrogate, at most U+10FFFF). */
static inline bool gc_utf8_scalar(uint32_t cp)
{
	return cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF);
}

/*
 * Decodes the code point at s[*at] (len bytes in all) and advances *at.
 * Returns false (leaving *at) on a malformed, overlong or truncated
 * sequence, a surrogate or a value above U+10FFFF.
 */
bool gc_utf8_next(const unsigned char *s, size_t len, size_t *at, uint32_t *cp);
/* Bytes that encode cp (1-4); cp must be a scalar value. */
size_t gc_utf8_len(uint32_t cp);
/* Writes cp's encoding to out (room for 4) and returns its length. */
size_t gc_utf8_put(uint32_t cp, char *out);
/*
 * Whether s (len bytes) is valid UTF-8; when not, *bad is the byte offset
 * of the first bad sequence. *n_cp (when non-NULL) counts code points.
 */
bool gc_utf8_valid(const char *s, size_t len, size_t *bad, size_t *n_cp);

#endif
