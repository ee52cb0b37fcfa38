/* Encoding, decoding and framing of the bench-net control protocol (see
 * proto.h). Decoders check the exact length first and every field's
 * range after, and say which field is wrong. */
#include "proto.h"
#include "core/tcp.h"
#include "core/strbuf.h"

#include <errno.h>
#include <endian.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A cursor over a fixed buffer. */
struct cur {
	uint8_t *p;
	const uint8_t *r;
};

static void put32(struct cur *c, uint32_t v)
{
	v = htole32(v);
	memcpy(c->p, &v, 4);
	c->p += 4;
}

static void put64(struct cur *c, uint64_t v)
{
	v = htole64(v);
	memcpy(c->p, &v, 8);
	c->p += 8;
}

static void putd(struct cur *c, double d)
{
	uint64_t v;
	memcpy(&v, &d, 8);
	put64(c, v);
}

static void putstr(struct cur *c, const char *s, size_t n)
{
	memset(c->p, 0, n);
	if (s)
		memcpy(c->p, s, strnlen(s, n - 1));
	c->p += n;
}

static uint32_t get32(struct cur *c)
{
	uint32_t v;
	memcpy(&v, c->r, 4);
	c->r += 4;
	return le32toh(v);
}

static uint64_t get64(struct cur *c)
{
	uint64_t v;
	memcpy(&v, c->r, 8);
	c->r += 8;
	return le64toh(v);
}

static double getd(struct cur *c)
{
	uint64_t v = get64(c);
	double d;
	memcpy(&d, &v, 8);
	return d;
}

/* A fixed-size string field: must be NUL-terminated inside it. */
static bool getstr(struct cur *c, char *out, size_t n)
{
	bool ok = memchr(c->r, '\0', n) != NULL;
	memcpy(out, c->r, n);
	out[n - 1] = '\0';
	c->r += n;
	return ok;
}

static int bad(char *why, size_t len, const char *what)
{
	snprintf(why, len, "%s", what);
	return -EPROTO;
}

static int check_len(size_t got, size_t want, const char *what, char *why, size_t whylen)
{
	if (got == want)
		return 0;
	snprintf(why, whylen, "%s of %zu bytes where %zu are expected", what, got, want);
	return -EPROTO;
}

void net_hello_encode(const struct net_hello *h, uint8_t out[NET_HELLO_LEN])
{
	struct cur c = { .p = out };
	put32(&c, h->version);
	put32(&c, (uint32_t)h->p.test);
	put64(&c, h->p.size);
	*c.p++ = h->p.all;
	*c.p++ = h->p.bidir;
	*c.p++ = 0;
	*c.p++ = 0;
	put64(&c, h->p.iters);
	putd(&c, h->p.duration);
	put32(&c, (uint32_t)h->p.qps);
	put32(&c, (uint32_t)h->p.mtu);
	put32(&c, (uint32_t)h->p.tclass);
	put32(&c, (uint32_t)h->p.sl);
	putstr(&c, h->host, sizeof(h->host));
}

