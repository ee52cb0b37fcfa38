/* TCP bandwidth and latency kernels (see tcp.h). */
#include "tcp.h"
#include "core/tcp.h"
#include "core/cleanup.h"
#include "core/strbuf.h"

#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

/* Every 64th message's payload is compared in full: a check of the data
 * that costs under 2% of the receive bandwidth. */
#define CHECK_EVERY 64

/* A stream that moves nothing for this long is dead, whatever the step's
 * deadline: a peer whose host lost power must not hold a server for the
 * whole of a long step. Every call moves at most CHUNK bytes, so a slow
 * but live link is never mistaken for a dead one. */
#define IDLE_S 30.0
#define CHUNK (1u << 20)

/* Blocking calls give up after IDLE_S, or at the deadline if sooner. The
 * data streams use blocking calls with socket timeouts, not the poll()
 * before every call of core/tcp.c's tcp_write_all/tcp_read_all: a
 * syscall fewer per message is what lets tcp_bw keep up with iperf3. */
static void set_timeouts(int fd, double deadline)
{
	double left = deadline > 0 ? deadline - clock_now() : IDLE_S;
	if (left > IDLE_S)
		left = IDLE_S;
	if (left < 0.001)
		left = 0.001;
	struct timeval tv = { .tv_sec = (time_t)left, .tv_usec = (suseconds_t)((left - (double)(time_t)left) * 1e6) };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* A transfer that came back short: past the deadline it ends (a peer that
 * drips a byte at a time renews the socket timeout with every call, so
 * the deadline is checked here, between calls), else the timeout is
 * shortened to what is left. */
static int short_transfer(int fd, double deadline)
{
	if (deadline > 0 && clock_now() > deadline)
		return -ETIMEDOUT;
	if (deadline > 0)
		set_timeouts(fd, deadline);
	return 0;
}

int net_tcp_set_tos(int fd, int tos)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	if (tos < 0)
		return 0;
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	int r = ss.ss_family == AF_INET6 ? setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof(tos))
					 : setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
	return r < 0 ? -errno : 0;
}

/* 0, 1 at a clean end of stream before any byte, or -errno. */
static int recv_full(int fd, uint8_t *buf, size_t len, double deadline)
{
	size_t got = 0;
	while (got < len) {
		if (got && short_transfer(fd, deadline) < 0)
			return -ETIMEDOUT;
		size_t want = len - got < CHUNK ? len - got : CHUNK;
		ssize_t n = recv(fd, buf + got, want, MSG_WAITALL);
		if (n == 0)
			return got ? -EPIPE : 1;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		}
		got += (size_t)n;
	}
	return 0;
}

static int send_full(int fd, const uint8_t *buf, size_t len, double deadline)
{
	size_t put = 0;
	while (put < len) {
		if (put && short_transfer(fd, deadline) < 0)
			return -ETIMEDOUT;
		size_t want = len - put < CHUNK ? len - put : CHUNK;
		ssize_t n = send(fd, buf + put, want, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? -ETIMEDOUT : errno == EPIPE ? -ECONNRESET : -errno;
		}
		put += (size_t)n;
	}
	return 0;
}

static void fill_pattern(uint8_t *buf, uint64_t size, uint32_t stream)
{
	for (uint64_t i = 0; i < size; i++)
		buf[i] = net_tcp_pattern(stream, i);
}

static void put_seq(uint8_t *buf, uint64_t size, uint64_t seq)
{
	uint64_t le = htole64(seq);
	memcpy(buf, &le, size < 8 ? size : 8);
}

/* Shared by the threads of one bandwidth run. */
struct bw_run {
	uint64_t size, iters;
	bool windows;                    /* iteration run of at least NET_WINDOWS messages */
	double duration, deadline, start;
	atomic_ullong received;          /* messages, over every stream */
	double window_end[NET_WINDOWS + 1];
	pthread_mutex_t m;
};

