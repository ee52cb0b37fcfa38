/* Unit tests for `bench net`'s pure parts: test names and parameter rules,
 * the perftest statistics (bandwidth units and peak, latency percentiles),
 * the control protocol's encoders and decoders (round trips, and every way
 * a decoder must refuse), and the TCP kernels on a socketpair. */
#include "testutil.h"
#include "bench/net/net.h"
#include "bench/net/proto.h"
#include "bench/net/tcp.h"
#include "core/tcp.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

/* Runs a call that sets why (char **err) on failure, after freeing the
 * message of the call before. */
#define DECODE(call) (free(why), why = NULL, (call))

static void test_names_and_params(void **state)
{
	(void)state;
	assert_int_equal(net_test_parse("write_bw"), NET_WRITE_BW);
	assert_int_equal(net_test_parse("tcp_lat"), NET_TCP_LAT);
	assert_int_equal(net_test_parse("ib_write_bw"), -1);
	assert_true(net_test_is_rdma(NET_SEND_LAT));
	assert_false(net_test_is_rdma(NET_TCP_BW));
	assert_true(net_test_is_lat(NET_READ_LAT));

	struct net_params p;
	net_params_default(&p);
	assert_null(net_params_check(&p));
	assert_int_equal(p.size, NET_BW_SIZE);   /* perftest's defaults */
	assert_int_equal(p.iters, NET_BW_ITERS);
	net_params_default(&p);
	p.test = NET_WRITE_LAT;
	assert_null(net_params_check(&p));
	assert_int_equal(p.size, 2);
	assert_int_equal(p.iters, 1000);
	char *e;
	p.qps = 2;
	assert_non_null(e = net_params_check(&p)); /* latency: one QP */
	free(e);
	p.qps = 1;
	p.iters = NET_LAT_MAX_SAMPLES + 1ull; /* more samples than a latency run keeps */
	assert_non_null(e = net_params_check(&p));
	assert_non_null(strstr(e, "use -D"));
	free(e);
	p.duration = 1; /* -n is ignored with -D */
	assert_null(net_params_check(&p));
	p.duration = 0;
	p.iters = NET_LAT_MAX_SAMPLES;
	assert_null(net_params_check(&p));
	net_params_default(&p);
	p.all = true;
	p.size = 64;
	assert_non_null(e = net_params_check(&p));
	free(e);
	net_params_default(&p);
	p.mtu = 1500;
	p.test = NET_WRITE_BW;
	assert_non_null(e = net_params_check(&p)); /* not a verbs MTU */
	free(e);
	net_params_default(&p);
	p.tclass = 106;
	assert_null(net_params_check(&p)); /* -T on TCP: the ToS of the data connections */
	p.sl = 1;
	assert_non_null(e = net_params_check(&p)); /* the SL is for RDMA */
	free(e);
	net_params_default(&p);
	p.tclass = 256;
	assert_non_null(e = net_params_check(&p));
	free(e);
	/* --perform_warm_up: write_bw and read_bw, as perftest */
	static const enum net_test warm[] = { NET_WRITE_BW, NET_READ_BW, NET_SEND_BW, NET_WRITE_LAT, NET_TCP_BW };
	for (size_t i = 0; i < sizeof(warm) / sizeof(warm[0]); i++) {
		net_params_default(&p);
		p.test = warm[i];
		p.warm_up = true;
		e = net_params_check(&p);
		if (i < 2)
			assert_null(e);
		else
			assert_non_null(strstr(e, "write_bw and read_bw only"));
		free(e);
	}
	net_params_default(&p);
	p.duration = 2;
	assert_null(net_params_check(&p));
	assert_int_equal(p.iters, 0); /* a duration replaces the iterations */
}

/* -T on a TCP data connection: IP_TOS (IPv4), IPV6_TCLASS (IPv6), read
 * back from the socket; -1 leaves it alone. */
