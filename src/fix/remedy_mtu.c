/* rdma.mtu: the MTU of the RoCE netdevs raised to the site's --mtu, else
 * 9000 (the check's hint: from 4192 bytes the RoCE active MTU is 4096,
 * Linux include/rdma/ib_addr.h iboe_get_mtu), now with
 * `ip link set dev IFACE mtu N` (ip-link(8); under a sysroot the value goes
 * into /sys/class/net/IFACE/mtu of the tree) and persistently in the
 * configuration of the network manager that configures the interface
 * (mtu_persist.c finds it from the files):
 *   - netplan: /etc/netplan/90-gpuready.yaml with `mtu:` under the same
 *     device type, ID and renderer as the operator's definition (netplan's
 *     YAML reference: files are merged in the order of their names, a later
 *     file's scalar wins); `netplan apply` is not run, it reconfigures
 *     every interface;
 *   - systemd-networkd: the drop-in FILE.network.d/90-gpuready-mtu.conf with
 *     [Link] MTUBytes=N (systemd.network(5)), then `networkctl reload`;
 *   - NetworkManager: `nmcli connection modify CONN 802-3-ethernet.mtu N`
 *     (nmcli(1), nm-settings-nmcli(5)); under a sysroot the same change
 *     made in the keyfile ([ethernet] mtu=N, nm-settings-keyfile(5)). A
 *     bond connection takes its MTU from the same setting (NetworkManager
 *     src/core/devices/nm-device-bond.c: get_configured_mtu is
 *     nm_device_get_configured_mtu_for_wired);
 *   - ifupdown: the `mtu N` option of the interface's stanza
 *     (interfaces(5)).
 * A bond's MTU is set on the bond: the kernel sets it on every slave
 * (Linux drivers/net/bonding/bond_main.c, bond_change_mtu), so a RoCE port
 * whose netdev is a bond's slave is fixed through its bond. InfiniBand
 * ports and MTUs above the target are declined. Changing an MTU briefly
 * disrupts traffic on the link: the remedy is disruptive. */
#include "fix/mtu_persist.h"

#include "checks/expect.h"
#include "checks/rdma/common.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/root.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* RoCE bring-up's usual jumbo MTU (the check's hint). */
#define MTU_ROCE_DEFAULT 9000

/* One interface whose MTU the remedy sets, and the findings it answers. */
struct iface {
	char *name;
	int64_t mtu;
	const struct finding *fs[16];
	size_t n_fs;
	char *why;           /* declined */
};

struct ifaces {
	struct iface v[64];
	size_t n;
};

static struct iface *iface_get(struct ifaces *l, const char *name, int64_t mtu)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return &l->v[i];
	if (l->n == sizeof(l->v) / sizeof(*l->v))
		return NULL;
	struct iface *f = &l->v[l->n++];
	*f = (struct iface){ .name = xstrdup(name), .mtu = mtu };
	return f;
}

static void iface_finding(struct iface *i, const struct finding *f)
{
	if (f && i->n_fs < sizeof(i->fs) / sizeof(*i->fs))
		i->fs[i->n_fs++] = f;
}

/* The interface whose MTU to set for a RoCE port's netdev: itself, or the
 * bond it is a slave of; NULL with *why. */
static const struct netdev *settable(const struct fix_ctx *c, const struct netdev *n, char **why)
{
	if (!n->master)
		return n;
	const struct bond *b = bond_find(&c->inv->net, n->master);
	const struct netdev *m = b ? net_find(&c->inv->net, n->master) : NULL;
	if (!m || m->mtu <= 0) {
		*why = xasprintf("%s is enslaved to %s, which is not a bond whose MTU could be read", n->name,
				 n->master);
		return NULL;
	}
	return m;
}

/* The RoCE port a per-port finding names (its subject is port_label()). */
static const struct rdma_port *port_of(const struct fix_ctx *c, const char *subject)
{
	const struct rdma_dev *d;
	const struct rdma_port *p;
	char lbl[96];
	for_each_rdma_port(&c->inv->rdma, d, p)
		if (!strcmp(port_label(d, p, lbl, sizeof(lbl)), subject))
			return p;
	return NULL;
}

/* Adds the interface of a RoCE port's netdev below target; a finding that
 * cannot be answered is declined. */
