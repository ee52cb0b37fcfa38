/* Unit tests for the NCCL log parser (bench/nccl_log).
 *
 * The logs under tests/nccl-logs/ are written in the line shapes of real
 * NCCL 2.18-2.27 output (GitHub issues of NVIDIA/nccl, NVIDIA/nccl-tests,
 * aws/aws-ofi-nccl; format strings from the NCCL sources), with several
 * processes interleaved. Every field of the result is asserted, so a parser
 * that merges "mlx5_1" with "mlx5_10", forgets a deduplication, ignores a
 * "Disabled" verdict, reads text outside the NCCL part of a line or trips on
 * a plugin name with a space fails here. */
#include "testutil.h"
#include "bench/nccl_log.h"
#include "core/strbuf.h"
#include "core/strv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---- */

static char *slurp(const char *name, size_t *len)
{
	char *path = xasprintf("%s/tests/nccl-logs/%s", tu_source_dir(), name);
	char *text = tu_read_file(path, len);
	if (!text)
		fail_msg("cannot open %s", path);
	free(path);
	return text;
}

static void parse_fixture(const char *name, struct nccl_log *l)
{
	size_t len;
	char *text = slurp(name, &len);
	nccl_log_parse(text, len, l);
	free(text);
}

static void parse_str(const char *s, struct nccl_log *l)
{
	nccl_log_parse(s, strlen(s), l);
}

static void expect_hca(const struct nccl_log *l, size_t i, int index, const char *name, int port, const char *link,
		       int gdr)
{
	assert_true(i < l->n_hcas);
	const struct nccl_hca *h = &l->hcas[i];
	assert_int_equal(h->index, index);
	assert_string_equal(h->name, name);
	assert_int_equal(h->port, port);
	if (link)
		assert_string_equal(h->link, link);
	else
		assert_null(h->link);
	assert_int_equal(h->gdr, gdr);
}

static void expect_list(const struct strv *got, const char *const *want, size_t n)
{
	tu_expect_strv(got, want, n, "lists");
}
#define EXPECT_LIST(got, ...)                                                 \
	do {                                                                  \
		const char *const w_[] = { __VA_ARGS__ };                     \
		expect_list((got), w_, sizeof(w_) / sizeof(w_[0]));           \
	} while (0)
#define EXPECT_EMPTY(got) assert_int_equal((got)->n, 0)

static void expect_summary(const struct nccl_log *l, const char *const *want, size_t n)
{
	struct strv out = STRV_INIT;
	nccl_log_summary(l, &out);
	expect_list(&out, want, n);
	strv_free(&out);
}
#define EXPECT_SUMMARY(l, ...)                                                \
	do {                                                                  \
		const char *const w_[] = { __VA_ARGS__ };                     \
		expect_summary((l), w_, sizeof(w_) / sizeof(w_[0]));          \
	} while (0)

/* meets(require) must equal ok; every reason must contain `needle`. */
static void expect_meets(const struct nccl_log *l, const char *require, bool ok, size_t n_why, const char *needle)
{
	struct strv why = STRV_INIT;
	bool got = nccl_log_meets(l, require, &why);
	for (size_t i = 0; i < why.n; i++)
		print_message("  why[%zu] \"%s\"\n", i, why.v[i]);
	assert_int_equal(got, ok);
	assert_int_equal(why.n, n_why);
	for (size_t i = 0; needle && i < why.n; i++)
		assert_non_null(strstr(why.v[i], needle));
	strv_free(&why);
}

/* ---- (1) two H100 nodes, RoCE, GDR on every HCA, DMA-BUF ---- */

