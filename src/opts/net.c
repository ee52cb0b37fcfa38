/* `bench net`'s options: perftest's letters, long names (as aliases where
 * gpuready's spelling differs: --qp, --report_gbits) and meanings, read
 * from the current upstream perftest's parser (perftest_parameters.c,
 * `ib_write_bw --help`); its defaults those of bench/net/net.h and
 * bench/net/proto.h. Where gpuready's own letter collided, perftest's
 * wins: -T is the ToS, the step deadline is --timeout alone. perftest
 * flags gpuready cannot honour are taken here and refused, with the
 * reason, by cmd/bench_net.c (-R) or by the form check below (-c). */
#include "opts/settings.h"
#include "bench/net/proto.h"

#include <stddef.h>
#include <strings.h>

#define OFF(f) offsetof(struct settings, f)

/* perftest's connection types other than RC (UC, UD, XRC, DC, SRD) are
 * not implemented. */
static const char *connection_form(const char *v)
{
	return strcasecmp(v, "RC") ? "RC (gpuready's RDMA tests use reliable-connected QPs; perftest's UC, UD, XRC, DC "
				     "and SRD are not implemented)"
				   : NULL;
}

/* -1, no default shown: --gid-index chosen as perftest does (the help text
 * says how); -T, --tclass the system's default; --use_cuda not given. */
