/* gpudirect.next_steps: the commands bring-up guides close with —
 * which perftest and NCCL tests to run next — adapted to this node's devices. Always ok: it is
 * guidance, with the commands as details. */
#include "checks/check.h"
#include "common.h"

#include <stdlib.h>

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
	const char *nic = pairs[0].nic ? pairs[0].nic->name : inv->rdma.v[0].name;
	struct finding *f = check_add(c, STATUS_OK, "next steps", "test RDMA, then GPUDirect, then NCCL (run with -v to see "
								  "the commands)");
	finding_detail(f, "RDMA (network only):   server: ib_write_bw -d %s -a   client: ib_write_bw -d %s -a <server-ip>",
		       nic, nic);
	finding_detail(f, "GPUDirect (GPU 0 memory): ib_write_bw -d %s --use_cuda=0 --use_cuda_dmabuf -a [<server-ip>]",
		       nic);
	finding_detail(f, "NCCL single node (%zu GPUs): torchrun --nproc_per_node=%zu /usr/local/bin/test-nccl", n, n);
	finding_detail(f, "NCCL multi node: torchrun --nproc_per_node=%zu --nnodes=2 --node_rank=<0|1> "
			  "--master_addr=<ip> --master_port=29500 /usr/local/bin/test-nccl",
		       n);
	finding_detail(f, "look for 'DMA-BUF is available', 'Using network IB', 'GPU Direct RDMA Enabled' with "
			  "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET");
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
