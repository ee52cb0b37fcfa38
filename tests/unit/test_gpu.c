/* Unit tests of the GPU/GPUDirect parsers and policy: Xid lines, kernel
 * config, the driver version line, PCI extended capabilities, PCIe path
 * classes, NCCL's GDR level, Xid classes, the subprocess runner, the
 * PyTorch probe (with a stand-in interpreter) and the cause and fix for
 * each way NVML or CUDA fails. */
#define _GNU_SOURCE
#include "testutil.h"
#include "checks/gpu/common.h"
#include "core/spawn.h"
#include "core/strbuf.h"
#include "inventory/inventory.h"
#include "inventory/topo.h"
#include "probe/probe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void test_xid_line(void **state)
{
	(void)state;
	char pci[32];
	int code = 0;
	assert_true(xid_parse_line("NVRM: Xid (PCI:0000:17:00): 79, pid=1234, name=python3, GPU has fallen off the bus.",
				   pci, sizeof(pci), &code));
	assert_string_equal(pci, "0000:17:00");
	assert_int_equal(code, 79);
	assert_true(xid_parse_line("4,1234,5678901,-;NVRM: Xid (PCI:0000:9B:00): 13, Graphics Exception", pci,
				   sizeof(pci), &code));
	assert_string_equal(pci, "0000:9b:00");
	assert_int_equal(code, 13);
	/* MIG suffix after the id */
	assert_true(xid_parse_line("[ 12.3] NVRM: Xid (PCI:0000:18:00 GPU-I:3): 94, pid=1", pci, sizeof(pci), &code));
	assert_int_equal(code, 94);
	assert_false(xid_parse_line("nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, ...", pci, sizeof(pci), &code));
	assert_false(xid_parse_line("NVRM: Xid (PCI:): 79", pci, sizeof(pci), &code));
	assert_false(xid_parse_line("NVRM: Xid (PCI:0000:17:00): , x", pci, sizeof(pci), &code));
	assert_false(xid_parse_line("NVRM: Xid (PCI:0000:17:00", pci, sizeof(pci), &code));
	assert_false(xid_parse_line("", pci, sizeof(pci), &code));
	char tiny[4];
	assert_false(xid_parse_line("NVRM: Xid (PCI:0000:17:00): 79", tiny, sizeof(tiny), &code));
}

static void kc(void *ud, const char *name, const char *value)
{
	struct strv *sv = ud;
	strv_push(sv, xasprintf("%s=%s", name, value));
}

static void test_kconfig(void **state)
{
	(void)state;
	struct strv sv = STRV_INIT;
	const char t[] = "#\n# Automatically generated file\nCONFIG_PCI_P2PDMA=y\n# CONFIG_DMABUF_MOVE_NOTIFY is not set\n"
			 "CONFIG_LOCALVERSION=\"-generic\"\n  CONFIG_X=m  \nnot a line\nCONFIG_EMPTY=\nCONFIG_LAST=y";
	kconfig_parse(t, sizeof(t) - 1, kc, &sv);
	assert_int_equal(sv.n, 6);
	assert_string_equal(sv.v[0], "CONFIG_PCI_P2PDMA=y");
	assert_string_equal(sv.v[1], "CONFIG_DMABUF_MOVE_NOTIFY=");
	assert_string_equal(sv.v[2], "CONFIG_LOCALVERSION=\"-generic\"");
	assert_string_equal(sv.v[3], "CONFIG_X=m");
	assert_string_equal(sv.v[5], "CONFIG_LAST=y");
	strv_free(&sv);
}