struct stream {
	struct bw_run *run;
	int fd;
	uint32_t index;
	uint64_t count;                  /* messages to send (0 with a duration) */
	/* results */
	uint64_t bytes, msgs, errors;
	double first, last;
	int err;
};

static void *sender(void *arg)
{
	struct stream *s = arg;
	struct bw_run *r = s->run;
	uint8_t *buf = malloc(r->size);
	if (!buf) {
		s->err = -ENOMEM;
		return NULL;
	}
	fill_pattern(buf, r->size, s->index);
	s->first = clock_now();
	double end = r->duration > 0 ? s->first + r->duration : 0;
	for (uint64_t seq = 0; r->duration > 0 || seq < s->count; seq++) {
		put_seq(buf, r->size, seq);
		int e = send_full(s->fd, buf, r->size, r->deadline);
		if (e < 0) {
			s->err = e;
			break;
		}
		double now = clock_now();
		s->bytes += r->size;
		s->last = now;
		if (r->deadline > 0 && now > r->deadline) {
			s->err = -ETIMEDOUT;
			break;
		}
		if (end > 0 && now >= end)
			break;
	}
	shutdown(s->fd, SHUT_WR);
	free(buf);
	return NULL;
}

/* Window k (1..NET_WINDOWS) ends with message ceil(k * iters / NET_WINDOWS). */
static uint64_t window_boundary(uint64_t iters, uint64_t k)
{
	return (k * iters + NET_WINDOWS - 1) / NET_WINDOWS;
}

/* Marks the end of the window this message completes (iteration runs). */
static void note_window(struct bw_run *r, double now)
{
	unsigned long long n = atomic_fetch_add(&r->received, 1) + 1;
	if (!r->windows)
		return;
	uint64_t k = (uint64_t)n * NET_WINDOWS / r->iters;
	if (k < 1 || k > NET_WINDOWS || window_boundary(r->iters, k) != n) {
		k++;
		if (k > NET_WINDOWS || window_boundary(r->iters, k) != n)
			return;
	}
	pthread_mutex_lock(&r->m);
	r->window_end[k] = now;
	pthread_mutex_unlock(&r->m);
}

static bool message_ok(const uint8_t *buf, uint64_t size, uint64_t seq, const uint8_t *ref)
{
	uint64_t le = htole64(seq);
	if (memcmp(buf, &le, size < 8 ? size : 8))
		return false;
	return seq % CHECK_EVERY || size <= 8 || !memcmp(buf + 8, ref + 8, size - 8);
}

static void *receiver(void *arg)
{
	struct stream *s = arg;
	struct bw_run *r = s->run;
	uint8_t *buf = malloc(r->size), *ref = malloc(r->size);
	if (!buf || !ref) {
		s->err = -ENOMEM;
		free(buf);
		free(ref);
		return NULL;
	}
	fill_pattern(ref, r->size, s->index);
	for (uint64_t seq = 0;; seq++) {
		int e;
		if (seq == 0) {
			/* the clock starts with the first byte, not the first message */
			ssize_t n;
			do
				n = recv(s->fd, buf, r->size, 0);
			while (n < 0 && errno == EINTR);
			s->first = clock_now();
			e = n == 0 ? 1 : n < 0 ? (errno == EAGAIN ? -ETIMEDOUT : -errno)
					   : recv_full(s->fd, buf + n, r->size - (size_t)n, r->deadline);
			if (e == 1 && n > 0)
				e = -EPIPE;
		} else {
			e = recv_full(s->fd, buf, r->size, r->deadline);
		}
		if (e == 1)
			break;
		if (e < 0) {
			s->err = e;
			break;
		}
		double now = clock_now();
		s->last = now;
		s->msgs++;
		s->bytes += r->size;
		s->errors += !message_ok(buf, r->size, seq, ref);
		note_window(r, now);
		if (r->deadline > 0 && now > r->deadline) {
			s->err = -ETIMEDOUT;
			break;
		}
	}
	free(buf);
	free(ref);
	return NULL;
}

