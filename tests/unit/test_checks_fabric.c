/* The RDMA fabric and NVLink domains: link flapping (rdma.link_flaps, F30),
 * ECN for the RoCE priority (rdma.roce_ecn, F27, T12), libibverbs
 * providers (rdma.verbs_provider, F31, T14), NCCL variables that switch
 * multi-node NVLink off (rdma.nccl_mnnvl, F08) and the IMEX service
 * (gpu.imex, F07), on inventories built by hand: one ConnectX-7 port
 * mlx5_0/1 (RoCE, netdev ens1f0np0) or an InfiniBand port; and the parsers
 * of /proc/uptime and libibverbs' .driver files. */
#include "testutil.h"
#include "checks/check.h"
#include "checks/rdma/common.h"
#include "core/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

extern const struct check_def check_rdma_link_flaps, check_rdma_roce_ecn, check_rdma_verbs_provider,
	check_rdma_nccl_mnnvl, check_gpu_imex;

struct node {
	struct inventory inv;
	struct pci_dev pci;
	struct netdev net;
	struct rdma_dev dev;
	struct rdma_port port;
	struct counter counters[1];
	struct verbs_provider prov[3];
	struct nccl_var vars[2];
	struct site_expect ex;
	struct report rep;
};

/* A node up ten days with one healthy RoCE port (ib: an InfiniBand port
 * without netdev), MLNX_OFED's ECN on for every priority, and the mlx5
 * provider installed. */
static void build(struct node *n, bool ib)
{
	memset(n, 0, sizeof(*n));
	n->pci = (struct pci_dev){ .bdf = "0000:19:00.0", .vendor = VENDOR_MELLANOX, .device = 0x1021,
				   .class_code = 0x020000, .driver = "mlx5_core", .numa_node = 0, .iommu_group = -1 };
	n->net = (struct netdev){ .name = "ens1f0np0", .operstate = "up", .carrier = 1, .speed = 400000, .mtu = 9000,
				  .type = 1, .pci_bdf = "0000:19:00.0", .carrier_changes = 2, .carrier_up = 1,
				  .carrier_down = 1 };
	for (int k = 0; k < 2; k++)
		for (int p = 0; p < 8; p++)
			n->net.ecn[k][p] = 1;
	n->counters[0] = (struct counter){ .name = "link_downed", .value = 0 };
	n->port = (struct rdma_port){ .num = 1, .state = 4, .state_name = "ACTIVE", .phys_state = 5, .phys_name = "LinkUp",
				      .link_layer = ib ? "InfiniBand" : "Ethernet", .rate_gbps = 400,
				      .netdev = ib ? NULL : "ens1f0np0", .counters = n->counters, .n_counters = 1,
				      .roce_tos = -1 };
	n->dev = (struct rdma_dev){ .name = "mlx5_0", .node_type = 1, .pci_bdf = "0000:19:00.0", .uverbs = "uverbs0",
				    .uverbs_node = true, .ports = &n->port, .n_ports = 1 };
	n->prov[0] = (struct verbs_provider){ .name = "mlx5", .file = "/etc/libibverbs.d/mlx5.driver",
					      .lib = "/usr/lib/x86_64-linux-gnu/libibverbs/libmlx5-rdmav34.so" };
	n->inv.pci = (struct pci_info){ .v = &n->pci, .n = 1 };
	n->inv.net = (struct net_info){ .v = &n->net, .n = 1 };
	n->inv.rdma = (struct rdma_info){ .v = &n->dev, .n = 1, .uverbs_class = true, .dev_recorded = true };
	n->inv.rdma.verbs = (struct verbs_conf){ .v = n->prov, .n = 1 };
	n->inv.kernel.uptime = 864000;
	n->inv.nccl = (struct nccl_config){ .v = n->vars };
	n->inv.fabric.imex.active = -1;
	n->inv.fabric.imex_nodes_err = -ENOENT;
	n->inv.fabric.imex_channels_err = -ENOENT;
	n->ex.tos = 104;
	report_init(&n->rep, "test", "host", "/");
}

