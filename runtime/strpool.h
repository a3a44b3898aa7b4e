/*
 * Where the strings a run makes live. A string tensor's bytes (in the arena,
 * or a constant's) are `char *` pointers that own nothing: they point into
 * a string pool, the program's constants or a session's copy of an input.
 * So copying, reshaping, aliasing or overwriting a string tensor's bytes
 * never frees anything, and nothing is ever freed through them.
 *
 * A session's pool is emptied when a run starts and keeps its memory, so
 * steady-state runs allocate nothing once a run has needed that much.
 */
#ifndef GC_STRPOOL_H
#define GC_STRPOOL_H

#include <stddef.h>

typedef struct gc_strpool gc_strpool;

/* NULL when out of memory. */
gc_strpool *gc_strpool_new(void);
void gc_strpool_free(gc_strpool *sp);
/* n bytes (not aligned, not zeroed), valid until the next reset or free;
 * NULL when out of memory or over GRAPHCC_MAX_BYTES in all. */
char *gc_strpool_alloc(gc_strpool *sp, size_t n);
/* Gives every string back; keeps the memory (merged into one chunk). */
void gc_strpool_reset(gc_strpool *sp);
/* Bytes handed out since the last reset, and bytes held. */
size_t gc_strpool_used(const gc_strpool *sp);
size_t gc_strpool_capacity(const gc_strpool *sp);

#endif
