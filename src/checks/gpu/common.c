/* GPU/GPUDirect policy helpers; see common.h. */
#include "common.h"
#include "checks/check.h"
#include "core/parse.h"
#include "core/readers.h"
#include "core/strbuf.h"
#include "inventory/nvl5.h"

#include <errno.h>
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
	{ 0x2321, "H100 NVL" },
	{ 0x2335, "H200 SXM 141GB" },
	{ 0x2342, "GH200 120GB / 480GB" },
	{ 0x2348, "GH200 144G HBM3e" },
	{ 0x2e12, "GB10" },
};

/* GPUs of superchips, joined to their CPU by NVLink-C2C (pciutils pci.ids:
 * GH200 0x2342 and 0x2348, GB200 0x2941, GB300 0x31c2 and 0x31c3, GB10 0x2e12). */
static const uint32_t c2c_gpus[] = { 0x2342, 0x2348, 0x2941, 0x31c2, 0x31c3, 0x2e12 };

bool gpu_c2c(const struct pci_dev *gpu)
{
	if (gpu->vendor != VENDOR_NVIDIA)
		return false;
	for (size_t i = 0; i < sizeof(c2c_gpus) / sizeof(c2c_gpus[0]); i++)
		if (c2c_gpus[i] == gpu->device)
			return true;
	return false;
}

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

bool kernel_version(const char *release, int *major, int *minor)
{
	return release && sscanf(release, "%d.%d", major, minor) == 2;
}

const struct nvml_info *nvml_usable(struct check_ctx *c)
{
	const struct nvml_info *n = c->inv->nvml;
	if (!n || !n->loaded) {
		check_add(c, STATUS_SKIP, "nvml", "NVML cannot be used here (gpu.nvml says why)");
		return NULL;
	}
	if (n->n == 0) {
		check_add(c, STATUS_SKIP, "nvml", "NVML lists no GPU%s%s", n->error[0] ? ": " : "", n->error);
		return NULL;
	}
	return n;
}

const char *nvml_subject(const struct nvml_gpu *g, char *buf, size_t size)
{
	if (g->bdf[0])
		return g->bdf;
	snprintf(buf, size, "GPU %u", g->index);
	return buf;
}

