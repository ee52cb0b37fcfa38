/* rdma.verbs_provider: libibverbs has a user-space provider for the
 * kernel driver of each RDMA device.
 *
 * libibverbs opens a device only through the provider plug-in for its
 * driver: a "driver <name>" line in /etc/libibverbs.d/<x>.driver and
 * lib<name>-rdmav<ABI>.so in its provider directory (rdma-core
 * libibverbs/dynamic.c; Debian/Ubuntu package ibverbs-providers, RPM
 * rdma-core). Without it the device is left out of ibv_get_device_list():
 * NCCL logs "NET/IB : No device found" and uses TCP sockets
 * (NVIDIA/k8s-test-infra#558; NVIDIA/nccl#367). Only the providers of the
 * drivers present matter: config files for absent hardware whose library
 * is not installed are normal, libibverbs only warns about them
 * (NVIDIA/nccl#1044). The device nodes /dev/infiniband/uverbs* are
 * rdma.devices'. */
#include "checks/check.h"
#include "common.h"
#include "core/readers.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The rdma-core provider (providers/<name>/) that drives the RDMA devices
 * of a PCI driver, from each provider's match table; NULL unknown. */
static const char *provider_for_driver(const char *pci_driver)
{
	static const struct {
		const char *driver, *provider;
	} map[] = {
		{ "mlx5_core", "mlx5" }, { "mlx4_core", "mlx4" }, { "bnxt_en", "bnxt_re" }, { "efa", "efa" },
		{ "qede", "qedr" },      { "ice", "irdma" },      { "i40e", "irdma" },      { "hfi1", "hfi1verbs" },
		{ "cxgb4", "cxgb4" },    { "hns3", "hns" },       { "erdma", "erdma" },     { "mana", "mana" },
		{ "vmw_pvrdma", "vmw_pvrdma" },
	};
	for (size_t i = 0; pci_driver && i < ARRAY_SIZE(map); i++)
		if (!strcmp(map[i].driver, pci_driver))
			return map[i].provider;
	return NULL;
}

/* "a, b, c" into sb (emptied first) */
static const char *join(const struct strv *sv, struct strbuf *sb)
{
	strbuf_reset(sb);
	for (size_t i = 0; i < sv->n; i++)
		strbuf_addf(sb, "%s%s", i ? ", " : "", sv->v[i]);
	return sb->buf;
}

struct need {
	const char *provider;
	struct strbuf devs;
	size_t n;
};

static void judge(struct check_ctx *c, const struct need *nd)
{
	const struct verbs_conf *vc = &c->inv->rdma.verbs;
	const struct verbs_provider *vp = verbs_provider_find(vc, nd->provider);
	char subject[64];
	snprintf(subject, sizeof(subject), "lib%s", nd->provider);
	struct finding *f;
	if (vp && vp->lib) {
		check_add(c, STATUS_OK, subject, "libibverbs provider for %s: %s (%s)", nd->devs.buf, vp->lib, vp->file);
		return;
	}
	const char *hint = "`apt install ibverbs-providers` (on RPM systems the rdma-core package holds the providers)";
	_cleanup_strbuf_ struct strbuf list = STRBUF_INIT;
	if (vc->unreadable.n) {
		const char *u = join(&vc->unreadable, &list);
		f = check_add(c, STATUS_WARN, subject, "no libibverbs provider for %s found, and %s could not be read: "
						       "whether libibverbs can open %s is unknown",
			      nd->devs.buf, u, nd->n == 1 ? "it" : "them");
		finding_hint(f, "`ls -l /etc/libibverbs.d` as root; if the provider is missing: %s", hint);
		return;
	}
	if (!vp && vc->conf_err == -ENOENT) {
		f = check_add(c, STATUS_WARN, subject, "no /etc/libibverbs.d: rdma-core's user space (libibverbs and its "
						       "providers) is not installed, or this tree did not record it; "
						       "without the %s provider libibverbs cannot open %s and NCCL uses TCP "
						       "sockets",
			      nd->provider, nd->devs.buf);
		finding_hint(f, "%s", hint);
		return;
	}
	if (!vp) {
		f = check_add(c, STATUS_FAIL, subject, "no \"driver %s\" line in /etc/libibverbs.d%s%s: libibverbs cannot "
						       "open %s, so NCCL finds no IB device and uses TCP sockets",
			      nd->provider, vc->conf_err < 0 ? ": " : "", vc->conf_err < 0 ? read_strerror(vc->conf_err) : "",
			      nd->devs.buf);
		finding_hint(f, "%s", hint);
		return;
	}
	const char *dirs = vc->dirs.n ? join(&vc->dirs, &list) : NULL;
	f = check_add(c, vc->dirs.n ? STATUS_FAIL : STATUS_WARN, subject,
		      "%s names the provider, but no lib%s-rdmav*.so is in %s: libibverbs cannot open %s, so NCCL finds "
		      "no IB device and uses TCP sockets",
		      vp->file, nd->provider, dirs ? dirs : "any standard provider directory (<libdir>/libibverbs)",
		      nd->devs.buf);
	finding_hint(f, "`apt install --reinstall ibverbs-providers` (on RPM systems the rdma-core package holds the "
			"providers)");
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	struct need needs[16];
	size_t n_needs = 0;
	struct strbuf unknown = STRBUF_INIT;
	for (size_t i = 0; i < inv->rdma.n; i++) {
		const struct rdma_dev *d = &inv->rdma.v[i];
		const struct pci_dev *p = d->pci_bdf ? pci_find(&inv->pci, d->pci_bdf) : NULL;
		const char *prov = provider_for_driver(p ? p->driver : NULL);
		if (!prov) {
			strbuf_addf(&unknown, "%s%s (%s)", unknown.len ? ", " : "", d->name,
				    !p ? "not a PCI device" : p->driver ? p->driver : "no PCI driver bound");
			continue;
		}
		size_t k = 0;
		while (k < n_needs && strcmp(needs[k].provider, prov))
			k++;
		if (k == n_needs) {
			if (n_needs == ARRAY_SIZE(needs))
				continue;
			needs[n_needs++] = (struct need){ .provider = prov, .devs = STRBUF_INIT };
		}
		strbuf_addf(&needs[k].devs, "%s%s", needs[k].n ? ", " : "", d->name);
		needs[k].n++;
	}
	for (size_t k = 0; k < n_needs; k++) {
		judge(c, &needs[k]);
		strbuf_release(&needs[k].devs);
	}
	if (unknown.len)
		check_add(c, STATUS_SKIP, "other devices", "which libibverbs provider serves %s is not known here",
			  unknown.buf);
	strbuf_release(&unknown);
	return 0;
}

const struct check_def check_rdma_verbs_provider = {
	.id = "rdma.verbs_provider",
	.section = "RDMA Devices",
	.summary = "libibverbs has the user-space provider (/etc/libibverbs.d, lib<name>-rdmav*.so) for each RDMA "
		   "device's driver",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
};
