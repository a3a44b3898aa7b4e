/*
 * What graphcc declines of ONNX's default domain, by name, with the
 * reason: one row per op version or type. The compiler refuses a node
 * whose op has a version row (what == NULL) at or below the model's opset,
 * naming the row; type and attribute rows (what != NULL) document what the
 * op's kernel refuses by name at compile time. tools/opsets/gen-operators.py
 * prints every row into docs/operators.md (through `graphcc ops`).
 *
 * Remove a row when the op version is implemented; add one when a new
 * opset changes an op's meaning before its kernel follows.
 */
#include "ops.h"

#include <string.h>

const gc_op_decline gc_op_declines[] = {
	/* ops graphcc has no kernel for: none at present (a row here is
	 * { "Op", version, NULL, "why" }) */
	/* element types and attributes kernels refuse */
	{ "Attention", 23, "float64",
	  "Q, K, V of type float64 (ONNX Runtime 1.30 has float32 and float16 kernels only)" },
	{ "RMSNormalization", 23, "scale of another type than X",
	  "X, scale and Y of one float type (the spec lets scale and Y differ from X)" },
	{ "RMSNormalization", 23, "stash_type != 1",
	  "stash_type other than 1 (float32): the statistics are always computed in float32" },
	{ "LayerNormalization", 17, "stash_type != 1",
	  "stash_type other than 1 (float32): the statistics are always computed in float32" },
	{ "GroupNormalization", 21, "stash_type != 1",
	  "stash_type other than 1 (float32): the statistics are always computed in float32" },
	{ "QuantizeLinear", 23, "precision != 1",
	  "precision other than 1: x / y_scale is divided in float32" },
	{ "ImageDecoder", 20, "BMP, GIF, TIFF, WebP, JPEG 2000, PNM; CMYK JPEGs",
	  "graphcc decodes JPEG (libjpeg) and PNG (libpng), opened on first use; other formats "
	  "and CMYK JPEGs are refused by name (ONNX Runtime 1.30 has no ImageDecoder kernel)" },
	{ "RegexFullMatch", 20, "RE2 syntax PCRE2 reads otherwise",
	  "patterns run on PCRE2 set up as RE2 (UTF-8, ASCII \\d \\w \\s \\b, whole-string "
	  "matches without backtracking); backreferences, lookaround, atomic and conditional "
	  "groups are refused as RE2 refuses them; PCRE2 also accepts possessive quantifiers "
	  "(a*+), \\Z, \\G and repetitions past {1000}, which RE2 refuses; a string that is "
	  "not UTF-8 matches nothing; needs libpcre2-8-0, loaded on first use" },
};

const int gc_op_n_declines = (int)(sizeof gc_op_declines / sizeof gc_op_declines[0]);

const gc_op_decline *gc_op_declined(const char *op_type, int64_t opset)
{
	const gc_op_decline *found = NULL;
	for (int i = 0; op_type && i < gc_op_n_declines; i++) {
		const gc_op_decline *d = &gc_op_declines[i];
		if (!d->what && d->since <= opset && !strcmp(d->op, op_type) &&
		    (!found || d->since > found->since))
			found = d;
	}
	return found;
}
