/* Bringing up the processes of a run (see session.h). */
#include "session.h"
#include "cmd.h"
#include "cluster/net.h"
#include "core/cleanup.h"
#include "core/strbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void vreport(const struct session *s, const char *fmt, va_list ap)
{
	char host[64];
	if (s->nprocs > 1) {
		net_hostname(host, sizeof(host));
		fprintf(stderr, "gpuready %s [rank %d %s]: ", s->cmdname, s->proc * (s->local > 0 ? s->local : 1), host);
	} else {
		fprintf(stderr, "gpuready %s: ", s->cmdname);
	}
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void session_error(const struct session *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport(s, fmt, ap);
	va_end(ap);
}

/* The cluster's fatal handler: every process says why it stops; process 0
 * also lets the command write its JSON. */
static void on_fatal(void *ctx, const char *why, int code)
{
	struct session *s = ctx;
	(void)code;
	fflush(stdout);
	session_error(s, "stopping: %s", why);
	if (s->proc == 0 && s->on_fatal)
		s->on_fatal(s->fatal_ctx, why);
}

void session_fail(struct session *s, const char *msg, int err)
{
	int code = err == -ETIMEDOUT ? EXIT_STALLED : EXIT_TOOL_ERROR;
	if (s->cl)
		cluster_fatal(s->cl, msg, code);
	session_error(s, "%s", msg);
	if (s->on_fatal)
		s->on_fatal(s->fatal_ctx, msg);
	exit(code);
}

static int create_backend(const char *name, struct backend **ret, char **err)
{
	if (!strcmp(name, "nccl"))
		return backend_nccl_create(ret, err);
	if (!strcmp(name, "mpi"))
		return backend_mpi_create(ret, err);
	if (!strcmp(name, "socket"))
		return backend_socket_create(ret, err);
	*err = xasprintf("unknown backend '%s' (nccl, mpi or socket)", name);
	return -EINVAL;
}

static int oob_bcast(void *ctx, void *buf, size_t len, double deadline)
{
	struct session *s = ctx;
	char *err = NULL;
	int r = cluster_bcast(s->cl, buf, len, deadline, &err);
	if (r < 0)
		session_error(s, "%s", err);
	free(err);
	return r;
}

static const char *env_get(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

/* MPI: the ranks come from MPI_Init; process 0's control address goes out
 * with MPI_Bcast. */
static int open_mpi(struct session *s, const struct settings *set, double deadline, char **err)
{
	int local_rank = 0, r;
	char addr[1024] = "";

	s->env = (struct backend_env){ .local = 1 };
	r = s->b->ops->init(s->b, &s->env, deadline);
	if (r == 0 && s->b->ops->proc_info)
		r = s->b->ops->proc_info(s->b, &s->proc, &s->nprocs, &local_rank);
	if (r < 0) {
		*err = xasprintf("MPI: %s", s->b->error);
		return r;
	}
	s->local = 1;
	s->nranks = s->nprocs;
	struct cluster_opts o = { .proc = s->proc, .nprocs = s->nprocs, .ranks_per_proc = 1, .local_rank = local_rank,
				  .host = "", .port = 0, .job = "mpi", .deadline = deadline, .on_fatal = on_fatal,
				  .fatal_ctx = s };
	r = cluster_create(&o, &s->cl, err);
	if (r == 0 && s->proc == 0) {
		_cleanup_free_ char *hosts = net_local_addresses();
		snprintf(addr, sizeof(addr), "%d %s", cluster_port(s->cl), hosts);
	}
	/* process 0 sends "" when its listener failed: everyone stops */
	if (s->b->ops->bcast(s->b, addr, sizeof(addr)) < 0 && r == 0) {
		*err = xasprintf("MPI_Bcast of the control address: %s", s->b->error);
		return -EIO;
	}
	if (r < 0)
		return r;
	if (!addr[0]) {
		*err = xstrdup("rank 0 could not open its control port (see its message)");
		return -EIO;
	}
	char *sp = strchr(addr, ' ');
	if (!sp)
		return -EPROTO;
	*sp = '\0';
	(void)set;
	return cluster_join(s->cl, sp + 1, atoi(addr), err);
}

/* Every other backend: the launcher's environment, then the backend. */
static int open_launcher(struct session *s, const struct settings *set, int local, double deadline, char **err)
{
	struct launch_cli cli = { .rank = set->rank, .nranks = set->nranks, .master = set->master };
	int r = launch_detect(&cli, env_get, NULL, &s->launch, err);
	if (r < 0)
		return r;
	s->have_launch = true;
	s->proc = s->launch.rank;
	s->nprocs = s->launch.nranks;
	s->local = local;
	s->nranks = s->nprocs * local;
	struct cluster_opts o = { .proc = s->proc, .nprocs = s->nprocs, .ranks_per_proc = local,
				  .local_rank = s->launch.local_rank, .host = "", .port = s->launch.master_port,
				  .job = s->launch.job, .deadline = deadline, .on_fatal = on_fatal, .fatal_ctx = s };
	r = cluster_create(&o, &s->cl, err);
	if (r == 0)
		r = cluster_join(s->cl, s->launch.master_host, s->launch.master_port, err);
	if (r < 0) {
		char *why = *err;
		*err = xasprintf("%s (%s: rank %d of %d, rank 0 at %s:%d, port %s)", why, s->launch.source, s->proc,
				 s->nprocs, s->launch.master_host, s->launch.master_port, s->launch.port_source);
		free(why);
		return r;
	}
	s->env = (struct backend_env){
		.nranks = s->nranks, .proc_rank = s->proc, .nprocs = s->nprocs, .local = local,
		.first_gpu = s->launch.local_rank * local, .blocking = set->bench.blocking != 0,
		.nccl_lib = set->nccl_lib, .oob_bcast = oob_bcast, .oob_ctx = s, .cluster = s->cl,
	};
	cluster_phase(s->cl, "communicator setup", deadline);
	r = s->b->ops->init(s->b, &s->env, deadline);
	if (r < 0) {
		*err = xstrdup(s->b->error[0] ? s->b->error : strerror(-r));
		return r;
	}
	cluster_phase_done(s->cl);
	return 0;
}

/* Frees what a failed start left behind. */
static void abandon(struct session *s)
{
	if (s->b)
		s->b->ops->fini(s->b);
	cluster_close(s->cl);
	if (s->have_launch)
		launch_free(&s->launch);
	s->b = NULL;
	s->cl = NULL;
	s->have_launch = false;
}

int session_open(struct session *s, const struct settings *set, const char *cmdname, const char *backend, int local)
{
	_cleanup_free_ char *err = NULL;
	double deadline = net_now() + set->connect_timeout;
	int r;

	memset(s, 0, sizeof(*s));
	s->cmdname = cmdname;
	s->nprocs = 1;
	r = create_backend(backend, &s->b, &err);
	if (r < 0) {
		session_error(s, "the %s backend is not available: %s", backend, err);
		return EXIT_TOOL_ERROR;
	}
	if (!strcmp(backend, "mpi")) {
		if (local != 1) {
			session_error(s, "-g %d: the MPI backend runs one rank per process", local);
			abandon(s);
			return EXIT_TOOL_ERROR;
		}
		r = open_mpi(s, set, deadline, &err);
	} else {
		r = open_launcher(s, set, local, deadline, &err);
	}
	if (r < 0) {
		/* ranks that did meet learn of it through the control plane */
		if (s->cl && s->nprocs > 1 && cluster_members(s->cl)[0].pid)
			session_fail(s, err, r);
		session_error(s, "%s", err);
		abandon(s);
		return r == -ETIMEDOUT ? EXIT_STALLED : EXIT_TOOL_ERROR;
	}
	return 0;
}

int session_close(struct session *s, int code)
{
	int32_t c = code;
	_cleanup_free_ char *err = NULL;
	int r;
	if (s->cl && s->nprocs > 1 && (r = cluster_bcast(s->cl, &c, sizeof(c), net_now() + 30.0, &err)) < 0)
		session_fail(s, err, r);
	if (s->cl)
		cluster_finishing(s->cl, c);
	if (s->b)
		s->b->ops->fini(s->b);
	cluster_close(s->cl);
	if (s->have_launch)
		launch_free(&s->launch);
	memset(s, 0, sizeof(*s));
	return c;
}