static void test_tcp_tos(void **state)
{
	(void)state;
	int v4 = socket(AF_INET, SOCK_STREAM, 0), v6 = socket(AF_INET6, SOCK_STREAM, 0), got = -1;
	socklen_t len = sizeof(got);
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	assert_true(v4 >= 0);
	assert_int_equal(bind(v4, (struct sockaddr *)&a4, sizeof(a4)), 0);
	assert_int_equal(net_tcp_set_tos(v4, 0x68), 0);
	assert_int_equal(getsockopt(v4, IPPROTO_IP, IP_TOS, &got, &len), 0);
	assert_int_equal(got, 0x68);
	assert_int_equal(net_tcp_set_tos(v4, -1), 0);
	assert_int_equal(getsockopt(v4, IPPROTO_IP, IP_TOS, &got, &len), 0);
	assert_int_equal(got, 0x68);
	if (v6 >= 0) {
		struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
		if (bind(v6, (struct sockaddr *)&a6, sizeof(a6)) == 0) {
			assert_int_equal(net_tcp_set_tos(v6, 0xb8), 0);
			len = sizeof(got);
			assert_int_equal(getsockopt(v6, IPPROTO_IPV6, IPV6_TCLASS, &got, &len), 0);
			assert_int_equal(got, 0xb8);
		}
		close(v6);
	}
	close(v4);
	assert_int_equal(net_tcp_set_tos(v4, 0x68), -EBADF);
}

static void test_bw_row(void **state)
{
	(void)state;
	struct net_samples s = { .bytes = 16u << 20, .msgs = 256, .seconds = 0.5, .n_windows = NET_WINDOWS };
	for (int i = 0; i < NET_WINDOWS; i++)
		s.window_s[i] = 0.5 / NET_WINDOWS;
	s.window_s[3] = 0.5 / NET_WINDOWS / 2; /* one slice twice as fast */
	struct net_bw_row r;
	net_bw_row_from(&s, 65536, 25.0, &r);
	assert_true(fabs(r.avg_mibs - 32.0) < 1e-9);                  /* 16 MiB in 0.5 s */
	assert_true(fabs(r.peak_mibs - 64.0) < 1e-9);                 /* the fast slice */
	assert_true(fabs(r.avg_gbps - 16.0 * 1048576 * 8 / 0.5 / 1e9) < 1e-9);
	assert_true(fabs(r.msg_rate_mpps - 256 / 0.5 / 1e6) < 1e-12);
	assert_true(fabs(r.link_share - r.avg_gbps / 25.0) < 1e-12);
	s.n_windows = 0;
	net_bw_row_from(&s, 65536, 0, &r);
	assert_true(r.peak_mibs == r.avg_mibs); /* no windows: the peak is the average */
	assert_true(r.link_share < 0);          /* unknown link rate */
}

static void test_lat_row(void **state)
{
	(void)state;
	double v[1000];
	struct net_samples s = { .lat_us = v, .n_lat = 1000 };
	for (int i = 0; i < 1000; i++)
		v[i] = 1000 - i; /* 1000 .. 1, unsorted */
	struct net_lat_row r;
	net_lat_row_from(&s, 2, &r);
	/* perftest: the two largest set aside, m = 998 */
	assert_true(r.min == 1 && r.max == 999);  /* sorted[m] */
	assert_true(r.typical == 499.5);           /* mean of the middle pair */
	assert_true(fabs(r.avg - 499.5) < 1e-9);  /* 1 .. 998 */
	assert_true(r.p99 == 990);                 /* sorted[ceil(988.02)] */
	assert_true(r.p999 == 999);                /* sorted[ceil(997.002)] */
	assert_true(fabs(r.stdev - sqrt((998.0 * 998 - 1) / 12)) < 1e-6);
	assert_true(v[0] == 1000);                 /* the samples are left as they were */
	for (int i = 0; i < 5; i++)
		v[i] = 10 + i;                     /* odd m: the middle sample */
	s.n_lat = 5;
	net_lat_row_from(&s, 2, &r);
	assert_true(r.typical == 11 && r.max == 13);
	s.n_lat = 1;
	net_lat_row_from(&s, 2, &r);
	assert_true(r.p999 == 10 && r.stdev == 0);
}

