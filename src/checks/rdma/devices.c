/* rdma.devices: RDMA devices exist, each with its uverbs device node, and
 * every Mellanox NIC on PCI has one.
 *
 * No RDMA device at all is a fail, with the note that RDMA is only needed
 * for multi-server training (a single server needs no RDMA). A
 * ConnectX/BlueField PCI function without an RDMA device means the
 * provider module (mlx5_ib/mlx4_ib) is missing or failed to bind, except
 * the second PF of a card in RoCE LAG, whose mlx5_bond device sits on the
 * first (Linux commit 7907f23adc18). Inside a container (rdma.container)
 * a missing /dev/infiniband node means the runtime did not pass it in, and
 * the fix is the container's start options, not udev. */
#include "checks/check.h"
#include "common.h"

#include "core/readers.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The RDMA devices by PCI function, to ask of every NIC function whether
 * one sits on it. */
static const struct name_key by_function = {
	.size = sizeof(struct rdma_dev), .off = offsetof(struct rdma_dev, pci_bdf), .fold = true
};

static void describe(struct check_ctx *c, const struct rdma_dev *d)
{
	const struct inventory *inv = c->inv;
	const struct rdma_info *ri = &inv->rdma;
	struct finding *f;
	if (d->dir_err < 0) {
		check_add(c, STATUS_SKIP, d->name, "listed in /sys/class/infiniband, but its sysfs directory is %s",
			  d->dir_err == -ENOENT ? "missing (a dangling link: not recorded, or the device is gone)"
						: read_strerror(d->dir_err));
		return;
	}
	char what[160];
	snprintf(what, sizeof(what), "%s%s%s", rdma_dev_model(inv, d), d->pci_bdf ? " at " : "",
		 d->pci_bdf ? d->pci_bdf : "");
	if (!d->uverbs) {
		enum module_state uv = modules_state(&inv->modules, "ib_uverbs");
		if (!ri->uverbs_class && uv != MODULE_ABSENT) {
			check_add(c, STATUS_SKIP, d->name, "%s: uverbs entries were not recorded in this tree", what);
			return;
		}
		f = check_add(c, STATUS_FAIL, d->name, "%s has no user-space verbs device (no uverbs entry in sysfs): "
						       "libibverbs and NCCL cannot open it",
			      what);
		finding_hint(f, "`modprobe ib_uverbs` (and add it to /etc/modules-load.d/rdma.conf)");
		return;
	}
	char where[512];
	if (!d->uverbs_node && ri->dev_recorded && container_view(inv, where, sizeof(where))) {
		f = check_add(c, STATUS_FAIL, d->name,
			      "%s: /dev/infiniband/%s is missing %s: the container was started without this "
			      "device's node, so libibverbs and NCCL cannot open it",
			      what, d->uverbs, where);
		finding_hint(f, "`ls -l /dev/infiniband/` lists the nodes the container has; pass them in "
				"(Docker, Podman: --device=/dev/infiniband/%s and --device=/dev/infiniband/rdma_cm for "
				"each device; Kubernetes: request the RDMA device plugin's resource, e.g. of "
				"k8s-rdma-shared-dev-plugin or the NVIDIA Network Operator)",
			     d->uverbs);
		return;
	}
	if (!d->uverbs_node && ri->dev_recorded) {
		f = check_add(c, STATUS_FAIL, d->name, "%s: /dev/infiniband/%s is missing: libibverbs cannot open it",
			      what, d->uverbs);
		finding_hint(f, "udevadm trigger --subsystem-match=infiniband_verbs (rdma-core's udev rules create "
				"the node); check `ls -l /dev/infiniband/`");
		return;
	}
	f = check_add(c, STATUS_OK, d->name, "%s, firmware %s, %s%s", what, d->fw_ver ? d->fw_ver : "unknown",
		      d->uverbs_node ? "/dev/infiniband/" : "", d->uverbs_node ? d->uverbs : d->uverbs);
	if (!d->uverbs_node)
		finding_detail(f, "/dev was not recorded in this tree: the device node could not be checked");
	finding_detail(f, "node type %s, node GUID %s, board %s", d->node_type_name ? d->node_type_name : "unknown",
		       d->node_guid ? d->node_guid : "unknown", d->board_id ? d->board_id : "unknown");
}

