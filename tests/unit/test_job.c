/* Unit tests for src/job: every launcher's variables (launch.c), and
 * the control plane across real processes (fork) on loopback: the
 * exchanges, a rendezvous that times out naming the missing rank, a
 * process of another job refused, a lost process named by rank 0, who may
 * join, and who comes too late: once the job has formed. */
#define _GNU_SOURCE
#include "testutil.h"
#include "config.h"
#include "job/job.h"
#include "job/job_int.h"
#include "job/launch.h"
#include "core/tcp.h"
#include "core/auth.h"
#include "core/cleanup.h"
#include "core/strbuf.h"
#include "core/wire.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- launch ---- */

struct fake_env {
	const char *const *kv; /* "NAME=value", NULL-terminated */
};

static const char *fake_get(void *ctx, const char *name)
{
	const struct fake_env *e = ctx;
	size_t n = strlen(name);
	for (const char *const *p = e->kv; *p; p++)
		if (!strncmp(*p, name, n) && (*p)[n] == '=')
			return *p + n + 1;
	return NULL;
}

static struct launch detect_ok(const char *const *kv, const struct launch_cli *cli)
{
	struct fake_env e = { kv };
	struct launch_cli none = { .rank = -1 };
	struct launch l;
	char *err = NULL;
	if (launch_detect(cli ? cli : &none, fake_get, &e, &l, &err) < 0)
		fail_msg("launch_detect: %s", err);
	return l;
}

static char *detect_err(const char *const *kv, const struct launch_cli *cli)
{
	struct fake_env e = { kv };
	struct launch_cli none = { .rank = -1 };
	struct launch l;
	char *err = NULL;
	assert_int_equal(launch_detect(cli ? cli : &none, fake_get, &e, &l, &err), -EINVAL);
	assert_non_null(err);
	return err;
}

static void test_torchrun(void **state)
{
	(void)state;
	const char *kv[] = { "RANK=5", "WORLD_SIZE=16", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=8", "MASTER_ADDR=node01",
			     "MASTER_PORT=29500", "TORCHELASTIC_RUN_ID=abc", NULL };
	struct launch l = detect_ok(kv, NULL);
	assert_string_equal(l.source, "torchrun");
	assert_int_equal(l.rank, 5);
	assert_int_equal(l.nranks, 16);
	assert_int_equal(l.local_rank, 1);
	assert_int_equal(l.local_size, 8);
	assert_string_equal(l.master_host, "node01");
	assert_int_equal(l.master_port, 29501); /* torchrun's agent holds 29500 */
	launch_free(&l);
	/* the same names from a Kubernetes operator: the port is free */
	const char *k8s[] = { "RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=10.0.0.5", "MASTER_PORT=23456", NULL };
	l = detect_ok(k8s, NULL);
	assert_string_equal(l.source, "env");
	assert_int_equal(l.master_port, 23456);
	launch_free(&l);
}

static void test_openmpi_mpich_pmix(void **state)
{
	(void)state;
	const char *ompi[] = { "OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_RANK=3",
			       "OMPI_COMM_WORLD_LOCAL_SIZE=4", "PMIX_NAMESPACE=prterun-x-1234@1", NULL };
	struct launch l = detect_ok(ompi, NULL);
	assert_string_equal(l.source, "openmpi");
	assert_int_equal(l.rank, 3);
	assert_int_equal(l.local_size, 4);
	/* every rank on this host: rank 0 is here, at a port from the job */
	assert_string_equal(l.master_host, "127.0.0.1");
	assert_int_equal(l.master_port, launch_port_for(l.job));
	assert_true(l.master_port >= 20000 && l.master_port < 40000);
	launch_free(&l);
	const char *mpich[] = { "PMI_RANK=1", "PMI_SIZE=2", "MPI_LOCALRANKID=1", "MPI_LOCALNRANKS=2", NULL };
	l = detect_ok(mpich, NULL);
	assert_string_equal(l.source, "mpich");
	assert_int_equal(l.rank, 1);
	assert_int_equal(l.master_port, LAUNCH_DEFAULT_PORT); /* no job id */
	launch_free(&l);
	const char *pmix[] = { "PMIX_RANK=0", "PMIX_SIZE=1", NULL };
	l = detect_ok(pmix, NULL);
	assert_string_equal(l.source, "pmix");
	launch_free(&l);
	/* several nodes and nothing naming rank 0's: a clear error */
	const char *multi[] = { "OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=16", "OMPI_COMM_WORLD_LOCAL_SIZE=8",
				NULL };
	char *e = detect_err(multi, NULL);
	assert_non_null(strstr(e, "--master"));
	free(e);
}

static void test_slurm(void **state)
{
	(void)state;
	const char *kv[] = { "SLURM_PROCID=9", "SLURM_NTASKS=16", "SLURM_LOCALID=1", "SLURM_NTASKS_PER_NODE=8(x2)",
			     "SLURM_STEP_NODELIST=gpu[07-08]", "SLURM_JOB_ID=4242", "SLURM_STEP_ID=0", NULL };
	struct launch l = detect_ok(kv, NULL);
	assert_string_equal(l.source, "slurm");
	assert_int_equal(l.rank, 9);
	assert_int_equal(l.local_rank, 1);
	assert_int_equal(l.local_size, 0); /* "8(x2)" is not a number */
	assert_string_equal(l.master_host, "gpu07");
	assert_string_equal(l.job, "slurm:4242:0");
	assert_int_equal(l.master_port, launch_port_for("slurm:4242:0"));
	launch_free(&l);
	/* srun inside mpirun: the innermost launcher (Open MPI's) wins */
	const char *both[] = { "OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_SIZE=4",
			       "SLURM_PROCID=0", "SLURM_NTASKS=1", NULL };
	l = detect_ok(both, NULL);
	assert_string_equal(l.source, "openmpi");
	launch_free(&l);
}

