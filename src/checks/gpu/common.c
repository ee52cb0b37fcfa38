/* GPU/GPUDirect policy helpers; see common.h. */
#include "common.h"
#include "core/parse.h"
#include "core/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
	uint32_t id;
	const char *name;
} models[] = {
	/* pciutils pci.ids, vendor 10de */
	{ 0x15f8, "Tesla P100-PCIE-16GB" },
	{ 0x1db1, "Tesla V100-SXM2-16GB" },
	{ 0x1db4, "Tesla V100-PCIE-16GB" },
	{ 0x1db5, "Tesla V100-SXM2-32GB" },
	{ 0x20b0, "A100-SXM4-40GB" },
	{ 0x20b2, "A100-SXM4-80GB" },
	{ 0x20b5, "A100 80GB PCIe" },
	{ 0x2330, "H100 SXM5 80GB" },
	{ 0x2331, "H100 PCIe" },
	{ 0x2335, "H200 SXM 141GB" },
	{ 0x2e12, "GB10" },
};

const char *gpu_model(const struct inventory *inv, const struct pci_dev *p, char *buf, size_t size)
{
	const struct nvidia_gpu_info *g = nvproc_for(inv, p->bdf);
	const struct nvml_gpu *n = nvml_for(inv, p->bdf);
	if (g && g->model) {
		snprintf(buf, size, "%s", g->model);
		return buf;
	}
	if (n && n->name[0]) {
		snprintf(buf, size, "%s", n->name);
		return buf;
	}
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		if (models[i].id == p->device) {
			snprintf(buf, size, "NVIDIA %s", models[i].name);
			return buf;
		}
	if (p->ids_err)
		snprintf(buf, size, "NVIDIA GPU (PCI IDs not recorded)");
	else
		snprintf(buf, size, "NVIDIA %04x:%04x", p->vendor, p->device);
	return buf;
}

enum xid_class xid_classify(int code)
{
	switch (code) {
	case 48: case 62: case 64: case 74: case 79: case 92: case 94: case 95: case 119: case 120:
		return XID_FATAL;
	case 13: case 31: case 43: case 45:
		return XID_APP;
	default:
		return XID_OTHER;
	}
}

const char *xid_meaning(int code)
{
	switch (code) {
	case 13: return "graphics engine exception (usually an application fault)";
	case 31: return "GPU memory page fault (usually an application's illegal access)";
	case 43: return "GPU stopped processing (the application faulted)";
	case 45: return "preemptive cleanup after earlier errors";
	case 48: return "double-bit ECC error";
	case 61: return "internal micro-controller breakpoint/warning";
	case 62: return "internal micro-controller halt";
	case 63: return "ECC page retirement or row remapping recorded";
	case 64: return "ECC page retirement or row remapping failure";
	case 74: return "NVLink error";
	case 79: return "GPU has fallen off the bus";
	case 92: return "high single-bit ECC error rate";
	case 94: return "contained ECC error";
	case 95: return "uncontained ECC error";
	case 119: return "GSP RPC timeout";
	case 120: return "GSP error";
	default: return NULL;
	}
}

bool kernel_version(const char *release, int *major, int *minor)
{
	return release && sscanf(release, "%d.%d", major, minor) == 2;
}

const struct nvml_gpu *nvml_for(const struct inventory *inv, const char *bdf)
{
	if (!inv->nvml || !bdf)
		return NULL;
	for (size_t i = 0; i < inv->nvml->n; i++)
		if (!strcasecmp(inv->nvml->v[i].bdf, bdf))
			return &inv->nvml->v[i];
	return NULL;
}

const struct cuda_gpu *cuda_for(const struct inventory *inv, const char *bdf)
{
	if (!inv->cuda || !bdf)
		return NULL;
	for (size_t i = 0; i < inv->cuda->n; i++)
		if (!strcasecmp(inv->cuda->v[i].bdf, bdf))
			return &inv->cuda->v[i];
	return NULL;
}

const struct nvidia_gpu_info *nvproc_for(const struct inventory *inv, const char *bdf)
{
	for (size_t i = 0; i < inv->nvidia.n_gpus; i++)
		if (!strcasecmp(inv->nvidia.gpus[i].bdf, bdf))
			return &inv->nvidia.gpus[i];
	return NULL;
}

bool xid_names(const char *xid_pci, const struct pci_dev *p)
{
	size_t n = strlen(xid_pci);
	/* the log may drop leading zeros of the domain: compare from the end */
	const char *dot = strrchr(p->bdf, '.');
	size_t bl = dot ? (size_t)(dot - p->bdf) : strlen(p->bdf);
	if (n > bl)
		return false;
	return !strncasecmp(p->bdf + bl - n, xid_pci, n);
}

enum path_class gdr_level(const struct inventory *inv, char *shown, size_t size)
{
	static const struct {
		const char *name;
		enum path_class cls;
	} names[] = {
		{ "LOC", PATH_SELF }, { "NVL", PATH_PIX }, { "NVB", PATH_PIX }, { "C2C", PATH_PIX }, { "PIX", PATH_PIX },
		{ "PXB", PATH_PXB },  { "P2C", PATH_PXB }, { "PXN", PATH_PXB }, { "PHB", PATH_NODE }, { "SYS", PATH_SYS },
	};
	static const enum path_class legacy[] = { PATH_SELF, PATH_PIX, PATH_PXB, PATH_NODE, PATH_SYS };
	const struct nccl_var *v = nccl_get(&inv->nccl, "NCCL_NET_GDR_LEVEL");
	if (v) {
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(v->value, names[i].name)) {
				snprintf(shown, size, "NCCL_NET_GDR_LEVEL=%s", v->value);
				return names[i].cls;
			}
		if (v->value[0] >= '0' && v->value[0] <= '9') {
			long n = strtol(v->value, NULL, 0);
			snprintf(shown, size, "NCCL_NET_GDR_LEVEL=%s", v->value);
			return legacy[n < 0 ? 0 : n > 4 ? 4 : n];
		}
	}
	snprintf(shown, size, "NCCL_NET_GDR_LEVEL default PXB");
	return PATH_PXB;
}

size_t gpu_pairs(const struct inventory *inv, struct gpu_pair **ret)
{
	const struct pci_dev **gpus = NULL;
	size_t n = topo_gpus(inv, &gpus);
	struct gpu_pair *v = xcalloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		v[i].gpu = gpus[i];
		v[i].nic = topo_nearest_nic(inv, gpus[i], &v[i].cls);
		v[i].nic_pci = v[i].nic ? pci_find(&inv->pci, v[i].nic->pci_bdf) : NULL;
	}
	free(gpus);
	*ret = v;
	return n;
}
