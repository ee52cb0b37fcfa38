/* What the machine has, read once from a root into typed structs.
 *
 * Data flows one way: root -> inventory -> checks -> report. The inventory
 * readers hold all parsing; checks only apply policy to these structs. Every
 * field that could not be read keeps the reason as a negative errno in a
 * matching *_err field (0 = read fine), so a check can say "skip: missing"
 * instead of guessing. Strings are owned by the inventory.
 *
 * Live-only facts (verbs port queries, the process environment, resource
 * limits) are filled in only when the root is the running system; for a
 * recorded tree they come from the tree's `.gpuready/` files or stay unset
 * with their reason. */
#ifndef GPUREADY_INVENTORY_H
#define GPUREADY_INVENTORY_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/root.h"
#include "core/strbuf.h"
#include "core/strv.h"
#include "inventory/dcb.h"
#include "inventory/gpu_live.h"
#include "inventory/xid.h"

/* ---- kernel and host ---- */

struct kernel_info {
	char *release;   /* "6.8.0-52-generic"; NULL if unknown */
	char *cmdline;   /* /proc/cmdline */
	char *hostname;  /* live gethostname, else proc/etc files, else NULL */
	char *arch;      /* uname machine, or .gpuready/meta arch */
	char *os_id, *os_id_like; int os_err; /* os-release(5) ID, ID_LIKE (NULL absent); reading it */
	double uptime;   /* seconds since boot, the first number of /proc/uptime (proc(5)); valid when uptime_err is 0 */
	int uptime_err;  /* reading or parsing it */
};

/* Who the recorded or live user is, and where NCCL finds ~/.nccl.conf. */
struct user_info {
	char *home;
	char *name;
	long uid;        /* -1 if unknown */
};

/* ---- kernel modules ---- */

enum module_state {
	MODULE_UNKNOWN,  /* no source could tell */
	MODULE_ABSENT,
	MODULE_LOADED,   /* /proc/modules, /sys/module/<m>/initstate, or a bound driver */
	MODULE_BUILTIN,  /* modules.builtin, or /sys/module/<m> without initstate */
};

struct modules_info {
	struct strv loaded;        /* from /proc/modules (state Live/Loading) */
	struct strv sysmodule;     /* /sys/module entries with initstate */
	struct strv sysmodule_builtin; /* /sys/module entries without initstate */
	struct strv builtin;       /* names from modules.builtin */
	struct strv bound_drivers; /* PCI driver names bound to some device */
	struct strv installed;     /* names in /lib/modules/<release>/modules.dep (depmod(8)) */
	int proc_err, sys_err, builtin_err, dep_err; /* reading /proc/modules, /sys/module, modules.builtin, .dep */
};

enum module_state modules_state(const struct modules_info *m, const char *name);
/* Where the answer came from, for messages: "/proc/modules", ... */
const char *modules_source(const struct modules_info *m, const char *name);

/* ---- lookup by name (name_index.c) ----
 * The loaders index the PCI functions by BDF and the netdevs and RDMA
 * devices by name once they are read, so pci_find(), net_find() and
 * rdma_find() are binary searches: a node with 2,000 RDMA devices is asked
 * for them by name hundreds of thousands of times (perf/many-rdma.sh).
 * Equal names answer the first in array order, as a scan does. An index
 * answers only for the array it was built over (`of` items); an inventory
 * assembled by hand (unit tests) has none and is scanned. */

/* Where an item's name is: a char * at `off` in items of `size` bytes;
 * fold compares ignoring ASCII case (BDFs). */
struct name_key {
	size_t size, off;
	bool fold;
};

struct name_slot {
	const char *name;   /* borrowed from the item */
	size_t pos;         /* the item's position in its array */
	bool fold;
};

struct name_index {
	struct name_slot *v; /* sorted by name, then position; items without a name left out */
	size_t n;
	size_t of;          /* items it was built over */
	bool built;
};

/* Indexes items[0..n); ix owns its slots (name_index_free), the names stay
 * the items'. Rebuild after the array changes. */
void name_index_build(struct name_index *ix, const struct name_key *k, const void *items, size_t n);
/* Position of the first item named `name`, or n when none is (or name is
 * NULL): through ix when it was built over these n items, else a scan. */
size_t name_lookup(const struct name_index *ix, const struct name_key *k, const void *items, size_t n,
		   const char *name);
void name_index_free(struct name_index *ix);

/* ---- PCI ---- */