static void test_hello(void **state)
{
	(void)state;
	struct net_hello h = { .version = NET_PROTO_VERSION, .host = "client-1" }, d;
	uint8_t b[NET_HELLO_LEN];
	char *why = NULL;
	net_params_default(&h.p);
	h.p.test = NET_WRITE_BW;
	h.p.size = 4096;
	h.p.iters = 777;
	h.p.duration = 1.5;
	h.p.qps = 4;
	h.p.bidir = true;
	h.p.warm_up = true;
	h.p.mtu = 4096;
	h.p.tclass = 106;
	h.p.sl = 3;
	h.flags = NET_HELLO_HAS_TOKEN;
	memset(h.nonce, 0xa5, sizeof(h.nonce));
	net_hello_encode(&h, b);
	assert_int_equal(DECODE(net_hello_decode(b, sizeof(b), &d, &why)), 0);
	assert_null(why);
	assert_int_equal(d.flags, NET_HELLO_HAS_TOKEN);
	assert_memory_equal(d.nonce, h.nonce, sizeof(h.nonce));
	assert_int_equal(d.p.test, NET_WRITE_BW);
	assert_int_equal(d.p.size, 4096);
	assert_int_equal(d.p.iters, 777);
	assert_true(d.p.duration == 1.5);
	assert_int_equal(d.p.qps, 4);
	assert_true(d.p.bidir);
	assert_true(d.p.warm_up);
	assert_int_equal(d.p.tclass, 106);
	assert_int_equal(d.p.sl, 3);
	assert_string_equal(d.host, "client-1");
	h.p.tclass = -1;
	net_hello_encode(&h, b);
	assert_int_equal(DECODE(net_hello_decode(b, sizeof(b), &d, &why)), 0);
	assert_int_equal(d.p.tclass, -1);

	/* another version is named as such, before any length check */
	uint8_t v1[8] = { 1, 0, 0, 0 };
	assert_int_equal(DECODE(net_hello_decode(v1, sizeof(v1), &d, &why)), -EPROTO);
	assert_string_equal(why, "the client speaks protocol version 1, this server 2: "
				 "run the same gpuready version on both ends");
	assert_int_equal(DECODE(net_hello_decode(b, sizeof(b) - 1, &d, &why)), -EPROTO);
	assert_string_equal(why, "a HELLO of 151 bytes where 152 are expected");
	assert_int_equal(DECODE(net_hello_decode(b, 2, &d, &why)), -EPROTO);
	assert_string_equal(why, "a HELLO of 2 bytes where 152 are expected");
	uint8_t x[NET_HELLO_LEN];
	memcpy(x, b, sizeof(x));
	x[4] = 99; /* test */
	assert_int_equal(DECODE(net_hello_decode(x, sizeof(x), &d, &why)), -EPROTO);
	assert_string_equal(why, "HELLO: unknown test");
	memcpy(x, b, sizeof(x));
	x[16] = 2; /* the "all" flag */
	assert_int_equal(DECODE(net_hello_decode(x, sizeof(x), &d, &why)), -EPROTO);
	memcpy(x, b, sizeof(x));
	x[18] = 2; /* the warm-up flag */
	assert_int_equal(DECODE(net_hello_decode(x, sizeof(x), &d, &why)), -EPROTO);
	memcpy(x, b, sizeof(x));
	memset(x + NET_HELLO_LEN - 36 - 64, 'a', 64); /* unterminated host (then flags, nonce) */
	assert_int_equal(DECODE(net_hello_decode(x, sizeof(x), &d, &why)), -EPROTO);
	assert_string_equal(why, "HELLO: the host name is not terminated");
	memcpy(x, b, sizeof(x));
	double nan_d = NAN;
	memcpy(x + 28, &nan_d, 8); /* duration */
	assert_int_equal(DECODE(net_hello_decode(x, sizeof(x), &d, &why)), -EPROTO);
	free(why);
}

