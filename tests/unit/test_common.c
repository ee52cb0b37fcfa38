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
	/* prefix matching: mlx5_1 also matches mlx5_10 (nccl-docs) */
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
	/* REFERENCE §1 derived values */
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

static void test_gids(void **state)
{
	(void)state;
	char ip[32];
	assert_true(gid_ipv4("0000:0000:0000:0000:0000:ffff:0a00:0001", ip, sizeof(ip)));
	assert_string_equal(ip, "10.0.0.1");
	assert_true(gid_ipv4("0000:0000:0000:0000:0000:ffff:c0a8:6401", ip, sizeof(ip)));
	assert_string_equal(ip, "192.168.100.1");
	assert_false(gid_ipv4("fe80:0000:0000:0000:bace:f6ff:fea1:b2c4", ip, sizeof(ip)));
	assert_false(gid_ipv4("garbage", ip, sizeof(ip)));
	assert_false(gid_ipv4("0000:0000:0000:0000:0000:ffff:0a00", ip, sizeof(ip)));
	assert_false(gid_ipv4("0000:0000:0000:0000:0000:ffff:0a00:0001:0000", ip, sizeof(ip)));
	assert_true(gid_link_local("fe80:0000:0000:0000:bace:f6ff:fea1:b2c4"));
	assert_false(gid_link_local("2001:0db8:0000:0000:0000:0000:0000:0001"));

	struct rdma_gid g[3] = {
		{ .index = 0, .gid = "fe80:0000:0000:0000:bace:f6ff:fea1:b2c4", .type = "IB/RoCE v1" },
		{ .index = 1, .gid = "fe80:0000:0000:0000:bace:f6ff:fea1:b2c4", .type = "RoCE v2" },
		{ .index = 3, .gid = "0000:0000:0000:0000:0000:ffff:0a00:0001", .type = "RoCE v2" },
	};
	struct rdma_port p = { .gids = g, .n_gids = 3 };
	assert_ptr_equal(port_best_gid(&p), &g[2]);
	assert_ptr_equal(port_gid(&p, 1), &g[1]);
	assert_null(port_gid(&p, 2));
	p.n_gids = 2; /* only link-local: no best GID */
	assert_null(port_best_gid(&p));
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
		cmocka_unit_test(test_nccl_int),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
