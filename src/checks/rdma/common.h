/* Policy helpers shared by the RDMA and NCCL checks: NIC models, the
 * kernel's RoCE MTU rule, NCCL's device/interface list rules, GID and ToS
 * arithmetic. Pure functions over the inventory; unit-tested directly. */
#ifndef GPUREADY_RDMA_COMMON_H
#define GPUREADY_RDMA_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include "core/cleanup.h"
#include "inventory/inventory.h"

struct check_ctx;

#include "inventory/nvl5.h" /* VENDOR_MELLANOX */

/* IB port states (linux include/rdma/ib_verbs.h enum ib_port_state). */
#define PORT_ACTIVE 4
/* Physical port state LinkUp. */
#define PHYS_LINKUP 5

enum rdma_provider { PROVIDER_NONE, PROVIDER_MLX4, PROVIDER_MLX5 };

/* ConnectX/BlueField model name for a Mellanox PCI device ID, or NULL
 * (pci.ids, also for the virtual functions). */
const char *nic_model_name(uint32_t device);
/* Which RDMA provider module family a Mellanox PCI device needs. */
enum rdma_provider nic_provider(uint32_t device);
/* A model key for grouping devices: NVSWITCH_MGMT_MODEL for an NVSwitch
 * management port (a group of its own: its firmware and rate are not the
 * rails'), else the PCI model name, else hca_type, else the driver-less
 * device name. Never NULL. */
#define NVSWITCH_MGMT_MODEL "NVSwitch management port"
const char *rdma_dev_model(const struct inventory *inv, const struct rdma_dev *d);

/* An NVSwitch management port of an NVLink 5 baseboard (its PCI function's
 * VPD says SW_MNG; T07 in docs/failure-modes.md): nvlsm manages it, it
 * carries no GPU traffic and is no rail, so rail policy (rates, state
 * against the compute fabric) does not apply. NVSWITCH_MGMT_WHY says so. */
bool rdma_dev_nvswitch_mgmt(const struct inventory *inv, const struct rdma_dev *d);
#define NVSWITCH_MGMT_WHY "an NVSwitch management port (VPD SW_MNG), managed by nvlsm and no GPU rail"

bool port_is_roce(const struct rdma_port *p);
bool port_is_ib(const struct rdma_port *p);
bool port_active(const struct rdma_port *p);
/* The port's link_layer could not be read (port_is_roce and port_is_ib are
 * then both false, and neither answer may be assumed). */
bool port_link_unknown(const struct rdma_port *p);
/* For a check that applies to one link layer: false when the port's link
 * layer could not be read, after adding a warning (subject: the port) that
 * names the file and says that `what` cannot be judged (fail closed:
 * such a port is never passed over in silence). */
bool port_link_known(struct check_ctx *c, const struct rdma_dev *d, const struct rdma_port *p, const char *what);
/* "mlx5_0/1" into buf. */
const char *port_label(const struct rdma_dev *d, const struct rdma_port *p, char *buf, size_t size);
/* For the checks that judge RoCE ports: calls judge for each (lbl:
 * port_label, ud: the caller's); a port whose link layer cannot be read
 * gets port_link_known's warning (what); with active_only, a port that is
 * not active gets a skip instead; without any RoCE port, one skip "no RoCE
 * ports (<no_roce>)". */
void roce_ports_each(struct check_ctx *c, bool active_only, const char *what, const char *no_roce,
		     void (*judge)(struct check_ctx *c, const struct rdma_dev *d, const struct rdma_port *p,
				   const char *lbl, void *ud),
		     void *ud);

/* For a RoCE port: calls judge for its netdev (subject lbl), or, when that
 * is a bond (RoCE LAG), for each slave (subject "lbl slave"): QoS state
 * such as ECN and PFC is set on the ports. A netdev or slave that cannot
 * be found is a skip saying that its `what` ("ECN") settings cannot be read. */