static void test_version_line(void **state)
{
	(void)state;
	char *v = NULL;
	assert_int_equal(nv_parse_version_line("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.124.06  Release "
					       "Build  (dvs-builder@U16)  Tue Feb 25 2025",
					       &v),
			 NV_FLAVOUR_OPEN);
	assert_string_equal(v, "570.124.06");
	free(v);
	assert_int_equal(nv_parse_version_line("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.216.03  Wed Oct 30 2024", &v),
			 NV_FLAVOUR_PROPRIETARY);
	assert_string_equal(v, "535.216.03");
	free(v);
	assert_int_equal(nv_parse_version_line("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05  Release",
					       &v),
			 NV_FLAVOUR_OPEN);
	assert_string_equal(v, "580.95.05");
	free(v);
	assert_int_equal(nv_parse_version_line("garbage", &v), NV_FLAVOUR_UNKNOWN);
	assert_null(v);
	assert_int_equal(nv_parse_version_line("", &v), NV_FLAVOUR_UNKNOWN);
	assert_null(v);
}

static void put32(unsigned char *c, unsigned off, uint32_t v)
{
	c[off] = (unsigned char)v;
	c[off + 1] = (unsigned char)(v >> 8);
	c[off + 2] = (unsigned char)(v >> 16);
	c[off + 3] = (unsigned char)(v >> 24);
}

static void test_ext_cap(void **state)
{
	(void)state;
	unsigned char cfg[4096];
	memset(cfg, 0, sizeof(cfg));
	/* AER at 0x100 -> ACS at 0x148 -> end */
	put32(cfg, 0x100, 0x0001 | 1u << 16 | 0x148u << 20);
	put32(cfg, 0x148, 0x000d | 1u << 16 | 0u << 20);
	assert_int_equal(pci_find_ext_cap(cfg, sizeof(cfg), 0x000d), 0x148);
	assert_int_equal(pci_find_ext_cap(cfg, sizeof(cfg), 0x0001), 0x100);
	assert_int_equal(pci_find_ext_cap(cfg, sizeof(cfg), 0x0010), 0);
	/* a non-root read: 64 bytes */
	assert_int_equal(pci_find_ext_cap(cfg, 64, 0x000d), -ENODATA);
	/* a loop in the chain terminates */
	put32(cfg, 0x148, 0x0002 | 1u << 16 | 0x100u << 20);
	assert_int_equal(pci_find_ext_cap(cfg, sizeof(cfg), 0x000d), 0);
	/* a next pointer beyond the data */
	put32(cfg, 0x100, 0x0001 | 1u << 16 | 0xffcu << 20);
	assert_int_equal(pci_find_ext_cap(cfg, 0x200, 0x000d), 0);
	/* all ones (a device gone) */
	memset(cfg, 0xff, sizeof(cfg));
	assert_int_equal(pci_find_ext_cap(cfg, sizeof(cfg), 0x000d), 0);
}

static void dev(struct pci_dev *d, const char *bdf, const char *root, int numa, const char *const *up)
{
	memset(d, 0, sizeof(*d));
	d->bdf = (char *)bdf;
	d->root_bus = (char *)root;
	d->numa_node = numa;
	for (; up && *up; up++)
		strv_add(&d->upstream, *up);
}

