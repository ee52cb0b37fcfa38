/* Policy of the checks of NCCL variables that switch off what the node
 * has (rdma.nccl_p2p, nccl_shm, nccl_gdr, nccl_tuning, nccl_topo_file),
 * on the fixture machines with the variables set in memory, and the
 * reader of NCCL topology files. */
#include "testutil.h"
#include "checks/check.h"
#include "core/report.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct run {
	struct report rep;
	struct inventory *inv;
};

static void load(struct run *r, const char *fixture)
{
	char *dir = tu_fixture(fixture);
	struct root *root = NULL;
	assert_int_equal(root_open(dir, &root), 0);
	assert_int_equal(inventory_load(root, &(struct load_opts){ .parts = INV_FILES }, &r->inv), 0);
	report_init(&r->rep, "test", "host", dir);
	root_free(root);
	free(dir);
}

/* Sets (or replaces) a variable as if /etc/nccl.conf line 1 set it. */
static void setvar(struct run *r, const char *name, const char *value)
{
	struct nccl_config *c = &r->inv->nccl;
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].name, name)) {
			free(c->v[i].value);
			c->v[i].value = xstrdup(value);
			return;
		}
	c->v = xreallocarray(c->v, c->n + 1, sizeof(*c->v));
	c->v[c->n++] = (struct nccl_var){ .name = xstrdup(name), .value = xstrdup(value),
					  .source = xstrdup("/etc/nccl.conf:1") };
}

static void check(struct run *r, const char *id)
{
	struct strv only = STRV_INIT, skip = STRV_INIT;
	strv_add(&only, id);
	struct site_expect e = { .tos = -1 };
	struct check_select sel = { .only = &only, .skip = &skip };
	report_free(&r->rep);
	report_init(&r->rep, "test", "host", "/");
	assert_int_equal(checks_run(NULL, r->inv, &e, &sel, &r->rep), 0);
	strv_free(&only);
}

static void done(struct run *r)
{
	report_free(&r->rep);
	inventory_free(r->inv);
}

/* The worst status of id about subject; -1 if none. */
static int status(const struct run *r, const char *id, const char *subject)
{
	int best = tu_worst(&r->rep, id, subject);
	if (best < 0)
		fail_msg("no finding %s about %s", id, subject);
	return best;
}

static bool has(const struct run *r, const char *id, const char *subject, const char *text)
{
	for (size_t i = 0; i < r->rep.n; i++) {
		const struct finding *f = r->rep.v[i];
		if (!strcmp(f->id, id) && !strcmp(f->subject, subject) && strstr(f->message, text))
			return true;
	}
	fail_msg("no finding %s about %s saying \"%s\"", id, subject, text);
	return false;
}

/* No warn or fail from id at all. */
static void clean(const struct run *r, const char *id)
{
	for (size_t i = 0; i < r->rep.n; i++) {
		const struct finding *f = r->rep.v[i];
		if (!strcmp(f->id, id) && (f->status == STATUS_WARN || f->status == STATUS_FAIL))
			fail_msg("%s %s: %s", f->id, f->subject, f->message);
	}
}

