/* Unit tests for inventory/gpu_live: the pure helpers (PCI bus ID
 * normalisation, CUDA version numbers, the class of a library's failure)
 * and the live probes.
 *
 * The probes run for real. Where the NVIDIA driver is absent (the build
 * machines) they must fail cleanly: loaded false, an error that names the
 * library, no GPUs, no crash and nothing leaked (the suite runs under
 * ASan/LSan). Where a driver is present the same calls must give
 * consistent results instead. If the CUDA toolkit's stub libcuda.so is on
 * this machine, the last test loads it into the process first and checks
 * that the probes refuse it; without a toolkit that test is skipped. */
#include "testutil.h"
#include "inventory/gpu_live.h"
#include "probe/probe.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- gpu_normalize_bdf ---- */

static void expect_bdf(const char *in, const char *want)
{
	char out[32];
	memset(out, 'X', sizeof(out));
	if (!gpu_normalize_bdf(in, out, sizeof(out)))
		fail_msg("gpu_normalize_bdf(\"%s\") refused, want \"%s\"", in, want);
	assert_string_equal(out, want);
}

static void expect_no_bdf(const char *in)
{
	char out[32] = "untouched";
	if (gpu_normalize_bdf(in, out, sizeof(out)))
		fail_msg("gpu_normalize_bdf(\"%s\") accepted it as \"%s\"", in ? in : "(null)", out);
	assert_string_equal(out, "untouched");
}

static void test_bdf_forms(void **state)
{
	(void)state;
	expect_bdf("00000000:17:00.0", "0000:17:00.0"); /* NVML busId, 8-digit domain */
	expect_bdf("0000:17:00.0", "0000:17:00.0");     /* CUDA and sysfs */
	expect_bdf("00000000:B3:00.0", "0000:b3:00.0"); /* NVML prints uppercase */
	expect_bdf("0000:CA:1F.7", "0000:ca:1f.7");
	expect_bdf("0000:ca:00.1", "0000:ca:00.1");
	expect_bdf("00010000:00:04.0", "10000:00:04.0"); /* 32-bit domain (VMD, Hyper-V) */
	expect_bdf("0001:00:04.0", "0001:00:04.0");
	expect_bdf("FFFFFFFF:FF:1F.7", "ffffffff:ff:1f.7");
	expect_bdf("0:17:00.0", "0000:17:00.0"); /* short domain: padded to 4 digits */
	expect_bdf("000C:01:00.0", "000c:01:00.0");
}

static void test_bdf_rejects(void **state)
{
	(void)state;
	expect_no_bdf(NULL);
	expect_no_bdf("");
	expect_no_bdf("garbage");
	expect_no_bdf("GPU-8e6a1f0c-0000-0000-0000-000000000000");
	expect_no_bdf("17:00.0");             /* no domain */
	expect_no_bdf("000000000:17:00.0");   /* 9-digit domain */
	expect_no_bdf("0000:017:00.0");       /* 3-digit bus */
	expect_no_bdf("0000:7:00.0");         /* 1-digit bus */
	expect_no_bdf("0000:17:0.0");         /* 1-digit device */
	expect_no_bdf("0000:17:20.0");        /* device > 0x1f */
	expect_no_bdf("0000:17:00.8");        /* function > 7 */
	expect_no_bdf("0000:17:00.00");       /* 2-digit function */
	expect_no_bdf("0000:17:00");          /* no function */
	expect_no_bdf("0000:17:00.");         /* empty function */
	expect_no_bdf("0000:1g:00.0");        /* not hex */
	expect_no_bdf("0000-17-00.0");
	expect_no_bdf(" 0000:17:00.0");       /* leading space */
	expect_no_bdf("0000:17:00.0 ");       /* trailing space */
	expect_no_bdf("0000:17:00.0\n");
	expect_no_bdf("0000:17:00.0x");       /* trailing text */
	expect_no_bdf("0000:17:00.0:1");
	expect_no_bdf("+000:17:00.0");
	expect_no_bdf("0000:17:00.0000000000000000000000000000000000000000000"); /* too long */
}

