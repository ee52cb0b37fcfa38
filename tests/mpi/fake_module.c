/* Stand-ins for gpuready-mpi.so, to test the loader (backend_mpi_load.c)
 * without MPI. tests/meson.build builds three: fake-mpi-ok.so (this ABI,
 * a backend named "fake-mpi" that only has fini), fake-mpi-abi.so
 * (-DFAKE_ABI=999) and fake-mpi-nosym.so (-DFAKE_NO_CREATE: no entry point). */
#include "bench/backend.h"

#include <errno.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

#ifndef FAKE_ABI
#define FAKE_ABI BACKEND_ABI
#endif

EXPORT extern const int gpuready_backend_abi;
const int gpuready_backend_abi = FAKE_ABI;

#ifndef FAKE_NO_CREATE
static void fake_fini(struct backend *b)
{
	free(b);
}

static const struct backend_ops fake_ops = { .name = "fake-mpi", .fini = fake_fini };

EXPORT int gpuready_backend_mpi_create(struct backend **ret, char **err);

int gpuready_backend_mpi_create(struct backend **ret, char **err)
{
	struct backend *b = calloc(1, sizeof(*b));

	(void)err;
	if (!b)
		return -ENOMEM;
	b->ops = &fake_ops;
	*ret = b;
	return 0;
}
#endif
