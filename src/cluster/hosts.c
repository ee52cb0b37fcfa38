/* Fetching records through a remote shell, bounded in time, memory and
 * concurrency; see hosts.h. One thread: every pipe in one poll(), woken at
 * least every HOSTS_TICK_MS to reap children and enforce deadlines. */
#define _GNU_SOURCE
#include "cluster/hosts.h"
#include "core/cleanup.h"
#include "core/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define HOSTS_TICK_MS 100
#define HOSTS_TERM_MS 1000   /* SIGTERM, then SIGKILL this much later */
#define HOSTS_REAP_MS 2000   /* after SIGKILL: then the child is abandoned */
#define HOSTS_ERR_KEEP 4096u /* bytes of stderr's tail kept */
#define HOSTS_WHY_MAX 200u   /* bytes of a remote message quoted in a row */

/* ---- the template ---- */

int rsh_split(const char *tmpl, struct strv *ret, char **err)
{
	struct strv w = STRV_INIT;
	bool host = false;
	for (const char *p = tmpl; *p;) {
		if (*p == ' ' || *p == '\t') {
			p++;
			continue;
		}
		struct strbuf sb = STRBUF_INIT;
		while (*p && *p != ' ' && *p != '\t') {
			if (*p == '\'' || *p == '"') {
				const char *end = strchr(p + 1, *p);
				if (!end) {
					*err = xasprintf("--rsh '%s': unbalanced %c", tmpl, *p);
					strbuf_release(&sb);
					strv_free(&w);
					return -EINVAL;
				}
				strbuf_add(&sb, p + 1, (size_t)(end - p - 1));
				p = end + 1;
			} else {
				strbuf_addch(&sb, *p++);
			}
		}
		host |= sb.buf && strstr(sb.buf, "{host}");
		strv_push(&w, strbuf_detach(&sb));
	}
	const char *why = !w.n ? "no program" : w.n > RSH_MAX_WORDS ? "too many words" : !host ? "no {host}" : NULL;
	if (why) {
		*err = xasprintf("--rsh '%s': %s (e.g. '" RSH_DEFAULT "')", tmpl, why);
		strv_free(&w);
		return -EINVAL;
	}
	*ret = w;
	return 0;
}

static char *replace_host(const char *word, const char *host)
{
	struct strbuf sb = STRBUF_INIT;
	for (const char *p = word; *p;) {
		if (!strncmp(p, "{host}", 6)) {
			strbuf_adds(&sb, host);
			p += 6;
		} else {
			strbuf_addch(&sb, *p++);
		}
	}
	return strbuf_detach(&sb);
}

void rsh_argv_cmd(const struct strv *words, const struct hosts_opts *o, const char *const *cmd, const char *host,
		  struct strv *ret)
{
	for (size_t i = 0; i < words->n; i++)
		strv_push(ret, replace_host(words->v[i], host));
	strv_add(ret, o->remote);
	for (size_t i = 0; cmd[i]; i++)
		strv_push(ret, replace_host(cmd[i], host));
	for (size_t i = 0; o->extra && o->extra[i]; i++)
		strv_add(ret, o->extra[i]);
}

static const char *const facts_cmd[] = { "cluster", "facts", "--node-name", "{host}", NULL };

void rsh_argv(const struct strv *words, const struct hosts_opts *o, const char *host, struct strv *ret)
{
	rsh_argv_cmd(words, o, facts_cmd, host, ret);
}

/* ---- one host ---- */

struct slot {
	bool used;
	size_t host;
	pid_t pid;
	int out, err;             /* -1 when closed */
	long long deadline;       /* ms, monotonic */
	long long term_at;        /* when SIGTERM went; 0: not yet */
	bool timed_out, too_big, killed, reaped, abandoned;
	int status;
	struct strbuf o, e;
	char *start_err;          /* the program could not be started */
};

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* posix_spawnp argv in its own process group, stdout and stderr to pipes,
 * stdin /dev/null, the signals a shell resets set to default. */