const char *nvml_smi_id(const struct nvml_gpu *g, char *buf, size_t size)
{
	if (g->bdf[0])
		return g->bdf;
	snprintf(buf, size, "%u", g->index);
	return buf;
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

enum path_class gdr_level_for(const struct inventory *inv, const struct pci_dev *gpu, char *shown, size_t size)
{
	enum path_class level = gdr_level(inv, shown, size);
	const struct nccl_var *set = nccl_get(&inv->nccl, "NCCL_NET_GDR_LEVEL");
	const struct nccl_var *c2c = nccl_get(&inv->nccl, "NCCL_NET_GDR_C2C");
	if (!gpu_c2c(gpu) || (set && strcmp(set->value, "P2C")))
		return level;
	if (c2c && c2c->value[0] == '0' && !c2c->value[1]) {
		if (!set)
			snprintf(shown, size, "NCCL_NET_GDR_LEVEL default PXB (NCCL_NET_GDR_C2C=0, %s)", c2c->source);
		return PATH_PXB;
	}
	/* GPU -> C2C -> CPU -> PCIe -> NIC of that CPU: P2C, which NCCL's default allows */
	snprintf(shown, size, "%s: the GPU reaches its CPU over NVLink-C2C, and a NIC on that CPU is P2C",
		 set ? "NCCL_NET_GDR_LEVEL=P2C" : "NCCL_NET_GDR_LEVEL default P2C");
	return PATH_NODE;
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

const char *pci_maybe_gpu(const struct inventory *inv, const struct pci_dev *p)
{
	if (topo_is_gpu(inv, p))
		return NULL;
	bool display = !p->class_err && (p->class_code >> 16) == 0x03;
	if (p->ids_err && p->vendor == 0 && (p->class_err || display))
		return "vendor";
	if (p->vendor == VENDOR_NVIDIA && p->class_err)
		return "class";
	if (p->vendor == VENDOR_NVIDIA && p->ids_err && display)
		return "device";
	return NULL;
}

size_t gpu_unidentified(const struct inventory *inv, struct strbuf *files)
{
	size_t n = 0;
	for (size_t i = 0; i < inv->pci.n; i++) {
		const struct pci_dev *p = &inv->pci.v[i];
		const char *attr = pci_maybe_gpu(inv, p);
		if (!attr)
			continue;
		n++;
		if (files)
			strbuf_addf(files, "%s/sys/bus/pci/devices/%s/%s: %s", files->len ? ", " : "", p->bdf, attr,
				    read_strerror(!strcmp(attr, "class") ? p->class_err : p->ids_err));
	}
	return n;
}

const struct pci_dev *gpu_first_pre_turing(const struct inventory *inv)
{
	const struct pci_dev **gpus = NULL, *old = NULL;
	size_t n = topo_gpus(inv, &gpus);
	for (size_t i = 0; i < n && !old; i++)
		if (!gpus[i]->ids_err && gpus[i]->device < NV_FIRST_TURING_DEVICE) /* unread IDs prove nothing */
			old = gpus[i];
	free(gpus);
	return old;
}

size_t nvswitch_count(const struct inventory *inv)
{
	size_t n = 0;
	for (size_t i = 0; i < inv->pci.n; i++)
		if (inv->pci.v[i].vendor == VENDOR_NVIDIA && (inv->pci.v[i].class_code >> 8) == 0x0680)
			n++;
	return n;
}

size_t nvswitch_mgmt_count(const struct inventory *inv)
{
	size_t n = 0;
	for (size_t i = 0; i < inv->pci.n; i++)
		n += inv->pci.v[i].nvswitch_mgmt;
	return n;
}

const struct pci_dev *nvswitch_mgmt_unknown(const struct inventory *inv)
{
	for (size_t i = 0; i < inv->pci.n; i++) {
		const struct pci_dev *d = &inv->pci.v[i];
		if (d->ids_err == 0 && d->vendor == VENDOR_MELLANOX && !d->is_vf && d->vpd_err < 0 &&
		    d->vpd_err != -ENOENT && d->vpd_err != -ENODATA)
			return d;
	}
	return NULL;
}

const char *imex_domain(const struct inventory *inv)
{
	const struct fabric_info *f = &inv->fabric;
	if (f->imex.unit_path)
		return f->imex.unit_path;
	return f->imex_nodes_err == 0 ? IMEX_NODES_CONFIG : NULL;
}

bool nvlink_partial_by_design(const struct inventory *inv, const struct nvml_gpu *g)
{
	int up = g->nvlink_links - g->nvlink_down;
	if (!inv->nvml || g->nvlink_links <= 0 || up <= 0 || nvswitch_count(inv) > 0)
		return false;
	size_t peers = 0;
	for (size_t i = 0; i < inv->nvml->n; i++) {
		const struct nvml_gpu *p = &inv->nvml->v[i];
		if (strcmp(p->name, g->name) || p->nvlink_links <= 0)
			continue;
		if (p->nvlink_links - p->nvlink_down != up)
			return false;
		peers++;
	}
	return peers >= 2;
}

const struct pci_dev *gpu_first_blackwell(const struct inventory *inv)
{
	const struct pci_dev **gpus = NULL, *bw = NULL;
	size_t n = topo_gpus(inv, &gpus);
	for (size_t i = 0; i < n && !bw; i++)
		if (!gpus[i]->ids_err && gpus[i]->device >= NV_FIRST_BLACKWELL_DEVICE)
			bw = gpus[i];
	free(gpus);
	return bw;
}

const char *gpu_driver_package(const struct inventory *inv, bool open, char *buf, size_t size)
{
	const char *v = inv->nvidia.version;
	char *end = NULL;
	long branch = v ? strtol(v, &end, 10) : 0;
	if (!end || *end != '.' || branch <= 0 || branch > 9999)
		branch = open ? 570 : 535;
	snprintf(buf, size, "nvidia-driver-%ld%s", branch, open ? "-open" : "");
	return buf;
}

bool gpu_nvidia_loaded(const struct inventory *inv)
{
	return modules_state(&inv->modules, "nvidia") == MODULE_LOADED || inv->nvidia.proc_present;
}

/* The advice per class. NVIDIA's driver packages on Debian (non-free) are
 * libnvidia-ml1 and libcuda1; on Ubuntu and in NVIDIA's CUDA repository
 * both libraries are in libnvidia-compute-<branch>. Device nodes: NVIDIA's
 * driver README ("Device File Creation"): nvidia-modprobe, or NVML run as
 * root, creates them; NVreg_DeviceFileMode/UID/GID set their access. */
/* One row per (failure, library, module loaded) case; ANY matches every
 * value. gpu_lib_advise() returns the first row that matches. */
#define ANY (-1)
static const struct gpu_lib_advice_row {
	enum gpu_lib_fail fail;
	int lib;    /* enum gpu_lib or ANY */
	int module; /* 1 loaded, 0 not, ANY */
	struct gpu_lib_advice advice;
} gpu_lib_advice_rows[] = {
	{ GPU_LIB_FAIL_MISSING, ANY, 0,
	  { "the NVIDIA driver is not installed (no kernel module loaded, no user-space library found)",
	    "apt install nvidia-driver-570-open and reboot (the driver packages bring libnvidia-ml.so.1 and "
	    "libcuda.so.1)" } },
	{ GPU_LIB_FAIL_MISSING, GPU_LIB_NVML, ANY,
	  { "the driver's NVML library is not installed or cannot be loaded",
	    "install the user-space libraries of the running driver's branch (cat /proc/driver/nvidia/version): "
	    "apt install libnvidia-compute-<branch> on Ubuntu, apt install libnvidia-ml1 on Debian; ldconfig -p | "
	    "grep libnvidia-ml shows what the loader finds" } },
	{ GPU_LIB_FAIL_MISSING, GPU_LIB_CUDA, ANY,
	  { "the driver's CUDA library is not installed or cannot be loaded",
	    "install the user-space libraries of the running driver's branch (cat /proc/driver/nvidia/version): "
	    "apt install libnvidia-compute-<branch> on Ubuntu, apt install libcuda1 on Debian; ldconfig -p | grep "
	    "libcuda shows what the loader finds" } },
	{ GPU_LIB_FAIL_SYMBOL, GPU_LIB_NVML, ANY,
	  { "the library found lacks an entry point every driver of the last decade has: a very old driver, or "
	    "not NVIDIA's library",
	    "ldconfig -p | grep libnvidia-ml and echo $LD_LIBRARY_PATH show which file loads: remove a foreign "
	    "copy, or upgrade the driver (apt install nvidia-driver-570-open, then reboot)" } },
	{ GPU_LIB_FAIL_SYMBOL, GPU_LIB_CUDA, ANY,
	  { "the library found lacks an entry point every driver of the last decade has: a very old driver, or "
	    "not NVIDIA's library",
	    "ldconfig -p | grep libcuda and echo $LD_LIBRARY_PATH show which file loads: remove a foreign copy, "
	    "or upgrade the driver (apt install nvidia-driver-570-open, then reboot)" } },
	{ GPU_LIB_FAIL_STUB, GPU_LIB_NVML, ANY,
	  { "the CUDA toolkit's stub libnvidia-ml.so was loaded, not the driver's libnvidia-ml.so.1",
	    "ldconfig -p | grep libnvidia-ml and echo $LD_LIBRARY_PATH: remove the toolkit's stubs directory (e.g. "
	    "/usr/local/cuda/lib64/stubs) from LD_LIBRARY_PATH and /etc/ld.so.conf.d (then run ldconfig), and any "
	    "libnvidia-ml.so.1 link to the stub; the driver's libnvidia-ml1 / libnvidia-compute package installs "
	    "the real one" } },
	{ GPU_LIB_FAIL_STUB, GPU_LIB_CUDA, ANY,
	  { "the CUDA toolkit's stub libcuda.so was loaded, not the driver's libcuda.so.1",
	    "ldconfig -p | grep libcuda and echo $LD_LIBRARY_PATH: remove the toolkit's stubs directory (e.g. "
	    "/usr/local/cuda/lib64/stubs) from LD_LIBRARY_PATH and /etc/ld.so.conf.d (then run ldconfig), and any "
	    "libcuda.so.1 link to the stub; the driver's libcuda1 / libnvidia-compute package installs the real "
	    "one" } },
	{ GPU_LIB_FAIL_NO_DRIVER, ANY, 0,
	  { "the NVIDIA kernel module is not loaded (gpu.driver)",
	    "modprobe nvidia (dmesg | grep -i nvrm shows why it fails to load); after installing or upgrading "
	    "the driver, reboot" } },
	{ GPU_LIB_FAIL_NO_DRIVER, GPU_LIB_NVML, ANY,
	  { "the nvidia module is loaded, but NVML cannot reach the GPUs: /dev/nvidiactl or /dev/nvidia<N> is "
	    "missing (in a container: not passed in)",
	    "ls -l /dev/nvidia*; nvidia-smi run as root creates missing device nodes; in a container, start it "
	    "with the GPUs (docker run --gpus all)" } },
	{ GPU_LIB_FAIL_NO_DRIVER, GPU_LIB_CUDA, ANY,
	  { "the nvidia module is loaded, but CUDA sees no device: nvidia_uvm not loaded, /dev/nvidia* or "
	    "/dev/nvidia-uvm missing, or CUDA_VISIBLE_DEVICES hides every GPU",
	    "modprobe nvidia_uvm; ls -l /dev/nvidia*; echo $CUDA_VISIBLE_DEVICES; nvidia-smi run as root creates "
	    "missing device nodes" } },
	{ GPU_LIB_FAIL_MISMATCH, GPU_LIB_NVML, ANY,
	  { "libnvidia-ml.so.1 and the loaded kernel module come from different driver versions: the driver was "
	    "upgraded without a reboot",
	    "compare cat /proc/driver/nvidia/version with ls /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.*; reboot "
	    "(or, with nothing using the GPUs, unload and reload the nvidia modules)" } },
	{ GPU_LIB_FAIL_MISMATCH, GPU_LIB_CUDA, ANY,
	  { "libcuda.so.1 and the loaded kernel module come from different driver versions: the driver was "
	    "upgraded without a reboot, or a forward-compatibility libcuda (cuda-compat) this module does not "
	    "support is on LD_LIBRARY_PATH",
	    "compare cat /proc/driver/nvidia/version with ls -l /usr/lib/x86_64-linux-gnu/libcuda.so.* and echo "
	    "$LD_LIBRARY_PATH; reboot (or, with nothing using the GPUs, unload and reload the nvidia modules)" } },
	{ GPU_LIB_FAIL_COMPAT, ANY, ANY,
	  { "a forward-compatibility libcuda (the cuda-compat package) was loaded, but these GPUs do not support "
	    "CUDA forward compatibility",
	    "remove the cuda-compat directory (e.g. /usr/local/cuda/compat) from LD_LIBRARY_PATH and "
	    "/etc/ld.so.conf.d (then run ldconfig); upgrade the driver itself instead (apt install "
	    "nvidia-driver-570-open, then reboot)" } },
	/* A call that never returned. NVIDIA's XID errors documentation
	 * (docs.nvidia.com/deploy/xid-errors): Xid 79, "GPU has fallen off the
	 * bus"; NVML's API reference: NVML_ERROR_GPU_IS_LOST, "the GPU has
	 * fallen off the bus or has otherwise become inaccessible". A driver
	 * waiting on such a GPU can block its callers indefinitely. */
	{ GPU_LIB_FAIL_TIMEOUT, ANY, ANY,
	  { "a GPU that has fallen off the bus (Xid 79) or a driver in trouble blocks the driver's calls",
	    "dmesg | grep -i -e xid -e nvrm (Xid 79: a GPU fell off the bus; NVIDIA's XID errors documentation); "
	    "lspci -d 10de: shows whether every GPU is still on the bus; timeout 60 nvidia-smi (it blocks too, or "
	    "reports a GPU as lost); drain the node and reboot it" } },
	{ GPU_LIB_FAIL_PERMISSION, ANY, ANY,
	  { "this user may not open the GPU device nodes (/dev/nvidiactl, /dev/nvidia<N>), or a container's "
	    "device cgroup blocks them",
	    "ls -l /dev/nvidia*: they must be readable and writable by this user (the nvidia module's "
	    "NVreg_DeviceFileMode and NVreg_DeviceFileGID options in /etc/modprobe.d set that); run gpuready as "
	    "root to compare; in a container, pass the GPUs in (docker run --gpus all)" } },
};

void gpu_lib_unusable(struct check_ctx *c, enum gpu_lib lib, enum gpu_lib_fail fail, const char *error, size_t ng)
{
	const char *subject = lib == GPU_LIB_NVML ? "nvml" : "cuda";
	struct gpu_lib_advice a = gpu_lib_advise(lib, fail, gpu_nvidia_loaded(c->inv));
	bool said = strstr(error, a.cause) != NULL;
	struct finding *f;

	/* a GPU that fell off the bus may no longer be listed on PCI: without
	 * GPUs there, a call that never returned still fails */
	if (ng == 0 && fail != GPU_LIB_FAIL_TIMEOUT) {
		check_add(c, STATUS_SKIP, subject, "no NVIDIA GPU on PCI (%s)", error);
		return;
	}
	if (fail == GPU_LIB_FAIL_TIMEOUT) {
		gpu_call_hung(c, subject, error);
		return;
	}
	f = check_add(c, STATUS_FAIL, subject, "%s unusable with %zu GPUs on PCI: %s%s%s",
		      lib == GPU_LIB_NVML ? "NVML" : "CUDA", ng, error, said ? "" : "; ", said ? "" : a.cause);
	finding_hint(f, "%s", a.fix);
}

void gpu_call_hung(struct check_ctx *c, const char *subject, const char *error)
{
	/* the row is the same for every library and module state */
	struct gpu_lib_advice a = gpu_lib_advise(GPU_LIB_CUDA, GPU_LIB_FAIL_TIMEOUT, true);
	struct finding *f = check_add(c, STATUS_FAIL, subject, "%s: %s", error, a.cause);

	finding_hint(f, "%s", a.fix);
}

struct gpu_lib_advice gpu_lib_advise(enum gpu_lib lib, enum gpu_lib_fail fail, bool module_loaded)
{
	static const struct gpu_lib_advice other = {
		"the library's own error is all it says",
		"nvidia-smi shows whether the driver works at all; dmesg | grep -i nvrm shows the kernel module's "
		"errors; ls -l /dev/nvidia*",
	};

	for (size_t i = 0; i < sizeof(gpu_lib_advice_rows) / sizeof(gpu_lib_advice_rows[0]); i++) {
		const struct gpu_lib_advice_row *r = &gpu_lib_advice_rows[i];
		if (r->fail == fail && (r->lib == ANY || r->lib == (int)lib) &&
		    (r->module == ANY || r->module == (int)module_loaded))
			return r->advice;
	}
	return other;
}
#undef ANY

/* ---- NVIDIA's Xid catalog: what each code means and the immediate action
 * NVIDIA recommends for it, for Ampere and later GPUs.
 *
 * Source: NVIDIA, XID Errors, "Analyzing Xid Errors with the Xid Catalog"
 * (docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html), the
 * "Immediate" resolution bucket of each code; checked against the
 * machine-readable copy of that catalog in leptonai/gpud
 * components/accelerator/nvidia/xid/catalog_generated.go (generated from
 * the page on 2025-10-29). docs/failure-modes.md, "Xid catalog", lists the
 * same rows. Meanings are paraphrased. */

static const struct xid_entry catalog[] = {
	{ 1, 7, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 8, 8, XID_ACT_RESTART_APP, "GPU stopped processing (channel idle timeout)" },
	{ 9, 10, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 11, 11, XID_ACT_RESTART_APP, "invalid or corrupted push buffer stream" },
	{ 12, 12, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 13, 13, XID_ACT_RESTART_APP, "graphics engine exception (usually an application fault)" },
	{ 14, 14, XID_ACT_IGNORE, "injected test error" },
	{ 15, 24, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 25, 25, XID_ACT_RESTART_APP, "invalid or illegal push buffer stream" },
	{ 26, 30, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 31, 31, XID_ACT_RESTART_APP, "GPU memory page fault (usually an application's illegal access)" },
	{ 32, 32, XID_ACT_RESTART_APP, "invalid or corrupted push buffer stream (PBDMA)" },
	{ 33, 36, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 37, 38, XID_ACT_IGNORE, "driver firmware error" },
	{ 39, 41, XID_ACT_RESTART_APP, "copy engine exception" },
	{ 42, 42, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 43, 43, XID_ACT_IGNORE, "GPU stopped processing (the application faulted)" },
	{ 44, 44, XID_ACT_IGNORE, "graphics engine fault during context switch" },
	{ 45, 45, XID_ACT_FOLLOW, "preemptive cleanup after earlier errors" },
	{ 46, 46, XID_ACT_RESET_GPU, "GPU stopped processing (GPU timeout)" },
	{ 47, 47, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 48, 48, XID_ACT_ECC_DBE, "double-bit ECC error" },
	{ 49, 53, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 54, 54, XID_ACT_MECHANICAL, "auxiliary power is not connected to the GPU board" },
	{ 55, 59, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 60, 60, XID_ACT_RESTART_APP, "video processor (SEC2) exception" },
	{ 61, 61, XID_ACT_SUPPORT, "internal micro-controller breakpoint (unused on Ampere and later)" },
	{ 62, 62, XID_ACT_RESET_GPU, "internal micro-controller halt" },
	{ 63, 63, XID_ACT_IGNORE, "memory remapping event (row remap or page retirement recorded)" },
	{ 64, 64, XID_ACT_RESET_GPU, "memory remapping failure" },
	{ 65, 65, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 66, 67, XID_ACT_IGNORE, "illegal access by the driver" },
	{ 68, 68, XID_ACT_RESTART_APP, "NVDEC0 exception" },
	{ 69, 69, XID_ACT_RESTART_APP, "graphics engine class error" },
	{ 70, 72, XID_ACT_RESTART_APP, "copy engine error" },
	{ 73, 73, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 74, 74, XID_ACT_NVLINK, "NVLink error" },
	{ 75, 77, XID_ACT_RESTART_APP, "copy engine error" },
	{ 78, 78, XID_ACT_UPDATE, "vGPU start error" },
	{ 79, 79, XID_ACT_REBOOT, "GPU has fallen off the bus" },
	{ 80, 80, XID_ACT_RESTART_APP, "corrupted data sent to the GPU" },
	{ 81, 81, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 82, 84, XID_ACT_RESTART_APP, "video or JPEG engine error" },
	{ 85, 85, XID_ACT_RESTART_APP, "copy engine error" },
	{ 86, 86, XID_ACT_RESTART_APP, "optical flow engine exception" },
	{ 87, 87, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 88, 89, XID_ACT_RESTART_APP, "video decoder error" },
	{ 90, 91, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 92, 92, XID_ACT_ECC_WATCH, "high single-bit ECC error rate" },
	{ 93, 93, XID_ACT_IGNORE, "InfoROM wear limit exceeded (not fatal)" },
	{ 94, 94, XID_ACT_ECC_WATCH, "contained memory error (the affected applications were stopped)" },
	{ 95, 95, XID_ACT_RESET_GPU, "uncontained memory error" },
	{ 96, 105, XID_ACT_RESTART_APP, "video or JPEG engine error" },
	{ 106, 107, XID_ACT_IGNORE, "SMBPBI test message" },
	{ 108, 108, XID_ACT_IGNORE, "NVLink remote translation error" },
	{ 109, 109, XID_ACT_RESET_GPU, "context switch timeout" },
	{ 110, 110, XID_ACT_RESET_GPU, "security fault" },
	{ 111, 118, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 119, 119, XID_ACT_RESET_GPU, "GSP RPC timeout" },
	{ 120, 120, XID_ACT_RESET_GPU, "GSP error" },
	{ 121, 121, XID_ACT_IGNORE, "chip-to-chip (C2C) error" },
	{ 122, 125, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 126, 135, XID_ACT_RESTART_APP, "copy engine error" },
	{ 136, 136, XID_ACT_RESET_GPU, "NVLink training failed" },
	{ 137, 137, XID_ACT_IGNORE, "NVLink privilege error" },
	{ 138, 138, XID_ACT_SUPPORT, "unused on Ampere and later" },
	{ 139, 139, XID_ACT_RESTART_APP, "optical flow engine error" },
	{ 140, 140, XID_ACT_RESET_GPU, "unrecovered ECC error escaped containment" },
	{ 141, 141, XID_ACT_IGNORE, "CUDA fast-path error" },
	{ 142, 142, XID_ACT_SUPPORT, "NVENC3 error" },
	{ 143, 143, XID_ACT_RESET_GPU, "GPU initialisation error" },
	{ 144, 150, XID_ACT_NVLINK5, "NVLink 5 error" },
	{ 151, 151, XID_ACT_RESTART_VM, "key rotation error (confidential computing)" },
	{ 152, 153, XID_ACT_IGNORE, "DLA error" },
	{ 154, 154, XID_ACT_RECOVERY, "GPU recovery action changed" },
	{ 155, 155, XID_ACT_RESET_GPU, "NVLink software-defined error" },
	{ 156, 156, XID_ACT_RESET_GPU, "resource retirement event" },
	{ 157, 157, XID_ACT_IGNORE, "resource retirement failure" },
	{ 158, 158, XID_ACT_RESET_GPU, "GPU fatal timeout" },
	{ 159, 159, XID_ACT_UVM, "CHI non-data error" },
	{ 160, 161, XID_ACT_IGNORE, "channel retirement event or failure" },
	{ 162, 165, XID_ACT_NONE_LISTED, "power smoothing circuit state change" },
	{ 166, 166, XID_ACT_NONE_LISTED, "NVLink encryption: traffic before the link was set up" },
	{ 167, 167, XID_ACT_NONE_LISTED, "PCIe fatal timeout" },
	{ 168, 168, XID_ACT_NONE_LISTED, "reduced GPU memory capacity (errors in the write-protected region)" },
	{ 169, 169, XID_ACT_NONE_LISTED, "SEC2 micro-controller halt" },
	{ 170, 170, XID_ACT_NONE_LISTED, "NVLink encryption: interrupt in confidential-computing mode" },
	{ 171, 172, XID_ACT_NONE_LISTED, "detail of Xid 48: uncorrectable DRAM or SRAM error" },
};

const struct xid_entry *xid_lookup(int code)
{
	for (size_t i = 0; i < sizeof(catalog) / sizeof(catalog[0]); i++)
		if (code >= catalog[i].first && code <= catalog[i].last)
			return &catalog[i];
	return NULL;
}

/* Status, the catalog's bucket, and what the operator does, by action. */
static const struct xid_advice advice[] = {
	[XID_ACT_IGNORE] = { STATUS_OK, "IGNORE", "no action: the node stays in service", NULL },
	[XID_ACT_RESTART_APP] = { STATUS_OK, "RESTART_APP", "restart the application; the node stays in service",
				  NULL },
	[XID_ACT_FOLLOW] = { STATUS_OK, "WORKFLOW_XID_45",
			     "follow the Xids logged with it (alone: restart the fabric manager)", NULL },
	[XID_ACT_RESET_GPU] = { STATUS_FAIL, "RESET_GPU", "reset the GPU",
				"drain the GPU's jobs, then reset it: `nvidia-smi -r -i %1$s` (or reboot the node); "
				"open a case with NVIDIA (drain and RMA) if it repeats" },
	[XID_ACT_REBOOT] = { STATUS_FAIL, "RESTART_BM", "reboot the node",
			     "the GPU fell off the bus (%1$s): drain the node and reboot it (`systemctl reboot`); "
			     "check power, seating and PCIe errors (BMC log); RMA if it repeats" },
	[XID_ACT_ECC_DBE] = { STATUS_FAIL, "WORKFLOW_XID_48",
			      "check retired pages and row remapping, then reset the GPU",
			      "check `nvidia-smi -q -d ECC,ROW_REMAPPER -i %1$s`; drain and reset the GPU "
			      "(`nvidia-smi -r -i %1$s`) to apply pending row remaps; RMA if remapping failed or it "
			      "repeats" },
	[XID_ACT_ECC_WATCH] = { STATUS_WARN, "92: IGNORE, 94: RESTART_APP",
				"the node stays in service; watch the GPU's ECC counters and row remapping",
				"check `nvidia-smi -q -d ECC,ROW_REMAPPER -i %1$s`: a pending remap needs a GPU reset "
				"(`nvidia-smi -r -i %1$s`), a failed one an RMA" },
	[XID_ACT_NVLINK] = { STATUS_FAIL, "WORKFLOW_NVLINK_ERR", "check the NVLinks, then reset the GPU",
			     "check NVLink (`nvidia-smi nvlink -s -i %1$s`) and the NVSwitch and fabric manager "
			     "logs; drain and reset the GPU (`nvidia-smi -r -i %1$s`)" },
	[XID_ACT_NVLINK5] = { STATUS_WARN, "WORKFLOW_NVLINK5_ERR",
			      "decode the message's interrupt info with the catalog's Xid 144-150 table "
			      "(IGNORE or RESET_GPU)",
			      "check the links (`nvidia-smi nvlink -s -i %1$s`); when the catalog's decode says "
			      "fatal, drain and reset the GPU (`nvidia-smi -r -i %1$s`)" },
	[XID_ACT_SUPPORT] = { STATUS_WARN, "CONTACT_SUPPORT", "open a case with NVIDIA",
			      "collect `nvidia-bug-report.sh` and open a case with NVIDIA; drain and RMA the GPU "
			      "(%1$s) if it repeats" },
	[XID_ACT_MECHANICAL] = { STATUS_WARN, "CHECK_MECHANICALS", "check the GPU's power cables and seating",
				 "check the auxiliary power cables and seating of %1$s; "
				 "`nvidia-smi -q -d POWER -i %1$s` shows its power state" },
	[XID_ACT_UPDATE] = { STATUS_WARN, "UPDATE_SWFW", "update the driver or the GPU firmware",
			     "compare `cat /proc/driver/nvidia/version` with the supported release and update the "
			     "driver or the firmware of %1$s" },
	[XID_ACT_RESTART_VM] = { STATUS_WARN, "RESTART_VM", "restart the confidential-computing VM",
				 "restart the VM that uses %1$s; `nvidia-smi -q -i %1$s` shows its state" },
	[XID_ACT_UVM] = { STATUS_WARN, "CHECK_UVM", "check the UVM driver and the application's managed memory",
			  "`dmesg | grep -i uvm` for nvidia_uvm errors near the Xid on %1$s; restart the "
			  "application" },
	[XID_ACT_RECOVERY] = { STATUS_WARN, "XID_154", "perform the recovery action the message names",
			       "`nvidia-smi -q -i %1$s` shows the GPU's pending recovery action" },
	[XID_ACT_NONE_LISTED] = { STATUS_WARN, "none listed", "the catalog lists no action yet",
				  "`nvidia-smi -q -i %1$s` shows the GPU's state; read the code in NVIDIA's XID "
				  "errors documentation" },
};

const struct xid_advice *xid_advise(enum xid_action a)
{
	return &advice[a];
}

/* Xid 154: NVML's nvmlGpuRecoveryAction_t (NVML API reference; the values
 * the driver prints in the message: 0 None, 1 GPU Reset Required, 2 Node
 * Reboot Required, 3 Drain P2P, 4 Drain and Reset). */
static const struct xid_advice recovery[] = {
	{ STATUS_OK, "XID_154", "recovery action None: nothing to do", NULL },
	{ STATUS_FAIL, "XID_154", "recovery action GPU Reset Required",
	  "drain the GPU's jobs, then reset it: `nvidia-smi -r -i %1$s` (or reboot the node)" },
	{ STATUS_FAIL, "XID_154", "recovery action Node Reboot Required", "drain the node and reboot it (`systemctl reboot`); %1$s needs it" },
	{ STATUS_WARN, "XID_154", "recovery action Drain P2P: stop peer-to-peer traffic to the GPU",
	  "drain the jobs that use %1$s; `nvidia-smi -q -i %1$s` shows when the action clears" },
	{ STATUS_FAIL, "XID_154", "recovery action Drain and Reset",
	  "drain the GPU's jobs, then reset it: `nvidia-smi -r -i %1$s`" },
};

const struct xid_advice *xid_advise_recovery(int action)
{
	if (action < 0 || (size_t)action >= sizeof(recovery) / sizeof(recovery[0]))
		return &advice[XID_ACT_RECOVERY];
	return &recovery[action];
}

const char *unit_not_running(const struct service_info *s, const char *unit, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s%s%s", !s->enabled ? "not enabled, so it does not start at boot" : "",
		 !s->enabled && s->active == 0 ? ", and " : "",
		 s->active == 0 ? "not running (no /run/systemd/units/invocation:" : "", s->active == 0 ? unit : "",
		 s->active == 0 ? ")" : "");
	return buf;
}

void unit_state_unrecorded(struct check_ctx *c, const char *unit, const struct service_info *s)
{
	check_add(c, STATUS_SKIP, unit, "installed (%s) and enabled; whether it runs is not recorded in this tree "
					"(/run/systemd/units: %s)",
		  s->unit_path, read_strerror(s->active_err));
}
