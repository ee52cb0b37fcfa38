/* Runtime-loaded libraries behind one symbol table per library.
 *
 * A caller declares the symbols it needs (name, optional symbol version for
 * dlvsym, required or optional, and where in its table struct the pointer
 * goes) and the candidate file names; dl_open() tries them in order. A
 * missing library or required symbol is an error with its reason in
 * lib->error, never a loader crash; optional symbols are left NULL and are
 * capabilities the caller tests at run time. */
#ifndef GPUREADY_DL_H
#define GPUREADY_DL_H

#include <stdbool.h>
#include <stddef.h>

struct dl_sym {
	const char *name;
	const char *version; /* NULL: plain dlsym */
	bool optional;
	size_t offset;       /* offsetof(table struct, member) */
};

struct dl_lib {
	void *handle;
	char *path;          /* the candidate that loaded */
	char *error;         /* why loading failed, for findings */
};

/* Returns 0, -ENOENT (no candidate loaded) or -ENOSYS (a required symbol is
 * missing; the library is closed again). lib->error is set on failure. */
int dl_open(struct dl_lib *lib, const char *const *candidates, const struct dl_sym *syms, size_t n_syms,
	    void *table);
void dl_close(struct dl_lib *lib);

#endif