static void test_cli_and_errors(void **state)
{
	(void)state;
	const char *none[] = { NULL };
	struct launch_cli cli = { .rank = 1, .nranks = 3, .master = "10.1.2.3:4000" };
	struct launch l = detect_ok(none, &cli);
	assert_string_equal(l.source, "cli");
	assert_string_equal(l.master_host, "10.1.2.3");
	assert_int_equal(l.master_port, 4000);
	launch_free(&l);
	/* --master overrides the environment */
	const char *kv[] = { "RANK=1", "WORLD_SIZE=2", "MASTER_ADDR=a", "MASTER_PORT=1", NULL };
	struct launch_cli m = { .rank = -1, .master = "[fe80::1]:5000" };
	l = detect_ok(kv, &m);
	assert_string_equal(l.master_host, "fe80::1");
	assert_int_equal(l.master_port, 5000);
	launch_free(&l);
	l = detect_ok(none, NULL);
	assert_string_equal(l.source, "single");
	assert_int_equal(l.nranks, 1);
	launch_free(&l);

	const char *bad1[] = { "RANK=4", "WORLD_SIZE=4", NULL };
	char *e = detect_err(bad1, NULL);
	assert_non_null(strstr(e, "RANK=4"));
	free(e);
	const char *bad2[] = { "RANK=x", "WORLD_SIZE=4", NULL };
	e = detect_err(bad2, NULL);
	free(e);
	const char *bad3[] = { "RANK=0", NULL };
	e = detect_err(bad3, NULL);
	assert_non_null(strstr(e, "WORLD_SIZE"));
	free(e);
	const char *bad4[] = { "RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=99999", NULL };
	e = detect_err(bad4, NULL);
	assert_non_null(strstr(e, "MASTER_PORT"));
	free(e);
	struct launch_cli half = { .rank = 2, .nranks = 0 };
	e = detect_err(none, &half);
	free(e);
	struct launch_cli badm = { .rank = -1, .master = "h:0" };
	e = detect_err(none, &badm);
	free(e);
}

static void test_first_host(void **state)
{
	(void)state;
	char *h;
	assert_string_equal((h = launch_first_host("node1")), "node1");
	free(h);
	assert_string_equal((h = launch_first_host("gpu[007-009,012],cpu1")), "gpu007");
	free(h);
	assert_string_equal((h = launch_first_host("a1,b2")), "a1");
	free(h);
	assert_string_equal((h = launch_first_host("n[3,5]-ib")), "n3-ib");
	free(h);
	assert_null(launch_first_host("gpu[x-y]"));
	assert_null(launch_first_host("gpu[1-2"));
	assert_null(launch_first_host(""));
}

static void test_hostport(void **state)
{
	(void)state;
	char *h = NULL;
	int port = 7;
	assert_int_equal(launch_split_hostport("host", &h, &port), 0);
	assert_string_equal(h, "host");
	assert_int_equal(port, 7);
	free(h);
	assert_int_equal(launch_split_hostport("[::1]:80", &h, &port), 0);
	assert_string_equal(h, "::1");
	assert_int_equal(port, 80);
	free(h);
	assert_int_equal(launch_split_hostport("::1", &h, &port), -EINVAL);
	assert_int_equal(launch_split_hostport(":80", &h, &port), -EINVAL);
	assert_int_equal(launch_split_hostport("h:70000", &h, &port), -EINVAL);
	assert_int_equal(launch_split_hostport("[::1]x", &h, &port), -EINVAL);
}

/* ---- the frames on the wire (job/wire.c) ---- */

/* The header, HELLO, the roster and the DATA header byte by byte:
 * little-endian, fixed sizes, reserved fields zero. */
static void test_frame_bytes(void **state)
{
	(void)state;
	uint8_t h[JOB_HDR_LEN];
	job_hdr_encode(h, MSG_WELCOME, 0x0102030405060708ull);
	assert_memory_equal(h, "\2\0\0\0\0\0\0\0\10\7\6\5\4\3\2\1", JOB_HDR_LEN);
	struct hdr hd = job_hdr_decode(h);
	assert_int_equal(hd.type, MSG_WELCOME);
	assert_true(hd.len == 0x0102030405060708ull);

	struct hello in = { .proc = 3, .nprocs = 4, .ranks_per_proc = 8, .local_rank = 1, .pid = 0x01020304,
			    .host = "node-a", .job = "j1" }, out;
	uint8_t b[JOB_HELLO_LEN];
	memcpy(in.magic, MAGIC, sizeof(in.magic));
	job_hello_encode(&in, b);
	assert_memory_equal(b, MAGIC "\3\0\0\0\4\0\0\0\10\0\0\0\1\0\0\0\4\3\2\1\0\0\0\0node-a\0", 8 + 24 + 7);
	assert_memory_equal(b + 96, "j1\0", 3);
	job_hello_decode(b, &out);
	assert_int_equal(memcmp(&in, &out, sizeof(in)), 0);
	memset(b + 32, 'h', 64); /* an unterminated host comes back terminated */
	job_hello_decode(b, &out);
	assert_int_equal(strlen(out.host), 63);

	struct job_member m[2] = { { .proc = 0, .pid = 77, .local_rank = 2, .host = "h0" },
				   { .proc = 1, .pid = 0x10000, .local_rank = 0, .host = "h1" } }, back;
	uint8_t roster[2 * JOB_MEMBER_LEN];
	job_roster_encode(m, 2, roster);
	assert_memory_equal(roster, "\0\0\0\0\115\0\0\0\2\0\0\0\0\0\0\0h0\0", 19);
	assert_memory_equal(roster + JOB_MEMBER_LEN, "\1\0\0\0\0\0\1\0\0\0\0\0\0\0\0\0h1\0", 19);
	job_member_decode(roster + JOB_MEMBER_LEN, &back);
	assert_int_equal(back.proc, 1);
	assert_int_equal(back.pid, 0x10000);
	assert_string_equal(back.host, "h1");

	uint8_t d[JOB_DATA_HDR_LEN];
	struct data_hdr dh;
	job_data_hdr_encode(d, 3, 0x1122334455667788ull);
	assert_memory_equal(d, "\3\0\0\0\0\0\0\0\x88\x77\x66\x55\x44\x33\x22\x11", JOB_DATA_HDR_LEN);
	assert_true(job_data_hdr_decode(d, sizeof(d), &dh));
	assert_true(dh.op == 3 && dh.seq == 0x1122334455667788ull);
	assert_false(job_data_hdr_decode(d, sizeof(d) - 1, &dh));
	assert_true(dh.op == 3 && dh.seq == 0);
}

