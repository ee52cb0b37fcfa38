/* Data Center Bridging: the .gpuready/dcb reader (records, round trip,
 * hostile input), the live rtnetlink probe on netdevs without DCB (it must
 * record "unsupported" or the error, never hang), and the policy of
 * rdma.roce_pfc on inventories built by hand: one active RoCE port mlx5_0
 * on ens1f0np0, the expected ToS 104 (DSCP 26). */
#include "core/spawn.h"
#include "testutil.h"
#include "checks/check.h"
#include "checks/rdma/common.h"
#include "core/report.h"
#include "probe/probe.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

extern const struct check_def check_rdma_roce_pfc, check_rdma_roce_ecn;

static const char DEFAULT_MAP[] =
	"ens1f0np0 dscp-prio 0:0 1:0 2:0 3:0 4:0 5:0 6:0 7:0 8:1 9:1 10:1 11:1 12:1 13:1 14:1 15:1 16:2 17:2 18:2 "
	"19:2 20:2 21:2 22:2 23:2 24:3 25:3 26:3 27:3 28:3 29:3 30:3 31:3 32:4 33:4 34:4 35:4 36:4 37:4 38:4 39:4 "
	"40:5 41:5 42:5 43:5 44:5 45:5 46:5 47:5 48:6 49:6 50:6 51:6 52:6 53:6 54:6 55:6 56:7 57:7 58:7 59:7 60:7 "
	"61:7 62:7 63:7\n";

static void test_parse_records(void **state)
{
	(void)state;
	struct dcb_info di = { 0 };
	struct strbuf text = STRBUF_INIT, again = STRBUF_INIT;
	strbuf_adds(&text, "# comment\nens1f0np0 dcbx 0x08\nens1f0np0 pfc 3\n");
	strbuf_adds(&text, DEFAULT_MAP);
	strbuf_adds(&text, "ens2f0np0 pfc 3,4\nens2f0np0 dscp-prio 26:5\nens3f0np0 pfc none\nveth0 unsupported\n"
			   "eth9 error ETIMEDOUT\n");
	dcb_parse(text.buf, text.len, &di);
	assert_int_equal(di.bad, 0);
	assert_int_equal(di.n, 5);
	const struct dcb_port *p = dcb_find(&di, "ens1f0np0");
	assert_non_null(p);
	assert_int_equal(p->pfc_en, 1 << 3);
	assert_int_equal(p->dcbx, 8);
	assert_true(p->dscp_set == UINT64_MAX);
	assert_int_equal(p->dscp_prio[26], 3);
	assert_int_equal(p->dscp_prio[63], 7);
	p = dcb_find(&di, "ens2f0np0");
	assert_int_equal(p->pfc_en, (1 << 3) | (1 << 4));
	assert_true(p->dscp_set == UINT64_C(1) << 26);
	assert_int_equal(p->dscp_prio[26], 5);
	assert_int_equal(p->dcbx, -1);
	assert_int_equal(dcb_find(&di, "ens3f0np0")->pfc_en, 0);
	assert_int_equal(dcb_find(&di, "veth0")->err, -EOPNOTSUPP);
	assert_int_equal(dcb_find(&di, "eth9")->err, -ETIMEDOUT);
	assert_null(dcb_find(&di, "lo"));
	/* what the snapshot writes reads back the same */
	dcb_format(&di, &again);
	struct dcb_info back = { 0 };
	dcb_parse(again.buf, again.len, &back);
	assert_int_equal(back.bad, 0);
	assert_int_equal(back.n, di.n);
	for (size_t i = 0; i < di.n; i++) {
		assert_string_equal(back.v[i].ifname, di.v[i].ifname);
		assert_int_equal(back.v[i].err, di.v[i].err);
		assert_int_equal(back.v[i].pfc_en, di.v[i].pfc_en);
		assert_int_equal(back.v[i].dcbx, di.v[i].dcbx);
		assert_true(back.v[i].dscp_set == di.v[i].dscp_set);
		assert_memory_equal(back.v[i].dscp_prio, di.v[i].dscp_prio, 64);
	}
	dcb_free(&back);
	dcb_free(&di);
	strbuf_release(&text);
	strbuf_release(&again);
}