static void test_other_messages(void **state)
{
	(void)state;
	char *why = NULL;
	struct net_accept a = { .version = NET_PROTO_VERSION, .token = 0x1122334455667788ull, .host = "srv",
				.link = "eth0", .link_gbps = 100 }, ad;
	uint8_t ab[NET_ACCEPT_LEN];
	net_accept_encode(&a, ab);
	assert_int_equal(DECODE(net_accept_decode(ab, sizeof(ab), &ad, &why)), 0);
	assert_true(ad.token == a.token && ad.link_gbps == 100);
	assert_string_equal(ad.link, "eth0");

	struct net_start st = { .size = 65536, .iters = 5000 }, sd;
	uint8_t sb[NET_START_LEN];
	net_start_encode(&st, sb);
	assert_int_equal(DECODE(net_start_decode(sb, sizeof(sb), &sd, &why)), 0);
	assert_int_equal(sd.size, 65536);
	st.size = 0;
	net_start_encode(&st, sb);
	assert_int_equal(DECODE(net_start_decode(sb, sizeof(sb), &sd, &why)), -EPROTO);
	st = (struct net_start){ .size = 8 };
	net_start_encode(&st, sb);
	assert_int_equal(DECODE(net_start_decode(sb, sizeof(sb), &sd, &why)), -EPROTO); /* no iters, no time */
	assert_string_equal(why, "START: neither iterations nor a duration");
	assert_int_equal(DECODE(net_start_decode(sb, 3, &sd, &why)), -EPROTO);
	assert_string_equal(why, "a START of 3 bytes where 24 are expected");

	struct net_samples r = { .bytes = 1000, .msgs = 10, .seconds = 0.25, .errors = 1, .n_windows = 2,
				 .window_s = { 0.1, 0.15 } }, rd;
	uint8_t rb[NET_RESULT_LEN];
	net_result_encode(&r, rb);
	assert_int_equal(DECODE(net_result_decode(rb, sizeof(rb), &rd, &why)), 0);
	assert_true(rd.bytes == 1000 && rd.msgs == 10 && rd.errors == 1 && rd.n_windows == 2 && rd.window_s[1] == 0.15);
	rb[NET_RESULT_LEN - 4] = 200; /* window count */
	assert_int_equal(DECODE(net_result_decode(rb, sizeof(rb), &rd, &why)), -EPROTO);

	struct net_data_hello dh = { .token = 5, .stream = 3, .nstreams = 4 }, dd;
	uint8_t db[NET_DATA_HELLO_LEN];
	net_data_hello_encode(&dh, db);
	assert_int_equal(DECODE(net_data_hello_decode(db, sizeof(db), &dd, &why)), 0);
	dh.stream = 4;
	net_data_hello_encode(&dh, db);
	assert_int_equal(DECODE(net_data_hello_decode(db, sizeof(db), &dd, &why)), -EPROTO);
	assert_string_equal(why, "a data connection with a stream number out of range");
	free(why);
}