static const char *bw_error(int e)
{
	switch (e) {
	case -ETIMEDOUT: return "the deadline passed: the peer stopped sending or receiving";
	case -EPIPE: return "a stream ended in the middle of a message";
	case -ECONNRESET: return "the peer closed the connection";
	default: return strerror(-e);
	}
}

/* What the kernel may hold in the receive buffers of these streams (their
 * SO_RCVBUF, autotuning included). A receiver that reads data already
 * buffered spends no network time on it, so a slice of the run is timed
 * honestly only when it is much larger: NET_TCP_WINDOW_BUFFERS times this
 * (buffered data then inflates a slice's rate by at most 1/7). */
#define NET_TCP_WINDOW_BUFFERS 8
static uint64_t rcvbuf_bytes(const struct stream *st, int n)
{
	uint64_t sum = 0;
	for (int i = 0; i < n; i++) {
		int v = 0;
		socklen_t l = sizeof(v);
		if (getsockopt(st[i].fd, SOL_SOCKET, SO_RCVBUF, &v, &l) == 0 && v > 0)
			sum += (uint64_t)v;
	}
	return sum;
}

static void collect(struct stream *st, int n, struct bw_run *r, struct net_samples *rx)
{
	double first = 0, last = 0;
	memset(rx, 0, sizeof(*rx));
	for (int i = 0; i < n; i++) {
		if (!st[i].msgs)
			continue;
		rx->bytes += st[i].bytes;
		rx->msgs += st[i].msgs;
		rx->errors += st[i].errors;
		if (!first || st[i].first < first)
			first = st[i].first;
		if (st[i].last > last)
			last = st[i].last;
	}
	rx->seconds = last > first ? last - first : 0;
	/* windows exist only when every window filled (iteration runs), and
	 * each is large next to the socket buffers (above); else the peak is
	 * the average */
	r->window_end[0] = first;
	if (r->windows && rx->msgs == r->iters &&
	    rx->bytes / NET_WINDOWS >= NET_TCP_WINDOW_BUFFERS * rcvbuf_bytes(st, n)) {
		rx->n_windows = NET_WINDOWS;
		for (int w = 0; w < NET_WINDOWS; w++)
			rx->window_s[w] = r->window_end[w + 1] - r->window_end[w];
	}
}

int net_tcp_bw(const int *fds, int n, bool send, bool recv, uint64_t size, uint64_t iters, double duration,
	       double deadline, struct net_samples *rx, char **err)
{
	struct bw_run r = { .size = size, .iters = iters, .duration = duration, .deadline = deadline };
	struct stream *st = calloc((size_t)n * 2, sizeof(*st));
	pthread_t *th = calloc((size_t)n * 2, sizeof(*th));
	bool *started = calloc((size_t)n * 2, sizeof(*started));
	int ret = 0;

	if (!st || !th || !started || n < 1 || !size) {
		free(st);
		free(th);
		free(started);
		*err = xstrdup(n < 1 || !size ? "no stream or an empty message" : "out of memory");
		return n < 1 || !size ? -EINVAL : -ENOMEM;
	}
	pthread_mutex_init(&r.m, NULL);
	/* windows when the message count is known */
	r.windows = iters >= NET_WINDOWS && !duration;
	for (int i = 0; i < n; i++) {
		set_timeouts(fds[i], deadline);
		uint64_t share = iters / (uint64_t)n + ((uint64_t)i < iters % (uint64_t)n);
		st[2 * i] = (struct stream){ .run = &r, .fd = fds[i], .index = (uint32_t)i, .count = share };
		st[2 * i + 1] = st[2 * i];
		if (send)
			started[2 * i] = pthread_create(&th[2 * i], NULL, sender, &st[2 * i]) == 0;
		if (recv)
			started[2 * i + 1] = pthread_create(&th[2 * i + 1], NULL, receiver, &st[2 * i + 1]) == 0;
	}
	struct stream *rxs = calloc((size_t)n, sizeof(*rxs));
	for (int i = 0; i < 2 * n; i++) {
		if (started[i])
			pthread_join(th[i], NULL);
		else if ((i % 2 == 0 && send) || (i % 2 == 1 && recv))
			st[i].err = -EAGAIN; /* could not start the thread */
		if (st[i].err && !ret) {
			ret = st[i].err;
			*err = xasprintf("stream %d %s: %s", i / 2, i % 2 ? "receiving" : "sending", bw_error(ret));
			if (ret == -ETIMEDOUT) {
				/* what the stream saw: a slow peer, or a silent one */
				double t = (st[i].last > st[i].first ? st[i].last : clock_now()) - st[i].first;
				char *more = xasprintf("%s (%llu bytes in %.1f s before that: %.0f bytes/s)", *err,
						       (unsigned long long)st[i].bytes, t > 0 ? t : 0,
						       t > 0 ? (double)st[i].bytes / t : 0.0);
				free(*err);
				*err = more;
			}
		}
		if (i % 2 && rxs)
			rxs[i / 2] = st[i];
	}
	if (rxs)
		collect(rxs, n, &r, rx);
	pthread_mutex_destroy(&r.m);
	free(rxs);
	free(st);
	free(th);
	free(started);
	return ret;
}