void roce_port_netdevs(struct check_ctx *c, const char *lbl, const struct rdma_port *p, const char *what,
		       void (*judge)(struct check_ctx *c, const char *subject, const struct netdev *nd, void *ud),
		       void *ud);

/* The priority a DSCP maps to on a netdev: its DSCP APP entry when the DCB
 * state has one (inv->net.dcb, the NIC's own map), else the default map
 * (DSCP 8n..8n+7 to priority n, mlx5's and mlnx_qos's default). *from_map
 * (may be NULL) says which. */
int roce_dscp_prio(const struct inventory *inv, const char *ifname, int dscp, bool *from_map);

/* The RoCE active MTU the kernel derives from a netdev MTU: netdev MTU
 * minus 96 bytes of RoCE headers, rounded down to an IB MTU, at most 4096
 * (linux include/rdma/ib_addr.h iboe_get_mtu; mlx5 caps at 4096). 0 if
 * below 256. */
int roce_active_mtu(int64_t netdev_mtu);
/* Smallest netdev MTU that gives the RoCE maximum of 4096: 4096 + 96. */
#define ROCE_MTU_FOR_4096 4192

/* GID helpers, on the address the inventory parsed (rdma_gid_parse); a
 * GID whose text did not parse is neither IPv4-mapped nor link-local.
 * gid_ipv4: is it IPv4-mapped (::ffff:a.b.c.d, RFC 4291 2.5.5.2)? If so,
 * writes the dotted IPv4 into buf (buf may be NULL). */
bool gid_ipv4(const struct rdma_gid *g, char *buf, size_t size);
bool gid_link_local(const struct rdma_gid *g); /* fe80::/10 */
bool gid_is_v2(const struct rdma_gid *g);
/* The GID NCCL >= 2.21 and perftest choose by default: RoCE v2 with an
 * IPv4-mapped address, else RoCE v2 global IPv6. NULL if none. */
const struct rdma_gid *port_best_gid(const struct rdma_port *p);
const struct rdma_gid *port_gid(const struct rdma_port *p, unsigned index);

/* The GID index NCCL >= 2.21 selects on a RoCE port when NCCL_IB_GID_INDEX
 * is unset (nccl net_ib ncclIbGetGidIndex/ncclUpdateGidIndex, see
 * docs/nccl-variables.md): starting from index 0, the first GID of the
 * wanted RoCE version (NCCL_IB_ROCE_VERSION_NUM, default 2) in the wanted
 * family (NCCL_IB_ADDR_FAMILY, default AF_INET: IPv4-mapped; AF_INET6:
 * IPv6), inside NCCL_IB_ADDR_RANGE when that is an IPv4 CIDR. When no GID
 * qualifies NCCL stays on index 0. Returns the index; *why gets a note
 * when a setting could not be modelled (an IPv6 range). */
unsigned nccl_auto_gid_index(const struct inventory *inv, const struct rdma_port *p, const char **why);

/* NCCL's list syntax for NCCL_IB_HCA and NCCL_SOCKET_IFNAME (nccl
 * src/misc/utils.cc parseStringList/matchIfList): a leading '^' excludes,
 * then a leading '=' asks for exact names, otherwise entries are name
 * prefixes; "name:port" restricts to a port (-1 = any). */
struct nccl_list_entry {
	char *name;
	int port;
};
struct nccl_list {
	bool exclude;
	bool exact;
	struct nccl_list_entry *v;
	size_t n;
};
void nccl_list_parse(const char *s, struct nccl_list *out);
void nccl_list_free(struct nccl_list *l);
/* Does one entry match this name/port (port -1 = not a port)? */
bool nccl_entry_matches(const struct nccl_list *l, const struct nccl_list_entry *e, const char *name, int port);
/* Would NCCL select this name/port? An empty list selects everything
 * (and so "^" alone excludes everything, as in NCCL). */
bool nccl_list_selects(const struct nccl_list *l, const char *name, int port);

