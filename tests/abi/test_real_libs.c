/* gpuready's loaders against NVIDIA's real libraries, on a machine with no
 * GPU: driver 535's libcuda.so.1 and libnvidia-ml.so.1 and CUDA 11.8's
 * stub libraries from Debian's archive (scripts/nvidia-libs.sh,
 * GPUREADY_NVIDIA_DIR) and the system's libibverbs.so.1 (rdma-core).
 *
 *   test_real_libs symbols   every name gpuready resolves is exported by
 *                            the real library, at the symbol version its
 *                            table asks for when it asks for one; of each
 *                            pair of alternative names at least one
 *   test_real_libs nodriver  through gpuready's loaders, with the real
 *                            libraries first on LD_LIBRARY_PATH: cuInit
 *                            answers CUDA_ERROR_NO_DEVICE (100) and
 *                            nvmlInit_v2 NVML_ERROR_DRIVER_NOT_LOADED (9);
 *                            then the toolkit's stubs, loaded by path: the
 *                            NVML stub loads through gpuready's table and
 *                            what its nvmlInit_v2 answers and prints is
 *                            recorded, the CUDA stub's cuInit answers
 *                            CUDA_ERROR_STUB_LIBRARY (34). Only where no
 *                            NVIDIA driver is loaded.
 *
 * The symbols are looked up with dlsym/dlvsym on the library's own handle
 * (dlopen by path, RTLD_LOCAL) rather than read from `nm -D`: that is what
 * dl_open() itself does, it honours symbol versions exactly as the loader
 * will (a hidden or non-default version, a version node), and needs no
 * binutils on the test machine.
 *
 * Where the libraries were not fetched, or a driver is loaded, it skips
 * (exit 77) and says why. */
#define _GNU_SOURCE
#include "lib/cuda_api.h"
#include "lib/nvml_api.h"
#include "lib/verbs_api.h"
#include "core/stdout_guard.h"
#include "core/strbuf.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LIBDIR "/root/usr/lib/x86_64-linux-gnu/nvidia/current/"
#define STUBDIR "/root/usr/lib/x86_64-linux-gnu/stubs/"
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Names gpuready resolves that are newer than driver 535: optional in its
 * tables, and absent here by right (each with the release that added it). */
static const struct {
	const char *name, *since;
} newer_than_535[] = {
	{ "cuEventElapsedTime_v2", "CUDA 12.8" },
	{ "nvmlDeviceGetGpuFabricInfoV", "driver 550, CUDA 12.4" },
};

/* Alternative names of one entry point: gpuready's table holds both (both
 * optional) and calls whichever the driver exports, so a driver must
 * export at least one. */
static const char *const cuda_pairs[][2] = {
	{ "cuEventElapsedTime", "cuEventElapsedTime_v2" },              /* _v2: CUDA 12.8 */
	{ "cuGraphInstantiateWithFlags", "cuGraphInstantiate_v2" },     /* WithFlags: 11.4; _v2 the 11.x name */
	{ "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease" }, /* _v2: 11.0 */
};
static const char *const nvml_pairs[][2] = {
	{ "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons" }, /* R535 rename */
	{ "nvmlDeviceGetGpuFabricInfoV", "nvmlDeviceGetGpuFabricInfo" }, /* V: R550; the other R525, deprecated */
};

