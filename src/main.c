/* gpuready: is this GPU node ready for distributed training?
 *
 * main() picks the command (from argv[1], or from the program name when
 * installed as a busybox-style alias such as verify-rdma), parses the
 * options of the tables that command lists (opts/), and maps the
 * handler's result to the exit code: 0 no failure, 1 a check failed (or
 * warned, with --strict), 2 the tool itself could not run. Nothing below
 * src/core prints or exits; this is the boundary. */
#include "cmd/cmd.h"
#include "config.h"
#include "core/parse.h"
#include "core/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The option tables each kind of command reads (opts/settings.h). */
static const struct opt_table *const check_opts[] = { &output_opts, &site_opts, &cluster_opts, NULL };
static const struct opt_table *const plain_opts[] = { &output_opts, NULL };
static const struct opt_table *const bench_cmd_opts[] = { &output_opts, &bench_opts, &job_opts, NULL };
static const struct opt_table *const nccl_cmd_opts[] = { &output_opts, &bench_opts, &job_opts, &nccl_opts, NULL };
static const struct opt_table *const net_cmd_opts[] = { &output_opts, &bench_opts, &job_opts, &net_opts, NULL };
static const struct opt_table *const copy_cmd_opts[] = { &output_opts, &copy_opts, NULL };
static const struct opt_table *const cluster_cmd_opts[] = { &output_opts, &site_opts, &job_opts, &cluster_opts, NULL };
static const struct opt_table *const links_cmd_opts[] = { &output_opts, &job_opts, &cluster_opts, NULL };
static const struct opt_table *const cluster_nccl_opts[] = { &output_opts, &job_opts, &bench_opts, &cluster_opts, NULL };
static const struct opt_table *const fix_cmd_opts[] = { &output_opts, &site_opts, &cluster_opts, &fix_opts, NULL };
static const struct opt_table *const cluster_fix_opts[] = { &output_opts, &site_opts, &job_opts, &cluster_opts, &fix_opts,
							   NULL };
static const struct opt_table *const explain_cmd_opts[] = { &output_opts, &nccl_opts, NULL };

/* `nccl --explain` reads logs instead of running NCCL: a command of its
 * own (its --json is a flag, the run's is a FILE), selected by the option
 * wherever it stands (select_by_option). */
static const struct command nccl_subs[] = {
	{ .name = "nccl --explain", .fn = cmd_nccl_explain, .opts = explain_cmd_opts, .scope = SCOPE_NCCL_EXPLAIN,
	  .min_args = 1, .max_args = 100000, .usage = "FILE...|DIR|- [--json] [--require ib,gdr,dmabuf] [--sysroot DIR]",
	  .summary = "Read the NCCL logs of real jobs (NCCL_DEBUG=INFO or WARN) and say what went wrong",
	  .description = "Reads existing NCCL output (files, - for standard input, or a directory: every regular file "
			 "in it, sorted), with lines of many processes interleaved, with or without NCCL's "
			 "host:pid:tid prefix, or behind a launcher's prefix (Slurm's `0: `, torchrun's `[rank0]:`, "
			 "Open MPI's `[1,0]<stdout>:`). Needs no GPU, no NCCL and no launcher. Prints the processes "
			 "(grouped when identical), the NCCL versions, the network and why, GPUDirect RDMA per HCA, "
			 "DMA-BUF, intra-node transports, channels, the net plugin and bootstrap interface, and every "
			 "warning matched to a known signature with its meaning and next checks (harmless ones said "
			 "harmless; unmatched warnings shown verbatim and counted). Where the log and this node (or "
			 "--sysroot) disagree, it says so. Exit status: 0 nothing wrong, 1 a failure signature or a "
			 "fallback --require forbids, 2 unreadable input or a usage error." },
};

/* `bench net` is a command of its own under `bench`, with perftest's
 * flags: the second word selects it. */