struct pci_dev {
	char *bdf;          /* "0000:17:00.0" */
	char *path;         /* canonical in-root sysfs path of the function */
	uint32_t vendor, device, subsys_vendor, subsys_device, class_code;
	int ids_err;        /* vendor/device unreadable */
	int class_err;
	char *driver;       /* bound driver name, NULL if none */
	int numa_node;      /* -1 unknown */
	char *local_cpulist; /* "0-63,128-191"; NULL unknown */
	bool is_vf;         /* an SR-IOV virtual function (has a physfn link) */
	double cur_speed, max_speed; /* GT/s; 0 unknown */
	int cur_width, max_width;    /* lanes; 0 unknown */
	char *root_bus;     /* "pci0000:00": the host bridge the path starts at */
	struct strv upstream; /* BDFs of the bridges above, nearest last */
	uint64_t bar_size[7]; /* from `resource`: BAR0-5 and the ROM; 0 unused */
	int resource_err;
	int iommu_group;    /* -1 none */
	char *iommu_type;   /* the group's type ("identity", "DMA-FQ"...); NULL */
	/* bridges only: the ACS capability from `config` (Linux include/uapi/linux/pci_regs.h) */
	int config_len;     /* bytes of config space read; 0 none */
	int acs_off;        /* offset of the ACS capability; 0 none */
	uint16_t acs_cap, acs_ctrl;
	int vpd_err; bool nvswitch_mgmt; /* Mellanox PFs: reading `vpd`; it says SW_MNG (inventory/nvl5.h) */
};

struct pci_info {
	struct pci_dev *v;
	size_t n;
	int err;            /* listing /sys/bus/pci/devices */
	bool iommu_groups;  /* /sys/kernel/iommu_groups has groups */
	struct strv iommu_units; /* /sys/class/iommu entries (dmar0, ivhd0, ...) */
	struct name_index by_bdf;
};

/* PCI class helpers (pci.ids, class codes). */
#define VENDOR_NVIDIA 0x10de
bool pci_is_bridge(const struct pci_dev *d);     /* class 0x0604xx */
bool pci_is_nvidia_gpu(const struct pci_dev *d); /* 10de, class 0x0302xx or 0x0300xx */
/* Offset of extended capability `id` in config bytes, 0 if absent, -ENODATA
 * if the bytes stop before the extended space (a non-root read: 64 bytes). */
int pci_find_ext_cap(const unsigned char *cfg, size_t len, unsigned id);

const struct pci_dev *pci_find(const struct pci_info *p, const char *bdf);

/* ---- network interfaces ---- */

struct netdev {
	char *name;
	char *operstate;    /* NULL if unreadable */
	int carrier;        /* 0/1, -1 unknown (down links refuse the read) */
	int64_t speed;      /* Mb/s; -1 unknown */
	int64_t mtu;        /* -1 unknown */
	int type;           /* ARPHRD: 1 ether, 32 infiniband; -1 unknown */
	char *pci_bdf;      /* NULL for virtual interfaces */
	bool is_virtual;
	char *master;       /* the device it is enslaved to (its `master` link: a bond); NULL none */
	bool is_bridge;     /* a Linux bridge (docker0, virbr0, br-*) */
	/* /proc/sys/net/ipv4/conf/<name>/arp_{ignore,announce}; -1 unknown */
	int arp_ignore, arp_announce;
	/* Carrier transitions since the interface was created (Linux
	 * Documentation/ABI/testing/sysfs-class-net: carrier_changes from 3.15,
	 * carrier_up_count and carrier_down_count from 4.16); -1 unknown, the
	 * reason in carrier_changes_err / carrier_counts_err. */
	int64_t carrier_changes, carrier_up, carrier_down;
	int carrier_changes_err, carrier_counts_err;
	/* DCQCN per priority with the MLNX_OFED/DOCA-OFED mlx5 driver:
	 * /sys/class/net/<if>/ecn/roce_{np,rp}/enable/<0..7> ("1" on, "0" off;
	 * NVIDIA MLNX_OFED documentation, "Explicit Congestion Notification").
	 * ecn_err: listing ecn/ (-ENOENT: the inbox driver, which has no such
	 * directory; not read for virtual interfaces). ecn[0] is roce_np,
	 * ecn[1] roce_rp; each value 0 or 1, or -errno when unreadable. */
	int ecn_err;
	int ecn[2][8];
};

enum { ECN_NP, ECN_RP };

/* An address of an interface, as getifaddrs(3) lists it. */
struct net_addr {
	char *ifname;
	int family;         /* AF_INET or AF_INET6 */
	char *text;         /* "10.0.1.10", "fe80::a288:c2ff:fe0f:a7e3" */
	unsigned prefix;    /* prefix length */
	struct in_addr a4;  /* AF_INET */
	struct in6_addr a6; /* AF_INET6 */
};

/* ---- Linux bonding ----
 * /sys/class/net/<bond>/bonding/ and /sys/class/net/<slave>/bonding_slave/
 * (Linux drivers/net/bonding/bond_sysfs.c, bond_sysfs_slave.c;
 * Documentation/networking/bonding.rst). `mode` reads "<name> <number>"
 * ("802.3ad 4"); ad_* attributes are empty outside 802.3ad mode, and
 * ad_partner_mac is empty for a reader without CAP_NET_ADMIN. */

/* Bonding modes, the number `bonding/mode` prints (include/uapi/linux/if_bonding.h). */
enum {
	BOND_BALANCE_RR = 0,
	BOND_ACTIVE_BACKUP = 1,
	BOND_BALANCE_XOR = 2,
	BOND_BROADCAST = 3,
	BOND_8023AD = 4,
	BOND_BALANCE_TLB = 5,
	BOND_BALANCE_ALB = 6,
};

/* LACP port state bits of ad_{actor,partner}_oper_port_state (IEEE 802.1AX;
 * include/uapi/linux/if_bonding.h LACP_STATE_*). */