static const struct finding *run(struct node *n, const struct check_def *def, const char *subject)
{
	struct check_ctx c = { .inv = &n->inv, .expect = &n->ex, .report = &n->rep, .def = def };
	assert_int_equal(def->run(&c), 0);
	const struct finding *got = NULL;
	for (size_t i = 0; i < n->rep.n; i++)
		if (!strcmp(n->rep.v[i]->subject, subject))
			got = n->rep.v[i];
	if (!got)
		fail_msg("%s: no finding about %s", def->id, subject);
	return got;
}

static void done(struct node *n)
{
	report_free(&n->rep);
}

static void has(const char *s, const char *part)
{
	if (!s || !strstr(s, part))
		fail_msg("\"%s\" lacks \"%s\"", s ? s : "(null)", part);
}

/* ---- rdma.link_flaps (F30) ---- */

static void test_flaps_boot_is_fine(void **state)
{
	(void)state;
	struct node n;
	build(&n, false);
	const struct finding *f = run(&n, &check_rdma_link_flaps, "mlx5_0/1");
	assert_int_equal(f->status, STATUS_OK);
	has(f->message, "no link drops");
	done(&n);
	/* a kernel before 4.16: carrier_changes only, 2 = one down, one up */
	build(&n, false);
	n.net.carrier_up = n.net.carrier_down = -1;
	n.net.carrier_counts_err = -ENOENT;
	assert_int_equal(run(&n, &check_rdma_link_flaps, "mlx5_0/1")->status, STATUS_OK);
	done(&n);
}

static void test_flaps_against_uptime(void **state)
{
	(void)state;
	struct node n;
	/* 5 drops in two hours: flapping */
	build(&n, false);
	n.inv.kernel.uptime = 7200;
	n.net.carrier_down = 6, n.net.carrier_up = 6, n.net.carrier_changes = 12;
	const struct finding *f = run(&n, &check_rdma_link_flaps, "mlx5_0/1");
	assert_int_equal(f->status, STATUS_WARN);
	has(f->message, "went down 5 times in 2.0 hours");
	has(f->hint, "`mlxlink -d 0000:19:00.0 -m`");
	done(&n);
	/* the same 5 drops over ten days: old events */
	build(&n, false);
	n.net.carrier_down = 6, n.net.carrier_up = 6, n.net.carrier_changes = 12;
	f = run(&n, &check_rdma_link_flaps, "mlx5_0/1");
	assert_int_equal(f->status, STATUS_OK);
	has(f->message, "5 link drops in 10.0 days");
	done(&n);
	/* uptime unknown: cannot tell how recent (fail closed) */
	build(&n, false);
	n.inv.kernel.uptime_err = -ENOENT;
	n.net.carrier_down = 3;
	f = run(&n, &check_rdma_link_flaps, "mlx5_0/1");
	assert_int_equal(f->status, STATUS_WARN);
	has(f->message, "/proc/uptime");
	done(&n);
}

static void test_flaps_sources(void **state)
{
	(void)state;
	struct node n;
	/* carrier counts unreadable and link_downed 0: no ok without them */
	build(&n, false);
	n.net.carrier_changes = n.net.carrier_up = n.net.carrier_down = -1;
	n.net.carrier_changes_err = -EACCES;
	n.net.carrier_counts_err = -EACCES;
	const struct finding *f = run(&n, &check_rdma_link_flaps, "mlx5_0/1");
	assert_int_equal(f->status, STATUS_SKIP);
	has(f->message, "carrier_changes");
	done(&n);
	/* an InfiniBand port: link_downed, which a bring-up does not count */
	build(&n, true);
	n.inv.kernel.uptime = 3600;
	n.counters[0].value = 2;
	f = run(&n, &check_rdma_link_flaps, "mlx5_0/1");
	assert_int_equal(f->status, STATUS_WARN);
	has(f->message, "link_downed 2");
	done(&n);
}

/* ---- rdma.roce_ecn (F27, T12) ---- */