static void test_path_class(void **state)
{
	(void)state;
	struct pci_dev gpu, nic, nic2, other, far, sib;
	const char *const sw[] = { "0000:15:01.0", "0000:16:00.0", "0000:17:00.0", NULL };
	const char *const sw2[] = { "0000:15:01.0", "0000:16:00.0", "0000:17:01.0", NULL };
	const char *const deep[] = { "0000:15:01.0", "0000:16:00.0", "0000:17:02.0", "0000:20:00.0", "0000:21:00.0", NULL };
	const char *const rp2[] = { "0000:15:02.0", NULL };
	const char *const rp3[] = { "0000:37:01.0", NULL };
	dev(&gpu, "0000:18:00.0", "pci0000:15", 0, sw);
	dev(&nic, "0000:19:00.0", "pci0000:15", 0, sw2);
	dev(&nic2, "0000:22:00.0", "pci0000:15", 0, deep);
	dev(&other, "0000:30:00.0", "pci0000:15", 0, rp2);
	dev(&far, "0000:38:00.0", "pci0000:37", 1, rp3);
	dev(&sib, "0000:40:00.0", "pci0000:37", 0, rp3);
	assert_int_equal(pci_path_class(&gpu, &gpu, NULL), PATH_SELF);
	assert_int_equal(pci_path_class(&gpu, &nic, NULL), PATH_PIX);
	assert_int_equal(pci_path_class(&gpu, &nic2, NULL), PATH_PXB);
	assert_int_equal(pci_path_class(&gpu, &other, NULL), PATH_PHB);
	assert_int_equal(pci_path_class(&gpu, &far, NULL), PATH_SYS);
	assert_int_equal(pci_path_class(&gpu, &sib, NULL), PATH_NODE);
	struct strv br = STRV_INIT;
	pci_path_class(&gpu, &nic, &br);
	assert_true(strv_contains(&br, "0000:16:00.0"));
	assert_true(strv_contains(&br, "0000:17:00.0"));
	assert_true(strv_contains(&br, "0000:17:01.0"));
	assert_false(strv_contains(&br, "0000:15:01.0"));
	strv_free(&br);
	/* no hierarchy recorded */
	struct pci_dev flat;
	dev(&flat, "0004:05:00.0", NULL, -1, NULL);
	assert_int_equal(pci_path_class(&gpu, &flat, NULL), PATH_UNKNOWN);
	struct pci_dev *all[] = { &gpu, &nic, &nic2, &other, &far, &sib };
	for (size_t i = 0; i < 6; i++)
		strv_free(&all[i]->upstream);
	assert_string_equal(path_class_name(PATH_NODE), "NODE");
}

static void test_xid_policy(void **state)
{
	(void)state;
	/* NVIDIA's catalog: RESET_GPU, RESTART_BM and the ECC/NVLink workflows fail */
	static const int fatal[] = { 46, 48, 62, 64, 74, 79, 95, 109, 110, 119, 120, 136, 140, 143, 155, 156, 158 };
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		assert_int_equal(xid_advise(xid_lookup(fatal[i])->action)->status, STATUS_FAIL);
	/* application faults and informational codes leave the node in service (T13) */
	static const int fine[] = { 13, 31, 43, 45, 63 };
	for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++)
		assert_int_equal(xid_advise(xid_lookup(fine[i])->action)->status, STATUS_OK);
	assert_null(xid_lookup(12345));
	assert_null(xid_lookup(0));
	struct pci_dev p = { .bdf = (char *)"0000:18:00.0" };
	assert_true(xid_names("0000:18:00", &p));
	assert_true(xid_names("18:00", &p));
	assert_false(xid_names("0000:19:00", &p));
	int a, b;
	assert_true(kernel_version("6.8.0-52-generic", &a, &b));
	assert_int_equal(a, 6);
	assert_int_equal(b, 8);
	assert_false(kernel_version("garbage", &a, &b));
	assert_false(kernel_version(NULL, &a, &b));
}

/* Every class has its own cause and fix for each library; the driver-not-
 * loaded advice follows gpu.driver's verdict; the fixes are the commands
 * the class needs. */
/* The driver package by the loaded branch; defaults without a version. */
static void test_driver_package(void **state)
{
	(void)state;
	struct inventory inv = { 0 };
	char buf[48];
	assert_string_equal(gpu_driver_package(&inv, true, buf, sizeof(buf)), "nvidia-driver-570-open");
	assert_string_equal(gpu_driver_package(&inv, false, buf, sizeof(buf)), "nvidia-driver-535");
	inv.nvidia.version = (char *)"550.127.05";
	assert_string_equal(gpu_driver_package(&inv, true, buf, sizeof(buf)), "nvidia-driver-550-open");
	assert_string_equal(gpu_driver_package(&inv, false, buf, sizeof(buf)), "nvidia-driver-550");
	inv.nvidia.version = (char *)"garbage";
	assert_string_equal(gpu_driver_package(&inv, false, buf, sizeof(buf)), "nvidia-driver-535");
	/* Turing's first GPU is the first the open modules drive (pci.ids) */
	assert_true(0x1df6 < NV_FIRST_TURING_DEVICE && NV_FIRST_TURING_DEVICE <= 0x1e02);
}

