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
 *                     succeeds and reports FAKE_NVML_GPUS GPUs
 *   FAKE_NVML_BANNER  "stub": nvmlInit_v2 prints the stub's own banner
 *                     instead ("WARNING: You should always run with
 *                     libnvidia-ml.so that is installed with your NVIDIA
 *                     Display Driver ... stub library ..."), and
 *                     nvmlErrorString answers with it, as the stub does:
 *                     gpuready must recognise the stub by what it printed,
 *                     since this file is not in a .../stubs/ directory
 *   FAKE_NVML_GPUS    how many GPUs an initialised NVML reports (default
 *                     0); each answers nvmlDeviceGetHandleByIndex_v2 and
 *                     nvmlDeviceGetTemperature (40 C)
 *   FAKE_NVML_HANG    the name of one of the functions above
 *                     (nvmlInit_v2, nvmlDeviceGetCount_v2,
 *                     nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetTemperature):
 *                     it never returns, as NVML's calls can on a GPU that
 *                     has fallen off the bus (tests of the probes'
 *                     deadline, src/probe/deadline.c) */
#define _GNU_SOURCE
#include "lib/nvml_api.h"
#include "fake_hang.h"

#include <stdint.h>
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

static unsigned env_gpus(void)
{
	const char *s = getenv("FAKE_NVML_GPUS");
	int n = s && *s ? atoi(s) : 0;
	return n > 0 && n <= 64 ? (unsigned)n : 0;
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

	fake_hang_if("FAKE_NVML_HANG", "nvmlInit_v2");
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
	fake_hang_if("FAKE_NVML_HANG", "nvmlDeviceGetCount_v2");
	*n = env_gpus();
	return NVML_SUCCESS;
}

/* A device handle is its index plus one (NULL is no device). */
FAKE_API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *dev)
{
	fake_hang_if("FAKE_NVML_HANG", "nvmlDeviceGetHandleByIndex_v2");
	if (i >= env_gpus()) {
		*dev = NULL;
		return NVML_ERROR_INVALID_ARGUMENT;
	}
	*dev = (nvmlDevice_t)(uintptr_t)(i + 1);
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t dev, nvmlTemperatureSensors_t sensor, unsigned *t)
{
	fake_hang_if("FAKE_NVML_HANG", "nvmlDeviceGetTemperature");
	if (!dev || sensor != NVML_TEMPERATURE_GPU)
		return NVML_ERROR_INVALID_ARGUMENT;
	*t = 40;
	return NVML_SUCCESS;
}
