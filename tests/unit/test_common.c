/* Unit tests of the RDMA/NCCL policy helpers (src/checks/rdma/common.c):
 * NCCL's list rules, the kernel's RoCE MTU rule, GID parsing, ToS math,
 * NIC models and NCCL's integer parsing. */
#include "testutil.h"
#include "checks/rdma/common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool sel(const char *list, const char *name, int port)
{
	struct nccl_list l;
	nccl_list_parse(list, &l);
	bool r = nccl_list_selects(&l, name, port);
	nccl_list_free(&l);
	return r;
}

static void test_list_parse(void **state)
{
	(void)state;
	struct nccl_list l;
	nccl_list_parse("^=mlx5_0:1,mlx5_1,,mlx5_2:2:0", &l);
	assert_true(l.exclude);
	assert_true(l.exact);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.v[0].name, "mlx5_0");
	assert_int_equal(l.v[0].port, 1);
	assert_string_equal(l.v[1].name, "mlx5_1");
	assert_int_equal(l.v[1].port, -1);
	assert_string_equal(l.v[2].name, "mlx5_2");
	assert_int_equal(l.v[2].port, 2); /* rail field after the port ignored */
	nccl_list_free(&l);
	nccl_list_parse("", &l);
	assert_int_equal(l.n, 0);
	assert_false(l.exclude);
	nccl_list_free(&l);
	nccl_list_parse(NULL, &l);
	assert_int_equal(l.n, 0);
	nccl_list_free(&l);
}

static void test_list_rules(void **state)
{
	(void)state;
	/* prefix matching: mlx5_1 also matches mlx5_10 (NCCL documentation) */
	assert_true(sel("mlx5_1", "mlx5_10", 1));
	assert_true(sel("mlx5", "mlx5_7", 1));
	assert_false(sel("mlx5_1", "mlx5_2", 1));
	/* exact */
	assert_false(sel("=mlx5_1", "mlx5_10", 1));
	assert_true(sel("=mlx5_1", "mlx5_1", 1));
	/* ports */
	assert_true(sel("mlx5_0:1", "mlx5_0", 1));
	assert_false(sel("mlx5_0:2", "mlx5_0", 1));
	assert_true(sel("mlx5_0:2", "mlx5_0", -1)); /* no port on the name side */
	/* exclusion */
	assert_false(sel("^mlx5_2", "mlx5_2", 1));
	assert_true(sel("^mlx5_2", "mlx5_3", 1));
	assert_false(sel("^=mlx5_2", "mlx5_2", 1));
	assert_true(sel("^=mlx5_2", "mlx5_20", 1));
	/* empty list selects all; "^" alone excludes all, as in NCCL */
	assert_true(sel("", "anything", 1));
	assert_false(sel("^", "anything", 1));
	/* interfaces */
	assert_true(sel("ib", "ibp24s0", -1));
	assert_false(sel("^docker,lo", "lo", -1));
	assert_true(sel("^docker,lo", "eth0", -1));
}

static void test_roce_mtu(void **state)
{
	(void)state;
	/* derived from Linux include/rdma/ib_addr.h, iboe_get_mtu() */
	assert_int_equal(roce_active_mtu(1500), 1024);
	assert_int_equal(roce_active_mtu(4096), 2048);
	assert_int_equal(roce_active_mtu(4191), 2048);
	assert_int_equal(roce_active_mtu(4192), 4096);
	assert_int_equal(roce_active_mtu(4200), 4096);
	assert_int_equal(roce_active_mtu(9000), 4096);
	assert_int_equal(roce_active_mtu(2048 + 96), 2048);
	assert_int_equal(roce_active_mtu(300), 0);
	assert_int_equal(roce_active_mtu(-1), 0);
}

/* A GID as the inventory holds it: the text and its parsed address. */
static struct rdma_gid gid_of(unsigned index, const char *text, const char *type)
{
	struct rdma_gid g = { .index = index, .gid = (char *)text, .type = (char *)type };
	rdma_gid_parse(&g);
	return g;
}

static bool ipv4_of(const char *text, char *ip, size_t size)
{
	struct rdma_gid g = gid_of(0, text, NULL);
	return gid_ipv4(&g, ip, size);
}

