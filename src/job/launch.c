/* Reading the launcher's environment (see launch.h for the variables).
 *
 * The first launcher whose rank variable is set wins, in the order of the
 * table below: a job started by srun inside an mpirun allocation, or
 * torchrun inside Slurm, carries several sets, and the innermost launcher
 * (the one that started this process) is listed first. */
#include "launch.h"
#include "core/tcp.h"
#include "core/cleanup.h"
#include "core/parse.h"
#include "core/strbuf.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct launcher {
	const char *source;
	const char *rank, *size, *local_rank, *local_size;
	/* variables whose value identifies the job, joined for the port */
	const char *job[2];
};

static const struct launcher launchers[] = {
	{ "torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", { "TORCHELASTIC_RUN_ID", "MASTER_PORT" } },
	{ "openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
	  "OMPI_COMM_WORLD_LOCAL_SIZE", { "PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid" } },
	{ "mpich", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", { "PMI_KVSNAME", "PMI_JOBID" } },
	{ "pmix", "PMIX_RANK", "PMIX_SIZE", "PMIX_LOCAL_RANK", "PMIX_LOCAL_SIZE", { "PMIX_NAMESPACE", NULL } },
	{ "slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE",
	  { "SLURM_JOB_ID", "SLURM_STEP_ID" } },
};

static int fail(char **err, char *msg)
{
	*err = msg;
	return -EINVAL;
}

static const char *env(launch_getenv_fn fn, void *ctx, const char *name)
{
	const char *v = name ? fn(ctx, name) : NULL;
	return v && *v ? v : NULL;
}

/* A non-negative int from a variable; -1 when unset, -2 when malformed. */
static int env_int(launch_getenv_fn fn, void *ctx, const char *name)
{
	const char *v = env(fn, ctx, name);
	int x;
	if (!v)
		return -1;
	if (parse_int(v, 10, &x) < 0 || x < 0)
		return -2;
	return x;
}

int launch_split_hostport(const char *s, char **host, int *port)
{
	const char *colon;
	size_t hlen;

	if (!s || !*s)
		return -EINVAL;
	if (s[0] == '[') {
		const char *end = strchr(s, ']');
		if (!end || end == s + 1 || (end[1] && end[1] != ':'))
			return -EINVAL;
		colon = end[1] ? end + 1 : NULL;
		s++;
		hlen = (size_t)(end - s);
	} else {
		colon = strchr(s, ':');
		if (colon && strchr(colon + 1, ':'))
			return -EINVAL; /* a bare IPv6 address: needs brackets */
		hlen = colon ? (size_t)(colon - s) : strlen(s);
	}
	if (hlen == 0)
		return -EINVAL;
	if (colon) {
		int p;
		if (parse_int(colon + 1, 10, &p) < 0 || p < 1 || p > 65535)
			return -EINVAL;
		*port = p;
	}
	*host = xstrndup(s, hlen);
	return 0;
}

char *launch_first_host(const char *hostlist)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p = hostlist;

	if (!p || !*p)
		return NULL;
	while (*p && *p != ',' && *p != '[')
		strbuf_addch(&sb, *p++);
	if (*p == '[') {
		/* "[07-09,12]": the first number, with its zero padding */
		p++;
		size_t digits = 0;
		while (isdigit((unsigned char)p[digits]))
			digits++;
		if (!digits || (p[digits] != '-' && p[digits] != ',' && p[digits] != ']') || !strchr(p, ']')) {
			strbuf_release(&sb);
			return NULL;
		}
		strbuf_add(&sb, p, digits);
		/* a suffix after the bracket ("n[1-2]-ib") belongs to every name */
		const char *close = strchr(p, ']') + 1;
		while (*close && *close != ',')
			strbuf_addch(&sb, *close++);
	}
	if (!sb.len) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb);
}

