/* bench net's renderers (engine.h): perftest-style text and the JSON
 * document (docs/bench-net.schema.json). */
#define _GNU_SOURCE
#include "engine.h"
#include "config.h"
#include <json-c/json.h>
#include "core/clock.h"
#include "core/cleanup.h"
#include "core/exitcodes.h"
#include "core/fileio.h"
#include "core/readers.h"
#include "core/root.h"
#include "core/strbuf.h"
#include "core/tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- output ---- */

#define RULE "---------------------------------------------------------------------------------------\n"

void net_print_info(const struct net_client_side *cs)
{
	const struct net_params *p = &cs->nc->p;
	bool rdma = net_test_is_rdma(p->test);
	printf(RULE);
	printf("                    %s %s test (gpuready bench net)\n", rdma ? "RDMA" : "TCP",
	       net_test_is_lat(p->test) ? "latency" : "bandwidth");
	printf(" Test            : %s\n", net_test_name(p->test));
	printf(" Server          : %s:%d (%s)\n", cs->server, cs->port, cs->acc.host);
	if (rdma) {
		const struct net_rdma_desc *d = &cs->desc;
		printf(" Device          : %s\n Port            : %d\n Number of qps   : %d\n", d->dev, d->port, p->qps);
		printf(" Transport type  : IB\n Connection type : RC\n Mtu             : %d[B]\n", d->mtu);
		printf(" Link type       : %s\n GID index       : %d (%s)\n GID             : %s\n", d->link_layer,
		       d->gid_index, d->gid_type, d->gid);
		printf(" Memory          : %s\n", d->mem);
	} else {
		printf(" Streams         : %d\n", p->qps);
	}
	if (cs->link_gbps > 0)
		printf(" Link            : %s, %g Gb/s (server: %s)\n", rdma ? cs->desc.dev : cs->link, cs->link_gbps,
		       cs->acc.link);
	else
		printf(" Link            : %s, rate unknown (server: %s)\n", rdma ? cs->desc.dev : cs->link, cs->acc.link);
	printf(" Direction       : %s\n", p->bidir ? "both ways at once" : "client to server");
	if (p->tclass >= 0)
		printf(" Traffic class   : %d (0x%02x; %s)\n", p->tclass, p->tclass,
		       rdma ? "the GRH's traffic class" : "IP_TOS on each data connection");
	if (p->warm_up)
		printf(" Warm-up         : %d requests per QP before each size\n", NET_RDMA_TX_DEPTH);
	if (p->duration > 0)
		printf(" Duration        : %g s per size\n", p->duration);
	else
		printf(" Iterations      : %llu per size\n", (unsigned long long)p->iters);
	if (p->test == NET_TCP_BW)
		printf(" Data check      : every message's sequence number, every 64th message's payload\n");
	else if (p->test == NET_TCP_LAT)
		printf(" Data check      : every echo\n");
	printf(RULE);
}

/* The table is perftest's, column for column (perftest_parameters.h:
 * RESULT_FMT, RESULT_FMT_G, RESULT_FMT_LAT, RESULT_FMT_LAT_DUR and
 * RESULT_LINE; MiB/sec since perftest 24.07), so that what reads perftest's
 * rows reads these: every line between the header and the closing
 * RESULT_LINE is a row. What gpuready adds goes after that line
 * (net_print_after_table). */
static void net_print_header(const struct net_params *p, bool gbits)
{
	if (net_lat_by_duration(p))
		printf(" #bytes        #iterations       t_avg[usec]    tps average\n");
	else if (net_test_is_lat(p->test))
		printf(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]"
		       "   99%% percentile[usec]   99.9%% percentile[usec] \n");
	else if (gbits)
		printf(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n");
	else
		printf(" #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n");
}

/* MiB/s to Gb/s: x 2^20 x 8 / 10^9 */
#define MIBS_TO_GBPS (1048576.0 * 8 / 1e9)

static void net_print_bw(const struct net_bw_row *r, bool gbits)
{
	double k = gbits ? MIBS_TO_GBPS : 1.0;
	printf(" %-10llu %-14llu %-18.2f %-21.2f %-.6f\n", (unsigned long long)r->bytes, (unsigned long long)r->iters,
	       r->peak_mibs * k, r->avg_mibs * k, r->msg_rate_mpps);
	fflush(stdout);
}

