/*
 * Checking a shared library without loading it (graphcc check --dry-run):
 * the file is read as data, never mapped for execution, so none of its code
 * (constructors included) runs. Every offset and size in it is checked.
 */
#ifndef GC_ELF_CHECK_H
#define GC_ELF_CHECK_H

#include <graphcc/runtime.h>

#include <stdbool.h>
#include <stdint.h>

typedef struct gc_elf gc_elf;

/* Reads path and checks that it is an ELF shared object for this machine
 * (64-bit, this byte order, this architecture) with a dynamic symbol
 * table. Errors name the path and what is wrong. */
int gc_elf_open(const char *path, gc_elf **out, gc_error *err);
void gc_elf_free(gc_elf *e);
/* Whether the library exports sym (defined, global or weak, default
 * visibility): what dlsym would find. */
bool gc_elf_exports(const gc_elf *e, const char *sym);
/* The value of an exported uint32_t object (graphcc_customop_abi); false
 * when there is none or its bytes are not in the file. */
bool gc_elf_u32(const gc_elf *e, const char *sym, uint32_t *v);

#endif
