# Installing graphcc (mk/install.mk):
#   make install [PREFIX=/usr/local] [DESTDIR=/staging]
#   make uninstall [PREFIX=...] [DESTDIR=...]
# Installs bin/graphcc, lib/libgraphcc.a, lib/libgraphcc-runtime.{a,so},
# include/graphcc/*.h, lib/pkgconfig/graphcc{,-runtime}.pc (from
# config/*.pc.in, with the prefix filled in), share/man/man1/graphcc.1 and,
# for package authors, share/doc/graphcc/: the manifest reference
# (config/manifest-reference.yaml, which generated manifests point at), its
# JSON schema (config/manifest.schema.json) and the tutorial
# (docs/writing-op-packages.md).
PREFIX  ?= /usr/local
DESTDIR ?=
INSTALL ?= install

GC_VERSION := $(shell sed -n 's/^\#define GC_VERSION_STRING "\(.*\)"/\1/p' include/graphcc/runtime.h)
GC_HEADERS := $(wildcard include/graphcc/*.h)
I_BIN   := $(DESTDIR)$(PREFIX)/bin
I_LIB   := $(DESTDIR)$(PREFIX)/lib
I_INC   := $(DESTDIR)$(PREFIX)/include/graphcc
I_PC    := $(DESTDIR)$(PREFIX)/lib/pkgconfig
I_MAN   := $(DESTDIR)$(PREFIX)/share/man/man1
I_DOC   := $(DESTDIR)$(PREFIX)/share/doc/graphcc
GC_DOCS := config/manifest-reference.yaml $(wildcard config/manifest.schema.json) \
	docs/writing-op-packages.md

.PHONY: install uninstall

$(B)/pkgconfig/%.pc: config/%.pc.in include/graphcc/runtime.h FORCE_PC
	@mkdir -p $(dir $@)
	@sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(GC_VERSION)|g' $< > $@

.PHONY: FORCE_PC
FORCE_PC:

install: $(GRAPHCC) $(LIB_A) $(RUNTIME_A) $(RUNTIME_SO) $(B)/pkgconfig/graphcc.pc $(B)/pkgconfig/graphcc-runtime.pc
	$(INSTALL) -d $(I_BIN) $(I_LIB) $(I_INC) $(I_PC) $(I_MAN) $(I_DOC)
	$(INSTALL) -m 755 $(GRAPHCC) $(I_BIN)/graphcc
	$(INSTALL) -m 644 $(LIB_A) $(RUNTIME_A) $(I_LIB)/
	$(INSTALL) -m 755 $(RUNTIME_SO) $(I_LIB)/libgraphcc-runtime.so.0
	ln -sf libgraphcc-runtime.so.0 $(I_LIB)/libgraphcc-runtime.so
	$(INSTALL) -m 644 $(GC_HEADERS) $(I_INC)/
	$(INSTALL) -m 644 $(B)/pkgconfig/graphcc.pc $(B)/pkgconfig/graphcc-runtime.pc $(I_PC)/
	$(INSTALL) -m 644 docs/graphcc.1 $(I_MAN)/graphcc.1
	$(INSTALL) -m 644 $(GC_DOCS) $(I_DOC)/

uninstall:
	rm -f $(I_BIN)/graphcc $(I_LIB)/libgraphcc.a $(I_LIB)/libgraphcc-runtime.a \
		$(I_LIB)/libgraphcc-runtime.so $(I_LIB)/libgraphcc-runtime.so.0 \
		$(I_PC)/graphcc.pc $(I_PC)/graphcc-runtime.pc $(I_MAN)/graphcc.1
	rm -f $(addprefix $(I_INC)/,$(notdir $(GC_HEADERS)))
	rm -f $(addprefix $(I_DOC)/,$(notdir $(GC_DOCS)))
	-rmdir $(I_INC) $(I_DOC) 2>/dev/null || true
