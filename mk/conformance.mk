# ONNX conformance: ONNX's own node and simple tests through `graphcc run`
# (generated at test time by python3-onnx; see tests/conformance/).
#   make conformance                       run them all (also part of make test)
#   make conformance ONLY=test_resize      run the tests whose name contains ONLY
#   make conformance-failures              list every failing test with its reason
.PHONY: conformance conformance-failures

CONFORMANCE_WORK := $(B)/suites/conformance

conformance: all
	@if [ -n "$(ONLY)" ]; then \
		sh tests/suites/conformance $(GRAPHCC) $(CONFORMANCE_WORK) >/dev/null 2>&1; \
		$(PYTHON) tests/conformance/runner.py --graphcc $(GRAPHCC) --data $(CONFORMANCE_WORK)/data \
			--work $(CONFORMANCE_WORK)/out --only $(ONLY) --list-failures; \
	else \
		sh tests/suites/conformance $(GRAPHCC) $(CONFORMANCE_WORK); \
	fi

conformance-failures: all
	@sh tests/suites/conformance $(GRAPHCC) $(CONFORMANCE_WORK) >/dev/null 2>&1; \
	$(PYTHON) tests/conformance/runner.py --graphcc $(GRAPHCC) --data $(CONFORMANCE_WORK)/data \
		--work $(CONFORMANCE_WORK)/out --list-failures | grep '^FAIL'