static void test_ecn(void **state)
{
	(void)state;
	struct node n;
	build(&n, false);
	const struct finding *f = run(&n, &check_rdma_roce_ecn, "mlx5_0/1");
	assert_int_equal(f->status, STATUS_OK);
	has(f->message, "priority 3");
	done(&n);
	/* priority 3 off at the reaction point */
	build(&n, false);
	n.net.ecn[ECN_RP][3] = 0;
	f = run(&n, &check_rdma_roce_ecn, "mlx5_0/1");
	assert_int_equal(f->status, STATUS_WARN);
	has(f->message, "roce_rp disabled");
	has(f->hint, "`echo 1 > /sys/class/net/ens1f0np0/ecn/roce_rp/enable/3`");
	done(&n);
	/* off for priority 3, but the site's ToS is 0 (priority 0): ok */
	build(&n, false);
	n.net.ecn[ECN_NP][3] = 0;
	n.ex.tos = 0;
	assert_int_equal(run(&n, &check_rdma_roce_ecn, "mlx5_0/1")->status, STATUS_OK);
	done(&n);
	/* T12: the inbox driver has no ecn/ directory */
	build(&n, false);
	n.net.ecn_err = -ENOENT;
	f = run(&n, &check_rdma_roce_ecn, "mlx5_0/1");
	assert_int_equal(f->status, STATUS_SKIP);
	has(f->message, "inbox mlx5 driver");
	done(&n);
	/* a value that cannot be read: no ok */
	build(&n, false);
	n.net.ecn[ECN_NP][3] = -EACCES;
	assert_int_equal(run(&n, &check_rdma_roce_ecn, "mlx5_0/1")->status, STATUS_SKIP);
	done(&n);
}

/* ---- rdma.verbs_provider (F31, T14) ---- */

static void test_verbs_provider(void **state)
{
	(void)state;
	struct node n;
	build(&n, false);
	/* T14: providers for absent hardware without libraries do not matter */
	n.prov[1] = (struct verbs_provider){ .name = "ipathverbs", .file = "/etc/libibverbs.d/ipathverbs.driver" };
	n.inv.rdma.verbs.n = 2;
	const struct finding *f = run(&n, &check_rdma_verbs_provider, "libmlx5");
	assert_int_equal(f->status, STATUS_OK);
	assert_int_equal(n.rep.n, 1);
	done(&n);
	/* the library is missing from a provider directory that exists */
	build(&n, false);
	n.prov[0].lib = NULL;
	strv_add(&n.inv.rdma.verbs.dirs, "/usr/lib/x86_64-linux-gnu/libibverbs");
	f = run(&n, &check_rdma_verbs_provider, "libmlx5");
	assert_int_equal(f->status, STATUS_FAIL);
	has(f->message, "no libmlx5-rdmav*.so");
	has(f->hint, "ibverbs-providers");
	strv_free(&n.inv.rdma.verbs.dirs);
	done(&n);
	/* no "driver mlx5" line */
	build(&n, false);
	n.inv.rdma.verbs.n = 0;
	assert_int_equal(run(&n, &check_rdma_verbs_provider, "libmlx5")->status, STATUS_FAIL);
	done(&n);
	/* no /etc/libibverbs.d at all: not installed, or not recorded */
	build(&n, false);
	n.inv.rdma.verbs.n = 0;
	n.inv.rdma.verbs.conf_err = -ENOENT;
	assert_int_equal(run(&n, &check_rdma_verbs_provider, "libmlx5")->status, STATUS_WARN);
	done(&n);
	/* a .driver file that cannot be read: unknown, never fail or ok */
	build(&n, false);
	n.inv.rdma.verbs.n = 0;
	strv_add(&n.inv.rdma.verbs.unreadable, "/etc/libibverbs.d/mlx5.driver (Permission denied)");
	f = run(&n, &check_rdma_verbs_provider, "libmlx5");
	assert_int_equal(f->status, STATUS_WARN);
	has(f->message, "Permission denied");
	strv_free(&n.inv.rdma.verbs.unreadable);
	done(&n);
}

/* ---- rdma.nccl_mnnvl (F08) and gpu.imex's service (F07) ---- */

static void in_domain(struct node *n, int active)
{
	n->inv.fabric.imex.unit_path = "/lib/systemd/system/nvidia-imex.service";
	n->inv.fabric.imex.enabled = true;
	n->inv.fabric.imex.active = active;
	n->inv.fabric.imex_nodes_err = 0;
}

