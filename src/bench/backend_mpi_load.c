/* Loading the MPI backend module (gpuready-mpi.so); see bench/backend.h.
 *
 * The gpuready binary never links libmpi: the MPI backend lives in a
 * module built only where Open MPI's headers were found, and is loaded
 * here on demand. Search order: $GPUREADY_MPI_MODULE (a path; when set,
 * nothing else is tried), the directory of the running executable (the
 * build tree puts the module next to gpuready; this is a lookup of the
 * host's own binary, not a read of the inspected system, so it bypasses the
 * root context), the install directory as seen from there
 * (GPUREADY_MODULE_FROM_BINDIR: <bindir>/../<libdir>/gpuready, so a tree
 * installed under DESTDIR or moved finds its own module), then the install
 * directory GPUREADY_MODULE_DIR from config.h (<prefix>/<libdir>/gpuready).
 *
 * The module is opened RTLD_LOCAL through dl_open() (the module itself
 * puts libmpi into the global scope before MPI_Init, which Open MPI's
 * components need; see backend_mpi.c) and its ABI checked. Once its entry
 * point has run, the module stays loaded for the life of the process: the
 * returned backend's code is in it, and libmpi cannot be unloaded safely.
 *
 * Every failure is a message naming the paths tried, the loader's reason
 * and the fix; a missing module or libmpi never crashes. */
#define _GNU_SOURCE
#include "bench/backend.h"
#include "core/cleanup.h"
#include "core/dl.h"
#include "core/strbuf.h"
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MPI_MODULE_NAME "gpuready-mpi.so"
#define MPI_MODULE_ENV "GPUREADY_MPI_MODULE"

struct mpi_module {
	backend_create_fn create;
	const int *abi;
};

static const struct dl_sym mpi_module_syms[] = {
	{ .name = BACKEND_MPI_SYMBOL, .offset = offsetof(struct mpi_module, create) },
	{ .name = BACKEND_ABI_SYMBOL, .offset = offsetof(struct mpi_module, abi) },
};

/* The directory of the running executable into out (left empty when it
 * cannot be read). */
static void exe_dir(struct strbuf *out)
{
	strbuf_reset(out);
	for (size_t size = 256; size <= (1u << 16); size *= 2) {
		_cleanup_free_ char *buf = malloc(size);
		ssize_t n = buf ? readlink("/proc/self/exe", buf, size) : -1;
		if (n < 0)
			return;
		if ((size_t)n < size) {
			const char *slash = memrchr(buf, '/', (size_t)n);
			if (slash)
				strbuf_add(out, buf, slash > buf ? (size_t)(slash - buf) : 1);
			return;
		}
	}
}

/* Why no candidate loaded, with the fix for the likely cause. */
static char *load_error(const char *const *cands, const char *why, int r, bool from_env)
{
	struct strbuf sb = STRBUF_INIT;
	bool any_exists = false, mpi_missing = why && (strstr(why, "libmpi") || strstr(why, "libopen-"));

	strbuf_adds(&sb, "cannot load the MPI backend module (tried ");
	for (const char *const *c = cands; *c; c++) {
		strbuf_addf(&sb, "%s%s", c == cands ? "" : ", ", *c);
		any_exists |= access(*c, F_OK) == 0;
	}
	strbuf_addf(&sb, "%s): %s. ", from_env ? " from $" MPI_MODULE_ENV : "", why ? why : "unknown error");
	if (r == -ENOSYS)
		strbuf_adds(&sb, "That file is not a gpuready MPI module: point $" MPI_MODULE_ENV " at the "
			    MPI_MODULE_NAME " built with this gpuready, or unset it");
	else if (mpi_missing)
		strbuf_adds(&sb, "The module needs Open MPI's runtime: install it (Debian/Ubuntu: apt-get install "
			    "libopenmpi3 openmpi-bin)");
	else if (any_exists)
		strbuf_adds(&sb, "Use the " MPI_MODULE_NAME " built together with this gpuready (rebuild and "
			    "reinstall both; the module needs Open MPI's runtime: apt-get install libopenmpi3 openmpi-bin)");
	else if (from_env)
		strbuf_adds(&sb, "Set $" MPI_MODULE_ENV " to the path of " MPI_MODULE_NAME ", or unset it to use the "
			    "installed one");
	else if (GPUREADY_HAVE_MPI_MODULE)
		strbuf_adds(&sb, "This gpuready was built with MPI, but its module is in none of those places (installed "
			    "under a DESTDIR, or moved?): install " MPI_MODULE_NAME " there, or set $" MPI_MODULE_ENV
			    "=PATH");
	else
		strbuf_adds(&sb, "gpuready was built without MPI: build it with libopenmpi-dev installed (Meson builds "
			    MPI_MODULE_NAME " only when it finds MPI) and install it, or set $" MPI_MODULE_ENV "=PATH");
	return strbuf_detach(&sb);
}

/* Opens the first candidate that loads into *lib and *mod and checks its
 * ABI; 0 or -errno with *err set. */
static int mpi_module_open(const char *const *cands, bool from_env, struct dl_lib *lib, struct mpi_module *mod,
			   char **err)
{
	int r = dl_open(lib, cands, mpi_module_syms, ARRAY_SIZE(mpi_module_syms), mod);
	if (r < 0) {
		*err = load_error(cands, lib->error, r, from_env);
		dl_close(lib);
		return r;
	}
	if (*mod->abi != BACKEND_ABI) {
		*err = xasprintf("the MPI backend module %s was built for backend ABI %d, this gpuready uses %d: "
				 "install the " MPI_MODULE_NAME " built together with this gpuready",
				 lib->path, *mod->abi, BACKEND_ABI);
		dl_close(lib);
		return -EPROTO;
	}
	return 0;
}

int backend_mpi_create(struct backend **ret, char **err)
{
	_cleanup_strbuf_ struct strbuf dir = STRBUF_INIT;
	_cleanup_free_ char *next_to_exe = NULL, *installed_rel = NULL;
	const char *env = getenv(MPI_MODULE_ENV);
	bool from_env = env && *env;
	const char *cands[4] = { NULL };
	size_t n = 0;

	if (from_env) {
		cands[n++] = env;
	} else {
		exe_dir(&dir);
		if (dir.len) {
			next_to_exe = xasprintf("%s/" MPI_MODULE_NAME, dir.buf);
			cands[n++] = next_to_exe;
			installed_rel = xasprintf("%s/" GPUREADY_MODULE_FROM_BINDIR "/" MPI_MODULE_NAME, dir.buf);
			cands[n++] = installed_rel;
		}
		cands[n++] = GPUREADY_MODULE_DIR "/" MPI_MODULE_NAME;
	}

	struct dl_lib lib;
	struct mpi_module mod = { 0 };
	int r = mpi_module_open(cands, from_env, &lib, &mod, err);
	if (r < 0)
		return r;
	/* the module stays loaded: only the bookkeeping strings go */
	lib.handle = NULL;
	dl_close(&lib);
	return mod.create(ret, err);
}