static const struct opt net_rows[] = {
	{ .name = "server", .type = OPT_FLAG, .offset = OFF(net.server),
	  .help = "Serve clients, one after another, until stopped.", .scope = SCOPE_NET },
	{ .name = "bind", .type = OPT_STRING, .offset = OFF(net.bind), .metavar = "ADDR",
	  .help = "Server: listen on ADDR only.", .scope = SCOPE_NET },
	{ .name = "port", .short_name = 'p', .type = OPT_INT, .offset = OFF(net.port), .metavar = "PORT",
	  .help = "TCP port of the server's control connection.", .def = OPT_DEF_INT(NET_DEFAULT_PORT), .min = 1,
	  .max = 65535, .scope = SCOPE_NET },
	{ .name = "clients", .type = OPT_INT, .offset = OFF(net.clients), .metavar = "N",
	  .help = "Server: exit after N clients, with the last one's status (0: serve until stopped).",
	  .def = OPT_DEF_INT(0), .max = 1000000, .scope = SCOPE_NET },
	{ .name = "test", .type = OPT_STRING, .offset = OFF(net.test), .metavar = "TEST",
	  .help = "write_bw, write_lat, read_bw, read_lat, send_bw, send_lat (RDMA verbs, RC), tcp_bw or tcp_lat.",
	  .def = OPT_DEF_STR("tcp_bw"), .scope = SCOPE_NET },
	{ .name = "size", .short_name = 's', .type = OPT_U64, .offset = OFF(net.size), .metavar = "BYTES",
	  .help = "Message size (default 65536 for bandwidth, 2 for latency).", .min = 1, .scope = SCOPE_NET },
	{ .name = "all", .short_name = 'a', .type = OPT_FLAG, .offset = OFF(net.all),
	  .help = "Every power of two from 2 B to 8 MiB.", .scope = SCOPE_NET },
	{ .name = "iters", .short_name = 'n', .type = OPT_U64, .offset = OFF(net.iters), .metavar = "N",
	  .help = "Iterations per size and QP or stream (default 5000 for bandwidth, 1000 for latency).", .min = 1,
	  .scope = SCOPE_NET },
	{ .name = "duration", .short_name = 'D', .type = OPT_DOUBLE, .offset = OFF(net.duration), .metavar = "SEC",
	  .help = "Run each size for SEC seconds instead of -n.", .max = 3600, .scope = SCOPE_NET },
	{ .name = "qps", .alias = "qp", .short_name = 'q', .type = OPT_INT, .offset = OFF(net.qps), .metavar = "N",
	  .help = "Queue pairs (RDMA) or streams (TCP).", .def = OPT_DEF_INT(1), .min = 1, .max = 64,
	  .scope = SCOPE_NET },
	{ .name = "bidirectional", .short_name = 'b', .type = OPT_FLAG, .offset = OFF(net.bidir),
	  .help = "Both directions at once (bandwidth tests).", .scope = SCOPE_NET },
	{ .name = "ib-dev", .short_name = 'd', .type = OPT_STRING, .offset = OFF(net.dev), .metavar = "DEV",
	  .help = "RDMA device (default: the first with an active port); with --loopback, DEV,DEV2 puts the server end on DEV2.",
	  .scope = SCOPE_NET },
	{ .name = "ib-port", .short_name = 'i', .type = OPT_INT, .offset = OFF(net.ib_port), .metavar = "PORT",
	  .help = "RDMA port.", .def = OPT_DEF_INT(1), .min = 1, .max = 255, .scope = SCOPE_NET },
	{ .name = "gid-index", .short_name = 'x', .type = OPT_INT, .offset = OFF(net.gid), .metavar = "N",
	  .help = "GID index (default: the RoCE v2 IPv4-mapped GID, chosen as perftest does).",
	  .def = OPT_DEF_HIDDEN_INT(-1), .max = 255, .scope = SCOPE_NET },
	{ .name = "tclass", .type = OPT_INT, .offset = OFF(net.tclass), .metavar = "TC",
	  .help = "Traffic class: of the GRH in RDMA packets; on TCP the ToS byte of the data connections (as -T).",
	  .def = OPT_DEF_HIDDEN_INT(-1), .max = 255, .scope = SCOPE_NET },
	{ .name = "tos", .short_name = 'T', .type = OPT_INT, .offset = OFF(net.tos), .metavar = "TOS",
	  .help = "Type of service byte (0-255; DSCP << 2 | ECN): IP_TOS on the TCP data connections; for RDMA the GRH traffic class (perftest sets it through rdma_cm with -R; gpuready sets it on the QPs itself).",
	  .def = OPT_DEF_HIDDEN_INT(-1), .max = 255, .scope = SCOPE_NET },
	{ .name = "mtu", .short_name = 'm', .type = OPT_INT, .offset = OFF(net.mtu), .metavar = "BYTES",
	  .help = "RDMA path MTU: 256 ... 4096 (default: the port's).", .max = 4096, .scope = SCOPE_NET },
	{ .name = "sl", .short_name = 'S', .type = OPT_INT, .offset = OFF(net.sl), .metavar = "SL",
	  .help = "InfiniBand service level.", .def = OPT_DEF_INT(0), .max = 15, .scope = SCOPE_NET },
	{ .name = "mem", .type = OPT_STRING, .offset = OFF(net.mem), .metavar = "host|cuda[:GPU]",
	  .help = "Buffers in host or GPU memory (cuda: the GPU nearest the NIC; registered through DMA-BUF, else peer memory).",
	  .def = OPT_DEF_STR("host"), .scope = SCOPE_NET },
	{ .name = "use_cuda", .type = OPT_INT, .offset = OFF(net.use_cuda), .metavar = "GPU",
	  .help = "perftest's spelling of --mem cuda:GPU.", .def = OPT_DEF_HIDDEN_INT(-1), .max = 1023,
	  .scope = SCOPE_NET },
	{ .name = "use_cuda_dmabuf", .type = OPT_FLAG, .offset = OFF(net.cuda_dmabuf),
	  .help = "Register GPU memory through DMA-BUF only: fail rather than fall back to peer memory (with --use_cuda or --mem cuda).",
	  .scope = SCOPE_NET },
	{ .name = "perform_warm_up", .type = OPT_FLAG, .offset = OFF(net.warm_up),
	  .help = "Before each size, post a send queue's depth of untimed requests per QP and wait for them (write_bw, read_bw).",
	  .scope = SCOPE_NET },
	{ .name = "connection", .short_name = 'c', .type = OPT_STRING, .offset = OFF(net.connection), .metavar = "RC",
	  .help = "Connection type: RC only.", .def = OPT_DEF_STR("RC"), .scope = SCOPE_NET, .valid = connection_form },
	{ .name = "rdma_cm", .short_name = 'R', .type = OPT_FLAG, .offset = OFF(net.rdma_cm),
	  .help = "perftest's rdma_cm connection setup: refused (gpuready exchanges the QPs' attributes over its control connection).",
	  .scope = SCOPE_NET },
	{ .name = "CPU-freq", .short_name = 'F', .type = OPT_FLAG, .offset = OFF(net.cpu_freq),
	  .help = "perftest's: no warning about the CPU frequency governor (gpuready prints none; accepted for scripts).",
	  .scope = SCOPE_NET },
	{ .name = "loopback", .type = OPT_FLAG, .offset = OFF(net.loopback),
	  .help = "Client and server in this process (one node, no peer needed).", .scope = SCOPE_NET },
	{ .name = "report-gbits", .alias = "report_gbits", .type = OPT_FLAG, .offset = OFF(net.gbits),
	  .help = "Bandwidth in Gb/s (10^9 bit/s) instead of MiB/s.", .scope = SCOPE_NET },
	{ .name = "timeout", .type = OPT_DOUBLE, .offset = OFF(net.timeout), .metavar = "SEC",
	  .help = "Seconds any step may take, and the server's handshake deadline (0: 60 s plus the data at 100 MB/s per step; 10 s for the handshake).",
	  .def = OPT_DEF_DOUBLE(0), .max = 1e6, .scope = SCOPE_NET },
	{ .name = "expect-gbps", .type = OPT_DOUBLE, .offset = OFF(net.expect_gbps), .metavar = "GBPS",
	  .help = "Fail when the bandwidth at the largest size is below GBPS (10^9 bit/s).", .max = 1e6,
	  .scope = SCOPE_NET },
};
const struct opt_table net_opts = OPT_TABLE("net", net_rows);