static void net_print_lat(const struct net_params *p, const struct net_lat_row *r)
{
	if (net_lat_by_duration(p))
		printf(" %-13llu %-17llu %-14.2f %.2f\n", (unsigned long long)r->bytes, (unsigned long long)r->iters,
		       r->avg, net_lat_tps(p, r));
	else
		printf(" %-7llu %-10llu     %-7.2f        %-7.2f      %-7.2f            %-7.2f        %-7.2f         %-7.2f"
		       "                %-7.2f\n",
		       (unsigned long long)r->bytes, (unsigned long long)r->iters, r->min, r->max, r->typical, r->avg,
		       r->stdev, r->p99, r->p999);
	fflush(stdout);
}

static void text_header(void *ctx, const struct net_params *p)
{
	net_print_header(p, ((const struct net_text_ctx *)ctx)->gbits);
}

static void text_bw(void *ctx, const struct net_bw_row *row, bool rdma)
{
	(void)rdma;
	net_print_bw(row, ((const struct net_text_ctx *)ctx)->gbits);
}

static void text_lat(void *ctx, const struct net_lat_row *row, bool capped)
{
	(void)capped;
	net_print_lat(((const struct net_text_ctx *)ctx)->p, row);
}

const struct net_row_sink net_text_sink = { .header = text_header, .bw = text_bw, .lat = text_lat };

void net_print_rule(void)
{
	printf(RULE);
}

/* What latency to expect, for reading the numbers: both measured on one
 * direct 40GbE link between two ConnectX-3 Pro nodes (ib_write_lat 0.85 us;
 * TCP 21.9 us). */
static void net_print_latency_note(const struct net_params *p)
{
	if (net_test_is_rdma(p->test))
		printf(" For comparison: ib_write_lat (2 B) measured 0.85 usec over a direct 40GbE RoCE link between\n"
		       " two ConnectX-3 Pro nodes, against 21.9 usec over TCP on the same link. Several times that\n"
		       " points at the path: switch hops, PCIe, or GPU memory behind another root complex.\n");
	else
		printf(" For comparison: a direct 40GbE link between two ConnectX-3 Pro nodes measured 21.9 usec over\n"
		       " TCP and 0.85 usec over RDMA. TCP pays the kernel's network stack on both ends; loopback and\n"
		       " a local veth measure that stack alone, without a wire.\n");
}

/* The link share at the largest size and the best of all sizes (--json
 * has every row's). */
static void net_print_link_share(const struct net_client_side *cs, const struct net_run *ro)
{
	const struct net_bw_row *last = ro->n ? &ro->bw[ro->n - 1] : NULL, *best = last;
	if (!last)
		return;
	if (last->link_share < 0) {
		printf(" Link share      : unknown (the link's rate is not known)\n");
		return;
	}
	for (size_t i = 0; i < ro->n; i++)
		if (ro->bw[i].link_share > best->link_share)
			best = &ro->bw[i];
	printf(" Link share      : %.1f%% of %g Gb/s%s at %llu B", last->link_share * 100, cs->link_gbps,
	       cs->nc->p.bidir ? " each way" : "", (unsigned long long)last->bytes);
	if (best != last)
		printf("; best %.1f%% at %llu B", best->link_share * 100, (unsigned long long)best->bytes);
	printf("\n");
}

void net_print_after_table(const struct net_client_side *cs, const struct net_run *ro)
{
	const struct net_params *p = &cs->nc->p;
	bool rdma = net_test_is_rdma(p->test);
	if (ro->lat)
		net_print_latency_note(p);
	else if (ro->bw)
		net_print_link_share(cs, ro);
	for (size_t i = 0; i < ro->n; i++) {
		uint64_t bytes = ro->bw ? ro->bw[i].bytes : ro->lat[i].bytes;
		uint64_t errors = ro->bw ? ro->bw[i].errors : ro->lat[i].errors;
		if (errors && ro->bw)
			printf(" Data errors     : %llu %s arrived wrong (%llu-byte messages)\n", (unsigned long long)errors,
			       rdma ? "bytes" : "messages", (unsigned long long)bytes);
		else if (errors)
			printf(" Data errors     : %llu echoes of %llu bytes came back wrong\n", (unsigned long long)errors,
			       (unsigned long long)bytes);
		if (ro->lat && net_lat_by_duration(p))
			printf(" Distribution    : %llu B: t_min %.2f, t_max %.2f, t_typical %.2f, t_stdev %.2f,"
			       " 99%% %.2f, 99.9%% %.2f usec\n",
			       (unsigned long long)bytes, ro->lat[i].min, ro->lat[i].max, ro->lat[i].typical,
			       ro->lat[i].stdev, ro->lat[i].p99, ro->lat[i].p999);
		if (ro->lat && ro->lat[i].capped)
			printf(" Sample limit    : %llu B stopped at %u samples, before -D ran out\n",
			       (unsigned long long)bytes, NET_LAT_MAX_SAMPLES);
	}
}

