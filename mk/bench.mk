# make bench: graphcc and ONNX Runtime side by side (not part of make test).
#   make bench                          every model (tools/bench/zoo.py too), 1 and 2 threads
#   make bench ONLY=resnet18 THREADS=1  one model (or a comma list), one thread count
#   make bench ONLY=big BIG_DIM=8192     the big-weights rows alone, at issue 19's 1.5 GB
#   make bench BASELINE=build-old        also time build-old's worker (a copy of B made
#                                        before a change) in the same round-robin
# tools/bench/conv_classes.py: a model's convolutions by class (kernel, stride,
# output size), ms and GFLOP/s from graphcc's and ONNX Runtime's per-node profiles.
# $(B)/bench/kernel-time (tools/bench/kernel-time.c): one conv kernel's on-CPU ms.
# tools/bench/cpu_time.py: whole-model on-CPU ms per run (schedstat), graphcc (and a
# --baseline build) against ONNX Runtime, round-robin: comparable under heavy load.
# Writes the table to $(B)/bench.md. ONNX Runtime is the npm package
# onnxruntime-node, installed by `make bench-ort` into bench/node_modules/
# (ignored by git): a benchmark peer only, never a dependency of graphcc.
# Its install script would fetch GPU files; the CPU library is in the
# package, so the script is told to skip them.

ORT_NODE_VERSION ?= 1.30.0
BENCH_ORT_DIR    := bench/node_modules
BENCH_WORKER     := $(B)/bench/graphcc-worker
KERNEL_TIME      := $(B)/bench/kernel-time
THREADS          ?= 1,2
ONLY             ?=
BIG_DIM          ?= 2048
BASELINE         ?=

.PHONY: bench bench-ort

$(BENCH_WORKER): tools/bench/graphcc-worker.c $(LIB_A) $(RUNTIME_A)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	@$(CC) $(CFLAGS) $< -o $@ $(LIB_A) $(RUNTIME_A) $(LDSAN) $(LDLIBS)

# tools/bench/kernel-time.c: one conv kernel's on-CPU time, called directly
$(KERNEL_TIME): tools/bench/kernel-time.c $(RUNTIME_A)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	@$(CC) $(CFLAGS) $< -o $@ $(RUNTIME_A) $(LDSAN) $(RUNTIME_LDLIBS)

bench-ort:
	@if [ ! -f $(BENCH_ORT_DIR)/onnxruntime-node/package.json ]; then \
		command -v npm >/dev/null || { echo "bench: npm is needed to install onnxruntime-node (Debian package npm)" >&2; exit 1; }; \
		echo "  NPM     onnxruntime-node@$(ORT_NODE_VERSION) -> $(BENCH_ORT_DIR)"; \
		mkdir -p $(dir $(BENCH_ORT_DIR)) && \
		ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm install --prefix $(dir $(BENCH_ORT_DIR)) \
			--no-save --no-package-lock --no-audit --no-fund --loglevel=error \
			onnxruntime-node@$(ORT_NODE_VERSION) || exit 1; \
	fi

bench: deps
	@$(MAKE) --no-print-directory all $(BENCH_WORKER) bench-ort
	@mkdir -p $(B)/bench
	@$(MAKE) --no-print-directory bench-custom-call > $(B)/bench/custom-call.txt || \
		{ cat $(B)/bench/custom-call.txt; exit 1; }
	@$(PYTHON) tools/bench/bench.py --build $(B) --ort-modules $(BENCH_ORT_DIR) \
		--threads "$(THREADS)" --big-dim $(BIG_DIM) $(if $(ONLY),--only "$(ONLY)") \
		$(if $(BASELINE),--baseline-build "$(BASELINE)")

# tests/suites/bench-driver (part of make test) drives the worker; a plain
# make keeps it current too, since tools/bench/conv_classes.py runs it
# directly (a stale worker once timed an old kernel).
TEST_DEPS += $(BENCH_WORKER)
ALL_DEPS += $(BENCH_WORKER) $(KERNEL_TIME)

# make bench-host-services: the 2-thread speedup of gcx-ops' LinearGelu, a
# custom kernel using graphcc's host services (parallel_for, sgemm,
# temp_alloc), checked against NumPy first (not part of make test).
.PHONY: bench-host-services
bench-host-services: all
	@$(PYTHON) tools/bench/host_services.py $(GRAPHCC) $(B)/plugins/gcx-ops/gcx-ops.yaml \
		$(B)/bench/host-services