static void want_port(struct fix_ctx *c, struct ifaces *l, const struct rdma_port *p, int64_t target,
		      const struct finding *f)
{
	const struct netdev *n = p && p->netdev ? net_find(&c->inv->net, p->netdev) : NULL;
	_cleanup_free_ char *why = NULL;
	if (p && port_is_ib(p)) {
		if (f)
			fix_decline(c, f, "the InfiniBand MTU is the subnet manager's partition MTU, not a setting of "
					  "this node");
		return;
	}
	if (!n || n->mtu <= 0) {
		if (f)
			fix_decline(c, f, "the port's netdev or its MTU is unknown");
		return;
	}
	const struct netdev *s = settable(c, n, &why);
	if (!s) {
		if (f)
			fix_decline(c, f, "%s", why);
		return;
	}
	if (s->mtu >= target) {
		if (f)
			fix_decline(c, f, "%s has MTU %lld, not below the target %lld: lowering an MTU is the "
					  "operator's choice",
				    s->name, (long long)s->mtu, (long long)target);
		return;
	}
	struct iface *i = iface_get(l, s->name, s->mtu);
	if (!i) {
		if (f)
			fix_decline(c, f, "too many interfaces for one plan");
		return;
	}
	iface_finding(i, f);
}

/* The node-wide "different MTUs" finding: every active RoCE netdev must
 * end at the target. */
static void want_all(struct fix_ctx *c, struct ifaces *l, int64_t target, const struct finding *f)
{
	const struct rdma_dev *d;
	const struct rdma_port *p;
	for_each_rdma_port(&c->inv->rdma, d, p) {
		if (!port_is_roce(p) || !port_active(p))
			continue;
		const struct netdev *n = p->netdev ? net_find(&c->inv->net, p->netdev) : NULL;
		_cleanup_free_ char *why = NULL;
		const struct netdev *s = n && n->mtu > 0 ? settable(c, n, &why) : NULL;
		if (!s) {
			fix_decline(c, f, "%s", why ? why : "a RoCE port's netdev MTU is unknown");
			return;
		}
		if (s->mtu > target) {
			fix_decline(c, f, "%s has MTU %lld, above the target %lld: choose one MTU for every RDMA "
					  "interface",
				    s->name, (long long)s->mtu, (long long)target);
			return;
		}
	}
	for_each_rdma_port(&c->inv->rdma, d, p)
		if (port_is_roce(p) && port_active(p))
			want_port(c, l, p, target, NULL);
	for (size_t i = 0; i < l->n; i++)
		iface_finding(&l->v[i], f);
}

/* The file of the remedy at path: the one already added, or a new one
 * whose new content starts as its old one. NULL with *err. */
static struct fix_file *file_at(struct fix_ctx *c, struct fix_remedy *r, const char *path, mode_t mode, int *err)
{
	for (size_t i = 0; i < r->n_files; i++)
		if (!strcmp(r->files[i].path, path))
			return &r->files[i];
	struct fix_file *f = fix_file_add(c, r, path, mode, err);
	if (f && f->existed)
		strbuf_add(&f->new, f->old.buf, f->old.len);
	return f;
}

static void replace_new(struct fix_file *f, struct strbuf *next)
{
	strbuf_reset(&f->new);
	strbuf_add(&f->new, next->buf, next->len);
}

/* netplan: our file with the definition's mtu. 0, 1 declined (*why), -errno. */
static int persist_netplan(struct fix_ctx *c, struct fix_remedy *r, const struct mtu_claim *m, int64_t mtu,
			   char **why)
{
	int err = 0;
	struct fix_file *f = file_at(c, r, MTU_NETPLAN_FILE, 0600, &err);
	if (!f)
		return err;
	_cleanup_strbuf_ struct strbuf head = STRBUF_INIT, next = STRBUF_INIT;
	fix_header(&head, "# ", "rdma.mtu");
	struct mtu_netplan_dev *v = NULL;
	size_t n = 0;
	_cleanup_free_ char *perr = NULL;
	if (f->new.len && (strncmp(f->new.buf, head.buf, strcspn(head.buf, "\n")) ||
			   mtu_netplan_ours(f->new.buf, &v, &n, &perr) < 0)) {
		*why = xasprintf("%s exists and is not what gpuready writes%s%s", MTU_NETPLAN_FILE, perr ? ": " : "",
				 perr ? perr : "");
		for (size_t i = 0; i < n; i++)
			mtu_netplan_dev_free(&v[i]);
		free(v);
		return 1;
	}
	size_t k = 0;
	while (k < n && (strcmp(v[k].type, m->np.type) || strcmp(v[k].id, m->np.id)))
		k++;
	if (k == n) {
		v = xreallocarray(v, n + 1, sizeof(*v));
		memset(&v[n++], 0, sizeof(*v));
	}
	mtu_netplan_dev_free(&v[k]);
	v[k] = (struct mtu_netplan_dev){ .type = xstrdup(m->np.type), .id = xstrdup(m->np.id), .mtu = mtu,
					 .renderer = m->np.renderer ? xstrdup(m->np.renderer) : NULL,
					 .renderer_level = m->np.renderer_level };
	mtu_netplan_write(v, n, head.buf, &next);
	replace_new(f, &next);
	for (size_t i = 0; i < n; i++)
		mtu_netplan_dev_free(&v[i]);
	free(v);
	return 0;
}

