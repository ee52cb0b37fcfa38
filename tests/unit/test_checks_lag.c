/* RoCE link aggregation: the bond reader on a small sysfs tree, and the
 * policy of rdma.roce_lag, rdma.bond_links, rdma.bond_lacp,
 * rdma.nccl_ib_qps, and of the checks that must not misjudge a LAG
 * (rdma.devices, rdma.nccl_ib_hca) or an unused port (port_unused), on
 * inventories built by hand: one dual-port ConnectX-7 at 0000:19:00 whose
 * ports ens1f0np0 and ens1f1np1 are the slaves of bond0. */
#include "testutil.h"
#include "checks/check.h"
#include "checks/rdma/common.h"
#include "core/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

extern const struct check_def check_rdma_roce_lag, check_rdma_bond_links, check_rdma_bond_lacp,
	check_rdma_nccl_ib_qps, check_rdma_devices, check_rdma_nccl_ib_hca;

struct node {
	struct inventory inv;
	struct pci_dev pci[2];
	struct netdev net[3];
	struct bond bond;
	struct bond_slave slaves[2];
	struct rdma_dev rdma[2];
	struct rdma_port ports[2];
	struct rdma_gid gids[2][1];
	struct nccl_var vars[2];
	struct report rep;
};

static void slave(struct bond_slave *s, char *name, bool up)
{
	*s = (struct bond_slave){ .name = name, .mii_status = up ? "up" : "down", .state = up ? "active" : "backup",
				  .link_failures = up ? 0 : 1, .aggregator_id = 1, .actor_state = 0x3f,
				  .partner_state = 0x3f };
}

static void port(struct node *n, int i, char *netdev, char *gid)
{
	struct rdma_port *p = &n->ports[i];
	struct rdma_gid *g = &n->gids[i][0];
	*g = (struct rdma_gid){ .gid = gid, .type = "RoCE v2", .ndev = netdev };
	rdma_gid_parse(g);
	*p = (struct rdma_port){ .num = 1, .state = 4, .state_name = "ACTIVE", .phys_state = 5, .phys_name = "LinkUp",
				 .link_layer = "Ethernet", .rate = "200 Gb/sec (4X HDR)", .rate_gbps = 200,
				 .netdev = netdev, .gids = g, .n_gids = 1, .roce_tos = -1 };
}

static void rdev(struct node *n, int i, char *name, char *bdf)
{
	n->rdma[i] = (struct rdma_dev){ .name = name, .node_type = 1, .pci_bdf = bdf, .uverbs = i ? "uverbs1" : "uverbs0",
					.uverbs_node = true, .ports = &n->ports[i], .n_ports = 1, .fw_ver = "28.39.1002" };
}

/* bond0 in `mode` over both ports; lag: one mlx5_bond_0 on PF0, else
 * mlx5_0 and mlx5_1 on their ports. */
