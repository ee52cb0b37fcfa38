/* Check policy on the fixture machines: each deliberate defect gets the
 * verdict the fixture's README argues for, and the healthy node passes.
 * Expected-output files cover the exact wording; these tests pin the
 * verdicts so a wording change cannot hide a policy change. */
#include "testutil.h"
#include "checks/check.h"
#include "opts/settings.h"
#include "core/report.h"
#include "probe/probe.h"

#include <stdlib.h>
#include <string.h>

struct run {
	struct report rep;
	struct settings set;
	struct inventory *inv;
};

static void run_fixture(struct run *r, const char *name, void (*tweak)(struct settings *))
{
	char *dir = tu_fixture(name);
	struct root *root = NULL;
	assert_int_equal(root_open(dir, &root), 0);
	settings_init(&r->set);
	if (tweak)
		tweak(&r->set);
	char *err = NULL;
	assert_int_equal(settings_load_config(&r->set, NULL, root, &err), 0);
	assert_int_equal(inventory_load(root, &(struct load_opts){ .parts = INV_ALL, .live = probe_live }, &r->inv), 0);
	report_init(&r->rep, "test", "host", dir);
	struct site_expect expect = settings_expect(&r->set);
	struct check_select sel = { .only = &r->set.only, .skip = &r->set.skip };
	assert_int_equal(checks_run(NULL, r->inv, &expect, &sel, &r->rep), 0);
	root_free(root);
	free(dir);
}

static void done(struct run *r)
{
	report_free(&r->rep);
	inventory_free(r->inv);
	settings_free(&r->set);
}

/* The worst status among findings of id about subject; -1 if none. */
static int status(const struct run *r, const char *id, const char *subject)
{
	int best = tu_worst(&r->rep, id, subject);
	if (best < 0)
		fail_msg("no finding %s about %s", id, subject);
	return best;
}

static bool message_has(const struct run *r, const char *id, const char *subject, const char *text)
{
	for (size_t i = 0; i < r->rep.n; i++) {
		const struct finding *f = r->rep.v[i];
		if (!strcmp(f->id, id) && !strcmp(f->subject, subject) && strstr(f->message, text))
			return true;
	}
	return false;
}

static void test_healthy(void **state)
{
	(void)state;
	struct run r;
	run_fixture(&r, "h100-8x-cx7-roce", NULL);
	assert_int_equal(r.rep.counts[STATUS_FAIL], 0);
	assert_int_equal(r.rep.counts[STATUS_WARN], 0);
	for (size_t i = 0; i < r.rep.n; i++)
		if (r.rep.v[i]->status == STATUS_WARN || r.rep.v[i]->status == STATUS_FAIL)
			assert_non_null(r.rep.v[i]->hint);
	assert_int_equal(status(&r, "rdma.port_state", "mlx5_7/1"), STATUS_OK);
	assert_int_equal(status(&r, "rdma.mtu", "mlx5_0/1"), STATUS_OK);
	assert_int_equal(status(&r, "rdma.roce_tos", "mlx5_3/1"), STATUS_OK);
	assert_int_equal(status(&r, "rdma.tos_persist", "rdma-cm-tos.service"), STATUS_OK);
	assert_int_equal(status(&r, "rdma.nccl_ib_tc", "NCCL_IB_TC"), STATUS_OK);
	assert_true(message_has(&r, "rdma.roce_gid", "mlx5_0/1", "index 3 = 10.0.0.10"));
	done(&r);
}