/* systemd-networkd: a drop-in of the .network file, unless a drop-in read
 * after ours sets MTUBytes= otherwise. */
static int persist_networkd(struct fix_ctx *c, struct fix_remedy *r, const struct mtu_claim *m, int64_t mtu,
			    char **why)
{
	const char *base = strrchr(m->path, '/') + 1;
	_cleanup_free_ char *dir = xasprintf("/etc/systemd/network/%s.d", base);
	_cleanup_strv_ struct strv names = { 0 };
	if (root_list(c->root, dir, &names) == 0)
		for (size_t i = 0; i < names.n; i++) {
			_cleanup_free_ char *p = xasprintf("%s/%s", dir, names.v[i]);
			_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
			if (strcmp(names.v[i], MTU_NETWORKD_DROPIN) <= 0 || !str_endswith(names.v[i], ".conf") ||
			    root_read(c->root, p, ROOT_READ_MAX, &sb) < 0)
				continue;
			int64_t v = mtu_networkd_mtu(sb.buf);
			if (v && v != mtu) {
				*why = xasprintf("%s sets MTUBytes=%lld and is read after %s: change it there", p,
						 (long long)v, MTU_NETWORKD_DROPIN);
				return 1;
			}
		}
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, MTU_NETWORKD_DROPIN);
	int err = 0;
	struct fix_file *f = file_at(c, r, path, 0644, &err);
	if (!f)
		return err;
	strbuf_reset(&f->new);
	fix_header(&f->new, "# ", "rdma.mtu");
	strbuf_addf(&f->new, "[Link]\nMTUBytes=%lld\n", (long long)mtu);
	bool have = false;
	for (size_t i = 0; i < r->n_cmds; i++)
		have |= !strcmp(r->cmds[i].argv.v[0], "networkctl");
	if (!have)
		fix_cmd_add(r, (const char *const[]){ "networkctl", "reload", NULL })->after_files = true;
	return 0;
}

/* NetworkManager: live, nmcli modifies the connection (it writes the
 * keyfile); under a sysroot the keyfile is edited the same way. */
static int persist_nm(struct fix_ctx *c, struct fix_remedy *r, const struct mtu_claim *m, int64_t mtu)
{
	int err = 0;
	if (c->sysroot) {
		struct fix_file *f = file_at(c, r, m->path, 0600, &err);
		if (!f)
			return err;
		_cleanup_strbuf_ struct strbuf next = STRBUF_INIT;
		mtu_keyfile_edit(f->new.buf, mtu, &next);
		replace_new(f, &next);
		return 0;
	}
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	if ((err = root_read(c->root, m->path, ROOT_READ_MAX, &sb)) < 0)
		return err;
	_cleanup_free_ char *cur = mtu_keyfile_get(sb.buf, "ethernet", "mtu");
	if (!cur)
		cur = mtu_keyfile_get(sb.buf, "802-3-ethernet", "mtu");
	char want[24];
	snprintf(want, sizeof(want), "%lld", (long long)mtu);
	if (!cur || strcmp(cur, want))
		fix_cmd_add(r, (const char *const[]){ "nmcli", "connection", "modify", m->conn, "802-3-ethernet.mtu",
						      want, NULL });
	return 0;
}

static int persist_ifupdown(struct fix_ctx *c, struct fix_remedy *r, const struct mtu_claim *m, const char *iface,
			    int64_t mtu, char **why)
{
	_cleanup_strbuf_ struct strbuf cur = STRBUF_INIT, next = STRBUF_INIT;
	int err = root_read(c->root, m->path, ROOT_READ_MAX, &cur);
	if (err < 0)
		return err;
	if (mtu_ifupdown_edit(cur.buf, iface, mtu, &next) == -EINVAL) {
		*why = xasprintf("%s has lines continued with a backslash: set `mtu %lld` in the stanza of %s there",
				 m->path, (long long)mtu, iface);
		return 1;
	}
	strbuf_reset(&next);
	struct fix_file *f = file_at(c, r, m->path, 0644, &err);
	if (!f)
		return err;
	if (mtu_ifupdown_edit(f->new.buf, iface, mtu, &next) < 0)
		return -EIO; /* found by mtu_detect: a bug */
	replace_new(f, &next);
	return 0;
}

/* The persistent change for one interface; 1 declined (*why). */
static int persist(struct fix_ctx *c, struct fix_remedy *r, const struct mtu_claim *m, const char *iface,
		   int64_t mtu, char **why)
{
	switch (m->kind) {
	case MTU_NETPLAN:
		return persist_netplan(c, r, m, mtu, why);
	case MTU_NETWORKD:
		return persist_networkd(c, r, m, mtu, why);
	case MTU_NM:
		return persist_nm(c, r, m, mtu);
	case MTU_IFUPDOWN:
		return persist_ifupdown(c, r, m, iface, mtu, why);
	}
	return -EINVAL;
}

