"""RegexFullMatch (opset 20): RE2 syntax, whole-string matches. The
reference is Python's re.fullmatch with re.ASCII (RE2's \\w \\d \\s \\b are
ASCII) where its syntax is RE2's, else the expected values written out;
ONNX Runtime (RE2) must agree. graphcc runs PCRE2 set up as RE2
(runtime/kernels/text-regex.c)."""
import re

import numpy as np

from caselib import Case, In


def strings(*v):
    return In(np.array(v, dtype=object), "string")


def by_re(pattern):
    rx = re.compile(pattern, re.ASCII)
    return lambda X: [np.vectorize(lambda s: rx.fullmatch(s) is not None, otypes=[bool])(X)
                      if X.size else np.zeros(X.shape, bool)]


def fixed(*v, shape=None):
    a = np.array(v, bool)
    return lambda X: [a.reshape(X.shape if shape is None else shape)]


def cases():
    def case(name, pattern, x, ref=None, **kw):
        return Case("regex_full_match20_" + name, "RegexFullMatch", 20, {"X": x},
                    attrs={"pattern": pattern}, ref=ref, **kw)
    # ONNX Runtime's own test patterns
    yield case("web", r"www\.[\w.-]+\.\bcom\b",
               strings("www.google.com", "www.facebook.com", "www.bbc.co.uk"),
               by_re(r"www\.[\w.-]+\.\bcom\b"))
    yield case("email", r"(\W|^)[\w.\-]{0,25}@(yahoo|gmail)\.com(\W|$)",
               strings(["account@gmail.com", "account@hotmail.com"],
                       ["not email", "account@yahoo.com"]),
               by_re(r"(\W|^)[\w.\-]{0,25}@(yahoo|gmail)\.com(\W|$)"))
    # whole string, alternation binds loosest
    yield case("alternation_whole", "a|bc", strings("a", "bc", "abc", "ab", ""),
               by_re("a|bc"))
    yield case("empty_pattern", "", strings("", "a", " "), by_re(""))
    yield case("case_flag_group", "(?i)hel+o(?-i:W)",
               strings("HeLLoW", "hellow", "helo W", "HELLLLOW"), by_re("(?i)hel+o(?-i:W)"))
    yield case("non_capturing_group", r"(?:ab)+(?:c|d)?", strings("abab", "ababc", "abd", "a"),
               by_re(r"(?:ab)+(?:c|d)?"))
    yield case("named_group", r"(?P<year>\d{4})-(?P<month>\d\d)",
               strings("2024-05", "24-05", "2024-5", "２０２４-05"),
               by_re(r"(?P<year>\d{4})-(?P<month>\d\d)"))
    # dot and newline, $ at the very end only, ASCII \w and \d
    yield case("dot_newline", "a.b", strings("a\nb", "axb", "a\u00e9b"), fixed(False, True, True))
    yield case("dollar_end_only", "ab$", strings("ab", "ab\n"), fixed(True, False))
    yield case("ascii_classes", r"\w+\s\d+", strings("abc 123", "é 1", "a\t٣", "a_1 0"),
               fixed(True, False, False, True))
    # Unicode properties and UTF-8 code points
    yield case("unicode_letters", r"\p{L}+", strings("héllo", "日本語", "abc1", ""),
               fixed(True, True, False, False))
    yield case("unicode_class_range", "[à-ÿ]{2}", strings("éè", "ea", "é"),
               fixed(True, False, False))
    # linear time: a backtracking matcher takes 2^n steps here
    yield case("no_backtracking_blowup", "(a+)+b", strings("a" * 40 + "c", "a" * 30 + "b"),
               fixed(False, True))
    yield case("shape_2d_repetition", "[0-9a-f]{2,4}", strings(["ff", "abcd"], ["abcde", "g"]),
               fixed(True, True, False, False, shape=(2, 2)))
    yield case("empty_input", "x*", In(np.zeros((0, 3), dtype=object), "string"),
               fixed(shape=(0, 3)))
    # errors: invalid patterns and what RE2 lacks, named with the node
    yield case("invalid_pattern", "x(", strings("x"), error="'x(' is not a valid regular "
               "expression", out_types={"Y": "bool"})
    yield case("backreference", r"(a)\1", strings("aa"),
               error="RE2 syntax (which ONNX specifies) has no backreferences",
               out_types={"Y": "bool"})
    yield case("lookahead", "(?=a)a", strings("a"), error="has no '(?=' groups",
               out_types={"Y": "bool"})
    yield case("atomic_group", "(?>a+)b", strings("aab"), error="has no '(?>' groups",
               out_types={"Y": "bool"})
    yield case("not_strings", "1", np.array([1, 2], np.int64), error="takes strings",
               out_types={"Y": "bool"})
