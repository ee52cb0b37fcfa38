/* dlopen/dlsym with symbol tables; see dl.h. */
#define _GNU_SOURCE
#include "dl.h"
#include "strbuf.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int dl_open(struct dl_lib *lib, const char *const *candidates, const struct dl_sym *syms, size_t n_syms,
	    void *table)
{
	struct strbuf why = STRBUF_INIT;
	int ret = -ENOENT;
	memset(lib, 0, sizeof(*lib));
	for (const char *const *c = candidates; *c; c++) {
		void *h = dlopen(*c, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			const char *e = dlerror();
			if (why.len)
				strbuf_adds(&why, "; ");
			strbuf_adds(&why, e ? e : *c);
			continue;
		}
		const struct dl_sym *missing = NULL;
		for (size_t i = 0; i < n_syms && !missing; i++) {
			void *p = syms[i].version ? dlvsym(h, syms[i].name, syms[i].version) : dlsym(h, syms[i].name);
			if (!p && !syms[i].optional)
				missing = &syms[i];
		}
		if (missing) {
			if (why.len)
				strbuf_adds(&why, "; ");
			strbuf_addf(&why, "%s: required symbol %s%s%s missing", *c, missing->name,
				    missing->version ? "@" : "", missing->version ? missing->version : "");
			dlclose(h);
			ret = -ENOSYS;
			continue;
		}
		/* only now fill the table: never leave pointers into a closed library */
		for (size_t i = 0; i < n_syms; i++) {
			void *p = syms[i].version ? dlvsym(h, syms[i].name, syms[i].version) : dlsym(h, syms[i].name);
			memcpy((char *)table + syms[i].offset, &p, sizeof(p));
		}
		lib->handle = h;
		lib->path = xstrdup(*c);
		strbuf_release(&why);
		return 0;
	}
	lib->error = strbuf_detach(&why);
	return ret;
}

void dl_close(struct dl_lib *lib)
{
	if (lib->handle)
		dlclose(lib->handle);
	free(lib->path);
	free(lib->error);
	memset(lib, 0, sizeof(*lib));
}