/* NCCL_IB_HCA as NCCL reads it: parses its value into *list and returns
 * the variable, or returns NULL with an empty list when it is unset or
 * computed at login (then NCCL is taken to select every active port). The
 * caller frees the list with nccl_list_free. */
const struct nccl_var *nccl_hca(const struct inventory *inv, struct nccl_list *list);

/* Would NCCL's IB transport use this port (active, IB or Ethernet link
 * layer, selected by NCCL_IB_HCA)? hca may be NULL (unset). */
bool nccl_uses_port(const struct nccl_list *hca, const struct rdma_dev *d, const struct rdma_port *p);

/* ToS byte helpers: DSCP is the top 6 bits, ECN the low 2. */
static inline int tos_dscp(int tos) { return tos >> 2; }
static inline int tos_ecn(int tos) { return tos & 3; }
/* "ToS 104 = DSCP 26 + ECN 0 (Not-ECT)" into buf. */
const char *tos_describe(int tos, char *buf, size_t size);

/* A finding's subject for a whole-node statement about RDMA. */
#define SUBJECT_NODE "rdma"

/* The integer NCCL reads from a variable: NCCL_PARAM parses with
 * strtoll(value, NULL, 0) (nccl src/misc/param.cc ncclLoadParam; see
 * docs/nccl-variables.md §1). So "0x14" is 20, "010" is 8, "08" is 0,
 * "20s" is 20 and "yes" is 0, silently. Returns 0 with *ret, -ENODATA for
 * an empty value and -ERANGE for overflow (NCCL then uses its default).
 * *surprise (may be NULL) is set to a short explanation when NCCL's
 * reading differs from the plain decimal reading a person expects. */
int nccl_param_int(const char *s, long long *ret, const char **surprise);

/* A value a login shell computes ($VAR, $(cmd), `cmd`) cannot be judged
 * from the file: adds a skip saying so (with the variable as subject) and
 * returns true. false for NULL or a literal value. */
bool nccl_skip_computed(struct check_ctx *c, const struct nccl_var *v);

/* Where an operator changes a variable: the file of its source without the
 * line number, or "the job environment". Into buf. */
const char *nccl_var_place(const struct nccl_var *v, char *buf, size_t size);

/* Is this a ConnectX/BlueField function the host itself should drive with
 * RDMA (bound to mlx5_core/mlx4_core, or an unbound physical function)?
 * Functions given to VMs (vfio-pci) and unbound VFs are not. */
bool nic_host_function(const struct pci_dev *p);

/* Does the node have RDMA hardware: an RDMA device, or a ConnectX/BlueField
 * NIC on PCI (which may lack its RDMA driver)? */
bool node_has_rdma_hw(const struct inventory *inv);

/* Of the counters named in `names`, appends "name=value" of the nonzero
 * ones to nonzero and of all present ones to all (either may be NULL);
 * returns how many of the names are present. When meanings is not NULL,
 * "name: what it means" (rdma_counter_meaning) of each nonzero one is
 * appended to it, "; "-separated. When unread is not NULL, "name (reason)"
 * of each named counter that is listed but cannot be read is appended to
 * it, and with all_expected also each named counter that is not there at
 * all (the PMA counters come as one group: one missing is damage). Those
 * are not counted as present. */
size_t counters_summary(const struct counter *cs, size_t n, const char *const *names, size_t n_names,
			struct strbuf *nonzero, struct strbuf *all, struct strbuf *meanings, struct strbuf *unread,
			bool all_expected);

/* The warning for a port whose named counters (counters_summary()'s
 * unread, "what" counters in ports/N/<dir>) cannot all be read, with the
 * nonzero ones that could. */
void counters_unread_warn(struct check_ctx *c, const struct rdma_dev *d, const struct rdma_port *p, const char *what,
			  const char *dir, const struct strbuf *unread, const struct strbuf *nonzero);