static void test_bdf_buffers(void **state)
{
	(void)state;
	char out[13], small[12] = "untouched";
	/* exactly fits "0000:17:00.0" and its NUL */
	assert_true(gpu_normalize_bdf("00000000:17:00.0", out, sizeof(out)));
	assert_string_equal(out, "0000:17:00.0");
	/* one byte short: refused, buffer untouched */
	assert_false(gpu_normalize_bdf("00000000:17:00.0", small, sizeof(small)));
	assert_string_equal(small, "untouched");
	assert_false(gpu_normalize_bdf("0000:17:00.0", small, 0));
	assert_false(gpu_normalize_bdf("0000:17:00.0", NULL, 32));
	/* the struct fields are 32 bytes: the longest normal form fits */
	char field[32];
	assert_true(gpu_normalize_bdf("ffffffff:ff:1f.7", field, sizeof(field)));
}

/* ---- CUDA version numbers ---- */

static void expect_version_string(int v, const char *want)
{
	char out[16];
	memset(out, 'X', sizeof(out));
	cuda_version_string(v, out, sizeof(out));
	assert_string_equal(out, want);
}

static void test_version_string(void **state)
{
	(void)state;
	expect_version_string(12080, "12.8");
	expect_version_string(11070, "11.7");
	expect_version_string(13000, "13.0");
	expect_version_string(12020, "12.2");
	expect_version_string(10010, "10.1");
	expect_version_string(9020, "9.2");
	expect_version_string(12085, "12.8"); /* a units digit is not a minor */
	expect_version_string(0, "0.0");
	expect_version_string(GPU_UNKNOWN, "unknown");

	char tiny[4] = "XXX";
	cuda_version_string(12080, tiny, sizeof(tiny)); /* truncated, terminated */
	assert_string_equal(tiny, "12.");
	cuda_version_string(12080, tiny, 0);             /* writes nothing */
	assert_string_equal(tiny, "12.");
	cuda_version_string(12080, NULL, 8);
}

static void test_version_parse(void **state)
{
	(void)state;
	assert_int_equal(cuda_version_parse("12.8"), 12080);
	assert_int_equal(cuda_version_parse("11.7"), 11070);
	assert_int_equal(cuda_version_parse("13.0"), 13000);
	assert_int_equal(cuda_version_parse("12"), 12000);
	assert_int_equal(cuda_version_parse("9.2"), 9020);
	assert_int_equal(cuda_version_parse("12.10"), 12100);
	assert_int_equal(cuda_version_parse("0"), 0);

	const char *bad[] = { NULL, "", "x", "12.", ".8", "12..8", "12.8.1", "12.8 ", " 12.8", "12.8\n", "12,8",
			      "+12", "-12", "12.-1", "12.100", "1234", "12.8x", "v12.8", "1e3" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (cuda_version_parse(bad[i]) != -1)
			fail_msg("cuda_version_parse(\"%s\") = %d, want -1", bad[i] ? bad[i] : "(null)",
				 cuda_version_parse(bad[i]));

	/* the two agree */
	const int vs[] = { 9000, 10020, 11070, 12000, 12080, 13000 };
	for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
		char s[16];
		cuda_version_string(vs[i], s, sizeof(s));
		assert_int_equal(cuda_version_parse(s), vs[i]);
	}
}

/* ---- live probes ---- */

/* Does the loader find this soname here? (The probes must agree.) */
static bool lib_present(const char *soname)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return false;
	dlclose(h);
	return true;
}

/* ---- the class of a library failure ---- */

