/* rdma.port_errors: the port error counters are zero.
 *
 * PMA counters in ports/N/counters (Linux drivers/infiniband/core/sysfs.c): symbol errors,
 * receive errors, link error recoveries, local link integrity and
 * buffer overrun errors point at cables, transceivers or a flapping link.
 * link_downed is judged by rdma.link_flaps, against the time since boot.
 * They count since the last reset (driver load or `perfquery -R`), so a
 * small value can be old news: the values are shown for the operator. */
#include "checks/check.h"
#include "common.h"


static const char *const error_counters[] = {
	"symbol_error", "port_rcv_errors", "link_error_recovery",
	"local_link_integrity_errors", "excessive_buffer_overrun_errors",
};

static int run(struct check_ctx *c)
{
	char lbl[96];
	size_t ports = 0;
	const struct rdma_dev *d;
	const struct rdma_port *p;
	for_each_rdma_port(&c->inv->rdma, d, p) {
		port_label(d, p, lbl, sizeof(lbl));
		ports++;
		if (p->n_counters == 0) {
			check_add(c, STATUS_SKIP, lbl, "no counters readable");
			continue;
		}
		struct strbuf bad = STRBUF_INIT, why = STRBUF_INIT, unread = STRBUF_INIT;
		size_t seen = counters_summary(p->counters, p->n_counters, error_counters, ARRAY_SIZE(error_counters),
					       &bad, NULL, &why, &unread, true);
		if (unread.len) {
			counters_unread_warn(c, d, p, "error", "counters", &unread, &bad);
		} else if (bad.len) {
			struct finding *f = check_add(c, STATUS_WARN, lbl, "error counters nonzero: %s", bad.buf);
			finding_hint(f, "%s. Check the cable/transceiver and the switch port (`mlxlink -d %s` if MFT is "
					"installed, switch logs), then watch whether they grow "
					"(`grep . /sys/class/infiniband/%s/ports/%u/counters/*`)",
				     why.buf, d->pci_bdf ? d->pci_bdf : d->name, d->name, p->num);
		} else {
			check_add(c, STATUS_OK, lbl, "%zu error counters are 0", seen);
		}
		strbuf_release(&bad);
		strbuf_release(&why);
		strbuf_release(&unread);
	}
	if (ports == 0)
		check_add(c, STATUS_SKIP, SUBJECT_NODE, "no RDMA ports to check");
	return 0;
}

const struct check_def check_rdma_port_errors = {
	.id = "rdma.port_errors",
	.section = "Port Health",
	.summary = "port error counters (symbol errors, receive errors, link error recoveries...) are zero",
	.run = run,
	.needs = NEEDS_RDMA_DEVICE,
};