static const struct command bench_subs[] = {
	{ .name = "bench net", .fn = cmd_bench_net, .opts = net_cmd_opts, .scope = SCOPE_NET, .max_args = 1,
	  .usage = "--server [--bind ADDR] [-p PORT] | HOST[:PORT] [--test TEST] [options] | --loopback [options]",
	  .summary = "Measure a link point to point: RDMA (verbs, host or GPU memory) or TCP bandwidth and latency",
	  .description = "perftest-grade tests in one tool: write_bw, write_lat, read_bw, read_lat, send_bw, send_lat "
			 "over verbs RC QPs (host memory, or GPU memory through DMA-BUF or peer memory with --mem "
			 "cuda), and tcp_bw, tcp_lat over TCP. Run `gpuready bench net --server` on one node and "
			 "`gpuready bench net SERVER --test write_bw -a` on another, or --loopback on one node. The "
			 "client's options win; the server refuses what it cannot run and says why on both ends. "
			 "Every bandwidth line gives the share of the link's rate, latency tables end with what is "
			 "usual, and RDMA runs report the port counters that moved. Exit status: 0 pass, 1 data "
			 "arrived wrong or below --expect-gbps, 2 could not run, 3 the peer disappeared or stalled." },
	{ .name = "bench copy", .fn = cmd_bench_copy, .opts = copy_cmd_opts, .scope = SCOPE_BENCH_COPY, .max_args = 0,
	  .usage = "[-t TEST...] [-b MiB] [-i N] [-d GPUS] [--numa auto|NODE] [--expect-h2d GBPS] [--json]",
	  .summary = "Measure host<->GPU and GPU<->GPU copy bandwidth like nvbandwidth, against each link's limit",
	  .description = "Runs nvbandwidth's tests (its names and indexes: host_to_device_memcpy_ce, "
			 "device_to_device_memcpy_read_ce, ... device_local_copy) the way nvbandwidth times them: a spin "
			 "kernel holds each stream while the copies are queued between two events, the median of the "
			 "samples is reported. Copy-engine tests use cuMemcpyAsync, SM tests a copy kernel loaded from "
			 "PTX. Pinned host buffers sit on each GPU's own NUMA node (--numa NODE puts them elsewhere, to "
			 "show what the wrong node costs). Output: nvbandwidth's matrices, each test followed by a `# ` "
			 "line with the figure as a share of the GPU's PCIe link; --json for a document. Exit status: 0 "
			 "pass, 1 below --expect-h2d, --expect-d2h or --expect-p2p, 2 could not run (no libcuda, no GPU, "
			 "a test failed, a GPU stopped answering)." },
};

