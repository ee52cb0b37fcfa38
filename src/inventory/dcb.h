/* Data Center Bridging of a netdev (src/inventory/dcb.c): what `dcb pfc
 * show` and `dcb app show` (iproute2) print, the IEEE 802.1Qaz state the
 * driver reports for RTM_GETDCB DCB_CMD_IEEE_GET (Linux
 * include/uapi/linux/dcbnl.h, net/dcb/dcbnl.c dcbnl_ieee_fill). No file
 * holds it: live from the probe (src/probe/dcb.c), in a recorded tree from
 * .gpuready/dcb (docs/snapshot-layout.md). Part of struct net_info. */
#ifndef GPUREADY_DCB_H
#define GPUREADY_DCB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/root.h"
#include "core/strbuf.h"

struct dcb_port {
	char *ifname;
	int err;            /* 0 queried; -EOPNOTSUPP: the netdev has no DCB ops (veth, virtio, a VF); other -errno: the query failed */
	int pfc_en;         /* struct ieee_pfc pfc_en: bit p = PFC on for priority p; -1 not reported */
	int dcbx;           /* DCB_ATTR_DCBX: DCB_CAP_DCBX_* bits; -1 not reported */
	uint64_t dscp_set;  /* bit d: an IEEE APP entry with the DSCP selector (5) maps DSCP d */
	uint8_t dscp_prio[64]; /* its priority, valid where dscp_set has bit d */
};

struct dcb_info {
	struct dcb_port *v;
	size_t n;
	bool known;         /* probed live, or the tree has .gpuready/dcb */
	char *source;       /* "rtnetlink", "/.gpuready/dcb" */
	char *why;          /* !known: why there is nothing to judge */
	unsigned bad;       /* lines of the recorded file that are no record */
};

/* The record of ifname, or NULL. */
const struct dcb_port *dcb_find(const struct dcb_info *di, const char *ifname);
/* The record of ifname, added empty (err 0, pfc_en and dcbx -1) when there
 * is none. */
struct dcb_port *dcb_port_get(struct dcb_info *di, const char *ifname);
/* .gpuready/dcb text (docs/snapshot-layout.md): parsing adds records to di,
 * counting bad lines in di->bad; formatting writes di's records. */
void dcb_parse(const char *text, size_t len, struct dcb_info *di);
void dcb_format(const struct dcb_info *di, struct strbuf *out);
/* Reads .gpuready/dcb under a recorded root; on the live root leaves the
 * state to the live probe (why says so until it runs). 0 or -errno. */
int dcb_load(const struct root *r, struct dcb_info *di);
void dcb_free(struct dcb_info *di);

#endif