/* The apply-now command; under a sysroot a bond's slaves get the MTU in
 * the tree too, as the kernel gives it to them. */
static int set_now(struct fix_ctx *c, struct fix_remedy *r, const char *iface, int64_t mtu)
{
	char want[24];
	snprintf(want, sizeof(want), "%lld", (long long)mtu);
	_cleanup_free_ char *sys = xasprintf("/sys/class/net/%s/mtu", iface);
	struct fix_cmd *cmd = fix_cmd_add(r, (const char *const[]){ "ip", "link", "set", "dev", iface, "mtu", want, NULL });
	fix_cmd_sets(cmd, sys, "%s\n", want);
	const struct bond *b = c->sysroot ? bond_find(&c->inv->net, iface) : NULL;
	for (size_t i = 0; b && i < b->n_slaves; i++) {
		_cleanup_free_ char *p = xasprintf("/sys/class/net/%s/mtu", b->slaves[i].name);
		int err = 0;
		struct fix_file *f = fix_file_add(c, r, p, 0644, &err);
		if (!f)
			return err;
		f->state = true;
		strbuf_addf(&f->new, "%s\n", want);
	}
	return 0;
}

/* Plans one interface; a decline goes to each of its findings. */
static int plan_iface(struct fix_ctx *c, struct fix_remedy *r, struct iface *i, int64_t mtu,
		      const struct strv *fixing)
{
	struct mtu_claim m = { 0 };
	char *why = NULL;
	int ret = mtu_detect(c, i->name, mtu, fixing, &m, &why);
	if (ret == 1) {
		ret = persist(c, r, &m, i->name, mtu, &why);
		if (ret == 0) {
			ret = set_now(c, r, i->name, mtu);
			if (m.kind == MTU_NETPLAN)
				fix_note(r, "%s: netplan's own state follows %s after `netplan apply` or a reboot; "
					    "`netplan apply` is not run here because it reconfigures every interface",
					 i->name, MTU_NETPLAN_FILE);
		}
		mtu_claim_free(&m);
	}
	if (why) {
		i->why = why;
		for (size_t k = 0; k < i->n_fs; k++)
			fix_decline(c, i->fs[k], "%s", why);
	}
	return ret < 0 ? ret : 0;
}

static int plan(struct fix_ctx *c)
{
	int64_t target = c->expect->mtu > 0 ? c->expect->mtu : MTU_ROCE_DEFAULT;
	struct ifaces l = { .n = 0 };
	const struct finding *node = NULL;
	for (const struct finding *f = fix_next(c, "rdma.mtu", NULL); f; f = fix_next(c, "rdma.mtu", f)) {
		if (!strcmp(f->subject, SUBJECT_NODE))
			node = f;
		else
			want_port(c, &l, port_of(c, f->subject), target, f);
	}
	if (node)
		want_all(c, &l, target, node);
	if (!l.n)
		return 0;
	struct fix_remedy *r = fix_remedy_new(c, "mtu", FIX_NOW, "set the MTU of the RDMA interfaces to %lld",
					      (long long)target);
	r->disruptive = true;
	int ret = 0;
	bool declined = false;
	_cleanup_strv_ struct strv fixing = { 0 };
	for (size_t i = 0; i < l.n; i++)
		strv_add(&fixing, l.v[i].name);
	for (size_t i = 0; i < l.n && !ret; i++) {
		ret = plan_iface(c, r, &l.v[i], target, &fixing);
		declined |= l.v[i].why != NULL;
	}
	_cleanup_strbuf_ struct strbuf names = STRBUF_INIT;
	for (size_t i = 0; i < l.n; i++) {
		for (size_t k = 0; !ret && !l.v[i].why && k < l.v[i].n_fs; k++)
			if (l.v[i].fs[k] != node || !declined)
				fix_answer(c, r, l.v[i].fs[k]);
		if (!l.v[i].why)
			strbuf_addf(&names, "%s%s", names.len ? ", " : "", l.v[i].name);
		free(l.v[i].name);
		free(l.v[i].why);
	}
	if (names.len) {
		free(r->title);
		r->title = xasprintf("set the MTU of %s to %lld (now and persistently)", names.buf, (long long)target);
		fix_note(r, "the switch ports of these links must allow frames of %lld bytes too", (long long)target);
	}
	return ret;
}

const struct fix_def fix_mtu = {
	.id = "mtu",
	.checks = (const char *const[]){ "rdma.mtu", NULL },
	.plan = plan,
};