static void test_h100_roce_gdr(void **state)
{
	(void)state;
	struct nccl_log l;
	parse_fixture("h100-2node-roce-gdr.log", &l);
	assert_int_equal(l.lines, 75);
	assert_string_equal(l.version, "2.21.5+cuda12.4");
	assert_int_equal(l.net, NCCL_NET_IB);
	assert_string_equal(l.net_name, "IB");
	static const char *const names[] = { "mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5",
					     "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11" };
	assert_int_equal(l.n_hcas, 8);
	for (int i = 0; i < 8; i++)
		expect_hca(&l, (size_t)i, i, names[i], 1, "RoCE", 1);
	assert_false(l.ib_no_device);
	assert_null(l.socket_if);
	assert_string_equal(l.oob_if, "eth0:10.0.0.11");
	assert_int_equal(l.dmabuf, 2);
	assert_true(l.gdrdma_channels);
	assert_true(l.net_channels);
	EXPECT_LIST(&l.transports, "P2P/CUMEM");
	EXPECT_EMPTY(&l.warnings);
	EXPECT_SUMMARY(&l,
		       "network: IB (mlx5_0:1/RoCE, mlx5_3:1/RoCE, mlx5_4:1/RoCE, mlx5_5:1/RoCE, mlx5_6:1/RoCE, "
		       "mlx5_9:1/RoCE, mlx5_10:1/RoCE, mlx5_11:1/RoCE)",
		       "GPUDirect RDMA: on for mlx5_0, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_9, mlx5_10, mlx5_11",
		       "DMA-BUF: available", "intra-node: P2P/CUMEM", "NCCL 2.21.5+cuda12.4");
	expect_meets(&l, "ib,gdr,dmabuf", true, 0, NULL);
	nccl_log_free(&l);
}

/* ---- (2) no RDMA device: NET/IB finds nothing, NCCL falls back to TCP ---- */

static void test_socket_fallback(void **state)
{
	(void)state;
	struct nccl_log l;
	parse_fixture("socket-fallback.log", &l);
	assert_int_equal(l.lines, 50);
	assert_string_equal(l.version, "2.18.3+cuda12.2");
	assert_int_equal(l.net, NCCL_NET_SOCKET);
	assert_string_equal(l.net_name, "Socket");
	assert_int_equal(l.n_hcas, 0); /* "NET/Socket : GPU Direct RDMA Disabled for HCA 0 'ens5'" is no HCA */
	assert_null(l.hcas);
	assert_true(l.ib_no_device);
	assert_string_equal(l.socket_if, "ens5:172.31.40.17");
	assert_null(l.oob_if);
	assert_int_equal(l.dmabuf, 0);
	assert_false(l.gdrdma_channels);
	assert_true(l.net_channels);
	EXPECT_EMPTY(&l.transports);
	EXPECT_LIST(&l.warnings, "Net : Connection closed by remote peer 172.31.40.18<46077>");
	EXPECT_SUMMARY(&l, "network: Socket (ens5:172.31.40.17); NET/IB found no device",
		       "GPUDirect RDMA: not applicable (Socket network)", "DMA-BUF: not reported",
		       "intra-node: none seen", "NCCL 2.18.3+cuda12.2",
		       "NCCL WARN Net : Connection closed by remote peer 172.31.40.18<46077>");
	expect_meets(&l, "ib", false, 1, "Socket");
	expect_meets(&l, "ib", false, 1, "No device found");
	expect_meets(&l, "gdr", false, 1, "Socket network");
	expect_meets(&l, "dmabuf", false, 1, "DMA-BUF");
	expect_meets(&l, "ib,gdr,dmabuf", false, 3, NULL);
	nccl_log_free(&l);
}

/* ---- (3) one node, eight PCIe GPUs on two sockets: P2P and SHM, no NET ---- */

static void test_single_node_8gpu(void **state)
{
	(void)state;
	struct nccl_log l;
	parse_fixture("single-node-8gpu-pcie.log", &l);
	assert_int_equal(l.lines, 56);
	assert_string_equal(l.version, "2.23.4+cuda12.6");
	assert_int_equal(l.net, NCCL_NET_SOCKET);
	assert_string_equal(l.net_name, "Socket");
	assert_int_equal(l.n_hcas, 0);
	assert_true(l.ib_no_device);
	assert_string_equal(l.socket_if, "eno1:192.168.1.50");
	assert_null(l.oob_if);
	assert_int_equal(l.dmabuf, 8);
	assert_false(l.gdrdma_channels);
	assert_false(l.net_channels);
	EXPECT_LIST(&l.transports, "P2P/CUMEM", "SHM/direct/direct");
	EXPECT_EMPTY(&l.warnings);
	EXPECT_SUMMARY(&l, "network: Socket (eno1:192.168.1.50); NET/IB found no device",
		       "GPUDirect RDMA: not applicable (Socket network)", "DMA-BUF: available",
		       "intra-node: P2P/CUMEM, SHM/direct/direct", "NCCL 2.23.4+cuda12.6");
	expect_meets(&l, "dmabuf", true, 0, NULL);
	expect_meets(&l, "gdr", false, 1, "Socket");
	nccl_log_free(&l);
}