/* What nccl_int_var() found. */
enum nccl_int_outcome {
	NCCL_INT_UNSET,   /* unset or empty: NCCL's default applies; *ret untouched */
	NCCL_INT_OK,      /* *ret set, nothing reported */
	NCCL_INT_WARNED,  /* *ret set, and a warn reported: NCCL reads it differently than written */
	NCCL_INT_INVALID, /* a fail reported: outside min..max or unparsable; *ret untouched */
};

/* Reads an integer NCCL variable the way NCCL does (nccl_param_int) and
 * reports what is wrong with it, with the variable as subject: outside
 * min..max or unparsable is a fail saying it is not `what`; a value NCCL
 * reads differently than it is written is a warn. */
enum nccl_int_outcome nccl_int_var(struct check_ctx *c, const struct nccl_var *v, long long min, long long max,
				   const char *what, long long *ret);

/* What the NCCL transport checks (nccl_p2p, nccl_shm, nccl_tuning) know of
 * the GPUs inside this node and what joins them, from PCI (NVSwitches) and,
 * when live, NVML (NVLinks of GPUs without NVSwitch, e.g. bridged cards). */
struct nccl_node {
	size_t gpus;              /* NVIDIA GPUs on PCI (topo_gpus) */
	size_t unidentified;      /* functions that may be GPUs or NVSwitches: class or IDs unreadable */
	size_t nvswitches;        /* NVSwitch functions: vendor 10de, class 0x0680xx (pci.ids) */
	const char *nvswitch_bdf; /* the first of them, NULL none */
	size_t nvlink_gpus;       /* live NVML: GPUs with an NVLink that is up; 0 when not live */
	bool nvlink;              /* NVSwitches on PCI, or NVML saw NVLinks up */
	bool hopper;              /* a GPU of Hopper or later (PCI device 0x2300 and up; A100 is 0x20xx) */
	bool nvls;                /* NVSwitches and Hopper GPUs: NVLink SHARP (NVLS) hardware */
};
void nccl_node_get(const struct inventory *inv, struct nccl_node *n);

/* What NCCL_P2P_DISABLE and NCCL_P2P_LEVEL leave of the P2P transport
 * (NCCL src/graph/paths.cc ncclGetLevel/ncclTopoCheckP2p): NCCL_P2P_DISABLE
 * acts only when strtol() reads 1, and then wins; else NCCL_P2P_LEVEL, an
 * exact path type name or a legacy number (0 LOC ... 4+ SYS). LOC allows no
 * path between two GPUs, so P2P is off. */
enum nccl_p2p {
	NCCL_P2P_DEFAULT,  /* neither acts: NCCL's default level (PXB; NVLink always within it) */
	NCCL_P2P_LEVEL_SET, /* a level above LOC: NVLink paths (NVL) are within it */
	NCCL_P2P_OFF,      /* NCCL_P2P_DISABLE=1 or NCCL_P2P_LEVEL=LOC/0 */
	NCCL_P2P_UNKNOWN,  /* the deciding value is computed at login */
};
/* *by: the variable that decides (NULL for the default). */
enum nccl_p2p nccl_p2p_state(const struct inventory *inv, const struct nccl_var **by);

/* NCCL_SHM_DISABLE as NCCL reads it (src/transport/shm.cc: only the value
 * 1 disables, read with strtoll base 0): the variable when it disables
 * SHM, else NULL (unset, another value, or computed at login). */
const struct nccl_var *nccl_shm_off(const struct inventory *inv);

/* How many active RDMA ports NCCL_IB_HCA leaves NCCL (nccl_uses_port). */
size_t nccl_port_count(const struct inventory *inv);

/* ---- bonds and mlx5 RoCE LAG ----
 * When both physical functions of a dual-port ConnectX card, and nothing
 * else, are the slaves of one bond in mode active-backup, balance-xor or
 * 802.3ad, mlx5 replaces the card's per-port RDMA devices with one,
 * "mlx5_bond_<n>", on the first PF, whose port's GIDs name the bond; the
 * other PF has no RDMA device (Linux commit 7907f23adc18 "net/mlx5:
 * Implement RoCE LAG feature"; drivers/net/ethernet/mellanox/mlx5/core/
 * lag/lag.c: all of the device's ports, only them, tx type active-backup
 * or hash; drivers/net/bonding/bond_main.c bond_lag_tx_type(): balance-xor
 * and 802.3ad are hash; drivers/infiniband/hw/mlx5/main.c names it;
 * NVIDIA, "How to Configure RoCE over LAG (ConnectX-4/ConnectX-5/
 * ConnectX-6)"). */