static void test_parse_hostile(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"ens1 pfc 8\n", "ens1 pfc 3,\n", "ens1 pfc ,3\n", "ens1 pfc 33\n", "ens1 pfc\n", "ens1 pfc 3 4\n",
		"ens1 dscp-prio 64:1\n", "ens1 dscp-prio 26:8\n", "ens1 dscp-prio :3\n", "ens1 dscp-prio 26:\n",
		"ens1 dscp-prio 26\n", "ens1 dscp-prio\n", "ens1 dcbx 0x100\n", "ens1 dcbx zz\n", "ens1 error NOSUCH\n",
		"ens1 error\n", "ens1 unsupported now\n", "ens1 frobnicate 1\n", "ens1\n",
		"a-name-longer-than-ifnamsiz pfc 3\n", "ens1 dscp-prio -1:3\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct dcb_info di = { 0 };
		dcb_parse(bad[i], strlen(bad[i]), &di);
		if (di.bad != 1)
			fail_msg("'%s' not counted as bad", bad[i]);
		assert_null(dcb_find(&di, "ens1")); /* a bad line adds no record */
		dcb_free(&di);
	}
	/* too many fields on one line */
	struct strbuf sb = STRBUF_INIT;
	strbuf_adds(&sb, "ens1 dscp-prio");
	for (int k = 0; k < 80; k++)
		strbuf_addf(&sb, " %d:1", k % 64);
	struct dcb_info di = { 0 };
	dcb_parse(sb.buf, sb.len, &di);
	assert_int_equal(di.bad, 1);
	dcb_free(&di);
	/* garbage never crashes, and a NUL inside ends nothing badly */
	static const char *const tokens[] = { "ens1", " ", "pfc", "dscp-prio", "3", ",", ":", "\n", "#", "0x",
					      "unsupported", "error", "EIO", "\t", "99", "none", "dcbx" };
	unsigned seed = 7;
	for (int round = 0; round < 300; round++) {
		struct strbuf g = STRBUF_INIT;
		struct dcb_info gi = { 0 };
		tu_random_tokens(&g, tokens, sizeof(tokens) / sizeof(tokens[0]), 60, &seed);
		dcb_parse(g.buf, g.len, &gi);
		for (size_t i = 0; i < gi.n; i++)
			assert_true(gi.v[i].pfc_en >= -1 && gi.v[i].pfc_en <= 0xff);
		/* whatever was accepted is written back and read back whole */
		struct strbuf w = STRBUF_INIT;
		struct dcb_info back = { 0 };
		dcb_format(&gi, &w);
		dcb_parse(w.buf, w.len, &back);
		assert_int_equal(back.bad, 0);
		assert_int_equal(back.n, gi.n);
		dcb_free(&back);
		strbuf_release(&w);
		dcb_free(&gi);
		strbuf_release(&g);
	}
	strbuf_release(&sb);
}

/* The live probe on loopback (no DCB operations) and a name that does not
 * exist: recorded as unsupported and as an error, within the deadline. On
 * kernels before 4.x the DCB code answered EINVAL outside the initial
 * network namespace (dcb_doit), which is an error record too. */
static void test_probe_no_dcb(void **state)
{
	(void)state;
	static const char *const names[] = { "lo", "gpurdy-none0" };
	struct dcb_info di = { 0 };
	dcb_probe_names(names, 2, 5.0, &di);
	assert_true(di.known);
	assert_null(di.why);
	const struct dcb_port *lo = dcb_find(&di, "lo");
	const struct dcb_port *none = dcb_find(&di, "gpurdy-none0");
	assert_non_null(lo);
	assert_non_null(none);
	assert_true(lo->err == -EOPNOTSUPP || lo->err == -EINVAL || lo->err == -EPERM);
	assert_true(none->err == -ENODEV || none->err == -EINVAL || none->err == -EPERM);
	assert_int_equal(lo->pfc_en, -1);
	dcb_free(&di);
}

