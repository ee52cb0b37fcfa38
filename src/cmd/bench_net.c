/* `gpuready bench net`: point-to-point bandwidth and latency, RDMA and TCP,
 * perftest-grade (see src/bench/net/net.h for the roles and net/proto.h for the
 * protocol).
 *
 *   gpuready bench net --server [--bind ADDR] [-p PORT] [--clients N] [--timeout SEC]
 *   gpuready bench net HOST --test tcp_bw [-s SIZE | -a] [-n N | -D SEC] [-q N] [-b]
 *   gpuready bench net --loopback --test write_bw ...
 *
 * The server serves one client at a time, forever (or --clients N): a client
 * that says nothing, sends garbage or disappears is dropped with a line on
 * stderr and the next one is served. The client prints an info block,
 * perftest's table (its columns and closing line, so perftest's parsers
 * read it), and after it the share of the link's rate or what latency is
 * usual for comparison, the RDMA port counters that moved, and the verdict
 * (--expect-gbps). perftest's flags mean what they mean there (-T is the
 * ToS); those gpuready cannot honour are refused with the reason. Exit codes: 0 pass, 1 below --expect-gbps or data that
 * arrived wrong, 2 could not run (refused, no device, bad options), 3 the
 * peer disappeared or a step passed its deadline. */
#define _GNU_SOURCE
#include "cmd.h"
#include "bench/net/engine.h"
#include "core/cleanup.h"
#include "core/clock.h"
#include "core/tcp.h"
#include "job/launch.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int client_run(const struct net_plan *nc, const char *json_file, const char *server, int port)
{
	struct net_client_side cs = { .nc = nc, .fd = -1, .server = server, .port = port };
	struct net_run ro = { 0 };
	struct net_counter_delta *cd = NULL;
	size_t ncd = 0;
	_cleanup_free_ char *err = NULL;
	struct inventory *before = NULL, *after = NULL;
	int code = EXIT_OK, bad = 0;

	int r = net_client_connect(&cs, &err);
	if (r == 0 && net_test_is_rdma(nc->p.test))
		r = net_client_rdma(&cs, &err);
	if (r < 0) {
		fprintf(stderr, "gpuready bench net: %s\n", err);
		if (json_file)
			net_write_json(json_file, &cs, &ro, NULL, 0, "error", err);
		net_rdma_close(cs.rdma);
		if (cs.fd >= 0)
			close(cs.fd);
		return r == -ETIMEDOUT || r == -ECONNRESET ? EXIT_STALLED : EXIT_TOOL_ERROR;
	}
	net_print_info(&cs);
	if (net_test_is_rdma(nc->p.test))
		before = net_load_rdma();
	struct net_text_ctx text = { &nc->p, nc->gbits };
	r = net_client_measure(&cs, &ro, &(struct net_row_sink){ .header = net_text_sink.header, .bw = net_text_sink.bw,
							      .lat = net_text_sink.lat, .ctx = &text }, &err);
	if (r == 0)
		net_msg_send(cs.fd, NETMSG_BYE, NULL, 0, clock_now() + 2.0);
	else if (r != -ECONNRESET)
		net_msg_send(cs.fd, NETMSG_ERROR, err, strlen(err), clock_now() + 2.0);
	/* perftest's closing line; what gpuready adds comes after it */
	net_print_rule();
	net_print_after_table(&cs, &ro);
	if (net_test_is_rdma(nc->p.test)) {
		after = net_load_rdma();
		bad = net_print_counters(&cs, before, after, &cd, &ncd);
	}
	if (r < 0) {
		fprintf(stderr, "gpuready bench net: %s\n", err);
		code = r == -ETIMEDOUT || r == -ECONNRESET || r == -EPIPE ? EXIT_STALLED : EXIT_TOOL_ERROR;
	} else {
		code = net_verdict(nc, &ro, bad);
	}
	int w = json_file ? net_write_json(json_file, &cs, &ro, cd, ncd,
					  code == EXIT_OK ? "pass" : code == EXIT_CHECK_FAILED ? "fail" : "error",
					  r < 0 ? err : NULL) : 0;
	if (w < 0) {
		fprintf(stderr, "gpuready bench net: cannot write %s: %s\n", json_file, strerror(-w));
		code = EXIT_TOOL_ERROR;
	}
	inventory_free(before);
	inventory_free(after);
	free(cd);
	free(ro.bw);
	free(ro.lat);
	net_rdma_close(cs.rdma);
	close(cs.fd);
	return fflush(stdout) == 0 ? code : EXIT_TOOL_ERROR;
}

/* ---- entry ---- */

struct loop_server {
	const struct net_plan *nc;
	int lfd;
	int code;
};

static void *loop_server_main(void *arg)
{
	struct loop_server *ls = arg;
	ls->code = net_serve(ls->nc, ls->lfd, 1);
	return NULL;
}

/* --mem host|cuda[:GPU], or perftest's --use_cuda=GPU (the two must agree)
 * and --use_cuda_dmabuf. */
static char *memory_from(const struct settings *s, struct net_rdma_opts *ro)
{
	const char *m = s->net.mem;
	ro->mem = NET_MEM_HOST;
	ro->gpu = -1;
	if (m && strcmp(m, "host")) {
		if (strncmp(m, "cuda", 4) || (m[4] && (m[4] != ':' || !m[5])))
			return xasprintf("--mem %s: host, cuda or cuda:GPU", m);
		ro->mem = NET_MEM_CUDA;
		if (m[4] == ':') {
			char *end;
			long g = strtol(m + 5, &end, 10);
			if (*end || g < 0 || g > 1023)
				return xasprintf("--mem %s: the GPU is a CUDA ordinal", m);
			ro->gpu = (int)g;
		}
	}
	if (s->net.use_cuda >= 0) {
		if (ro->mem == NET_MEM_CUDA && ro->gpu >= 0 && ro->gpu != s->net.use_cuda)
			return xasprintf("--use_cuda=%d and --mem %s name different GPUs", s->net.use_cuda, m);
		ro->mem = NET_MEM_CUDA;
		ro->gpu = s->net.use_cuda;
	}
	if (s->net.cuda_dmabuf && ro->mem != NET_MEM_CUDA)
		return xstrdup("--use_cuda_dmabuf registers GPU memory: give --use_cuda=GPU (or --mem cuda) with it");
	ro->dmabuf_only = s->net.cuda_dmabuf;
	return NULL;
}

