/* False alarms on healthy but unusual nodes (docs/failure-modes.md T05,
 * T06): a Grace Hopper GPU reaches the NICs of its CPU over NVLink-C2C
 * (gpudirect.path), DMA-BUF's prerequisites are information where legacy
 * peer memory is the method (gpudirect.dmabuf), and a legacy
 * NCCL_NET_GDR_LEVEL number is information (rdma.nccl_levels). The NVLinks
 * of bridged PCIe cards (T11) are pinned by test_nvlink_bridged in
 * test_checks_nvswitch.c. */
#include "testutil.h"
#include "checks/check.h"
#include "checks/gpu/common.h"
#include "core/report.h"
#include "opts/settings.h"

#include <stdlib.h>
#include <string.h>

struct run {
	struct report rep;
	struct settings set;
	struct inventory *inv;
};

/* Every check on a fixture, with its site configuration. */
static void run_all(struct run *r, const char *fixture)
{
	char *dir = tu_fixture(fixture);
	struct root *root = NULL;
	char *err = NULL;
	assert_int_equal(root_open(dir, &root), 0);
	settings_init(&r->set);
	assert_int_equal(settings_load_config(&r->set, NULL, root, &err), 0);
	assert_int_equal(inventory_load(root, &(struct load_opts){ .parts = INV_FILES }, &r->inv), 0);
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

/* The finding of id about subject; fails when there is none. */
static const struct finding *find(const struct run *r, const char *id, const char *subject)
{
	for (size_t i = 0; i < r->rep.n; i++)
		if (!strcmp(r->rep.v[i]->id, id) && !strcmp(r->rep.v[i]->subject, subject))
			return r->rep.v[i];
	fail_msg("no finding %s about %s", id, subject);
	return NULL;
}

/* No warn or fail from any check, naming the first one otherwise. */
static void assert_clean(const struct run *r)
{
	for (size_t i = 0; i < r->rep.n; i++) {
		const struct finding *f = r->rep.v[i];
		if (f->status == STATUS_WARN || f->status == STATUS_FAIL)
			fail_msg("%s %s: %s", f->id, f->subject, f->message);
	}
}

/* T05: one GH200, GPU on PCI domain 0009, GPU memory as a CPU-less NUMA
 * node, 64K-page kernel, NICs on other domains of the same CPU (NODE). */
static void test_gh200_clean(void **state)
{
	(void)state;
	struct run r;
	run_all(&r, "gh200-cx7-64k");
	assert_clean(&r);
	const struct finding *f = find(&r, "gpudirect.path", "0009:01:00.0");
	assert_int_equal(f->status, STATUS_OK);
	assert_non_null(strstr(f->message, "is NODE"));
	assert_non_null(strstr(f->message, "default P2C"));
	assert_non_null(strstr(find(&r, "gpudirect.method", "gpudirect")->message, "DMA-BUF"));
	done(&r);
}

static void setvar(struct nccl_var *v, const char *name, const char *value)
{
	*v = (struct nccl_var){ .name = (char *)name, .value = (char *)value, .source = (char *)"/etc/nccl.conf:1" };
}

/* The level NCCL applies to a C2C GPU's NIC (NCCL src/graph/paths.cc):
 * the default and P2C reach the NICs of the GPU's own CPU (NODE), unless
 * NCCL_NET_GDR_C2C=0; any other level, and any other GPU, as before. */
static void test_c2c_level(void **state)
{
	(void)state;
	struct inventory inv;
	struct nccl_var v[2];
	char shown[160];
	struct pci_dev gh200 = { .bdf = (char *)"0009:01:00.0", .vendor = VENDOR_NVIDIA, .device = 0x2342 };
	struct pci_dev h100 = { .bdf = (char *)"0000:18:00.0", .vendor = VENDOR_NVIDIA, .device = 0x2330 };
	memset(&inv, 0, sizeof(inv));
	inv.nccl.v = v;
	assert_true(gpu_c2c(&gh200));
	assert_false(gpu_c2c(&h100));
	assert_int_equal(gdr_level_for(&inv, &gh200, shown, sizeof(shown)), PATH_NODE);
	assert_non_null(strstr(shown, "default P2C"));
	assert_int_equal(gdr_level_for(&inv, &h100, shown, sizeof(shown)), PATH_PXB);

	setvar(&v[0], "NCCL_NET_GDR_C2C", "0");
	inv.nccl.n = 1;
	assert_int_equal(gdr_level_for(&inv, &gh200, shown, sizeof(shown)), PATH_PXB);
	assert_non_null(strstr(shown, "NCCL_NET_GDR_C2C=0"));

	setvar(&v[0], "NCCL_NET_GDR_LEVEL", "P2C");
	assert_int_equal(gdr_level_for(&inv, &gh200, shown, sizeof(shown)), PATH_NODE);
	assert_int_equal(gdr_level_for(&inv, &h100, shown, sizeof(shown)), PATH_PXB);
	setvar(&v[0], "NCCL_NET_GDR_LEVEL", "PIX");
	assert_int_equal(gdr_level_for(&inv, &gh200, shown, sizeof(shown)), PATH_PIX);
	setvar(&v[0], "NCCL_NET_GDR_LEVEL", "SYS");
	assert_int_equal(gdr_level_for(&inv, &gh200, shown, sizeof(shown)), PATH_SYS);
}

/* T06: proprietary driver, nvidia_peermem loaded: peer memory is the method,
 * so what DMA-BUF would need is information, never a warn or fail. */
static void test_peermem_dmabuf_info(void **state)
{
	(void)state;
	struct run r;
	run_all(&r, "h100-proprietary-peermem");
	assert_clean(&r);
	assert_non_null(strstr(find(&r, "gpudirect.method", "gpudirect")->message, "legacy peer memory (nvidia_peermem)"));
	const struct finding *f = find(&r, "gpudirect.dmabuf", "nvidia");
	assert_int_equal(f->status, STATUS_INFO);
	assert_non_null(strstr(f->message, "method in use"));
	assert_int_equal(find(&r, "gpudirect.dmabuf", "kernel")->status, STATUS_INFO);
	assert_int_equal(find(&r, "gpudirect.dmabuf", "CONFIG_PCI_P2PDMA")->status, STATUS_INFO);
	assert_int_equal(find(&r, "gpudirect.dmabuf", "CONFIG_INFINIBAND_USER_MEM")->status, STATUS_OK);
	done(&r);

	/* where DMA-BUF is the method (open driver), its prerequisites keep their verdicts */
	run_all(&r, "h100-roce-broken");
	assert_int_equal(find(&r, "gpudirect.dmabuf", "nvidia")->status, STATUS_OK);
	assert_non_null(strstr(find(&r, "gpudirect.method", "gpudirect")->message, "DMA-BUF"));
	done(&r);
}

/* A legacy NCCL_NET_GDR_LEVEL number works; the DGX Spark's guide writes 5. */
static void test_spark_legacy_level(void **state)
{
	(void)state;
	struct run r;
	run_all(&r, "dgx-spark-gb10");
	assert_clean(&r);
	const struct finding *f = find(&r, "rdma.nccl_levels", "NCCL_NET_GDR_LEVEL");
	assert_int_equal(f->status, STATUS_INFO);
	assert_non_null(strstr(f->message, "legacy number for SYS"));
	done(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gh200_clean),
		cmocka_unit_test(test_c2c_level),
		cmocka_unit_test(test_peermem_dmabuf_info),
		cmocka_unit_test(test_spark_legacy_level),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