static void test_p2p(void **state)
{
	(void)state;
	struct run r;
	load(&r, "h100-8x-cx7-roce");
	check(&r, "rdma.nccl_p2p");
	assert_int_equal(status(&r, "rdma.nccl_p2p", "NCCL_P2P_LEVEL"), STATUS_OK); /* NVL */
	setvar(&r, "NCCL_P2P_LEVEL", "LOC");
	check(&r, "rdma.nccl_p2p");
	assert_int_equal(status(&r, "rdma.nccl_p2p", "NCCL_P2P_LEVEL"), STATUS_FAIL);
	setvar(&r, "NCCL_P2P_LEVEL", "0");
	check(&r, "rdma.nccl_p2p");
	assert_int_equal(status(&r, "rdma.nccl_p2p", "NCCL_P2P_LEVEL"), STATUS_FAIL);
	setvar(&r, "NCCL_P2P_LEVEL", "PIX"); /* NVLink (NVL) is within PIX */
	check(&r, "rdma.nccl_p2p");
	assert_int_equal(status(&r, "rdma.nccl_p2p", "NCCL_P2P_LEVEL"), STATUS_OK);
	/* only the value 1 of NCCL_P2P_DISABLE acts, and then it wins */
	setvar(&r, "NCCL_P2P_DISABLE", "true");
	check(&r, "rdma.nccl_p2p");
	clean(&r, "rdma.nccl_p2p");
	setvar(&r, "NCCL_P2P_DISABLE", "1");
	check(&r, "rdma.nccl_p2p");
	assert_int_equal(status(&r, "rdma.nccl_p2p", "NCCL_P2P_DISABLE"), STATUS_FAIL);
	has(&r, "rdma.nccl_p2p", "NCCL_P2P_DISABLE", "through 4 NVSwitches (0000:03:00.0, ...)");
	has(&r, "rdma.nccl_p2p", "NCCL_P2P_DISABLE", "through host shared memory");
	setvar(&r, "NCCL_SHM_DISABLE", "1");
	check(&r, "rdma.nccl_p2p");
	has(&r, "rdma.nccl_p2p", "NCCL_P2P_DISABLE", "through the network transport");
	done(&r);

	load(&r, "ndr-ib-4port"); /* 4 GPUs on PCIe, no NVSwitch */
	setvar(&r, "NCCL_P2P_DISABLE", "1");
	check(&r, "rdma.nccl_p2p");
	assert_int_equal(status(&r, "rdma.nccl_p2p", "NCCL_P2P_DISABLE"), STATUS_WARN);
	done(&r);

	load(&r, "dgx-spark-gb10"); /* one GPU */
	setvar(&r, "NCCL_P2P_DISABLE", "1");
	check(&r, "rdma.nccl_p2p");
	assert_int_equal(status(&r, "rdma.nccl_p2p", "NCCL_P2P_DISABLE"), STATUS_OK);
	done(&r);
}

static void test_shm(void **state)
{
	(void)state;
	struct run r;
	load(&r, "h100-8x-cx7-roce");
	setvar(&r, "NCCL_SHM_DISABLE", "1");
	check(&r, "rdma.nccl_shm");
	assert_int_equal(status(&r, "rdma.nccl_shm", "NCCL_SHM_DISABLE"), STATUS_OK); /* NVLink P2P joins all */
	setvar(&r, "NCCL_P2P_DISABLE", "1");
	check(&r, "rdma.nccl_shm");
	assert_int_equal(status(&r, "rdma.nccl_shm", "NCCL_SHM_DISABLE"), STATUS_FAIL);
	has(&r, "rdma.nccl_shm", "NCCL_SHM_DISABLE", "every pair of this node's 8 GPUs");
	setvar(&r, "NCCL_SHM_DISABLE", "2"); /* only 1 acts */
	check(&r, "rdma.nccl_shm");
	clean(&r, "rdma.nccl_shm");
	/* P2P computed at login: what shared memory would carry is unknown */
	setvar(&r, "NCCL_SHM_DISABLE", "1");
	setvar(&r, "NCCL_P2P_DISABLE", "$P2P_OFF");
	for (size_t i = 0; i < r.inv->nccl.n; i++)
		r.inv->nccl.v[i].computed = !strcmp(r.inv->nccl.v[i].name, "NCCL_P2P_DISABLE");
	check(&r, "rdma.nccl_shm");
	assert_int_equal(status(&r, "rdma.nccl_shm", "NCCL_SHM_DISABLE"), STATUS_SKIP);
	check(&r, "rdma.nccl_p2p");
	assert_int_equal(status(&r, "rdma.nccl_p2p", "NCCL_P2P_DISABLE"), STATUS_SKIP);
	done(&r);

	load(&r, "ndr-ib-4port");
	setvar(&r, "NCCL_SHM_DISABLE", "0x1"); /* strtoll base 0: 1 */
	check(&r, "rdma.nccl_shm");
	assert_int_equal(status(&r, "rdma.nccl_shm", "NCCL_SHM_DISABLE"), STATUS_WARN);
	done(&r);
}