/* `cluster check`, `cluster facts` and `cluster links`: the second word selects them. */
static const struct command cluster_subs[] = {
	{ .name = "cluster check", .fn = cmd_cluster_check, .opts = cluster_cmd_opts, .scope = SCOPE_CLUSTER_CHECK,
	  .max_args = 100000, .usage = "[--snapshots DIR [DIR...] | --hosts HOSTLIST [--rsh TEMPLATE]] [--bench] [--expect FILE] [--json] [--prom FILE] [--reason] "
		    "[--drain] [--resume] [--apply]",
	  .summary = "Check many nodes at once: a summary, each failing node's reason, and drift by majority vote",
	  .description = "Started as one process per node under a launcher (`srun --ntasks-per-node=1`, `mpirun "
			 "--map-by ppr:1:node`, torchrun, a Kubernetes Indexed Job), every process runs the node checks "
			 "and sends its record to rank 0 over gpuready's control plane (every rank must run the same "
			 "gpuready version), which prints the result; with --snapshots DIR... it reads each node's "
			 "snapshot (taken on every node, e.g. `srun sh -c 'gpuready snapshot DIR/$(hostname)'`) and "
			 "runs every check on it. It prints one line of counts (N nodes: pass, warn, fail, "
			 "unreachable), the --reason line of each failing and warning node, and the drift table: for "
			 "each fact that should agree (kernel, driver and flavour, firmware per NIC model, link rates, "
			 "MTUs, ToS, GID index, GPU model and count, effective NCCL_* values, RDMA and NVIDIA modules, "
			 "fabric manager, PCIe widths) the majority value and the nodes that differ. Votes are taken "
			 "among nodes of one hardware shape (GPU model and count, NIC models); groups of fewer than "
			 "three nodes cannot vote. --expect FILE compares every node of its shape with a known-good "
			 "node's record as well. A node is named by the host name its snapshot recorded, else by its "
			 "directory; a directory that cannot be read is an unreachable row with the reason. With --hosts "
			 "HOSTLIST (no launcher) each host runs `gpuready cluster facts` (with --bench, `cluster facts --bench`) through the remote shell "
			 "(--rsh, default `ssh -o BatchMode=yes {host}`), at most --parallel at once, each within "
			 "--host-timeout; a host that cannot be reached, does not answer in time or answers with "
			 "anything but its own record is an unreachable row naming why. With --snapshots, site "
			 "expectations come from the command line and --config only, the same for every node; with "
			 "--hosts each host applies its own. "
			 "--drain prints, instead of the report, a shell script: `scontrol update NodeName=NODE "
			 "State=DRAIN Reason=\"gpuready: ...\"` for each failing node and a # comment for each warning "
			 "or unreachable node (never drained); --resume adds `scontrol update NodeName=NODE State=RESUME` "
			 "for each node that passes or warns and that Slurm shows drained with a reason starting "
			 "\"gpuready:\"; --apply runs them (--scontrol PATH), leaving alone a node Slurm shows drained for "
			 "another reason. "
			 "docs/cluster.md has the record, the fact keys and how votes work. Exit status: 0 every node "
			 "passes or warns and no fact drifts; 1 a node fails or is unreachable, or a fact drifts; "
			 "2 gpuready could not run (also: ranks of other gpuready versions) or an scontrol command failed; "
			 "3 under a launcher, a rank did not arrive or was lost." },
	{ .name = "cluster facts", .fn = cmd_cluster_facts, .opts = cluster_cmd_opts, .scope = SCOPE_CLUSTER_FACTS,
	  .max_args = 0, .usage = "[--sysroot DIR] [--node-name NAME] [--bench]",
	  .summary = "Print this node's record as JSON: verdict counts, reason, problems and the facts nodes compare",
	  .description = "Runs every check on this node (or the tree given with --sysroot) and prints the compact "
			 "record a node gives cluster mode: gpuready's version, the hardware shape, the counts per "
			 "status, the --reason line, the warnings and failures with their hints, and the facts that "
			 "should agree across nodes as sorted key=value strings. Saved from a known-good node it is "
			 "the FILE of `cluster check --expect FILE`. With --bench (live only) it first measures each "
			 "GPU's host copies, as `check --bench` does, for the gpu.copy_bandwidth check and fact; "
			 "`cluster check --hosts --bench` asks each host for that. Exit status: 0 the record was written (whatever "
			 "the checks found), 2 gpuready could not run." },
	{ .name = "cluster fix", .fn = cmd_cluster_fix, .opts = cluster_fix_opts, .scope = SCOPE_CLUSTER_FIX,
	  .max_args = 100000,
	  .usage = "[--snapshots DIR [DIR...] | --hosts HOSTLIST [--rsh TEMPLATE]] [--apply [--batch N] "
		   "[--allow-disruptive]] [--only ID] [--skip ID] [--json]",
	  .summary = "Plan `gpuready fix` on many nodes, grouped by identical plans; apply in canary batches",
	  .description = "Every node plans what `gpuready fix` would change (the node's `fix --json`), and the plans "
			 "are grouped by what they would do (remedies, files and their new contents, commands, "
			 "manual steps; not host names or times): `nodes gpu[01-14,16]: same 3 changes` and that plan "
			 "once, then each other plan with its nodes, then the nodes that could not be planned and why. "
			 "The nodes come as for `cluster check`: --snapshots DIR... plans each recorded tree in this "
			 "process (nothing is applied to a snapshot: --apply is refused); --hosts HOSTLIST runs "
			 "`gpuready fix --json` on each host through the remote shell (--rsh, --parallel, each within "
			 "--host-timeout: a host that cannot be reached or answers with no plan is reported, never "
			 "waited for); under a launcher (srun --ntasks-per-node=1, mpirun --map-by ppr:1:node, "
			 "torchrun) every process plans its own node and sends the plan to rank 0. --apply then applies "
			 "on the nodes with changes in name order, --batch N at a time (default 1), the first batch a "
			 "canary: each node runs `gpuready fix --apply` (backups, audit log, the checks again; "
			 "--allow-disruptive and --only pass on), and the first batch in which a node's apply failed "
			 "(a remedy failed, or it could not run or answer) stops the rollout: the batches done, the "
			 "nodes that failed and why, and the nodes not touched are reported. JSON "
			 "(docs/cluster-fix.schema.json) with --json. Exit status: 0 every node planned with nothing to "
			 "change (with --apply: every batch applied and no check still failing); 1 changes planned, a "
			 "node could not be planned, an apply failed or a check still fails; 2 gpuready could not run; "
			 "3 under a launcher, a rank did not arrive or was lost." },
	{ .name = "cluster links", .fn = cmd_cluster_links, .opts = links_cmd_opts, .scope = SCOPE_CLUSTER_LINKS,
	  .max_args = 0, .usage = "[--rail tcp|rdma|all] [--duration SEC] [--rounds K [--seed S]] [--expect-gbps GBPS] [--svg FILE] [--json]",
	  .summary = "Measure every pair of nodes in N-1 rounds and say which node or cable is slow",
	  .description = "Started as one process per node under a launcher (as `cluster check`: srun "
			 "--ntasks-per-node=1, mpirun --map-by ppr:1:node, torchrun, a Kubernetes Indexed Job, or "
			 "--rank/--nranks/--master on each node), every pair of nodes measures TCP bandwidth in both "
			 "directions, --duration seconds each, on the address each node reaches rank 0 from: all "
			 "pairs in N-1 rounds of N/2 disjoint pairs (the circle method; with odd N one node rests "
			 "each round), or --rounds K random matchings from a printed seed; with --rail rdma or all "
			 "(the default) also each RDMA rail (the NIC nearest GPU i with the peer's) with bench net's "
			 "write_bw over verbs, each rail analysed on its own. Slow directions are "
			 "outliers by median absolute deviation (below median - 3 x 1.4826 x MAD, at least 25% under "
			 "the median, and under --expect-gbps when given); in a second pass every suspect is paired "
			 "with known-good nodes and rank 0 says which is a bad node or its cable (slow with everyone) "
			 "and which a bad path between two nodes (slow only together), with the rates and what to "
			 "check next, then a heat map in % of the median (--svg FILE, --json for the matrix). Every "
			 "step has a deadline: a failed pair is a result naming both nodes, a frozen rank is named. "
			 "Exit status: 0 no suspect, 1 a verdict (bad node, bad path, intermittent, unclassified, failed "
			 "pair) or the median under --expect-gbps, 2 could not run, 3 a rank was lost or stalled." },
	{ .name = "cluster nccl", .fn = cmd_cluster_nccl, .opts = cluster_nccl_opts, .scope = SCOPE_CLUSTER_NCCL,
	  .max_args = 0,
	  .usage = "[--backend nccl|mpi|socket] [-g GPUS] [--size SIZE] [-n ITERS] [--expect-busbw GBPS] "
		   "[--pair-rounds K] [--json]",
	  .summary = "Run all_reduce on every node and, when it is slow, split the job to name the slow node",
	  .description = "Started as one process per node under a launcher (as `cluster check`), with the NCCL "
			 "backend on each node's -g GPUS (or MPI, or the socket backend): all nodes run all_reduce "
			 "(float sum of --size bytes, -n timed iterations) and its bus bandwidth is compared with "
			 "--expect-busbw. When it is below (or no expectation is given), the job's communicator is "
			 "split (ncclCommSplit, NCCL 2.18+; MPI_Comm_split; the socket backend's direct TCP rings) "
			 "into two halves, then into --pair-rounds rounds of disjoint node pairs with NCCL's ring "
			 "algorithm forced (NCCL_ALGO=Ring: two nodes' trees can report more than the link carries), "
			 "every group of a stage measured at once; slow pairs are outliers by median absolute "
			 "deviation (as cluster links), and every suspect is paired again with known-good nodes to "
			 "say which node is slow with everyone (bad node or its cable) and which pair only together "
			 "(bad path). Exit status: 0 the all-node bus bandwidth meets --expect-busbw and no verdict, 1 "
			 "below it, a verdict, a group not measured or a wrong result, 2 could not run, 3 a rank was "
			 "lost or stalled." },
};

