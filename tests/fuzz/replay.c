/*
 * Runs a libFuzzer target's input function over files, without libFuzzer:
 * built with the normal compiler (and SAN=1) for every target, so that
 * `make test` runs the targets' code and checks the seeds.
 *
 *   fuzz-replay-<target> [--refuse-ok] FILE...
 *
 * Each file is one input. Without --refuse-ok a file the reader refuses
 * fails (the seeds must reach past the reader: a stale corpus once stopped
 * every input at the format-version check); with it (regression inputs) a
 * refusal is fine but a crash or a refusal without a message is not.
 * Prints one line per file and exits 1 if any failed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern int fuzz_refusals;

int main(int argc, char **argv)
{
	int refuse_ok = argc > 1 && !strcmp(argv[1], "--refuse-ok");
	LLVMFuzzerInitialize(&argc, &argv);
	int failed = 0;
	for (int i = 1 + refuse_ok; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			printf("FAIL %s: cannot open\n", argv[i]);
			failed++;
			continue;
		}
		size_t cap = 1 << 16, n = 0;
		uint8_t *buf = malloc(cap);
		size_t got;
		while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
			n += got;
			if (n == cap) {
				uint8_t *nb = realloc(buf, cap *= 2);
				if (!nb)
					free(buf);
				buf = nb;
			}
		}
		fclose(f);
		if (!buf) {
			printf("FAIL %s: out of memory\n", argv[i]);
			failed++;
			continue;
		}
		int before = fuzz_refusals;
		LLVMFuzzerTestOneInput(buf, n);
		free(buf);
		if (fuzz_refusals != before && !refuse_ok) {
			printf("FAIL %s: its reader refused it\n", argv[i]);
			failed++;
		} else {
			printf("PASS %s%s\n", argv[i], fuzz_refusals != before ? " (refused)" : "");
		}
	}
	return failed ? 1 : 0;
}