static int spawn_one(char *const *argv, struct slot *s)
{
	int po[2], pe[2];
	if (pipe2(po, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(pe, O_CLOEXEC) < 0) {
		int r = -errno;
		close(po[0]);
		close(po[1]);
		return r;
	}
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	posix_spawnattr_init(&at);
	sigset_t def, none;
	sigemptyset(&def);
	sigemptyset(&none);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGTERM);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	int r = posix_spawnp(&s->pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(po[1]);
	close(pe[1]);
	if (r) {
		close(po[0]);
		close(pe[0]);
		return -r;
	}
	s->out = po[0];
	s->err = pe[0];
	fcntl(s->out, F_SETFL, O_NONBLOCK);
	fcntl(s->err, F_SETFL, O_NONBLOCK);
	return 0;
}

static void slot_start(struct slot *s, size_t host, char *const *argv, int timeout_s)
{
	*s = (struct slot){ .used = true, .host = host, .out = -1, .err = -1,
			    .deadline = now_ms() + (long long)timeout_s * 1000, .o = STRBUF_INIT, .e = STRBUF_INIT };
	int r = spawn_one(argv, s);
	if (r < 0) {
		s->start_err = xasprintf("cannot start %s: %s", argv[0], strerror(-r));
		s->reaped = true;
	}
}

/* Reads what fd has: stdout bounded (more is too_big: the host is then
 * stopped), stderr's tail kept. */
static void slot_read(struct slot *s, bool is_out)
{
	char buf[16384];
	int *fd = is_out ? &s->out : &s->err;
	ssize_t n = read(*fd, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close_fd(fd);
		return;
	}
	struct strbuf *sb = is_out ? &s->o : &s->e;
	if (is_out && sb->len + (size_t)n > RECORD_MAX_BYTES) {
		s->too_big = true;
		close_fd(fd);
		return;
	}
	strbuf_add(sb, buf, (size_t)n);
	if (!is_out && sb->len > 2 * HOSTS_ERR_KEEP) {
		memmove(sb->buf, sb->buf + sb->len - HOSTS_ERR_KEEP, HOSTS_ERR_KEEP);
		sb->len = HOSTS_ERR_KEEP;
		sb->buf[sb->len] = '\0';
	}
}

/* Reaps, and stops a host past its deadline (or sending too much): the
 * group gets SIGTERM, SIGKILL a second later, and a child that still does
 * not go (blocked in the kernel) is abandoned. True when s is done. */
static bool slot_tick(struct slot *s, long long now)
{
	if (!s->reaped && s->pid > 0) {
		pid_t p = waitpid(s->pid, &s->status, WNOHANG);
		if (p == s->pid || (p < 0 && errno == ECHILD))
			s->reaped = true;
	}
	if (s->reaped && ((s->out < 0 && s->err < 0) || s->term_at))
		return true;
	if (!s->term_at && (now >= s->deadline || s->too_big)) {
		s->timed_out = !s->too_big;
		s->term_at = now;
		kill(-s->pid, SIGTERM);
	} else if (s->term_at && !s->killed && now >= s->term_at + HOSTS_TERM_MS) {
		s->killed = true;
		kill(-s->pid, SIGKILL);
	} else if (s->killed && now >= s->term_at + HOSTS_TERM_MS + HOSTS_REAP_MS) {
		s->abandoned = true;
		return true;
	}
	return false;
}

/* Text from a peer fit to quote in a row: printable ASCII, bounded. */
static char *quote_peer(const char *s, size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < len && i < HOSTS_WHY_MAX; i++)
		strbuf_addch(&sb, s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?');
	if (len > HOSTS_WHY_MAX)
		strbuf_adds(&sb, "...");
	return strbuf_detach(&sb);
}

/* The last non-empty line of stderr, quoted; "" when none. */
static char *last_line(struct strbuf *e)
{
	size_t end = e->len;
	while (end && (e->buf[end - 1] == '\n' || e->buf[end - 1] == '\r' || e->buf[end - 1] == ' '))
		end--;
	size_t start = end;
	while (start && e->buf[start - 1] != '\n')
		start--;
	return quote_peer(e->buf ? e->buf + start : "", end - start);
}

/* why, with stderr's last line after ": " when there is one. */
static char *with_stderr(struct slot *s, char *why)
{
	_cleanup_free_ char *line = last_line(&s->e);
	if (!*line)
		return why;
	char *r = xasprintf("%s: %s", why, line);
	free(why);
	return r;
}

/* Why a host that ended gave no answer to read; NULL when it exited. */
static char *slot_why(struct slot *s, int timeout_s)
{
	if (s->start_err)
		return xstrdup(s->start_err);
	if (s->too_big)
		return xasprintf("answered more than %u bytes", RECORD_MAX_BYTES);
	if (s->timed_out || s->abandoned)
		return with_stderr(s, xasprintf("no answer within %d s", timeout_s));
	if (WIFSIGNALED(s->status))
		return with_stderr(s, xasprintf("remote shell killed by signal %d", WTERMSIG(s->status)));
	return NULL;
}

/* The answer of a host that ended. */
static void slot_finish(struct slot *s, int timeout_s, struct host_answer *a)
{
	a->why = slot_why(s, timeout_s);
	a->too_big = s->too_big;
	a->status = a->why ? -1 : WEXITSTATUS(s->status);
	a->err_line = last_line(&s->e);
	a->out = s->o;
	close_fd(&s->out);
	close_fd(&s->err);
	strbuf_release(&s->e);
	free(s->start_err);
	*s = (struct slot){ .out = -1, .err = -1 };
}

void host_answer_free(struct host_answer *a)
{
	free(a->why);
	free(a->err_line);
	strbuf_release(&a->out);
	*a = (struct host_answer){ .out = STRBUF_INIT };
}

char *host_answer_exited(const struct host_answer *a, const char *what)
{
	if (a->status)
		return *a->err_line ? xasprintf("remote shell exited with %d: %s", a->status, a->err_line)
				    : xasprintf("remote shell exited with %d", a->status);
	return *a->err_line ? xasprintf("no %s on stdout: %s", what, a->err_line) : xasprintf("no %s on stdout", what);
}

/* The record of a host's answer, or its unreachable row. */
static void answer_record(const struct host_answer *a, const char *host, struct node_record *rec)
{
	_cleanup_free_ char *why = NULL, *err = NULL;
	struct node_record r;
	if (a->why)
		why = xasprintf("%s%s", a->why, a->too_big ? ": no node record" : "");
	else if (a->status || !a->out.len)
		why = host_answer_exited(a, "record");
	else if (record_parse(a->out.buf, a->out.len, &r, &err) < 0)
		why = xasprintf("no node record: %s", err);
	else if (strcmp(r.node, host)) {
		_cleanup_free_ char *name = quote_peer(r.node, strlen(r.node));
		why = xasprintf("answered with the record of another node, '%s'", name);
		record_free(&r);
	}
	if (why)
		record_unreachable(rec, host, why);
	else
		*rec = r;
}

/* ---- all hosts ---- */

/* One poll over every open pipe, at most HOSTS_TICK_MS. */
static void poll_slots(struct slot *sl, size_t ns, struct pollfd *pf, size_t *who)
{
	nfds_t n = 0;
	for (size_t i = 0; i < ns; i++) {
		if (!sl[i].used)
			continue;
		if (sl[i].out >= 0) {
			who[n] = 2 * i;
			pf[n++] = (struct pollfd){ .fd = sl[i].out, .events = POLLIN };
		}
		if (sl[i].err >= 0) {
			who[n] = 2 * i + 1;
			pf[n++] = (struct pollfd){ .fd = sl[i].err, .events = POLLIN };
		}
	}
	if (poll(pf, n, HOSTS_TICK_MS) <= 0)
		return;
	for (nfds_t k = 0; k < n; k++)
		if (pf[k].revents)
			slot_read(&sl[who[k] / 2], who[k] % 2 == 0);
}

/* An interrupt (Ctrl-C, SIGTERM, SIGHUP) while hosts are asked: their
 * process groups are not the terminal's, so they are killed here before
 * the signal takes its course. */
static volatile sig_atomic_t stop_signal;
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define N_STOP (sizeof(stop_signals) / sizeof(*stop_signals))

static void on_stop(int sig)
{
	stop_signal = sig;
}

static void stop_handlers(bool install, struct sigaction *old)
{
	for (size_t i = 0; i < N_STOP; i++) {
		if (install) {
			/* an ignored signal (nohup's SIGHUP) stays ignored */
			struct sigaction sa = { .sa_handler = on_stop };
			sigemptyset(&sa.sa_mask);
			sigaction(stop_signals[i], NULL, &old[i]);
			if (old[i].sa_handler != SIG_IGN)
				sigaction(stop_signals[i], &sa, NULL);
		} else {
			sigaction(stop_signals[i], &old[i], NULL);
		}
	}
}

/* Kills every host still running and re-raises the interrupt. */
static void stop_all(struct slot *sl, size_t ns, struct sigaction *old)
{
	for (size_t i = 0; i < ns; i++)
		if (sl[i].used && sl[i].pid > 0 && !sl[i].reaped)
			kill(-sl[i].pid, SIGKILL);
	stop_handlers(false, old);
	raise(stop_signal);
	/* handled by the caller's handler: the killed hosts end as rows */
	stop_signal = 0;
	stop_handlers(true, old);
}

int hosts_run(const char *const *hosts, size_t n, const struct hosts_opts *o, const char *const *cmd,
	      struct host_answer *ans, char **err)
{
	_cleanup_(strv_freep) struct strv words = STRV_INIT;
	if (rsh_split(o->rsh, &words, err) < 0)
		return -EINVAL;
	size_t ns = (size_t)(o->parallel > 0 ? o->parallel : 1), next = 0, done = 0;
	if (ns > n)
		ns = n ? n : 1;
	struct slot *sl = xcalloc(ns, sizeof(*sl));
	struct pollfd *pf = xcalloc(2 * ns, sizeof(*pf));
	size_t *who = xcalloc(2 * ns, sizeof(*who));
	struct sigaction old[N_STOP];
	stop_signal = 0;
	stop_handlers(true, old);
	while (done < n) {
		if (stop_signal)
			stop_all(sl, ns, old); /* returns only if the signal is ignored or handled */
		for (size_t i = 0; i < ns && next < n; i++) {
			if (sl[i].used)
				continue;
			_cleanup_(strv_freep) struct strv argv = STRV_INIT;
			rsh_argv_cmd(&words, o, cmd, hosts[next], &argv);
			slot_start(&sl[i], next++, argv.v, o->timeout_s);
		}
		poll_slots(sl, ns, pf, who);
		long long now = now_ms();
		for (size_t i = 0; i < ns; i++)
			if (sl[i].used && slot_tick(&sl[i], now)) {
				size_t h = sl[i].host;
				slot_finish(&sl[i], o->timeout_s, &ans[h]);
				done++;
			}
	}
	stop_handlers(false, old);
	free(sl);
	free(pf);
	free(who);
	return 0;
}

int hosts_collect(const char *const *hosts, size_t n, const struct hosts_opts *o, struct node_record *recs,
		  char **err)
{
	struct host_answer *ans = xcalloc(n + 1, sizeof(*ans));
	int r = hosts_run(hosts, n, o, facts_cmd, ans, err);
	for (size_t i = 0; i < n; i++) {
		if (r == 0)
			answer_record(&ans[i], hosts[i], &recs[i]);
		host_answer_free(&ans[i]);
	}
	free(ans);
	return r;
}