static void build(struct node *n, int mode, bool lag)
{
	static char *modes[] = { "balance-rr", "active-backup", "balance-xor", "broadcast", "802.3ad" };
	memset(n, 0, sizeof(*n));
	for (int f = 0; f < 2; f++)
		n->pci[f] = (struct pci_dev){ .bdf = f ? "0000:19:00.1" : "0000:19:00.0", .vendor = VENDOR_MELLANOX,
					      .device = 0x1021, .class_code = 0x020000, .driver = "mlx5_core",
					      .numa_node = 0, .iommu_group = -1 };
	n->net[0] = (struct netdev){ .name = "bond0", .operstate = "up", .carrier = 1, .speed = 400000, .mtu = 9000,
				     .type = 1, .is_virtual = true };
	n->net[1] = (struct netdev){ .name = "ens1f0np0", .operstate = "up", .carrier = 1, .speed = 200000, .mtu = 9000,
				     .type = 1, .pci_bdf = "0000:19:00.0", .master = "bond0" };
	n->net[2] = (struct netdev){ .name = "ens1f1np1", .operstate = "up", .carrier = 1, .speed = 200000, .mtu = 9000,
				     .type = 1, .pci_bdf = "0000:19:00.1", .master = "bond0" };
	slave(&n->slaves[0], "ens1f0np0", true);
	slave(&n->slaves[1], "ens1f1np1", true);
	n->bond = (struct bond){ .name = "bond0", .mode = mode, .mode_name = modes[mode], .slaves = n->slaves,
				 .n_slaves = 2, .mii_status = "up", .ad_num_ports = mode == BOND_8023AD ? 2 : -1,
				 .ad_partner_mac = mode == BOND_8023AD ? "1c:34:da:01:02:03" : NULL,
				 .ad_partner_mac_err = mode == BOND_8023AD ? 0 : -ENODATA };
	if (lag) {
		port(n, 0, "bond0", "0000:0000:0000:0000:0000:ffff:0a00:000a");
		rdev(n, 0, "mlx5_bond_0", "0000:19:00.0");
	} else {
		port(n, 0, "ens1f0np0", "fe80:0000:0000:0000:a288:c2ff:fe01:0203");
		port(n, 1, "ens1f1np1", "fe80:0000:0000:0000:a288:c2ff:fe01:0204");
		rdev(n, 0, "mlx5_0", "0000:19:00.0");
		rdev(n, 1, "mlx5_1", "0000:19:00.1");
	}
	n->inv.pci = (struct pci_info){ .v = n->pci, .n = 2 };
	n->inv.net = (struct net_info){ .v = n->net, .n = 3, .bonds = &n->bond, .n_bonds = 1 };
	n->inv.rdma = (struct rdma_info){ .v = n->rdma, .n = lag ? 1 : 2, .uverbs_class = true, .dev_recorded = true,
					  .rdma_cm_node = true };
	n->inv.nccl = (struct nccl_config){ .v = n->vars };
	report_init(&n->rep, "test", "host", "/");
}

static void set_var(struct node *n, char *name, char *value)
{
	n->vars[n->inv.nccl.n++] = (struct nccl_var){ .name = name, .value = value, .source = "/etc/nccl.conf:1" };
}

static void run(struct node *n, const struct check_def *def)
{
	struct site_expect ex = { 0 };
	struct check_ctx c = { .inv = &n->inv, .expect = &ex, .report = &n->rep, .def = def };
	assert_int_equal(def->run(&c), 0);
}

/* The worst status of id about subject; -1 if none. */
static int status(const struct node *n, const char *id, const char *subject)
{
	return tu_worst(&n->rep, id, subject);
}

/* Does a finding of id carry text in its message or details? */
static bool says(const struct node *n, const char *id, const char *text)
{
	for (size_t i = 0; i < n->rep.n; i++) {
		const struct finding *f = n->rep.v[i];
		if (strcmp(f->id, id))
			continue;
		if (strstr(f->message, text))
			return true;
		for (size_t k = 0; k < f->details.n; k++)
			if (strstr(f->details.v[k], text))
				return true;
	}
	return false;
}