int launch_port_for(const char *job)
{
	/* FNV-1a: a stable spread of job IDs over 20000 ports */
	uint32_t h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)job; *p; p++)
		h = (h ^ *p) * 16777619u;
	return 20000 + (int)(h % 20000u);
}

static char *job_of(const struct launcher *l, launch_getenv_fn fn, void *ctx)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_adds(&sb, l->source);
	for (size_t i = 0; i < ARRAY_SIZE(l->job); i++) {
		const char *v = env(fn, ctx, l->job[i]);
		if (v)
			strbuf_addf(&sb, ":%s", v);
	}
	return strbuf_detach(&sb);
}

/* Rank and size from the first launcher that set its rank variable. */
static int from_launcher(launch_getenv_fn fn, void *ctx, struct launch *l, const struct launcher **which,
			 char **err)
{
	for (size_t i = 0; i < ARRAY_SIZE(launchers); i++) {
		const struct launcher *k = &launchers[i];
		int rank = env_int(fn, ctx, k->rank);
		if (rank == -1)
			continue;
		int size = env_int(fn, ctx, k->size);
		if (rank == -2)
			return fail(err, xasprintf("%s=%s is not a rank number", k->rank, env(fn, ctx, k->rank)));
		if (size < 1)
			return fail(err, xasprintf("%s is set but %s is %s", k->rank, k->size,
						   size == -1 ? "not" : "not a positive number"));
		if (rank >= size)
			return fail(err, xasprintf("%s=%d is not below %s=%d", k->rank, rank, k->size, size));
		l->rank = rank;
		l->nranks = size;
		int lr = env_int(fn, ctx, k->local_rank), ls = env_int(fn, ctx, k->local_size);
		l->local_rank = lr >= 0 ? lr : 0;
		l->local_size = ls > 0 && lr < ls ? ls : 0;
		l->source = k->source;
		/* RANK/WORLD_SIZE without torchrun's own variables: a Kubernetes
		 * operator or a script set them */
		if (k == &launchers[0] && !env(fn, ctx, "TORCHELASTIC_RUN_ID"))
			l->source = "env";
		*which = k;
		return 0;
	}
	*which = NULL;
	return 0;
}

/* Where rank 0 listens: --master, MASTER_ADDR/MASTER_PORT, the first node
 * of a Slurm step, or this host when every rank runs here. */
static int find_master(const struct launch_cli *cli, launch_getenv_fn fn, void *ctx, const struct launcher *k,
		       struct launch *l, char **err)
{
	int port = 0;
	const char *maddr = env(fn, ctx, "MASTER_ADDR"), *mport = env(fn, ctx, "MASTER_PORT");

	if (cli->master) {
		if (launch_split_hostport(cli->master, &l->master_host, &port) < 0)
			return fail(err, xasprintf("--master %s: expected HOST, HOST:PORT or [IPv6]:PORT", cli->master));
		l->port_source = "--master";
	} else if (maddr) {
		if (launch_split_hostport(maddr, &l->master_host, &port) < 0)
			return fail(err, xasprintf("MASTER_ADDR=%s is not a host name or address", maddr));
		if (mport) {
			if (parse_int(mport, 10, &port) < 0 || port < 1 || port > 65535)
				return fail(err, xasprintf("MASTER_PORT=%s is not a port number", mport));
			/* torchrun's agent serves its store on MASTER_PORT */
			bool agent = env(fn, ctx, "TORCHELASTIC_RUN_ID") != NULL;
			if (agent && port == 65535)
				return fail(err, xasprintf("MASTER_PORT=%s leaves no port after it for gpuready", mport));
			port += agent ? 1 : 0;
			l->port_source = agent ? "MASTER_PORT+1 (torchrun holds MASTER_PORT)" : "MASTER_PORT";
		}
	} else if (k && !strcmp(k->source, "slurm") &&
		   (env(fn, ctx, "SLURM_STEP_NODELIST") || env(fn, ctx, "SLURM_JOB_NODELIST"))) {
		const char *list = env(fn, ctx, "SLURM_STEP_NODELIST");
		if (!list)
			list = env(fn, ctx, "SLURM_JOB_NODELIST");
		l->master_host = launch_first_host(list);
		if (!l->master_host)
			return fail(err, xasprintf("cannot read the first node of the Slurm node list '%s'", list));
	} else if (l->nranks == 1 || (l->local_size > 0 && l->local_size == l->nranks)) {
		l->master_host = xstrdup("127.0.0.1");
	} else {
		return fail(err, xasprintf("%d processes over more than one node and nothing says where rank 0 runs: "
					   "pass --master HOST[:PORT] or set MASTER_ADDR and MASTER_PORT",
					   l->nranks));
	}
	if (!port) {
		port = strchr(l->job, ':') ? launch_port_for(l->job) : LAUNCH_DEFAULT_PORT;
		l->port_source = strchr(l->job, ':') ? "derived from the job ID" : "gpuready's default";
	} else if (!l->port_source) {
		l->port_source = "--master";
	}
	l->master_port = port;
	return 0;
}