/* ---- the control plane across processes ---- */

/* A free loopback port (bound and released; good enough for a test). */
static int free_port(void)
{
	char *msg = NULL;
	int fd = tcp_listen("127.0.0.1", 0, &msg);
	assert_true(fd >= 0);
	assert_null(msg);
	int p = tcp_local_port(fd);
	close(fd);
	return p;
}

/* What a child reports back through shared memory. */
struct child_out {
	char err[512];
	int status;
	int joined;                 /* the job formed (job_join returned) */
	int go;                     /* the test lets the job end (child_running) */
	char late[2048];            /* process 0: the late connections it turned away, one a line */
};

static void fatal_to_shm(void *ctx, const char *why, int code)
{
	struct child_out *o = ctx;
	snprintf(o->err, sizeof(o->err), "%s", why);
	o->status = code;
}

static void late_to_shm(void *ctx, const char *line)
{
	struct child_out *o = ctx;
	size_t n = strlen(o->late);
	snprintf(o->late + n, sizeof(o->late) - n, "%s\n", line);
}

/* Joins as process proc; token NULL: without a job token. */
static struct job *child_join_token(int proc, int nprocs, int port, const char *job, double timeout,
				   struct child_out *out, const char *token)
{
	struct auth_key key = { .set = false };
	if (token)
		assert_int_equal(auth_key_from(token, strlen(token), &key), 0);
	struct job_opts o = { .proc = proc, .nprocs = nprocs, .ranks_per_proc = 1, .host = "127.0.0.1",
				  .port = port, .job = job, .deadline = clock_now() + timeout, .on_fatal = fatal_to_shm,
				  .on_late = late_to_shm, .fatal_ctx = out, .key = &key };
	struct job *c = NULL;
	char *err = NULL;
	int r = job_create(&o, &c, &err);
	if (r < 0 || (r = job_join(c, "127.0.0.1", port, &err)) < 0) {
		snprintf(out->err, sizeof(out->err), "%s", err ? err : "?");
		out->status = 2;
		out->joined = r; /* why not: -errno */
		_exit(2);
	}
	return c;
}

static struct job *child_join(int proc, int nprocs, int port, const char *job, double timeout,
			      struct child_out *out)
{
	return child_join_token(proc, nprocs, port, job, timeout, out, NULL);
}

/* Every exchange, checked on every process. */
static void child_exchanges(int proc, int n, int port, struct child_out *out)
{
	struct job *c = child_join(proc, n, port, "job1", 10, out);
	char *err = NULL;
	int v = proc == 0 ? 4242 : 0, bad = 0;
	double d[2] = { proc + 1.0, -proc };
	int all[8] = { 0 }, mine = proc * 10, back = -1;

	bad |= job_bcast(c, &v, sizeof(v), clock_now() + 5, &err) != 0 || v != 4242;
	bad |= job_allreduce_f64(c, d, 2, JOB_SUM, clock_now() + 5, &err) != 0 || d[0] != n * (n + 1) / 2.0;
	d[0] = proc;
	bad |= job_allreduce_f64(c, d, 1, JOB_MAX, clock_now() + 5, &err) != 0 || d[0] != n - 1;
	bad |= job_allgather(c, &mine, sizeof(mine), all, clock_now() + 5, &err) != 0 || all[n - 1] != (n - 1) * 10;
	int parts[8];
	for (int i = 0; i < n; i++)
		parts[i] = 100 + i;
	bad |= job_scatter(c, parts, &back, sizeof(back), clock_now() + 5, &err) != 0 || back != 100 + proc;
	bad |= job_barrier(c, clock_now() + 5, &err) != 0;
	const struct job_member *m = job_members(c);
	bad |= m[n - 1].pid == 0 || m[n - 1].proc != n - 1;
	if (bad)
		snprintf(out->err, sizeof(out->err), "exchange failed: %s", err ? err : "wrong value");
	job_close(c);
	_exit(bad ? 1 : 0);
}