static void test_broken(void **state)
{
	(void)state;
	struct run r;
	run_fixture(&r, "h100-roce-broken", NULL);
	assert_int_equal(status(&r, "rdma.port_state", "mlx5_3/1"), STATUS_FAIL);
	assert_int_equal(status(&r, "rdma.netdev", "ens4f0np0"), STATUS_FAIL);
	assert_int_equal(status(&r, "rdma.mtu", "mlx5_5/1"), STATUS_WARN);
	assert_true(message_has(&r, "rdma.mtu", "mlx5_5/1", "active_mtu=1024"));
	assert_int_equal(status(&r, "rdma.mtu", "rdma"), STATUS_WARN); /* mixed MTUs */
	assert_int_equal(status(&r, "rdma.link_rate", "mlx5_6/1"), STATUS_WARN);
	assert_int_equal(status(&r, "rdma.port_errors", "mlx5_2/1"), STATUS_WARN);
	assert_int_equal(status(&r, "rdma.hw_counters", "mlx5_2/1"), STATUS_WARN);
	assert_int_equal(status(&r, "rdma.firmware", "ConnectX-7"), STATUS_WARN);
	assert_int_equal(status(&r, "rdma.roce_gid", "mlx5_1/1"), STATUS_FAIL);
	assert_int_equal(status(&r, "rdma.roce_tos", "mlx5_4/1"), STATUS_FAIL);
	assert_int_equal(status(&r, "rdma.roce_tos", "mlx5_7/1"), STATUS_FAIL);
	assert_int_equal(status(&r, "rdma.roce_tos", "mlx5_0/1"), STATUS_OK);
	assert_int_equal(status(&r, "rdma.tos_persist", "rdma"), STATUS_WARN);
	assert_int_equal(status(&r, "rdma.nccl_ib_hca", "NCCL_IB_HCA"), STATUS_FAIL);
	assert_int_equal(status(&r, "rdma.nccl_socket_ifname", "NCCL_SOCKET_IFNAME"), STATUS_FAIL);
	assert_int_equal(status(&r, "rdma.nccl_ib_tc", "NCCL_IB_TC"), STATUS_OK);
	assert_int_equal(status(&r, "rdma.nccl_ib_tc", "default_roce_tos"), STATUS_WARN);
	assert_true(message_has(&r, "rdma.nccl_ib_tc", "default_roce_tos", "mlx5_4/1 DSCP 24"));
	assert_int_equal(status(&r, "rdma.nccl_gid_index", "NCCL_IB_GID_INDEX"), STATUS_WARN);
	assert_true(message_has(&r, "rdma.nccl_gid_index", "NCCL_IB_GID_INDEX", "link-local"));
	assert_int_equal(status(&r, "rdma.nccl_names", "NCCL_IB_GDR_LEVEL"), STATUS_WARN);
	assert_int_equal(status(&r, "rdma.nccl_names", "NCCL_SOKCET_IFNAME"), STATUS_WARN);
	assert_true(message_has(&r, "rdma.nccl_names", "NCCL_SOKCET_IFNAME", "did you mean NCCL_SOCKET_IFNAME"));
	assert_int_equal(status(&r, "rdma.nccl_ranges", "NCCL_IB_TIMEOUT"), STATUS_FAIL);
	assert_int_equal(status(&r, "rdma.nccl_debug", "NCCL_DEBUG"), STATUS_WARN);
	assert_int_equal(status(&r, "rdma.sockbuf", "net.core.rmem_max"), STATUS_WARN);
	assert_int_equal(status(&r, "rdma.memlock", "memlock"), STATUS_WARN);
	done(&r);
}

static void test_spark_site_config(void **state)
{
	(void)state;
	struct run r;
	run_fixture(&r, "dgx-spark-gb10", NULL);
	assert_int_equal(r.set.tos, 0); /* from etc/gpuready.conf */
	assert_int_equal(status(&r, "rdma.port_state", "roceP2p1s0f0/1"), STATUS_OK);
	/* down ports that nothing uses (no address, no bond, NCCL_IB_HCA excludes them) are
	 * information: the Spark's unused QSFP ports (docs/failure-modes.md T15) */
	assert_int_equal(status(&r, "rdma.port_state", "rocep1s0f0/1"), STATUS_INFO);
	assert_int_equal(status(&r, "rdma.nccl_ib_hca", "NCCL_IB_HCA"), STATUS_OK);
	assert_int_equal(status(&r, "rdma.roce_tos", "roceP2p1s0f0/1"), STATUS_OK);
	/* a legacy number still works: information, not a warn (the fixture's README) */
	assert_int_equal(status(&r, "rdma.nccl_levels", "NCCL_NET_GDR_LEVEL"), STATUS_INFO);
	assert_true(message_has(&r, "rdma.nccl_levels", "NCCL_NET_GDR_LEVEL", "legacy number for SYS"));
	done(&r);
}

static void v100_default(struct settings *s)
{
	(void)s;
}

