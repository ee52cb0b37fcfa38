/* Which NICs NCCL takes with NCCL_IB_HCA unset (rdma.nccl_ib_hca,
 * docs/failure-modes.md F25), on an inventory built by hand: GPU
 * 0000:18:00.0 with mlx5_0 in its PCIe switch (PIX), GPU 0000:28:00.0 with
 * mlx5_1 in its own, and a storage NIC mlx5_2 on a root port of the CPU
 * (no GPU's nearest). */
#include "testutil.h"
#include "checks/check.h"
#include "checks/rdma/common.h"
#include "core/report.h"

#include <stdlib.h>
#include <string.h>

extern const struct check_def check_rdma_nccl_ib_hca;

struct node {
	struct inventory inv;
	struct pci_dev pci[5];
	struct rdma_dev rdma[3];
	struct rdma_port ports[3];
	struct nccl_var vars[1];
	struct report rep;
};

static void fn(struct pci_dev *p, char *bdf, char *root, const char *const *up, size_t n_up, bool gpu)
{
	*p = (struct pci_dev){ .bdf = bdf, .root_bus = root, .numa_node = 0, .iommu_group = -1,
			       .vendor = gpu ? VENDOR_NVIDIA : VENDOR_MELLANOX, .device = gpu ? 0x2330 : 0x1021,
			       .class_code = gpu ? 0x030200 : 0x020000, .driver = gpu ? "nvidia" : "mlx5_core" };
	for (size_t i = 0; i < n_up; i++)
		strv_add(&p->upstream, up[i]);
}

static void nic(struct node *n, int i, char *name, char *bdf, double gbps)
{
	n->ports[i] = (struct rdma_port){ .num = 1, .state = 4, .state_name = "ACTIVE", .phys_state = 5,
					  .phys_name = "LinkUp", .link_layer = "Ethernet", .rate_gbps = gbps,
					  .roce_tos = -1 };
	n->rdma[i] = (struct rdma_dev){ .name = name, .node_type = 1, .pci_bdf = bdf, .ports = &n->ports[i],
					.n_ports = 1 };
}

/* lag0: the NIC of GPU 0 is a RoCE LAG device; lag1 likewise for GPU 1;
 * storage_gbps: the storage NIC's rate; hca: NCCL_IB_HCA or NULL. */
static void build(struct node *n, bool lag0, bool lag1, double storage_gbps, char *hca)
{
	static const char *const s0[] = { "0000:15:01.0", "0000:16:00.0", "0000:17:00.0" };
	static const char *const s0n[] = { "0000:15:01.0", "0000:16:00.0", "0000:17:01.0" };
	static const char *const s1[] = { "0000:25:01.0", "0000:26:00.0", "0000:27:00.0" };
	static const char *const s1n[] = { "0000:25:01.0", "0000:26:00.0", "0000:27:01.0" };
	static const char *const cpu[] = { "0000:00:1d.0" };
	memset(n, 0, sizeof(*n));
	fn(&n->pci[0], "0000:18:00.0", "pci0000:15", s0, 3, true);
	fn(&n->pci[1], "0000:19:00.0", "pci0000:15", s0n, 3, false);
	fn(&n->pci[2], "0000:28:00.0", "pci0000:25", s1, 3, true);
	fn(&n->pci[3], "0000:29:00.0", "pci0000:25", s1n, 3, false);
	fn(&n->pci[4], "0000:09:00.0", "pci0000:00", cpu, 1, false);
	nic(n, 0, lag0 ? "mlx5_bond_0" : "mlx5_0", "0000:19:00.0", 400);
	nic(n, 1, lag1 ? "mlx5_bond_1" : "mlx5_1", "0000:29:00.0", 400);
	nic(n, 2, "mlx5_2", "0000:09:00.0", storage_gbps);
	n->inv.pci = (struct pci_info){ .v = n->pci, .n = 5 };
	n->inv.rdma = (struct rdma_info){ .v = n->rdma, .n = 3 };
	n->inv.nccl = (struct nccl_config){ .v = n->vars };
	if (hca) {
		n->vars[0] = (struct nccl_var){ .name = "NCCL_IB_HCA", .value = hca, .source = "/etc/nccl.conf:1" };
		n->inv.nccl.n = 1;
	}
	report_init(&n->rep, "test", "host", "/");
	struct site_expect ex = { .tos = 104 };
	struct check_ctx c = { .inv = &n->inv, .expect = &ex, .report = &n->rep, .def = &check_rdma_nccl_ib_hca };
	assert_int_equal(check_rdma_nccl_ib_hca.run(&c), 0);
}