static void test_parse_mode(void **state)
{
	(void)state;
	int mode = -1;
	char *name = NULL;
	assert_int_equal(bond_parse_mode("802.3ad 4", &mode, &name), 0);
	assert_int_equal(mode, BOND_8023AD);
	assert_string_equal(name, "802.3ad");
	free(name);
	assert_int_equal(bond_parse_mode("active-backup 1", &mode, &name), 0);
	assert_int_equal(mode, BOND_ACTIVE_BACKUP);
	free(name);
	const char *bad[] = { "", "802.3ad", " 4", "802.3ad x", "weird 9", "802.3ad -1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(bond_parse_mode(bad[i], &mode, &name), -EINVAL);
	assert_int_equal(bond_parse_mode(NULL, &mode, &name), -EINVAL);
}

/* The reader on the files bond_sysfs.c and bond_sysfs_slave.c write, as a
 * reader without CAP_NET_ADMIN sees them (ad_partner_mac empty). */
static void test_reader(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	const char *b = "sys/devices/virtual/net/bond0", *s0 = "sys/devices/pci0000:17/0000:19:00.0/net/ens1f0np0",
		   *s1 = "sys/devices/pci0000:17/0000:19:00.1/net/ens1f1np1";
	char p[256];
	tu_write(dir, "sys/class/net/bonding_masters", "bond0\n");
	tu_symlink(dir, "sys/class/net/bond0", "../../devices/virtual/net/bond0");
	tu_symlink(dir, "sys/class/net/ens1f0np0", "../../devices/pci0000:17/0000:19:00.0/net/ens1f0np0");
	tu_symlink(dir, "sys/class/net/ens1f1np1", "../../devices/pci0000:17/0000:19:00.1/net/ens1f1np1");
	const char *bond_files[][2] = { { "operstate", "up\n" }, { "bonding/mode", "802.3ad 4\n" },
					{ "bonding/slaves", "ens1f0np0 ens1f1np1\n" }, { "bonding/mii_status", "up\n" },
					{ "bonding/active_slave", "" }, { "bonding/xmit_hash_policy", "layer3+4 1\n" },
					{ "bonding/ad_num_ports", "2\n" }, { "bonding/ad_partner_mac", "" } };
	for (size_t i = 0; i < sizeof(bond_files) / sizeof(bond_files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", b, bond_files[i][0]);
		tu_write(dir, p, bond_files[i][1]);
	}
	const char *slaves[] = { s0, s1 };
	for (int i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/operstate", slaves[i]);
		tu_write(dir, p, "up\n");
		snprintf(p, sizeof(p), "%s/master", slaves[i]);
		tu_symlink(dir, p, "../../../../virtual/net/bond0");
		snprintf(p, sizeof(p), "%s/bonding_slave/mii_status", slaves[i]);
		tu_write(dir, p, i ? "down\n" : "up\n");
		snprintf(p, sizeof(p), "%s/bonding_slave/ad_aggregator_id", slaves[i]);
		tu_write(dir, p, i ? "N/A\n" : "1\n");
		snprintf(p, sizeof(p), "%s/bonding_slave/ad_actor_oper_port_state", slaves[i]);
		tu_write(dir, p, "71\n");
	}
	struct root *r = NULL;
	assert_int_equal(root_open(dir, &r), 0);
	struct net_info ni = { 0 };
	assert_int_equal(net_load(r, &ni), 0);
	assert_int_equal(ni.n, 3); /* bonding_masters is no netdev */
	assert_int_equal(ni.n_bonds, 1);
	const struct bond *bd = bond_find(&ni, "bond0");
	assert_non_null(bd);
	assert_int_equal(bd->mode, BOND_8023AD);
	assert_string_equal(bd->xmit_hash_policy, "layer3+4");
	assert_int_equal(bd->ad_num_ports, 2);
	assert_null(bd->ad_partner_mac);
	assert_int_equal(bd->ad_partner_mac_err, -ENODATA);
	assert_null(bd->active_slave);
	assert_int_equal(bd->n_slaves, 2);
	assert_string_equal(bd->slaves[1].name, "ens1f1np1");
	assert_string_equal(bd->slaves[1].mii_status, "down");
	assert_int_equal(bd->slaves[0].aggregator_id, 1);
	assert_int_equal(bd->slaves[1].aggregator_id, -1);
	assert_int_equal(bd->slaves[0].actor_state, 71);
	assert_int_equal(bd->slaves[0].partner_state, -1); /* missing */
	assert_int_equal(bd->slaves[0].link_failures, -1);
	assert_string_equal(net_find(&ni, "ens1f0np0")->master, "bond0");
	assert_null(net_find(&ni, "bond0")->master);
	net_free(&ni);
	root_free(r);
	tu_rmtree(dir);
	free(dir);
}

/* T01: a formed LAG gives no alarm, the second PF is no orphan. */
static void test_lag_formed(void **state)
{
	(void)state;
	struct node n;
	build(&n, BOND_8023AD, true);
	run(&n, &check_rdma_roce_lag);
	run(&n, &check_rdma_bond_links);
	run(&n, &check_rdma_bond_lacp);
	run(&n, &check_rdma_devices);
	assert_int_equal(status(&n, "rdma.roce_lag", "bond0"), STATUS_OK);
	assert_true(says(&n, "rdma.roce_lag", "mlx5_bond_0"));
	assert_int_equal(status(&n, "rdma.bond_links", "bond0"), STATUS_OK);
	assert_int_equal(status(&n, "rdma.bond_lacp", "bond0"), STATUS_OK);
	for (size_t i = 0; i < n.rep.n; i++)
		assert_true(n.rep.v[i]->status != STATUS_FAIL && n.rep.v[i]->status != STATUS_WARN);
	report_free(&n.rep);
}

/* F21: per-port devices left on a bonded card. */
static void test_lag_not_formed(void **state)
{
	(void)state;
	struct node n;
	build(&n, BOND_BALANCE_RR, false);
	run(&n, &check_rdma_roce_lag);
	assert_int_equal(status(&n, "rdma.roce_lag", "bond0"), STATUS_FAIL);
	assert_true(says(&n, "rdma.roce_lag", "mlx5_0 and mlx5_1"));
	assert_true(says(&n, "rdma.roce_lag", "balance-rr (0) is not one mlx5 RoCE LAG supports"));
	report_free(&n.rep);

	build(&n, BOND_8023AD, false); /* a supported mode: VFs or switchdev */
	run(&n, &check_rdma_roce_lag);
	assert_int_equal(status(&n, "rdma.roce_lag", "bond0"), STATUS_FAIL);
	assert_true(says(&n, "rdma.roce_lag", "SR-IOV"));
	report_free(&n.rep);

	/* a bond of one port of each of two cards (DGX BasePOD storage): not judged */
	build(&n, BOND_ACTIVE_BACKUP, false);
	n.pci[1].bdf = "0000:2a:00.1";
	n.net[2].pci_bdf = "0000:2a:00.1";
	n.rdma[1].pci_bdf = "0000:2a:00.1";
	run(&n, &check_rdma_roce_lag);
	assert_int_equal(status(&n, "rdma.roce_lag", "bond0"), STATUS_SKIP);
	report_free(&n.rep);

	/* no bond over ConnectX ports */
	build(&n, BOND_8023AD, false);
	n.inv.net.n_bonds = 0;
	run(&n, &check_rdma_roce_lag);
	assert_int_equal(status(&n, "rdma.roce_lag", "rdma"), STATUS_SKIP);
	report_free(&n.rep);

	/* slaves unreadable: a warning naming the file, never ok */
	build(&n, BOND_8023AD, true);
	n.bond.slaves_err = -EACCES;
	n.bond.n_slaves = 0;
	run(&n, &check_rdma_roce_lag);
	assert_int_equal(status(&n, "rdma.roce_lag", "bond0"), STATUS_WARN);
	assert_true(says(&n, "rdma.roce_lag", "/sys/class/net/bond0/bonding/slaves"));
	report_free(&n.rep);
}

/* F22: a slave down costs bandwidth (fail), or redundancy (warn). */
static void test_slave_down(void **state)
{
	(void)state;
	struct node n;
	build(&n, BOND_8023AD, true);
	slave(&n.slaves[1], "ens1f1np1", false);
	n.net[2].speed = -1;
	run(&n, &check_rdma_bond_links);
	assert_int_equal(status(&n, "rdma.bond_links", "bond0"), STATUS_FAIL);
	assert_true(says(&n, "rdma.bond_links", "ens1f1np1 (mii_status down, 1 link failure)"));
	assert_true(says(&n, "rdma.bond_links", "200 of 400 Gb/s left"));
	report_free(&n.rep);

	build(&n, BOND_ACTIVE_BACKUP, true);
	n.bond.active_slave = "ens1f0np0";
	slave(&n.slaves[1], "ens1f1np1", false);
	run(&n, &check_rdma_bond_links);
	assert_int_equal(status(&n, "rdma.bond_links", "bond0"), STATUS_WARN);
	assert_true(says(&n, "rdma.bond_links", "no redundancy"));
	report_free(&n.rep);

	build(&n, BOND_8023AD, true);
	slave(&n.slaves[0], "ens1f0np0", false);
	slave(&n.slaves[1], "ens1f1np1", false);
	run(&n, &check_rdma_bond_links);
	assert_int_equal(status(&n, "rdma.bond_links", "bond0"), STATUS_FAIL);
	assert_true(says(&n, "rdma.bond_links", "every slave is down"));
	report_free(&n.rep);

	/* a slave's mii_status unreadable: warn, never ok */
	build(&n, BOND_8023AD, true);
	n.slaves[1].mii_status = NULL;
	n.slaves[1].mii_err = -EACCES;
	run(&n, &check_rdma_bond_links);
	assert_int_equal(status(&n, "rdma.bond_links", "bond0"), STATUS_WARN);
	report_free(&n.rep);
}

/* F23: no LACP partner, from the slaves' states or the bond's files. */
static void test_lacp(void **state)
{
	(void)state;
	struct node n;
	build(&n, BOND_8023AD, true);
	n.slaves[0].actor_state = n.slaves[1].actor_state = 0x47;
	n.slaves[1].aggregator_id = 2;
	n.bond.ad_num_ports = 1;
	n.bond.ad_partner_mac = "00:00:00:00:00:00";
	run(&n, &check_rdma_bond_lacp);
	assert_int_equal(status(&n, "rdma.bond_lacp", "bond0"), STATUS_FAIL);
	assert_true(says(&n, "rdma.bond_lacp", "Defaulted"));
	assert_true(says(&n, "rdma.bond_lacp", "2 different aggregators"));
	report_free(&n.rep);

	/* recorded without CAP_NET_ADMIN: the partner MAC is unknown, the states decide */
	build(&n, BOND_8023AD, true);
	n.bond.ad_partner_mac = NULL;
	n.bond.ad_partner_mac_err = -ENODATA;
	run(&n, &check_rdma_bond_lacp);
	assert_int_equal(status(&n, "rdma.bond_lacp", "bond0"), STATUS_OK);
	report_free(&n.rep);

	/* nothing readable: skip, never ok */
	build(&n, BOND_8023AD, true);
	n.bond.ad_partner_mac = NULL;
	n.bond.ad_num_ports = -1;
	n.slaves[0].actor_state = n.slaves[1].actor_state = -1;
	n.slaves[0].aggregator_id = n.slaves[1].aggregator_id = -1;
	run(&n, &check_rdma_bond_lacp);
	assert_int_equal(status(&n, "rdma.bond_lacp", "bond0"), STATUS_SKIP);
	report_free(&n.rep);

	build(&n, BOND_ACTIVE_BACKUP, true);
	run(&n, &check_rdma_bond_lacp);
	assert_int_equal(status(&n, "rdma.bond_lacp", "bond0"), STATUS_SKIP);
	report_free(&n.rep);
}

/* F26: one QP per connection over a LAG NCCL uses. */
static void test_qps(void **state)
{
	(void)state;
	struct node n;
	build(&n, BOND_8023AD, true);
	run(&n, &check_rdma_nccl_ib_qps);
	assert_int_equal(status(&n, "rdma.nccl_ib_qps", "NCCL_IB_QPS_PER_CONNECTION"), STATUS_WARN);
	assert_true(says(&n, "rdma.nccl_ib_qps", "not set (default 1)"));
	report_free(&n.rep);

	build(&n, BOND_8023AD, true);
	set_var(&n, "NCCL_IB_QPS_PER_CONNECTION", "1");
	run(&n, &check_rdma_nccl_ib_qps);
	assert_int_equal(status(&n, "rdma.nccl_ib_qps", "NCCL_IB_QPS_PER_CONNECTION"), STATUS_WARN);
	report_free(&n.rep);

	build(&n, BOND_8023AD, true);
	set_var(&n, "NCCL_IB_QPS_PER_CONNECTION", "2");
	run(&n, &check_rdma_nccl_ib_qps);
	assert_int_equal(status(&n, "rdma.nccl_ib_qps", "NCCL_IB_QPS_PER_CONNECTION"), STATUS_OK);
	report_free(&n.rep);

	/* NCCL does not use the LAG: not applicable */
	build(&n, BOND_8023AD, true);
	set_var(&n, "NCCL_IB_HCA", "^=mlx5_bond_0");
	run(&n, &check_rdma_nccl_ib_qps);
	assert_int_equal(status(&n, "rdma.nccl_ib_qps", "NCCL_IB_QPS_PER_CONNECTION"), STATUS_SKIP);
	report_free(&n.rep);

	build(&n, BOND_BALANCE_RR, false);
	n.inv.net.n_bonds = 0;
	run(&n, &check_rdma_nccl_ib_qps);
	assert_int_equal(status(&n, "rdma.nccl_ib_qps", "rdma"), STATUS_SKIP);
	report_free(&n.rep);
}

/* F24: NCCL_IB_HCA names devices LAG replaced, or the reverse. */
static void test_hca(void **state)
{
	(void)state;
	struct node n;
	build(&n, BOND_8023AD, true);
	set_var(&n, "NCCL_IB_HCA", "=mlx5_0,mlx5_1");
	run(&n, &check_rdma_nccl_ib_hca);
	assert_int_equal(status(&n, "rdma.nccl_ib_hca", "NCCL_IB_HCA"), STATUS_FAIL);
	assert_true(says(&n, "rdma.nccl_ib_hca", "RoCE LAG replaced the per-port devices"));
	assert_true(says(&n, "rdma.nccl_ib_hca", "mlx5_bond_0 (bond0)"));
	report_free(&n.rep);

	build(&n, BOND_BALANCE_RR, false);
	set_var(&n, "NCCL_IB_HCA", "mlx5_bond_0");
	run(&n, &check_rdma_nccl_ib_hca);
	assert_int_equal(status(&n, "rdma.nccl_ib_hca", "NCCL_IB_HCA"), STATUS_FAIL);
	assert_true(says(&n, "rdma.nccl_ib_hca", "LAG is not formed"));
	report_free(&n.rep);
}

/* T15: a down port nothing uses. */
static void test_port_unused(void **state)
{
	(void)state;
	struct node n;
	build(&n, BOND_8023AD, false);
	n.inv.net.n_bonds = 0;
	n.net[2].master = NULL;
	struct rdma_port *p = &n.ports[1];
	p->state = 1;
	p->state_name = "DOWN";
	struct nccl_list none = { 0 }, prefix, exact;
	nccl_list_parse("mlx5", &prefix);
	nccl_list_parse("=mlx5_0,mlx5_1", &exact);
	assert_true(port_unused(&n.inv, NULL, &n.rdma[1], p));
	assert_true(port_unused(&n.inv, &none, &n.rdma[1], p));
	assert_true(port_unused(&n.inv, &prefix, &n.rdma[1], p));
	assert_false(port_unused(&n.inv, &exact, &n.rdma[1], p));
	assert_false(port_unused(&n.inv, NULL, &n.rdma[0], &n.ports[0])); /* active */
	n.net[2].master = "bond0";
	assert_false(port_unused(&n.inv, NULL, &n.rdma[1], p)); /* a bond slave */
	n.net[2].master = NULL;
	n.gids[1][0].gid = "0000:0000:0000:0000:0000:ffff:0a00:010a";
	rdma_gid_parse(&n.gids[1][0]);
	assert_false(port_unused(&n.inv, NULL, &n.rdma[1], p)); /* has an address */
	nccl_list_free(&prefix);
	nccl_list_free(&exact);
	report_free(&n.rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_mode), cmocka_unit_test(test_reader),
		cmocka_unit_test(test_lag_formed), cmocka_unit_test(test_lag_not_formed),
		cmocka_unit_test(test_slave_down), cmocka_unit_test(test_lacp),
		cmocka_unit_test(test_qps),        cmocka_unit_test(test_hca),
		cmocka_unit_test(test_port_unused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
