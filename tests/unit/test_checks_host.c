/* Interface addresses (.gpuready/ifaddrs) and the checks that judge them:
 * rdma.nccl_socket_ifname (the interface NCCL bootstraps over: loopback,
 * bridges, no address, only link-local) and rdma.roce_subnets (RoCE
 * interfaces sharing a subnet with default ARP settings), on inventories
 * built by hand, so each rule is pinned on its own. */
#include "testutil.h"
#include "checks/check.h"
#include "core/report.h"
#include "core/strbuf.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

static void test_parse_format(void **state)
{
	(void)state;
	struct net_info ni = { 0 };
	const char *text = "# header\n"
			   "lo inet 127.0.0.1/8\n"
			   "eno1 inet 192.168.45.180/24   # comment\n"
			   "eno1 inet6 fe80:0000:0000:0000:3eec:efff:fe42:983c/64\n"
			   "bad inet 300.1.1.1/24\n"
			   "bad inet 10.0.0.1/33\n"
			   "bad inet6 ::1/129\n"
			   "bad inet 10.0.0.1\n"
			   "bad ipx 10.0.0.1/8\n"
			   "bad inet 10.0.0.1/8 extra\n"
			   "bad inet 10.0.0.1/x\n"
			   "\n";
	ifaddrs_parse(text, strlen(text), &ni);
	assert_int_equal(ni.n_addrs, 3);
	assert_int_equal(ni.addrs_bad, 7);
	assert_string_equal(ni.addrs[2].text, "fe80::3eec:efff:fe42:983c");
	assert_int_equal(ni.addrs[1].prefix, 24);
	struct strbuf sb = STRBUF_INIT;
	ifaddrs_format(&ni, &sb);
	assert_string_equal(sb.buf, "lo inet 127.0.0.1/8\neno1 inet 192.168.45.180/24\n"
				    "eno1 inet6 fe80::3eec:efff:fe42:983c/64\n");
	/* what it writes, it reads back the same */
	struct net_info back = { 0 };
	ifaddrs_parse(sb.buf, sb.len, &back);
	assert_int_equal(back.n_addrs, 3);
	assert_int_equal(back.addrs_bad, 0);
	strbuf_release(&sb);
	net_free(&back);
	net_free(&ni);
	/* garbage never crashes and never yields an address with a bad prefix */
	static const char *const tok[] = { "eth0", " ", "inet", "inet6", "/", "24", "129", "10.0.0.1", "::", "\n", "#",
					   "fe80::1", "%", "\t" };
	unsigned seed = 7;
	for (int round = 0; round < 200; round++) {
		struct net_info g = { 0 };
		tu_random_tokens(&sb, tok, sizeof(tok) / sizeof(tok[0]), 40, &seed);
		ifaddrs_parse(sb.buf, sb.len, &g);
		for (size_t i = 0; i < g.n_addrs; i++)
			assert_true(g.addrs[i].prefix <= (g.addrs[i].family == AF_INET ? 32u : 128u));
		net_free(&g);
		strbuf_release(&sb);
	}
}

