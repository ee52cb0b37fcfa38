/* The options of `cluster check` and `cluster facts` (docs/cluster.md).
 * Table rows: core/options.h. */
#include "opts/settings.h"
#include "bench/copy/engine.h"

#include <stddef.h>
#include <string.h>

#define OFF(f) offsetof(struct settings, f)

static const char *bootstrap_form(const char *v)
{
	return strcmp(v, "auto") && strcmp(v, "tcp") && strcmp(v, "mpi") ? "auto, tcp or mpi" : NULL;
}

static const char *rail_form(const char *v)
{
	return strcmp(v, "tcp") && strcmp(v, "rdma") && strcmp(v, "all") ? "tcp, rdma or all" : NULL;
}

static const struct opt cluster_rows[] = {
	{ .name = "snapshots", .type = OPT_FLAG, .offset = OFF(cluster.snapshots),
	  .help = "Read the nodes from the snapshot directories given as arguments (each taken with `gpuready "
		  "snapshot DIR` on its node, e.g. through srun), in this one process.",
	  .scope = SCOPE_CLUSTER_CHECK | SCOPE_CLUSTER_FIX },
	{ .name = "expect", .type = OPT_STRING, .offset = OFF(cluster.expect), .metavar = "FILE",
	  .help = "Compare every node of its hardware shape with the record in FILE (`gpuready cluster facts` "
		  "on a known-good node) as well as by majority vote; groups of one or two nodes are then judged too.",
	  .scope = SCOPE_CLUSTER_CHECK },
	{ .name = "node-name", .type = OPT_STRING, .offset = OFF(cluster.node_name), .metavar = "NAME",
	  .help = "This node's name: in its record (cluster facts, cluster check and cluster links under a launcher), "
		  "and the node check --health drains and resumes (default: $SLURMD_NODENAME under Slurm, else the host "
		  "name).",
	  .scope = SCOPE_CLUSTER_FIX | SCOPE_CLUSTER | SCOPE_CLUSTER_LINKS | SCOPE_CLUSTER_NCCL | SCOPE_CHECK },
	{ .name = "hosts", .type = OPT_STRING, .offset = OFF(cluster.hosts), .metavar = "HOSTLIST",
	  .help = "Ask these hosts through the remote shell (--rsh): a Slurm hostlist (`node[01-16,20],login1`), or "
		  "@FILE with one host or hostlist per line and # comments. Each host runs `gpuready cluster facts` (cluster "
		  "check) or `gpuready fix --json` (cluster fix).",
	  .scope = SCOPE_CLUSTER_CHECK | SCOPE_CLUSTER_FIX },
	{ .name = "rsh", .type = OPT_STRING, .offset = OFF(cluster.rsh), .metavar = "TEMPLATE",
	  .def = OPT_DEF_STR("ssh -o BatchMode=yes {host}"),
	  .help = "The command that runs a command on {host}, split into words at blanks ('...' and \"...\" quote; "
		  "no shell), e.g. 'pdsh -N -R ssh -w {host}' or 'kubectl exec {host} --'.",
	  .scope = SCOPE_CLUSTER_CHECK | SCOPE_CLUSTER_FIX },
	{ .name = "remote-gpuready", .type = OPT_STRING, .offset = OFF(cluster.remote), .metavar = "PATH",
	  .def = OPT_DEF_STR("gpuready"), .help = "gpuready's path on the hosts (--hosts).",
	  .scope = SCOPE_CLUSTER_CHECK | SCOPE_CLUSTER_FIX },
	{ .name = "parallel", .type = OPT_INT, .offset = OFF(cluster.parallel), .metavar = "N", .def = OPT_DEF_INT(32),
	  .min = 1, .max = 1024, .help = "Ask at most N hosts at once (--hosts).", .scope = SCOPE_CLUSTER_CHECK | SCOPE_CLUSTER_FIX },
	{ .name = "host-timeout", .type = OPT_INT, .offset = OFF(cluster.host_timeout), .metavar = "SEC",
	  .def = OPT_DEF_INT(120), .min = 1, .max = 86400,
	  .help = "A host that has not answered within SEC seconds is stopped and reported (--hosts); under a "
		  "launcher, a rank that has sent no record SEC seconds after the rendezvous is reported. cluster check "
		  "--bench adds 180 s to either.",
	  .scope = SCOPE_CLUSTER_CHECK | SCOPE_CLUSTER_FIX },
	{ .name = "bootstrap", .type = OPT_STRING, .offset = OFF(cluster.bootstrap), .metavar = "HOW",
	  .def = OPT_DEF_STR("auto"), .valid = bootstrap_form,
	  .help = "Under a launcher, how the processes find rank 0: tcp (the launcher's variables, --master or "
		  "MASTER_ADDR), mpi (MPI_Init and a broadcast: the gpuready-mpi module), or auto (mpi under "
		  "mpirun when nothing names rank 0's address and the ranks span nodes, else tcp).",
	  .scope = SCOPE_CLUSTER_JOB },
	{ .name = "drain", .type = OPT_FLAG, .offset = OFF(cluster.drain),
	  .help = "Print `scontrol update NodeName=NODE State=DRAIN Reason=\"gpuready: ...\"` for each failing node "
		  "(with check --health: this node) instead of the report; --apply runs them, leaving alone a node Slurm "
		  "shows drained for another reason. Warning and unreachable nodes are not drained.",
	  .scope = SCOPE_CLUSTER_CHECK | SCOPE_CHECK },
	{ .name = "resume", .type = OPT_FLAG, .offset = OFF(cluster.resume),
	  .help = "Return to service (`scontrol update NodeName=NODE State=RESUME`) each node that passes or only warns "
		  "now and that Slurm shows drained with a reason starting \"gpuready:\"; never a node drained for "
		  "another reason. Prints the commands; --apply runs them.",
	  .scope = SCOPE_CLUSTER_CHECK | SCOPE_CHECK },
	{ .name = "apply", .type = OPT_FLAG, .offset = OFF(cluster.apply),
	  .help = "Run the scontrol commands of --drain and --resume (each within 30 s, no shell) instead of printing "
		  "them; with fix, make the planned changes (backups, audit log) and run the checks again; with cluster "
		  "fix, on each node, a batch of nodes at a time.",
	  .scope = SCOPE_CLUSTER_CHECK | SCOPE_CHECK | SCOPE_FIXES },
	{ .name = "scontrol", .type = OPT_STRING, .offset = OFF(cluster.scontrol), .metavar = "PATH",
	  .def = OPT_DEF_STR("scontrol"), .help = "Slurm's scontrol (--drain, --resume; default: found on PATH).",
	  .scope = SCOPE_CLUSTER_CHECK | SCOPE_CHECK },
	{ .name = "bench", .type = OPT_FLAG, .offset = OFF(cluster.bench),
	  .help = "Also measure each GPU's host<->GPU copy bandwidth (bench copy's host_to_device_memcpy_ce and "
		  "device_to_host_memcpy_ce, 64 MiB copies; live only) for the gpu.copy_bandwidth check and the "
		  "gpu.copy_bandwidth fact of cluster mode. cluster check hands it to every node it asks (each host's "
		  "`cluster facts`, each rank under a launcher) and waits 180 s longer for each (a GPU that stops "
		  "answering is given up after 120 s in one CUDA call).",
	  .scope = SCOPE_CHECK | SCOPE_CLUSTER },
	{ .name = "health", .type = OPT_FLAG, .offset = OFF(cluster.health),
	  .help = "Health-check mode for Slurm's HealthCheckProgram and job prologs: the checks that fit --budget, one "
		  "line (the --reason line), exit 0 healthy (pass or warn), 1 unhealthy (a fail), 2 could not run.",
	  .scope = SCOPE_CHECK },
	{ .name = "budget", .type = OPT_INT, .offset = OFF(cluster.budget), .metavar = "SEC", .def = OPT_DEF_INT(10),
	  .min = 1, .max = 3600,
	  .help = "check --health: the live probes (NVML, CUDA, PyTorch, GPU memory registration, verbs, DCB) are cut "
		  "off when SEC seconds have passed; the checks then judge from files only and the line says so.",
	  .scope = SCOPE_CHECK },
	{ .name = "duration", .type = OPT_DOUBLE, .offset = OFF(cluster.duration), .metavar = "SEC",
	  .def = OPT_DEF_DOUBLE(2), .min = 0.05, .max = 3600,
	  .help = "Measure each direction of each pair for SEC seconds.", .scope = SCOPE_CLUSTER_LINKS },
	{ .name = "rounds", .type = OPT_INT, .offset = OFF(cluster.rounds), .metavar = "K", .def = OPT_DEF_INT(0),
	  .max = 1000000,
	  .help = "Measure K random perfect matchings (seeded: --seed) instead of every pair in N-1 rounds, for "
		  "fleets where N-1 rounds take too long.",
	  .scope = SCOPE_CLUSTER_LINKS },
	{ .name = "seed", .type = OPT_U64, .offset = OFF(cluster.seed), .metavar = "S", .def = OPT_DEF_U64(0),
	  .help = "The seed of --rounds (0: one drawn from the clock; the one used is printed): the same seed gives "
		  "the same matchings.",
	  .scope = SCOPE_CLUSTER_LINKS },
	{ .name = "svg", .type = OPT_STRING, .offset = OFF(cluster.svg), .metavar = "FILE",
	  .help = "Write the heat map of the rates (in % of the median) to FILE as SVG.", .scope = SCOPE_CLUSTER_LINKS },
	{ .name = "expect-gbps", .type = OPT_DOUBLE, .offset = OFF(cluster.expect_gbps), .metavar = "GBPS",
	  .def = OPT_DEF_DOUBLE(0), .max = 1e6,
	  .help = "A pair is slow only below GBPS (Gb/s) as well as an outlier; a median below GBPS fails the run (the "
		  "TCP rail; RDMA rails are judged against their own median).",
	  .scope = SCOPE_CLUSTER_LINKS },
	{ .name = "rail", .type = OPT_STRING, .offset = OFF(cluster.rail), .metavar = "WHICH",
	  .def = OPT_DEF_STR("all"), .valid = rail_form,
	  .help = "What each pair measures: tcp (between the data listeners), rdma (each RDMA rail, the NIC nearest "
		  "GPU i with the peer's, over verbs: write_bw) or all (both).",
	  .scope = SCOPE_CLUSTER_LINKS },
	{ .name = "size", .type = OPT_U64, .offset = OFF(cluster.size), .metavar = "SIZE", .def = OPT_DEF_U64(0),
	  .help = "The all_reduce's message size in bytes (K, M, G: powers of 1024; 0: 1 GiB with the NCCL backend, "
		  "64 MiB with MPI and socket).",
	  .scope = SCOPE_CLUSTER_NCCL },
	{ .name = "pair-rounds", .type = OPT_INT, .offset = OFF(cluster.pair_rounds), .metavar = "K",
	  .def = OPT_DEF_INT(3), .min = 2, .max = 64,
	  .help = "Rounds of disjoint node pairs measured after the halves (each node meets K partners); "
		  "suspects are then paired with known-good nodes.",
	  .scope = SCOPE_CLUSTER_NCCL },
};
const struct opt_table cluster_opts = OPT_TABLE("cluster", cluster_rows);

/* The copy measurement itself takes seconds (bench/copy/node.h: about
 * 0.15 s per GPU at 50 GB/s, plus CUDA's start on each GPU), but a GPU that
 * stops answering is given up only after COPY_STEP_TIMEOUT_S in one CUDA
 * call: this much more lets the node report that GPU itself rather than be
 * cut off as an unreachable row. The help of --bench and --host-timeout
 * says 180 s. */
#define CLUSTER_BENCH_EXTRA_S ((int)COPY_STEP_TIMEOUT_S + 60)

int cluster_host_timeout(const struct settings *s)
{
	return s->cluster.host_timeout + (s->cluster.bench ? CLUSTER_BENCH_EXTRA_S : 0);
}