int launch_detect(const struct launch_cli *cli, launch_getenv_fn fn, void *ctx, struct launch *ret, char **err)
{
	struct launch l = { .rank = 0, .nranks = 1, .source = "single" };
	const struct launcher *k = NULL;
	int r;

	if (cli->rank >= 0 || cli->nranks > 0) {
		if (cli->rank < 0 || cli->nranks < 1)
			return fail(err, xstrdup("--rank and --nranks go together"));
		if (cli->rank >= cli->nranks)
			return fail(err, xasprintf("--rank %d is not below --nranks %d", cli->rank, cli->nranks));
		l.rank = cli->rank;
		l.nranks = cli->nranks;
		l.source = "cli";
		int lr = env_int(fn, ctx, "LOCAL_RANK");
		l.local_rank = lr >= 0 ? lr : 0;
	} else {
		r = from_launcher(fn, ctx, &l, &k, err);
		if (r < 0)
			return r;
	}
	l.job = k ? job_of(k, fn, ctx) : xstrdup(l.source);
	r = find_master(cli, fn, ctx, k, &l, err);
	if (r < 0) {
		launch_free(&l);
		return r;
	}
	*ret = l;
	return 0;
}

char *launch_listen_addresses(const struct launch *l, const char *bind, char **note, char **err)
{
	unsigned char bin[sizeof(struct in6_addr)];
	const char *m = l->master_host;

	if (bind && *bind)
		return xstrdup(!strcmp(bind, "0.0.0.0") || !strcmp(bind, "::") || !strcmp(bind, "*") ? "" : bind);
	/* an address (or localhost) is where the others connect: exactly that */
	if (inet_pton(AF_INET, m, bin) == 1 || inet_pton(AF_INET6, m, bin) == 1 || !strcmp(m, "localhost"))
		return xstrdup(m);
	char *a = tcp_resolve_addresses(m, false, err), *far = a ? tcp_resolve_addresses(m, true, err) : NULL;
	bool one_host = l->nranks == 1 || (l->local_size > 0 && l->local_size == l->nranks);
	if (!far || *far || one_host) {
		free(far);
		return a;
	}
	/* the name is loopback here only: listening there alone would shut
	 * out every other host, so this host's other addresses join it */
	char *all = tcp_local_addresses(), *lo = strrchr(all, ',');
	if (lo) {
		*lo = '\0';
		*note = xasprintf("%s resolves to a loopback address on this host (/etc/hosts maps the host name to one on "
				  "Debian and Ubuntu) and ranks may run on other hosts: listening on %s too (--bind ADDR "
				  "chooses)", m, all);
		char *both = xasprintf("%s,%s", a, all);
		free(a);
		a = both;
	}
	free(all);
	free(far);
	return a;
}

void launch_free(struct launch *l)
{
	if (!l)
		return;
	free(l->master_host);
	free(l->job);
	l->master_host = l->job = NULL;
}
