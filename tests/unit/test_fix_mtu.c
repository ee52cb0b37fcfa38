/* The MTU remedy's pure parts (src/fix/mtu.h): systemd-networkd's [Match]
 * Name= globs, ifupdown stanza edits, NetworkManager keyfile edits and
 * netplan files (the definition that configures an interface, our file
 * written and read back). */
#include "testutil.h"
#include "core/spawn.h"
#include "checks/check.h"
#include "core/report.h"
#include "core/root.h"
#include "core/strv.h"
#include "fix/fix.h"
#include "fix/mtu.h"
#include "opts/settings.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const struct fix_def fix_mtu;

static void test_networkd_name(void **state)
{
	(void)state;
	assert_int_equal(mtu_networkd_match("[Match]\nName=ens6f0np0\n", "ens6f0np0"), 1);
	assert_int_equal(mtu_networkd_match("[Match]\nName=ens6f0np0\n", "ens6f0np1"), 0);
	assert_int_equal(mtu_networkd_match("[Match]\nName=ens* eno1\n", "ens6f0np0"), 1);
	assert_int_equal(mtu_networkd_match("[Match]\nName=eno? ens[0-5]*\n", "ens6f0np0"), 0);
	/* "!" excludes; exclusions alone match every other name */
	assert_int_equal(mtu_networkd_match("[Match]\nName=!eno*\n", "ens6f0np0"), 1);
	assert_int_equal(mtu_networkd_match("[Match]\nName=ens*\nName=!ens6*\n", "ens6f0np0"), 0);
	/* an empty assignment resets the list */
	assert_int_equal(mtu_networkd_match("[Match]\nName=eno1\nName=\nName=ens6f0np0\n", "ens6f0np0"), 1);
	/* no [Match] condition: every interface */
	assert_int_equal(mtu_networkd_match("[Network]\nDHCP=yes\n", "ens6f0np0"), 1);
	/* Name= in another section does not count; other conditions are unsure */
	assert_int_equal(mtu_networkd_match("[Network]\nName=eno1\n[Match]\nName=ens6*\n", "ens6f0np0"), 1);
	assert_int_equal(mtu_networkd_match("[Match]\nName=ens6*\nDriver=mlx5_core\n", "ens6f0np0"), -EINVAL);
	assert_int_equal(mtu_networkd_match("[Match]\nName=eno*\nDriver=mlx5_core\n", "ens6f0np0"), 0);
	assert_int_equal(mtu_networkd_match("# Name=ens6f0np0\n[Match]\n#Name=x\nName = ens6f0np0 \n", "ens6f0np0"),
			 1);
	assert_int_equal(mtu_networkd_mtu("[Link]\nMTUBytes=1500\n[Network]\nMTUBytes=1\n"), 1500);
	assert_int_equal(mtu_networkd_mtu("[Match]\nName=x\n"), 0);
}

static void edit_ifupdown(const char *in, const char *iface, int mtu, const char *want)
{
	struct strbuf out = STRBUF_INIT;
	assert_int_equal(mtu_ifupdown_edit(in, iface, mtu, &out), 0);
	assert_string_equal(out.buf, want);
	strbuf_release(&out);
}

