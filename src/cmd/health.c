/* `gpuready check --health`: the health-check mode for Slurm's
 * HealthCheckProgram and job prologs (docs/cluster.md, "Health-check
 * mode"). One line, the exit status of LBNL NHC (0 healthy, non-zero
 * not), and an end within --budget seconds and a small margin.
 *
 * Cost classes: what the checks read from files is cheap and always runs;
 * the live probes (verbs queries, DCB over netlink, NVML, CUDA, PyTorch,
 * GPU memory registration) spawn or call drivers and may take long. On the
 * live machine both run at once: a child process (its own process group)
 * reads everything, probes included, runs the checks and sends its node
 * record back through a pipe, while this process runs the checks on the
 * files alone. The child's record is taken when it arrives within the
 * budget; otherwise its group is killed and the files-only record is
 * given, the line saying the live probes were cut off at the budget (their
 * checks skip, as on a recorded tree). A recorded tree (--sysroot) has no
 * live probes: it runs in this process. */
#define _GNU_SOURCE
#include "cmd.h"
#include "cluster/node.h"
#include "cluster/slurm.h"
#include "config.h"
#include "core/cleanup.h"
#include "core/clock.h"
#include "core/strbuf.h"
#include "inventory/inventory.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* This node's record from the configured root, with or without the live
 * probes; 0 or EXIT_TOOL_ERROR (said). */
static int node_record(struct cmd_env *env, bool live, struct node_record *rec)
{
	struct settings *s = env->set;
	_cleanup_root_ struct root *root = NULL;
	_cleanup_inventory_ struct inventory *inv = NULL;
	if (check_patterns_usage(env, NULL, true) || load_for_command_live(env, INV_ALL, live, &root, &inv) ||
	    check_patterns_usage(env, NULL, false))
		return EXIT_TOOL_ERROR;
	if (!live && inv->live) {
		/* the files alone: the live-only checks skip as on a recorded tree */
		inv->live = false;
		if (!inv->rdma.verbs_status)
			inv->rdma.verbs_status = xasprintf("not queried within the %d s budget of check --health",
							   s->cluster.budget);
	}
	/* Slurm's name for the node where slurmd runs the program (it sets
	 * SLURMD_NODENAME for job steps and prologs): the node this run
	 * drains, whatever tree it read (a --sysroot tree is a test's) */
	return cluster_record_of(env, inv, root, getenv("SLURMD_NODENAME"), rec);
}

/* In the child: the record with the live probes, as JSON on fd. */
static __attribute__((noreturn)) void child(struct cmd_env *env, int fd)
{
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null >= 0)
		dup2(null, STDERR_FILENO); /* the parent says what there is to say */
	struct node_record rec;
	if (node_record(env, true, &rec))
		_exit(EXIT_TOOL_ERROR);
	FILE *f = fdopen(fd, "w");
	int r = f ? record_write_json(&rec, f) : -EIO;
	if (!f || fclose(f) == EOF)
		r = -EIO;
	_exit(r < 0 ? EXIT_TOOL_ERROR : 0);
}