/* -T (perftest's ToS) and --tclass set the same byte; -R is refused. */
static char *perftest_from(const struct settings *s, struct net_params *p)
{
	if (s->net.rdma_cm)
		return xstrdup("-R (--rdma_cm): gpuready does not set up connections through rdma_cm; it exchanges the "
			       "QPs' attributes over its own control connection. Run without -R (-T still sets the "
			       "traffic class)");
	if (s->net.tos >= 0 && s->net.tclass >= 0 && s->net.tos != s->net.tclass)
		return xasprintf("-T %d and --tclass %d: both set the traffic class; give one", s->net.tos,
				 s->net.tclass);
	p->tclass = s->net.tos >= 0 ? s->net.tos : s->net.tclass;
	p->warm_up = s->net.warm_up;
	return NULL;
}

static char *options_from(const struct settings *s, struct net_plan *nc)
{
	net_params_default(&nc->p);
	nc->timeout = s->net.timeout;
	nc->connect_timeout = s->connect_timeout;
	nc->expect_gbps = s->net.expect_gbps;
	nc->gbits = s->net.gbits;
	char *kerr = NULL;
	if (auth_key_load(s->token_file, &nc->key, &kerr) < 0)
		return kerr;
	if (s->net.test) {
		int t = net_test_parse(s->net.test);
		if (t < 0)
			return xasprintf("--test %s: write_bw, write_lat, read_bw, read_lat, send_bw, send_lat, tcp_bw or "
					 "tcp_lat", s->net.test);
		nc->p.test = (enum net_test)t;
	}
	nc->p.size = s->net.size;
	nc->p.all = s->net.all;
	nc->p.iters = s->net.iters;
	nc->p.duration = s->net.duration;
	nc->p.qps = s->net.qps;
	nc->p.bidir = s->net.bidir;
	nc->p.mtu = s->net.mtu;
	nc->p.sl = s->net.sl;
	nc->ro = (struct net_rdma_opts){ .dev = s->net.dev, .port = s->net.ib_port, .gid_index = s->net.gid };
	char *e = perftest_from(s, &nc->p);
	if (!e)
		e = memory_from(s, &nc->ro);
	if (e)
		return e;
	tcp_hostname(nc->host, sizeof(nc->host));
	return net_params_check(&nc->p);
}

int cmd_bench_net(struct cmd_env *env)
{
	const struct settings *s = env->set;
	struct net_plan nc = { 0 };
	_cleanup_free_ char *err = options_from(s, &nc);
	_cleanup_free_ char *msg = NULL;

	if (err) {
		fprintf(stderr, "gpuready bench net: %s\n", err);
		return EXIT_TOOL_ERROR;
	}
	if (s->net.server + s->net.loopback + (env->args.n > 0) != 1) {
		fprintf(stderr, "gpuready bench net: give --server, --loopback, or the server's HOST (one of them)\n");
		return EXIT_TOOL_ERROR;
	}
	if (s->net.server) {
		int lfd = tcp_listen(s->net.bind, s->net.port, &msg);
		if (lfd < 0) {
			fprintf(stderr, "gpuready bench net: %s\n", msg);
			return EXIT_TOOL_ERROR;
		}
		fprintf(stderr, "gpuready bench net: serving on %s:%d\n", s->net.bind ? s->net.bind : "*", s->net.port);
		int code = net_serve(&nc, lfd, s->net.clients);
		close(lfd);
		return code;
	}
	if (s->net.loopback) {
		/* -d A,B: the server end on device B (two local HCAs, a cable
		 * between them); otherwise both ends on the same device */
		struct net_plan snc = nc;
		_cleanup_free_ char *devs = s->net.dev ? xstrdup(s->net.dev) : NULL;
		char *comma = devs ? strchr(devs, ',') : NULL;
		if (comma) {
			*comma = '\0';
			nc.ro.dev = devs;
			snc.ro.dev = comma + 1;
		}
		struct loop_server ls = { .nc = &snc, .lfd = tcp_listen("127.0.0.1", 0, &msg) };
		pthread_t th;
		if (ls.lfd < 0 || pthread_create(&th, NULL, loop_server_main, &ls)) {
			fprintf(stderr, "gpuready bench net: --loopback: %s\n", ls.lfd < 0 ? msg : "cannot start the server");
			if (ls.lfd >= 0)
				close(ls.lfd);
			return EXIT_TOOL_ERROR;
		}
		int code = client_run(&nc, s->json_file, "127.0.0.1", tcp_local_port(ls.lfd));
		/* a client that never connected leaves the server in accept() */
		shutdown(ls.lfd, SHUT_RDWR);
		pthread_join(th, NULL);
		close(ls.lfd);
		return code != EXIT_OK ? code : ls.code;
	}
	char *host = NULL;
	int port = s->net.port;
	if (launch_split_hostport(env->args.v[0], &host, &port) < 0) {
		fprintf(stderr, "gpuready bench net: '%s' is not HOST or HOST:PORT\n", env->args.v[0]);
		return EXIT_TOOL_ERROR;
	}
	int code = client_run(&nc, s->json_file, host, port);
	free(host);
	return code;
}