/* The same in a network namespace of its own with a veth pair, the shape
 * of a container's interface: the test runs itself there (`unshare -rn`,
 * util-linux; iproute2 makes the pair) with --probe; skipped where user
 * and network namespaces cannot be created. */
static void test_probe_veth_netns(void **state)
{
	(void)state;
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	/* the project's spawn helper: no outer shell, a deadline (the shell
	 * inside the namespace makes the pair, then becomes this test) */
	const char *const argv[] = { "unshare", "-rn", "sh", "-c",
				     "ip link add gr-v0 type veth peer name gr-v1 && exec \"$0\" --probe gr-v0 gr-v1", self,
				     NULL };
	struct spawn_result res;
	if (spawn_run(argv, NULL, 30000, &res) < 0)
		skip(); /* no unshare(1) */
	if (res.exit_code != 0 || !res.out.len) {
		spawn_result_free(&res);
		skip();
	}
	struct strbuf out = res.out;
	res.out = (struct strbuf)STRBUF_INIT;
	spawn_result_free(&res);
	struct dcb_info di = { 0 };
	dcb_parse(out.buf, out.len, &di);
	assert_int_equal(di.bad, 0);
	assert_non_null(dcb_find(&di, "gr-v0"));
	assert_int_equal(dcb_find(&di, "gr-v0")->err, -EOPNOTSUPP);
	assert_int_equal(dcb_find(&di, "gr-v1")->err, -EOPNOTSUPP);
	dcb_free(&di);
	strbuf_release(&out);
}

/* --probe NAME...: prints the .gpuready/dcb text of the named netdevs. */
static int probe_main(int argc, char **argv)
{
	struct dcb_info di = { 0 };
	struct strbuf sb = STRBUF_INIT;
	dcb_probe_names((const char *const *)argv + 2, (size_t)argc - 2, 5.0, &di);
	dcb_format(&di, &sb);
	fwrite(sb.buf, 1, sb.len, stdout);
	strbuf_release(&sb);
	dcb_free(&di);
	return 0;
}

struct node {
	struct inventory inv;
	struct pci_dev pci[1];
	struct netdev net[1];
	struct rdma_dev rdma[1];
	struct rdma_port ports[1];
	struct report rep;
};

static void build(struct node *n, const char *dcb_text)
{
	memset(n, 0, sizeof(*n));
	n->net[0] = (struct netdev){ .name = "ens1f0np0", .operstate = "up", .carrier = 1, .speed = 400000, .mtu = 9000,
				     .type = 1, .pci_bdf = "0000:19:00.0", .ecn_err = -ENOENT };
	n->ports[0] = (struct rdma_port){ .num = 1, .state = 4, .state_name = "ACTIVE", .phys_state = 5,
					  .phys_name = "LinkUp", .link_layer = "Ethernet", .netdev = "ens1f0np0",
					  .roce_tos = 104 };
	n->rdma[0] = (struct rdma_dev){ .name = "mlx5_0", .node_type = 1, .pci_bdf = "0000:19:00.0", .ports = n->ports,
					.n_ports = 1 };
	n->pci[0] = (struct pci_dev){ .bdf = "0000:19:00.0", .vendor = VENDOR_MELLANOX, .device = 0x1021,
				      .class_code = 0x020000, .driver = "mlx5_core", .numa_node = 0, .iommu_group = -1 };
	n->inv.pci = (struct pci_info){ .v = n->pci, .n = 1 };
	n->inv.net = (struct net_info){ .v = n->net, .n = 1 };
	n->inv.rdma = (struct rdma_info){ .v = n->rdma, .n = 1 };
	if (dcb_text) {
		dcb_parse(dcb_text, strlen(dcb_text), &n->inv.net.dcb);
		n->inv.net.dcb.known = true;
		n->inv.net.dcb.source = xstrdup("/.gpuready/dcb");
	} else {
		n->inv.net.dcb.why = xstrdup("no DCB state recorded in this tree (.gpuready/dcb: missing)");
	}
	report_init(&n->rep, "test", "host", "/");
}

