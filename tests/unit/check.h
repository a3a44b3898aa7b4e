/*
 * A small test runner: each test is a function; CHECK* macros print both
 * values and file:line on failure. main() comes from TEST_MAIN(...) (or,
 * for a table of cases, a macro over check_run_all_ such as expect.h's
 * OP_CASES_MAIN), prints "N passed, N failed" and exits non-zero on failure.
 */
#ifndef GC_CHECK_H
#define GC_CHECK_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int check_failed_;

/* The directory of the running test binary, <build>/tests, into dir (n
 * bytes): the fixtures the build puts beside it are found from there
 * (<build>/plugins, <build>/tests/packages, <build>/../models). 0, or -1
 * when /proc/self/exe cannot be read. */
static inline int check_exe_dir(char *dir, size_t n)
{
	ssize_t len = readlink("/proc/self/exe", dir, n - 1);
	if (len <= 0)
		return -1;
	dir[len] = 0;
	char *slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = 0;
	return 0;
}

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
			check_failed_ = 1;                                     \
			return;                                                \
		}                                                              \
	} while (0)

#define CHECK_INT(a, b)                                                        \
	do {                                                                   \
		long long a_ = (long long)(a), b_ = (long long)(b);            \
		if (a_ != b_) {                                                \
			fprintf(stderr, "%s:%d: %s == %s failed: %lld vs %lld\n", __FILE__, \
				__LINE__, #a, #b, a_, b_);                     \
			check_failed_ = 1;                                     \
			return;                                                \
		}                                                              \
	} while (0)

#define CHECK_STR(a, b)                                                        \
	do {                                                                   \
		const char *a_ = (a), *b_ = (b);                               \
		if (!a_ || !b_ || strcmp(a_, b_)) {                            \
			fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" vs \"%s\"\n", __FILE__, \
				__LINE__, #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
			check_failed_ = 1;                                     \
			return;                                                \
		}                                                              \
	} while (0)

/* Substring check, for error messages. */
#define CHECK_CONTAINS(hay, needle)                                            \
	do {                                                                   \
		const char *h_ = (hay), *n_ = (needle);                        \
		if (!h_ || !strstr(h_, n_)) {                                  \
			fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, \
				__LINE__, h_ ? h_ : "(null)", n_);             \
			check_failed_ = 1;                                     \
			return;                                                \
		}                                                              \
	} while (0)

/* An API call that must refuse its arguments: GC_EINVAL, and a message
 * holding needle. `call` may use `err` (a gc_error * of its own). */
#define EXPECT_EINVAL(call, needle)                                                                \
	do {                                                                                       \
		gc_error e_ = { 0 };                                                               \
		gc_error *err = &e_;                                                               \
		(void)err;                                                                         \
		CHECK_INT((call), GC_EINVAL);                                                      \
		CHECK_INT(e_.code, GC_EINVAL);                                                     \
		CHECK_CONTAINS(e_.msg, needle);                                                    \
	} while (0)

#define CHECK_NEAR(a, b, tol)                                                  \
	do {                                                                   \
		double a_ = (double)(a), b_ = (double)(b);                     \
		if (!(fabs(a_ - b_) <= (tol))) {                               \
			fprintf(stderr, "%s:%d: %s ~= %s failed: %.9g vs %.9g (tol %g)\n", \
				__FILE__, __LINE__, #a, #b, a_, b_, (double)(tol)); \
			check_failed_ = 1;                                     \
			return;                                                \
		}                                                              \
	} while (0)

typedef struct {
	const char *name;
	void (*fn)(void);
} check_case_;

/* Runs the n cases (or only the one named argv[1]): run(i) runs case i and
 * sets check_failed_ on a failed check. Prints "N passed, N failed". */
static inline int check_run_all_(int argc, char **argv, size_t n, const char *(*name)(size_t),
				 void (*run)(size_t))
{
	int passed = 0, failed = 0;
	for (size_t i = 0; i < n; i++) {
		if (argc > 1 && strcmp(argv[1], name(i)))
			continue;
		check_failed_ = 0;
		run(i);
		if (check_failed_) {
			failed++;
			fprintf(stderr, "FAIL %s\n", name(i));
		} else {
			passed++;
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

#define TEST_MAIN(...)                                                         \
	static const check_case_ check_cases_[] = { __VA_ARGS__ };            \
	static const char *check_name_(size_t i) { return check_cases_[i].name; } \
	static void check_run_(size_t i) { check_cases_[i].fn(); }           \
	int main(int argc, char **argv)                                        \
	{                                                                      \
		return check_run_all_(argc, argv,                              \
				      sizeof check_cases_ / sizeof check_cases_[0], \
				      check_name_, check_run_);                \
	}

#define TEST(fn) { #fn, fn }

#endif
