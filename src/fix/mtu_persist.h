/* The persistent half of the MTU remedy: which network manager configures
 * an interface, found from the files of the root (mtu_persist.c), and the
 * change of its configuration (remedy_mtu.c). */
#ifndef GPUREADY_FIX_MTU_PERSIST_H
#define GPUREADY_FIX_MTU_PERSIST_H

#include "fix/fix.h"
#include "fix/mtu.h"

#define MTU_NETPLAN_FILE "/etc/netplan/90-gpuready.yaml"
#define MTU_NETWORKD_DROPIN "90-gpuready-mtu.conf"

enum mtu_manager {
	MTU_NETPLAN,
	MTU_NETWORKD,
	MTU_NM,
	MTU_IFUPDOWN,
};

/* What configures an interface, and where. */
struct mtu_claim {
	enum mtu_manager kind;
	char *path;     /* netplan: the operator's file; networkd: the .network file;
			 * NetworkManager: the keyfile; ifupdown: the file with the stanza */
	char *conn;     /* NetworkManager: the connection's id */
	struct mtu_netplan_dev np; /* netplan: the definition (type, ID, renderer) */
};

void mtu_claim_free(struct mtu_claim *m);
const char *mtu_manager_name(enum mtu_manager k);

/* Finds the one network manager that configures iface. 1 found (*out),
 * 0 with *why when none or several do, a file cannot be parsed, or the
 * configuration also configures another interface that is neither at mtu
 * nor in fixing (the interfaces this plan sets to mtu): the remedy
 * declines. */
int mtu_detect(const struct fix_ctx *c, const char *iface, int64_t mtu, const struct strv *fixing,
	       struct mtu_claim *out, char **why);

#endif