static void test_v100(void **state)
{
	(void)state;
	struct run r;
	run_fixture(&r, "v100-cx3pro", v100_default);
	assert_int_equal(status(&r, "rdma.modules", "mlx4_ib"), STATUS_OK);
	assert_int_equal(status(&r, "rdma.port_state", "mlx4_0/2"), STATUS_OK);
	assert_int_equal(status(&r, "rdma.port_state", "mlx4_0/1"), STATUS_FAIL);
	/* NCCL_IB_HCA=mlx4_0:1,mlx4_0:2 names the port without a cable */
	assert_int_equal(status(&r, "rdma.nccl_ib_hca", "NCCL_IB_HCA"), STATUS_FAIL);
	assert_int_equal(status(&r, "rdma.nccl_gid_index", "NCCL_IB_GID_INDEX"), STATUS_OK);
	assert_int_equal(status(&r, "rdma.hw_counters", "mlx4_0/2"), STATUS_SKIP);
	done(&r);
}

static void test_no_provider(void **state)
{
	(void)state;
	struct run r;
	run_fixture(&r, "h100-no-rdma-provider", NULL);
	assert_int_equal(status(&r, "rdma.modules", "mlx5_ib"), STATUS_FAIL);
	assert_int_equal(status(&r, "rdma.modules", "ib_uverbs"), STATUS_FAIL);
	assert_int_equal(status(&r, "rdma.modules", "mlx5_core"), STATUS_OK);
	assert_int_equal(status(&r, "rdma.devices", "rdma"), STATUS_FAIL);
	assert_true(message_has(&r, "rdma.devices", "rdma", "although 8 ConnectX-7 NICs (driver mlx5_core) are present"));
	assert_int_equal(status(&r, "rdma.nccl_ib_disable", "NCCL_IB_DISABLE"), STATUS_FAIL);
	done(&r);
}

static void test_ib(void **state)
{
	(void)state;
	struct run r;
	run_fixture(&r, "ndr-ib-4port", NULL);
	assert_int_equal(status(&r, "rdma.link_rate", "mlx5_3/1"), STATUS_WARN);
	assert_int_equal(status(&r, "rdma.link_rate", "mlx5_0/1"), STATUS_OK);
	assert_int_equal(status(&r, "rdma.mtu", "mlx5_0/1"), STATUS_SKIP); /* IB MTU needs verbs */
	assert_int_equal(status(&r, "rdma.roce_tos", "rdma"), STATUS_SKIP);
	assert_int_equal(status(&r, "rdma.nccl_ranges", "NCCL_IB_RETRY_CNT"), STATUS_FAIL);
	assert_int_equal(status(&r, "rdma.nccl_ranges", "NCCL_IB_SL"), STATUS_OK);
	assert_int_equal(status(&r, "rdma.port_errors", "mlx5_1/1"), STATUS_WARN);
	assert_true(message_has(&r, "rdma.nccl_ib_hca", "NCCL_IB_HCA", "mlx5_0/1, mlx5_1/1, mlx5_3/1"));
	done(&r);
}

static void test_plain(void **state)
{
	(void)state;
	struct run r;
	run_fixture(&r, "plain-no-rdma", NULL);
	assert_int_equal(status(&r, "rdma.devices", "rdma"), STATUS_FAIL);
	assert_true(message_has(&r, "rdma.devices", "rdma", "only needed for multi-server training"));
	assert_int_equal(status(&r, "rdma.modules", "ib_core"), STATUS_SKIP);
	assert_int_equal(status(&r, "rdma.port_state", "rdma"), STATUS_SKIP);
	done(&r);
}

static void only_tc(struct settings *s)
{
	strv_add(&s->only, "rdma.nccl_ib_tc");
	s->tos = 96;
}

static void test_selection_and_expectations(void **state)
{
	(void)state;
	struct run r;
	run_fixture(&r, "h100-8x-cx7-roce", only_tc);
	for (size_t i = 0; i < r.rep.n; i++)
		assert_string_equal(r.rep.v[i]->id, "rdma.nccl_ib_tc");
	/* 104 is DSCP 26; the site now expects DSCP 24 */
	assert_int_equal(status(&r, "rdma.nccl_ib_tc", "NCCL_IB_TC"), STATUS_FAIL);
	done(&r);
}

