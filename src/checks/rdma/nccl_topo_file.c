/* rdma.nccl_topo_file: the topology file NCCL loads exists and describes
 * this node's own GPUs and NICs.
 *
 * NCCL loads the XML file NCCL_TOPO_FILE names, else
 * /var/run/nvidia-topologyd/virtualTopology.xml when it exists (NCCL
 * src/graph/topo.cc ncclTopoGetSystem; inventory/nccl_topo.c). Files built
 * for a cloud VM type describe that VM's PCI tree; on other hardware NCCL
 * attaches the real GPUs and NICs wherever their busid is missing from the
 * file and plans with the file's links for those it finds, so its
 * GPU-to-NIC pairing ignores the real PCIe layout (the symptom of images
 * built for one VM type used elsewhere). So:
 *   - NCCL_TOPO_FILE names a file that is missing or unreadable: NCCL logs
 *     that only at NCCL_DEBUG=INFO and detects the topology itself, the
 *     setting does nothing: warn;
 *   - a GPU (class 0x03xxxx) or NIC (class 0x02xxxx) busid in the file that
 *     is no PCI function of this node, or a GPU of this node the file does
 *     not list: fail, naming them;
 *   - a file with no GPU or NIC at all: warn (not a topology NCCL can use). */
#include "checks/check.h"
#include "checks/gpu/common.h"
#include "common.h"
#include "core/readers.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

static bool in_file(const struct nccl_topo_file *t, const char *bdf)
{
	for (size_t i = 0; i < t->n_pci; i++)
		if (!strcasecmp(t->pci[i].busid, bdf))
			return true;
	return false;
}

/* Compares the file with the node; true when it matches. */
static bool compare(struct check_ctx *c, const struct nccl_topo_file *t, const char *what, const char *place)
{
	const struct inventory *inv = c->inv;
	struct strbuf foreign = STRBUF_INIT, missing = STRBUF_INIT;
	size_t gpus = 0, nics = 0;
	for (size_t i = 0; i < t->n_pci; i++) {
		unsigned base = t->pci[i].class_code >> 16;
		if (base != 0x03 && base != 0x02)
			continue; /* bridges, NVSwitches, virtual switches (ffff:..) */
		base == 0x03 ? gpus++ : nics++;
		if (!pci_find(&inv->pci, t->pci[i].busid))
			strbuf_addf(&foreign, "%s%s %s", foreign.len ? ", " : "", base == 0x03 ? "GPU" : "NIC",
				    t->pci[i].busid);
	}
	const struct pci_dev **g = NULL;
	size_t ng = topo_gpus(inv, &g);
	for (size_t i = 0; i < ng; i++)
		if (!in_file(t, g[i]->bdf))
			strbuf_addf(&missing, "%s%s", missing.len ? ", " : "", g[i]->bdf);
	free(g);
	struct finding *f = NULL;
	if (gpus + nics == 0) {
		f = check_add(c, STATUS_WARN, "NCCL_TOPO_FILE", "%s lists no GPU or NIC (no <pci> element of class 0x03xxxx "
								"or 0x02xxxx): not a topology NCCL can use",
			      what);
	} else if (foreign.len || missing.len) {
		f = check_add(c, STATUS_FAIL, "NCCL_TOPO_FILE", "%s describes other PCI devices than this node's%s%s%s%s: "
								"NCCL plans rings, trees and GPU-NIC pairs on that layout "
								"instead of the real one",
			      what, foreign.len ? "; not on this node: " : "", foreign.buf,
			      missing.len ? "; this node's GPUs it does not list: " : "", missing.buf);
	} else {
		check_add(c, STATUS_OK, "NCCL_TOPO_FILE", "%s describes this node's PCI devices (%zu GPUs, %zu NICs, all "
							  "present)",
			  what, gpus, nics);
	}
	if (f)
		finding_hint(f, "%s; to write a file for this node, run one job with NCCL_TOPO_DUMP_FILE set and the "
				"variable unset",
			     place);
	strbuf_release(&foreign);
	strbuf_release(&missing);
	return f == NULL;
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	const struct nccl_topo_file *t = &inv->nccl.topo;
	const struct nccl_var *v = nccl_get(&inv->nccl, "NCCL_TOPO_FILE");
	char what[512], place[512], where[256];
	struct finding *f;
	if (t->why) {
		check_add(c, STATUS_SKIP, "NCCL_TOPO_FILE", "%s: not judged", t->why);
		return 0;
	}
	if (!t->path) {
		check_add(c, STATUS_OK, "NCCL_TOPO_FILE", "not set, and no /var/run/nvidia-topologyd/virtualTopology.xml: "
							  "NCCL detects the topology from sysfs");
		return 0;
	}
	if (v) {
		snprintf(what, sizeof(what), "NCCL_TOPO_FILE=%s (%s)", t->path, v->source);
		snprintf(place, sizeof(place), "remove NCCL_TOPO_FILE from %s", nccl_var_place(v, where, sizeof(where)));
	} else {
		snprintf(what, sizeof(what), "%s (NCCL loads it by default)", t->path);
		snprintf(place, sizeof(place), "remove %s (`ls -l %s`)", t->path, t->path);
	}
	if (t->err) {
		f = check_add(c, STATUS_WARN, "NCCL_TOPO_FILE", "%s: %s; NCCL skips a file it cannot open (a line at "
								"NCCL_DEBUG=INFO only) and detects the topology itself",
			      what, read_strerror(t->err));
		finding_hint(f, "%s, or install the file this node's topology needs (`ls -l %s`)", place, t->path);
		return 0;
	}
	if (inv->pci.err) {
		check_add(c, STATUS_SKIP, "NCCL_TOPO_FILE", "%s: this node's PCI devices could not be listed (%s)", what,
			  read_strerror(inv->pci.err));
		return 0;
	}
	compare(c, t, what, place);
	return 0;
}

const struct check_def check_rdma_nccl_topo_file = {
	.id = "rdma.nccl_topo_file",
	.section = "NCCL Configuration",
	.summary = "the NCCL topology file (NCCL_TOPO_FILE or NCCL's default) exists and lists this node's GPUs and NICs",
	.run = run,
	.nccl_vars = true,
};