static void test_ifupdown(void **state)
{
	(void)state;
	const char *text = "auto lo\niface lo inet loopback\n\n# rail\nauto ens6f0np0\niface ens6f0np0 inet static\n"
			   "\taddress 10.0.5.10/24\n\t# a comment\n\tpost-up true\n\niface eno1 inet dhcp\n";
	assert_true(mtu_ifupdown_has(text, "ens6f0np0"));
	assert_false(mtu_ifupdown_has(text, "ens6f0np"));
	assert_false(mtu_ifupdown_has("auto ens6f0np0\n", "ens6f0np0"));
	/* added after the last option of the stanza, with its indentation */
	edit_ifupdown(text, "ens6f0np0", 9000,
		      "auto lo\niface lo inet loopback\n\n# rail\nauto ens6f0np0\niface ens6f0np0 inet static\n"
		      "\taddress 10.0.5.10/24\n\t# a comment\n\tpost-up true\n\tmtu 9000\n\niface eno1 inet dhcp\n");
	/* changed in place, in every stanza of the interface; other stanzas kept */
	edit_ifupdown("iface eno1 inet dhcp\n  mtu 1500\niface ens6f0np0 inet manual\n  mtu 1500 \n"
		      "iface ens6f0np0 inet6 manual\n    mtu 1500\r\n",
		      "ens6f0np0", 9000,
		      "iface eno1 inet dhcp\n  mtu 1500\niface ens6f0np0 inet manual\n  mtu 9000\n"
		      "iface ens6f0np0 inet6 manual\n    mtu 9000\r\n");
	/* a stanza without options, at the end of a file without a newline */
	edit_ifupdown("iface ens6f0np0 inet manual", "ens6f0np0", 4200, "iface ens6f0np0 inet manual\n    mtu 4200\n");
	/* only the first stanza gets the new line */
	edit_ifupdown("iface ens6f0np0 inet manual\n  up true\niface ens6f0np0 inet6 auto\n  down true\n", "ens6f0np0",
		      9000, "iface ens6f0np0 inet manual\n  up true\n  mtu 9000\niface ens6f0np0 inet6 auto\n  down true\n");
	struct strbuf out = STRBUF_INIT;
	assert_int_equal(mtu_ifupdown_edit(text, "ens7f0np0", 9000, &out), -ENOENT);
	assert_int_equal(mtu_ifupdown_edit("iface ens6f0np0 inet manual\n  up ip link set \\\n  mtu 1500\n", "ens6f0np0",
					   9000, &out),
			 -EINVAL);
	strbuf_release(&out);
	struct strv src = { 0 };
	mtu_ifupdown_sources("source /etc/network/interfaces.d/*\nsource-directory interfaces.d\nsourcex y\n", &src);
	assert_int_equal(src.n, 2);
	assert_string_equal(src.v[0], "source\t/etc/network/interfaces.d/*");
	assert_string_equal(src.v[1], "source-directory\tinterfaces.d");
	strv_free(&src);
}

static void edit_keyfile(const char *in, int mtu, const char *want)
{
	struct strbuf out = STRBUF_INIT;
	mtu_keyfile_edit(in, mtu, &out);
	assert_string_equal(out.buf, want);
	strbuf_release(&out);
}

static void test_keyfile(void **state)
{
	(void)state;
	const char *text = "[connection]\nid=rail5\ninterface-name=ens6f0np0\n\n[ethernet]\ncloned-mac-address=permanent\n\n"
			   "[ipv4]\nmethod=manual\n";
	char *v = mtu_keyfile_get(text, "connection", "interface-name");
	assert_string_equal(v, "ens6f0np0");
	free(v);
	assert_null(mtu_keyfile_get(text, "ethernet", "mtu"));
	/* added at the end of [ethernet], every other line kept */
	edit_keyfile(text, 9000,
		     "[connection]\nid=rail5\ninterface-name=ens6f0np0\n\n[ethernet]\ncloned-mac-address=permanent\n"
		     "mtu=9000\n\n[ipv4]\nmethod=manual\n");
	/* changed in place, also under the long name */
	edit_keyfile("[802-3-ethernet]\nmtu=1500\nwake-on-lan=0\n[ipv4]\nmtu=1\n", 9000,
		     "[802-3-ethernet]\nmtu=9000\nwake-on-lan=0\n[ipv4]\nmtu=1\n");
	/* an empty section, and no section */
	edit_keyfile("[connection]\nid=x\n[ethernet]\n[ipv4]\n", 9000, "[connection]\nid=x\n[ethernet]\nmtu=9000\n[ipv4]\n");
	edit_keyfile("[connection]\nid=x", 9000, "[connection]\nid=x\n\n[ethernet]\nmtu=9000\n");
}

static const char NETPLAN[] = "network:\n"
			      "  version: 2\n"
			      "  renderer: NetworkManager\n"
			      "  ethernets:\n"
			      "    eno1: {dhcp4: true}\n"
			      "    rail5:\n"
			      "      match:\n"
			      "        name: \"ens6f0*\"\n"
			      "      mtu: 1500\n"
			      "  bonds:\n"
			      "    bond0:\n"
			      "      renderer: networkd\n"
			      "      interfaces: [ens1f0np0, ens1f1np1]\n";

