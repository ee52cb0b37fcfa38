/* The NCCL end-to-end test's engine; see nccl_e2e.h. */
#define _GNU_SOURCE
#include "nccl_e2e.h"
#include "data.h"
#include "core/cleanup.h"
#include "core/strbuf.h"
#include "core/tcp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* NCCL reads these when it initialises: they must be set before the
 * backend loads it. A subsystem list the user set keeps its entries. */
int nccl_e2e_log_env(const char *dir, char **err)
{
	const char *subsys = getenv("NCCL_DEBUG_SUBSYS");
	_cleanup_free_ char *want = NULL, *file = xasprintf("%s/nccl.%%h.%%p.log", dir);

	if (!subsys || !*subsys || !strcmp(subsys, "ALL"))
		want = xstrdup(subsys && *subsys ? subsys : "INIT,NET");
	else if (subsys[0] == '^')
		/* an exclusion list: INIT and NET must not be in it */
		want = strstr(subsys, "INIT") || strstr(subsys, "NET") ? xstrdup("INIT,NET") : xstrdup(subsys);
	else
		want = xasprintf("%s,INIT,NET", subsys);
	if (setenv("NCCL_DEBUG", "INFO", 1) || setenv("NCCL_DEBUG_SUBSYS", want, 1) ||
	    setenv("NCCL_DEBUG_FILE", file, 1)) {
		*err = xasprintf("setenv: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/* This process's log: NCCL expands %h to the host name up to its first
 * dot and %p to the pid (NCCL's environment variable documentation, NCCL_DEBUG_FILE); both matter when ranks of several
 * hosts share a --keep-logs directory. */
char *nccl_e2e_read_log(const char *dir, size_t *len)
{
	char host[64];
	tcp_hostname(host, sizeof(host));
	_cleanup_free_ char *path = xasprintf("%s/nccl.%s.%ld.log", dir, host, (long)getpid());
	FILE *f = fopen(path, "r");
	*len = 0;
	if (!f)
		return NULL;
	struct strbuf sb = STRBUF_INIT;
	char buf[65536];
	size_t got;
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0 && sb.len < (64u << 20))
		strbuf_add(&sb, buf, got);
	fclose(f);
	*len = sb.len;
	return strbuf_detach(&sb);
}

/* Step 1: every rank's number, summed. */
int nccl_e2e_rank_sum(struct backend *b, const struct nccl_e2e_shape *ss, void **buf, struct nccl_e2e_rank *rc,
		      double deadline, char **err)
{
	int r = 0;
	for (int l = 0; l < ss->local && r == 0; l++) {
		float v = (float)(ss->proc * ss->local + l);
		r = b->ops->copy_in(b, l, buf[l], &v, sizeof(v));
	}
	if (r == 0)
		r = b->ops->run(b, COLL_ALL_REDUCE, buf, buf, 1, DT_FLOAT, OP_SUM, -1);
	if (r == 0)
		r = b->ops->wait(b, deadline);
	for (int l = 0; l < ss->local && r == 0; l++) {
		float v = -1;
		r = b->ops->copy_out(b, l, &v, buf[l], sizeof(v));
		rc[l].rank = ss->proc * ss->local + l;
		rc[l].result = v;
		rc[l].expected = (double)ss->nranks * (ss->nranks - 1) / 2.0;
		rc[l].ok = v == rc[l].expected;
	}
	if (r < 0)
		*err = xasprintf("all-reduce of the rank numbers: %s", b->error);
	return r;
}

/* Step 2: a large buffer of verifiable data, checked element by element. */
int nccl_e2e_large(struct backend *b, const struct nccl_e2e_shape *ss, void **buf, size_t bytes,
		   struct nccl_e2e_rank *rc, double deadline, char **err)
{
	size_t count = bytes / sizeof(float);
	struct data_spec spec = { .t = DT_FLOAT, .op = OP_SUM, .nranks = ss->nranks, .seed = 12345 };
	_cleanup_free_ float *host = malloc(count * sizeof(float)), *exp = malloc(count * sizeof(float));
	int r = 0;

	if (!host || !exp) {
		*err = xstrdup("out of host memory for the check (use a smaller --bytes)");
		return -ENOMEM;
	}
	for (int l = 0; l < ss->local && r == 0; l++) {
		data_fill(&spec, ss->proc * ss->local + l, 0, host, count);
		r = b->ops->copy_in(b, l, buf[l], host, count * sizeof(float));
	}
	if (r == 0)
		r = b->ops->run(b, COLL_ALL_REDUCE, buf, buf, count, DT_FLOAT, OP_SUM, -1);
	if (r == 0)
		r = b->ops->wait(b, deadline);
	if (r == 0)
		data_expect_reduce(&spec, 0, exp, count);
	for (int l = 0; l < ss->local && r == 0; l++) {
		r = b->ops->copy_out(b, l, host, buf[l], count * sizeof(float));
		rc[l].checked = count;
		rc[l].wrong = r == 0 ? data_compare(DT_FLOAT, OP_SUM, host, exp, count) : count;
		rc[l].ok = rc[l].ok && rc[l].wrong == 0;
	}
	if (r < 0)
		*err = xasprintf("all-reduce of %zu bytes: %s", bytes, b->error);
	return r;
}