static struct child_out *shm_outs(int n)
{
	struct child_out *o = mmap(NULL, sizeof(*o) * (size_t)n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(o != MAP_FAILED);
	memset(o, 0, sizeof(*o) * (size_t)n);
	return o;
}

static int wait_child(pid_t pid)
{
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_exchanges(void **state)
{
	(void)state;
	enum { N = 4 };
	int port = free_port();
	struct child_out *out = shm_outs(N);
	pid_t pids[N];
	for (int i = 0; i < N; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			child_exchanges(i, N, port, &out[i]);
	}
	for (int i = 0; i < N; i++)
		if (wait_child(pids[i]) != 0)
			fail_msg("process %d: %s", i, out[i].err);
	munmap(out, sizeof(*out) * N);
}

static void test_rendezvous_timeout(void **state)
{
	(void)state;
	int port = free_port();
	struct child_out *out = shm_outs(3);
	pid_t p0 = fork();
	if (p0 == 0) {
		child_join(0, 3, port, "job1", 1.5, &out[0]);
		_exit(0);
	}
	pid_t p1 = fork();
	if (p1 == 0) {
		struct job *c = child_join(1, 3, port, "job1", 5, &out[1]);
		job_close(c);
		_exit(0);
	}
	/* process 2 never comes */
	double t0 = clock_now();
	assert_int_equal(wait_child(p0), 2);
	assert_true(clock_now() - t0 < 5);
	assert_non_null(strstr(out[0].err, "rank 2 did not arrive"));
	assert_int_equal(wait_child(p1), 2);
	assert_non_null(strstr(out[1].err, "did not arrive"));
	munmap(out, sizeof(*out) * 3);
}

static void test_other_job_refused(void **state)
{
	(void)state;
	int port = free_port();
	struct child_out *out = shm_outs(2);
	pid_t p0 = fork();
	if (p0 == 0) {
		child_join(0, 2, port, "job1", 1.5, &out[0]);
		_exit(0);
	}
	pid_t p1 = fork();
	if (p1 == 0) {
		child_join(1, 2, port, "job2", 5, &out[1]);
		_exit(0);
	}
	assert_int_equal(wait_child(p1), 2);
	assert_non_null(strstr(out[1].err, "refused this process"));
	assert_non_null(strstr(out[1].err, "job2"));
	assert_int_equal(wait_child(p0), 2);
	assert_non_null(strstr(out[0].err, "refused a connection"));
	munmap(out, sizeof(*out) * 2);
}

/* Process 2 dies in a phase; process 0 names it and every survivor stops
 * with that explanation. */
static void child_lost(int proc, int n, int port, struct child_out *out)
{
	struct job *c = child_join(proc, n, port, "job1", 10, out);
	char *err = NULL;
	job_phase(c, "the test phase", clock_now() + 30);
	/* every process is in the phase before process 2 dies */
	if (job_barrier(c, clock_now() + 30, &err) < 0)
		_exit(8);
	if (proc == 2)
		raise(SIGKILL);
	job_barrier(c, clock_now() + 30, &err); /* never completes */
	_exit(9);
}

static void test_lost_process(void **state)
{
	(void)state;
	enum { N = 3 };
	int port = free_port();
	struct child_out *out = shm_outs(N);
	pid_t pids[N];
	for (int i = 0; i < N; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			child_lost(i, N, port, &out[i]);
	}
	double t0 = clock_now();
	assert_int_equal(wait_child(pids[2]), 128 + SIGKILL);
	assert_int_equal(wait_child(pids[0]), 3);
	assert_int_equal(wait_child(pids[1]), 3);
	assert_true(clock_now() - t0 < 10);
	for (int i = 0; i < 2; i++) {
		if (!strstr(out[i].err, "rank 2 (") || !strstr(out[i].err, "the test phase"))
			fail_msg("process %d said: %s", i, out[i].err);
		assert_int_equal(out[i].status, 3);
	}
	munmap(out, sizeof(*out) * N);
}

/* ---- who may join ---- */

/* Joins, then waits at a barrier the test decides about; exit 0 when the
 * barrier completes. */
static void child_barrier(int proc, int n, int port, double timeout, struct child_out *out, const char *token)
{
	struct job *c = child_join_token(proc, n, port, "job1", timeout, out, token);
	char *err = NULL;
	int r = job_barrier(c, clock_now() + timeout, &err);
	if (r < 0)
		snprintf(out->err, sizeof(out->err), "barrier: %s", err ? err : "?");
	job_close(c);
	_exit(r < 0 ? 1 : 0);
}

static pid_t spawn_barrier(int proc, int n, int port, double timeout, struct child_out *out, const char *token)
{
	pid_t p = fork();
	if (p == 0)
		child_barrier(proc, n, port, timeout, out, token);
	return p;
}

/* A raw connection to process 0, retried until it listens. */
static int raw_connect(int port)
{
	char *err = NULL, *host = xstrdup("127.0.0.1");
	int fd = tcp_connect(host, port, clock_now() + 5, &err);
	free(host);
	free(err);
	assert_true(fd >= 0);
	return fd;
}

/* The next frame on fd, which must be of type want: its payload (malloc'd). */
static char *expect_frame(int fd, enum msg want)
{
	enum msg type;
	char *payload = NULL;
	size_t len = 0;
	assert_int_equal(job_read_frame(fd, &type, &payload, &len, clock_now() + 10), 0);
	assert_int_equal(type, want);
	return payload;
}

/* A stranger's HELLO for process proc of job1 (2 or 3 processes) from a
 * process of gpuready `version`; flags HELLO_HAS_TOKEN claims a job token. */
static void raw_hello_version(int fd, int proc, int n, uint32_t flags, const char *version)
{
	struct hello h = { .proc = (uint32_t)proc, .nprocs = (uint32_t)n, .ranks_per_proc = 1, .pid = 4242,
			   .flags = flags };
	uint8_t raw[JOB_HELLO_LEN];
	memcpy(h.magic, MAGIC, sizeof(h.magic));
	snprintf(h.version, sizeof(h.version), "%s", version);
	snprintf(h.host, sizeof(h.host), "rogue\033[2J");
	snprintf(h.job, sizeof(h.job), "job1");
	job_hello_encode(&h, raw);
	assert_int_equal(tcp_write_all(fd, raw, sizeof(raw), clock_now() + 5), 0);
}

static void raw_hello(int fd, int proc, int n, uint32_t flags)
{
	raw_hello_version(fd, proc, n, flags, GPUREADY_VERSION);
}

/* A process of gpuready 0.0.1-old claims process rank proc of n and is
 * refused: returns rank 0's reason (malloc'd). */
static char *odd_hello(int port, int proc, int n)
{
	int fd = raw_connect(port);
	raw_hello_version(fd, proc, n, 0, "0.0.1-old");
	char *payload = expect_frame(fd, MSG_REJECT);
	close(fd);
	return payload;
}

/* A process of another version claims rank 2, then the real rank 2 comes:
 * rank 2 is no longer odd, and the run names rank 3, which never came. */
static void test_odd_then_real(void **state)
{
	(void)state;
	int port = free_port();
	struct child_out *out = shm_outs(3);
	pid_t p0 = spawn_barrier(0, 4, port, 4, &out[0], NULL);
	pid_t p1 = spawn_barrier(1, 4, port, 10, &out[1], NULL);
	free(odd_hello(port, 2, 4));
	pid_t p2 = spawn_barrier(2, 4, port, 10, &out[2], NULL);
	assert_int_equal(wait_child(p0), 2);
	if (!strstr(out[0].err, "rank 3 did not arrive") || strstr(out[0].err, "not every rank runs"))
		fail_msg("rank 0 said: %s", out[0].err);
	assert_int_equal(out[0].joined, -ETIMEDOUT);
	wait_child(p1);
	wait_child(p2);
	munmap(out, sizeof(*out) * 3);
}

/* Rank 2 runs another gpuready version: it is refused, and once every
 * other rank is here, rank 0 ends the rendezvous at once naming it (no
 * wait for the deadline), and rank 1 learns why. */
static void test_mixed_versions(void **state)
{
	(void)state;
	int port = free_port();
	struct child_out *out = shm_outs(2);
	double t0 = clock_now();
	pid_t p0 = spawn_barrier(0, 3, port, 60, &out[0], NULL);
	pid_t p1 = spawn_barrier(1, 3, port, 60, &out[1], NULL);
	char *payload = odd_hello(port, 2, 3);
	if (!strstr(payload, "runs gpuready 0.0.1-old and rank 0 runs " GPUREADY_VERSION))
		fail_msg("the odd rank was told: %s", payload);
	free(payload);
	assert_int_equal(wait_child(p0), 2);
	if (!strstr(out[0].err, "not every rank runs gpuready " GPUREADY_VERSION) ||
	    !strstr(out[0].err, "rank 2 (rogue?[2J, pid 4242) runs 0.0.1-old"))
		fail_msg("rank 0 said: %s", out[0].err);
	assert_int_not_equal(wait_child(p1), 0);
	if (!strstr(out[1].err, "rank 2 (rogue?[2J, pid 4242) runs 0.0.1-old"))
		fail_msg("rank 1 said: %s", out[1].err);
	/* -EPROTO, as on rank 0 (gpuready exits 2), not a timeout (3) */
	assert_int_equal(out[0].joined, -EPROTO);
	assert_int_equal(out[1].joined, -EPROTO);
	assert_true(clock_now() - t0 < 30); /* long before the 60 s deadline */
	munmap(out, sizeof(*out) * 2);
}

/* A process that is not of the job takes rank 1 first: the real rank 1 is
 * refused with the holder named, and the stranger's FAIL frame carrying
 * exit code 0 still ends the job as an error everywhere. */
static void test_rogue_rank(void **state)
{
	(void)state;
	int port = free_port();
	struct child_out *out = shm_outs(3);
	pid_t p0 = spawn_barrier(0, 3, port, 20, &out[0], NULL);
	int rogue = raw_connect(port);
	raw_hello(rogue, 1, 3, 0);
	usleep(300000); /* rank 0 holds rank 1 for the stranger now */
	pid_t p1 = spawn_barrier(1, 3, port, 5, &out[1], NULL);
	assert_int_equal(wait_child(p1), 2);
	if (!strstr(out[1].err, "refused this process") || !strstr(out[1].err, "already here (rogue?[2J, pid 4242)"))
		fail_msg("the real rank 1 said: %s", out[1].err);
	pid_t p2 = spawn_barrier(2, 3, port, 20, &out[2], NULL);
	free(expect_frame(rogue, MSG_WELCOME));
	/* FAIL {u32 code 0, u32 reserved} "all good" */
	uint8_t frame[JOB_HDR_LEN + 8 + 8];
	job_hdr_encode(frame, MSG_FAIL, 16);
	memset(frame + JOB_HDR_LEN, 0, 8);
	memcpy(frame + JOB_HDR_LEN + 8, "all good", 8);
	assert_int_equal(tcp_write_all(rogue, frame, sizeof(frame), clock_now() + 5), 0);
	int s0 = wait_child(p0), s2 = wait_child(p2);
	close(rogue);
	if (s0 == 0 || s2 == 0 || !strstr(out[0].err, "no peer may choose"))
		fail_msg("exits %d %d; rank 0 said: %s", s0, s2, out[0].err);
	munmap(out, sizeof(*out) * 3);
}

/* The cap plus 50 connections that never say anything: the job still
 * forms, at once. */
static void test_silent_connections(void **state)
{
	(void)state;
	enum { SILENT = 64 + 50 };
	int port = free_port(), fds[SILENT];
	struct child_out *out = shm_outs(2);
	double t0 = clock_now();
	pid_t p0 = spawn_barrier(0, 2, port, 20, &out[0], NULL);
	for (int i = 0; i < SILENT; i++)
		fds[i] = raw_connect(port);
	pid_t p1 = spawn_barrier(1, 2, port, 20, &out[1], NULL);
	int s1 = wait_child(p1), s0 = wait_child(p0);
	for (int i = 0; i < SILENT; i++)
		close(fds[i]);
	if (s0 || s1)
		fail_msg("exits %d %d: %s / %s", s0, s1, out[0].err, out[1].err);
	assert_true(clock_now() - t0 < 15);
	munmap(out, sizeof(*out) * 2);
}

/* One two-process job with these tokens; returns the exits. */
static void token_case(const char *t0, const char *t1, int *s0, int *s1, struct child_out *out)
{
	int port = free_port();
	memset(out, 0, 2 * sizeof(*out));
	pid_t p0 = spawn_barrier(0, 2, port, 3, &out[0], t0);
	pid_t p1 = spawn_barrier(1, 2, port, 3, &out[1], t1);
	*s1 = wait_child(p1);
	*s0 = wait_child(p0);
}

static void test_job_token(void **state)
{
	(void)state;
	struct child_out *out = shm_outs(2);
	int s0, s1;
	token_case("s3cret", "s3cret", &s0, &s1, out);
	if (s0 || s1)
		fail_msg("same token: exits %d %d: %s / %s", s0, s1, out[0].err, out[1].err);
	token_case("s3cret", "other", &s0, &s1, out);
	/* each side sees the other fail: the rank checks rank 0's proof first */
	assert_int_equal(s1, 2);
	assert_non_null(strstr(out[1].err, "rank 0 could not prove the job token"));
	assert_int_equal(s0, 2);
	assert_non_null(strstr(out[0].err, "hung up on the job token's challenge"));
	token_case("s3cret", NULL, &s0, &s1, out);
	assert_int_equal(s1, 2);
	assert_non_null(strstr(out[1].err, "it has no job token and rank 0 requires one"));
	token_case(NULL, "s3cret", &s0, &s1, out);
	assert_int_equal(s1, 2);
	assert_non_null(strstr(out[1].err, "it has a job token and rank 0 has none"));
	munmap(out, sizeof(*out) * 2);
}

/* A listener that is not the job's rank 0 asks for the token with a
 * made-up proof: the rank refuses to go on. */
static void test_fake_rank0(void **state)
{
	(void)state;
	char *err = NULL;
	int lfd = tcp_listen("127.0.0.1", 0, &err), port = tcp_local_port(lfd);
	struct child_out *out = shm_outs(1);
	pid_t p1 = spawn_barrier(1, 2, port, 5, &out[0], "s3cret");
	int fd = tcp_accept(lfd, clock_now() + 5);
	assert_true(fd >= 0);
	uint8_t hello[JOB_HELLO_LEN], frame[JOB_HDR_LEN + 2 * AUTH_NONCE_LEN];
	assert_int_equal(tcp_read_all(fd, hello, sizeof(hello), clock_now() + 5), 0);
	job_hdr_encode(frame, MSG_CHALLENGE, 2 * AUTH_NONCE_LEN);
	memset(frame + JOB_HDR_LEN, 0x5a, 2 * AUTH_NONCE_LEN);
	assert_int_equal(tcp_write_all(fd, frame, sizeof(frame), clock_now() + 5), 0);
	assert_int_equal(wait_child(p1), 2);
	assert_non_null(strstr(out[0].err, "rank 0 could not prove the job token"));
	close(fd);
	close(lfd);
	munmap(out, sizeof(*out));
}


/* ---- late arrivals: the job has formed ---- */

/* Joins, says so, and runs (inside a phase, heartbeats going) until the
 * test sets out[0].go, at most 30 s; then meets the others at a barrier:
 * exit 0 when it completes. */
static void child_running(int proc, int n, int port, struct child_out *out, const char *token)
{
	struct job *c = child_join_token(proc, n, port, "job1", 10, &out[proc], token);
	char *err = NULL;
	__atomic_store_n(&out[proc].joined, 1, __ATOMIC_SEQ_CST);
	job_phase(c, "the running job", clock_now() + 60);
	double end = clock_now() + 30;
	while (!__atomic_load_n(&out[0].go, __ATOMIC_SEQ_CST) && clock_now() < end)
		usleep(20000);
	int r = job_barrier(c, clock_now() + 10, &err);
	if (r < 0)
		snprintf(out[proc].err, sizeof(out[proc].err), "barrier: %s", err ? err : "?");
	job_phase_done(c);
	job_close(c);
	_exit(r < 0 ? 1 : 0);
}

/* A job of n processes (at most 3) that has formed and runs until
 * running_end; out has n slots for its processes and 2 for late ones. */
struct running {
	int port, n;
	pid_t pids[3];
	struct child_out *out;
	char host[64];
};

static void running_start(struct running *r, int n, const char *token)
{
	r->port = free_port();
	r->n = n;
	r->out = shm_outs(n + 2);
	tcp_hostname(r->host, sizeof(r->host));
	for (int i = 0; i < n; i++) {
		r->pids[i] = fork();
		if (r->pids[i] == 0)
			child_running(i, n, r->port, r->out, token);
	}
	double end = clock_now() + 20;
	for (int i = 0; i < n; i++)
		while (!__atomic_load_n(&r->out[i].joined, __ATOMIC_SEQ_CST))
			if (clock_now() > end)
				fail_msg("the job did not form: %s / %s", r->out[0].err, r->out[i].err);
			else
				usleep(20000);
}

/* Lets the job end: every process exits 0, whatever came late. */
static void running_end(struct running *r)
{
	__atomic_store_n(&r->out[0].go, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < r->n; i++) {
		int st = wait_child(r->pids[i]);
		if (st)
			fail_msg("process %d exited %d: %s", i, st, r->out[i].err);
	}
	munmap(r->out, sizeof(*r->out) * (size_t)(r->n + 2));
}

/* A late process (out slot `slot`) joins as proc of nprocs; its exit. */
static int late_rank(struct running *r, int slot, int proc, int nprocs, const char *token, pid_t *ret_pid)
{
	pid_t p = fork();
	if (p == 0) {
		struct job *c = child_join_token(proc, nprocs, r->port, "job1", 5, &r->out[slot], token);
		job_close(c);
		_exit(0);
	}
	*ret_pid = p;
	return wait_child(p);
}

/* Rank 0's report of the late connections, once it has this text (it
 * writes it as the refusal goes out). */
static void expect_late_note(struct running *r, const char *want)
{
	double end = clock_now() + 5;
	while (!strstr(r->out[0].late, want) && clock_now() < end)
		usleep(20000);
	if (!strstr(r->out[0].late, want))
		fail_msg("rank 0 reported '%s', not '%s'", r->out[0].late, want);
}

/* A second rank 1 comes once the job runs: it is refused at once, naming
 * the holder; rank 0 names it; a stranger's frames after its HELLO reach
 * nothing; the job ends with success. */
static void test_late_duplicate(void **state)
{
	(void)state;
	struct running r;
	pid_t late;
	running_start(&r, 3, NULL);
	double t0 = clock_now();
	assert_int_equal(late_rank(&r, 3, 1, 3, NULL, &late), 2);
	assert_true(clock_now() - t0 < 10);
	_cleanup_free_ char *held = xasprintf("rank 0 refused this process: rank 1 is already held by host %s pid %d "
					      "(the job formed ", r.host, r.pids[1]);
	if (!strstr(r.out[3].err, held))
		fail_msg("the late rank 1 said: %s", r.out[3].err);
	_cleanup_free_ char *named = xasprintf("(%s, pid %d): rank 1 is already held by host %s pid %d", r.host,
					       late, r.host, r.pids[1]);
	expect_late_note(&r, "refused a late connection from 127.0.0.1:");
	expect_late_note(&r, named);
	/* a stranger: its HELLO is answered, nothing else it sends is read */
	int fd = raw_connect(r.port);
	raw_hello(fd, 2, 3, 0);
	enum msg type;
	char *payload = NULL;
	size_t len = 0;
	assert_int_equal(job_read_frame(fd, &type, &payload, &len, clock_now() + 10), 0);
	assert_int_equal(type, MSG_REJECT);
	assert_non_null(strstr(payload, "rank 2 is already held by host"));
	free(payload);
	close(fd);
	expect_late_note(&r, "(rogue?[2J, pid 4242): rank 2 is already held");
	/* HELLO, then FAIL with exit code 0 and ABORT, in one write */
	uint8_t frames[JOB_HELLO_LEN + 2 * (JOB_HDR_LEN + 16)];
	fd = raw_connect(r.port);
	raw_hello(fd, 1, 3, 0);
	for (int i = 0; i < 2; i++) {
		uint8_t *f = frames + i * (JOB_HDR_LEN + 16);
		job_hdr_encode(f, i ? MSG_ABORT : MSG_FAIL, 16);
		memset(f + JOB_HDR_LEN, 0, 8);
		memcpy(f + JOB_HDR_LEN + 8, "all good", 8);
	}
	tcp_write_all(fd, frames, 2 * (JOB_HDR_LEN + 16), clock_now() + 5);
	usleep(300000);
	close(fd);
	running_end(&r);
}

/* A rank of another world size (a restarted launcher's) is told the
 * job's. */
static void test_late_world_size(void **state)
{
	(void)state;
	struct running r;
	pid_t late;
	running_start(&r, 2, NULL);
	assert_int_equal(late_rank(&r, 2, 1, 4, NULL, &late), 2);
	if (!strstr(r.out[2].err, "rank 0 refused this process: the job has formed with 2 ranks; this HELLO says 4"))
		fail_msg("the late rank said: %s", r.out[2].err);
	_cleanup_free_ char *named = xasprintf("(%s, pid %d): the job has formed with 2 ranks", r.host, late);
	expect_late_note(&r, named);
	running_end(&r);
}

/* With a job token, a late process that cannot prove it learns nothing
 * but the refusal; one that proves it learns who holds its rank. */
static void test_late_token(void **state)
{
	(void)state;
	struct running r;
	pid_t late;
	running_start(&r, 2, "s3cret");
	assert_int_equal(late_rank(&r, 2, 1, 2, NULL, &late), 2);
	if (!strstr(r.out[2].err, "it has no job token and rank 0 requires one") || strstr(r.out[2].err, "held"))
		fail_msg("the late rank without the token said: %s", r.out[2].err);
	/* a made-up proof: challenged, then refused, nothing more */
	int fd = raw_connect(r.port);
	raw_hello(fd, 1, 2, HELLO_HAS_TOKEN);
	enum msg type;
	char *payload = NULL;
	size_t len = 0;
	assert_int_equal(job_read_frame(fd, &type, &payload, &len, clock_now() + 10), 0);
	assert_int_equal(type, MSG_CHALLENGE);
	free(payload);
	uint8_t proof[JOB_HDR_LEN + AUTH_PROOF_LEN] = { 0 };
	job_hdr_encode(proof, MSG_PROOF, AUTH_PROOF_LEN);
	assert_int_equal(tcp_write_all(fd, proof, sizeof(proof), clock_now() + 5), 0);
	assert_int_equal(job_read_frame(fd, &type, &payload, &len, clock_now() + 10), 0);
	assert_int_equal(type, MSG_REJECT);
	if (!strstr(payload, "could not prove the job token") || strstr(payload, "held") || strstr(payload, r.host))
		fail_msg("the stranger was told: %s", payload);
	free(payload);
	close(fd);
	expect_late_note(&r, "(rogue?[2J, pid 4242): it could not prove the job token");
	assert_int_equal(late_rank(&r, 3, 1, 2, "s3cret", &late), 2);
	if (!strstr(r.out[3].err, "rank 1 is already held by host"))
		fail_msg("the late rank with the token said: %s", r.out[3].err);
	running_end(&r);
}

/* The cap plus 10 silent connections once the job runs: a late HELLO is
 * still answered, the silent ones go at their HELLO deadline, unreported,
 * and the job is not disturbed. */
static void test_late_silent(void **state)
{
	(void)state;
	enum { SILENT = 64 + 10 };
	struct running r;
	int fds[SILENT];
	pid_t late;
	running_start(&r, 2, NULL);
	for (int i = 0; i < SILENT; i++)
		fds[i] = raw_connect(r.port);
	assert_int_equal(late_rank(&r, 2, 1, 2, NULL, &late), 2);
	assert_non_null(strstr(r.out[2].err, "rank 1 is already held by host"));
	double t0 = clock_now();
	char b;
	assert_int_equal(tcp_read_all(fds[SILENT - 1], &b, 1, clock_now() + 20), -ECONNRESET);
	assert_true(clock_now() - t0 < 20);
	for (int i = 0; i < SILENT; i++)
		close(fds[i]);
	assert_null(strstr(r.out[0].late, "HELLO within"));
	running_end(&r);
}

/* Nothing listens (rank 0's job is over): the rank says so, not that
 * rank 0 did not come up. */
static void test_no_job_listening(void **state)
{
	(void)state;
	int port = free_port();
	struct child_out *out = shm_outs(1);
	pid_t p = fork();
	if (p == 0) {
		child_join(1, 2, port, "job1", 1.5, out);
		_exit(0);
	}
	assert_int_equal(wait_child(p), 2);
	_cleanup_free_ char *want = xasprintf("no job is listening at 127.0.0.1:%d", port);
	if (!strstr(out->err, want) || strstr(out->err, "did not come up"))
		fail_msg("the rank said: %s", out->err);
	munmap(out, sizeof(*out));
}

/* Debian and Ubuntu map the host's own name to 127.0.1.1 in /etc/hosts:
 * when ranks may span hosts, rank 0 must not listen there alone. Run in a
 * mount namespace of its own with such an /etc/hosts (needs root). */
static void test_listen_not_loopback_alone(void **state)
{
	(void)state;
	pid_t p = fork();
	if (p == 0) {
		char *dir = tu_mkdtemp(), *hosts = xasprintf("%s/hosts", dir), *note = NULL, *err = NULL;
		tu_write(dir, "/hosts", "127.0.0.1 localhost\n127.0.1.1 gpuready-node0\n");
		if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount(hosts, "/etc/hosts", NULL, MS_BIND, NULL) < 0)
			_exit(77);
		struct launch l = { .nranks = 4, .local_size = 0, .master_host = (char *)"gpuready-node0" };
		char *a = launch_listen_addresses(&l, NULL, &note, &err);
		_cleanup_free_ char *other = tcp_local_addresses();
		bool has_other = strchr(other, ',') != NULL;
		int bad = !a || !strstr(a, "127.0.1.1") || (has_other && (!note || !strchr(a, ','))) ? 1 : 0;
		if (bad)
			fprintf(stderr, "listen on '%s', note '%s', err '%s'\n", a ? a : "", note ? note : "", err ? err : "");
		/* every rank here: the loopback address is right */
		l.local_size = 4;
		free(note);
		note = NULL;
		free(a);
		a = launch_listen_addresses(&l, NULL, &note, &err);
		bad |= !a || strcmp(a, "127.0.1.1") || note;
		/* an address, or --bind, is taken as it is */
		free(a);
		l.master_host = (char *)"127.0.0.1";
		l.local_size = 0;
		a = launch_listen_addresses(&l, NULL, &note, &err);
		bad |= strcmp(a, "127.0.0.1") != 0;
		free(a);
		a = launch_listen_addresses(&l, "0.0.0.0", &note, &err);
		bad |= strcmp(a, "") != 0;
		free(a);
		_exit(bad);
	}
	int st = wait_child(p);
	if (st == 77)
		skip();
	assert_int_equal(st, 0);
}


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_torchrun),
		cmocka_unit_test(test_openmpi_mpich_pmix),
		cmocka_unit_test(test_slurm),
		cmocka_unit_test(test_cli_and_errors),
		cmocka_unit_test(test_first_host),
		cmocka_unit_test(test_hostport),
		cmocka_unit_test(test_frame_bytes),
		cmocka_unit_test(test_exchanges),
		cmocka_unit_test(test_rendezvous_timeout),
		cmocka_unit_test(test_other_job_refused),
		cmocka_unit_test(test_lost_process),
		cmocka_unit_test(test_rogue_rank),
		cmocka_unit_test(test_mixed_versions),
		cmocka_unit_test(test_odd_then_real),
		cmocka_unit_test(test_silent_connections),
		cmocka_unit_test(test_job_token),
		cmocka_unit_test(test_fake_rank0),
		cmocka_unit_test(test_late_duplicate),
		cmocka_unit_test(test_late_world_size),
		cmocka_unit_test(test_late_token),
		cmocka_unit_test(test_late_silent),
		cmocka_unit_test(test_no_job_listening),
		cmocka_unit_test(test_listen_not_loopback_alone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