/* ---- (4) InfiniBand, GPUDirect RDMA disabled for one of four HCAs ---- */

static void test_gdr_disabled_one_hca(void **state)
{
	(void)state;
	struct nccl_log l;
	parse_fixture("ib-gdr-disabled-hca1.log", &l);
	assert_int_equal(l.lines, 56);
	assert_string_equal(l.version, "2.26.2+cuda12.8");
	assert_int_equal(l.net, NCCL_NET_IB);
	assert_string_equal(l.net_name, "IB");
	assert_int_equal(l.n_hcas, 4);
	expect_hca(&l, 0, 0, "mlx5_0", 1, "IB", 1);
	expect_hca(&l, 1, 1, "mlx5_1", 1, "IB", 0);
	expect_hca(&l, 2, 2, "mlx5_2", 1, "IB", 1);
	expect_hca(&l, 3, 3, "mlx5_3", 1, "IB", 1);
	assert_false(l.ib_no_device);
	assert_null(l.socket_if);
	assert_string_equal(l.oob_if, "ibp24s0:10.10.4.17");
	assert_int_equal(l.dmabuf, 0);
	assert_true(l.gdrdma_channels);
	assert_true(l.net_channels);
	EXPECT_LIST(&l.transports, "P2P/CUMEM");
	/* 2.26+ WARN lines: "[%F %T] " timestamp, file:line, optional (func);
	 * the repeated completion error is listed once. */
	EXPECT_LIST(&l.warnings,
		    "NET/IB : Got completion from peer 10.10.4.18<44913> with status=12 opcode=0 len=0 vendor err 129 "
		    "(Recv) localGid fe80::a088:c203:4f:2c1e remoteGidsfe80::a088:c203:4f:2b5a",
		    "socketProgressOpt: Call to recv from 10.10.4.18<51828> failed : Connection reset by peer");
	EXPECT_SUMMARY(&l, "network: IB (mlx5_0:1/IB, mlx5_1:1/IB, mlx5_2:1/IB, mlx5_3:1/IB)",
		       "GPUDirect RDMA: off for mlx5_1; on for mlx5_0, mlx5_2, mlx5_3", "DMA-BUF: not reported",
		       "intra-node: P2P/CUMEM", "NCCL 2.26.2+cuda12.8",
		       "NCCL WARN NET/IB : Got completion from peer 10.10.4.18<44913> with status=12 opcode=0 len=0 "
		       "vendor err 129 (Recv) localGid fe80::a088:c203:4f:2c1e remoteGidsfe80::a088:c203:4f:2b5a",
		       "NCCL WARN socketProgressOpt: Call to recv from 10.10.4.18<51828> failed : Connection reset by peer");
	expect_meets(&l, "ib", true, 0, NULL);
	/* GDRDMA channels exist, but one HCA in use runs without GDR */
	expect_meets(&l, "gdr", false, 1, "mlx5_1");
	expect_meets(&l, "ib,gdr", false, 1, "Disabled");
	nccl_log_free(&l);
}

/* ---- (5) a network plugin whose name has a space; CRLF; CloudWatch prefix ---- */

static void test_aws_ofi_plugin(void **state)
{
	(void)state;
	struct nccl_log l;
	parse_fixture("aws-ofi-plugin-crlf.log", &l);
	assert_int_equal(l.lines, 44);
	assert_string_equal(l.version, "2.22.3+cuda12.4");
	assert_int_equal(l.net, NCCL_NET_OTHER);
	assert_string_equal(l.net_name, "AWS Libfabric");
	assert_int_equal(l.n_hcas, 4);
	expect_hca(&l, 0, 0, "rdmap79s0", -1, NULL, 1);
	expect_hca(&l, 1, 1, "rdmap80s0", -1, NULL, 1);
	expect_hca(&l, 2, 2, "rdmap81s0", -1, NULL, 1);
	expect_hca(&l, 3, 3, "rdmap82s0", -1, NULL, 1);
	assert_false(l.ib_no_device);
	assert_null(l.socket_if);
	assert_null(l.oob_if);
	assert_int_equal(l.dmabuf, 2);
	assert_true(l.gdrdma_channels);
	assert_true(l.net_channels);
	EXPECT_LIST(&l.transports, "P2P/CUMEM");
	EXPECT_EMPTY(&l.warnings); /* the libfabric "<warn>" line is not NCCL's */
	EXPECT_SUMMARY(&l, "network: AWS Libfabric (rdmap79s0, rdmap80s0, rdmap81s0, rdmap82s0)",
		       "GPUDirect RDMA: on for rdmap79s0, rdmap80s0, rdmap81s0, rdmap82s0", "DMA-BUF: available",
		       "intra-node: P2P/CUMEM", "NCCL 2.22.3+cuda12.4");
	expect_meets(&l, "ib", false, 1, "AWS Libfabric");
	expect_meets(&l, "gdr,dmabuf", true, 0, NULL);
	nccl_log_free(&l);
}

