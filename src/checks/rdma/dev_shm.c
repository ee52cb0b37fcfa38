/* rdma.dev_shm: /dev/shm is large enough for NCCL's shared memory.
 *
 * NCCL creates its shared-memory segments (the SHM transport between
 * processes, proxy buffers) as files in /dev/shm. When the tmpfs there is
 * too small, NCCL fails to initialise ("NCCL WARN Error: failed to extend
 * /dev/shm/nccl-... bytes", "Error while creating shared memory segment",
 * or a bus error when a page cannot be backed). NCCL's documentation
 * (User Guide, Troubleshooting, "Shared memory" / "Docker") asks containers
 * for `--shm-size=1g --ulimit memlock=-1`, because Docker gives a container
 * 64 MiB by default (docker-run(1) --shm-size; NVIDIA/nccl#342, where the
 * 64 MB default failed with segments of 9.6 MB each). The threshold is that
 * documented 1 GiB.
 *
 * The size is the size= super option of the /dev/shm mount in
 * /proc/self/mountinfo; a tmpfs without one gets half of RAM
 * (Documentation/filesystems/tmpfs.rst), MemTotal of /proc/meminfo. Docker
 * and Podman with --ipc=host and Enroot bind-mount the host's /dev/shm, so
 * the host's size shows. */
#include "checks/check.h"
#include "common.h"

#include "core/readers.h"

#include <errno.h>
#include <string.h>

#define SHM_NCCL_MIN (1ull << 30) /* NCCL Troubleshooting: --shm-size=1g */

static void judge(struct check_ctx *c, uint64_t size, const char *how, bool ct, const char *where)
{
	char sz[32], min[32];
	bytes_text(size, sz, sizeof(sz));
	bytes_text(SHM_NCCL_MIN, min, sizeof(min));
	if (size >= SHM_NCCL_MIN) {
		check_add(c, STATUS_OK, "/dev/shm", "%s (%s)%s%s: at least the %s NCCL's troubleshooting guide asks for",
			  sz, how, ct ? " " : "", where, min);
		return;
	}
	struct finding *f =
		check_add(c, STATUS_FAIL, "/dev/shm",
			  "%s (%s)%s%s: below the %s NCCL's troubleshooting guide asks for%s; NCCL fails to create "
			  "its shared-memory segments (\"Error while creating shared memory segment\", \"failed to "
			  "extend /dev/shm/nccl-...\") or dies with a bus error",
			  sz, how, ct ? " " : "", where, min, ct ? " (--shm-size=1g)" : "");
	finding_compare_num(f, (double)size, (double)SHM_NCCL_MIN);
	if (ct)
		finding_hint(f, "`df -h /dev/shm` shows it; start the container with --shm-size=16g or --ipc=host "
				"(Docker, Podman); on Kubernetes mount an emptyDir volume with medium: Memory at "
				"/dev/shm; Enroot shares the host's /dev/shm");
	else
		finding_hint(f, "`mount -o remount,size=50%% /dev/shm`, and the same size= option on the /dev/shm "
				"line of /etc/fstab so that it lasts");
}

static int run(struct check_ctx *c)
{
	const struct proc_view *v = &c->inv->view;
	char where[512], how[96];
	bool ct = container_view(c->inv, where, sizeof(where));
	struct finding *f;
	bool gpu = false;
	for (size_t i = 0; i < c->inv->pci.n && !gpu; i++)
		gpu = pci_is_nvidia_gpu(&c->inv->pci.v[i]);
	if (!gpu && !node_has_rdma_hw(c->inv)) {
		check_add(c, STATUS_SKIP, "/dev/shm", "no NVIDIA GPU and no RDMA hardware on PCI: NCCL does not run here");
		return 0;
	}
	if (v->mountinfo_err < 0) {
		check_add(c, STATUS_SKIP, "/dev/shm", "/proc/self/mountinfo %s: the size of /dev/shm cannot be told",
			  read_strerror(v->mountinfo_err));
		return 0;
	}
	if (!v->shm_mounted) {
		f = check_add(c, STATUS_WARN, "/dev/shm",
			      "no filesystem is mounted at /dev/shm%s%s (/proc/self/mountinfo): NCCL creates its "
			      "shared-memory segments there",
			      ct ? " " : "", where);
		finding_hint(f, ct ? "`df -h /dev/shm`; start the container with --shm-size=16g or --ipc=host, or on "
				     "Kubernetes mount an emptyDir volume with medium: Memory at /dev/shm"
				   : "`mount -t tmpfs -o size=50%% tmpfs /dev/shm` (systemd mounts it at boot)");
		return 0;
	}
	if (strcmp(v->shm_fstype, "tmpfs")) {
		check_add(c, STATUS_SKIP, "/dev/shm", "/dev/shm is %s (%s), not tmpfs: its size is not judged",
			  v->shm_fstype, v->shm_source);
		return 0;
	}
	if (v->shm_size_err < 0) {
		check_add(c, STATUS_SKIP, "/dev/shm", "the size= option of /dev/shm in /proc/self/mountinfo does not "
						      "parse (%s): its size cannot be told",
			  read_strerror(v->shm_size_err));
		return 0;
	}
	if (v->shm_size_set) {
		snprintf(how, sizeof(how), "size= of the %s mount", v->shm_source);
		judge(c, v->shm_size, how, ct, where);
		return 0;
	}
	if (!v->mem_total) {
		check_add(c, STATUS_SKIP, "/dev/shm",
			  "tmpfs without a size= option gets half of RAM, but /proc/meminfo %s: its size cannot be told",
			  read_strerror(v->meminfo_err < 0 ? v->meminfo_err : -ENODATA));
		return 0;
	}
	judge(c, v->mem_total / 2, "tmpfs default: half of MemTotal", ct, where);
	return 0;
}

const struct check_def check_rdma_dev_shm = {
	.id = "rdma.dev_shm",
	.section = "Host Tuning",
	.summary = "/dev/shm holds NCCL's shared-memory segments: at least 1 GiB (Docker's default is 64 MiB)",
	.run = run,
};