static int judge(struct node *n)
{
	struct site_expect ex = { .tos = 104 };
	struct check_ctx c = { .inv = &n->inv, .expect = &ex, .report = &n->rep, .def = &check_rdma_roce_pfc };
	assert_int_equal(check_rdma_roce_pfc.run(&c), 0);
	int worst = tu_worst(&n->rep, "rdma.roce_pfc", "mlx5_0/1");
	if (worst < 0)
		worst = tu_worst(&n->rep, "rdma.roce_pfc", SUBJECT_NODE);
	return worst;
}

static const struct finding *first(const struct node *n)
{
	return n->rep.n ? n->rep.v[0] : NULL;
}

static void done(struct node *n)
{
	dcb_free(&n->inv.net.dcb);
	report_free(&n->rep);
}

static void test_policy(void **state)
{
	(void)state;
	struct node n;
	char text[1024];
	/* lossless, default map: ok */
	snprintf(text, sizeof(text), "ens1f0np0 pfc 3\n%s", DEFAULT_MAP);
	build(&n, text);
	assert_int_equal(judge(&n), STATUS_OK);
	done(&n);
	/* PFC on 4 only: the class's priority 3 is lossy on a lossless fabric */
	snprintf(text, sizeof(text), "ens1f0np0 pfc 4\n%s", DEFAULT_MAP);
	build(&n, text);
	assert_int_equal(judge(&n), STATUS_WARN);
	assert_non_null(strstr(first(&n)->message, "priority 3"));
	assert_non_null(strstr(first(&n)->hint, "dcb pfc set dev ens1f0np0 prio-pfc 3:on"));
	assert_non_null(strstr(first(&n)->hint, "mlnx_qos -i ens1f0np0 --pfc 0,0,0,1,1,0,0,0"));
	done(&n);
	/* a site map: DSCP 26 to priority 5, PFC on 5: ok (the map is read, not assumed) */
	build(&n, "ens1f0np0 pfc 5\nens1f0np0 dscp-prio 24:5 26:5 48:6\n");
	assert_int_equal(judge(&n), STATUS_OK);
	done(&n);
	/* the same map with PFC on 3 (the default map's priority): warn for 5 */
	build(&n, "ens1f0np0 pfc 3\nens1f0np0 dscp-prio 24:5 26:5 48:6\n");
	assert_int_equal(judge(&n), STATUS_WARN);
	assert_non_null(strstr(first(&n)->hint, "prio-pfc 5:on"));
	done(&n);
	/* the firmware runs DCBX (mlx5: 0x0c, no HOST bit): the warning says the switch decides too */
	snprintf(text, sizeof(text), "ens1f0np0 dcbx 0x0c\nens1f0np0 pfc 4\n%s", DEFAULT_MAP);
	build(&n, text);
	assert_int_equal(judge(&n), STATUS_WARN);
	assert_int_equal(first(&n)->details.n, 1);
	assert_non_null(strstr(first(&n)->details.v[0], "DCBX is not run by the host"));
	done(&n);
	/* trust PCP (no DSCP entries) with PFC on 3: warn with the trust fix */
	build(&n, "ens1f0np0 pfc 3\n");
	assert_int_equal(judge(&n), STATUS_WARN);
	assert_non_null(strstr(first(&n)->hint, "dcb app add dev ens1f0np0 dscp-prio 26:3"));
	done(&n);
	/* no DSCP entries on another driver: trust unknown, skip */
	build(&n, "ens1f0np0 pfc 3\n");
	n.pci[0].driver = "bnxt_en";
	assert_int_equal(judge(&n), STATUS_SKIP);
	done(&n);
	/* lossy RoCE: no PFC at all is a design, information only */
	snprintf(text, sizeof(text), "ens1f0np0 pfc none\n%s", DEFAULT_MAP);
	build(&n, text);
	assert_int_equal(judge(&n), STATUS_INFO);
	assert_non_null(strstr(first(&n)->message, "lossy RoCE"));
	done(&n);
	/* ... also with trust PCP */
	build(&n, "ens1f0np0 pfc none\n");
	assert_int_equal(judge(&n), STATUS_INFO);
	done(&n);
}