static bool link_local(const char *text)
{
	struct rdma_gid g = gid_of(0, text, NULL);
	return gid_link_local(&g);
}

static void test_gids(void **state)
{
	(void)state;
	char ip[32];
	assert_true(ipv4_of("0000:0000:0000:0000:0000:ffff:0a00:0001", ip, sizeof(ip)));
	assert_string_equal(ip, "10.0.0.1");
	assert_true(ipv4_of("0000:0000:0000:0000:0000:ffff:c0a8:6401", ip, sizeof(ip)));
	assert_string_equal(ip, "192.168.100.1");
	assert_true(ipv4_of("0000:0000:0000:0000:0000:ffff:0a00:0001", NULL, 0));
	assert_false(ipv4_of("fe80:0000:0000:0000:bace:f6ff:fea1:b2c4", ip, sizeof(ip)));
	/* IPv4-compatible (::a.b.c.d) and the multicast form are not IPv4-mapped */
	assert_false(ipv4_of("0000:0000:0000:0000:0000:0000:0a00:0001", ip, sizeof(ip)));
	assert_false(ipv4_of("ff0e:0000:0000:0000:0000:ffff:0a00:0001", ip, sizeof(ip)));
	/* text that does not parse is neither IPv4-mapped nor link-local */
	assert_false(ipv4_of("garbage", ip, sizeof(ip)));
	assert_false(ipv4_of("0000:0000:0000:0000:0000:ffff:0a00", ip, sizeof(ip)));
	assert_false(ipv4_of("0000:0000:0000:0000:0000:ffff:0a00:0001:0000", ip, sizeof(ip)));
	assert_false(link_local("fe80:0000:0000:0000:bace:f6ff:fea1"));
	assert_false(link_local("fe80:garbage"));
	assert_true(link_local("fe80:0000:0000:0000:bace:f6ff:fea1:b2c4"));
	assert_true(link_local("febf:0000:0000:0000:0000:0000:0000:0001")); /* fe80::/10 */
	assert_false(link_local("fec0:0000:0000:0000:0000:0000:0000:0001"));
	assert_false(link_local("2001:0db8:0000:0000:0000:0000:0000:0001"));

	struct rdma_gid g[3] = {
		gid_of(0, "fe80:0000:0000:0000:bace:f6ff:fea1:b2c4", "IB/RoCE v1"),
		gid_of(1, "fe80:0000:0000:0000:bace:f6ff:fea1:b2c4", "RoCE v2"),
		gid_of(3, "0000:0000:0000:0000:0000:ffff:0a00:0001", "RoCE v2"),
	};
	struct rdma_port p = { .gids = g, .n_gids = 3 };
	assert_ptr_equal(port_best_gid(&p), &g[2]);
	assert_ptr_equal(port_gid(&p, 1), &g[1]);
	assert_null(port_gid(&p, 2));
	p.n_gids = 2; /* only link-local: no best GID */
	assert_null(port_best_gid(&p));

	/* An IPv4-mapped GID wins over one that does not parse; without it,
	 * the unparsed RoCE v2 GID counts as not link-local, as the text
	 * parser before did. */
	struct rdma_gid m[2] = {
		gid_of(0, "not a gid", "RoCE v2"),
		gid_of(1, "0000:0000:0000:0000:0000:ffff:0a00:0001", "RoCE v2"),
	};
	struct rdma_port q = { .gids = m, .n_gids = 2 };
	assert_false(m[0].parsed);
	assert_ptr_equal(port_best_gid(&q), &m[1]);
	q.n_gids = 1;
	assert_ptr_equal(port_best_gid(&q), &m[0]);
}

/* NCCL's own GID choice: the first RoCE v2 GID in the family, inside
 * NCCL_IB_ADDR_RANGE when that is an IPv4 CIDR. */
