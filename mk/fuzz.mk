# Fuzzing and valgrind (issue 8).
#   make fuzz [FUZZ_SECONDS=N]   build the libFuzzer targets with clang
#                                (-fsanitize=fuzzer,address,undefined) and
#                                run each for N seconds from the seeds
#                                tests/fuzz/make-seeds.py generates
#   make valgrind                representative graphcc commands under valgrind
#                                (zero errors, zero definitely-lost bytes)
FUZZ_SECONDS ?= 60
FUZZ_B       := build-fuzz
FUZZ_CC      ?= clang
FUZZ_TARGETS := onnx manifest npy pb gcb
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(FUZZ_B)/fuzz/fuzz-%)

.PHONY: fuzz fuzz-build fuzz-libs fuzz-seeds valgrind

# The libraries are built by this same Makefile in $(FUZZ_B) with clang,
# the sanitizers (SAN=1) and libFuzzer's coverage instrumentation; the
# fixture package for the manifest target is built into $(FUZZ_B) too.
fuzz-libs:
	@$(MAKE) --no-print-directory $(PAR) B=$(FUZZ_B) CC=$(FUZZ_CC) SAN=1 \
		EXTRA_CFLAGS="-fsanitize=fuzzer-no-link -Wno-error" \
		$(FUZZ_B)/lib/libgraphcc.a $(FUZZ_B)/lib/libgraphcc-runtime.a plugins

# The seed corpora are generated from the current writers (a committed
# corpus went stale once): tests/fuzz/make-seeds.py, with this build's
# graphcc for the .gcb seeds.
FUZZ_SEEDS := $(FUZZ_B)/seeds
fuzz-seeds: $(GRAPHCC) plugins
	@$(PYTHON) tests/fuzz/make-seeds.py $(GRAPHCC) $(FUZZ_SEEDS)

# The targets' input functions under the normal compiler, with a replay
# main (tests/fuzz/replay.c): tests/suites/fuzz-seeds runs them on the
# generated seeds in `make test` (and SAN=1).
FUZZ_REPLAY := $(FUZZ_TARGETS:%=$(B)/fuzz-replay/fuzz-%)
TEST_DEPS += $(FUZZ_REPLAY)
$(B)/fuzz-replay/fuzz-%: tests/fuzz/fuzz-%.c tests/fuzz/fuzz-common.h tests/fuzz/replay.c $(LIB_A) $(RUNTIME_A)
	@mkdir -p $(dir $@)
	@echo "  REPLAY  $@"
	@$(CC) $(CFLAGS) tests/fuzz/fuzz-$*.c tests/fuzz/replay.c -o $@ \
		$(LIB_A) $(RUNTIME_A) $(LDSAN) $(LDLIBS)

$(FUZZ_B)/fuzz/fuzz-%: tests/fuzz/fuzz-%.c tests/fuzz/fuzz-common.h fuzz-libs
	@mkdir -p $(dir $@)
	@echo "  FUZZ    $@"
	@$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -g -O1 -Iinclude -I$(FUZZ_B)/gen \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		$< -o $@ $(FUZZ_B)/lib/libgraphcc.a $(FUZZ_B)/lib/libgraphcc-runtime.a $(LDLIBS)

fuzz-build: $(FUZZ_BINS)

# Each target runs FUZZ_SECONDS on a scratch copy of its seed corpus (new
# inputs land in $(FUZZ_B)/corpus/, never in the committed seeds); a crash
# leaves its input in $(FUZZ_B)/crashes/ and fails the target.
fuzz: fuzz-build fuzz-seeds
	@fail=0; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_B)/corpus/$$t $(FUZZ_B)/crashes $(FUZZ_SEEDS)/regress/$$t; \
		GRAPHCC_FUZZ_LIBDIR=$(abspath $(FUZZ_B)/plugins/seed-lenet/lib) \
		ASAN_OPTIONS=detect_leaks=1 \
		$(FUZZ_B)/fuzz/fuzz-$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
			-max_len=65536 -print_final_stats=1 -artifact_prefix=$(FUZZ_B)/crashes/$$t- \
			$(FUZZ_B)/corpus/$$t $(FUZZ_SEEDS)/seeds/$$t $(FUZZ_SEEDS)/regress/$$t \
			> $(FUZZ_B)/fuzz-$$t.log 2>&1; \
		rc=$$?; \
		execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(FUZZ_B)/fuzz-$$t.log); \
		n=$$(ls $(FUZZ_B)/corpus/$$t | wc -l); \
		if [ $$rc = 0 ]; then echo "fuzz-$$t: $${execs:-?} executions in $(FUZZ_SECONDS) s, corpus $$n inputs, no crash"; \
		else fail=1; echo "fuzz-$$t: FAILED (exit $$rc) after $${execs:-?} executions; see $(FUZZ_B)/fuzz-$$t.log"; \
			grep -A12 -m1 'ERROR\|runtime error\|deadly signal' $(FUZZ_B)/fuzz-$$t.log; fi; \
	done; exit $$fail

valgrind: all test-packages
	@sh tests/fuzz/valgrind.sh $(GRAPHCC) $(B)/valgrind

