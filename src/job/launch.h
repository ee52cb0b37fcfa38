/* Who am I in this job: process rank, process count, node-local rank and
 * where rank 0 listens, from the launcher's environment.
 *
 * Launchers and the variables they set (each launcher's documentation:
 * torchrun's "Environment Variables" section, Open MPI's mpirun(1), MPICH
 * Hydra, Slurm's srun(1) "OUTPUT ENVIRONMENT VARIABLES"):
 *   explicit   --rank R --nranks N [--master HOST[:PORT]]
 *   torchrun   RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR
 *              MASTER_PORT, plus TORCHELASTIC_RUN_ID (torchrun itself; its
 *              agent already holds MASTER_PORT, so gpuready takes the next
 *              port). Kubernetes operators set the same names without
 *              TORCHELASTIC_*: MASTER_PORT is then free and used as is.
 *   Open MPI   OMPI_COMM_WORLD_RANK _SIZE _LOCAL_RANK _LOCAL_SIZE
 *   MPICH/PMI  PMI_RANK PMI_SIZE MPI_LOCALRANKID MPI_LOCALNRANKS
 *   PMIx       PMIX_RANK (size from the others)
 *   Slurm      SLURM_PROCID SLURM_NTASKS SLURM_LOCALID SLURM_STEP_NODELIST
 *              (rank 0 runs on the first node of the step)
 *
 * Pure: the environment comes through a lookup function, so every
 * launcher's variables are unit-tested without setting them. */
#ifndef GPUREADY_LAUNCH_H
#define GPUREADY_LAUNCH_H

#include <stdbool.h>

/* The port gpuready listens on when nothing names one and no job ID can
 * derive one. */
#define LAUNCH_DEFAULT_PORT 29419

struct launch_cli {
	int rank;            /* -1 when not given */
	int nranks;          /* 0 when not given */
	const char *master;  /* "HOST", "HOST:PORT", "[v6]:PORT" or NULL */
};

struct launch {
	int rank, nranks;            /* processes */
	int local_rank, local_size;  /* on this node; local_size 0 when unknown */
	char *master_host;           /* where rank 0 listens (rank 0 binds it too) */
	int master_port;
	const char *source;          /* "cli", "torchrun", "env", "openmpi", "mpich", "pmix", "slurm", "single" */
	const char *port_source;     /* how master_port was chosen, for messages */
	char *job;                   /* job identity for the handshake ("slurm:1234.0"), never NULL */
};

typedef const char *(*launch_getenv_fn)(void *ctx, const char *name);

/* Fills *ret from cli and the environment. Returns 0, or -EINVAL with
 * *err (malloc'd) naming the variable or option that is wrong. A single
 * process with no launcher is rank 0 of 1 (source "single"). */
int launch_detect(const struct launch_cli *cli, launch_getenv_fn getenv_fn, void *ctx, struct launch *ret,
		  char **err);
void launch_free(struct launch *l);

/* The first host of a Slurm hostlist ("gpu[07-09,12],cpu1" -> "gpu07").
 * Returns a malloc'd string or NULL when the list is malformed. */
char *launch_first_host(const char *hostlist);

/* Splits "HOST[:PORT]" / "[V6ADDR]:PORT". *port is left alone when the
 * text has none. Returns 0 or -EINVAL. */
int launch_split_hostport(const char *s, char **host, int *port);

/* Where rank 0 listens (comma-separated addresses for job_opts.host):
 * --bind if given (0.0.0.0, :: or * for every address: ""), the master
 * address itself when it is one, else the addresses the master host name
 * resolves to here. Never only loopback addresses when ranks may run on
 * other hosts (the launcher does not say every rank is local): Debian and
 * Ubuntu map the host's own name to 127.0.1.1 in /etc/hosts, where no
 * other host can reach it; then this host's other addresses are added and
 * *note says so. NULL with *err when the name does not resolve. */
char *launch_listen_addresses(const struct launch *l, const char *bind, char **note, char **err);

/* A port in [20000, 40000) derived from a job identity, so concurrent jobs
 * on one node do not collide. */
int launch_port_for(const char *job);

#endif