/* Reads fd to its end until deadline (monotonic): true when it ended. */
static bool read_until(int fd, double deadline, struct strbuf *sb)
{
	char buf[8192];
	for (;;) {
		double left = deadline - clock_now();
		if (left <= 0)
			return false;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, (int)(left * 1000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0;
		if (sb->len + (size_t)n > RECORD_MAX_BYTES)
			return false;
		strbuf_add(sb, buf, (size_t)n);
	}
}

/* Waits for pid until deadline; past it kills its group and gives it a
 * second (a task blocked in the kernel is left behind). true: it exited 0. */
static bool reap(pid_t pid, double deadline)
{
	int st;
	bool killed = false;
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			return !killed && WIFEXITED(st) && WEXITSTATUS(st) == 0;
		if (w < 0 && errno != EINTR)
			return false;
		if (clock_now() >= deadline) {
			if (killed)
				return false;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			killed = true;
			deadline = clock_now() + 1;
		}
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

/* After the child was killed: the processes it started in process groups
 * of their own (spawn_run's, e.g. the PyTorch probe's Python) were
 * reparented to this process (a child subreaper, prctl(2)); each is killed
 * with its group, and reaped within a second. */
static void kill_orphans(void)
{
	DIR *d = opendir("/proc");
	if (!d)
		return;
	pid_t self = getpid();
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end = NULL;
		long pid = strtol(e->d_name, &end, 10);
		if (pid <= 0 || *end)
			continue;
		char path[64], buf[512];
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* "pid (comm) state ppid ...": comm may hold anything, so from the last ')' */
		const char *p = strrchr(buf, ')');
		char state;
		long ppid;
		if (p && sscanf(p + 1, " %c %ld", &state, &ppid) == 2 && ppid == self) {
			kill(-(pid_t)pid, SIGKILL);
			kill((pid_t)pid, SIGKILL);
		}
	}
	closedir(d);
	double until = clock_now() + 1;
	while (clock_now() < until && waitpid(-1, NULL, WNOHANG) >= 0) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

/* The record of the live machine within the budget. When the live probes
 * did not give one in time, or failed, the files-only record is given and
 * note (size NOTE_MAX) says why; "" otherwise. */
#define NOTE_MAX 200
static int live_record(struct cmd_env *env, struct node_record *rec, char *note)
{
	int budget = env->set->cluster.budget;
	double deadline = clock_now() + budget;
	int p[2];
	fflush(NULL);
	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(note, NOTE_MAX, "live probes not run: pipe: %s", strerror(errno));
		return node_record(env, false, rec);
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	pid_t parent = getpid(), pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(EXIT_TOOL_ERROR);
		close(p[0]);
		child(env, p[1]);
	}
	close(p[1]);
	if (pid < 0) {
		snprintf(note, NOTE_MAX, "live probes not run: fork: %s", strerror(errno));
		close(p[0]);
		return node_record(env, false, rec);
	}
	setpgid(pid, pid);
	struct node_record files;
	int r = node_record(env, false, &files);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	bool ended = r == 0 && read_until(p[0], deadline, &sb);
	close(p[0]);
	bool ok = reap(pid, r ? clock_now() : ended ? deadline + 1 : deadline);
	_cleanup_free_ char *err = NULL;
	if (r == 0 && ended && ok && record_parse(sb.buf, sb.len, rec, &err) == 0) {
		record_free(&files);
		return 0;
	}
	kill_orphans();
	if (r)
		return r;
	if (ended)
		snprintf(note, NOTE_MAX, "live probes failed: %s", ok ? err : "their process ended without a record");
	else
		snprintf(note, NOTE_MAX, "live probes cut off at the %d s budget", budget);
	*rec = files;
	return 0;
}

int run_health(struct cmd_env *env)
{
	struct settings *s = env->set;
	if (s->json || s->prom) {
		fprintf(stderr, "%s: check --health prints one line: not with --json or --prom\n", env->progname);
		return EXIT_TOOL_ERROR;
	}
	const char *dir = s->sysroot ? s->sysroot : "/";
	bool live = false;
	char note[NOTE_MAX] = "";
	{
		_cleanup_root_ struct root *root = NULL;
		live = root_open(dir, &root) == 0 && root_is_live(root);
	}
	struct node_record rec;
	int ret = live ? live_record(env, &rec, note) : node_record(env, true, &rec);
	if (ret)
		return ret;
	enum node_state st = record_state(&rec);
	printf("%s", rec.reason);
	if (*note)
		printf(" (%s: NVML, CUDA, PyTorch, GPU memory registration, verbs and DCB checks skipped)", note);
	printf("\n");
	ret = st == NODE_FAIL ? EXIT_CHECK_FAILED : EXIT_OK;
	if (s->cluster.drain || s->cluster.resume) {
		struct slurm_act_opts o = { .scontrol = s->cluster.scontrol, .drain = s->cluster.drain,
					    .resume = s->cluster.resume, .apply = s->cluster.apply,
					    .no_resume = *note ? note : NULL };
		if (slurm_act(&o, &rec, stdout) < 0) {
			fprintf(stderr, "%s: %s: the scontrol command failed\n", env->progname, rec.node);
			ret = EXIT_TOOL_ERROR;
		}
	}
	record_free(&rec);
	return fflush(stdout) == EOF ? EXIT_TOOL_ERROR : ret;
}