int net_hello_decode(const uint8_t *buf, size_t len, struct net_hello *h, char *why, size_t whylen)
{
	struct cur c = { .r = buf };
	if (len >= 4) {
		uint32_t v;
		memcpy(&v, buf, 4);
		v = le32toh(v);
		if (v != NET_PROTO_VERSION) {
			snprintf(why, whylen, "the client speaks protocol version %u, this server %u: run the same "
					      "gpuready version on both ends", v, NET_PROTO_VERSION);
			return -EPROTO;
		}
	}
	if (check_len(len, NET_HELLO_LEN, "a HELLO", why, whylen))
		return -EPROTO;
	memset(h, 0, sizeof(*h));
	h->version = get32(&c);
	uint32_t test = get32(&c);
	h->p.size = get64(&c);
	uint8_t all = *c.r++, bidir = *c.r++;
	c.r += 2;
	h->p.iters = get64(&c);
	h->p.duration = getd(&c);
	uint32_t qps = get32(&c), mtu = get32(&c), tclass = get32(&c), sl = get32(&c);
	if (!getstr(&c, h->host, sizeof(h->host)))
		return bad(why, whylen, "HELLO: the host name is not terminated");
	if (test >= NET__COUNT)
		return bad(why, whylen, "HELLO: unknown test");
	if (all > 1 || bidir > 1)
		return bad(why, whylen, "HELLO: a flag is neither 0 nor 1");
	if (!isfinite(h->p.duration))
		return bad(why, whylen, "HELLO: the duration is not a number");
	if (qps > 1024 || mtu > 65536 || sl > 15 || ((int32_t)tclass < -1 || (int32_t)tclass > 255))
		return bad(why, whylen, "HELLO: a QP count, MTU, SL or traffic class out of range");
	h->p.test = (enum net_test)test;
	h->p.all = all;
	h->p.bidir = bidir;
	h->p.qps = (int)qps;
	h->p.mtu = (int)mtu;
	h->p.tclass = (int32_t)tclass;
	h->p.sl = (int)sl;
	return 0;
}

void net_accept_encode(const struct net_accept *a, uint8_t out[NET_ACCEPT_LEN])
{
	struct cur c = { .p = out };
	put32(&c, a->version);
	put64(&c, a->token);
	putstr(&c, a->host, sizeof(a->host));
	putstr(&c, a->link, sizeof(a->link));
	putd(&c, a->link_gbps);
}

int net_accept_decode(const uint8_t *buf, size_t len, struct net_accept *a, char *why, size_t whylen)
{
	struct cur c = { .r = buf };
	if (check_len(len, NET_ACCEPT_LEN, "an ACCEPT", why, whylen))
		return -EPROTO;
	a->version = get32(&c);
	a->token = get64(&c);
	if (!getstr(&c, a->host, sizeof(a->host)) || !getstr(&c, a->link, sizeof(a->link)))
		return bad(why, whylen, "ACCEPT: a name is not terminated");
	a->link_gbps = getd(&c);
	if (a->version != NET_PROTO_VERSION)
		return bad(why, whylen, "ACCEPT: another protocol version");
	if (!isfinite(a->link_gbps) || a->link_gbps < 0)
		return bad(why, whylen, "ACCEPT: the link rate is not a number");
	return 0;
}

void net_start_encode(const struct net_start *s, uint8_t out[NET_START_LEN])
{
	struct cur c = { .p = out };
	put64(&c, s->size);
	put64(&c, s->iters);
	putd(&c, s->duration);
}

int net_start_decode(const uint8_t *buf, size_t len, struct net_start *s, char *why, size_t whylen)
{
	struct cur c = { .r = buf };
	if (check_len(len, NET_START_LEN, "a START", why, whylen))
		return -EPROTO;
	s->size = get64(&c);
	s->iters = get64(&c);
	s->duration = getd(&c);
	if (s->size == 0 || s->size > (1ull << 30))
		return bad(why, whylen, "START: a message size of 0 or above 1 GiB");
	if (!isfinite(s->duration) || s->duration < 0 || s->duration > 3600)
		return bad(why, whylen, "START: a duration out of range");
	if (!s->iters && s->duration <= 0)
		return bad(why, whylen, "START: neither iterations nor a duration");
	return 0;
}

void net_result_encode(const struct net_samples *s, uint8_t out[NET_RESULT_LEN])
{
	struct cur c = { .p = out };
	put64(&c, s->bytes);
	put64(&c, s->msgs);
	putd(&c, s->seconds);
	put64(&c, s->errors);
	for (int i = 0; i < NET_WINDOWS; i++)
		putd(&c, i < s->n_windows ? s->window_s[i] : 0);
	put32(&c, (uint32_t)s->n_windows);
}

