/* gpu.pcie_link: GPUs and RDMA NICs run their PCIe links at full width,
 * and GPUs expose a BAR1 large enough for GPUDirect.
 *
 * From sysfs current_/max_link_width and _speed (Linux drivers/pci/pci-sysfs.c). A reduced
 * width is a warn (a bad riser, a dirty or half-seated card: bandwidth is
 * cut in proportion). A GPU at a reduced speed with full width is fine:
 * idle GPUs drop their link speed to save power — unless NVML (live) says
 * the link's maximum itself is below what the GPU can do (a slot or bridge
 * limit). NICs do not power-manage their links that way, so a reduced NIC
 * speed is a warn. BAR1 below --min-bar1 (1 GiB) is a warn: GPUDirect maps
 * GPU memory for peers through it. */
#include "checks/check.h"
#include "common.h"
#include "core/readers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* PCIe generation of a link speed in GT/s. */
static int gen_of(double gts)
{
	static const double g[] = { 2.5, 5, 8, 16, 32, 64 };
	for (int i = 0; i < 6; i++)
		if (fabs(gts - g[i]) < 0.1)
			return i + 1;
	return 0;
}

static void link_check(struct check_ctx *c, const struct pci_dev *p, const char *what, bool is_gpu)
{
	struct finding *f;
	if (!p->max_width || !p->cur_width || p->max_speed <= 0 || p->cur_speed <= 0) {
		check_add(c, STATUS_SKIP, p->bdf, "%s: link attributes not readable (old kernel or not recorded)", what);
		return;
	}
	if (p->cur_width < p->max_width) {
		f = check_add(c, STATUS_WARN, p->bdf, "%s: PCIe link x%d of x%d at %g GT/s: %d%% of its bandwidth", what,
			      p->cur_width, p->max_width, p->cur_speed, p->cur_width * 100 / p->max_width);
		finding_compare_num(f, p->cur_width, p->max_width);
		finding_hint(f, "reseat the card or its riser/cable and check the slot (`lspci -vv -s %s`: LnkSta "
				"vs LnkCap); a persistent x8 on an x16 card is a hardware fault",
			     p->bdf);
		return;
	}
	const struct nvml_gpu *n = is_gpu ? nvml_for(c->inv, p->bdf) : NULL;
	int dev_gen = gen_of(p->max_speed);
	if (n && n->pcie_gen_max > 0 && dev_gen && n->pcie_gen_max < dev_gen) {
		f = check_add(c, STATUS_WARN, p->bdf, "%s: the link can only reach Gen%d (NVML) though the GPU "
						      "supports Gen%d: the slot or a bridge limits it",
			      what, n->pcie_gen_max, dev_gen);
		finding_hint(f, "check the BIOS PCIe speed setting for this slot and the switch/riser generation");
		return;
	}
	if (p->cur_speed < p->max_speed) {
		if (is_gpu) {
			f = check_add(c, STATUS_OK, p->bdf, "%s: x%d, %g of %g GT/s (idle GPUs lower their link "
							    "speed; full speed returns under load)",
				      what, p->cur_width, p->cur_speed, p->max_speed);
			return;
		}
		f = check_add(c, STATUS_WARN, p->bdf, "%s: PCIe link at %g of %g GT/s (x%d)", what, p->cur_speed,
			      p->max_speed, p->cur_width);
		finding_compare_num(f, p->cur_speed, p->max_speed);
		finding_hint(f, "check the slot generation and BIOS PCIe speed setting (`lspci -vv -s %s`)", p->bdf);
		return;
	}
	check_add(c, STATUS_OK, p->bdf, "%s: x%d at %g GT/s (maximum)", what, p->cur_width, p->cur_speed);
}

static void bar1(struct check_ctx *c, const struct pci_dev *p, const char *what)
{
	if (p->resource_err) {
		check_add(c, STATUS_SKIP, p->bdf, "%s: BAR1 unknown (/sys/bus/pci/devices/%s/resource: %s)", what, p->bdf,
			  read_strerror(p->resource_err));
		return;
	}
	/* resource line 1 is BAR0, 2 is BAR1 when BAR0 is 32-bit; 64-bit BARs
	 * take two slots, so BAR1 of a GPU is the first large BAR after BAR0 */
	uint64_t b1 = 0;
	for (int i = 1; i < 6; i++)
		if (p->bar_size[i]) {
			b1 = p->bar_size[i];
			break;
		}
	double gib = (double)b1 / (1024.0 * 1024 * 1024);
	if (b1 && gib < c->expect->min_bar1_gib) {
		struct finding *f = check_add(c, STATUS_WARN, p->bdf, "%s: BAR1 is %.0f MiB, below %g GiB: GPUDirect "
								      "RDMA can map little GPU memory",
					      what, (double)b1 / (1024.0 * 1024), c->expect->min_bar1_gib);
		finding_compare_num(f, gib, c->expect->min_bar1_gib);
		finding_hint(f, "enable Resizable BAR / Above 4G decoding in the BIOS (and for the NVIDIA driver "
				"NVreg_EnableResizableBar=1), then reboot");
	} else if (b1) {
		check_add(c, STATUS_OK, p->bdf, "%s: BAR1 %.0f GiB", what, gib);
	} else {
		check_add(c, STATUS_SKIP, p->bdf, "%s: BAR1 unknown (/sys/bus/pci/devices/%s/resource lists no BAR "
						  "after BAR0)",
			  what, p->bdf);
	}
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct pci_dev **gpus = NULL;
	size_t n = topo_gpus(inv, &gpus);
	char model[128], what[160];
	for (size_t i = 0; i < n; i++) {
		snprintf(what, sizeof(what), "GPU %s", gpu_model(inv, gpus[i], model, sizeof(model)));
		link_check(c, gpus[i], what, true);
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(what, sizeof(what), "GPU %s", gpu_model(inv, gpus[i], model, sizeof(model)));
		bar1(c, gpus[i], what);
	}
	free(gpus);
	/* each NIC function once, however many RDMA devices sit on it */
	bool *seen = xcalloc(inv->pci.n + 1, sizeof(*seen));
	for (size_t i = 0; i < inv->rdma.n; i++) {
		const struct pci_dev *p = pci_find(&inv->pci, inv->rdma.v[i].pci_bdf);
		if (!p || seen[p - inv->pci.v])
			continue;
		seen[p - inv->pci.v] = true;
		snprintf(what, sizeof(what), "NIC %s", inv->rdma.v[i].name);
		link_check(c, p, what, false);
	}
	free(seen);
	if (n == 0 && inv->rdma.n == 0)
		check_add(c, STATUS_SKIP, "gpu", "no NVIDIA GPU or RDMA NIC on PCI");
	return 0;
}

const struct check_def check_gpu_pcie_link = {
	.id = "gpu.pcie_link",
	.section = "PCIe Links",
	.summary = "GPU and RDMA NIC PCIe links at full width (idle GPU speed drops are fine); GPU BAR1 >= --min-bar1",
	.run = run,
};
