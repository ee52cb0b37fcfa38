/* `gpuready topo`: the GPU/NIC distance matrix, like `nvidia-smi topo -m`.
 *
 * Rows and columns are the NVIDIA GPUs (GPU0.. in PCI order) and the RDMA
 * devices; entries are the PCIe path classes from inventory/topo.c. On the
 * live machine, GPU pairs joined by NVLink through NVSwitches show NV<n>
 * with n the GPU's active NVLinks (what nvidia-smi shows on HGX systems;
 * derived from NVML's per-GPU link count, not per-pair link maps). Then
 * each device's CPU affinity and NUMA node, and the legend. --json gives
 * the same as one object (docs/topo.schema.json), also with no device,
 * with text from sysfs made valid UTF-8 (utf8_clean). Whether stdout was
 * written is main()'s to check. */
#include "cmd.h"
#include "core/cleanup.h"
#include "core/report.h"
#include "inventory/inventory.h"
#include "inventory/topo.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

struct node {
	char label[64];
	const struct pci_dev *pci;
	bool gpu;
	int nvlinks;
};

static size_t collect(const struct inventory *inv, struct node **ret)
{
	const struct pci_dev **gpus = NULL;
	size_t ng = topo_gpus(inv, &gpus);
	struct node *v = xcalloc(ng + inv->rdma.n + 1, sizeof(*v));
	size_t n = 0;
	bool nvswitch = false;
	for (size_t i = 0; i < inv->pci.n; i++) {
		const struct pci_dev *p = &inv->pci.v[i];
		nvswitch |= !p->ids_err && !p->class_err && p->vendor == VENDOR_NVIDIA && (p->class_code >> 8) == 0x0680;
	}
	for (size_t i = 0; i < ng; i++, n++) {
		snprintf(v[n].label, sizeof(v[n].label), "GPU%zu", i);
		v[n].pci = gpus[i];
		v[n].gpu = true;
		if (inv->nvml && nvswitch)
			for (size_t k = 0; k < inv->nvml->n; k++)
				if (!strcasecmp(inv->nvml->v[k].bdf, gpus[i]->bdf))
					v[n].nvlinks = inv->nvml->v[k].nvlink_links - inv->nvml->v[k].nvlink_down;
	}
	for (size_t i = 0; i < inv->rdma.n; i++) {
		const struct pci_dev *p = pci_find(&inv->pci, inv->rdma.v[i].pci_bdf);
		if (!p)
			continue;
		snprintf(v[n].label, sizeof(v[n].label), "%s", inv->rdma.v[i].name);
		v[n].pci = p;
		n++;
	}
	free(gpus);
	*ret = v;
	return n;
}

static void cell(const struct node *a, const struct node *b, char *buf, size_t size)
{
	if (a == b) {
		snprintf(buf, size, "X");
		return;
	}
	if (a->gpu && b->gpu && a->nvlinks > 0 && b->nvlinks > 0) {
		snprintf(buf, size, "NV%d", a->nvlinks < b->nvlinks ? a->nvlinks : b->nvlinks);
		return;
	}
	snprintf(buf, size, "%s", path_class_name(pci_path_class(a->pci, b->pci, NULL)));
}

static const char *const legend[][2] = {
	{ "X", "Self" },
	{ "SYS", "Connection traversing PCIe as well as the SMP interconnect between NUMA nodes" },
	{ "NODE", "Connection traversing PCIe as well as the interconnect between PCIe host bridges within a NUMA node" },
	{ "PHB", "Connection traversing PCIe as well as a PCIe host bridge (typically the CPU)" },
	{ "PXB", "Connection traversing multiple PCIe bridges (without traversing the PCIe host bridge)" },
	{ "PIX", "Connection traversing at most a single PCIe bridge" },
	{ "NV#", "Connection traversing a bonded set of # NVLinks" },
};

static int print_text(const struct node *v, size_t n)
{
	char c[16];
	int w = 8;
	for (size_t i = 0; i < n; i++)
		if ((int)strlen(v[i].label) + 2 > w)
			w = (int)strlen(v[i].label) + 2;
	printf("%-*s", w, "");
	for (size_t j = 0; j < n; j++)
		printf("%-*s", w, v[j].label);
	printf("%-20s %s\n", "CPU Affinity", "NUMA Affinity");
	for (size_t i = 0; i < n; i++) {
		printf("%-*s", w, v[i].label);
		for (size_t j = 0; j < n; j++) {
			cell(&v[i], &v[j], c, sizeof(c));
			printf("%-*s", w, c);
		}
		if (v[i].pci->numa_node >= 0)
			snprintf(c, sizeof(c), "%d", v[i].pci->numa_node);
		else
			snprintf(c, sizeof(c), "N/A");
		printf("%-20s %s\n", v[i].pci->local_cpulist ? v[i].pci->local_cpulist : "N/A", c);
	}
	printf("\nLegend:\n\n");
	for (size_t i = 0; i < sizeof(legend) / sizeof(legend[0]); i++)
		printf("  %-4s = %s\n", legend[i][0], legend[i][1]);
	printf("\nPCIe classes come from the sysfs PCI tree and NUMA nodes (NCCL calls NODE PHB).\n");
	return 0;
}

static int print_json(const struct node *v, size_t n, const char *sysroot)
{
	char c[16];
	json_object *root = json_object_new_object(), *devs = json_object_new_array(), *m = json_object_new_array();
	json_object_object_add(root, "sysroot", utf8_json_string(sysroot));
	for (size_t i = 0; i < n; i++) {
		json_object *d = json_object_new_object(), *row = json_object_new_array();
		json_object_object_add(d, "name", utf8_json_string(v[i].label));
		json_object_object_add(d, "kind", json_object_new_string(v[i].gpu ? "gpu" : "nic"));
		json_object_object_add(d, "pci", utf8_json_string(v[i].pci->bdf));
		json_object_object_add(d, "numa_node", json_object_new_int(v[i].pci->numa_node));
		json_object_object_add(d, "cpus", v[i].pci->local_cpulist ? utf8_json_string(v[i].pci->local_cpulist) : NULL);
		json_object_array_add(devs, d);
		for (size_t j = 0; j < n; j++) {
			cell(&v[i], &v[j], c, sizeof(c));
			json_object_array_add(row, json_object_new_string(c));
		}
		json_object_array_add(m, row);
	}
	json_object_object_add(root, "devices", devs);
	json_object_object_add(root, "matrix", m);
	json_object *leg = json_object_new_object();
	for (size_t i = 0; i < sizeof(legend) / sizeof(legend[0]); i++)
		json_object_object_add(leg, legend[i][0], json_object_new_string(legend[i][1]));
	json_object_object_add(root, "legend", leg);
	puts(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	return 0;
}

int cmd_topo(struct cmd_env *env)
{
	_cleanup_root_ struct root *root = NULL;
	_cleanup_inventory_ struct inventory *inv = NULL;
	if (load_for_command(env, INV_GPU | INV_LIVE_NVML, &root, &inv))
		return EXIT_TOOL_ERROR;
	struct node *v = NULL;
	size_t n = collect(inv, &v);
	if (n == 0)
		fprintf(stderr, "%s topo: no NVIDIA GPU and no RDMA device on PCI\n", env->progname);
	/* --json is a document in every case (docs/topo.schema.json) */
	if (env->set->json)
		print_json(v, n, env->set->sysroot ? env->set->sysroot : "/");
	else if (n > 0)
		print_text(v, n);
	free(v);
	return n == 0 ? EXIT_CHECK_FAILED : EXIT_OK;
}