const struct command commands[] = {
	{ .name = "check", .fn = cmd_check, .opts = check_opts, .scope = SCOPE_CHECK, .max_args = 0,
	  .usage = "[options]",
	  .summary = "Run every check on this node (GPUs, GPUDirect RDMA, RDMA stack, NCCL configuration, host tuning)",
	  .description = "Runs the checks of every area (gpu, gpudirect, rdma) against the machine (or the tree "
			 "given with --sysroot) and prints one report; it takes the site expectations of every area. "
			 "Each finding is ok, warn, fail or skip; warn and fail carry the command that fixes them. "
			 "With --health (Slurm's HealthCheckProgram, job prologs) it prints one line, the --reason line, "
			 "and ends within --budget seconds (live probes cut off at it); exit status 0 healthy (pass or "
			 "warn), 1 unhealthy (a check fails), 2 could not run or an scontrol command failed; --drain and "
			 "--resume [--apply] act on this node (--node-name, else $SLURMD_NODENAME, else the host name)." },
	{ .name = "rdma", .fn = cmd_rdma, .opts = check_opts, .scope = SCOPE_RDMA, .max_args = 0,
	  .usage = "[options]",
	  .alias = "verify-rdma",
	  .summary = "Verify the RDMA stack: modules, devices, ports, MTU, GIDs, QoS, NCCL settings, tuning",
	  .description = "Checks what multi-server training needs from the RDMA stack: kernel modules, RDMA "
			 "devices and uverbs nodes, port state and rate, RoCE MTU, RoCE v2 GIDs, the RDMA-CM "
			 "traffic class and its persistence, the effective NCCL configuration, socket buffers, "
			 "locked-memory limits, port error counters and firmware." },
	{ .name = "gpu", .fn = cmd_gpu, .opts = check_opts, .scope = SCOPE_GPU, .max_args = 0, .usage = "[options]",
	  .alias = "verify-gpu",
	  .summary = "Verify the GPUs: PCI, driver, links, BAR1, Xid errors; live NVML, CUDA and PyTorch",
	  .description = "Checks the NVIDIA GPUs from files (PCI functions and their driver binding, the driver "
			 "version and flavour, PCIe link width and speed, BAR1, Xid errors in the kernel log) and, "
			 "on the live machine, through NVML (ECC, row remapping, persistence, throttling, NVLink, "
			 "the CUDA version the driver supports), the CUDA driver API (a memory round trip on every "
			 "GPU) and PyTorch (torch.cuda.is_available(), device count, NCCL). Every layer must see "
			 "the same GPUs." },
	{ .name = "gpudirect", .fn = cmd_gpudirect, .opts = check_opts, .scope = SCOPE_GPUDIRECT, .max_args = 0,
	  .usage = "[options]",
	  .alias = "verify-gpudirect",
	  .summary = "Verify GPUDirect RDMA: method (DMA-BUF or peer memory), topology, ACS, IOMMU, live registration",
	  .description = "Says which GPUDirect RDMA method this node can use and why, then checks what decides "
			 "it: the open NVIDIA module, the kernel version and configuration, nvidia_peermem, NICs "
			 "that cannot do GPUDirect (ConnectX-3), each GPU's nearest NIC and PCIe path class against "
			 "NCCL_NET_GDR_LEVEL, ACS on the bridges between them, IOMMU translation; live, the CUDA "
			 "attributes and a real registration of GPU memory with each GPU's nearest NIC." },
	{ .name = "topo", .fn = cmd_topo, .opts = plain_opts, .scope = SCOPE_TOPO, .max_args = 0,
	  .usage = "[--sysroot DIR] [--json]",
	  .summary = "Show the GPU/NIC topology matrix (like nvidia-smi topo -m)",
	  .description = "Prints the PCIe distance between every pair of GPUs and RDMA NICs (X, PIX, PXB, PHB, "
			 "NODE, SYS from the sysfs PCI tree and NUMA nodes; NV# from NVML on the live machine), "
			 "with each device's CPU affinity and NUMA node, and the legend. Works under --sysroot." },
	{ .name = "bench", .fn = cmd_bench, .opts = bench_cmd_opts, .scope = SCOPE_BENCH, .max_args = 1,
	  .usage = "[COLLECTIVE] [options]",
	  .alias_match = bench_alias, .subs = bench_subs, .n_subs = 2,
	  .summary = "Benchmark a collective like nccl-tests (all_reduce_perf ...), with validation and deadlines",
	  .description = "Runs the collective COLLECTIVE (all_reduce, all_gather, reduce_scatter, broadcast, reduce, "
			 "alltoall, sendrecv; default all_reduce) over every rank of the job with nccl-tests' flags, "
			 "sweep, timing, bus-bandwidth formulas and output table, validating every result. Ranks "
			 "come from the launcher (torchrun, mpirun, srun, or --rank/--nranks/--master); every step has "
			 "a deadline, and a rank that stalls or dies is named. Installed as all_reduce_perf, "
			 "all_gather_perf, reduce_scatter_perf, broadcast_perf, reduce_perf, alltoall_perf and "
			 "sendrecv_perf too. Exit status: 0 pass, 1 wrong results or bandwidth below the expectation, "
			 "2 could not run, 3 a rank stalled or was lost." },
	{ .name = "nccl", .fn = cmd_nccl, .opts = nccl_cmd_opts, .scope = SCOPE_NCCL, .max_args = 0,
	  .usage = "[options] | --explain FILE...", .subs = nccl_subs, .n_subs = 1,
	  .alias = "test-nccl",
	  .summary = "Check NCCL end to end: correct all-reduce on every rank, and the network and GPUDirect it used",
	  .description = "Every rank all-reduces its rank number (Rank N: OK (result=X, expected=X), X = n(n-1)/2) "
			 "and then a larger buffer checked element by element. NCCL runs with NCCL_DEBUG=INFO "
			 "into a log per process that gpuready reads: the network NCCL chose (IB/RoCE devices or "
			 "sockets), GPUDirect RDMA per HCA, DMA-BUF, intra-node transports and NCCL's version. "
			 "--require ib,gdr turns a fallback into a failure. Ranks come from the launcher "
			 "(torchrun --no-python, mpirun, srun, or --rank/--nranks/--master)." },
	{ .name = "cluster", .fn = cmd_cluster, .opts = plain_opts, .scope = SCOPE_OTHER, .max_args = 0,
	  .usage = "check|facts|fix|links|nccl [options]", .subs = cluster_subs, .n_subs = 5,
	  .summary = "Cluster mode: compare many nodes' checks and facts (from snapshots or through a remote shell)",
	  .description = "`gpuready cluster check --snapshots DIR...` checks many nodes' snapshots in one process, "
			 "`gpuready cluster check --hosts HOSTLIST` asks each host through a remote shell, and both "
			 "show which nodes fail and which facts drift from the majority; `gpuready cluster facts` "
			 "prints this node's record, the file --expect reads." },
	{ .name = "fix", .fn = cmd_fix, .opts = fix_cmd_opts, .scope = SCOPE_FIX, .max_args = 0,
	  .usage = "[--apply [--allow-disruptive]] [--only ID] [--script FILE] [--json] | --revert",
	  .summary = "Plan (and with --apply make) the persistent changes that fix this node's findings",
	  .description = "Runs the checks and, for every warning and failure with a mechanical remedy, plans the exact "
			 "change: the files to write (drop-ins under /etc, shown as unified diffs) and the commands "
			 "that make it take effect now. Without --apply nothing is changed. --apply writes each file "
			 "atomically, keeping the file it replaces as FILE.gpuready-bak, runs the commands (30 s "
			 "each), appends every change to /var/log/gpuready/fix.log and runs the checks again. "
			 "Disruptive remedies (MTU, module blacklists, ACS, the kernel command line) are applied "
			 "only when named with --only or with --allow-disruptive, and never while a process holds "
			 "/dev/nvidia* or /dev/infiniband/*. Under --sysroot DIR the plan and the changes are made "
			 "inside DIR and each command is replaced by the value it sets; module loads and the kernel "
			 "command line stay pending. Findings without a safe mechanical change are listed as manual "
			 "steps. Exit status: 0 nothing to change and nothing failing, 1 changes planned, a remedy "
			 "failed or a check still fails, 2 could not run." },
	{ .name = "snapshot", .fn = cmd_snapshot, .opts = plain_opts, .scope = SCOPE_SNAPSHOT, .min_args = 1,
	  .max_args = 1,
	  .usage = "[--sysroot SRC] DIR",
	  .summary = "Copy every file the checks read into DIR, for offline diagnosis",
	  .description = "Records this machine (or SRC) into DIR: every sysfs, procfs, configfs and /etc file "
			 "the checks read, with symlinks kept as they are and file modes kept, plus the NCCL_*, "
			 "UCX_*, CUDA_VISIBLE_DEVICES and KUBERNETES_SERVICE_HOST environment in "
			 "DIR/.gpuready/environ. Of systemd units, "
			 "scripts, udev rules, rc.local, nccl.conf, profile.d and /etc/environment only the lines "
			 "the checks parse are kept (those that set NCCL_* variables or the RDMA-CM ToS, the "
			 "programs that Exec and RUN lines start); nothing else from the environment is captured. "
			 "Files that could not be read are listed with their error in DIR/.gpuready/unreadable "
			 "and read back with it. DIR is marked incomplete (DIR/.gpuready/incomplete) until "
			 "everything is written. `gpuready check --sysroot DIR` elsewhere then reproduces the "
			 "file-based result. DIR must not exist or be empty." },
	{ .name = "list-checks", .fn = cmd_list_checks, .opts = plain_opts, .scope = SCOPE_LIST, .max_args = 0,
	  .usage = "[--only P] [--skip P]",
	  .summary = "List the check IDs (for --only and --skip)" },
	{ .name = "help", .fn = cmd_help, .opts = plain_opts, .scope = SCOPE_OTHER, .max_args = 2,
	  .usage = "[COMMAND [SUBCOMMAND]]",
	  .summary = "Show help for gpuready or a command" },
	{ .name = "version", .fn = cmd_version, .opts = plain_opts, .scope = SCOPE_OTHER, .max_args = 0, .usage = "",
	  .summary = "Print the version" },
	{ .name = "man", .fn = cmd_man, .opts = plain_opts, .scope = SCOPE_OTHER, .max_args = 0, .usage = "",
	  .summary = "Print the man page (roff) generated from the option tables", .hidden = true },
};
const size_t n_commands = sizeof(commands) / sizeof(commands[0]);