/* Prints the counters that moved; returns how many are bad. */
int net_print_counters(const struct net_client_side *cs, const struct inventory *before, const struct inventory *after,
			  struct net_counter_delta **ret, size_t *n)
{
	const struct rdma_port *b = net_find_port(before, cs->desc.dev, cs->desc.port);
	const struct rdma_port *a = net_find_port(after, cs->desc.dev, cs->desc.port);
	int bad = 0;
	*ret = NULL;
	*n = 0;
	if (!b || !a || net_rdma_counters_delta(b, a, ret, n) < 0) {
		printf(" Port counters   : could not be read for %s port %d\n", cs->desc.dev, cs->desc.port);
		return 0;
	}
	printf(" Port counters   : %zu moved during the run\n", *n);
	for (size_t i = 0; i < *n; i++) {
		const struct net_counter_delta *d = &(*ret)[i];
		printf("   %-28s +%llu%s%s\n", d->name, (unsigned long long)(d->after - d->before), d->meaning ? ": " : "",
		       d->meaning ? d->meaning : "");
		bad += d->bad;
	}
	return bad;
}

/* ---- JSON ---- */

static json_object *jrow_bw(const struct net_bw_row *r)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "bytes", json_object_new_uint64(r->bytes));
	json_object_object_add(o, "iterations", json_object_new_uint64(r->iters));
	json_object_object_add(o, "bw_peak_mibs", json_object_new_double(r->peak_mibs));
	json_object_object_add(o, "bw_avg_mibs", json_object_new_double(r->avg_mibs));
	json_object_object_add(o, "bw_avg_gbps", json_object_new_double(r->avg_gbps));
	json_object_object_add(o, "msg_rate_mpps", json_object_new_double(r->msg_rate_mpps));
	json_object_object_add(o, "link_share", r->link_share >= 0 ? json_object_new_double(r->link_share) : NULL);
	json_object_object_add(o, "errors", json_object_new_uint64(r->errors));
	return o;
}

static json_object *jrow_lat(const struct net_params *p, const struct net_lat_row *r)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "bytes", json_object_new_uint64(r->bytes));
	json_object_object_add(o, "iterations", json_object_new_uint64(r->iters));
	const double v[] = { r->min, r->max, r->typical, r->avg, r->stdev, r->p99, r->p999 };
	const char *k[] = { "t_min_us", "t_max_us", "t_typical_us", "t_avg_us", "t_stdev_us", "p99_us", "p999_us" };
	for (size_t i = 0; i < ARRAY_SIZE(v); i++)
		json_object_object_add(o, k[i], json_object_new_double(v[i]));
	json_object_object_add(o, "tps_average", json_object_new_double(net_lat_tps(p, r)));
	json_object_object_add(o, "errors", json_object_new_uint64(r->errors));
	/* a -D run that stopped at the samples it keeps, before its time ran out */
	json_object_object_add(o, "stopped_at_sample_limit", json_object_new_boolean(r->capped));
	return o;
}

