# The Python module `graphcc` (python/: C against CPython's and NumPy's C
# APIs, plus a small graphcc/__init__.py).
#   make python   build it in-tree into $(B)/python (PYTHONPATH=$(B)/python)
#   make wheel    a wheel in $(B)/wheel, built by the system's setuptools
#                 (pip install --no-build-isolation; no network)
# `make test` builds it and runs its pytest suite (tests/suites/python).
.PHONY: python wheel

PY_CFG := $(shell $(PYTHON) -c "import sysconfig as s; print(s.get_config_var('EXT_SUFFIX'), s.get_paths()['include'])" 2>/dev/null)
PY_EXT_SUFFIX := $(word 1,$(PY_CFG))
PY_INCLUDE := $(word 2,$(PY_CFG))
NUMPY_INCLUDE := $(shell $(PYTHON) -c "import numpy; print(numpy.get_include())" 2>/dev/null)
PY_C_SRC := $(wildcard python/graphcc/*.c)
PY_EXT := $(B)/python/graphcc/_graphcc$(PY_EXT_SUFFIX)
PY_PURE := $(patsubst python/%,$(B)/python/%,$(wildcard python/graphcc/*.py))
# CPython's headers are not -Wpedantic clean.
PY_CFLAGS := $(filter-out -Wpedantic,$(CFLAGS)) -fvisibility=hidden -I$(PY_INCLUDE) -I$(NUMPY_INCLUDE)

python: $(PY_EXT) $(PY_PURE)

$(PY_EXT): $(PY_C_SRC) python/graphcc/_graphcc.h $(LIB_A) $(RUNTIME_A) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo "  PYEXT   $@"
	@$(CC) $(PY_CFLAGS) -shared -o $@ $(PY_C_SRC) $(LIB_A) $(RUNTIME_A) $(LDSAN) $(LDLIBS) \
		-Wl,--exclude-libs,ALL

$(B)/python/graphcc/%.py: python/graphcc/%.py
	@mkdir -p $(dir $@)
	@cp $< $@

wheel: $(LIB_A) $(RUNTIME_A)
	@rm -rf $(B)/wheel
	GRAPHCC_BUILD=$(abspath $(B)) $(PYTHON) -m pip wheel --no-build-isolation --no-deps \
		--no-index -w $(B)/wheel .

TEST_DEPS += python

# Per-call cost of Session.run against the C API on the bench's Identity
# 1x1000 model, and two sessions in two threads against one (not part of
# make test).
.PHONY: bench-python
bench-python: python $(LIB_A) $(RUNTIME_A)
	@mkdir -p $(B)/bench/python
	@$(PYTHON) tools/bench/bench_models.py $(B)/bench/python >/dev/null
	@$(CC) $(CFLAGS) tests/bench/bench-session-run.c -o $(B)/bench/bench-session-run $(LIB_A) $(RUNTIME_A) $(LDSAN) $(LDLIBS)
	@$(B)/bench/bench-session-run $(B)/bench/python/identity/model.onnx
	@PYTHONPATH=$(B)/python $(PYTHON) tests/bench/bench-python-run.py $(B)/bench/python/identity/model.onnx