const struct command *command_next(const struct command *prev)
{
	bool take = prev == NULL;
	for (size_t i = 0; i < n_commands; i++) {
		const struct command *c = &commands[i];
		if (take)
			return c;
		take = c == prev;
		for (size_t k = 0; k < c->n_subs; k++) {
			if (take)
				return &c->subs[k];
			take = &c->subs[k] == prev;
		}
	}
	return NULL;
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < n_commands; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* A subcommand named by an option ("nccl --explain") wherever the option
 * stands among argv[first..] (before "--"), or c itself. */
static const struct command *select_by_option(const struct command *c, int first, int argc, char **argv)
{
	for (size_t k = 0; k < c->n_subs; k++) {
		const char *last = strrchr(c->subs[k].name, ' ');
		if (!last || strncmp(last + 1, "--", 2))
			continue;
		for (int i = first; i < argc && strcmp(argv[i], "--"); i++)
			if (!strcmp(argv[i], last + 1))
				return &c->subs[k];
	}
	return c;
}

/* The subcommand of c whose last word is word, or NULL. */
static const struct command *find_sub(const struct command *c, const char *word)
{
	for (size_t k = 0; k < c->n_subs; k++) {
		const char *last = strrchr(c->subs[k].name, ' ');
		if (last && !strcmp(last + 1, word))
			return &c->subs[k];
	}
	return NULL;
}

static const struct command *find_alias(const char *progname)
{
	for (size_t i = 0; i < n_commands; i++)
		if ((commands[i].alias && !strcmp(commands[i].alias, progname)) ||
		    (commands[i].alias_match && commands[i].alias_match(progname)))
			return &commands[i];
	return NULL;
}

static void suggest(const char *name)
{
	struct str_nearest n = STR_NEAREST_INIT(name);
	for (size_t i = 0; i < n_commands; i++)
		if (!commands[i].hidden)
			str_nearest_offer(&n, commands[i].name);
	if (n.best)
		fprintf(stderr, "Did you mean '%s'?\n", n.best);
}

/* After opt_parse refused an option: the commands that take an option of
 * that name, or the nearest option name of this command. */
static void refused_hint(const struct opt_seen *seen)
{
	if (seen->other) {
		struct strv takers = STRV_INIT;
		for (const struct command *c = command_next(NULL); c; c = command_next(c))
			if (!c->hidden && opt_find(c->opts, c->scope, seen->other->name))
				strv_push(&takers, xasprintf("`gpuready %s`", c->name));
		fprintf(stderr, "--%s is an option of ", seen->other->name);
		for (size_t i = 0; i < takers.n; i++)
			fprintf(stderr, "%s%s", i == 0 ? "" : i + 1 < takers.n ? ", " : " and ", takers.v[i]);
		fprintf(stderr, ".\n");
		strv_free(&takers);
	} else if (seen->nearest) {
		fprintf(stderr, "Did you mean '--%s'?\n", seen->nearest->name);
	}
}

/* A standard descriptor the caller closed (`>&-`) is held by /dev/null,
 * opened read-only: writes to it still fail (EBADF, as on a closed one),
 * and no file or socket opened later can become fd 1 and receive stdout
 * (git's sanitize_stdfds does the same with /dev/null for writing). */
static void hold_closed_stdfds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		int n = open("/dev/null", O_RDONLY);
		if (n >= 0 && n != fd) {
			dup2(n, fd);
			close(n);
		}
	}
}