static void test_gdr(void **state)
{
	(void)state;
	struct run r;
	load(&r, "h100-8x-cx7-roce"); /* DMA-BUF, no peer memory */
	check(&r, "rdma.nccl_gdr");
	clean(&r, "rdma.nccl_gdr");
	setvar(&r, "NCCL_NET_GDR_LEVEL", "LOC");
	setvar(&r, "NCCL_NET_GDR_READ", "0");
	setvar(&r, "NCCL_DMABUF_ENABLE", "false"); /* strtoll: 0 */
	check(&r, "rdma.nccl_gdr");
	assert_int_equal(status(&r, "rdma.nccl_gdr", "NCCL_NET_GDR_LEVEL"), STATUS_FAIL);
	has(&r, "rdma.nccl_gdr", "NCCL_NET_GDR_LEVEL", "for all 8 GPUs");
	assert_int_equal(status(&r, "rdma.nccl_gdr", "NCCL_NET_GDR_READ"), STATUS_WARN);
	assert_int_equal(status(&r, "rdma.nccl_gdr", "NCCL_DMABUF_ENABLE"), STATUS_FAIL);
	setvar(&r, "NCCL_NET_GDR_LEVEL", "PXB");
	setvar(&r, "NCCL_NET_GDR_READ", "1");
	setvar(&r, "NCCL_DMABUF_ENABLE", "1");
	check(&r, "rdma.nccl_gdr");
	clean(&r, "rdma.nccl_gdr");
	done(&r);

	load(&r, "h100-proprietary-peermem"); /* legacy peer memory carries it */
	setvar(&r, "NCCL_DMABUF_ENABLE", "0");
	check(&r, "rdma.nccl_gdr");
	assert_int_equal(status(&r, "rdma.nccl_gdr", "NCCL_DMABUF_ENABLE"), STATUS_OK);
	done(&r);

	load(&r, "v100-cx3pro"); /* ConnectX-3: no GPUDirect RDMA at all */
	setvar(&r, "NCCL_NET_GDR_LEVEL", "0");
	setvar(&r, "NCCL_NET_GDR_READ", "0");
	check(&r, "rdma.nccl_gdr");
	clean(&r, "rdma.nccl_gdr");
	done(&r);
}

