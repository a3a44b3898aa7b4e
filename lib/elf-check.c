/* Reading a shared library's exported symbols from its file (elf-check.h). */
#include "elf-check.h"

#include <elf.h>
#include <string.h>

#include "../runtime/build.h"

#if defined(__x86_64__)
#define GC_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define GC_ELF_MACHINE EM_AARCH64
#else
#define GC_ELF_MACHINE EM_NONE /* unknown: not checked */
#endif

struct gc_elf {
	unsigned char *data;
	size_t len;
	const Elf64_Shdr *sh;
	uint16_t n_sh;
	const Elf64_Sym *syms;
	size_t n_syms;
	const char *names;
	size_t names_len;
};

/* Whether [off, off + n) lies inside the file. */
static bool inside(const gc_elf *e, uint64_t off, uint64_t n)
{
	return off <= e->len && n <= e->len - off;
}

int gc_elf_open(const char *path, gc_elf **out, gc_error *err)
{
	*out = NULL;
	gc_elf *e = gc_calloc(1, sizeof *e);
	if (!e)
		return gc_error_set(err, GC_ENOMEM, "library %s: out of memory", path);
	void *buf;
	if (gc_read_file(path, &buf, &e->len, err)) {
		gc_free(e);
		return gc_error_prefix(err, "library");
	}
	e->data = buf;
	const char *why = NULL;
	Elf64_Ehdr h;
	if (e->len < sizeof h || memcmp(e->data, ELFMAG, SELFMAG)) {
		why = "not an ELF file";
		goto bad;
	}
	memcpy(&h, e->data, sizeof h);
	if (h.e_ident[EI_CLASS] != ELFCLASS64 ||
	    h.e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB
									 : ELFDATA2MSB)) {
		why = "an ELF file for another word size or byte order";
		goto bad;
	}
	if (h.e_type != ET_DYN) {
		why = "an ELF file, but not a shared library";
		goto bad;
	}
	if (GC_ELF_MACHINE != EM_NONE && h.e_machine != GC_ELF_MACHINE) {
		why = "a shared library for another machine architecture";
		goto bad;
	}
	if (h.e_shentsize != sizeof(Elf64_Shdr) || !h.e_shnum ||
	    !inside(e, h.e_shoff, (uint64_t)h.e_shnum * sizeof(Elf64_Shdr)) ||
	    h.e_shoff % _Alignof(Elf64_Shdr)) {
		why = "its section table is missing or malformed";
		goto bad;
	}
	e->sh = (const Elf64_Shdr *)(e->data + h.e_shoff);
	e->n_sh = h.e_shnum;
	for (uint16_t i = 0; i < e->n_sh; i++) {
		const Elf64_Shdr *s = &e->sh[i];
		if (s->sh_type != SHT_DYNSYM)
			continue;
		if (s->sh_entsize != sizeof(Elf64_Sym) || !inside(e, s->sh_offset, s->sh_size) ||
		    s->sh_offset % _Alignof(Elf64_Sym) || s->sh_link >= e->n_sh) {
			why = "its dynamic symbol table is malformed";
			goto bad;
		}
		const Elf64_Shdr *str = &e->sh[s->sh_link];
		if (str->sh_type != SHT_STRTAB || !inside(e, str->sh_offset, str->sh_size) ||
		    !str->sh_size || e->data[str->sh_offset + str->sh_size - 1]) {
			why = "its dynamic string table is malformed";
			goto bad;
		}
		e->syms = (const Elf64_Sym *)(e->data + s->sh_offset);
		e->n_syms = s->sh_size / sizeof(Elf64_Sym);
		e->names = (const char *)e->data + str->sh_offset;
		e->names_len = str->sh_size;
		break;
	}
	if (!e->syms) {
		why = "it has no dynamic symbol table (it exports nothing)";
		goto bad;
	}
	*out = e;
	return 0;
bad:
	gc_elf_free(e);
	return gc_error_set(err, GC_EINVAL, "library %s cannot be used: %s", path, why);
}

void gc_elf_free(gc_elf *e)
{
	if (!e)
		return;
	gc_free(e->data);
	gc_free(e);
}

static const Elf64_Sym *find(const gc_elf *e, const char *sym)
{
	for (size_t i = 0; i < e->n_syms; i++) {
		const Elf64_Sym *s = &e->syms[i];
		unsigned bind = ELF64_ST_BIND(s->st_info);
		if (s->st_shndx == SHN_UNDEF || s->st_name >= e->names_len ||
		    (bind != STB_GLOBAL && bind != STB_WEAK) ||
		    ELF64_ST_VISIBILITY(s->st_other) != STV_DEFAULT)
			continue;
		if (!strcmp(e->names + s->st_name, sym))
			return s;
	}
	return NULL;
}

bool gc_elf_exports(const gc_elf *e, const char *sym)
{
	return find(e, sym) != NULL;
}

bool gc_elf_u32(const gc_elf *e, const char *sym, uint32_t *v)
{
	const Elf64_Sym *s = find(e, sym);
	if (!s || s->st_shndx >= e->n_sh || s->st_size < 4)
		return false;
	const Elf64_Shdr *sec = &e->sh[s->st_shndx];
	if (sec->sh_type == SHT_NOBITS || s->st_value < sec->sh_addr ||
	    s->st_value - sec->sh_addr > sec->sh_size - 4 || sec->sh_size < 4)
		return false;
	uint64_t off = sec->sh_offset + (s->st_value - sec->sh_addr);
	if (off < sec->sh_offset || !inside(e, off, 4))
		return false;
	memcpy(v, e->data + off, 4);
	return true;
}