static void test_framing(void **state)
{
	(void)state;
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	uint32_t type;
	uint8_t *p = NULL;
	size_t len;
	char *why = NULL;
	assert_int_equal(net_msg_send(sv[0], NETMSG_START, "abc", 3, clock_now() + 1), 0);
	assert_int_equal(net_msg_recv(sv[1], &type, &p, &len, 100, clock_now() + 1), 0);
	assert_int_equal(type, NETMSG_START);
	assert_int_equal(len, 3);
	free(p);
	/* a REFUSE where an ACCEPT is wanted: the peer's words come through */
	assert_int_equal(net_msg_send(sv[0], NETMSG_REFUSE, "busy", 4, clock_now() + 1), 0);
	assert_int_equal(DECODE(net_msg_expect(sv[1], NETMSG_ACCEPT, &p, &len, clock_now() + 1, &why)), -ECONNABORTED);
	assert_string_equal(why, "busy");
	/* another type: named, its payload dropped */
	assert_int_equal(net_msg_send(sv[0], NETMSG_READY, "x", 1, clock_now() + 1), 0);
	assert_int_equal(DECODE(net_msg_expect(sv[1], NETMSG_ACCEPT, &p, &len, clock_now() + 1, &why)), -EPROTO);
	assert_string_equal(why, "the peer sent message type 5 where 2 was expected");
	assert_null(p);
	/* a peer's long text: its first 255 bytes */
	char text[400];
	memset(text, 'z', sizeof(text));
	assert_int_equal(net_msg_send(sv[0], NETMSG_ERROR, text, sizeof(text), clock_now() + 1), 0);
	assert_int_equal(DECODE(net_msg_expect(sv[1], NETMSG_ACCEPT, &p, &len, clock_now() + 1, &why)), -ECONNABORTED);
	assert_int_equal(strlen(why), 255);
	assert_int_equal(DECODE(net_msg_expect(sv[1], NETMSG_ACCEPT, &p, &len, clock_now() + 0.1, &why)), -ETIMEDOUT);
	assert_string_equal(why, "the peer said nothing by the deadline");
	free(why);
	/* the header on the wire: magic "GNET", type, length, little-endian */
	uint8_t raw[13];
	assert_int_equal(net_msg_send(sv[0], NETMSG_BYE, "x", 1, clock_now() + 1), 0);
	assert_int_equal(read(sv[1], raw, sizeof(raw)), (ssize_t)sizeof(raw));
	assert_memory_equal(raw, "GNET\12\0\0\0\1\0\0\0x", sizeof(raw));
	/* a frame above the limit is refused unread */
	assert_int_equal(net_msg_send(sv[0], NETMSG_INFO, "0123456789", 10, clock_now() + 1), 0);
	assert_int_equal(net_msg_recv(sv[1], &type, &p, &len, 5, clock_now() + 1), -EMSGSIZE);
	/* silence: the deadline */
	double t0 = clock_now();
	assert_int_equal(net_msg_recv(sv[0], &type, &p, &len, 100, clock_now() + 0.2), -ETIMEDOUT);
	assert_true(clock_now() - t0 < 1.0);
	/* wrong magic */
	uint32_t bad[3] = { 1, 2, 3 };
	assert_int_equal(write(sv[0], bad, sizeof(bad)), (ssize_t)sizeof(bad));
	assert_int_equal(net_msg_recv(sv[1], &type, &p, &len, 100, clock_now() + 1), -EPROTO);
	close(sv[0]);
	close(sv[1]);
}

/* The TCP kernels over a socketpair: every message arrives and is checked. */
struct bw_side {
	int fd;
	bool send, recv;
	uint64_t size;          /* per message; 0: 1000 */
	struct net_samples s;
	int r;
};

static void *bw_thread(void *arg)
{
	struct bw_side *b = arg;
	char *err = NULL;
	b->r = net_tcp_bw(&b->fd, 1, b->send, b->recv, b->size ? b->size : 1000, 320, 0, clock_now() + 10, &b->s, &err);
	free(err);
	return NULL;
}

/* Both ends of a socketpair send and receive 320 messages of size bytes
 * (receive buffers of rcvbuf bytes, 0: the default); b ends with what
 * the second end received. */
static void bw_both(uint64_t size, int rcvbuf, struct bw_side *b)
{
	int sv[2];
	pthread_t t;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	for (int i = 0; i < 2 && rcvbuf; i++)
		assert_int_equal(setsockopt(sv[i], SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)), 0);
	struct bw_side a = { .fd = sv[0], .send = true, .recv = true, .size = size };
	*b = (struct bw_side){ .fd = sv[1], .send = true, .recv = true, .size = size };
	pthread_create(&t, NULL, bw_thread, b);
	bw_thread(&a);
	pthread_join(t, NULL);
	assert_int_equal(a.r, 0);
	assert_int_equal(b->r, 0);
	assert_int_equal(a.s.msgs, 320);
	assert_int_equal(a.s.bytes, 320 * size);
	assert_int_equal(a.s.errors, 0);
	assert_int_equal(b->s.msgs, 320);
	assert_int_equal(b->s.errors, 0);
	net_samples_free(&a.s);
	close(sv[0]);
	close(sv[1]);
}

