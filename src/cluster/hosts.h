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

/* The records of hosts[0..n) into recs[0..n) (each a record or an
 * unreachable row); -EINVAL with *err only when the template is bad, before
 * anything is started. */
int hosts_collect(const char *const *hosts, size_t n, const struct hosts_opts *o, struct node_record *recs,
		  char **err);

#endif