static void test_netplan_find(void **state)
{
	(void)state;
	struct mtu_netplan_dev d;
	char *err = NULL;
	assert_int_equal(mtu_netplan_find(NETPLAN, "ens6f0np0", &d, &err), 1);
	assert_string_equal(d.type, "ethernets");
	assert_string_equal(d.id, "rail5");
	assert_int_equal(d.mtu, 1500);
	assert_string_equal(d.renderer, "NetworkManager");
	assert_int_equal(d.renderer_level, 0);
	mtu_netplan_dev_free(&d);
	assert_int_equal(mtu_netplan_find(NETPLAN, "bond0", &d, &err), 1);
	assert_string_equal(d.type, "bonds");
	assert_string_equal(d.renderer, "networkd");
	assert_int_equal(d.renderer_level, 2);
	mtu_netplan_dev_free(&d);
	assert_int_equal(mtu_netplan_find(NETPLAN, "ens1f0np0", &d, &err), 0);
	/* set-name renames what match: selects */
	assert_int_equal(mtu_netplan_find("network:\n  ethernets:\n    r:\n      match: {macaddress: "
					  "\"b8:3f:d2:00:00:01\"}\n      set-name: rail0\n",
					  "rail0", &d, &err),
			 1);
	mtu_netplan_dev_free(&d);
	/* a match by MAC alone cannot be told from the files */
	assert_int_equal(mtu_netplan_find("network:\n  ethernets:\n    r:\n      match: {macaddress: "
					  "\"b8:3f:d2:00:00:01\"}\n",
					  "rail0", &d, &err),
			 -EINVAL);
	free(err);
	err = NULL;
	/* two definitions of one interface */
	assert_int_equal(mtu_netplan_find("network:\n  ethernets:\n    rail0: {}\n    r:\n      match: {name: rail*}\n",
					  "rail0", &d, &err),
			 -EINVAL);
	free(err);
	err = NULL;
	assert_int_equal(mtu_netplan_find("network:\n  ethernets: [\n", "rail0", &d, &err), -EINVAL);
	assert_non_null(strstr(err, "does not parse"));
	free(err);
}

static void test_netplan_ours(void **state)
{
	(void)state;
	struct mtu_netplan_dev in[] = {
		{ "ethernets", "rail5", 9000, "NetworkManager", 0 },
		{ "ethernets", "rail6", 9000, "networkd", 0 }, /* another global renderer: on the device */
		{ "bonds", "bond0", 9000, "networkd", 2 },
		{ "vlans", "a b", 4200, NULL, 0 },
	};
	struct strbuf out = STRBUF_INIT;
	mtu_netplan_write(in, 4, "# ours\n", &out);
	assert_string_equal(out.buf, "# ours\nnetwork:\n  version: 2\n  renderer: NetworkManager\n  ethernets:\n"
				     "    rail5:\n      mtu: 9000\n    rail6:\n      renderer: networkd\n      mtu: 9000\n"
				     "  bonds:\n    bond0:\n      renderer: networkd\n      mtu: 9000\n"
				     "  vlans:\n    \"a b\":\n      mtu: 4200\n");
	struct mtu_netplan_dev *v = NULL;
	size_t n = 0;
	char *err = NULL;
	assert_int_equal(mtu_netplan_ours(out.buf, &v, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_string_equal(v[1].id, "rail6");
	assert_string_equal(v[1].renderer, "networkd");
	assert_string_equal(v[3].id, "a b");
	assert_int_equal(v[3].mtu, 4200);
	/* merged as netplan merges: the definition of rail5 is found in ours too */
	struct mtu_netplan_dev d;
	assert_int_equal(mtu_netplan_find(out.buf, "rail5", &d, &err), 1);
	assert_int_equal(d.mtu, 9000);
	mtu_netplan_dev_free(&d);
	for (size_t i = 0; i < n; i++)
		mtu_netplan_dev_free(&v[i]);
	free(v);
	strbuf_release(&out);
	assert_int_equal(mtu_netplan_ours("network:\n  ethernets:\n    x: {dhcp4: true}\n", &v, &n, &err), -EINVAL);
	free(err);
	for (size_t i = 0; i < n; i++)
		mtu_netplan_dev_free(&v[i]);
	free(v);
}

/* The remedy as on the node itself (the live branch, sysroot false) on a
 * copy of h100-roce-broken with a flavour of tests/cli/fix_mtu: what it
 * would run. Planning reads the tree only. */
struct live {
	char *dir;
	struct root *root;
	struct settings set;
	struct site_expect expect;
	struct inventory *inv;
	struct report rep;
	struct fix_plan plan;
};

static const struct fix_remedy *live_plan(struct live *l, const char *flavour)
{
	memset(l, 0, sizeof(*l));
	l->dir = tu_mkdtemp();
	char *base = xasprintf("%s/h100-roce-broken/root/.", getenv("GPUREADY_FIXTURES")),
	     *over = xasprintf("%s/tests/cli/fix_mtu/%s/.", tu_source_dir(), flavour);
	const char *const *cps[] = { (const char *const[]){ "cp", "-a", base, l->dir, NULL },
				    (const char *const[]){ "cp", "-a", over, l->dir, NULL } };
	for (size_t i = 0; i < 2; i++) {
		struct spawn_result sr = { 0 };
		assert_int_equal(spawn_run(cps[i], NULL, 60000, &sr), 0);
		assert_int_equal(sr.exit_code, 0);
		spawn_result_free(&sr);
	}
	free(base);
	free(over);
	char *err = NULL;
	assert_int_equal(root_open(l->dir, &l->root), 0);
	settings_init(&l->set);
	assert_int_equal(settings_load_config(&l->set, NULL, l->root, &err), 0);
	assert_int_equal(inventory_load(l->root, &(struct load_opts){ .parts = INV_FILES }, &l->inv), 0);
	report_init(&l->rep, "test", "host", l->dir);
	l->expect = settings_expect(&l->set);
	struct check_select sel = { .only = &l->set.only, .skip = &l->set.skip };
	assert_int_equal(checks_run(NULL, l->inv, &l->expect, &sel, &l->rep), 0);
	struct fix_ctx c = { .root = l->root, .inv = l->inv, .rep = &l->rep, .expect = &l->expect, .sel = &sel,
			     .plan = &l->plan, .sysroot = false };
	c.taken = calloc(l->rep.n + 1, sizeof(*c.taken));
	c.declined = calloc(l->rep.n + 1, sizeof(*c.declined));
	assert_int_equal(fix_mtu.plan(&c), 0);
	for (size_t i = 0; i < l->rep.n; i++)
		free(c.declined[i]);
	free(c.taken);
	free(c.declined);
	assert_int_equal(l->plan.n, 1);
	return &l->plan.v[0];
}

static void live_done(struct live *l)
{
	fix_plan_free(&l->plan);
	report_free(&l->rep);
	inventory_free(l->inv);
	settings_free(&l->set);
	root_free(l->root);
	tu_rmtree(l->dir);
	free(l->dir);
}

static char *argv_line(const struct fix_cmd *c)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < c->argv.n; i++)
		strbuf_addf(&sb, "%s%s", i ? " " : "", c->argv.v[i]);
	return strbuf_detach(&sb);
}