static void test_tcp_kernels(void **state)
{
	(void)state;
	int sv[2];
	struct bw_side b;
	/* 20 KB slices, next to socket buffers of 64 KB or more: no peak */
	bw_both(1000, 0, &b);
	assert_int_equal(b.s.n_windows, 0);
	net_samples_free(&b.s);
	/* 2 MB slices next to 64 KB buffers (8 x 128 KB, as the kernel doubles
	 * SO_RCVBUF): each slice's time counts */
	bw_both(100000, 65536, &b);
	assert_int_equal(b.s.n_windows, NET_WINDOWS);
	net_samples_free(&b.s);

	/* corrupted data is counted: a writer that sends a wrong sequence */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	uint8_t msg[1000];
	for (int i = 0; i < 1000; i++)
		msg[i] = net_tcp_pattern(0, (uint64_t)i);
	for (uint64_t seq = 0; seq < 3; seq++) {
		uint64_t v = seq == 1 ? 7 : seq;
		memcpy(msg, &v, 8);
		assert_int_equal(write(sv[0], msg, sizeof(msg)), (ssize_t)sizeof(msg));
	}
	shutdown(sv[0], SHUT_WR);
	struct net_samples rx;
	char *err = NULL;
	assert_int_equal(net_tcp_bw(&sv[1], 1, false, true, 1000, 3, 0, clock_now() + 5, &rx, &err), 0);
	assert_int_equal(rx.msgs, 3);
	assert_int_equal(rx.errors, 1);
	close(sv[0]);
	close(sv[1]);
}

/* A peer that drips a byte every 100 ms: each call's socket timeout starts
 * afresh, so only the deadline checked between calls stops it. The drip
 * itself ends after 12 s (the test stays bounded either way). */
struct drip {
	int fd;
	atomic_bool stop;
};

static void *drip_thread(void *arg)
{
	struct drip *d = arg;
	double end = clock_now() + 12;
	while (!atomic_load(&d->stop) && clock_now() < end) {
		if (write(d->fd, "x", 1) != 1)
			break;
		usleep(100000);
	}
	shutdown(d->fd, SHUT_WR);
	return NULL;
}

static void drip_case(bool lat)
{
	int sv[2];
	pthread_t th;
	struct drip d = { .stop = false };
	struct net_samples rx = { 0 };
	char *err = NULL;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	d.fd = sv[0];
	assert_int_equal(pthread_create(&th, NULL, drip_thread, &d), 0);
	double t0 = clock_now();
	int r = lat ? net_tcp_lat_server(sv[1], 1000, t0 + 2, &err)
		    : net_tcp_bw(&sv[1], 1, false, true, 1000, 10, 0, t0 + 2, &rx, &err);
	double took = clock_now() - t0;
	atomic_store(&d.stop, true);
	pthread_join(th, NULL);
	if (r != -ETIMEDOUT || took > 2 * 2 + 5)
		fail_msg("%s: %d after %.1f s (%s), want -ETIMEDOUT by the deadline", lat ? "lat" : "bw", r, took,
			 err ? err : "");
	if (!lat && !strstr(err, "bytes/s"))
		fail_msg("no rate in \"%s\"", err);
	free(err);
	net_samples_free(&rx);
	close(sv[0]);
	close(sv[1]);
}

static void test_tcp_drip(void **state)
{
	(void)state;
	drip_case(false);
	drip_case(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_and_params),
		cmocka_unit_test(test_tcp_tos),
		cmocka_unit_test(test_bw_row),
		cmocka_unit_test(test_lat_row),
		cmocka_unit_test(test_hello),
		cmocka_unit_test(test_other_messages),
		cmocka_unit_test(test_framing),
		cmocka_unit_test(test_tcp_kernels),
		cmocka_unit_test(test_tcp_drip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