/* ---- latency ---- */

int net_tcp_lat_client(int fd, uint64_t size, uint64_t iters, double duration, double deadline,
		       struct net_samples *out, char **err)
{
	/* -D keeps at most NET_LAT_MAX_SAMPLES samples (out->capped says so) */
	uint64_t warm = iters ? iters / 10 : 100, cap = iters ? iters : NET_LAT_MAX_SAMPLES;
	uint8_t *buf = malloc(size), *echo = malloc(size);
	double end = 0;
	int r = 0;

	memset(out, 0, sizeof(*out));
	out->lat_us = malloc((size_t)cap * sizeof(double));
	if (!buf || !echo || !out->lat_us) {
		free(buf);
		free(echo);
		*err = xstrdup("out of memory");
		return -ENOMEM;
	}
	if (warm < 10)
		warm = 10;
	set_timeouts(fd, deadline);
	fill_pattern(buf, size, 0);
	for (uint64_t i = 0; r == 0; i++) {
		bool measured = i >= warm;
		if (measured && !end && duration > 0)
			end = clock_now() + duration;
		if (measured && (duration > 0 ? clock_now() >= end || out->n_lat == cap : out->n_lat == iters)) {
			out->capped = duration > 0 && out->n_lat == cap && clock_now() < end;
			break;
		}
		put_seq(buf, size, i);
		double t0 = clock_now();
		r = send_full(fd, buf, size, deadline);
		if (r == 0)
			r = recv_full(fd, echo, size, deadline);
		double t1 = clock_now();
		if (r == 1)
			r = -ECONNRESET;
		if (r == 0 && measured) {
			out->lat_us[out->n_lat++] = (t1 - t0) * 1e6 / 2.0;
			out->bytes += size;
			out->msgs++;
		}
		if (r == 0 && memcmp(buf, echo, size))
			out->errors++;
		if (r == 0 && deadline > 0 && t1 > deadline)
			r = -ETIMEDOUT;
	}
	shutdown(fd, SHUT_WR);
	free(buf);
	free(echo);
	if (r < 0)
		*err = xasprintf("round trip %llu: %s", (unsigned long long)out->n_lat, bw_error(r));
	return r < 0 ? r : 0;
}

int net_tcp_lat_server(int fd, uint64_t size, double deadline, char **err)
{
	uint8_t *buf = malloc(size);
	int r;
	if (!buf) {
		*err = xstrdup("out of memory");
		return -ENOMEM;
	}
	set_timeouts(fd, deadline);
	while ((r = recv_full(fd, buf, size, deadline)) == 0) {
		r = send_full(fd, buf, size, deadline);
		if (r < 0)
			break;
		if (deadline > 0 && clock_now() > deadline) {
			r = -ETIMEDOUT;
			break;
		}
	}
	free(buf);
	if (r < 0) {
		*err = xasprintf("echoing: %s", bw_error(r));
		return r;
	}
	return 0;
}