static void test_lib_advice(void **state)
{
	(void)state;
	const enum gpu_lib_fail classes[] = { GPU_LIB_FAIL_MISSING, GPU_LIB_FAIL_SYMBOL,   GPU_LIB_FAIL_STUB,
					      GPU_LIB_FAIL_NO_DRIVER, GPU_LIB_FAIL_MISMATCH, GPU_LIB_FAIL_COMPAT,
					      GPU_LIB_FAIL_PERMISSION, GPU_LIB_FAIL_OTHER, GPU_LIB_FAIL_TIMEOUT };
	const size_t n = sizeof(classes) / sizeof(classes[0]);

	for (int lib = GPU_LIB_NVML; lib <= GPU_LIB_CUDA; lib++)
		for (int loaded = 0; loaded <= 1; loaded++)
			for (size_t i = 0; i < n; i++) {
				struct gpu_lib_advice a = gpu_lib_advise((enum gpu_lib)lib, classes[i], loaded);
				assert_true(a.cause && *a.cause && a.fix && *a.fix);
				for (size_t j = 0; j < i; j++) {
					struct gpu_lib_advice b = gpu_lib_advise((enum gpu_lib)lib, classes[j], loaded);
					if (!strcmp(a.fix, b.fix))
						fail_msg("lib %d loaded %d: classes %d and %d share a fix", lib, loaded,
							 (int)classes[i], (int)classes[j]);
				}
			}
	/* NONE is never reported, and gets the generic advice */
	assert_string_equal(gpu_lib_advise(GPU_LIB_NVML, GPU_LIB_FAIL_NONE, true).fix,
			    gpu_lib_advise(GPU_LIB_NVML, GPU_LIB_FAIL_OTHER, true).fix);

	struct gpu_lib_advice a = gpu_lib_advise(GPU_LIB_NVML, GPU_LIB_FAIL_NO_DRIVER, false);
	assert_non_null(strstr(a.cause, "kernel module is not loaded"));
	assert_non_null(strstr(a.fix, "modprobe nvidia"));
	assert_non_null(strstr(a.fix, "dmesg | grep -i nvrm"));
	a = gpu_lib_advise(GPU_LIB_NVML, GPU_LIB_FAIL_NO_DRIVER, true);
	assert_null(strstr(a.cause, "not loaded")); /* gpu.driver says it is loaded */
	assert_non_null(strstr(a.fix, "ls -l /dev/nvidia*"));
	a = gpu_lib_advise(GPU_LIB_CUDA, GPU_LIB_FAIL_NO_DRIVER, true);
	assert_non_null(strstr(a.fix, "modprobe nvidia_uvm"));
	assert_non_null(strstr(a.cause, "CUDA_VISIBLE_DEVICES"));

	a = gpu_lib_advise(GPU_LIB_NVML, GPU_LIB_FAIL_STUB, true);
	assert_string_equal(a.cause, "the CUDA toolkit's stub libnvidia-ml.so was loaded, not the driver's "
				     "libnvidia-ml.so.1");
	assert_non_null(strstr(a.fix, "ldconfig -p | grep libnvidia-ml"));
	assert_non_null(strstr(a.fix, "LD_LIBRARY_PATH"));
	a = gpu_lib_advise(GPU_LIB_CUDA, GPU_LIB_FAIL_STUB, true);
	assert_non_null(strstr(a.fix, "ldconfig -p | grep libcuda"));

	for (int lib = GPU_LIB_NVML; lib <= GPU_LIB_CUDA; lib++) {
		a = gpu_lib_advise((enum gpu_lib)lib, GPU_LIB_FAIL_MISMATCH, true);
		assert_non_null(strstr(a.fix, "cat /proc/driver/nvidia/version"));
		assert_non_null(strstr(a.fix, "reboot"));
		a = gpu_lib_advise((enum gpu_lib)lib, GPU_LIB_FAIL_PERMISSION, true);
		assert_non_null(strstr(a.fix, "ls -l /dev/nvidia*"));
		/* a library that is there is never to be installed */
		const enum gpu_lib_fail there[] = { GPU_LIB_FAIL_STUB, GPU_LIB_FAIL_NO_DRIVER, GPU_LIB_FAIL_MISMATCH,
						    GPU_LIB_FAIL_PERMISSION, GPU_LIB_FAIL_OTHER, GPU_LIB_FAIL_TIMEOUT };
		for (size_t i = 0; i < sizeof(there) / sizeof(there[0]); i++)
			assert_null(strstr(gpu_lib_advise((enum gpu_lib)lib, there[i], true).fix, "apt install"));
		/* no driver at all: the install gpu.driver asks for */
		a = gpu_lib_advise((enum gpu_lib)lib, GPU_LIB_FAIL_MISSING, false);
		assert_non_null(strstr(a.fix, "apt install nvidia-driver-570-open"));
	}
	/* a call that never returned: the kernel log's Xid, PCI, and a reboot */
	for (int lib = GPU_LIB_NVML; lib <= GPU_LIB_CUDA; lib++) {
		a = gpu_lib_advise((enum gpu_lib)lib, GPU_LIB_FAIL_TIMEOUT, true);
		assert_non_null(strstr(a.cause, "fallen off the bus"));
		assert_non_null(strstr(a.fix, "dmesg | grep -i -e xid"));
		assert_non_null(strstr(a.fix, "lspci -d 10de:"));
		assert_non_null(strstr(a.fix, "reboot"));
	}
	a = gpu_lib_advise(GPU_LIB_NVML, GPU_LIB_FAIL_MISSING, true);
	assert_non_null(strstr(a.fix, "apt install libnvidia-ml1"));
	assert_non_null(strstr(a.fix, "libnvidia-compute-"));
	a = gpu_lib_advise(GPU_LIB_CUDA, GPU_LIB_FAIL_MISSING, true);
	assert_non_null(strstr(a.fix, "apt install libcuda1"));
	a = gpu_lib_advise(GPU_LIB_CUDA, GPU_LIB_FAIL_COMPAT, true);
	assert_non_null(strstr(a.fix, "compat"));
}