#define BOND_LACP_SYNC 0x08
#define BOND_LACP_COLLECTING 0x10
#define BOND_LACP_DISTRIBUTING 0x20
#define BOND_LACP_DEFAULTED 0x40 /* no LACPDU received: partner values are defaults */

struct bond_slave {
	char *name;
	char *mii_status;     /* bonding_slave/mii_status: "up", "down", "going down", "going back"; NULL unreadable */
	int mii_err;
	char *state;          /* bonding_slave/state: "active", "backup"; NULL unreadable */
	int64_t link_failures; /* bonding_slave/link_failure_count; -1 unknown */
	int aggregator_id;    /* bonding_slave/ad_aggregator_id; -1 "N/A" (no aggregator, not 802.3ad) or unreadable */
	int actor_state;      /* bonding_slave/ad_actor_oper_port_state (LACP bits); -1 "N/A" or unreadable */
	int partner_state;    /* bonding_slave/ad_partner_oper_port_state; -1 likewise */
};

struct bond {
	char *name;
	int mode;             /* BOND_*; -1 unreadable */
	char *mode_name;      /* "802.3ad"; NULL unreadable */
	int mode_err;
	struct bond_slave *slaves; /* bonding/slaves, in enslavement order */
	size_t n_slaves;
	int slaves_err;       /* -ENODATA: the bond has no slaves */
	char *mii_status;     /* bonding/mii_status: "up", "down"; NULL unreadable */
	char *active_slave;   /* bonding/active_slave; NULL none or unreadable */
	char *xmit_hash_policy; /* "layer3+4" (the name before the number); NULL unreadable */
	int ad_num_ports;     /* 802.3ad: ports in the active aggregator; -1 not 802.3ad or unreadable */
	char *ad_partner_mac; /* 802.3ad: the partner's system MAC; NULL empty or unreadable */
	int ad_partner_mac_err; /* -ENODATA empty (not 802.3ad, or no CAP_NET_ADMIN when recorded) */
};

struct net_info {
	struct netdev *v;
	size_t n;
	int err;
	struct name_index by_name;
	struct bond *bonds;   /* the netdevs with a bonding/ directory */
	size_t n_bonds;
	/* /proc/sys/net/ipv4/conf/all/arp_{ignore,announce}: the kernel applies
	 * the larger of `all` and the interface's (ip-sysctl.rst); -1 unknown */
	int all_arp_ignore, all_arp_announce;
	/* Addresses: live from getifaddrs(3) (src/probe/ifaddrs.c), in a recorded tree from
	 * .gpuready/ifaddrs (docs/snapshot-layout.md); addrs_known false: addrs_why says why none. */
	struct net_addr *addrs;
	size_t n_addrs;
	bool addrs_known;
	char *addrs_source;  /* "getifaddrs", "/.gpuready/ifaddrs" */
	char *addrs_why;
	unsigned addrs_bad;  /* lines of the recorded file that are no address */
	struct dcb_info dcb; /* PFC and DSCP trust of the RoCE netdevs, a LAG's slaves (dcb.h) */
};

const struct netdev *net_find(const struct net_info *n, const char *name);
const struct bond *bond_find(const struct net_info *n, const char *name);
/* "802.3ad 4" -> mode 4 and the name (malloc'd); -EINVAL for other text. */
int bond_parse_mode(const char *s, int *mode, char **name);

/* .gpuready/ifaddrs (src/inventory/ifaddr.c, docs/snapshot-layout.md):
 * parsing adds each address to ni, counting bad lines in addrs_bad. */
void ifaddrs_parse(const char *text, size_t len, struct net_info *ni);
void ifaddrs_format(const struct net_info *ni, struct strbuf *out);
/* Adds one address (text form) to ni; false if it does not parse. */
bool net_addr_add(struct net_info *ni, const char *ifname, int family, const char *text, unsigned prefix);
/* An address NCCL can advertise to other nodes: not loopback, not IPv6
 * link-local (fe80::/10, ambiguous across interfaces), not unspecified. */
bool net_addr_routable(const struct net_addr *a);
/* Reads .gpuready/ifaddrs under a recorded root; on the live root leaves
 * the addresses to the live layer (addrs_why says so until it runs). */
int ifaddrs_load(const struct root *r, struct net_info *ni);

/* ---- RDMA ---- */

struct rdma_gid {
	unsigned index;
	char *gid;          /* text as in sysfs, for messages */
	struct in6_addr addr; /* the text in binary (rdma_gid_parse); zero if !parsed */
	bool parsed;        /* the text is an IPv6 address */
	char *type;         /* "RoCE v2", "IB/RoCE v1"; NULL unknown */
	char *ndev;         /* NULL unknown */
};

struct counter {
	char *name;
	uint64_t value;
	int err;            /* listed but unreadable (-errno, -ENODATA empty): value is 0 */
};

/* What it means when the port counter `name` rises (an error or congestion
 * sign: "symbol errors on the link: a bad cable, transceiver or port"), or
 * NULL for a counter that is no such sign (traffic, lifespan). Static
 * text; src/inventory/rdma_counters.c. */