static const char *nvidia_dir(void)
{
	static char why[512];
	const char *d = getenv("GPUREADY_NVIDIA_DIR");
	char path[4096];

	if (!d || !*d) {
		printf("SKIP: GPUREADY_NVIDIA_DIR is not set (configure with -Dnvidia_libs=DIR after "
		       "scripts/nvidia-libs.sh DIR; make test does)\n");
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

static const char *newer(const char *name)
{
	for (size_t i = 0; i < N(newer_than_535); i++)
		if (!strcmp(name, newer_than_535[i].name))
			return newer_than_535[i].since;
	return NULL;
}

static void *lookup(void *h, const char *name, const char *version)
{
	return version ? dlvsym(h, name, version) : dlsym(h, name);
}

/* One symbol of our table on handle h; required: some caller needs it.
 * Returns 1 if it is missing without right. */
static int check_symbol(const char *lib, void *h, const char *name, const char *version, bool required,
			int *n_newer)
{
	const char *since = newer(name);
	void *p = lookup(h, name, version);

	if (p) {
		if (since)
			printf("%s: %s (%s) is exported: drop it from newer_than_535\n", lib, name, since);
		/* informative: whether the version asked for is the default one */
		if (version && dlsym(h, name) != p)
			printf("%s: %s@%s is not the default version of %s\n", lib, name, version, name);
		return 0;
	}
	if (since && !required) {
		printf("%s: %s is not exported: newer than this driver (%s); optional in gpuready's table\n", lib,
		       name, since);
		(*n_newer)++;
		return 0;
	}
	printf("%s: %s%s%s is NOT exported%s\n", lib, name, version ? "@" : "", version ? version : "",
	       since ? " (newer than this driver, yet gpuready requires it)" : "");
	return 1;
}

/* Of each pair, at least one name is exported; both are in our table. */
static int check_pairs(const char *lib, void *h, const char *const (*pairs)[2], size_t n, const char *const *table,
		       size_t n_table)
{
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		bool have[2];
		for (int k = 0; k < 2; k++) {
			size_t t = 0;
			while (t < n_table && strcmp(table[t], pairs[i][k]))
				t++;
			if (t == n_table) {
				printf("%s: %s is not in gpuready's table\n", lib, pairs[i][k]);
				bad++;
			}
			have[k] = dlsym(h, pairs[i][k]) != NULL;
		}
		printf("%s: pair %s / %s: %s\n", lib, pairs[i][0], pairs[i][1],
		       have[0] && have[1] ? "both exported"
		       : have[0]	    ? "only the first exported"
		       : have[1]	    ? "only the second exported"
					    : "NEITHER exported");
		bad += !have[0] && !have[1];
	}
	return bad;
}

static void *open_real(const char *path)
{
	void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		printf("cannot open %s: %s\n", path, dlerror());
	return h;
}

static void print_versions(const char *dir)
{
	char path[4096], line[256];

	snprintf(path, sizeof(path), "%s/root/VERSIONS", dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("%s: %s", path, line);
	fclose(f);
}

static int symbols(const char *dir)
{
	char path[4096];
	const char *names[96];
	int bad = 0, n_req = 0, n_newer = 0;
	size_t n, n_cuda = 0;
	unsigned need;

	print_versions(dir);
	snprintf(path, sizeof(path), "%s" LIBDIR "libcuda.so.1", dir);
	void *h = open_real(path);
	if (!h)
		return 1;
	for (; n_cuda < N(names) && (names[n_cuda] = cuda_api_symbol(n_cuda, &need)); n_cuda++) {
		n_req += need != 0;
		bad += check_symbol("libcuda.so.1", h, names[n_cuda], NULL, need != 0, &n_newer);
	}
	bad += check_pairs("libcuda.so.1", h, cuda_pairs, N(cuda_pairs), names, n_cuda);
	dlclose(h);
	printf("libcuda.so.1: %zu names (%d required by a group, %zu optional for every caller), %d newer than "
	       "this driver, no symbol versions asked\n", n_cuda, n_req, n_cuda - (size_t)n_req, n_newer);

	snprintf(path, sizeof(path), "%s" LIBDIR "libnvidia-ml.so.1", dir);
	if (!(h = open_real(path)))
		return 1;
	const struct dl_sym *nv = nvml_api_symbols(&n);
	n_req = n_newer = 0;
	for (size_t i = 0; i < n && i < N(names); i++) {
		names[i] = nv[i].name;
		n_req += !nv[i].optional;
		bad += check_symbol("libnvidia-ml.so.1", h, nv[i].name, nv[i].version, !nv[i].optional, &n_newer);
	}
	bad += check_pairs("libnvidia-ml.so.1", h, nvml_pairs, N(nvml_pairs), names, n < N(names) ? n : N(names));
	dlclose(h);
	printf("libnvidia-ml.so.1: %zu names (%d required, %zu optional), %d newer than this driver\n", n, n_req,
	       n - (size_t)n_req, n_newer);

	if (!(h = open_real("libibverbs.so.1"))) {
		printf("SKIP for libibverbs: the system has no libibverbs.so.1 (Debian: libibverbs1)\n");
		return bad ? 1 : 0;
	}
	const struct dl_sym *vb = verbs_api_symbols(&n);
	n_req = n_newer = 0;
	for (size_t i = 0; i < n; i++) {
		n_req += !vb[i].optional;
		bad += check_symbol("libibverbs.so.1", h, vb[i].name, vb[i].version, !vb[i].optional, &n_newer);
	}
	dlclose(h);
	printf("libibverbs.so.1: %zu names (%d required) checked at their symbol versions\n", n, n_req);
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
	return bad;
}

static int stub(const char *dir)
{
	char path[4096];
	struct dl_lib lib;
	struct nvml_api nv;
	struct strbuf said = STRBUF_INIT;
	size_t n;
	int bad = 0;

	/* NVML: through gpuready's table, by path (the stub's file name is
	 * libnvidia-ml.so; its SONAME libnvidia-ml.so.1) */
	snprintf(path, sizeof(path), "%s" STUBDIR "libnvidia-ml.so", dir);
	const char *const nvml_cands[] = { path, NULL };
	const struct dl_sym *syms = nvml_api_symbols(&n);
	if (dl_open(&lib, nvml_cands, syms, n, &nv) < 0) {
		printf("the NVML stub does not load through gpuready's table: %s\n", lib.error);
		dl_close(&lib);
		return 1;
	}
	struct stdout_guard g = STDOUT_GUARD_INIT;
	stdout_guard_begin(&g);
	nvmlReturn_t nr = nv.init_v2();
	stdout_guard_end(&g, &said);
	/* the stub's nvmlErrorString answers with its banner: shown on one
	 * line, without its rows of '!' */
	const char *es = nv.error_string ? nv.error_string(nr) : "?";
	char one[160];
	size_t k = 0;
	const char *p = es ? es : "(null)";
	for (; *p && k + 1 < sizeof(one); p++)
		if (*p != '!' && !((*p == '\n' || *p == ' ') && (k == 0 || one[k - 1] == ' ')))
			one[k++] = *p == '\n' ? ' ' : *p;
	one[k] = '\0';
	printf("NVML stub %s: nvmlInit_v2() = %d (nvmlErrorString: \"%s%s\"); it printed %zu bytes on stdout%s\n%s",
	       path, (int)nr, one, *p ? "..." : "", said.len, said.len ? ":" : "", said.buf);
	if (nr == NVML_SUCCESS)
		nv.shutdown();
	dl_close(&lib);
	strbuf_release(&said);

	/* CUDA: cuInit only (gpuready's table is for the soname) */
	snprintf(path, sizeof(path), "%s" STUBDIR "libcuda.so", dir);
	void *h = open_real(path);
	if (!h)
		return 1;
	CUresult (*init)(unsigned) = (CUresult(*)(unsigned))dlsym(h, "cuInit");
	if (!init) {
		printf("the CUDA stub %s exports no cuInit\n", path);
		dlclose(h);
		return 1;
	}
	CUresult r = init(0);
	printf("CUDA stub %s: cuInit(0) = %d\n", path, (int)r);
	bad += r != CUDA_ERROR_STUB_LIBRARY;
	dlclose(h);
	return bad;
}

int main(int argc, char **argv)
{
	const char *dir = nvidia_dir();

	if (!dir)
		return 77;
	if (argc == 2 && !strcmp(argv[1], "symbols"))
		return symbols(dir);
	if (argc == 2 && !strcmp(argv[1], "nodriver")) {
		if (access("/proc/driver/nvidia", F_OK) == 0) {
			printf("SKIP: an NVIDIA driver is loaded here (/proc/driver/nvidia): no-driver answers do "
			       "not apply\n");
			return 77;
		}
		int bad = nodriver(dir);
		return bad + stub(dir) ? 1 : 0;
	}
	fprintf(stderr, "usage: %s symbols|nodriver\n", argv[0]);
	return 2;
}
