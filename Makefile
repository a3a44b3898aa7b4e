# graphcc: one Makefile builds everything into build/.
#   make            build build/bin/graphcc, the libraries and the plugins
#   make test       install missing dependencies, build, run every test
#   make demo       install missing dependencies, build, run the demo model
#   make help       list the targets

CC      ?= cc
PYTHON  ?= /usr/bin/python3
B       := build
OPT     ?= -O2
SAN     ?=

CFLAGS_BASE := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wpedantic -Werror -g $(OPT) -fPIC \
	-Iinclude -I$(B)/gen -MMD -MP
ifeq ($(SAN),thread)
CFLAGS_BASE += -fsanitize=thread -fno-omit-frame-pointer
LDSAN := -fsanitize=thread
# OpenBLAS is not instrumented (see the file); halt on the first real race.
export TSAN_OPTIONS := suppressions=$(abspath tests/tsan.supp) halt_on_error=1 exitcode=66 $(TSAN_OPTIONS)
endif
ifeq ($(SAN),1)
CFLAGS_BASE += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDSAN := -fsanitize=address,undefined
endif
# Under any sanitizer the kernels' helpers are compiled once, not inlined
# into every variant (runtime/kernels/sgemm-pack-impl.h).
CFLAGS_BASE += $(if $(SAN),-DGC_PK_GENERIC)
CFLAGS  := $(CFLAGS_BASE) $(EXTRA_CFLAGS)
# Shared libraries resolve every symbol they use (not under the sanitizers:
# clang leaves their runtime to the executable).
NO_UNDEFINED := $(if $(SAN),,-Wl,--no-undefined)
# The runtime needs only these; the compiler adds libyaml and protobuf-c.
RUNTIME_LDLIBS := -lcrypto -lxxhash -ldl -lm -lpthread
LDLIBS  := -lprotobuf-c -lyaml $(RUNTIME_LDLIBS)

RUNTIME_SRC := $(wildcard runtime/*.c runtime/kernels/*.c)
LIB_SRC     := $(wildcard lib/*.c)
TOOL_SRC    := $(wildcard tools/graphcc/*.c)
UNIT_SRC    := $(wildcard tests/unit/test-*.c)

GEN_C := $(B)/gen/onnx.pb-c.c
GEN_H := $(B)/gen/onnx.pb-c.h
ONNX_PROTO := /usr/include/onnx/onnx.proto

RUNTIME_OBJ := $(RUNTIME_SRC:%.c=$(B)/obj/%.o)
LIB_OBJ     := $(LIB_SRC:%.c=$(B)/obj/%.o) $(B)/obj/gen/onnx.pb-c.o
TOOL_OBJ    := $(TOOL_SRC:%.c=$(B)/obj/%.o)
UNIT_BIN    := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)

RUNTIME_A := $(B)/lib/libgraphcc-runtime.a
RUNTIME_SO := $(B)/lib/libgraphcc-runtime.so
LIB_A     := $(B)/lib/libgraphcc.a
GRAPHCC   := $(B)/bin/graphcc

.DEFAULT_GOAL := all

# Larger areas add their targets in mk/<area>.mk (conformance, fuzzing,
# install, ...). A fragment may add prerequisites to `test` with
# TEST_DEPS += ... and to `all` with ALL_DEPS += ...
-include $(wildcard mk/*.mk)

PLUGINS   := $(patsubst plugins/%/Makefile,%,$(wildcard plugins/*/Makefile))
PKG_FLAGS := GRAPHCC_INCLUDE=$(abspath include) CC="$(CC)" SAN=$(SAN)

