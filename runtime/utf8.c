#include "utf8.h"

bool gc_utf8_next(const unsigned char *s, size_t len, size_t *at, uint32_t *cp)
{
	size_t i = *at;
	if (i >= len)
		return false;
	unsigned char b = s[i];
	if (b < 0x80) {
		*cp = b;
		*at = i + 1;
		return true;
	}
	size_t n;
	uint32_t v, min;
	if (b >= 0xC2 && b <= 0xDF) {
		n = 2, v = b & 0x1F, min = 0x80;
	} else if (b >= 0xE0 && b <= 0xEF) {
		n = 3, v = b & 0x0F, min = 0x800;
	} else if (b >= 0xF0 && b <= 0xF4) {
		n = 4, v = b & 0x07, min = 0x10000;
	} else {
		return false; /* a continuation byte, C0/C1 (overlong) or F5..FF */
	}
	if (len - i < n)
		return false;
	for (size_t k = 1; k < n; k++) {
		if ((s[i + k] & 0xC0) != 0x80)
			return false;
		v = v << 6 | (s[i + k] & 0x3F);
	}
	if (v < min || !gc_utf8_scalar(v))
		return false;
	*cp = v;
	*at = i + n;
	return true;
}

size_t gc_utf8_len(uint32_t cp)
{
	return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

size_t gc_utf8_put(uint32_t cp, char *out)
{
	unsigned char *o = (unsigned char *)out;
	if (cp < 0x80) {
		o[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (unsigned char)(0xC0 | cp >> 6);
		o[1] = (unsigned char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (unsigned char)(0xE0 | cp >> 12);
		o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
		o[2] = (unsigned char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (unsigned char)(0xF0 | cp >> 18);
	o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
	o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
	o[3] = (unsigned char)(0x80 | (cp & 0x3F));
	return 4;
}

bool gc_utf8_valid(const char *s, size_t len, size_t *bad, size_t *n_cp)
{
	size_t at = 0, n = 0;
	uint32_t cp;
	while (at < len) {
		if (!gc_utf8_next((const unsigned char *)s, len, &at, &cp)) {
			if (bad)
				*bad = at;
			return false;
		}
		n++;
	}
	if (n_cp)
		*n_cp = n;
	return true;
}
