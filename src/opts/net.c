/* `bench net`'s options: perftest's letters and meanings where it has them
 * (perftest's README, ib_write_bw --help), its defaults those of
 * bench/net/net.h and bench/net/proto.h. */
#include "opts/settings.h"
#include "bench/net/proto.h"

#include <stddef.h>

#define OFF(f) offsetof(struct settings, f)

/* -1 for --gid-index and --tclass: chosen as perftest does (the help
 * text says how), so no default is shown. */
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
	{ .name = "qps", .short_name = 'q', .type = OPT_INT, .offset = OFF(net.qps), .metavar = "N",
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
	  .help = "Traffic class of the RDMA packets.", .def = OPT_DEF_HIDDEN_INT(-1), .max = 255,
	  .scope = SCOPE_NET },
	{ .name = "mtu", .short_name = 'm', .type = OPT_INT, .offset = OFF(net.mtu), .metavar = "BYTES",
	  .help = "RDMA path MTU: 256 ... 4096 (default: the port's).", .max = 4096, .scope = SCOPE_NET },
	{ .name = "sl", .short_name = 'S', .type = OPT_INT, .offset = OFF(net.sl), .metavar = "SL",
	  .help = "InfiniBand service level.", .def = OPT_DEF_INT(0), .max = 15, .scope = SCOPE_NET },
	{ .name = "mem", .type = OPT_STRING, .offset = OFF(net.mem), .metavar = "host|cuda[:GPU]",
	  .help = "Buffers in host or GPU memory (cuda: the GPU nearest the NIC; registered through DMA-BUF, else peer memory).",
	  .def = OPT_DEF_STR("host"), .scope = SCOPE_NET },
	{ .name = "loopback", .type = OPT_FLAG, .offset = OFF(net.loopback),
	  .help = "Client and server in this process (one node, no peer needed).", .scope = SCOPE_NET },
	{ .name = "report-gbits", .type = OPT_FLAG, .offset = OFF(net.gbits),
	  .help = "Bandwidth in Gb/s (10^9 bit/s) instead of MiB/s.", .scope = SCOPE_NET },
	{ .name = "expect-gbps", .type = OPT_DOUBLE, .offset = OFF(net.expect_gbps), .metavar = "GBPS",
	  .help = "Fail when the bandwidth at the largest size is below GBPS (10^9 bit/s).", .max = 1e6,
	  .scope = SCOPE_NET },
};
const struct opt_table net_opts = OPT_TABLE("net", net_rows);