static void test_fail_class(void **state)
{
	(void)state;
	assert_int_equal(nvml_fail_class(0), GPU_LIB_FAIL_NONE);
	assert_int_equal(nvml_fail_class(9), GPU_LIB_FAIL_NO_DRIVER);    /* NVML_ERROR_DRIVER_NOT_LOADED */
	assert_int_equal(nvml_fail_class(18), GPU_LIB_FAIL_MISMATCH);    /* NVML_ERROR_LIB_RM_VERSION_MISMATCH */
	assert_int_equal(nvml_fail_class(4), GPU_LIB_FAIL_PERMISSION);   /* NVML_ERROR_NO_PERMISSION */
	assert_int_equal(nvml_fail_class(17), GPU_LIB_FAIL_PERMISSION);  /* NVML_ERROR_OPERATING_SYSTEM */
	assert_int_equal(nvml_fail_class(15), GPU_LIB_FAIL_OTHER);       /* NVML_ERROR_GPU_IS_LOST */
	assert_int_equal(nvml_fail_class(999), GPU_LIB_FAIL_OTHER);
	assert_int_equal(cuda_fail_class(0), GPU_LIB_FAIL_NONE);
	assert_int_equal(cuda_fail_class(100), GPU_LIB_FAIL_NO_DRIVER);  /* CUDA_ERROR_NO_DEVICE */
	assert_int_equal(cuda_fail_class(34), GPU_LIB_FAIL_STUB);        /* CUDA_ERROR_STUB_LIBRARY */
	assert_int_equal(cuda_fail_class(803), GPU_LIB_FAIL_MISMATCH);   /* CUDA_ERROR_SYSTEM_DRIVER_MISMATCH */
	assert_int_equal(cuda_fail_class(804), GPU_LIB_FAIL_COMPAT);     /* ..._COMPAT_NOT_SUPPORTED_ON_DEVICE */
	assert_int_equal(cuda_fail_class(304), GPU_LIB_FAIL_OTHER);      /* CUDA_ERROR_OPERATING_SYSTEM */
	assert_int_equal(cuda_fail_class(3), GPU_LIB_FAIL_OTHER);        /* CUDA_ERROR_NOT_INITIALIZED */
	assert_int_equal(cuda_fail_class(999), GPU_LIB_FAIL_OTHER);

	assert_true(gpu_lib_is_stub("/usr/local/cuda/lib64/stubs/libnvidia-ml.so", NULL, NULL));
	assert_true(gpu_lib_is_stub("/tmp/x/libnvidia-ml.so.1", "/usr/lib/x86_64-linux-gnu/stubs/libnvidia-ml.so", ""));
	assert_true(gpu_lib_is_stub("/tmp/x/libnvidia-ml.so.1", NULL,
				    "libnvidia-ml.so in GDK package is a stub library that is attached only for"));
	assert_false(gpu_lib_is_stub("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
				     "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.261.03", "some other banner"));
	assert_false(gpu_lib_is_stub(NULL, NULL, NULL));
}

static void test_nvml_probe(void **state)
{
	(void)state;
	struct nvml_info info;
	memset(&info, 0x5a, sizeof(info));
	nvml_probe(&info, NULL);
	if (!info.loaded) {
		print_message("nvml_probe: %s\n", info.error);
		assert_true(info.error[0] != '\0');
		if (!lib_present("libnvidia-ml.so.1")) {
			assert_non_null(strstr(info.error, "libnvidia-ml.so.1"));
			assert_int_equal(info.fail, GPU_LIB_FAIL_MISSING);
			assert_int_equal(info.code, 0);
		} else {
			assert_non_null(strstr(info.error, "nvmlInit_v2"));
			assert_int_not_equal(info.code, 0);
			assert_int_not_equal(info.fail, GPU_LIB_FAIL_NONE);
		}
		assert_null(info.v);
		assert_int_equal(info.n, 0);
		assert_int_equal(info.cuda_driver_version, GPU_UNKNOWN);
	} else {
		print_message("nvml_probe: driver %s, %zu GPU(s)\n", info.driver_version, info.n);
		assert_true(info.n == 0 || info.v != NULL);
		for (size_t i = 0; i < info.n; i++) {
			const struct nvml_gpu *g = &info.v[i];
			char again[32];
			assert_int_equal(g->index, i);
			assert_true(memchr(g->name, '\0', sizeof(g->name)) != NULL);
			assert_true(memchr(g->error, '\0', sizeof(g->error)) != NULL);
			if (g->bdf[0])
				assert_true(gpu_normalize_bdf(g->bdf, again, sizeof(again)) && !strcmp(again, g->bdf));
			assert_true(g->nvlink_down <= g->nvlink_links);
		}
	}
	nvml_info_free(&info);
	assert_null(info.v);
	assert_int_equal(info.n, 0);
	nvml_info_free(&info); /* twice is harmless */
	nvml_info_free(NULL);
}