static void test_tuning_lists(void **state)
{
	(void)state;
	struct run r;
	load(&r, "h100-8x-cx7-roce");
	check(&r, "rdma.nccl_tuning");
	clean(&r, "rdma.nccl_tuning");
	static const struct {
		const char *var, *value;
		int st;
		const char *says;
	} cases[] = {
		{ "NCCL_PROTO", "^LL128", STATUS_WARN, "LL128 (every collective)" },
		{ "NCCL_PROTO", "simple", STATUS_WARN, "LL, LL128 (every collective)" },
		{ "NCCL_PROTO", "LL,LL128,Simple", STATUS_OK, "turns nothing off" },
		{ "NCCL_PROTO", "^", STATUS_OK, "turns nothing off" },
		{ "NCCL_PROTO", "Simple;allreduce:^LL", STATUS_WARN, "AllReduce: LL for every job" },
		{ "NCCL_PROTO", "Simpel", STATUS_FAIL, "\"Simpel\" is not one of NCCL's names" },
		{ "NCCL_PROTO", "allreduce:", STATUS_FAIL, "\"allreduce\" is not one of" },
		{ "NCCL_PROTO", "LL;Simple", STATUS_FAIL, "no function prefix" },
		{ "NCCL_PROTO", "Simple;allgather:", STATUS_FAIL, "no function prefix" },
		{ "NCCL_PROTO", ":", STATUS_FAIL, "names nothing" },
		{ "NCCL_PROTO", "allreduce:^LL,LL128,Simple", STATUS_FAIL, "leaves AllReduce without any protocol" },
		{ "NCCL_ALGO", "Ring", STATUS_WARN, "NVLink SHARP" },
		{ "NCCL_ALGO", "^NVLS,NVLSTree", STATUS_WARN, "AllReduce: NVLS, NVLSTree" },
		{ "NCCL_ALGO", "Tree", STATUS_FAIL, "leaves Broadcast, Reduce, AllGather, ReduceScatter without" },
		{ "NCCL_ALGO", "ring;allreduce:tree,nvls", STATUS_WARN, "AllReduce: Ring" },
		{ "NCCL_ALGO", "ring;bcast:tree", STATUS_FAIL, "\"bcast\" is not a collective" },
		{ "NCCL_ALGO", "Tree,Ring,CollNetDirect,CollNetChain,NVLS,NVLSTree,PAT", STATUS_OK, "nothing" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setvar(&r, "NCCL_PROTO", "^");
		setvar(&r, "NCCL_ALGO", "^");
		setvar(&r, cases[i].var, cases[i].value);
		check(&r, "rdma.nccl_tuning");
		if (status(&r, "rdma.nccl_tuning", cases[i].var) != cases[i].st)
			fail_msg("%s=%s: status %d", cases[i].var, cases[i].value,
				 status(&r, "rdma.nccl_tuning", cases[i].var));
		has(&r, "rdma.nccl_tuning", cases[i].var, cases[i].says);
	}
	done(&r);
}

static void test_tuning_nvls_channels(void **state)
{
	(void)state;
	struct run r;
	load(&r, "h100-8x-cx7-roce"); /* 8 RDMA ports, NVSwitches, H100 */
	setvar(&r, "NCCL_NVLS_ENABLE", "0");
	check(&r, "rdma.nccl_tuning");
	assert_int_equal(status(&r, "rdma.nccl_tuning", "NCCL_NVLS_ENABLE"), STATUS_WARN);
	setvar(&r, "NCCL_NVLS_ENABLE", "2");
	setvar(&r, "NCCL_MAX_NCHANNELS", "4");
	check(&r, "rdma.nccl_tuning");
	assert_int_equal(status(&r, "rdma.nccl_tuning", "NCCL_MAX_NCHANNELS"), STATUS_WARN);
	has(&r, "rdma.nccl_tuning", "NCCL_MAX_NCHANNELS", "fewer than the 8 RDMA ports");
	/* NCCL_IB_HCA leaves 2 ports: 4 channels are enough for them */
	setvar(&r, "NCCL_IB_HCA", "=mlx5_0,mlx5_1");
	check(&r, "rdma.nccl_tuning");
	assert_int_equal(status(&r, "rdma.nccl_tuning", "NCCL_MAX_NCHANNELS"), STATUS_OK);
	setvar(&r, "NCCL_MAX_NCHANNELS", "0"); /* below 1 means 1 */
	check(&r, "rdma.nccl_tuning");
	has(&r, "rdma.nccl_tuning", "NCCL_MAX_NCHANNELS", "at 1 channel,");
	setvar(&r, "NCCL_MAX_NCHANNELS", "32");
	setvar(&r, "NCCL_MAX_CTAS", "8");
	check(&r, "rdma.nccl_tuning");
	assert_int_equal(status(&r, "rdma.nccl_tuning", "NCCL_MAX_CTAS"), STATUS_WARN);
	has(&r, "rdma.nccl_tuning", "NCCL_MAX_CTAS", "clamps NVLink SHARP to 8 channels");
	setvar(&r, "NCCL_MAX_CTAS", "0"); /* ignored by NCCL */
	check(&r, "rdma.nccl_tuning");
	clean(&r, "rdma.nccl_tuning");
	done(&r);

	load(&r, "ndr-ib-4port"); /* no NVSwitch, 4 GPUs: NVLS unknown */
	setvar(&r, "NCCL_NVLS_ENABLE", "0");
	check(&r, "rdma.nccl_tuning");
	assert_int_equal(status(&r, "rdma.nccl_tuning", "NCCL_NVLS_ENABLE"), STATUS_SKIP);
	done(&r);
}

/* The reader of topology files: what NCCL writes, and garbage. */
static void test_topo_parse(void **state)
{
	(void)state;
	static const char xml[] =
		"<system version=\"1\">\n<!-- <pci busid=\"dead:00:00.0\" class=\"0x030200\"/> -->\n"
		"<cpu numaid=\"0\"><pci busid=\"ffff:ff:01.0\" class=\"0x060400\" link_speed=\"32.0 GT/s PCIe\">\n"
		"<pci busid='0000:18:00.0' class = '0x030200'><gpu dev=\"0\"/></pci>\n"
		"<pci class=\"0x020700\" busid=\"0000:19:00.0\"><nic><net name=\"mlx5_0\"/></nic></pci>\n"
		"<pcix busid=\"0000:20:00.0\"/><pci/><pci busid=\"0000:21:00.0\" class=\"zz\">";
	struct nccl_topo_file t = { 0 };
	nccl_topo_parse(xml, sizeof(xml) - 1, &t.pci, &t.n_pci);
	assert_int_equal(t.n_pci, 4);
	assert_string_equal(t.pci[0].busid, "ffff:ff:01.0");
	assert_int_equal(t.pci[0].class_code, 0x060400);
	assert_string_equal(t.pci[1].busid, "0000:18:00.0");
	assert_int_equal(t.pci[1].class_code, 0x030200);
	assert_string_equal(t.pci[2].busid, "0000:19:00.0");
	assert_int_equal(t.pci[2].class_code, 0x020700);
	assert_string_equal(t.pci[3].busid, "0000:21:00.0");
	assert_int_equal(t.pci[3].class_code, 0);
	nccl_topo_free(&t);

	/* cut anywhere, the reader stays inside the text */
	for (size_t n = 0; n < sizeof(xml) - 1; n++) {
		char *cut = malloc(n ? n : 1);
		memcpy(cut, xml, n);
		nccl_topo_parse(cut, n, &t.pci, &t.n_pci);
		assert_true(t.n_pci <= 4);
		nccl_topo_free(&t);
		free(cut);
	}
	static const char *const tokens[] = { "<pci", " busid=", "\"", "'", "0000:18:00.0", "class=", "0x030200", ">",
					      "/>", "<!--", "-->", "<", "=", " ", "\n", "\0x" };
	unsigned seed = 7;
	for (int i = 0; i < 500; i++) {
		struct strbuf sb = STRBUF_INIT;
		tu_random_tokens(&sb, tokens, sizeof(tokens) / sizeof(tokens[0]), 40, &seed);
		nccl_topo_parse(sb.buf, sb.len, &t.pci, &t.n_pci);
		for (size_t k = 0; k < t.n_pci; k++)
			assert_true(strlen(t.pci[k].busid) > 0 && strlen(t.pci[k].busid) <= 64);
		nccl_topo_free(&t);
		strbuf_release(&sb);
	}
	nccl_topo_parse("", 0, &t.pci, &t.n_pci);
	assert_int_equal(t.n_pci, 0);
}

/* The loader: NCCL_TOPO_FILE from nccl.conf, the default file, a missing
 * one, a relative one. */
static void test_topo_load(void **state)
{
	(void)state;
	char *dir = tu_mkdtemp();
	struct root *root = NULL;
	struct user_info u = { .uid = -1 };
	struct nccl_config c = { 0 };
	assert_int_equal(root_open(dir, &root), 0);
	assert_int_equal(nccl_config_load(root, &u, &c), 0);
	assert_null(c.topo.path); /* nothing set, no default file */
	nccl_config_free(&c);

	tu_write(dir, "var/run/nvidia-topologyd/virtualTopology.xml", "<system><pci busid=\"0000:01:00.0\"/></system>");
	assert_int_equal(nccl_config_load(root, &u, &c), 0);
	assert_true(c.topo.by_default);
	assert_int_equal(c.topo.err, 0);
	assert_int_equal(c.topo.n_pci, 1);
	nccl_config_free(&c);

	tu_write(dir, "etc/nccl.conf", "NCCL_TOPO_FILE=/etc/missing.xml\n");
	assert_int_equal(nccl_config_load(root, &u, &c), 0);
	assert_string_equal(c.topo.path, "/etc/missing.xml");
	assert_false(c.topo.by_default);
	assert_int_equal(c.topo.err, -ENOENT);
	nccl_config_free(&c);

	tu_write(dir, "etc/nccl.conf", "NCCL_TOPO_FILE=topo.xml\n");
	assert_int_equal(nccl_config_load(root, &u, &c), 0);
	assert_null(c.topo.path);
	assert_non_null(strstr(c.topo.why, "relative"));
	nccl_config_free(&c);
	root_free(root);
	tu_rmtree(dir);
	free(dir);
}

static void test_topo_file(void **state)
{
	(void)state;
	struct run r;
	load(&r, "h100-8x-cx7-roce");
	check(&r, "rdma.nccl_topo_file");
	assert_int_equal(status(&r, "rdma.nccl_topo_file", "NCCL_TOPO_FILE"), STATUS_OK);
	struct nccl_topo_file *t = &r.inv->nccl.topo;
	setvar(&r, "NCCL_TOPO_FILE", "/etc/nccl-topo.xml");
	t->path = xstrdup("/etc/nccl-topo.xml");
	t->err = -ENOENT;
	check(&r, "rdma.nccl_topo_file");
	assert_int_equal(status(&r, "rdma.nccl_topo_file", "NCCL_TOPO_FILE"), STATUS_WARN);
	has(&r, "rdma.nccl_topo_file", "NCCL_TOPO_FILE", "NCCL skips a file it cannot open");
	t->err = 0;
	static const char gpus[] = "<system><pci busid=\"0000:18:00.0\" class=\"0x030200\"/>"
				   "<pci busid=\"0000:3a:00.0\" class=\"0x030200\"/><pci busid=\"0000:4b:00.0\" class=\"0x030200\"/>"
				   "<pci busid=\"0000:5c:00.0\" class=\"0x030200\"/><pci busid=\"0000:9a:00.0\" class=\"0x030200\"/>"
				   "<pci busid=\"0000:ba:00.0\" class=\"0x030200\"/><pci busid=\"0000:cb:00.0\" class=\"0x030200\"/>"
				   "<pci busid=\"0000:dc:00.0\" class=\"0x030200\"/><pci busid=\"0000:19:00.0\" class=\"0x020000\"/>"
				   "<pci busid=\"ffff:ff:01.0\" class=\"0x060400\"/></system>";
	nccl_topo_parse(gpus, sizeof(gpus) - 1, &t->pci, &t->n_pci);
	check(&r, "rdma.nccl_topo_file");
	assert_int_equal(status(&r, "rdma.nccl_topo_file", "NCCL_TOPO_FILE"), STATUS_OK);
	has(&r, "rdma.nccl_topo_file", "NCCL_TOPO_FILE", "8 GPUs, 1 NICs");
	static const char vm[] = "<pci busid=\"0001:00:00.0\" class=\"0x030200\"/><pci busid=\"0101:00:00.0\" class=\"0x020700\"/>";
	nccl_topo_free(t);
	t->path = xstrdup("/etc/nccl-topo.xml");
	nccl_topo_parse(vm, sizeof(vm) - 1, &t->pci, &t->n_pci);
	check(&r, "rdma.nccl_topo_file");
	assert_int_equal(status(&r, "rdma.nccl_topo_file", "NCCL_TOPO_FILE"), STATUS_FAIL);
	has(&r, "rdma.nccl_topo_file", "NCCL_TOPO_FILE", "not on this node: GPU 0001:00:00.0, NIC 0101:00:00.0");
	nccl_topo_free(t);
	t->path = xstrdup("/etc/nccl-topo.xml");
	nccl_topo_parse(vm, sizeof(vm) - 1, &t->pci, &t->n_pci);
	free(t->pci[0].busid);
	t->pci[0].busid = xstrdup("0000:18:00.0");
	t->pci[1].class_code = 0x060400;
	check(&r, "rdma.nccl_topo_file");
	has(&r, "rdma.nccl_topo_file", "NCCL_TOPO_FILE", "this node's GPUs it does not list: 0000:3a:00.0");
	done(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_p2p),
		cmocka_unit_test(test_shm),
		cmocka_unit_test(test_gdr),
		cmocka_unit_test(test_tuning_lists),
		cmocka_unit_test(test_tuning_nvls_channels),
		cmocka_unit_test(test_topo_parse),
		cmocka_unit_test(test_topo_load),
		cmocka_unit_test(test_topo_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
