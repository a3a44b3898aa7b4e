/*
 * RegexFullMatch (opset 20): whether each string of X matches attribute
 * pattern as a whole. ONNX names RE2's syntax and ONNX Runtime runs RE2;
 * graphcc runs PCRE2 (C, Debian's libpcre2-8-0, loaded on first use:
 * ../extlib.h) in the setting closest to RE2:
 *
 *   - UTF-8 patterns and strings (PCRE2_UTF); a string that is not valid
 *     UTF-8 (only .pb inputs can hold one) matches nothing;
 *     \d \w \s \b are ASCII, as in RE2; `.` does not match "\n";
 *   - the whole string must match (PCRE2_ANCHORED | PCRE2_ENDANCHORED),
 *     `$` only at the very end (PCRE2_DOLLAR_ENDONLY), no \C;
 *   - matched with pcre2_dfa_match, an automaton that never backtracks, so
 *     that a pattern like (a+)+b takes polynomial time as in RE2, not the
 *     exponential time of a backtracking matcher;
 *   - refused at compile time, naming the node, as RE2 refuses them:
 *     backreferences (\1, \k<n>) and the (?... groups RE2 lacks (lookahead,
 *     lookbehind, atomic groups, recursion, conditionals, callouts); only
 *     flag groups (?imsU-:...), (?P<name>...) and (?<name>...) are kept.
 *
 * A run allocates PCRE2's match data (and a larger DFA workspace for a
 * pattern that outgrows the one on the stack): pcre2_dfa_match needs them,
 * they are written while matching, and the node's state (the compiled
 * pattern) must stay read-only for sessions that run it at once.
 *
 * Differences left (docs/operators.md): PCRE2 also accepts possessive
 * quantifiers (a*+), \Z and \G, and counted repetitions up to {65535}
 * (RE2 refuses them, or past {1000}); RE2's \pN classes and PCRE2's agree
 * on Unicode properties but not always on their version of Unicode.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../extlib.h"
#include "../ops.h"
#include "kutil.h"

typedef pcre2_code *(*compile_fn)(PCRE2_SPTR, PCRE2_SIZE, uint32_t, int *, PCRE2_SIZE *,
				  pcre2_compile_context *);
typedef void (*code_free_fn)(pcre2_code *);
typedef int (*error_message_fn)(int, PCRE2_UCHAR *, PCRE2_SIZE);
typedef int (*pattern_info_fn)(const pcre2_code *, uint32_t, void *);
typedef pcre2_match_data *(*md_create_fn)(uint32_t, pcre2_general_context *);
typedef void (*md_free_fn)(pcre2_match_data *);
typedef int (*dfa_match_fn)(const pcre2_code *, PCRE2_SPTR, PCRE2_SIZE, PCRE2_SIZE, uint32_t,
			    pcre2_match_data *, pcre2_match_context *, int *, PCRE2_SIZE);

enum { F_COMPILE, F_CODE_FREE, F_ERROR_MESSAGE, F_PATTERN_INFO, F_MD_CREATE, F_MD_FREE, F_DFA };
static const char *const pcre2_symbols[] = {"pcre2_compile_8",		 "pcre2_code_free_8",
					    "pcre2_get_error_message_8", "pcre2_pattern_info_8",
					    "pcre2_match_data_create_8", "pcre2_match_data_free_8",
					    "pcre2_dfa_match_8",	 NULL};
static gc_extlib pcre2_lib = GC_EXTLIB_INIT("libpcre2-8.so.0", "libpcre2-8-0", pcre2_symbols);

#define PCRE2_FN(type, i) ((type)gc_extlib_fn(&pcre2_lib, i))

typedef struct regex_plan {
	pcre2_code *code;
} regex_plan;

static void regex_free(void *state)
{
	regex_plan *p = state;
	if (p && p->code)
		PCRE2_FN(code_free_fn, F_CODE_FREE)(p->code);
	free(p);
}

/* The first (?... construct of pattern that RE2 does not have, or NULL. */
static const char *re2_lacks(const char *pat)
{
	bool in_class = false;
	for (const char *c = pat; *c; c++) {
		if (*c == '\\') {
			if (!c[1])
				break;
			c++;
			continue;
		}
		if (in_class) {
			in_class = *c != ']';
			continue;
		}
		if (*c == '[') {
			in_class = true;
			if (c[1] == '^')
				c++;
			if (c[1] == ']') /* a leading ] is a member */
				c++;
			continue;
		}
		if (c[0] != '(' || c[1] != '?')
			continue;
		const char *g = c + 2;
		if (*g == 'P' && g[1] == '<')
			continue;
		if (*g == '<' && g[1] != '=' && g[1] != '!')
			continue;
		while (*g && strchr("imsU-", *g))
			g++;
		if (*g == ':' || (g > c + 2 && *g == ')')) /* (?: (?i: (?i) */
			continue;
		return c;
	}
	return NULL;
}

