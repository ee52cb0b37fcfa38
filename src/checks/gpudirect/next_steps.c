/* gpudirect.next_steps: the commands bring-up guides close with — which
 * perftest and NCCL tests to run next — adapted to this node's devices
 * and to what the hardware allows: the GPUDirect test uses DMA-BUF only
 * where it is possible, and is left out where no NIC can do GPUDirect RDMA.
 * The NCCL test is `gpuready nccl` (test-nccl), a binary, so torchrun
 * starts it with --no-python; its --require names what the node allows. Always ok: it is guidance, with the
 * commands as details. */
#include "checks/check.h"
#include "common.h"

#include <stdlib.h>

/* DMA-BUF is the method in use, or the one to set up. */
static bool uses_dmabuf(const struct gdr_state *s)
{
	return s->method == GDR_DMABUF || (s->method == GDR_NONE && s->dmabuf_possible);
}

static void gpudirect_step(struct finding *f, const struct gdr_state *s, const char *nic)
{
	if (!s->gdr_possible) {
		finding_detail(f, "GPUDirect: not possible with %s (see gpudirect.nic): NCCL stages through host memory",
			       nic);
		return;
	}
	finding_requires(f, "gdr_possible");
	/* the method in use, else the one to set up */
	if (uses_dmabuf(s)) {
		finding_requires(f, "dmabuf_possible");
		finding_detail(f, "GPUDirect (GPU 0 memory, DMA-BUF): ib_write_bw -d %s --use_cuda=0 --use_cuda_dmabuf -a "
				  "[<server-ip>]",
			       nic);
	} else {
		finding_detail(f, "GPUDirect (GPU 0 memory, nvidia-peermem): ib_write_bw -d %s --use_cuda=0 -a [<server-ip>]",
			       nic);
	}
}

static int run(struct check_ctx *c)
{
	const struct inventory *inv = c->inv;
	struct gpu_pair *pairs = NULL;
	size_t n = gpu_pairs(inv, &pairs);
	if (n == 0 || inv->rdma.n == 0) {
		check_add(c, STATUS_SKIP, "next steps", "%s", n == 0 ? "no NVIDIA GPU on PCI" : "no RDMA device");
		free(pairs);
		return 0;
	}
	struct gdr_state s;
	gdr_state_get(inv, &s);
	const char *nic = pairs[0].nic ? pairs[0].nic->name : inv->rdma.v[0].name;
	struct finding *f = check_add(c, STATUS_OK, "next steps", "test RDMA, then GPUDirect, then NCCL (run with -v to see "
								  "the commands)");
	finding_detail(f, "RDMA (network only):   server: ib_write_bw -d %s -a   client: ib_write_bw -d %s -a <server-ip>",
		       nic, nic);
	gpudirect_step(f, &s, nic);
	bool dmabuf = uses_dmabuf(&s);
	finding_detail(f, "NCCL single node (%zu GPU%s): torchrun --nproc_per_node=%zu --no-python gpuready nccl", n,
		       n == 1 ? "" : "s", n);
	finding_detail(f, "NCCL multi node: torchrun --nproc_per_node=%zu --nnodes=2 --node_rank=<0|1> "
			  "--master_addr=<ip> --master_port=29500 --no-python gpuready nccl --require ib%s%s",
		       n, s.gdr_possible ? ",gdr" : "", s.gdr_possible && dmabuf ? ",dmabuf" : "");
	free(pairs);
	return 0;
}

const struct check_def check_gpudirect_next_steps = {
	.id = "gpudirect.next_steps",
	.section = "Next Steps",
	.summary = "the perftest and NCCL commands to run next, for this node's NICs and GPU count",
	.run = run,
	.needs = NEEDS_GPU,
};