const char *rdma_counter_meaning(const char *name);

struct rdma_port {
	unsigned num;
	int state;          /* IB port state number; -1 unknown */
	char *state_name;   /* "ACTIVE" */
	int phys_state;     /* -1 unknown */
	char *phys_name;    /* "LinkUp" */
	char *link_layer;   /* "Ethernet", "InfiniBand"; NULL unknown */
	int link_layer_err; /* why link_layer is NULL (-errno, -ENODATA empty) */
	char *rate;         /* raw rate text */
	double rate_gbps;   /* 0 unknown */
	char *netdev;       /* RoCE netdev (gid_attrs/ndevs or PCI net/); NULL */
	struct rdma_gid *gids; /* populated (non-zero) entries only */
	size_t n_gids;
	bool gid_types_known; /* gid_attrs/types exists */
	struct counter *counters;
	size_t n_counters;
	struct counter *hw_counters;
	size_t n_hw_counters;
	/* rdma_cm configfs: -1 when no directory (kernel default 0 applies) */
	int roce_tos;
	int roce_tos_err;
	char *roce_mode;
	/* live verbs query; verbs_err says why not when unset */
	bool verbs_ok;
	int active_mtu, max_mtu; /* bytes */
};

struct rdma_dev {
	char *name;
	int node_type;      /* -1 unknown */
	char *node_type_name;
	char *fw_ver, *hca_type, *board_id, *node_guid;
	int fw_ver_err;     /* why fw_ver is NULL */
	char *pci_bdf;      /* NULL if no device link */
	char *uverbs;       /* "uverbs0"; NULL if none found */
	bool uverbs_node;   /* /dev/infiniband/<uverbs> exists */
	struct rdma_port *ports;
	size_t n_ports;
	int ports_err;
	int dir_err;        /* resolving /sys/class/infiniband/<name> (dangling link) */
};

/* libibverbs' user-space providers (rdma-core libibverbs/dynamic.c): each
 * /etc/libibverbs.d/<x>.driver file holds "driver <name>" lines, and
 * libibverbs loads the plug-in lib<name>-rdmav<ABI>.so from its provider
 * directory (<libdir>/libibverbs), or <name>-rdmav<ABI>.so when <name> is
 * an absolute path. */
struct verbs_provider {
	char *name;         /* "mlx5", or an absolute path prefix */
	char *file;         /* the .driver file that names it */
	char *lib;          /* the plug-in found ("/usr/lib/x86_64-linux-gnu/libibverbs/libmlx5-rdmav34.so"); NULL none */
};

struct verbs_conf {
	struct verbs_provider *v;
	size_t n;
	int conf_err;       /* listing /etc/libibverbs.d (-ENOENT: no rdma-core user space configured) */
	struct strv dirs;   /* the provider directories that could be listed */
	struct strv unreadable; /* .driver files or provider directories that exist but could not be read: "path (reason)" */
};

/* The provider named name, or NULL. */
const struct verbs_provider *verbs_provider_find(const struct verbs_conf *vc, const char *name);
/* "driver mlx5" lines of a .driver file: calls fn with each name. */
void verbs_driver_parse(const char *text, size_t len, void (*fn)(void *ud, const char *name), void *ud);
int verbs_conf_load(const struct root *r, struct verbs_conf *vc);
void verbs_conf_free(struct verbs_conf *vc);

struct rdma_info {
	struct rdma_dev *v;
	size_t n;
	int err;            /* listing /sys/class/infiniband */
	bool rdma_cm_node;  /* /dev/infiniband/rdma_cm */
	bool dev_recorded;  /* the tree has /dev at all (recordings may lack it) */
	bool uverbs_class;  /* /sys/class/infiniband_verbs exists */
	bool configfs_present; /* /sys/kernel/config/rdma_cm exists */
	char *verbs_status; /* NULL when verbs queried fine, else why not */
	struct verbs_conf verbs; /* libibverbs providers (with INV_RDMA) */
	struct name_index by_name;
};

const struct rdma_dev *rdma_find(const struct rdma_info *r, const char *name);

/* Moves (*dev, *port) to the first port at or after it, passing over
 * devices without ports; false once past the last device. */
bool rdma_port_step(const struct rdma_info *ri, size_t *dev, size_t *port);

/* Every port of every RDMA device: devices in the order rdma_load() listed
 * them, each device's ports in port number order; devices without ports
 * are passed over. d and p are the caller's pointers (const or not), set
 * on each turn; ri is evaluated more than once. One loop, so break and
 * continue act on it. */
#define for_each_rdma_port(ri, d, p)                                                                            \
	for (size_t rdma_it_dev_ = 0, rdma_it_port_ = 0;                                                        \
	     rdma_port_step((ri), &rdma_it_dev_, &rdma_it_port_) &&                                             \
	     ((d) = &(ri)->v[rdma_it_dev_], (p) = &(d)->ports[rdma_it_port_], true);                            \
	     rdma_it_port_++)