/* ---- (6) garbage, truncated lines, NULs, CRs, a last line without newline ---- */

static void test_garbage_truncated(void **state)
{
	(void)state;
	struct nccl_log l;
	parse_fixture("garbage-truncated.log", &l);
	assert_int_equal(l.lines, 33);
	assert_string_equal(l.version, "2.27.3+cuda12.9");
	assert_int_equal(l.net, NCCL_NET_IB); /* "Sock et" (a NUL inside) does not replace it */
	assert_string_equal(l.net_name, "IB");
	assert_int_equal(l.n_hcas, 2);
	expect_hca(&l, 0, 0, "mlx5_0", 1, "RoCE", 1); /* "[1]mlx5_" and "HCA 1 'mlx5_" were cut */
	expect_hca(&l, 1, 4, "mlx5_bond_0", 2, NULL, -1); /* "/Ethernet" is no link layer */
	assert_false(l.ib_no_device); /* that text was outside an NCCL line */
	assert_null(l.socket_if);      /* "[0]eth0:10.9.8.7" without "<port>" was cut */
	assert_string_equal(l.oob_if, "eth0:10.9.8.7");
	assert_int_equal(l.dmabuf, 1);
	assert_false(l.gdrdma_channels); /* "/GDRDM" */
	assert_true(l.net_channels);
	EXPECT_LIST(&l.transports, "P2P/IPC", "SHM/CE/direct", "P2P/CUMEM");
	assert_int_equal(l.warnings.n, 2);
	assert_int_equal(strlen(l.warnings.v[0]), 1024);
	assert_int_equal(strspn(l.warnings.v[0], "x"), 1024);
	assert_string_equal(l.warnings.v[1], "bad ? bytes ??");
	expect_meets(&l, "ib,dmabuf", true, 0, NULL);
	expect_meets(&l, "gdr", true, 0, NULL); /* mlx5_0 on; mlx5_bond_0 not logged */
	nccl_log_free(&l);
}

/* ---- (7) HPC-X IBext_v8 plugin, fused NICs "[0]={[0] a, [1] b}", bonds ---- */

static void test_hpcx_merged_bond(void **state)
{
	(void)state;
	struct nccl_log l;
	parse_fixture("hpcx-ibext-merged-bond.log", &l);
	assert_int_equal(l.lines, 24);
	assert_null(l.version);
	assert_int_equal(l.net, NCCL_NET_IB);
	assert_string_equal(l.net_name, "IBext_v8");
	assert_int_equal(l.n_hcas, 4);
	expect_hca(&l, 0, 0, "mlx5_bond_0", 1, "RoCE", 1);
	expect_hca(&l, 1, 1, "mlx5_bond_1", 1, "RoCE", 1);
	expect_hca(&l, 2, 2, "mlx5_bond_2", 1, "RoCE", 1);
	expect_hca(&l, 3, 3, "mlx5_bond_3", 1, "RoCE", 1);
	assert_string_equal(l.oob_if, "bond0:10.44.0.21");
	assert_null(l.socket_if);
	assert_int_equal(l.dmabuf, 1);
	assert_true(l.gdrdma_channels);
	assert_true(l.net_channels);
	EXPECT_EMPTY(&l.transports);
	EXPECT_EMPTY(&l.warnings);
	EXPECT_SUMMARY(&l, "network: IBext_v8 (mlx5_bond_0:1/RoCE, mlx5_bond_1:1/RoCE, mlx5_bond_2:1/RoCE, "
			   "mlx5_bond_3:1/RoCE)",
		       "GPUDirect RDMA: on for mlx5_bond_0, mlx5_bond_1, mlx5_bond_2, mlx5_bond_3",
		       "DMA-BUF: available", "intra-node: none seen");
	expect_meets(&l, "ib,gdr,dmabuf", true, 0, NULL);
	nccl_log_free(&l);
}

/* ---- line variants one at a time ---- */