static void test_gpu_degraded(void **state)
{
	(void)state;
	struct run r;
	run_fixture(&r, "h100-gpu-degraded", NULL);
	assert_int_equal(status(&r, "gpu.pci", "0000:cb:00.0"), STATUS_FAIL); /* vfio-pci */
	assert_int_equal(status(&r, "gpu.pci", "0000:18:00.0"), STATUS_OK);
	assert_int_equal(status(&r, "gpu.driver_gpus", "0000:ba:00.0"), STATUS_FAIL); /* excluded */
	assert_int_equal(status(&r, "gpu.pcie_link", "0000:5c:00.0"), STATUS_WARN);  /* x8 */
	assert_int_equal(status(&r, "gpu.pcie_link", "0000:3a:00.0"), STATUS_WARN);  /* 256 MiB BAR1 */
	assert_int_equal(status(&r, "gpu.pcie_link", "0000:18:00.0"), STATUS_OK);
	assert_int_equal(status(&r, "gpu.xid", "0000:18:00.0"), STATUS_FAIL); /* 48 */
	assert_int_equal(status(&r, "gpu.xid", "0000:9a:00.0"), STATUS_FAIL); /* 79 */
	assert_int_equal(status(&r, "gpu.xid", "0000:4b:00.0"), STATUS_OK);   /* 13, 31: application */
	assert_int_equal(status(&r, "gpu.count", "gpu count"), STATUS_FAIL);
	assert_int_equal(status(&r, "gpu.nvml", "gpu"), STATUS_SKIP); /* needs the live machine */
	assert_true(message_has(&r, "gpu.pci", "nvswitch", "4 NVSwitch functions"));
	done(&r);
}

static void test_gpudirect(void **state)
{
	(void)state;
	struct run r;
	run_fixture(&r, "h100-8x-cx7-roce", NULL);
	assert_true(message_has(&r, "gpudirect.method", "gpudirect", "method: DMA-BUF"));
	assert_int_equal(status(&r, "gpudirect.path", "0000:18:00.0"), STATUS_OK);
	assert_true(message_has(&r, "gpudirect.path", "0000:18:00.0", "mlx5_0 (0000:19:00.0) is PIX"));
	assert_int_equal(status(&r, "gpudirect.peermem", "nvidia_peermem"), STATUS_OK);
	assert_int_equal(status(&r, "gpudirect.iommu", "iommu"), STATUS_OK);
	done(&r);

	run_fixture(&r, "h100-acs-iommu", NULL);
	assert_int_equal(status(&r, "gpudirect.acs", "0000:4a:00.0"), STATUS_FAIL);
	assert_int_equal(status(&r, "gpudirect.acs", "0000:b9:01.0"), STATUS_FAIL);
	assert_int_equal(status(&r, "gpudirect.acs", "0000:17:00.0"), STATUS_OK);
	assert_int_equal(status(&r, "gpudirect.iommu", "iommu"), STATUS_WARN);
	done(&r);

	run_fixture(&r, "h100-proprietary-peermem", NULL);
	assert_true(message_has(&r, "gpudirect.method", "gpudirect", "legacy peer memory"));
	/* legacy peer memory works: DMA-BUF's prerequisites are information (T06) */
	assert_int_equal(status(&r, "gpudirect.dmabuf", "nvidia"), STATUS_INFO);
	assert_int_equal(status(&r, "gpudirect.dmabuf", "kernel"), STATUS_INFO);
	assert_int_equal(status(&r, "gpudirect.dmabuf", "CONFIG_PCI_P2PDMA"), STATUS_INFO);
	assert_int_equal(status(&r, "gpudirect.peermem", "nvidia_peermem"), STATUS_OK);
	assert_int_equal(status(&r, "gpudirect.acs", "acs"), STATUS_SKIP); /* 64-byte config: not root */
	assert_int_equal(status(&r, "gpu.xid", "kernel log"), STATUS_SKIP);
	done(&r);

	run_fixture(&r, "h100-nic-other-socket", NULL);
	assert_int_equal(status(&r, "gpudirect.path", "0000:18:00.0"), STATUS_WARN);
	assert_true(message_has(&r, "gpudirect.path", "0000:18:00.0", "is SYS"));
	assert_int_equal(status(&r, "gpudirect.path", "0000:9b:00.0"), STATUS_OK);
	done(&r);

	/* NCCL_IB_HCA=^=mlx5_2 leaves out the PIX NIC of 0000:9b:00.0: NCCL's path is
	 * to mlx5_3 under another root port (NODE), beyond the default PXB */
	run_fixture(&r, "ndr-ib-4port", NULL);
	assert_int_equal(status(&r, "gpudirect.path", "0000:9b:00.0"), STATUS_WARN);
	assert_true(message_has(&r, "gpudirect.path", "0000:9b:00.0", "nearest NIC mlx5_2 is left out by NCCL_IB_HCA"));
	assert_true(message_has(&r, "gpudirect.path", "0000:9b:00.0", "mlx5_3 (0000:ba:00.0), is NODE"));
	assert_int_equal(status(&r, "gpudirect.path", "0000:19:00.0"), STATUS_OK);
	done(&r);

	run_fixture(&r, "v100-cx3pro", NULL);
	assert_int_equal(status(&r, "gpudirect.method", "gpudirect"), STATUS_FAIL);
	assert_int_equal(status(&r, "gpudirect.nic", "mlx4_0"), STATUS_FAIL);
	done(&r);

	run_fixture(&r, "dgx-spark-gb10", NULL);
	assert_true(message_has(&r, "gpudirect.path", "000f:01:00.0", "is NODE"));
	assert_int_equal(status(&r, "gpudirect.path", "000f:01:00.0"), STATUS_OK); /* NCCL_NET_GDR_LEVEL=5 is SYS */
	done(&r);

	/* no GPU: gpu.pci fails, and the GPUDirect checks skip naming that one cause */
	run_fixture(&r, "plain-no-rdma", NULL);
	assert_int_equal(status(&r, "gpu.pci", "gpu"), STATUS_FAIL);
	assert_int_equal(status(&r, "gpudirect.method", "gpudirect"), STATUS_SKIP);
	assert_true(message_has(&r, "gpudirect.method", "gpudirect", "no NVIDIA GPU on PCI (see gpu.pci)"));
	assert_int_equal(r.rep.counts[STATUS_FAIL], 2); /* gpu.pci and rdma.devices, each once */
	/* run alone, the GPUDirect area fails once for the missing GPU (gpu.pci is not in the
	 * run to say it), and its other checks skip */
	report_free(&r.rep);
	report_init(&r.rep, "test", "host", "plain");
	struct site_expect expect = settings_expect(&r.set);
	struct check_select sel = { .only = &r.set.only, .skip = &r.set.skip };
	assert_int_equal(checks_run("gpudirect", r.inv, &expect, &sel, &r.rep), 0);
	assert_int_equal(r.rep.counts[STATUS_FAIL], 1);
	assert_int_equal(status(&r, "gpudirect.method", "gpudirect"), STATUS_FAIL);
	assert_true(message_has(&r, "gpudirect.method", "gpudirect", "no NVIDIA GPU on PCI: the gpudirect checks cannot run"));
	assert_int_equal(status(&r, "gpudirect.nic", "gpudirect"), STATUS_SKIP);
	done(&r);
}