static void test_auto_gid_index(void **state)
{
	(void)state;
	struct rdma_gid g[4] = {
		gid_of(0, "fe80:0000:0000:0000:bace:f6ff:fea1:b2c4", "RoCE v2"),
		gid_of(1, "0000:0000:0000:0000:0000:ffff:0a00:0001", "IB/RoCE v1"),
		gid_of(2, "0000:0000:0000:0000:0000:ffff:0a00:0001", "RoCE v2"),
		gid_of(3, "0000:0000:0000:0000:0000:ffff:c0a8:6401", "RoCE v2"),
	};
	struct rdma_port p = { .gids = g, .n_gids = 4 };
	struct nccl_var vars[2] = {
		{ .name = "NCCL_IB_ADDR_RANGE", .value = "192.168.100.0/24", .source = "environment" },
		{ .name = "NCCL_IB_ADDR_FAMILY", .value = "AF_INET6", .source = "environment" },
	};
	struct inventory inv = { 0 };
	const char *why = "unset";
	assert_int_equal(nccl_auto_gid_index(&inv, &p, &why), 2);
	assert_null(why);
	inv.nccl = (struct nccl_config){ .v = vars, .n = 1 };
	assert_int_equal(nccl_auto_gid_index(&inv, &p, &why), 3);
	vars[0].value = "10.0.0.1/32";
	assert_int_equal(nccl_auto_gid_index(&inv, &p, &why), 2);
	vars[0].value = "172.16.0.0/12"; /* no GID inside: NCCL stays on 0 */
	assert_int_equal(nccl_auto_gid_index(&inv, &p, &why), 0);
	vars[0].value = "fd00::/8";
	assert_int_equal(nccl_auto_gid_index(&inv, &p, &why), 2);
	assert_non_null(why);
	inv.nccl.v = &vars[1]; /* AF_INET6: the first v2 GID that is not IPv4-mapped */
	assert_int_equal(nccl_auto_gid_index(&inv, &p, &why), 0);
}

static void test_tos(void **state)
{
	(void)state;
	char b[96];
	assert_int_equal(tos_dscp(104), 26);
	assert_int_equal(tos_dscp(106), 26);
	assert_int_equal(tos_ecn(106), 2);
	assert_string_equal(tos_describe(106, b, sizeof(b)), "ToS 106 = DSCP 26 + ECN 2 (ECT(0))");
	assert_string_equal(tos_describe(104, b, sizeof(b)), "ToS 104 = DSCP 26 + ECN 0 (Not-ECT)");
}

static void test_models(void **state)
{
	(void)state;
	assert_string_equal(nic_model_name(0x1021), "ConnectX-7");
	assert_string_equal(nic_model_name(0x1007), "ConnectX-3 Pro");
	assert_null(nic_model_name(0xbeef));
	assert_int_equal(nic_provider(0x1003), PROVIDER_MLX4);
	assert_int_equal(nic_provider(0x1013), PROVIDER_MLX5);
	assert_int_equal(nic_provider(0xa2dc), PROVIDER_MLX5);
	assert_int_equal(nic_provider(0xc2d5), PROVIDER_NONE);
}

static void test_nccl_int(void **state)
{
	(void)state;
	long long v;
	const char *why;
	assert_int_equal(nccl_param_int("20", &v, &why), 0);
	assert_int_equal(v, 20);
	assert_null(why);
	assert_int_equal(nccl_param_int("0x14", &v, &why), 0);
	assert_int_equal(v, 20);
	assert_null(why);
	assert_int_equal(nccl_param_int("010", &v, &why), 0);
	assert_int_equal(v, 8);
	assert_non_null(why);
	assert_int_equal(nccl_param_int("08", &v, &why), 0);
	assert_int_equal(v, 0);
	assert_non_null(why);
	assert_int_equal(nccl_param_int("20s", &v, &why), 0);
	assert_int_equal(v, 20);
	assert_non_null(why);
	assert_int_equal(nccl_param_int("yes", &v, &why), 0);
	assert_int_equal(v, 0);
	assert_non_null(why);
	assert_int_equal(nccl_param_int("-1", &v, &why), 0);
	assert_int_equal(v, -1);
	assert_null(why);
	assert_int_equal(nccl_param_int("0", &v, &why), 0);
	assert_null(why);
	assert_int_equal(nccl_param_int("", &v, &why), -ENODATA);
	assert_int_equal(nccl_param_int("99999999999999999999", &v, &why), -ERANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_parse), cmocka_unit_test(test_list_rules), cmocka_unit_test(test_roce_mtu),
		cmocka_unit_test(test_gids),       cmocka_unit_test(test_tos),        cmocka_unit_test(test_models),
		cmocka_unit_test(test_nccl_int),   cmocka_unit_test(test_auto_gid_index),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