struct via_case {
	const char *line;
	bool net, gdrdma;
	const char *transport; /* NULL: none */
};

static void test_channel_variants(void **state)
{
	(void)state;
	static const struct via_case cases[] = {
		{ "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA", true, true, NULL },
		{ "h:1:2 [0] NCCL INFO Channel 01/0 : 0[0] -> 8[0] [send] via NET/IB/1", true, false, NULL },
		{ "h:1:2 [0] NCCL INFO Channel 01/0 : 8[0] -> 0[0] [receive] via NET/Socket/0", true, false, NULL },
		{ "h:1:2 [0] NCCL INFO Channel 00/0 : 9[1] -> 0[0] [receive] via NET/AWS Libfabric/0/GDRDMA", true,
		  true, NULL },
		{ "h:1:2 [0] NCCL INFO Channel 04/1 : 6[6] -> 10[2] [send] via NET/AWS Libfabric/1(2)/GDRDMA/Shared",
		  true, true, NULL },
		{ "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IBext_v8/0/GDRDMA(PCI)", true, true,
		  NULL },
		{ "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/GDRDMA/0", true, false, NULL },
		{ "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMAX", true, false, NULL },
		{ "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read", false, false, "P2P/CUMEM" },
		{ "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/CE", false, false, "P2P/CUMEM" },
		{ "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC", false, false, "P2P/IPC" },
		{ "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/direct pointer/read", false, false,
		  "P2P/direct pointer" },
		{ "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 2[2] via P2P/indirect/1[1]", false, false,
		  "P2P/indirect" },
		{ "h:1:2 [0] NCCL INFO Channel 00/0 : 3[3] -> 4[4] via SHM/direct/direct", false, false,
		  "SHM/direct/direct" },
		{ "h:1:2 [0] NCCL INFO Ring 00 : 12[41000] -> 11[2d000] via P2P/IPC", false, false, "P2P/IPC" },
		{ "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/NEWKIND/read", false, false,
		  "P2P/NEWKIND" },
		{ "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/NEWKIND", false, false, NULL },
		{ "h:1:2 [0] NCCL INFO Channel 00/32 :    0   7   6   5   4   3   2   1", false, false, NULL },
		{ "h:1:2 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 1", false, false, NULL },
		{ "via NET/IB/0/GDRDMA and via P2P/IPC in a shell comment", false, false, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct nccl_log l;
		print_message("case %zu: %s\n", i, cases[i].line);
		parse_str(cases[i].line, &l);
		assert_int_equal(l.lines, 1);
		assert_int_equal(l.net_channels, cases[i].net);
		assert_int_equal(l.gdrdma_channels, cases[i].gdrdma);
		if (cases[i].transport)
			EXPECT_LIST(&l.transports, cases[i].transport);
		else
			EXPECT_EMPTY(&l.transports);
		assert_int_equal(l.net, NCCL_NET_UNKNOWN);
		nccl_log_free(&l);
	}
}

static void test_using_line_variants(void **state)
{
	(void)state;
	struct nccl_log l;
	/* 2.4-style blank before "; OOB", no [RO]; SHARP suffix; IPv6 OOB;
	 * mlx5_1 must stay apart from mlx5_10 and mlx5_1:2 from mlx5_1:1. */
	parse_str("a:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_1:1/IB [1]mlx5_10:1/IB/SHARP [2]mlx5_1:2/RoCE ; "
		  "OOB ib0:fe80::1%ib0<0>\n"
		  "a:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_10:1/IB [1]mlx5_1:1/IB; OOB ib1:10.1.1.1<0>\n",
		  &l);
	assert_int_equal(l.n_hcas, 3);
	expect_hca(&l, 0, 0, "mlx5_1", 1, "IB", -1);
	expect_hca(&l, 1, 1, "mlx5_10", 1, "IB", -1);
	expect_hca(&l, 2, 2, "mlx5_1", 2, "RoCE", -1);
	assert_string_equal(l.oob_if, "ib0:fe80::1%ib0");
	nccl_log_free(&l);

	/* listed the other way round: "mlx5_1" is no prefix match of "mlx5_10" */
	parse_str("a:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_10:1/IB [1]mlx5_1:1/IB [RO]; OOB ib0:10.1.1.1<0>\n", &l);
	assert_int_equal(l.n_hcas, 2);
	expect_hca(&l, 0, 0, "mlx5_10", 1, "IB", -1);
	expect_hca(&l, 1, 1, "mlx5_1", 1, "IB", -1);
	nccl_log_free(&l);

	/* A verdict for "mlx5_1" marks both of its ports, not "mlx5_10". */
	parse_str("a:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_1:1/IB [1]mlx5_10:1/IB [2]mlx5_1:2/IB\n"
		  "a:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_1'\n",
		  &l);
	expect_hca(&l, 0, 0, "mlx5_1", 1, "IB", 0);
	expect_hca(&l, 1, 1, "mlx5_10", 1, "IB", -1);
	expect_hca(&l, 2, 2, "mlx5_1", 2, "IB", 0);
	expect_meets(&l, "gdr", false, 1, "mlx5_1");
	nccl_log_free(&l);
}

/* Lines from other processes may come in any order. */
static void test_interleaving_order(void **state)
{
	(void)state;
	struct nccl_log l;
	/* verdict before the device list; list repeated by a second rank;
	 * "Disabled" from one rank wins over "Enabled" from another, either way */
	parse_str("b:2:2 [1] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'\r\n"
		  "a:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\r\n"
		  "b:2:2 [1] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.2<0>\r\n"
		  "a:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1'\r\n"
		  "b:2:2 [1] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 1 'mlx5_1'\r\n"
		  "b:2:2 [1] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\r\n"
		  "a:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'\r\n",
		  &l);
	assert_int_equal(l.lines, 7);
	assert_int_equal(l.n_hcas, 2);
	expect_hca(&l, 0, 0, "mlx5_0", 1, "RoCE", 0);
	expect_hca(&l, 1, 1, "mlx5_1", 1, "RoCE", 0);
	assert_string_equal(l.oob_if, "eth0:10.0.0.1");
	nccl_log_free(&l);

	/* a verdict for an HCA with two ports reaches the port listed later */
	parse_str("NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_2'\n"
		  "NCCL INFO NET/IB : Using [0]mlx5_2:1/IB [1]mlx5_2:2/IB\n",
		  &l);
	assert_int_equal(l.n_hcas, 2);
	expect_hca(&l, 0, 0, "mlx5_2", 1, "IB", 1);
	expect_hca(&l, 1, 1, "mlx5_2", 2, "IB", 1);
	nccl_log_free(&l);
}

static void test_network_precedence(void **state)
{
	(void)state;
	struct nccl_log l;
	parse_str("NCCL INFO Using network IB\nNCCL INFO Using network Socket\nNCCL INFO Using network IB\n", &l);
	assert_int_equal(l.net, NCCL_NET_SOCKET);
	assert_string_equal(l.net_name, "Socket");
	nccl_log_free(&l);
	parse_str("NCCL INFO Using network AWS Libfabric\nNCCL INFO Using network IB\n", &l);
	assert_int_equal(l.net, NCCL_NET_OTHER);
	assert_string_equal(l.net_name, "AWS Libfabric");
	nccl_log_free(&l);
	parse_str("NCCL INFO Using network IBext\n", &l);
	assert_int_equal(l.net, NCCL_NET_IB);
	assert_string_equal(l.net_name, "IBext");
	nccl_log_free(&l);
	parse_str("NCCL INFO Using network IBM\n", &l); /* not "IB" */
	assert_int_equal(l.net, NCCL_NET_OTHER);
	nccl_log_free(&l);
	parse_str("NCCL INFO Using network \n"
		  "NCCL INFO Using network IB; rm -rf /\n"
		  "NCCL INFO Using network <script>\n",
		  &l);
	assert_int_equal(l.net, NCCL_NET_UNKNOWN);
	assert_null(l.net_name);
	nccl_log_free(&l);
}

static void test_version_shapes(void **state)
{
	(void)state;
	struct nccl_log l;
	parse_str("[1,0]<stdout>:NCCL version 2.19.3+cuda12.3\nNCCL version 2.20.5+cuda12.4\n", &l);
	assert_string_equal(l.version, "2.19.3+cuda12.3");
	nccl_log_free(&l);
	parse_str("expected NCCL version 2.18.1 or newer\n"
		  "h:1:1 [0] NCCL INFO NCCL version abc\n"
		  "h:1:1 [0] NCCL INFO NCCL version 2.27.6+cuda13.0\n",
		  &l);
	assert_string_equal(l.version, "2.27.6+cuda13.0");
	nccl_log_free(&l);
}

static void test_long_lines(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	for (int i = 0; i < 100000; i++)
		strbuf_addch(&sb, 'A');
	strbuf_adds(&sb, " NCCL INFO Using network Socket\n"); /* beyond the 64 KiB cut */
	strbuf_adds(&sb, "h:1:1 [0] NCCL WARN ");
	for (int i = 0; i < 70000; i++)
		strbuf_addch(&sb, 'y');
	strbuf_adds(&sb, "\nh:1:1 [0] NCCL INFO NET/IB : Using");
	for (int i = 0; i < 2000; i++)
		strbuf_addf(&sb, " [%d]mlx5_%d:1/IB", i, i);
	strbuf_adds(&sb, " [RO]; OOB eth0:10.0.0.1<0>\nh:1:1 [0] NCCL INFO Using network IB");
	struct nccl_log l;
	nccl_log_parse(sb.buf, sb.len, &l);
	assert_int_equal(l.lines, 4);
	assert_int_equal(l.net, NCCL_NET_IB);
	assert_int_equal(l.warnings.n, 1);
	assert_int_equal(strlen(l.warnings.v[0]), 1024);
	assert_int_equal(l.n_hcas, 64); /* capped */
	expect_hca(&l, 63, 63, "mlx5_63", 1, "IB", -1);
	assert_string_equal(l.oob_if, "eth0:10.0.0.1");
	nccl_log_free(&l);
	strbuf_release(&sb);
}

static void test_dedupe_and_caps(void **state)
{
	(void)state;
	struct strbuf sb = STRBUF_INIT;
	for (int rep = 0; rep < 3; rep++) {
		for (int i = 0; i < 100; i++)
			strbuf_addf(&sb, "h:%d:1 [0] f.cc:1 NCCL WARN message %d\n", rep, i);
		strbuf_adds(&sb, "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n");
		strbuf_adds(&sb, "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read\n");
	}
	struct nccl_log l;
	nccl_log_parse(sb.buf, sb.len, &l);
	assert_int_equal(l.warnings.n, 64);
	assert_string_equal(l.warnings.v[0], "message 0");
	assert_string_equal(l.warnings.v[63], "message 63");
	EXPECT_LIST(&l.transports, "SHM/direct/direct", "P2P/IPC");
	struct strv out = STRV_INIT;
	nccl_log_summary(&l, &out);
	assert_int_equal(out.n, 10); /* 4 facts, 5 warnings, "... and 59 more" */
	assert_string_equal(out.v[9], "... and 59 more NCCL warnings");
	strv_free(&out);
	nccl_log_free(&l);
	strbuf_release(&sb);
}

static void test_meets_words(void **state)
{
	(void)state;
	struct nccl_log l;
	parse_fixture("h100-2node-roce-gdr.log", &l);
	expect_meets(&l, NULL, true, 0, NULL);
	expect_meets(&l, "", true, 0, NULL);
	expect_meets(&l, " IB , GDR,,dmabuf ,ib", true, 0, NULL);
	expect_meets(&l, "ib,nvlink", false, 1, "nvlink");
	expect_meets(&l, "gdrx", false, 1, "known: ib, gdr, dmabuf");
	nccl_log_free(&l);

	/* no log at all: every requirement explains how to get one */
	parse_str("", &l);
	assert_int_equal(l.lines, 0);
	expect_meets(&l, "ib,gdr,dmabuf", false, 3, "NCCL_DEBUG_SUBSYS including INIT,NET");
	EXPECT_SUMMARY(&l,
		       "network: unknown (no \"Using network\" line; run NCCL with NCCL_DEBUG=INFO and "
		       "NCCL_DEBUG_SUBSYS including INIT,NET)",
		       "GPUDirect RDMA: not logged (needs NCCL_DEBUG_SUBSYS to include NET)", "DMA-BUF: not reported",
		       "intra-node: none seen");
	nccl_log_free(&l);

	/* NET channels without /GDRDMA and no verdicts: staged through host memory */
	parse_str("h:1:1 [0] NCCL INFO Using network IB\n"
		  "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0\n",
		  &l);
	expect_meets(&l, "gdr", false, 1, "without /GDRDMA");
	EXPECT_SUMMARY(&l, "network: IB", "GPUDirect RDMA: not used (NET channels without /GDRDMA)",
		       "DMA-BUF: not reported", "intra-node: none seen");
	nccl_log_free(&l);

	/* one rank on IB with GDR, another fell back to Socket: not met */
	parse_str("a:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\n"
		  "a:1:1 [0] NCCL INFO Using network IB\n"
		  "a:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'\n"
		  "b:2:2 [0] NCCL INFO Using network Socket\n",
		  &l);
	expect_meets(&l, "gdr", false, 1, "Socket");
	expect_meets(&l, "ib", false, 1, "Socket");
	nccl_log_free(&l);

	/* GDR from channel lines alone (NET subsystem verdicts not logged) */
	parse_str("h:1:1 [0] NCCL INFO Using network IB\n"
		  "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n",
		  &l);
	expect_meets(&l, "ib,gdr", true, 0, NULL);
	nccl_log_free(&l);
}

static void test_null_and_free(void **state)
{
	(void)state;
	struct nccl_log l;
	nccl_log_parse(NULL, 0, &l);
	assert_int_equal(l.lines, 0);
	assert_int_equal(l.net, NCCL_NET_UNKNOWN);
	nccl_log_free(&l);
	nccl_log_free(&l); /* idempotent */
	nccl_log_free(NULL);
	parse_str("\n\n\r\n", &l);
	assert_int_equal(l.lines, 3);
	nccl_log_free(&l);
}

/* Every prefix of every fixture and pseudo-random bytes: no crash, no leak,
 * invariants hold (ASan/LSan/UBSan watch). */
static void check_invariants(const struct nccl_log *l)
{
	assert_true(l->n_hcas <= 64);
	assert_true(l->transports.n <= 32 && l->warnings.n <= 64);
	for (size_t i = 0; i < l->n_hcas; i++) {
		assert_non_null(l->hcas[i].name);
		assert_true(l->hcas[i].gdr >= -1 && l->hcas[i].gdr <= 1);
	}
	for (size_t i = 0; i < l->warnings.n; i++)
		for (const char *p = l->warnings.v[i]; *p; p++)
			assert_true(*p >= 0x20 && *p < 0x7f);
	struct strv out = STRV_INIT, why = STRV_INIT;
	nccl_log_summary(l, &out);
	(void)nccl_log_meets(l, "ib,gdr,dmabuf,x", &why);
	assert_true(out.n >= 4 && why.n >= 1);
	strv_free(&out);
	strv_free(&why);
}

static void test_prefixes_and_noise(void **state)
{
	(void)state;
	static const char *const files[] = { "h100-2node-roce-gdr.log", "ib-gdr-disabled-hca1.log",
					     "aws-ofi-plugin-crlf.log", "garbage-truncated.log" };
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		size_t len;
		char *text = slurp(files[f], &len);
		for (size_t cut = 0; cut <= len; cut += 13) {
			struct nccl_log l;
			nccl_log_parse(text, cut, &l);
			check_invariants(&l);
			nccl_log_free(&l);
		}
		free(text);
	}
	unsigned x = 12345;
	static const char alphabet[] = "NCCL INFO WARN NET/IB : Using [0]mlx5_0:1/RoCE via P2P/SHM/GDRDMA'\n\r\0+=<>";
	char buf[2048];
	for (int round = 0; round < 300; round++) {
		for (size_t i = 0; i < sizeof(buf); i++) {
			x = x * 1103515245u + 12345u;
			buf[i] = (x >> 24) & 1 ? alphabet[(x >> 8) % (sizeof(alphabet) - 1)] : (char)(x >> 16);
		}
		struct nccl_log l;
		nccl_log_parse(buf, sizeof(buf), &l);
		check_invariants(&l);
		nccl_log_free(&l);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_h100_roce_gdr),
		cmocka_unit_test(test_socket_fallback),
		cmocka_unit_test(test_single_node_8gpu),
		cmocka_unit_test(test_gdr_disabled_one_hca),
		cmocka_unit_test(test_aws_ofi_plugin),
		cmocka_unit_test(test_garbage_truncated),
		cmocka_unit_test(test_hpcx_merged_bond),
		cmocka_unit_test(test_channel_variants),
		cmocka_unit_test(test_using_line_variants),
		cmocka_unit_test(test_interleaving_order),
		cmocka_unit_test(test_network_precedence),
		cmocka_unit_test(test_version_shapes),
		cmocka_unit_test(test_long_lines),
		cmocka_unit_test(test_dedupe_and_caps),
		cmocka_unit_test(test_meets_words),
		cmocka_unit_test(test_null_and_free),
		cmocka_unit_test(test_prefixes_and_noise),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
