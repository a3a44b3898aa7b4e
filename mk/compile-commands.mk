# make compile_commands.json: the compilation database of graphcc's own C
# sources (runtime/, lib/, tools/graphcc/, tests/unit/) for clangd,
# clang-tidy and editors. Written with clang's -MJ while each source is
# compiled once more at -O0 into /dev/null (clang 14 records garbage as the
# output of -fsyntax-only), so nothing in $(B) changes but the generated
# ONNX header it needs; bear is not needed. clang is installed by
# tools/install-deps.sh (make fuzz uses it too).
CDB_SRC   := $(RUNTIME_SRC) $(LIB_SRC) $(TOOL_SRC) $(UNIT_SRC)
CDB_FLAGS := $(filter-out -MMD -MP -Werror $(OPT),$(CFLAGS)) -O0 -w

.PHONY: compile_commands.json
compile_commands.json: $(GEN_H)
	@command -v clang >/dev/null 2>&1 || \
		{ echo "make compile_commands.json: needs clang (its -MJ option)" >&2; exit 1; }
	@mkdir -p $(B)/cdb && rm -f $(B)/cdb/*.json
	@for f in $(CDB_SRC); do \
		case $$f in tests/unit/*) x="-Iruntime -Iruntime/kernels -Ilib -Itests/unit" ;; *) x= ;; esac; \
		clang $(CDB_FLAGS) $$x -c -o /dev/null -MJ $(B)/cdb/$$(echo $$f | tr / _).json $$f \
			2>/dev/null || { echo "clang cannot parse $$f" >&2; exit 1; }; \
	done
	@(echo '['; cat $(B)/cdb/*.json | sed '$$ s/,$$//'; echo ']') > $@.tmp && mv $@.tmp $@
	@echo "  wrote $@: $(words $(CDB_SRC)) sources"