static enum path_class level_of(const char *value)
{
	struct inventory inv;
	memset(&inv, 0, sizeof(inv));
	struct nccl_var v = { .name = (char *)"NCCL_NET_GDR_LEVEL", .value = (char *)value, .source = (char *)"test" };
	if (value) {
		inv.nccl.v = &v;
		inv.nccl.n = 1;
	}
	char shown[96];
	return gdr_level(&inv, shown, sizeof(shown));
}

static void test_gdr_level(void **state)
{
	(void)state;
	assert_int_equal(level_of(NULL), PATH_PXB);
	assert_int_equal(level_of("SYS"), PATH_SYS);
	assert_int_equal(level_of("PHB"), PATH_NODE); /* NCCL's PHB covers nvidia-smi's NODE */
	assert_int_equal(level_of("PIX"), PATH_PIX);
	assert_int_equal(level_of("5"), PATH_SYS);
	assert_int_equal(level_of("4"), PATH_SYS);
	assert_int_equal(level_of("3"), PATH_NODE);
	assert_int_equal(level_of("2"), PATH_PXB);
	assert_int_equal(level_of("sys"), PATH_PXB); /* case-sensitive: ignored, default */
	assert_int_equal(level_of("bogus"), PATH_PXB);
}

static void test_spawn(void **state)
{
	(void)state;
	struct spawn_result r;
	const char *echo[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
	assert_int_equal(spawn_run(echo, NULL, 10000, &r), 0);
	assert_int_equal(r.exit_code, 3);
	assert_string_equal(r.out.buf, "out\n");
	assert_string_equal(r.err.buf, "err\n");
	assert_false(r.timed_out);
	spawn_result_free(&r);
	/* a program that does not exist */
	const char *none[] = { "/nonexistent/gpuready-test-program", NULL };
	assert_int_equal(spawn_run(none, NULL, 1000, &r), -ENOENT);
	/* a deadline: the child and what it started are killed */
	const char *slow[] = { "sh", "-c", "sleep 30 & sleep 30; echo never", NULL };
	assert_int_equal(spawn_run(slow, NULL, 300, &r), 0);
	assert_true(r.timed_out);
	assert_false(r.abandoned); /* SIGKILL ends it: reaped, not left behind */
	assert_int_equal(r.out.len, 0);
	spawn_result_free(&r);
	/* stdin is /dev/null: a reader sees EOF at once */
	const char *cat[] = { "cat", NULL };
	assert_int_equal(spawn_run(cat, NULL, 5000, &r), 0);
	assert_int_equal(r.exit_code, 0);
	assert_false(r.timed_out);
	spawn_result_free(&r);
	/* output beyond the cap is dropped and flagged */
	const char *big[] = { "sh", "-c", "head -c 3000000 /dev/zero", NULL };
	assert_int_equal(spawn_run(big, NULL, 10000, &r), 0);
	assert_true(r.truncated);
	assert_int_equal(r.out.len, SPAWN_MAX_OUTPUT);
	spawn_result_free(&r);
}

/* A stand-in interpreter: a shell script that ignores its arguments and
 * prints what a Python with torch would. */
static char *fake_python(const char *dir, const char *body)
{
	char *p = xasprintf("%s/python", dir);
	char *script = xasprintf("#!/bin/sh\n%s\n", body);
	tu_write(dir, "/python", script);
	chmod(p, 0755);
	free(script);
	return p;
}

static void test_torch_probe(void **state)
{
	(void)state;
	char *d = tu_mkdtemp();
	struct torch_info t;
	char *py = fake_python(d, "echo 'UserWarning: something'; echo '{\"torch\": \"2.8.0+cu128\", \"cuda_version\": "
				  "\"12.8\", \"cuda_available\": true, \"device_count\": 8, \"nccl_available\": true, "
				  "\"nccl\": \"2.27.3\"}'");
	memset(&t, 0, sizeof(t));
	assert_int_equal(torch_load(py, &t), 0);
	assert_true(t.probed);
	assert_true(t.ok);
	assert_string_equal(t.torch_version, "2.8.0+cu128");
	assert_int_equal(t.cuda_available, 1);
	assert_int_equal(t.device_count, 8);
	assert_string_equal(t.nccl_version, "2.27.3");
	torch_free(&t);
	free(py);
	py = fake_python(d, "echo '{\"error\": \"import torch: No module named torch\"}'");
	memset(&t, 0, sizeof(t));
	torch_load(py, &t);
	assert_false(t.ok);
	assert_non_null(strstr(t.why, "No module named torch"));
	torch_free(&t);
	free(py);
	py = fake_python(d, "echo Traceback >&2; exit 1");
	memset(&t, 0, sizeof(t));
	torch_load(py, &t);
	assert_false(t.ok);
	assert_non_null(strstr(t.why, "exited with 1"));
	torch_free(&t);
	free(py);
	py = fake_python(d, "echo not json");
	memset(&t, 0, sizeof(t));
	torch_load(py, &t);
	assert_false(t.ok);
	assert_non_null(strstr(t.why, "no result"));
	torch_free(&t);
	free(py);
	memset(&t, 0, sizeof(t));
	torch_load("/nonexistent/python", &t);
	assert_false(t.probed);
	assert_non_null(t.why);
	torch_free(&t);
	tu_rmtree(d);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xid_line),   cmocka_unit_test(test_kconfig),    cmocka_unit_test(test_version_line),
		cmocka_unit_test(test_ext_cap),    cmocka_unit_test(test_path_class), cmocka_unit_test(test_xid_policy),
		cmocka_unit_test(test_gdr_level),  cmocka_unit_test(test_spawn),      cmocka_unit_test(test_torch_probe),
		cmocka_unit_test(test_lib_advice), cmocka_unit_test(test_driver_package),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
