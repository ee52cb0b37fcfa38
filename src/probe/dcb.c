/* The live DCB state of the RoCE ports' netdevs (probe.h), over rtnetlink.
 *
 * For each netdev one RTM_GETDCB request with DCB_CMD_IEEE_GET and
 * DCB_ATTR_IFNAME, the query iproute2's `dcb pfc show` and `dcb app show`
 * make (Linux include/uapi/linux/dcbnl.h; net/dcb/dcbnl.c: dcb_doit answers
 * -ENODEV for an unknown name and -EOPNOTSUPP for a netdev without DCB
 * operations, a veth, virtio_net or an mlx5 VF; dcbnl_ieee_fill puts the
 * driver's struct ieee_pfc in DCB_ATTR_IEEE_PFC, the kernel's APP table for
 * the netdev in DCB_ATTR_IEEE_APP_TABLE, and DCB_ATTR_DCBX when the driver
 * has getdcbx). A get needs no privilege (only RTM_SETDCB asks for
 * CAP_NET_ADMIN). mlx5 keeps one DSCP APP entry per DSCP while the port
 * trusts DSCP and none while it trusts PCP (drivers/net/ethernet/mellanox/
 * mlx5/core/en_dcbnl.c mlx5e_dcbnl_dscp_app: "No SEL_DSCP entry in non
 * DSCP state"), so the entries say the trust state.
 *
 * The requests run in a child process (core/isolate.h) under the live
 * probes' deadline per request, as the verbs queries do: a request runs
 * the driver's DCB operations under the RTNL lock, which a driver in
 * trouble can hold. The child sends the .gpuready/dcb text of each netdev
 * as it is answered; the parent parses what came, and each netdev the
 * child did not reach gets an error record (ETIMEDOUT for an overrun).
 * Never used under a recorded root. */
#include "probe.h"
#include "core/strbuf.h"

#include <errno.h>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define DCB_REPLY_MAX 65536
#define DCB_IFNAMSIZ 16 /* IFNAMSIZ, include/uapi/linux/if.h: names are at most 15 bytes */

struct dcb_job {
	const char *const *names;
	size_t n;
	double timeout_s;
};

/* Fills p from the attributes of an RTM_GETDCB reply. */
static void reply_parse(struct dcb_port *p, const struct nlmsghdr *h)
{
	int len = (int)h->nlmsg_len - NLMSG_LENGTH(sizeof(struct dcbmsg));
	const struct rtattr *a = (const struct rtattr *)((const char *)NLMSG_DATA(h) + NLMSG_ALIGN(sizeof(struct dcbmsg)));
	for (; len > 0 && RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		unsigned type = a->rta_type & NLA_TYPE_MASK;
		if (type == DCB_ATTR_DCBX && RTA_PAYLOAD(a) >= 1)
			p->dcbx = *(const unsigned char *)RTA_DATA(a);
		if (type != DCB_ATTR_IEEE)
			continue;
		int l2 = (int)RTA_PAYLOAD(a);
		for (const struct rtattr *b = RTA_DATA(a); RTA_OK(b, l2); b = RTA_NEXT(b, l2)) {
			unsigned t2 = b->rta_type & NLA_TYPE_MASK;
			if (t2 == DCB_ATTR_IEEE_PFC && RTA_PAYLOAD(b) >= sizeof(struct ieee_pfc)) {
				struct ieee_pfc pfc;
				memcpy(&pfc, RTA_DATA(b), sizeof(pfc));
				p->pfc_en = pfc.pfc_en;
			}
			if (t2 != DCB_ATTR_IEEE_APP_TABLE)
				continue;
			int l3 = (int)RTA_PAYLOAD(b);
			for (const struct rtattr *c = RTA_DATA(b); RTA_OK(c, l3); c = RTA_NEXT(c, l3)) {
				struct dcb_app app;
				if ((c->rta_type & NLA_TYPE_MASK) != DCB_ATTR_IEEE_APP || RTA_PAYLOAD(c) < sizeof(app))
					continue;
				memcpy(&app, RTA_DATA(c), sizeof(app));
				if (app.selector == IEEE_8021QAZ_APP_SEL_DSCP && app.protocol < 64 && app.priority < 8) {
					p->dscp_set |= UINT64_C(1) << app.protocol;
					p->dscp_prio[app.protocol] = app.priority;
				}
			}
		}
	}
}