static void test_nccl_mnnvl(void **state)
{
	(void)state;
	struct node n;
	build(&n, false);
	n.vars[n.inv.nccl.n++] = (struct nccl_var){ .name = "NCCL_CUMEM_ENABLE", .value = "0",
						    .source = "/etc/nccl.conf:2" };
	/* outside an NVLink domain the variable is not judged */
	assert_int_equal(run(&n, &check_rdma_nccl_mnnvl, SUBJECT_NODE)->status, STATUS_SKIP);
	done(&n);
	build(&n, false);
	in_domain(&n, 1);
	n.vars[n.inv.nccl.n++] = (struct nccl_var){ .name = "NCCL_CUMEM_ENABLE", .value = "0",
						    .source = "/etc/nccl.conf:2" };
	n.vars[n.inv.nccl.n++] = (struct nccl_var){ .name = "NCCL_MNNVL_ENABLE", .value = "1",
						    .source = "environment" };
	const struct finding *f = run(&n, &check_rdma_nccl_mnnvl, "NCCL_CUMEM_ENABLE");
	assert_int_equal(f->status, STATUS_FAIL);
	has(f->message, "/etc/nccl.conf:2");
	has(f->hint, "remove NCCL_CUMEM_ENABLE from /etc/nccl.conf");
	assert_int_equal(run(&n, &check_rdma_nccl_mnnvl, "NCCL_MNNVL_ENABLE")->status, STATUS_OK);
	done(&n);
}

static void test_imex_service(void **state)
{
	(void)state;
	struct node n;
	build(&n, false);
	assert_int_equal(run(&n, &check_gpu_imex, "nvidia-imex.service")->status, STATUS_SKIP);
	done(&n);
	build(&n, false);
	in_domain(&n, 0);
	const struct finding *f = run(&n, &check_gpu_imex, "nvidia-imex.service");
	assert_int_equal(f->status, STATUS_FAIL);
	has(f->message, "not running");
	has(f->hint, "`systemctl enable --now nvidia-imex`");
	done(&n);
	build(&n, false);
	in_domain(&n, 0);
	n.inv.fabric.imex.unit_path = NULL;
	n.inv.nvidia.version = "570.124.06";
	f = run(&n, &check_gpu_imex, "nvidia-imex.service");
	assert_int_equal(f->status, STATUS_FAIL);
	has(f->hint, "`apt install nvidia-imex-570`");
	done(&n);
	build(&n, false);
	in_domain(&n, -1);
	assert_int_equal(run(&n, &check_gpu_imex, "nvidia-imex.service")->status, STATUS_SKIP);
	done(&n);
	build(&n, false);
	in_domain(&n, 1);
	assert_int_equal(run(&n, &check_gpu_imex, "nvidia-imex.service")->status, STATUS_OK);
	done(&n);
}

/* ---- parsers ---- */

static void collect(void *ud, const char *name)
{
	strv_add(ud, name);
}

static void test_parsers(void **state)
{
	(void)state;
	double up = -1;
	assert_int_equal(uptime_parse("350735.47 234388.90\n", &up), 0);
	assert_true(up > 350735 && up < 350736);
	assert_int_equal(uptime_parse("", &up), -EINVAL);
	assert_int_equal(uptime_parse("-1 2", &up), -EINVAL);
	assert_int_equal(uptime_parse("12x", &up), -EINVAL);
	assert_int_equal(uptime_parse(NULL, &up), -EINVAL);

	struct strv got = STRV_INIT;
	const char *text = "# comment\ndriver mlx5\n  driver\t/opt/x/libfoo \ndriverx y\ndriver a b\ndriver\n";
	verbs_driver_parse(text, strlen(text), collect, &got);
	static const char *const want[] = { "mlx5", "/opt/x/libfoo" };
	tu_expect_strv(&got, want, 2, ".driver lines");
	strv_free(&got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flaps_boot_is_fine), cmocka_unit_test(test_flaps_against_uptime),
		cmocka_unit_test(test_flaps_sources),      cmocka_unit_test(test_ecn),
		cmocka_unit_test(test_verbs_provider),     cmocka_unit_test(test_nccl_mnnvl),
		cmocka_unit_test(test_imex_service),       cmocka_unit_test(test_parsers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