/* Parses g->gid, the text sysfs prints (eight groups of four hex digits,
 * linux drivers/infiniband/core/sysfs.c show_port_gid, "%pI6"), with
 * inet_pton(3) AF_INET6 into g->addr; sets and returns g->parsed. Text that
 * is no IPv6 address leaves g->addr zero: every IN6_IS_ADDR_* test on it
 * is then to be guarded by g->parsed. */
bool rdma_gid_parse(struct rdma_gid *g);

/* ---- persistence of rdma_cm ToS (systemd units, udev rules, scripts) ---- */

struct tos_writer {
	char *kind;         /* "systemd", "udev", "script" */
	char *path;         /* file that mentions default_roce_tos */
	char *unit;         /* systemd unit name, if any */
	bool enabled;       /* unit has a .wants/ link; udev/rc files always apply */
	char *via;          /* script path the unit runs, if that is where it was found */
};

struct persist_info {
	struct tos_writer *v;
	size_t n;
	/* units, rules and programs that exist but could not be read,
	 * "path (reason)": whether they persist the ToS is unknown */
	struct strv unreadable;
};

/* ---- NCCL configuration ---- */

struct nccl_var {
	char *name;
	char *value;
	char *source;       /* "environment", "/etc/profile.d/x.sh:4", ... */
	bool login_only;    /* from /etc/profile.d: applies to login shells */
	bool computed;      /* the value holds $ or ` : computed when the shell runs */
	char *file_source;  /* first file (with line) that defines it, effective or not; NULL */
	struct strv shadowed; /* lower-priority definitions: "value (source)" */
};

/* One <pci> element of an NCCL topology file (NCCL src/graph/xml.cc: the
 * file NCCL_TOPO_DUMP_FILE writes and NCCL_TOPO_FILE reads). */
struct nccl_topo_pci {
	char *busid;        /* the busid attribute as written ("0000:18:00.0") */
	uint32_t class_code; /* its class attribute (0x030200 GPU, 0x0207xx/0x0200xx NIC); 0 absent */
};

/* The topology file NCCL loads at communicator init (NCCL src/graph/topo.cc
 * ncclTopoGetSystem): the file NCCL_TOPO_FILE names, else
 * /var/run/nvidia-topologyd/virtualTopology.xml when that exists. */
struct nccl_topo_file {
	char *path;         /* the file; NULL when there is none to load or it cannot be told */
	bool by_default;    /* the default path (NCCL_TOPO_FILE unset) */
	char *why;          /* NCCL_TOPO_FILE is set but not read here (relative, computed): why */
	int err;            /* reading path: 0, -ENOENT, -EACCES, -ENODATA (empty), ... */
	struct nccl_topo_pci *pci; /* its <pci> elements with a busid, in file order */
	size_t n_pci;
};

struct nccl_config {
	struct nccl_var *v;
	size_t n;
	bool env_recorded;  /* environment came from .gpuready/environ */
	bool env_known;     /* live, or recorded */
	struct strv files;  /* config files that were read */
	struct strv notes;  /* what could not be followed (a relative NCCL_CONF_FILE) */
	/* Files that exist but could not be read, "path (reason)": what they
	 * set is unknown, so no verdict that depends on NCCL_* is sure. */
	struct strv unreadable;
	struct nccl_topo_file topo;
};

const struct nccl_var *nccl_get(const struct nccl_config *c, const char *name);

/* ---- host tuning ---- */

struct limit_entry {
	char *domain, *type, *item, *value;
	char *source;       /* "/etc/security/limits.conf:12" */
};

struct host_info {
	uint64_t rmem_max, wmem_max;
	int rmem_err, wmem_err;
	struct limit_entry *limits; /* memlock entries only */
	size_t n_limits;
	int limits_err;     /* limits.conf unreadable (not: absent) */
	bool rlimit_known, rlimit_unlimited; /* live process limit */
	struct slurmd_info *slurmd; /* slurmd.service's LimitMEMLOCK (slurmd.h); never NULL once loaded */
	uint64_t rlimit_soft, rlimit_hard;
};

/* ---- the process's view: container, /dev/shm, its own limits (container.c) ----
 * All from files read through the root, so a snapshot keeps them:
 * markers container runtimes leave (/.dockerenv; Podman's
 * /run/.containerenv; the Kubernetes service-account directory; Enroot's
 * /.lock, enroot src/runtime.sh), KUBERNETES_SERVICE_HOST in the
 * (recorded) environment, /proc/{1,self}/cgroup, /proc/self/mountinfo
 * (proc(5)), /proc/meminfo, /proc/self/limits, /proc/self/status and
 * /proc/self/uid_map (user_namespaces(7)). */

#define CAP_IPC_LOCK_BIT 14 /* CAP_IPC_LOCK, include/uapi/linux/capability.h */

