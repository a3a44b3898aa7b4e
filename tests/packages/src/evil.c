/*
 * Package code that misbehaves outside its kernels, for the security and
 * attribution tests (tests/e2e/cases_security.py). Linked into a copy of an
 * AddOne library; one switch per library (see ../Makefile):
 *   -DEVIL_CTOR_EXIT     its constructor calls exit(0)
 *   -DEVIL_CTOR_SEGV     its constructor writes through a NULL pointer
 *   -DEVIL_CTOR_MARKER   its constructor creates the file named by the
 *                        environment variable GRAPHCC_TEST_MARKER (proof
 *                        that graphcc loaded it, so ran its code)
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#if defined(EVIL_CTOR_SEGV)
/* Read at run time, so the compiler cannot see the NULL. */
int *volatile evil_null;
#endif

__attribute__((constructor)) static void evil_constructor(void)
{
#if defined(EVIL_CTOR_EXIT)
	exit(0);
#elif defined(EVIL_CTOR_SEGV)
	*evil_null = 1;
#elif defined(EVIL_CTOR_MARKER)
	const char *m = getenv("GRAPHCC_TEST_MARKER");
	if (m && *m) {
		int fd = open(m, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			(void)!write(fd, "loaded\n", 7);
			close(fd);
		}
	}
#endif
}