static bool hint_has(const struct run *r, const char *id, const char *text)
{
	for (size_t i = 0; i < r->rep.n; i++) {
		const struct finding *f = r->rep.v[i];
		if (!strcmp(f->id, id) && f->hint && strstr(f->hint, text))
			return true;
	}
	return false;
}

/* gpu.nvml and gpu.cuda as on a live node, with the NVML and CUDA results
 * given: the fixture's inventory marked live, nothing probed. */
static void run_live_libs(struct run *r, const char *fixture, const struct nvml_info *nvml,
			  const struct cuda_info *cuda)
{
	char *dir = tu_fixture(fixture);
	struct root *root = NULL;
	char *err = NULL;
	assert_int_equal(root_open(dir, &root), 0);
	settings_init(&r->set);
	strv_add(&r->set.only, "gpu.nvml");
	strv_add(&r->set.only, "gpu.cuda");
	assert_int_equal(settings_load_config(&r->set, NULL, root, &err), 0);
	assert_int_equal(inventory_load(root, &(struct load_opts){ .parts = INV_ALL, .live = probe_live }, &r->inv), 0);
	r->inv->live = true;
	r->inv->nvml = xcalloc(1, sizeof(*r->inv->nvml));
	*r->inv->nvml = *nvml;
	r->inv->cuda = xcalloc(1, sizeof(*r->inv->cuda));
	*r->inv->cuda = *cuda;
	report_init(&r->rep, "test", "host", dir);
	struct site_expect expect = settings_expect(&r->set);
	struct check_select sel = { .only = &r->set.only, .skip = &r->set.skip };
	assert_int_equal(checks_run(NULL, r->inv, &expect, &sel, &r->rep), 0);
	root_free(root);
	free(dir);
}

/* With GPUs on PCI, a library that cannot be used fails with its own
 * error, the cause of its class and that class's fix; the driver-not-loaded
 * advice follows gpu.driver (the module is loaded on this fixture). Without
 * GPUs it is a skip that keeps the library's error, with no fix. */