static void test_cuda_probe(void **state)
{
	(void)state;
	struct cuda_info info;
	memset(&info, 0x5a, sizeof(info));
	cuda_probe(&info, true, NULL);
	if (!info.loaded) {
		print_message("cuda_probe: %s\n", info.error);
		assert_true(info.error[0] != '\0');
		if (!lib_present("libcuda.so.1")) {
			assert_non_null(strstr(info.error, "libcuda.so.1"));
			assert_int_equal(info.fail, GPU_LIB_FAIL_MISSING);
		} else {
			assert_non_null(strstr(info.error, "cuInit"));
			assert_int_equal(info.fail, cuda_fail_class(info.code));
		}
		assert_null(info.v);
		assert_int_equal(info.n, 0);
	} else {
		print_message("cuda_probe: driver %d, %zu device(s)\n", info.driver_version, info.n);
		for (size_t i = 0; i < info.n; i++) {
			const struct cuda_gpu *g = &info.v[i];
			assert_int_equal(g->ordinal, (int)i);
			assert_true(g->roundtrip_done);
			if (!g->roundtrip_ok)
				print_message("  device %zu round trip: %s\n", i, g->roundtrip_error);
		}
	}
	cuda_info_free(&info);
	assert_null(info.v);
	cuda_info_free(&info);
	cuda_info_free(NULL);
}

/* In a child process under the deadline (what `check` runs), the probes
 * say what they say in this one. */
static void test_probes_in_child(void **state)
{
	(void)state;
	struct nvml_info na, nb;
	nvml_probe(&na, NULL);
	memset(&nb, 0x5a, sizeof(nb));
	nvml_probe_deadline(&nb, PROBE_CALL_TIMEOUT_S);
	print_message("nvml_probe_deadline: %s\n", nb.error);
	assert_int_equal(na.loaded, nb.loaded);
	assert_int_equal(na.fail, nb.fail);
	assert_int_equal(na.code, nb.code);
	assert_int_equal(na.n, nb.n);
	assert_true(nb.n == 0 || nb.v != NULL);
	assert_string_equal(na.driver_version, nb.driver_version);
	if (!na.loaded)
		assert_string_equal(na.error, nb.error);
	nvml_info_free(&na);
	nvml_info_free(&nb);

	struct cuda_info ca, cb;
	cuda_probe(&ca, false, NULL);
	memset(&cb, 0x5a, sizeof(cb));
	cuda_probe_deadline(&cb, false, PROBE_CALL_TIMEOUT_S);
	print_message("cuda_probe_deadline: %s\n", cb.error);
	assert_int_equal(ca.loaded, cb.loaded);
	assert_int_equal(ca.fail, cb.fail);
	assert_int_equal(ca.driver_version, cb.driver_version);
	assert_int_equal(ca.n, cb.n);
	for (size_t i = 0; i < cb.n; i++)
		assert_string_equal(ca.v[i].bdf, cb.v[i].bdf);
	if (!ca.loaded)
		assert_string_equal(ca.error, cb.error);
	cuda_info_free(&ca);
	cuda_info_free(&cb);
}

