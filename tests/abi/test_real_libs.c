/* gpuready's loaders against NVIDIA's real libraries, on a machine with no
 * GPU: driver 535's libcuda.so.1 and libnvidia-ml.so.1 from Debian's
 * non-free archive (scripts/nvidia-libs.sh, GPUREADY_NVIDIA_DIR) and the
 * system's libibverbs.so.1 (rdma-core).
 *
 *   test_real_libs symbols   every name gpuready resolves is exported by
 *                            the real library, at the symbol version it
 *                            asks for (dlsym/dlvsym on the library's own
 *                            handle: what the loader itself will do)
 *   test_real_libs nodriver  through gpuready's loaders, with the real
 *                            libraries first on LD_LIBRARY_PATH: cuInit
 *                            answers CUDA_ERROR_NO_DEVICE (100) and
 *                            nvmlInit_v2 NVML_ERROR_DRIVER_NOT_LOADED (9);
 *                            only where no NVIDIA driver is loaded
 *
 * Where the libraries were not fetched, or a driver is loaded, it skips
 * (exit 77) and says why. */
#define _GNU_SOURCE
#include "core/cuda_api.h"
#include "core/nvml_api.h"
#include "core/verbs_api.h"
#include "core/stdout_guard.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LIBDIR "/root/usr/lib/x86_64-linux-gnu/nvidia/current/"

/* Names gpuready resolves that are newer than driver 535: optional in its
 * tables, and absent here by right (each with the release that added it). */
static const char *const newer_than_535[] = {
	"cuEventElapsedTime_v2", /* CUDA 12.8 */
};

static const char *nvidia_dir(void)
{
	static char why[512];
	const char *d = getenv("GPUREADY_NVIDIA_DIR");
	char path[4096];

	if (!d || !*d) {
		printf("SKIP: GPUREADY_NVIDIA_DIR is not set (configure with -Dnvidia_libs=DIR; make test does)\n");
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/root/.complete", d);
	if (access(path, F_OK) == 0)
		return d;
	snprintf(path, sizeof(path), "%s/unavailable", d);
	FILE *f = fopen(path, "r");
	if (!f || !fgets(why, sizeof(why), f))
		snprintf(why, sizeof(why), "not fetched (run scripts/nvidia-libs.sh %s)\n", d);
	if (f)
		fclose(f);
	printf("SKIP: NVIDIA's libraries are not in %s: %s", d, why);
	return NULL;
}

static bool is_newer(const char *name)
{
	for (size_t i = 0; i < sizeof(newer_than_535) / sizeof(newer_than_535[0]); i++)
		if (!strcmp(name, newer_than_535[i]))
			return true;
	return false;
}

/* One symbol on handle h; returns 1 if it is missing without right. */
static int check_symbol(const char *lib, void *h, const char *name, const char *version)
{
	void *p = version ? dlvsym(h, name, version) : dlsym(h, name);
	if (p)
		return 0;
	if (is_newer(name)) {
		printf("%s: %s is not exported (newer than this driver; gpuready treats it as optional)\n", lib, name);
		return 0;
	}
	printf("%s: %s%s%s is NOT exported\n", lib, name, version ? "@" : "", version ? version : "");
	return 1;
}

static void *open_real(const char *path)
{
	void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		printf("cannot open %s: %s\n", path, dlerror());
	return h;
}

static int symbols(const char *dir)
{
	char path[4096];
	int bad = 0, n_cuda = 0;
	size_t n;
	unsigned need;
	const char *name;

	snprintf(path, sizeof(path), "%s" LIBDIR "libcuda.so.1", dir);
	void *h = open_real(path);
	if (!h)
		return 1;
	for (size_t i = 0; (name = cuda_api_symbol(i, &need)); i++, n_cuda++)
		bad += check_symbol("libcuda.so.1", h, name, NULL);
	/* each pair of alternatives needs one of its names */
	if (!dlsym(h, "cuEventElapsedTime") && !dlsym(h, "cuEventElapsedTime_v2"))
		bad += printf("libcuda.so.1: neither elapsed-time name\n") > 0;
	dlclose(h);

	snprintf(path, sizeof(path), "%s" LIBDIR "libnvidia-ml.so.1", dir);
	if (!(h = open_real(path)))
		return 1;
	const struct dl_sym *nv = nvml_api_symbols(&n);
	for (size_t i = 0; i < n; i++)
		bad += check_symbol("libnvidia-ml.so.1", h, nv[i].name, nv[i].version);
	dlclose(h);
	printf("libcuda.so.1: %d names, libnvidia-ml.so.1: %zu names checked\n", n_cuda, n);

	if (!(h = open_real("libibverbs.so.1"))) {
		printf("SKIP for libibverbs: the system has no libibverbs.so.1 (Debian: libibverbs1)\n");
		return bad ? 1 : 0;
	}
	const struct dl_sym *vb = verbs_api_symbols(&n);
	for (size_t i = 0; i < n; i++)
		bad += check_symbol("libibverbs.so.1", h, vb[i].name, vb[i].version);
	dlclose(h);
	printf("libibverbs.so.1: %zu names checked at their symbol versions\n", n);
	return bad ? 1 : 0;
}

/* The file the dynamic linker loaded for sym ("" if unknown). */
static const char *file_of(void *sym)
{
	Dl_info info;
	return sym && dladdr(sym, &info) && info.dli_fname ? info.dli_fname : "";
}

static int nodriver(const char *dir)
{
	struct dl_lib lib;
	struct cuda_api cu;
	struct nvml_api nv;
	int bad = 0;

	if (access("/proc/driver/nvidia", F_OK) == 0) {
		printf("SKIP: an NVIDIA driver is loaded here (/proc/driver/nvidia): no-driver answers do not apply\n");
		return 77;
	}
	if (cuda_api_load(&lib, &cu, CUDA_NEED_BASE) < 0) {
		printf("cuda_api_load: %s\n", lib.error);
		dl_close(&lib);
		return 1;
	}
	const char *file = file_of((void *)cu.init);
	printf("loaded %s\n", file);
	bad += !strstr(file, dir) && printf("libcuda.so.1 did not come from %s\n", dir);
	CUresult r = cu.init(0);
	printf("cuInit(0) = %d\n", (int)r);
	bad += r != CUDA_ERROR_NO_DEVICE;
	dl_close(&lib);

	struct stdout_guard g = STDOUT_GUARD_INIT;
	stdout_guard_begin(&g);
	int lr = nvml_api_load(&lib, &nv);
	nvmlReturn_t nr = lr < 0 ? NVML_ERROR_UNKNOWN : nv.init_v2();
	stdout_guard_end(&g, NULL);
	if (lr < 0) {
		printf("nvml_api_load: %s\n", lib.error);
		dl_close(&lib);
		return 1;
	}
	file = file_of((void *)nv.init_v2);
	printf("loaded %s\nnvmlInit_v2() = %d (%s)\n", file, (int)nr, nv.error_string(nr));
	bad += !strstr(file, dir) && printf("libnvidia-ml.so.1 did not come from %s\n", dir);
	bad += nr != NVML_ERROR_DRIVER_NOT_LOADED;
	dl_close(&lib);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *dir = nvidia_dir();

	if (!dir)
		return 77;
	if (argc == 2 && !strcmp(argv[1], "symbols"))
		return symbols(dir);
	if (argc == 2 && !strcmp(argv[1], "nodriver"))
		return nodriver(dir);
	fprintf(stderr, "usage: %s symbols|nodriver\n", argv[0]);
	return 2;
}