static void test_gpu_libs_fail(void **state)
{
	(void)state;
	struct run r;
	struct nvml_info nvml = { .fail = GPU_LIB_FAIL_NO_DRIVER, .code = 9, .cuda_driver_version = GPU_UNKNOWN,
				  .error = "nvmlInit_v2: Driver Not Loaded (9)" };
	struct cuda_info cuda = { .fail = GPU_LIB_FAIL_MISMATCH, .code = 803, .driver_version = GPU_UNKNOWN,
				  .error = "cuInit: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803): system has unsupported "
					   "display driver / cuda driver combination" };

	run_live_libs(&r, "h100-8x-cx7-roce", &nvml, &cuda);
	assert_int_equal(status(&r, "gpu.nvml", "nvml"), STATUS_FAIL);
	assert_true(message_has(&r, "gpu.nvml", "nvml", "nvmlInit_v2: Driver Not Loaded (9)"));
	assert_true(message_has(&r, "gpu.nvml", "nvml", "NVML cannot reach the GPUs"));
	assert_false(message_has(&r, "gpu.nvml", "nvml", "kernel module is not loaded"));
	assert_true(hint_has(&r, "gpu.nvml", "ls -l /dev/nvidia*"));
	assert_int_equal(status(&r, "gpu.cuda", "cuda"), STATUS_FAIL);
	assert_true(message_has(&r, "gpu.cuda", "cuda", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)"));
	assert_true(message_has(&r, "gpu.cuda", "cuda", "different driver versions"));
	assert_true(hint_has(&r, "gpu.cuda", "cat /proc/driver/nvidia/version"));
	done(&r);

	/* the stub: its error already says so, once */
	nvml = (struct nvml_info){ .fail = GPU_LIB_FAIL_STUB, .code = 9, .cuda_driver_version = GPU_UNKNOWN,
				   .error = "nvmlInit_v2: NVML_ERROR_DRIVER_NOT_LOADED (9): the CUDA toolkit's stub "
					    "libnvidia-ml.so was loaded, not the driver's libnvidia-ml.so.1 (/x/stubs/"
					    "libnvidia-ml.so)" };
	cuda = (struct cuda_info){ .fail = GPU_LIB_FAIL_MISSING, .driver_version = GPU_UNKNOWN,
				   .error = "CUDA driver library (libcuda.so.1) could not be loaded: libcuda.so.1: "
					    "cannot open shared object file" };
	run_live_libs(&r, "h100-8x-cx7-roce", &nvml, &cuda);
	assert_int_equal(status(&r, "gpu.nvml", "nvml"), STATUS_FAIL);
	assert_true(hint_has(&r, "gpu.nvml", "ldconfig -p | grep libnvidia-ml"));
	for (size_t i = 0; i < r.rep.n; i++)
		if (!strcmp(r.rep.v[i]->id, "gpu.nvml")) {
			const char *m = r.rep.v[i]->message, *first = strstr(m, "stub libnvidia-ml.so was loaded");
			assert_non_null(first);
			assert_null(strstr(first + 1, "stub libnvidia-ml.so was loaded"));
		}
	assert_true(hint_has(&r, "gpu.cuda", "apt install libcuda1"));
	done(&r);

	run_live_libs(&r, "plain-no-rdma", &nvml, &cuda);
	assert_int_equal(status(&r, "gpu.nvml", "nvml"), STATUS_SKIP);
	assert_true(message_has(&r, "gpu.nvml", "nvml", "no NVIDIA GPU on PCI (nvmlInit_v2: NVML_ERROR_DRIVER_NOT_LOADED"));
	assert_int_equal(status(&r, "gpu.cuda", "cuda"), STATUS_SKIP);
	assert_true(message_has(&r, "gpu.cuda", "cuda", "no NVIDIA GPU on PCI (CUDA driver library (libcuda.so.1)"));
	for (size_t i = 0; i < r.rep.n; i++)
		assert_null(r.rep.v[i]->hint);
	done(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_healthy),     cmocka_unit_test(test_broken),
		cmocka_unit_test(test_spark_site_config), cmocka_unit_test(test_v100),
		cmocka_unit_test(test_no_provider), cmocka_unit_test(test_ib),
		cmocka_unit_test(test_plain),       cmocka_unit_test(test_selection_and_expectations),
		cmocka_unit_test(test_gpu_degraded), cmocka_unit_test(test_gpudirect),
		cmocka_unit_test(test_gpu_libs_fail),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