/* GPUREADY_PROBE_TIMEOUT: positive seconds up to an hour, else 20 s. */
static void test_probe_timeout(void **state)
{
	(void)state;
	const char *bad[] = { "", "0", "-1", "abc", "1.5s", "3601", "nan" };
	unsetenv("GPUREADY_PROBE_TIMEOUT");
	assert_true(probe_call_timeout() == PROBE_CALL_TIMEOUT_S);
	setenv("GPUREADY_PROBE_TIMEOUT", "1.5", 1);
	assert_true(probe_call_timeout() == 1.5);
	setenv("GPUREADY_PROBE_TIMEOUT", "3600", 1);
	assert_true(probe_call_timeout() == 3600);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("GPUREADY_PROBE_TIMEOUT", bad[i], 1);
		if (probe_call_timeout() != PROBE_CALL_TIMEOUT_S)
			fail_msg("GPUREADY_PROBE_TIMEOUT=%s accepted", bad[i]);
	}
	unsetenv("GPUREADY_PROBE_TIMEOUT");
}

static void test_gdr_probe(void **state)
{
	(void)state;
	const char *bdfs[] = { "0000:17:00.0", "00000000:CA:00.0" };
	const char *devs[] = { "mlx5_0", "mlx5_that_is_not_here" };
	struct gdr_probe out[2];

	memset(out, 0x5a, sizeof(out));
	gdr_probe_run(bdfs, devs, 2, true, true, out, NULL);
	for (size_t i = 0; i < 2; i++) {
		print_message("gdr_probe[%zu]: dmabuf: %s | peermem: %s\n", i, out[i].dmabuf_error,
			      out[i].peermem_error);
		assert_string_equal(out[i].gpu_bdf, bdfs[i]);
		assert_string_equal(out[i].ibdev, devs[i]);
		/* whatever the machine, a pair that did not register says why */
		if (!out[i].dmabuf_ok)
			assert_true(out[i].dmabuf_error[0] != '\0');
		if (!out[i].peermem_ok)
			assert_true(out[i].peermem_error[0] != '\0');
	}
	/* no such RDMA device anywhere: setup fails, nothing tried */
	assert_false(out[1].dmabuf_tried);
	assert_false(out[1].peermem_tried);
	if (!lib_present("libcuda.so.1")) {
		for (size_t i = 0; i < 2; i++) {
			assert_false(out[i].dmabuf_tried || out[i].dmabuf_ok || out[i].peermem_tried ||
				     out[i].peermem_ok);
			assert_int_equal(out[i].dmabuf_errno, 0);
			assert_non_null(strstr(out[i].dmabuf_error, "libcuda.so.1"));
			assert_non_null(strstr(out[i].peermem_error, "libcuda.so.1"));
		}
	}

	/* only peer memory asked: the DMA-BUF fields stay empty */
	memset(out, 0x5a, sizeof(out));
	gdr_probe_run(bdfs, devs, 1, false, true, out, NULL);
	assert_false(out[0].dmabuf_tried);
	assert_string_equal(out[0].dmabuf_error, "");
	assert_true(out[0].peermem_ok || out[0].peermem_error[0] != '\0');

	/* nothing asked: names copied, nothing loaded or tried */
	memset(out, 0x5a, sizeof(out));
	gdr_probe_run(bdfs, devs, 2, false, false, out, NULL);
	for (size_t i = 0; i < 2; i++) {
		assert_string_equal(out[i].gpu_bdf, bdfs[i]);
		assert_false(out[i].dmabuf_tried || out[i].peermem_tried);
		assert_string_equal(out[i].dmabuf_error, "");
		assert_string_equal(out[i].peermem_error, "");
	}
	gdr_probe_run(NULL, NULL, 0, true, true, out, NULL); /* no pairs */
	gdr_probe_run(bdfs, devs, 1, true, true, NULL, NULL);
}

/* The registration probe in a child under a deadline answers as it does
 * in this process, whatever this machine has. */