struct proc_view {
	struct strv evidence;  /* why this is a container's view: "/.dockerenv (Docker)", ... */
	char *runtime;         /* the runtime the first evidence names ("Docker"); NULL none */
	bool looked;           /* /proc/self/mountinfo or a cgroup file could be read */
	int mountinfo_err;     /* reading /proc/self/mountinfo */
	/* the mount at /dev/shm (the last one, which is the one seen) */
	bool shm_mounted;
	char *shm_fstype;      /* "tmpfs" */
	char *shm_source;      /* "shm" (Docker), "tmpfs" */
	bool shm_size_set;     /* a size= super option */
	uint64_t shm_size;     /* its bytes, when set */
	int shm_size_err;      /* size= that does not parse */
	uint64_t mem_total;    /* /proc/meminfo MemTotal in bytes; 0 unknown */
	int meminfo_err;
	/* /proc/self/limits, "Max locked memory": UINT64_MAX is unlimited */
	int limits_err;        /* -ENODATA: no such line */
	uint64_t memlock_soft, memlock_hard;
	/* /proc/self/status CapEff */
	int caps_err;
	uint64_t cap_eff;
	/* /proc/self/uid_map: 1 the initial user namespace (0 0 4294967295),
	 * 0 another (capabilities then count only inside it), -1 unknown */
	int init_userns;
};

/* Pure parsers of proc(5) formats (container.c), unit-tested and fuzzed. */
/* One /proc/self/mountinfo line: its root, mount point, filesystem type,
 * source and super options (pointers into line, which is split in place);
 * false for a line that is not one. Octal escapes (\040) are left as is. */
struct mountinfo_line {
	char *root, *mount_point, *fstype, *source, *super_opts;
};
bool mountinfo_parse_line(char *line, struct mountinfo_line *m);
/* The size= option of a tmpfs option list ("rw,size=65536k"): bytes in
 * *ret, with the k/m/g/t suffixes of tmpfs (Documentation/filesystems/
 * tmpfs.rst); -ENOENT no size= option, -EINVAL or -ERANGE bad value. A
 * percentage of RAM is -EINVAL (the kernel shows the size in k). */
int tmpfs_size_option(const char *opts, uint64_t *ret);
/* "Max locked memory  8388608  8388608  bytes" in /proc/PID/limits text:
 * soft and hard in bytes, UINT64_MAX for "unlimited"; -ENODATA no line. */
int proc_limits_memlock(const char *text, uint64_t *soft, uint64_t *hard);
/* "Key:\tvalue" of /proc/PID/status or /proc/meminfo: the value (leading
 * blanks dropped) malloc'd in *ret; -ENODATA no such key. */
int proc_status_field(const char *text, const char *key, char **ret);

int proc_view_load(const struct root *r, struct proc_view *v);
void proc_view_free(struct proc_view *v);

/* ---- NVIDIA driver (NVIDIA open-gpu-kernel-modules, kernel-open/nvidia/nv-procfs.c) ---- */

enum nv_flavour { NV_FLAVOUR_UNKNOWN, NV_FLAVOUR_OPEN, NV_FLAVOUR_PROPRIETARY };

struct nvidia_gpu_info {
	char *bdf;          /* directory name, "0000:17:00.0" */
	char *model, *uuid, *vbios, *firmware, *bus_location;
	int info_err;       /* reading its `information` (-ENODATA: empty); 0 read */
	int excluded;       /* 1 "GPU Excluded: Yes", 0 No, -1 missing */
	int minor;          /* /dev/nvidiaN, -1 unknown */
	/* MIG GPU instances: the "gi<id>" entries of
	 * /proc/driver/nvidia/capabilities/gpu<minor>/mig, which the driver
	 * creates per GPU instance (open-gpu-kernel-modules
	 * src/nvidia/arch/nvalloc/unix/src/os.c osRmCapRegisterSmcPartition);
	 * the `mig` directory itself exists on every GPU (osRmCapRegisterGpu). */
	struct strv mig_gis;
	int mig_err;        /* listing that directory (or -ENODATA: minor unknown); 0 listed */
};

struct nvidia_info {
	bool proc_present;  /* /proc/driver/nvidia/version readable */
	int version_err;    /* reading it (-ENODATA: empty) */
	bool gpus_listed;   /* /proc/driver/nvidia/gpus could be listed (the driver's GPUs) */
	int gpus_err;       /* listing it, when not */
	char *version_line; /* "NVRM version: ..." */
	char *version;      /* "570.124.06", from the version line or the module */
	enum nv_flavour flavour_proc;  /* from the version line wording */
	char *module_version; /* /sys/module/nvidia/version */
	char *taint;        /* /sys/module/nvidia/taint; NULL if unreadable */
	struct nvidia_gpu_info *gpus;
	size_t n_gpus;
	/* The first of NCCL's peer-memory markers that exists (NCCL src/transport/net_ib/gdr.cc):
	 * /sys/kernel/mm/memory_peers/nv_mem/version, .../nv_mem_nc/version,
	 * /sys/module/nvidia_peermem/version; NULL if none. */
	const char *peermem_marker;
};

/* ---- NVSwitch systems: fabric manager and IMEX (fabric.c) ----
 * Unit files, their enablement links and systemd's runtime marker
 * /run/systemd/units/invocation:<unit> (systemd src/core/unit.c:
 * unit_export_invocation_id() writes it when the unit starts, and
 * unit_notify() removes it when the unit becomes inactive or failed), the
 * dpkg status database, and the IMEX channel device nodes (NVIDIA IMEX
 * Service for NVLink Networks User's Guide, "IMEX Channels"). */