static void test_routable(void **state)
{
	(void)state;
	static const struct {
		int fam;
		const char *a;
		bool routable;
	} cases[] = {
		{ AF_INET, "10.0.0.1", true },	   { AF_INET, "127.0.0.1", false }, { AF_INET, "169.254.3.4", false },
		{ AF_INET, "0.0.0.0", false },	   { AF_INET6, "2001:db8::1", true }, { AF_INET6, "fd00::2", true },
		{ AF_INET6, "fe80::1", false },	   { AF_INET6, "::1", false },	      { AF_INET6, "::", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct net_info ni = { 0 };
		assert_true(net_addr_add(&ni, "x", cases[i].fam, cases[i].a, 8));
		assert_int_equal(net_addr_routable(&ni.addrs[0]), cases[i].routable);
		net_free(&ni);
	}
	struct net_info ni = { 0 };
	assert_false(net_addr_add(&ni, "x", AF_INET, "10.0.0.1", 33));
	assert_false(net_addr_add(&ni, "", AF_INET, "10.0.0.1", 8));
	assert_false(net_addr_add(&ni, "x", AF_INET6, "10.0.0.1", 8));
	assert_int_equal(ni.n_addrs, 0);
}

/* ---- a hand-built node ---- */

struct node {
	struct inventory inv;
	struct netdev nd[4];
	struct nccl_var var;
	struct rdma_dev dev[2];
	struct rdma_port port[2];
	struct report rep;
};

/* eno1 (physical, up), docker0 (bridge, up), lo, br0 (bridge, up) */
static void node_init(struct node *n, bool addrs)
{
	memset(n, 0, sizeof(*n));
	static const char *const names[] = { "eno1", "docker0", "lo", "br0" };
	for (size_t i = 0; i < 4; i++) {
		n->nd[i] = (struct netdev){ .name = (char *)names[i], .operstate = (char *)"up", .carrier = 1,
					    .type = 1, .is_virtual = i > 0, .arp_ignore = 0, .arp_announce = 0 };
	}
	n->nd[0].pci_bdf = (char *)"0000:07:00.0";
	n->nd[1].is_bridge = n->nd[3].is_bridge = true;
	n->nd[2].type = 772;
	n->nd[2].operstate = (char *)"unknown";
	n->inv.net.v = n->nd;
	n->inv.net.n = 4;
	n->inv.net.all_arp_ignore = n->inv.net.all_arp_announce = 0;
	if (addrs) {
		n->inv.net.addrs_known = true;
		n->inv.net.addrs_source = strdup("/.gpuready/ifaddrs");
		net_addr_add(&n->inv.net, "eno1", AF_INET, "192.168.1.5", 24);
		net_addr_add(&n->inv.net, "docker0", AF_INET, "172.17.0.1", 16);
		net_addr_add(&n->inv.net, "lo", AF_INET, "127.0.0.1", 8);
		net_addr_add(&n->inv.net, "br0", AF_INET6, "fe80::1", 64);
	} else {
		n->inv.net.addrs_why = strdup("no interface addresses recorded in this tree");
	}
	report_init(&n->rep, "test", "host", "/");
}

static void node_set(struct node *n, const char *name, const char *value)
{
	n->var = (struct nccl_var){ .name = (char *)name, .value = (char *)value, .source = (char *)"environment" };
	n->inv.nccl.v = &n->var;
	n->inv.nccl.n = 1;
}

static void node_run(struct node *n, const char *id)
{
	struct strv only = STRV_INIT, skip = STRV_INIT;
	strv_add(&only, id);
	struct check_select sel = { .only = &only, .skip = &skip };
	struct site_expect ex = { 0 };
	assert_int_equal(checks_run(NULL, &n->inv, &ex, &sel, &n->rep), 0);
	strv_free(&only);
}

static void node_free(struct node *n)
{
	report_free(&n->rep);
	for (size_t i = 0; i < n->inv.net.n_addrs; i++) {
		free(n->inv.net.addrs[i].ifname);
		free(n->inv.net.addrs[i].text);
	}
	free(n->inv.net.addrs);
	free(n->inv.net.addrs_source);
	free(n->inv.net.addrs_why);
}

/* The status of the finding about subject; -1 if none. */
static int st(const struct node *n, const char *subject)
{
	for (size_t i = 0; i < n->rep.n; i++)
		if (!strcmp(n->rep.v[i]->subject, subject))
			return (int)n->rep.v[i]->status;
	return -1;
}

static void test_socket_ifname(void **state)
{
	(void)state;
	static const struct {
		const char *value; /* NULL: unset */
		bool addrs;
		const char *subject;
		int want;
	} cases[] = {
		{ "eno1", true, "NCCL_SOCKET_IFNAME", STATUS_OK },
		{ "=docker0", true, "docker0", STATUS_FAIL },  /* NAT bridge: 172.17.0.1 on every node */
		{ "lo", true, "lo", STATUS_FAIL },	       /* loopback */
		{ "br0", true, "br0", STATUS_WARN },	       /* a bridge may be the uplink */
		{ "eno1", false, "NCCL_SOCKET_IFNAME", STATUS_OK },
		{ "eno1", false, "addresses", STATUS_SKIP },   /* fail closed on what it cannot see */
		{ NULL, true, "NCCL_SOCKET_IFNAME", STATUS_OK }, /* automatic: eno1 */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct node n;
		node_init(&n, cases[i].addrs);
		if (cases[i].value)
			node_set(&n, "NCCL_SOCKET_IFNAME", cases[i].value);
		node_run(&n, "rdma.nccl_socket_ifname");
		if (st(&n, cases[i].subject) != cases[i].want)
			fail_msg("case %zu (%s): %s got %d, want %d", i, cases[i].value ? cases[i].value : "unset",
				 cases[i].subject, st(&n, cases[i].subject), cases[i].want);
		node_free(&n);
	}
	/* eno1 without an address: NCCL skips it; only link-local: unroutable */
	struct node n;
	node_init(&n, true);
	free(n.inv.net.addrs[0].ifname);
	n.inv.net.addrs[0].ifname = strdup("elsewhere");
	node_set(&n, "NCCL_SOCKET_IFNAME", "eno1");
	node_run(&n, "rdma.nccl_socket_ifname");
	assert_int_equal(st(&n, "eno1"), STATUS_FAIL);
	node_free(&n);
	node_init(&n, true);
	node_set(&n, "NCCL_SOCKET_IFNAME", "eno1");
	free(n.inv.net.addrs[0].ifname);
	n.inv.net.addrs[0].ifname = strdup("elsewhere");
	net_addr_add(&n.inv.net, "eno1", AF_INET6, "fe80::2", 64);
	node_run(&n, "rdma.nccl_socket_ifname");
	assert_int_equal(st(&n, "eno1"), STATUS_FAIL);
	node_free(&n);
	/* unset, eno1 down: NCCL's order takes br0 (any name but docker*, lo,
	 * virbr*) before docker0 */
	node_init(&n, true);
	n.nd[0].operstate = (char *)"down";
	n.nd[0].carrier = 0;
	node_run(&n, "rdma.nccl_socket_ifname");
	assert_int_equal(st(&n, "br0"), STATUS_WARN);
	node_free(&n);
	/* and with br0 down too, docker0, which cannot carry a job */
	node_init(&n, true);
	n.nd[0].operstate = n.nd[3].operstate = (char *)"down";
	n.nd[0].carrier = n.nd[3].carrier = 0;
	node_run(&n, "rdma.nccl_socket_ifname");
	assert_int_equal(st(&n, "docker0"), STATUS_FAIL);
	node_free(&n);
}

/* Two RoCE ports whose netdevs hold addr0 and addr1. */
static void roce_node(struct node *n, const char *addr0, const char *addr1, int ignore, int announce)
{
	node_init(n, true);
	static const char *const nd[] = { "ens1f0np0", "ens2f0np0" };
	for (size_t i = 0; i < 2; i++) {
		n->port[i] = (struct rdma_port){ .num = 1, .link_layer = (char *)"Ethernet", .netdev = (char *)nd[i] };
		n->dev[i] = (struct rdma_dev){ .name = (char *)(i ? "mlx5_1" : "mlx5_0"), .ports = &n->port[i],
					      .n_ports = 1 };
		n->nd[2 + i] = (struct netdev){ .name = (char *)nd[i], .operstate = (char *)"up", .carrier = 1, .type = 1,
						.pci_bdf = (char *)"0000:18:00.0", .arp_ignore = ignore,
						.arp_announce = announce };
	}
	n->inv.rdma.v = n->dev;
	n->inv.rdma.n = 2;
	net_addr_add(&n->inv.net, "ens1f0np0", AF_INET, addr0, 16);
	net_addr_add(&n->inv.net, "ens2f0np0", AF_INET, addr1, 16);
}

static void test_roce_subnets(void **state)
{
	(void)state;
	struct node n;
	roce_node(&n, "10.0.0.10", "10.0.0.11", 0, 0); /* one subnet, default ARP */
	node_run(&n, "rdma.roce_subnets");
	assert_int_equal(st(&n, "10.0.0.0/16"), STATUS_WARN);
	node_free(&n);
	roce_node(&n, "10.0.0.10", "10.0.0.11", 1, 2); /* one subnet, ARP tuned */
	node_run(&n, "rdma.roce_subnets");
	assert_int_equal(st(&n, "10.0.0.0/16"), STATUS_OK);
	node_free(&n);
	roce_node(&n, "10.0.0.10", "10.0.0.11", -1, -1); /* ARP settings unreadable */
	node_run(&n, "rdma.roce_subnets");
	assert_int_equal(st(&n, "10.0.0.0/16"), STATUS_SKIP);
	node_free(&n);
	roce_node(&n, "10.0.0.10", "10.0.0.11", 0, 2); /* all=0 but the interface's announce 2, ignore 0 */
	n.inv.net.all_arp_ignore = 1;
	node_run(&n, "rdma.roce_subnets");
	assert_int_equal(st(&n, "10.0.0.0/16"), STATUS_OK); /* the larger of all and the interface's */
	node_free(&n);
	roce_node(&n, "10.0.0.10", "10.1.0.11", 0, 0); /* a subnet each */
	node_run(&n, "rdma.roce_subnets");
	assert_int_equal(st(&n, "10.0.0.0/16"), STATUS_OK);
	assert_int_equal(st(&n, "10.1.0.0/16"), STATUS_OK);
	node_free(&n);
	roce_node(&n, "10.0.0.10", "10.0.0.11", 0, 0); /* addresses unknown */
	n.inv.net.addrs_known = false;
	n.inv.net.addrs_why = strdup("not recorded");
	node_run(&n, "rdma.roce_subnets");
	assert_int_equal(st(&n, "addresses"), STATUS_SKIP);
	assert_int_equal(st(&n, "10.0.0.0/16"), -1);
	node_free(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_format),
		cmocka_unit_test(test_routable),
		cmocka_unit_test(test_socket_ifname),
		cmocka_unit_test(test_roce_subnets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