/* Whether something the command printed did not reach stdout: the
 * stream's error flag (set by any failed write, also one whose data stdio
 * then dropped), the last flush, the close. *err is the errno, or 0 where
 * the flag is set and no call reports one any more; a zero-byte write(2)
 * on fd 1 may still name it then (EBADF, or ENOSPC on /dev/full: write(2)
 * leaves zero bytes to anything but a regular file unspecified, so only
 * the message relies on it). git checks stdout so after every builtin;
 * gnulib's close_stdout says "write error" when it knows no errno. */
static bool stdout_lost(int *err)
{
	bool lost = ferror(stdout);
	*err = 0;
	if (fflush(stdout) != 0) {
		*err = errno;
		lost = true;
	} else if (lost && write(STDOUT_FILENO, "", 0) < 0) {
		*err = errno;
	}
	if (fclose(stdout) != 0 && !lost) {
		*err = errno;
		lost = true;
	}
	return lost;
}

int main(int argc, char **argv)
{
	const char *slash = argv[0] ? strrchr(argv[0], '/') : NULL;
	const char *progname = slash ? slash + 1 : argv[0] ? argv[0] : "gpuready";
	const struct command *cmd = find_alias(progname);
	int first = 1;

	hold_closed_stdfds();

	if (!cmd) {
		progname = "gpuready";
		if (argc < 2) {
			fprintf(stderr, "usage: gpuready <command> [options]  (try `gpuready help`)\n");
			return EXIT_TOOL_ERROR;
		}
		const char *a = argv[1];
		if (!strcmp(a, "--version") || !strcmp(a, "-V"))
			cmd = find_command("version");
		else if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			cmd = find_command("help");
		else
			cmd = find_command(a);
		if (!cmd) {
			fprintf(stderr, "gpuready: '%s' is not a gpuready command. See `gpuready help`.\n", a);
			suggest(a);
			return EXIT_TOOL_ERROR;
		}
		first = 2;
		for (const struct command *sub; first < argc && (sub = find_sub(cmd, argv[first]));) {
			cmd = sub;
			first++;
		}
	}
	cmd = select_by_option(cmd, first, argc, argv);

	struct settings s;
	settings_init(&s);
	struct opt_seen seen = { .n = 0 };
	struct cmd_env env = { .cmd = cmd, .set = &s, .cli = &seen, .args = STRV_INIT, .progname = progname,
			       .argc = argc, .argv = argv };
	char *err = NULL;
	int ret;

	/* `help` takes a command path, whose words may be options ("help nccl
	 * --explain"): after its first word, every word is the path's */
	int nopt = argc - first;
	for (int i = first; cmd->fn == cmd_help && i < argc; i++)
		if (argv[i][0] != '-') {
			nopt = i - first;
			break;
		}
	for (int i = first + nopt; i < argc; i++)
		strv_add(&env.args, argv[i]);
	if (opt_parse(cmd->opts, cmd->scope, nopt, argv + first, &s, &seen, &env.args, &err) < 0) {
		fprintf(stderr, "%s %s: %s (see `gpuready %s --help`)\n", progname, cmd->name, err, cmd->name);
		refused_hint(&seen);
		free(err);
		ret = EXIT_TOOL_ERROR;
	} else if (s.help) {
		print_command_help(stdout, cmd);
		ret = EXIT_OK;
	} else if ((int)env.args.n < cmd->min_args || (int)env.args.n > cmd->max_args) {
		fprintf(stderr, "usage: gpuready %s %s\n", cmd->name, cmd->usage);
		ret = EXIT_TOOL_ERROR;
	} else {
		ret = cmd->fn(&env);
	}
	int werr;
	if (stdout_lost(&werr)) {
		fprintf(stderr, "%s %s: cannot write standard output: %s\n", progname, cmd->name,
			werr ? strerror(werr) : "write error");
		if (ret < EXIT_TOOL_ERROR)
			ret = EXIT_TOOL_ERROR;
	}
	strv_free(&env.args);
	settings_free(&s);
	return ret;
}