int net_write_json(const char *path, const struct net_client_side *cs, const struct net_run *ro,
		      const struct net_counter_delta *cd, size_t ncd, const char *result, const char *error)
{
	const struct net_params *p = &cs->nc->p;
	json_object *o = json_object_new_object(), *rows = json_object_new_array(), *ctr = json_object_new_array();
	json_object_object_add(o, "tool", json_object_new_string("gpuready"));
	json_object_object_add(o, "version", json_object_new_string(GPUREADY_VERSION));
	json_object_object_add(o, "kind", json_object_new_string("net"));
	json_object_object_add(o, "test", json_object_new_string(net_test_name(p->test)));
	json_object_object_add(o, "server", json_object_new_string(cs->server));
	json_object_object_add(o, "server_host", json_object_new_string(cs->acc.host));
	json_object_object_add(o, "server_link", json_object_new_string(cs->acc.link));
	json_object_object_add(o, "link", json_object_new_string(net_test_is_rdma(p->test) ? cs->desc.dev : cs->link));
	json_object_object_add(o, "link_gbps", cs->link_gbps > 0 ? json_object_new_double(cs->link_gbps) : NULL);
	json_object_object_add(o, "qps", json_object_new_int(p->qps));
	json_object_object_add(o, "bidirectional", json_object_new_boolean(p->bidir));
	json_object_object_add(o, "traffic_class", p->tclass >= 0 ? json_object_new_int(p->tclass) : NULL);
	json_object_object_add(o, "warm_up", json_object_new_boolean(p->warm_up));
	json_object_object_add(o, "iterations", json_object_new_uint64(p->iters));
	json_object_object_add(o, "duration_s", json_object_new_double(p->duration));
	if (net_test_is_rdma(p->test)) {
		/* no path MTU: the run stopped before its connection was set up,
		 * and none of the three is known */
		bool known = cs->desc.mtu > 0;
		json_object_object_add(o, "gid_index", known ? json_object_new_int(cs->desc.gid_index) : NULL);
		json_object_object_add(o, "mtu", known ? json_object_new_int(cs->desc.mtu) : NULL);
		json_object_object_add(o, "memory", known ? json_object_new_string(cs->desc.mem) : NULL);
	}
	for (size_t i = 0; i < ro->n; i++)
		json_object_array_add(rows, ro->bw ? jrow_bw(&ro->bw[i]) : jrow_lat(&cs->nc->p, &ro->lat[i]));
	for (size_t i = 0; i < ncd; i++) {
		json_object *c = json_object_new_object();
		json_object_object_add(c, "name", json_object_new_string(cd[i].name));
		json_object_object_add(c, "delta", json_object_new_uint64(cd[i].after - cd[i].before));
		json_object_object_add(c, "bad", json_object_new_boolean(cd[i].bad));
		json_object_object_add(c, "meaning", cd[i].meaning ? json_object_new_string(cd[i].meaning) : NULL);
		json_object_array_add(ctr, c);
	}
	json_object_object_add(o, "rows", rows);
	json_object_object_add(o, "counters", ctr);
	json_object_object_add(o, "expect_gbps",
			       cs->nc->expect_gbps > 0 ? json_object_new_double(cs->nc->expect_gbps) : NULL);
	json_object_object_add(o, "result", json_object_new_string(result));
	json_object_object_add(o, "error", error ? json_object_new_string(error) : NULL);
	int ret = file_write_json(path, o);
	json_object_put(o);
	return ret;
}

/* ---- the client's run ---- */

/* Wrong data fails the run; so does bandwidth below --expect-gbps at the
 * largest size. Congestion or error counters that rose are reported (a
 * warning line), not failed: a fabric under other load moves them too. */
int net_verdict(const struct net_plan *nc, const struct net_run *ro, int bad_counters)
{
	double want = nc->expect_gbps;
	int code = EXIT_OK;
	if (ro->errors) {
		printf(" Verdict         : FAILED: %llu %s arrived wrong: the data path corrupts data\n",
		       (unsigned long long)ro->errors, net_test_is_rdma(nc->p.test) ? "bytes" : "messages");
		code = EXIT_CHECK_FAILED;
	}
	if (want > 0 && ro->bw && ro->n) {
		const struct net_bw_row *last = &ro->bw[ro->n - 1];
		bool ok = last->avg_gbps >= want;
		printf(" Verdict         : %s: %.2f Gb/s at %llu B, %s the expected %.2f Gb/s\n", ok ? "OK" : "FAILED",
		       last->avg_gbps, (unsigned long long)last->bytes, ok ? "at or above" : "below", want);
		if (!ok)
			code = EXIT_CHECK_FAILED;
	}
	if (bad_counters)
		printf(" Warning         : error or congestion counters rose during the run (above)\n");
	return code;
}