/* /dev/infiniband/rdma_cm, which librdmacm opens. */
static void judge_rdma_cm(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	struct finding *f;
	if (!inv->rdma.dev_recorded) {
		check_add(c, STATUS_SKIP, "rdma_cm", "/dev was not recorded in this tree: /dev/infiniband/rdma_cm "
						     "could not be checked");
	} else if (inv->rdma.rdma_cm_node) {
		check_add(c, STATUS_OK, "rdma_cm", "/dev/infiniband/rdma_cm present (librdmacm can connect)");
	} else {
		char where[512];
		bool ct = container_view(inv, where, sizeof(where));
		f = check_add(c, STATUS_WARN, "rdma_cm",
			      "/dev/infiniband/rdma_cm missing%s%s: RDMA-CM tools (rping, perftest -R, MPI/UCX "
			      "using rdmacm) fail; NCCL does not need it",
			      ct ? " " : "", where);
		if (ct)
			finding_hint(f, "`ls -l /dev/infiniband/`; start the container with "
					"--device=/dev/infiniband/rdma_cm (Docker, Podman), or on Kubernetes from "
					"the RDMA device plugin, which passes it with the uverbs nodes");
		else
			finding_hint(f, "`modprobe rdma_ucm`");
	}
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	struct finding *f;
	struct strbuf orphans = STRBUF_INIT;
	size_t n_orphans = 0;
	const struct pci_dev *first = NULL;
	struct name_index rdma_by_function = { 0 };

	/* ConnectX/BlueField functions without an RDMA device */
	name_index_build(&rdma_by_function, &by_function, inv->rdma.v, inv->rdma.n);
	for (size_t i = 0; i < inv->pci.n; i++) {
		const struct pci_dev *p = &inv->pci.v[i];
		if (!nic_host_function(p) ||
		    name_lookup(&rdma_by_function, &by_function, inv->rdma.v, inv->rdma.n, p->bdf) < inv->rdma.n)
			continue;
		/* the second PF of a RoCE LAG has none: its card's mlx5_bond device serves both */
		if (pf_in_roce_lag(inv, p))
			continue;
		strbuf_addf(&orphans, "%s%s", n_orphans ? ", " : "", p->bdf);
		if (!first)
			first = p;
		n_orphans++;
	}
	name_index_free(&rdma_by_function);
	const char *ib = first && nic_provider(first->device) == PROVIDER_MLX4 ? "mlx4_ib" : "mlx5_ib";

	if (inv->rdma.n == 0 && n_orphans) {
		f = check_add(c, STATUS_FAIL, SUBJECT_NODE,
			      "no RDMA device, although %zu %s NIC%s (driver %s) %s present: the RDMA provider is "
			      "not loaded, so NCCL cannot use %s",
			      n_orphans, nic_model_name(first->device), n_orphans == 1 ? "" : "s",
			      first->driver ? first->driver : "none", n_orphans == 1 ? "is" : "are",
			      n_orphans == 1 ? "it" : "them");
		finding_detail(f, "without an RDMA device: %s", orphans.buf);
		finding_hint(f, "`modprobe %s` (see rdma.modules); then `dmesg | grep -i mlx` for errors", ib);
		finding_fact(f, "rdma_nic_hardware", "present");
		finding_fact_bool(f, "rdma_provider_loaded", false);
	} else if (inv->rdma.n == 0) {
		f = check_add(c, STATUS_FAIL, SUBJECT_NODE,
			      "no RDMA device (/sys/class/infiniband is %s); RDMA is only needed for multi-server "
			      "training, single-server multi-GPU work does not use it",
			      inv->rdma.err ? "missing" : "empty");
		finding_hint(f, "if this node should do multi-server training: install a ConnectX NIC, then `apt "
				"install rdma-core ibverbs-utils` and `modprobe -a mlx5_core mlx5_ib`");
		finding_fact(f, "rdma_nic_hardware", "absent");
		finding_requires(f, "rdma_nic_hardware=absent");
	} else if (n_orphans) {
		f = check_add(c, STATUS_FAIL, orphans.buf, "%zu %s NIC%s without an RDMA device: NCCL cannot use %s",
			      n_orphans, nic_model_name(first->device), n_orphans == 1 ? "" : "s",
			      n_orphans == 1 ? "it" : "them");
		finding_hint(f, "`modprobe %s`; then `dmesg | grep -i mlx` for errors (a function in a bad state "
				"may need `mlxfwreset -d %s reset`, for each function listed, or a reboot)",
			     ib, first->bdf);
	}
	strbuf_release(&orphans);

	for (size_t i = 0; i < inv->rdma.n; i++)
		describe(c, &inv->rdma.v[i]);

	if (inv->rdma.n > 0)
		judge_rdma_cm(c);
	return 0;
}

const struct check_def check_rdma_devices = {
	.id = "rdma.devices",
	.section = "RDMA Devices",
	.summary = "RDMA devices exist with their uverbs nodes; every ConnectX NIC has one",
	.run = run,
};