/* One request on fd: fills p (err set on failure). */
static void query(int fd, const char *ifname, unsigned seq, double timeout_s, struct dcb_port *p)
{
	struct {
		struct nlmsghdr h;
		struct dcbmsg d;
		char attrs[RTA_SPACE(DCB_IFNAMSIZ)];
	} req;
	memset(&req, 0, sizeof(req));
	size_t nl = strlen(ifname) + 1;
	struct rtattr *a = (struct rtattr *)((char *)&req + NLMSG_LENGTH(sizeof(struct dcbmsg)));
	a->rta_type = DCB_ATTR_IFNAME;
	a->rta_len = (unsigned short)RTA_LENGTH(nl);
	memcpy(RTA_DATA(a), ifname, nl);
	req.h.nlmsg_len = NLMSG_LENGTH(sizeof(struct dcbmsg)) + RTA_ALIGN(a->rta_len);
	req.h.nlmsg_type = RTM_GETDCB;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	req.h.nlmsg_seq = seq;
	req.d.dcb_family = AF_UNSPEC;
	req.d.cmd = DCB_CMD_IEEE_GET;
	if (send(fd, &req, req.h.nlmsg_len, 0) < 0) {
		p->err = -errno;
		return;
	}
	char *buf = xcalloc(1, DCB_REPLY_MAX);
	p->err = -ETIMEDOUT;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int r = poll(&pfd, 1, (int)(timeout_s * 1000));
		if (r <= 0) {
			p->err = r == 0 ? -ETIMEDOUT : -errno;
			break;
		}
		ssize_t n = recv(fd, buf, DCB_REPLY_MAX, 0);
		if (n < 0) {
			p->err = -errno;
			break;
		}
		bool done = false;
		/* NLMSG_OK/NLMSG_NEXT (netlink(3)) spelled out with sizes: the
		 * macros compare the u32 nlmsg_len with an int */
		for (size_t off = 0; off + sizeof(struct nlmsghdr) <= (size_t)n;) {
			const struct nlmsghdr *h = (const struct nlmsghdr *)(buf + off);
			if (h->nlmsg_len < sizeof(*h) || h->nlmsg_len > (size_t)n - off)
				break;
			off += NLMSG_ALIGN(h->nlmsg_len);
			if (h->nlmsg_seq != seq)
				continue;
			done = true;
			if (h->nlmsg_type == NLMSG_ERROR && h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
				const struct nlmsgerr *e = NLMSG_DATA(h);
				p->err = e->error < 0 ? e->error : -EIO;
			} else if (h->nlmsg_type == RTM_GETDCB) {
				p->err = 0;
				reply_parse(p, h);
			} else {
				p->err = -EPROTO;
			}
			break;
		}
		if (done)
			break;
	}
	free(buf);
}

/* In the child: one record text per netdev, sent as it is answered. */
static void dcb_child(struct isolate_ctx *t, void *arg)
{
	const struct dcb_job *job = arg;
	isolate_step(t, "socket(AF_NETLINK, NETLINK_ROUTE)");
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int err = fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
	for (size_t i = 0; i < job->n; i++) {
		struct dcb_info one = { 0 };
		struct dcb_port *p = dcb_port_get(&one, job->names[i]);
		struct strbuf sb = STRBUF_INIT;
		isolate_step(t, "RTM_GETDCB DCB_CMD_IEEE_GET %s", job->names[i]);
		if (err < 0 || strlen(job->names[i]) >= DCB_IFNAMSIZ)
			p->err = err < 0 ? err : -EINVAL;
		else
			query(fd, job->names[i], (unsigned)i + 1, job->timeout_s, p);
		dcb_format(&one, &sb);
		(void)isolate_send(t, sb.buf, sb.len);
		strbuf_release(&sb);
		dcb_free(&one);
	}
	if (fd >= 0)
		close(fd);
}

void dcb_probe_names(const char *const *names, size_t n, double timeout_s, struct dcb_info *di)
{
	struct dcb_job job = { .names = names, .n = n, .timeout_s = timeout_s };
	struct isolate_result res;
	free(di->why);
	di->why = NULL;
	if (n == 0) { /* no RoCE netdev: nothing to ask, no child */
		free(di->source);
		di->source = xstrdup("rtnetlink");
		di->known = true;
		return;
	}
	int e = isolate_run(dcb_child, &job, timeout_s + 1, n * 512 + 4096, &res);
	if (e < 0) {
		di->why = xasprintf("the DCB probe could not start: %s", strerror(-e));
		return;
	}
	dcb_parse(res.out.buf, res.out.len, di);
	if (res.end != ISOLATE_DONE) {
		char why[ISOLATE_STEP_MAX + 160];
		probe_end_reason(&res, "rtnetlink DCB", timeout_s, why, sizeof(why));
		for (size_t i = 0; i < n; i++)
			if (!dcb_find(di, names[i]))
				dcb_port_get(di, names[i])->err = res.end == ISOLATE_TIMEOUT ? -ETIMEDOUT : -EIO;
		free(di->source);
		di->source = xasprintf("rtnetlink (%s)", why);
	} else {
		free(di->source);
		di->source = xstrdup("rtnetlink");
	}
	di->known = true;
	isolate_result_free(&res);
}

/* The netdevs whose DCB state RoCE uses: each RoCE port's netdev, or, for
 * a RoCE LAG bond, its slaves (PFC and trust are set on the ports). */
static void roce_netdevs(const struct inventory *inv, struct strv *out)
{
	const struct rdma_dev *d;
	const struct rdma_port *p;
	for_each_rdma_port(&inv->rdma, d, p) {
		if (!p->link_layer || strcmp(p->link_layer, "Ethernet") || !p->netdev)
			continue;
		const struct bond *b = bond_find(&inv->net, p->netdev);
		for (size_t i = 0; b && i < b->n_slaves; i++)
			if (!strv_contains(out, b->slaves[i].name))
				strv_add(out, b->slaves[i].name);
		if (!b && !strv_contains(out, p->netdev))
			strv_add(out, p->netdev);
	}
}

int dcb_live(struct inventory *inv)
{
	struct strv names = STRV_INIT;
	roce_netdevs(inv, &names);
	dcb_free(&inv->net.dcb);
	dcb_probe_names((const char *const *)names.v, names.n, probe_call_timeout(), &inv->net.dcb);
	strv_free(&names);
	return 0;
}
