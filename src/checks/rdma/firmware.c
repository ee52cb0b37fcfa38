/* rdma.firmware: NICs of the same model run the same firmware.
 *
 * Mixed firmware on identical NICs in one node is a classic source of
 * "one rail is slow" and of behaviour that differs between rails; vendors
 * qualify a fleet on one version. Grouped by model (PCI ID, else
 * hca_type). */
#include "checks/check.h"
#include "common.h"
#include "core/readers.h"

#include <string.h>

/* The hints name a real NIC of the node: the first of the model for the
 * reset, an unreadable one for ethtool (mlxfwreset and ethtool take a PCI
 * address and a netdev; NVIDIA's MFT and ethtool(8) documentation). */
static void fw_update_hint(struct finding *f, const char *model, const struct rdma_dev *first)
{
	if (first && first->pci_bdf)
		finding_hint(f, "update all %s NICs to one qualified firmware (`mlxfwmanager --query`, then "
				"`mlxfwmanager -u`), then reboot, or reset each NIC (`mlxfwreset -d %s reset`, "
				"likewise for the others)",
			     model, first->pci_bdf);
	else
		finding_hint(f, "update all %s NICs to one qualified firmware (`mlxfwmanager --query`, then "
				"`mlxfwmanager -u`), then reboot",
			     model);
}

static void fw_query_hint(struct finding *f, const struct rdma_dev *d)
{
	const char *netdev = NULL;
	for (size_t p = 0; d && p < d->n_ports && !netdev; p++)
		netdev = d->ports[p].netdev;
	if (netdev)
		finding_hint(f, "`mlxfwmanager --query` shows every NIC's firmware (`ethtool -i %s` this one's, "
				"as firmware-version)",
			     netdev);
	else
		finding_hint(f, "`mlxfwmanager --query` shows every NIC's firmware");
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	struct strv done = STRV_INIT;
	if (inv->rdma.n == 0) {
		check_add(c, STATUS_SKIP, SUBJECT_NODE, "no RDMA devices");
		return 0;
	}
	for (size_t i = 0; i < inv->rdma.n; i++) {
		const char *model = rdma_dev_model(inv, &inv->rdma.v[i]);
		if (strv_contains(&done, model))
			continue;
		strv_add(&done, model);
		struct strv versions = STRV_INIT;
		struct strbuf who = STRBUF_INIT, unread = STRBUF_INIT;
		size_t count = 0, unknown = 0;
		const struct rdma_dev *first = NULL, *unknown_one = NULL;
		for (size_t k = i; k < inv->rdma.n; k++) {
			const struct rdma_dev *d = &inv->rdma.v[k];
			if (strcmp(rdma_dev_model(inv, d), model))
				continue;
			if (!first)
				first = d;
			if (!d->fw_ver && !unknown_one)
				unknown_one = d;
			count++;
			const char *fw = d->fw_ver ? d->fw_ver : "unknown";
			/* an unreadable version is not a second version */
			if (d->fw_ver && !strv_contains(&versions, fw))
				strv_add(&versions, fw);
			strbuf_addf(&who, "%s%s=%s", who.len ? ", " : "", d->name, fw);
			if (!d->fw_ver) {
				unknown++;
				strbuf_addf(&unread, "%s/sys/class/infiniband/%s/fw_ver: %s", unread.len ? ", " : "",
					    d->name, read_strerror(d->fw_ver_err));
			}
		}
		if (versions.n > 1) {
			struct finding *f = check_add(c, STATUS_WARN, model, "%zu NICs run %zu firmware versions: %s",
						      count, versions.n, who.buf);
			fw_update_hint(f, model, first);
		} else if (versions.n == 1 && unknown) {
			struct finding *f = check_add(c, STATUS_WARN, model,
						      "%zu of %zu NICs on firmware %s; the others' cannot be read (%s)",
						      count - unknown, count, versions.v[0], unread.buf);
			fw_query_hint(f, unknown_one);
		} else if (versions.n == 1) {
			check_add(c, STATUS_OK, model, "%zu NIC%s on firmware %s", count, count == 1 ? "" : "s",
				  versions.v[0]);
		} else {
			check_add(c, STATUS_SKIP, model, "firmware version unreadable (%s)", unread.buf);
		}
		strv_free(&versions);
		strbuf_release(&who);
		strbuf_release(&unread);
	}
	strv_free(&done);
	return 0;
}

const struct check_def check_rdma_firmware = {
	.id = "rdma.firmware",
	.section = "Port Health",
	.summary = "NICs of one model run one firmware version",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
};
