/* rdma.modules: the kernel modules of the RDMA stack are loaded.
 *
 * Core modules (Linux drivers/infiniband/Kconfig): ib_core (RDMA core), ib_uverbs
 * (/dev/infiniband/uverbs*, needed by libibverbs), rdma_cm (connection
 * manager) and rdma_ucm (/dev/infiniband/rdma_cm, needed by librdmacm).
 * Provider modules follow the NICs present: ConnectX-4 and later need
 * mlx5_core + mlx5_ib, ConnectX-3 needs mlx4_core + mlx4_ib (PCI IDs in
 * common.c). A Mellanox NIC whose provider is missing is a fail: the NIC
 * works as Ethernet but has no RDMA device. Without any RDMA hardware the
 * modules are not needed, so they are skipped, not failed. */
#include "checks/check.h"
#include "common.h"

#include <string.h>

/* Without ib_core/ib_uverbs nothing RDMA works (fail); rdma_cm/rdma_ucm
 * serve RDMA-CM users (librdmacm: rping, perftest -R, UCX/MPI, storage) and
 * the rdma_cm configfs, not NCCL, which connects through its own sockets
 * (warn, as rdma.devices treats the missing /dev/infiniband/rdma_cm). */
static const struct {
	const char *name;
	enum status missing;
	const char *why;
} core_modules[] = {
	{ "ib_core", STATUS_FAIL, "the RDMA stack" },
	{ "ib_uverbs", STATUS_FAIL, "user-space verbs (libibverbs, NCCL)" },
	{ "rdma_cm", STATUS_WARN, "RDMA-CM connections and the rdma_cm ToS configfs (NCCL does not need it)" },
	{ "rdma_ucm", STATUS_WARN, "librdmacm users: rping, perftest -R, UCX/MPI (NCCL does not need it)" },
};

static void one(struct check_ctx *c, const char *name, const char *why, bool needed, enum status missing)
{
	const struct modules_info *m = &c->inv->modules;
	enum module_state st = modules_state(m, name);
	struct finding *f;
	switch (st) {
	case MODULE_LOADED:
		check_add(c, STATUS_OK, name, "loaded (%s)", modules_source(m, name));
		break;
	case MODULE_BUILTIN:
		check_add(c, STATUS_OK, name, "built into the kernel (%s)", modules_source(m, name));
		break;
	case MODULE_ABSENT:
		if (!needed) {
			check_add(c, STATUS_SKIP, name, "not loaded; not needed: %s", why);
			break;
		}
		f = check_add(c, missing, name, "not loaded, needed for %s", why);
		finding_hint(f, "`modprobe %s && echo %s > /etc/modules-load.d/%s.conf`", name, name, name);
		break;
	case MODULE_UNKNOWN:
		check_add(c, STATUS_SKIP, name,
			  "cannot tell: neither /proc/modules nor /sys/module could be read under the root");
		break;
	}
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	bool need_mlx4 = false, need_mlx5 = false;
	for (size_t i = 0; i < inv->pci.n; i++) {
		const struct pci_dev *p = &inv->pci.v[i];
		if (!nic_host_function(p))
			continue;
		enum rdma_provider pr = nic_provider(p->device);
		need_mlx4 |= pr == PROVIDER_MLX4;
		need_mlx5 |= pr == PROVIDER_MLX5;
	}
	bool rdma_hw = node_has_rdma_hw(inv);
	const char *no_hw = "no RDMA NIC or device on this node";

	for (size_t i = 0; i < ARRAY_SIZE(core_modules); i++)
		one(c, core_modules[i].name, rdma_hw ? core_modules[i].why : no_hw, rdma_hw, core_modules[i].missing);
	if (need_mlx5) {
		one(c, "mlx5_core", "the ConnectX-4 or later NICs present", true, STATUS_FAIL);
		one(c, "mlx5_ib", "RDMA on the ConnectX-4 or later NICs present", true, STATUS_FAIL);
	}
	if (need_mlx4) {
		one(c, "mlx4_core", "the ConnectX-3 NICs present", true, STATUS_FAIL);
		one(c, "mlx4_ib", "RDMA on the ConnectX-3 NICs present", true, STATUS_FAIL);
	}
	return 0;
}

const struct check_def check_rdma_modules = {
	.id = "rdma.modules",
	.section = "Inbox RDMA Kernel Modules",
	.summary = "RDMA core modules and the provider modules the NICs present need are loaded",
	.run = run,
};