static void test_gdr_probe_in_child(void **state)
{
	(void)state;
	const char *bdfs[] = { "0000:17:00.0", "00000000:CA:00.0" };
	const char *devs[] = { "mlx5_0", "mlx5_that_is_not_here" };
	struct gdr_probe here[2], child[2];

	memset(here, 0, sizeof(here));
	memset(child, 0x5a, sizeof(child));
	gdr_probe_run(bdfs, devs, 2, true, true, here, NULL);
	gdr_probe_deadline(bdfs, devs, 2, true, true, PROBE_CALL_TIMEOUT_S, child);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(child[i].fail, GPU_LIB_FAIL_NONE);
		assert_string_equal(child[i].gpu_bdf, here[i].gpu_bdf);
		assert_string_equal(child[i].ibdev, here[i].ibdev);
		assert_int_equal(child[i].dmabuf_tried, here[i].dmabuf_tried);
		assert_int_equal(child[i].peermem_ok, here[i].peermem_ok);
		assert_string_equal(child[i].peermem_error, here[i].peermem_error);
	}
	/* nothing asked: no child, names copied */
	memset(child, 0x5a, sizeof(child));
	gdr_probe_deadline(bdfs, devs, 2, false, false, 1, child);
	assert_string_equal(child[1].ibdev, devs[1]);
	assert_int_equal(child[1].fail, GPU_LIB_FAIL_NONE);
	assert_string_equal(child[1].peermem_error, "");
	gdr_probe_deadline(bdfs, devs, 1, true, true, 1, NULL);
}

/* A stub already in the process (for example linked with -lcuda from a
 * toolkit's stubs/) owns the soname libcuda.so.1: the probes must see it
 * for what it is. Runs last: the stub stays mapped once pinned. */
static void test_stub_libcuda_refused(void **state)
{
	(void)state;
	const char *stubs[] = { "/usr/local/cuda/lib64/stubs/libcuda.so", "/usr/local/cuda/lib/stubs/libcuda.so" };
	void *stub = NULL;

	if (lib_present("libcuda.so.1")) {
		print_message("a libcuda.so.1 is installed; stub test not meaningful here\n");
		skip();
	}
	for (size_t i = 0; i < sizeof(stubs) / sizeof(stubs[0]) && !stub; i++)
		if (access(stubs[i], R_OK) == 0)
			stub = dlopen(stubs[i], RTLD_NOW | RTLD_LOCAL);
	if (!stub) {
		print_message("no CUDA toolkit stub libcuda.so here; skipped\n");
		skip();
	}

	struct cuda_info info;
	cuda_probe(&info, true, NULL);
	print_message("cuda_probe with the stub loaded: %s\n", info.error);
	assert_false(info.loaded);
	assert_null(info.v);
	assert_non_null(strstr(info.error, "CUDA_ERROR_STUB_LIBRARY (34)"));
	assert_non_null(strstr(info.error, "stub"));
	assert_int_equal(info.fail, GPU_LIB_FAIL_STUB);
	cuda_info_free(&info);

	const char *bdfs[] = { "0000:17:00.0" };
	const char *devs[] = { "mlx5_0" };
	struct gdr_probe out[1];
	gdr_probe_run(bdfs, devs, 1, true, true, out, NULL);
	assert_false(out[0].dmabuf_tried || out[0].peermem_tried);
	assert_non_null(strstr(out[0].dmabuf_error, "CUDA_ERROR_STUB_LIBRARY"));
	assert_non_null(strstr(out[0].peermem_error, "stub"));
	dlclose(stub);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bdf_forms),
		cmocka_unit_test(test_bdf_rejects),
		cmocka_unit_test(test_bdf_buffers),
		cmocka_unit_test(test_version_string),
		cmocka_unit_test(test_version_parse),
		cmocka_unit_test(test_fail_class),
		cmocka_unit_test(test_nvml_probe),
		cmocka_unit_test(test_cuda_probe),
		cmocka_unit_test(test_probes_in_child),
		cmocka_unit_test(test_probe_timeout),
		cmocka_unit_test(test_gdr_probe),
		cmocka_unit_test(test_gdr_probe_in_child),
		cmocka_unit_test(test_stub_libcuda_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