/* Modes mlx5 RoCE LAG supports: active-backup, balance-xor, 802.3ad. */
bool bond_mode_lag_capable(int mode);

enum bond_shape {
	BOND_NOT_CONNECTX, /* no slave is a ConnectX function */
	BOND_ONE_CARD,     /* the slaves are all the PFs of one ConnectX card, and only them */
	BOND_OTHER,        /* ConnectX ports with others, or of several cards, or some of a card's */
};

/* What the node shows of a bond's RoCE LAG. */
struct bond_lag {
	enum bond_shape shape;
	char card[16];                 /* ONE_CARD: the card's domain:bus:device ("0000:9a:00") */
	size_t n_pfs;                  /* ONE_CARD: its physical functions */
	const struct rdma_dev *lag;    /* the RDMA device on the card's PFs whose port is the bond
					* (netdev or "_bond_" name); NULL none */
	const struct rdma_dev *per_port[4]; /* the other RDMA devices on the card's PFs */
	size_t n_per_port;
};
void bond_lag_describe(const struct inventory *inv, const struct bond *b, struct bond_lag *out);

/* Does the bond carry RDMA: a slave on a ConnectX function, or an RDMA
 * port whose netdev is the bond? */
bool bond_carries_rdma(const struct inventory *inv, const struct bond *b);
/* The bond a port's netdev is (the LAG device's port), or NULL. */
const struct bond *port_bond(const struct inventory *inv, const struct rdma_port *p);
/* The RDMA device whose port netdev is this bond (a LAG device), or NULL. */
const struct rdma_dev *bond_rdma_dev(const struct inventory *inv, const struct bond *b);
/* Is the slave's link up (bonding_slave/mii_status "up")? */
bool bond_slave_up(const struct bond_slave *s);
/* The Mb/s of a netdev, 0 unknown. */
int64_t netdev_mbps(const struct inventory *inv, const char *name);
/* Is this PCI function a port of a RoCE LAG that an RDMA device on another
 * function of its card stands for (so that it has no RDMA device of its
 * own, as mlx5 does to the second PF)? */
bool pf_in_roce_lag(const struct inventory *inv, const struct pci_dev *p);
/* A port that nothing is configured to use: not active, no address (no
 * GID but link-local ones), its netdev no bond's slave, and no entry of
 * NCCL_IB_HCA (hca; NULL or empty when unset) names its device exactly,
 * i.e. not only by prefix. Such a port is fine down: many rail designs use
 * one port of a dual-port card, and NCCL ignores ports that are not
 * ACTIVE (NVIDIA/nccl src/transport/net_ib/init.cc). */
bool port_unused(const struct inventory *inv, const struct nccl_list *hca, const struct rdma_dev *d,
		 const struct rdma_port *p);
/* Calls judge for each bond that carries RDMA (bond_carries_rdma); when
 * there is none, adds one skip saying so (subject SUBJECT_NODE). */
void bonds_with_rdma(struct check_ctx *c, void (*judge)(struct check_ctx *c, const struct bond *b));

/* The view is a container's (inv->view.evidence, src/inventory/container.c):
 * writes "in this Docker container (/.dockerenv exists)" (the runtime and
 * the first evidence) into buf and returns true; on a host returns false
 * with buf "". */
bool container_view(const struct inventory *inv, char *buf, size_t size);
/* "64 MiB", "1.5 GiB", "8 KiB", "512 bytes" into buf. */
const char *bytes_text(uint64_t n, char *buf, size_t size);

#endif
