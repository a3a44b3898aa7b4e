# Embedding (docs/embedding.md): the runtime as a server hosts it.
#   make bench-embed   per-request latency of tools/examples/server.c (the
#                      API's part of a request) on an Identity 1x1000 program
#                      and the demo model, 1 and 4 host threads, zero-copy and
#                      set_input copies; table in $(B)/bench-embed.md
# `make test` builds the same example against an installed prefix through
# pkg-config (tests/suites/embed).

.PHONY: bench-embed

# in-tree programs linked with -L$(B)/lib find the soname's file
ALL_DEPS += $(B)/lib/libgraphcc-runtime.so.0
$(B)/lib/libgraphcc-runtime.so.0: $(RUNTIME_SO)
	@ln -sf libgraphcc-runtime.so $@

bench-embed: $(GRAPHCC) $(B)/bin/example-server plugins
	@$(PYTHON) tools/bench/bench-embed.py --graphcc $(GRAPHCC) --server $(B)/bin/example-server \
		--work $(B)/bench-embed --out $(B)/bench-embed.md

# For tests/suites/embed: graphcc installed into a private prefix, and the
# sanitizer flags a program linking it needs (SAN builds).
TEST_DEPS += embed-prefix
.PHONY: embed-prefix
embed-prefix: $(GRAPHCC) $(LIB_A) $(RUNTIME_A) $(RUNTIME_SO)
	@$(MAKE) --no-print-directory install PREFIX=$(abspath $(B))/prefix >/dev/null
	@echo '$(LDSAN)' > $(B)/prefix/ldsan