struct service_info {
	char *unit_path;    /* the unit file that wins (systemd search order), NULL when none */
	bool enabled;       /* a *.wants/ or *.requires/ link under /etc/systemd/system */
	int active;         /* 1 the invocation link exists, 0 /run/systemd/units lacks it, -1 unknown */
	int active_err;     /* listing /run/systemd/units, when unknown */
};

struct fabric_info {
	struct service_info fm;      /* nvidia-fabricmanager.service */
	char *fm_pkg;                /* installed package ("nvidia-fabricmanager-570"), NULL none */
	char *fm_pkg_version;        /* its upstream version ("570.124.06"), without epoch and revision */
	int pkg_err;                 /* reading /var/lib/dpkg/status */
	bool rpm_db, nvlsm_bin, nvlsm_conf; /* /var/lib/rpm exists (RPM system); nvlsm's files (nvl5.h) exist */
	struct service_info imex;    /* nvidia-imex.service */
	int imex_nodes_err;          /* reading /etc/nvidia-imex/nodes_config.cfg (0: read, not empty) */
	struct strv imex_channels;   /* /dev/nvidia-caps-imex-channels entries ("channel0") */
	int imex_channels_err;       /* listing that directory */
};

/* ---- kernel build configuration (Linux drivers/pci/Kconfig, drivers/infiniband/Kconfig) ---- */

struct kconfig_info {
	char *source;       /* "/boot/config-6.8.0-52-generic" or "/proc/config.gz" */
	int err;            /* neither readable */
	struct strv names;  /* CONFIG_ names of interest that are set... */
	struct strv values; /* ...and their values ("y", "m", "\"str\"") */
};

/* The value of CONFIG_<name> ("y", "m", ...), "" if "is not set" or absent
 * from a readable config, NULL if no config could be read. */
const char *kconfig_get(const struct kconfig_info *k, const char *name);

/* ---- PyTorch (the "CUDA available" check) ---- */

struct torch_info {
	bool probed;        /* a Python was found and run */
	char *python;       /* the interpreter used */
	char *why;          /* why not probed, or why the probe failed */
	bool ok;            /* the probe script ran to the end */
	char *torch_version, *cuda_version, *nccl_version;
	int cuda_available; /* 1/0/-1 */
	int device_count;   /* -1 unknown */
	int nccl_available; /* 1/0/-1 */
};

/* ---- changes `gpuready fix` wrote that wait for a reload or reboot (fixstate.c) ---- */

/* The file `gpuready fix --apply` keeps them in (docs/fix.md): one line per
 * finding, "CHECK\tSUBJECT\tBOOT_ID\tTIME\tTITLE". */
#define FIX_PENDING_PATH "/var/lib/gpuready/fix-pending"

struct fix_pending_entry {
	char *check_id, *subject, *boot_id, *time, *title;
};

struct fix_pending_info {
	struct fix_pending_entry *v;
	size_t n;
	char *boot_id;      /* this boot's (/proc/sys/kernel/random/boot_id), NULL unknown */
};

int fix_pending_load(const struct root *r, struct fix_pending_info *out);
void fix_pending_free(struct fix_pending_info *p);

struct inventory {
	bool live;
	struct kernel_info kernel;
	struct user_info user;
	struct modules_info modules;
	struct pci_info pci;
	struct net_info net;
	struct rdma_info rdma;
	struct persist_info persist;
	struct nccl_config nccl;
	struct host_info host;
	struct proc_view view;  /* the process's view: container, /dev/shm, its limits */
	struct nvidia_info nvidia;
	struct fabric_info fabric;
	struct kconfig_info kconfig;
	struct xid_info xid;
	struct fix_pending_info fix_pending;
	struct nvlink_rec_info nvlink_rec; /* recorded tree only: NVML's NVLinks as snapshot saw them */
	/* live only (NULL under a recorded root, or when not asked for) */
	struct nvml_info *nvml;
	struct cuda_info *cuda;
	struct torch_info *torch;
	struct gdr_probe *gdr; size_t n_gdr; /* one per GPU with a nearest RDMA NIC */
	struct copy_bw_info *copy_bw; /* check --bench only (inventory/copy_bw.h) */
	unsigned parts;         /* INV_* that were loaded */
};

/* What to load besides the base (kernel, modules, PCI, network, NCCL configuration): */
enum {
	INV_RDMA = 1u << 0,      /* RDMA devices, rdma_cm, persistence, host tuning, verbs */
	INV_GPU = 1u << 1,       /* NVIDIA driver files, kernel config, Xid log */
	INV_LIVE_NVML = 1u << 2, /* live only: NVML */
	INV_LIVE_CUDA = 1u << 3, /* live only: CUDA (with the round trip) and PyTorch */
	INV_LIVE_GDR = 1u << 4,  /* live only: GPU memory registration with each GPU's nearest NIC */
	INV_LIVE_GPU = INV_LIVE_NVML | INV_LIVE_CUDA,
	INV_FILES = INV_RDMA | INV_GPU,
	INV_ALL = 0x1fu,
};