static void done(struct node *n)
{
	for (int i = 0; i < 5; i++)
		strv_free(&n->pci[i].upstream);
	report_free(&n->rep);
}

static void test_storage_nic_far(void **state)
{
	(void)state;
	struct node n;
	/* as fast as the rails: NCCL prefers the GPUs' nearest NICs: information */
	build(&n, false, false, 400, NULL);
	assert_int_equal(tu_worst(&n.rep, "rdma.nccl_ib_hca", "mlx5_2"), STATUS_INFO);
	assert_int_equal(tu_worst(&n.rep, "rdma.nccl_ib_hca", "mlx5_0"), -1);
	assert_int_equal(tu_worst(&n.rep, "rdma.nccl_ib_hca", "NCCL_IB_HCA"), STATUS_OK);
	done(&n);
	/* faster than the rails: NCCL ranks path bandwidth first: warn */
	build(&n, false, false, 800, NULL);
	assert_int_equal(tu_worst(&n.rep, "rdma.nccl_ib_hca", "mlx5_2"), STATUS_WARN);
	done(&n);
	/* excluded by NCCL_IB_HCA (T03): nothing about it */
	build(&n, false, false, 800, "^=mlx5_2");
	assert_int_equal(tu_worst(&n.rep, "rdma.nccl_ib_hca", "mlx5_2"), -1);
	assert_int_equal(tu_worst(&n.rep, "rdma.nccl_ib_hca", "NCCL_IB_HCA"), STATUS_OK);
	done(&n);
}

static void test_lag_beside_rails(void **state)
{
	(void)state;
	struct node n;
	/* GPU 0's nearest NIC is a LAG bond while GPU 1 has a plain rail: warn */
	build(&n, true, false, 400, NULL);
	assert_int_equal(tu_worst(&n.rep, "rdma.nccl_ib_hca", "mlx5_bond_0"), STATUS_WARN);
	const struct finding *f = NULL;
	for (size_t i = 0; i < n.rep.n; i++)
		if (!strcmp(n.rep.v[i]->subject, "mlx5_bond_0"))
			f = n.rep.v[i];
	assert_non_null(f);
	assert_non_null(strstr(f->message, "0000:18:00.0 (PIX)"));
	assert_non_null(strstr(f->hint, "NCCL_IB_HCA=^=mlx5_bond_0"));
	assert_non_null(strstr(f->hint, "NCCL_IB_HCA==mlx5_1)"));
	done(&n);
	/* every rail a LAG bond (T01): no warning */
	build(&n, true, true, 400, NULL);
	assert_int_equal(tu_worst(&n.rep, "rdma.nccl_ib_hca", "mlx5_bond_0"), -1);
	assert_int_equal(tu_worst(&n.rep, "rdma.nccl_ib_hca", "mlx5_bond_1"), -1);
	done(&n);
	/* NCCL_IB_HCA set: its own rules only */
	build(&n, true, false, 400, "mlx5");
	assert_int_equal(tu_worst(&n.rep, "rdma.nccl_ib_hca", "mlx5_bond_0"), -1);
	done(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_storage_nic_far),
		cmocka_unit_test(test_lag_beside_rails),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