static void test_policy_unknown(void **state)
{
	(void)state;
	struct node n;
	/* no DSCP entry for 26 while trusting DSCP: cannot tell */
	build(&n, "ens1f0np0 pfc 3\nens1f0np0 dscp-prio 0:0\n");
	assert_int_equal(judge(&n), STATUS_SKIP);
	done(&n);
	/* no DCB operations (a VF, veth, virtio) */
	build(&n, "ens1f0np0 unsupported\n");
	assert_int_equal(judge(&n), STATUS_SKIP);
	assert_non_null(strstr(first(&n)->message, "EOPNOTSUPP"));
	done(&n);
	/* the query failed, or the driver gave no PFC */
	build(&n, "ens1f0np0 error ETIMEDOUT\n");
	assert_int_equal(judge(&n), STATUS_SKIP);
	done(&n);
	build(&n, "ens1f0np0 dcbx 0x08\n");
	assert_int_equal(judge(&n), STATUS_SKIP);
	done(&n);
	/* the netdev was not queried */
	build(&n, "ens9f0np0 pfc 3\n");
	assert_int_equal(judge(&n), STATUS_SKIP);
	done(&n);
	/* a tree without .gpuready/dcb: one skip naming the file */
	build(&n, NULL);
	assert_int_equal(judge(&n), STATUS_SKIP);
	assert_non_null(strstr(first(&n)->message, ".gpuready/dcb"));
	done(&n);
}

/* rdma.roce_ecn judges the priority the NIC's DSCP map gives (T19 with
 * MLNX_OFED's ecn/ files): DCQCN on for priority 5 only. */
static void test_ecn_follows_map(void **state)
{
	(void)state;
	struct node n;
	struct site_expect ex = { .tos = 104 };
	for (int known = 0; known < 2; known++) {
		build(&n, known ? "ens1f0np0 pfc 5\nens1f0np0 dscp-prio 26:5\n" : NULL);
		n.net[0].ecn_err = 0;
		for (int k = 0; k < 2; k++)
			for (int pr = 0; pr < 8; pr++)
				n.net[0].ecn[k][pr] = pr == 5;
		struct check_ctx c = { .inv = &n.inv, .expect = &ex, .report = &n.rep, .def = &check_rdma_roce_ecn };
		assert_int_equal(check_rdma_roce_ecn.run(&c), 0);
		/* with the map: priority 5, on; without it: the default map's 3, off */
		assert_int_equal(tu_worst(&n.rep, "rdma.roce_ecn", "mlx5_0/1"), known ? STATUS_OK : STATUS_WARN);
		assert_non_null(strstr(first(&n)->message, known ? "the NIC's DSCP map" : "default DSCP map"));
		done(&n);
	}
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--probe"))
		return probe_main(argc, argv);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_records),
		cmocka_unit_test(test_parse_hostile),
		cmocka_unit_test(test_probe_no_dcb),
		cmocka_unit_test(test_probe_veth_netns),
		cmocka_unit_test(test_policy),
		cmocka_unit_test(test_policy_unknown),
		cmocka_unit_test(test_ecn_follows_map),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