int net_result_decode(const uint8_t *buf, size_t len, struct net_samples *s, char *why, size_t whylen)
{
	struct cur c = { .r = buf };
	if (check_len(len, NET_RESULT_LEN, "a RESULT", why, whylen))
		return -EPROTO;
	memset(s, 0, sizeof(*s));
	s->bytes = get64(&c);
	s->msgs = get64(&c);
	s->seconds = getd(&c);
	s->errors = get64(&c);
	for (int i = 0; i < NET_WINDOWS; i++)
		s->window_s[i] = getd(&c);
	uint32_t n = get32(&c);
	if (n > NET_WINDOWS || !isfinite(s->seconds) || s->seconds < 0)
		return bad(why, whylen, "RESULT: a time or window count out of range");
	for (int i = 0; i < NET_WINDOWS; i++)
		if (!isfinite(s->window_s[i]) || s->window_s[i] < 0)
			return bad(why, whylen, "RESULT: a window time out of range");
	s->n_windows = (int)n;
	return 0;
}

void net_data_hello_encode(const struct net_data_hello *d, uint8_t out[NET_DATA_HELLO_LEN])
{
	struct cur c = { .p = out };
	put64(&c, d->token);
	put32(&c, d->stream);
	put32(&c, d->nstreams);
}

int net_data_hello_decode(const uint8_t *buf, size_t len, struct net_data_hello *d, char *why, size_t whylen)
{
	struct cur c = { .r = buf };
	if (check_len(len, NET_DATA_HELLO_LEN, "a data connection's hello", why, whylen))
		return -EPROTO;
	d->token = get64(&c);
	d->stream = get32(&c);
	d->nstreams = get32(&c);
	if (d->nstreams == 0 || d->nstreams > 64 || d->stream >= d->nstreams)
		return bad(why, whylen, "a data connection with a stream number out of range");
	return 0;
}

/* ---- framing ---- */

int net_msg_send(int fd, uint32_t type, const void *payload, size_t len, double deadline)
{
	uint32_t h[3] = { htole32(NET_PROTO_MAGIC), htole32(type), htole32((uint32_t)len) };
	if (len > NET_MSG_MAX)
		return -EMSGSIZE;
	int r = tcp_write_all(fd, h, sizeof(h), deadline);
	return r == 0 && len ? tcp_write_all(fd, payload, len, deadline) : r;
}

int net_msg_recv(int fd, uint32_t *type, uint8_t **payload, size_t *len, size_t max, double deadline)
{
	uint32_t h[3];
	int r = tcp_read_all(fd, h, sizeof(h), deadline);
	if (r < 0)
		return r;
	if (le32toh(h[0]) != NET_PROTO_MAGIC)
		return -EPROTO;
	size_t n = le32toh(h[2]);
	if (n > max || n > NET_MSG_MAX)
		return -EMSGSIZE;
	uint8_t *p = malloc(n + 1);
	if (!p)
		return -ENOMEM;
	r = tcp_read_all(fd, p, n, deadline);
	if (r < 0) {
		free(p);
		return r;
	}
	p[n] = '\0';
	*type = le32toh(h[1]);
	*payload = p;
	*len = n;
	return 0;
}

int net_msg_expect(int fd, uint32_t want, uint8_t **payload, size_t *len, double deadline, char *why,
		   size_t whylen)
{
	uint32_t type;
	int r = net_msg_recv(fd, &type, payload, len, NET_MSG_MAX, deadline);
	if (r < 0) {
		snprintf(why, whylen, "%s", r == -ETIMEDOUT ? "the peer said nothing by the deadline"
					    : r == -ECONNRESET ? "the peer closed the connection"
					    : r == -EPROTO ? "the peer does not speak gpuready's protocol"
					    : r == -EMSGSIZE ? "the peer sent an oversized message"
							     : strerror(-r));
		return r;
	}
	if (type == want)
		return 0;
	if (type == NETMSG_ERROR || type == NETMSG_REFUSE)
		snprintf(why, whylen, "%s", (char *)*payload);
	else
		snprintf(why, whylen, "the peer sent message type %u where %u was expected", type, want);
	free(*payload);
	*payload = NULL;
	return type == NETMSG_ERROR || type == NETMSG_REFUSE ? -ECONNABORTED : -EPROTO;
}
