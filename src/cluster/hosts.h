/* Cluster mode with no launcher (docs/cluster.md, "--hosts"): every host's
 * record fetched through a remote shell, at most `parallel` at once, each
 * within a deadline.
 *
 * For each host the remote-shell template is split into words (rsh_split),
 * "{host}" is replaced by the host name, and `REMOTE cluster facts
 * --node-name HOST` is appended; the program is started without a shell
 * (posix_spawnp) in its own process group, stdin /dev/null. Its stdout is
 * the record (at most RECORD_MAX_BYTES), its stderr's last line the reason
 * when it gives none. Nothing the remote end sends is trusted: a host that
 * cannot be started, exits non-zero, is killed, stays past its deadline,
 * sends too much, nothing, something that is no record, or a record of
 * another node's name is an unreachable row naming the host and why. */
#ifndef GPUREADY_CLUSTER_HOSTS_H
#define GPUREADY_CLUSTER_HOSTS_H

#include "cluster/cluster.h"
#include "core/strbuf.h"

#define RSH_DEFAULT "ssh -o BatchMode=yes {host}"
#define RSH_MAX_WORDS 64

struct hosts_opts {
	const char *rsh;     /* the template; must hold "{host}" */
	const char *remote;  /* gpuready's path on the hosts */
	int parallel;        /* at most this many at once (>= 1) */
	int timeout_s;       /* per host, from its start (>= 1) */
	const char *const *extra; /* more words after the remote command (NULL: none) */
};

/* Splits a template into words: blanks separate words; '...' and "..."
 * quote (no escapes inside, quotes removed); nothing else is special (no
 * variables, globs or redirections). 0, or -EINVAL with *err (unbalanced
 * quote, no word, more than RSH_MAX_WORDS, no "{host}"). */
int rsh_split(const char *tmpl, struct strv *ret, char **err);

/* The argv for host: the template's words with every "{host}" replaced,
 * then o->remote, "cluster", "facts", "--node-name", host, o->extra. */
void rsh_argv(const struct strv *words, const struct hosts_opts *o, const char *host, struct strv *ret);

/* The same with cmd (NULL-terminated; "{host}" replaced) after o->remote
 * instead of `cluster facts --node-name HOST`. */
void rsh_argv_cmd(const struct strv *words, const struct hosts_opts *o, const char *const *cmd, const char *host,
		  struct strv *ret);

/* What one host answered. */
struct host_answer {
	/* Why it gave no answer to read (it could not be started, sent more
	 * than RECORD_MAX_BYTES, did not end within the deadline, was killed
	 * by a signal; with stderr's last line); NULL when it exited. */
	char *why;
	bool too_big;
	int status;          /* its exit status when why is NULL, else -1 */
	struct strbuf out;   /* its standard output (at most RECORD_MAX_BYTES) */
	char *err_line;      /* its standard error's last line, printable and bounded; "" when none */
};

/* Runs `REMOTE cmd... extra...` on hosts[0..n) through the remote shell,
 * at most o->parallel at once, each within o->timeout_s: ans[i] (zeroed
 * by the caller) gets host i's answer. -EINVAL with *err only when the
 * template is bad, before anything is started. */
int hosts_run(const char *const *hosts, size_t n, const struct hosts_opts *o, const char *const *cmd,
	      struct host_answer *ans, char **err);
void host_answer_free(struct host_answer *a);
/* Why an answer that exited is none (what: "record", "plan"): "remote
 * shell exited with 255: ..." or "no plan on stdout: ..." (malloc'd). */
char *host_answer_exited(const struct host_answer *a, const char *what);

/* The records of hosts[0..n) into recs[0..n) (each a record or an
 * unreachable row); -EINVAL with *err only when the template is bad, before
 * anything is started. */
int hosts_collect(const char *const *hosts, size_t n, const struct hosts_opts *o, struct node_record *recs,
		  char **err);

#endif