struct load_opts {
	unsigned parts;
	const char *python;      /* --python, or NULL to search */
	/* The live layer, run once the files are read (probe_live in
	 * src/probe/: verbs queries, NVML, CUDA, PyTorch, GPU memory
	 * registration); NULL runs none. Returns 0 or -errno. */
	int (*live)(struct root *r, const struct load_opts *o, struct inventory *inv);
};

/* Reads what `o->parts` asks for under the root. Never fails for what the
 * machine lacks (that is recorded in the structs); returns -errno only
 * for internal errors. The caller frees with inventory_free(). */
int inventory_load(struct root *r, const struct load_opts *o, struct inventory **ret);
void inventory_free(struct inventory *inv);
static inline void inventory_freep(struct inventory **p) { inventory_free(*p); }
#define _cleanup_inventory_ __attribute__((cleanup(inventory_freep)))

/* The individual loaders, in the order inventory_load() runs them. Each
 * fills its part and returns 0 or -errno for internal errors only. */
int kernel_load(const struct root *r, struct kernel_info *k, struct user_info *u);
int modules_load(const struct root *r, const char *release, struct modules_info *m);
int pci_load(const struct root *r, struct pci_info *p);
int net_load(const struct root *r, struct net_info *n);
int bond_load(const struct root *r, struct net_info *n);
int rdma_load(const struct root *r, struct rdma_info *ri);
int rdma_cm_load(const struct root *r, struct rdma_info *ri);
int persist_load(const struct root *r, struct persist_info *p);
int nccl_config_load(const struct root *r, const struct user_info *u, struct nccl_config *c);
int host_load(const struct root *r, struct host_info *h);
int iommu_load(const struct root *r, struct pci_info *p);
int nvidia_load(const struct root *r, struct nvidia_info *n);
int fabric_load(const struct root *r, struct fabric_info *f);
int kconfig_load(const struct root *r, const char *release, struct kconfig_info *k);
int xid_load(struct root *r, struct xid_info *x);

void kernel_free(struct kernel_info *k, struct user_info *u);
void modules_free(struct modules_info *m);
void pci_free(struct pci_info *p);
void net_free(struct net_info *n);
void bond_free(struct net_info *n);
void rdma_free(struct rdma_info *r);
void persist_free(struct persist_info *p);
void nccl_config_free(struct nccl_config *c);
void host_free(struct host_info *h);
void nvidia_free(struct nvidia_info *n);
void fabric_free(struct fabric_info *f);
void kconfig_free(struct kconfig_info *k);
void xid_free(struct xid_info *x);
void torch_free(struct torch_info *t);

/* Pure parsers, unit-tested and fuzzed. */
/* The first number of /proc/uptime ("350735.47 234388.90"): 0, or -EINVAL. */
int uptime_parse(const char *s, double *ret);
/* One kernel-log line (kmsg record or dmesg text): if it is an Xid line,
 * writes the PCI id (no function) and the code and returns true. */
bool xid_parse_line(const char *line, char *pci, size_t pci_size, int *code);
/* The action an Xid 154 line changed to (the number after "to 0x"), or -1. */
int xid_parse_recovery(const char *line);
/* "CONFIG_X=y" / "# CONFIG_X is not set" lines: calls fn for each. */
void kconfig_parse(const char *text, size_t len, void (*fn)(void *ud, const char *name, const char *value),
		   void *ud);
/* The <pci> elements of an NCCL topology XML text (busid and class
 * attributes; quotes ' or ", comments skipped): appends them to *v / *n
 * (malloc'd; free with nccl_topo_free). Never fails: text that is no XML
 * gives nothing. */
void nccl_topo_parse(const char *text, size_t len, struct nccl_topo_pci **v, size_t *n);
/* Reads c->topo (after the variables are known); 0 or -errno (internal). */
int nccl_topo_load(const struct root *r, struct nccl_config *c);
void nccl_topo_free(struct nccl_topo_file *t);
/* "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.124.06 ..."
 * -> flavour and malloc'd version (NULL if none found). */
enum nv_flavour nv_parse_version_line(const char *line, char **version);

/* The Debian package database (/var/lib/dpkg/status, deb-control(5)
 * stanzas): the first installed package ("Status: install ok installed")
 * whose name is `name` or `name`-<digits> (nvidia-fabricmanager-570);
 * malloc'd name and upstream version (no epoch, no Debian revision) into
 * *pkg and *version. False when none is installed. */
bool dpkg_find_installed(const char *status, const char *name, char **pkg, char **version);

/* Where systemd finds a unit (the first of its system unit directories
 * that has it: systemd.unit(5)), malloc'd, or NULL; and whether `systemctl
 * enable` linked it (a *.wants/ or *.requires/ entry under
 * /etc/systemd/system). */
char *systemd_unit_find(const struct root *r, const char *unit);
bool systemd_unit_enabled(const struct root *r, const char *unit);

/* The last PCI BDF component of a sysfs path ("/sys/devices/pci0000:00/
 * 0000:00:01.0/0000:01:00.0/net/x" -> "0000:01:00.0"), or NULL. */
char *sysfs_path_bdf(const char *path);

/* The recorded environment of a tree (.gpuready/environ) or, when live,
 * the process environment, as NAME=value strings. */
int env_load(const struct root *r, struct strv *out, bool *recorded);

#endif