.PHONY: all deps deps-build test unit e2e demo help clean format plugins test-packages bench-custom-call
EXAMPLES := $(patsubst tools/examples/%.c,$(B)/bin/example-%,$(wildcard tools/examples/*.c))

all: $(GRAPHCC) $(RUNTIME_SO) $(EXAMPLES) plugins $(ALL_DEPS)

# Op packages build like any user's package: their own Makefile, against
# include/ alone, into build/plugins/<name>/ (manifest copied beside lib/).
plugins:
	@for p in $(PLUGINS); do \
		$(MAKE) --no-print-directory -C plugins/$$p OUT=$(abspath $(B)/plugins)/$$p $(PKG_FLAGS) || exit 1; \
	done

# Fixture packages for the tests, broken ones included.
test-packages:
	@if [ -f tests/packages/Makefile ]; then \
		$(MAKE) --no-print-directory -C tests/packages OUT=$(abspath $(B)/tests/packages) $(PKG_FLAGS); \
	fi
	@$(MAKE) --no-print-directory -C tests/flavours OUT=$(abspath $(B)/tests/flavours) $(PKG_FLAGS)
	@$(MAKE) --no-print-directory -C tests/debug OUT=$(abspath $(B)/tests/debug) $(PKG_FLAGS)
	@$(MAKE) --no-print-directory -C tests/kbugs OUT=$(abspath $(B)/tests/kbugs) $(PKG_FLAGS)
	@$(MAKE) --no-print-directory -C tests/authors OUT=$(abspath $(B)/tests/authors) $(PKG_FLAGS)

help:
	@echo "make            build $(GRAPHCC), libraries and plugins"
	@echo "make test       install missing deps, build, run all tests (SAN=1: ASan+UBSan, SAN=thread: TSan)"
	@echo "make unit       run the C unit tests only"
	@echo "make e2e        run the end-to-end tests only (models, CLI, malformed inputs)"
	@echo "make demo       install missing deps, build, run the demo model"
	@echo "make deps       install missing Debian packages (tools/install-deps.sh)"
	@echo "make conformance  ONNX's node tests (ONLY=substr filters; conformance-failures lists reasons)"
	@echo "make onnx-new     generated tests of opsets 18-23 (ONLY=substr); onnx-new-generate rebuilds them with ONNX Runtime"
	@echo "make fuzz [FUZZ_SECONDS=N]  libFuzzer runs of the five readers (clang)"
	@echo "make valgrind   representative graphcc commands under valgrind"
	@echo "make install [PREFIX=/usr/local] [DESTDIR=]  / make uninstall"
	@echo "make bench-custom-call  measure the cost of a custom kernel call"
	@echo "make bench-host-services  2-thread speedup of a custom kernel using host services"
	@echo "make compile_commands.json  the compilation database of graphcc's sources (clang -MJ)"
	@echo "make bench [ONLY=resnet18,mlp] [THREADS=1]  graphcc vs ONNX Runtime (onnxruntime-node), table in $(B)/bench.md"
	@echo "make python     the Python module, in-tree into $(B)/python (PYTHONPATH=$(B)/python)"
	@echo "make wheel      a wheel of the Python module in $(B)/wheel (pip, no network)"
	@echo "make bench-python  Session.run's per-call cost vs the C API; two threads vs one"
	@echo "make format     clang-format the C sources"
	@echo "make clean      remove build/"

deps:
	@sh tools/install-deps.sh all

deps-build:
	@sh tools/install-deps.sh build

$(GEN_C) $(GEN_H): $(ONNX_PROTO)
	@mkdir -p $(B)/gen
	protoc-c --c_out=$(B)/gen -I/usr/include/onnx $(ONNX_PROTO)

$(B)/obj/gen/onnx.pb-c.o: $(GEN_C) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -fPIC -I$(B)/gen -c $< -o $@

# Everything in lib/ may include the generated header.
$(LIB_SRC:%.c=$(B)/obj/%.o): $(GEN_H)

# The unary math kernels read no errno: sqrt then vectorises (its loop is O3);
# so do LRN's roots (norm.c).
$(B)/obj/runtime/kernels/elementwise-unary.o: CFLAGS += -fno-math-errno
$(B)/obj/runtime/kernels/norm.o: CFLAGS += -fno-math-errno

# Objects depend on the flags they were built with (SAN=1 after a plain
# build rebuilds everything).
FLAGS_STAMP := $(B)/flags-$(shell echo '$(CC) $(CFLAGS)' | md5sum | cut -c1-12)
$(FLAGS_STAMP):
	@mkdir -p $(B) && rm -f $(B)/flags-* && touch $@

$(B)/obj/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(CFLAGS) -c $< -o $@

$(RUNTIME_A): $(RUNTIME_OBJ)
	@mkdir -p $(dir $@)
	@echo "  AR      $@"
	@rm -f $@ && ar rcs $@ $^

# The runtime alone, as a shared library: what a program that only runs
# compiled .gcb files links (no libyaml, no protobuf-c).
$(RUNTIME_SO): $(RUNTIME_OBJ) runtime/libgraphcc-runtime.map
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	@$(CC) -shared $(LDSAN) $(NO_UNDEFINED) -Wl,--version-script=runtime/libgraphcc-runtime.map -Wl,-soname,libgraphcc-runtime.so.0 \
		-o $@ $(RUNTIME_OBJ) $(RUNTIME_LDLIBS)

$(LIB_A): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	@echo "  AR      $@"
	@rm -f $@ && ar rcs $@ $^

$(GRAPHCC): $(TOOL_OBJ) $(LIB_A) $(RUNTIME_A)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	@$(CC) $(LDSAN) -o $@ $(TOOL_OBJ) $(LIB_A) $(RUNTIME_A) $(LDLIBS)

# Example programs using the public API.
$(B)/bin/example-%: tools/examples/%.c $(LIB_A) $(RUNTIME_A) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	@$(CC) $(CFLAGS) $< -o $@ $(LIB_A) $(RUNTIME_A) $(LDSAN) $(LDLIBS)

$(B)/tests/test-%: tests/unit/test-%.c $(wildcard tests/unit/*.h) $(LIB_A) $(RUNTIME_A)
	@mkdir -p $(dir $@)
	@echo "  TEST    $@"
	@$(CC) $(CFLAGS) -Iruntime -Iruntime/kernels -Ilib -Itests/unit $< -o $@ $(LIB_A) $(RUNTIME_A) $(LDSAN) $(LDLIBS)

# The sanitizer builds run the portable kernels (GC_PK_GENERIC) under
# instrumentation: test-nn-fast took 75 s alone under TSan, and over the
# 120 s hang bound beside another test on a slow day.
unit: $(UNIT_BIN) test-packages
	@UNIT_TIMEOUT=$(if $(SAN),480,120) sh tests/run-unit.sh $(UNIT_BIN)

e2e: all test-packages
	@$(PYTHON) tests/e2e/run.py --graphcc $(GRAPHCC) --work $(B)/e2e

# make test and make demo build on every core unless make was given -j.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
PAR = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS))

test: deps
	@$(MAKE) --no-print-directory $(PAR) all test-packages $(UNIT_BIN) $(TEST_DEPS)
	@$(PYTHON) tests/run-all.py --graphcc $(GRAPHCC) --work $(B) $(UNIT_BIN)

demo: deps
	@$(MAKE) --no-print-directory $(PAR) all
	@sh tools/demo.sh $(GRAPHCC) $(B)/demo

# Micro-benchmarks (not part of make test): the cost of a custom call.
bench-custom-call: $(LIB_A) $(RUNTIME_A)
	@$(MAKE) --no-print-directory -C tests/bench/noop OUT=$(abspath $(B)/bench/noop) GRAPHCC_INCLUDE=$(abspath include) CC="$(CC)"
	@$(CC) $(CFLAGS) -O2 tests/bench/bench-custom-call.c -o $(B)/bench/bench-custom-call $(LIB_A) $(RUNTIME_A) $(LDSAN) $(LDLIBS)
	@$(B)/bench/bench-custom-call $(B)/bench/noop/noop.yaml $(B)/bench/noop/lib

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(B)

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null) $(wildcard $(B)/tests/*.d)