static int run_regex(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const regex_plan *p = n->state;
	const gc_tensor *x = in[0];
	bool *y = out[0]->data;
	int64_t count = gc_tensor_numel(x);
	if (count == 0)
		return 0;
	pcre2_match_data *md = PCRE2_FN(md_create_fn, F_MD_CREATE)(1, NULL);
	if (!md)
		return gc_kerr(k, GC_ENOMEM, "cannot make PCRE2 match data");
	dfa_match_fn match = PCRE2_FN(dfa_match_fn, F_DFA);
	enum { SMALL = 512, BIG = 1 << 16 };
	int small[SMALL], *ws = small, ws_len = SMALL;
	for (int64_t i = 0; i < count; i++) {
		const char *s = gc_str_at(x, i);
		int rc = match(p->code, (PCRE2_SPTR)s, strlen(s), 0, PCRE2_ENDANCHORED, md, NULL,
			       ws, (PCRE2_SIZE)ws_len);
		if (rc == PCRE2_ERROR_DFA_WSSIZE && ws == small) {
			ws = malloc(sizeof(int) * BIG);
			if (!ws) {
				PCRE2_FN(md_free_fn, F_MD_FREE)(md);
				return gc_kerr(k, GC_ENOMEM, "cannot allocate PCRE2 workspace");
			}
			ws_len = BIG;
			i--;
			continue;
		}
		bool bad_utf8 = rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21;
		if (rc < 0 && rc != PCRE2_ERROR_NOMATCH && !bad_utf8) {
			PCRE2_UCHAR why[160];
			PCRE2_FN(error_message_fn, F_ERROR_MESSAGE)(rc, why, sizeof why);
			gc_kerr(k, GC_EUNSUPPORTED, "matching element %" PRId64 ": PCRE2: %s", i,
				(const char *)why);
			break;
		}
		y[i] = rc >= 0;
	}
	if (ws != small)
		free(ws);
	PCRE2_FN(md_free_fn, F_MD_FREE)(md);
	return gc_kok(k);
}

int gc_prepare_RegexFullMatch(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	if (!gc_attr_find(n, "pattern"))
		return gc_kerr(k, GC_EINVAL, "attribute 'pattern' is required");
	const char *pat = gc_attr_s(k, "pattern", "");
	if (gc_kok(k))
		return gc_kok(k);
	if (in[0]->dtype != GC_DTYPE_STRING)
		return gc_kerr(k, GC_EINVAL, "input 'X' has type %s; RegexFullMatch takes strings",
			       gc_dtype_name(in[0]->dtype));
	const char *bad = re2_lacks(pat);
	if (bad)
		return gc_kerr(k, GC_EINVAL,
			       "pattern '%s': RE2 syntax (which ONNX specifies) has no '%.3s' "
			       "groups (lookaround, atomic groups, recursion, conditionals)",
			       pat, bad);
	gc_error e = {0};
	if (gc_extlib_open(&pcre2_lib, &e))
		return gc_kerr(k, e.code, "RegexFullMatch needs PCRE2: %s", e.msg);
	regex_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	n->state_free = regex_free;
	int code;
	PCRE2_SIZE at;
	p->code =
	    PCRE2_FN(compile_fn, F_COMPILE)((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED,
					    PCRE2_UTF | PCRE2_ANCHORED | PCRE2_ENDANCHORED |
						PCRE2_DOLLAR_ENDONLY | PCRE2_NEVER_BACKSLASH_C,
					    &code, &at, NULL);
	if (!p->code) {
		PCRE2_UCHAR why[160];
		PCRE2_FN(error_message_fn, F_ERROR_MESSAGE)(code, why, sizeof why);
		return gc_kerr(k, GC_EINVAL,
			       "pattern '%s' is not a valid regular expression: %s "
			       "(at offset %zu)",
			       pat, (const char *)why, (size_t)at);
	}
	uint32_t backrefs = 0;
	PCRE2_FN(pattern_info_fn, F_PATTERN_INFO)(p->code, PCRE2_INFO_BACKREFMAX, &backrefs);
	if (backrefs)
		return gc_kerr(k, GC_EINVAL,
			       "pattern '%s': RE2 syntax (which ONNX specifies) has "
			       "no backreferences",
			       pat);
	gc_set_shape(out[0], GC_DTYPE_BOOL, in[0]->rank, in[0]->dims);
	n->run = run_regex;
	return 0;
}