static void test_live(void **state)
{
	(void)state;
	struct live l;
	/* NetworkManager: nmcli modifies the connection (no keyfile edit), then ip link */
	const struct fix_remedy *r = live_plan(&l, "nm");
	assert_true(r->disruptive);
	assert_int_equal(r->effect, FIX_NOW);
	assert_int_equal(r->n_files, 0);
	assert_int_equal(r->n_cmds, 2);
	char *a = argv_line(&r->cmds[0]), *b = argv_line(&r->cmds[1]);
	assert_string_equal(a, "nmcli connection modify rail5 802-3-ethernet.mtu 9000");
	assert_null(r->cmds[0].sets_path);
	assert_string_equal(b, "ip link set dev ens6f0np0 mtu 9000");
	assert_string_equal(r->cmds[1].sets_path, "/sys/class/net/ens6f0np0/mtu");
	assert_string_equal(r->cmds[1].sets_value, "9000\n");
	assert_int_equal(r->n_targets, 2);
	free(a);
	free(b);
	live_done(&l);
	/* systemd-networkd: the drop-in, networkctl reload when it changed, ip link */
	r = live_plan(&l, "networkd");
	assert_int_equal(r->n_files, 1);
	assert_string_equal(r->files[0].path, "/etc/systemd/network/10-rail5.network.d/90-gpuready-mtu.conf");
	assert_int_equal(r->n_cmds, 2);
	a = argv_line(&r->cmds[0]);
	assert_string_equal(a, "networkctl reload");
	assert_true(r->cmds[0].after_files);
	free(a);
	live_done(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_networkd_name),
		cmocka_unit_test(test_ifupdown),
		cmocka_unit_test(test_keyfile),
		cmocka_unit_test(test_netplan_find),
		cmocka_unit_test(test_netplan_ours),
		cmocka_unit_test(test_live),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
