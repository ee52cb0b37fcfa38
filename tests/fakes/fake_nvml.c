/* A stand-in for libnvidia-ml.so.1 (soname libnvidia-ml.so.1) that writes
 * to stdout the way the CUDA toolkit's stub libnvidia-ml.so does, for the
 * tests of gpuready's stdout guard (src/core/stdout_guard.h) on machines
 * without NVIDIA's files.
 *
 * It prints on every path a library has to stdout: buffered stdio from its
 * constructor, an unbuffered write(2) and a buffered printf from
 * nvmlInit_v2, and stdio again from nvmlShutdown and its destructor. Each
 * banner line begins "FAKE-NVML-BANNER", so a test can look for it in
 * gpuready's output.
 *
 * Environment:
 *   FAKE_NVML_INIT    what nvmlInit_v2 returns (default 9,
 *                     NVML_ERROR_DRIVER_NOT_LOADED, what the stub and a
 *                     driver without its kernel module return); 0: it
 *                     succeeds and reports no GPU
 *   FAKE_NVML_BANNER  "stub": nvmlInit_v2 prints the stub's own banner
 *                     instead ("WARNING: You should always run with
 *                     libnvidia-ml.so that is installed with your NVIDIA
 *                     Display Driver ... stub library ..."), and
 *                     nvmlErrorString answers with it, as the stub does:
 *                     gpuready must recognise the stub by what it printed,
 *                     since this file is not in a .../stubs/ directory */
#define _GNU_SOURCE
#include "lib/nvml_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The exported functions are NVML's ABI, declared by nvml.h, which this
 * build does not have: no prototypes to precede them. */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

#define FAKE_API __attribute__((visibility("default")))

/* The stub's banner (CUDA 11.8 toolkit, stubs/libnvidia-ml.so), shortened
 * to the lines gpuready may rely on. */
static const char stub_banner[] =
	"\n"
	"!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
	"WARNING:\n"
	"\n"
	"You should always run with libnvidia-ml.so that is installed with your\n"
	"NVIDIA Display Driver. By default it's installed in /usr/lib and /usr/lib64.\n"
	"libnvidia-ml.so in GDK package is a stub library that is attached only for\n"
	"build purposes (e.g. machine that you build your application doesn't have\n"
	"to have Display Driver installed).\n"
	"!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n";

static int stub_mode(void)
{
	const char *s = getenv("FAKE_NVML_BANNER");
	return s && !strcmp(s, "stub");
}

__attribute__((constructor)) static void fake_nvml_loaded(void)
{
	printf("FAKE-NVML-BANNER: loaded (constructor, buffered stdio)\n");
}

__attribute__((destructor)) static void fake_nvml_unloaded(void)
{
	printf("FAKE-NVML-BANNER: unloaded (destructor, buffered stdio)\n");
}

FAKE_API nvmlReturn_t nvmlInit_v2(void)
{
	static const char direct[] = "FAKE-NVML-BANNER: nvmlInit_v2 (write to fd 1)\n";
	const char *s = getenv("FAKE_NVML_INIT");

	if (stub_mode()) {
		printf("%s", stub_banner);
	} else {
		ssize_t n = write(STDOUT_FILENO, direct, sizeof(direct) - 1);
		(void)n;
		printf("FAKE-NVML-BANNER: nvmlInit_v2 (buffered stdio)\n");
	}
	return s && *s ? (nvmlReturn_t)atoi(s) : NVML_ERROR_DRIVER_NOT_LOADED;
}

FAKE_API nvmlReturn_t nvmlShutdown(void)
{
	printf("FAKE-NVML-BANNER: nvmlShutdown\n");
	return NVML_SUCCESS;
}

/* NVML's texts (nvmlErrorString of driver 535) for the codes tests use. */
FAKE_API const char *nvmlErrorString(nvmlReturn_t r)
{
	if (stub_mode())
		return stub_banner;
	switch (r) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
	case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
	case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "Driver/library version mismatch";
	default: return "Unknown Error";
	}
}

FAKE_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *n)
{
	*n = 0;
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *dev)
{
	(void)i;
	*dev = NULL;
	return NVML_ERROR_INVALID_ARGUMENT;
}
