# Tests of operators newer than ONNX 1.12 (see tests/onnx-new/README.md).
#   make onnx-new [ONLY=substr]       run the stored cases (also part of make test)
#   make onnx-new-generate [ONLY=..]  rebuild them, cross-checked with ONNX Runtime
#                                     (needs node; installs it with bench-ort)
.PHONY: onnx-new onnx-new-generate

onnx-new: all
	@$(PYTHON) tests/onnx-new/run.py --graphcc $(GRAPHCC) --work $(B)/suites/onnx-new \
		$(if $(ONLY),--only $(ONLY) --verbose)

onnx-new-generate: bench-ort
	@$(PYTHON) tests/onnx-new/generate.py --ort $(BENCH_ORT_DIR) $(if $(ONLY),--only $(ONLY))
