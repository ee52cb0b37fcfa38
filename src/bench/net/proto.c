/* Encoding, decoding and framing of the bench-net control protocol (see
 * proto.h). Decoders check the exact length first and every field's
 * range after, and say which field is wrong. */
#include "proto.h"
#include "core/tcp.h"
#include "core/strbuf.h"
#include "core/parse.h"
#include "core/wire.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sets *err to what and returns -EPROTO. */
static int bad(char **err, const char *what)
{
	*err = xstrdup(what);
	return -EPROTO;
}

static int check_len(size_t got, size_t want, const char *what, char **err)
{
	if (got == want)
		return 0;
	*err = xasprintf("%s of %zu bytes where %zu are expected", what, got, want);
	return -EPROTO;
}

void net_hello_encode(const struct net_hello *h, uint8_t out[NET_HELLO_LEN])
{
	struct wire_w w = WIRE_W(out, NET_HELLO_LEN);
	wire_put_u32(&w, h->version);
	wire_put_u32(&w, (uint32_t)h->p.test);
	wire_put_u64(&w, h->p.size);
	wire_put_u8(&w, h->p.all);
	wire_put_u8(&w, h->p.bidir);
	wire_put_u8(&w, h->p.warm_up);
	wire_put_zeros(&w, 1);
	wire_put_u64(&w, h->p.iters);
	wire_put_f64(&w, h->p.duration);
	wire_put_u32(&w, (uint32_t)h->p.qps);
	wire_put_u32(&w, (uint32_t)h->p.mtu);
	wire_put_u32(&w, (uint32_t)h->p.tclass);
	wire_put_u32(&w, (uint32_t)h->p.sl);
	wire_put_str(&w, h->host, sizeof(h->host));
	wire_put_u32(&w, h->flags);
	wire_put_bytes(&w, h->nonce, sizeof(h->nonce));
}

int net_hello_decode(const uint8_t *buf, size_t len, struct net_hello *h, char **err)
{
	struct wire_r r = WIRE_R(buf, len);
	uint32_t v = wire_get_u32(&r);
	if (!r.short_read && v != NET_PROTO_VERSION) {
		*err = xasprintf("the client speaks protocol version %u, this server %u: "
				 "run the same gpuready version on both ends", v, NET_PROTO_VERSION);
		return -EPROTO;
	}
	if (check_len(len, NET_HELLO_LEN, "a HELLO", err))
		return -EPROTO;
	memset(h, 0, sizeof(*h));
	h->version = v;
	uint32_t test = wire_get_u32(&r);
	h->p.size = wire_get_u64(&r);
	uint8_t all = wire_get_u8(&r), bidir = wire_get_u8(&r), warm_up = wire_get_u8(&r);
	wire_skip(&r, 1);
	h->p.iters = wire_get_u64(&r);
	h->p.duration = wire_get_f64(&r);
	uint32_t qps = wire_get_u32(&r), mtu = wire_get_u32(&r), tclass = wire_get_u32(&r), sl = wire_get_u32(&r);
	if (!wire_get_str(&r, h->host, sizeof(h->host)))
		return bad(err, "HELLO: the host name is not terminated");
	h->flags = wire_get_u32(&r);
	wire_get_bytes(&r, h->nonce, sizeof(h->nonce));
	if (test >= NET__COUNT)
		return bad(err, "HELLO: unknown test");
	if (all > 1 || bidir > 1 || warm_up > 1)
		return bad(err, "HELLO: a flag is neither 0 nor 1");
	if (!isfinite(h->p.duration))
		return bad(err, "HELLO: the duration is not a number");
	if (qps > 1024 || mtu > 65536 || sl > 15 || ((int32_t)tclass < -1 || (int32_t)tclass > 255))
		return bad(err, "HELLO: a QP count, MTU, SL or traffic class out of range");
	h->p.test = (enum net_test)test;
	h->p.all = all;
	h->p.bidir = bidir;
	h->p.warm_up = warm_up;
	h->p.qps = (int)qps;
	h->p.mtu = (int)mtu;
	h->p.tclass = (int32_t)tclass;
	h->p.sl = (int)sl;
	return 0;
}

void net_accept_encode(const struct net_accept *a, uint8_t out[NET_ACCEPT_LEN])
{
	struct wire_w w = WIRE_W(out, NET_ACCEPT_LEN);
	wire_put_u32(&w, a->version);
	wire_put_u64(&w, a->token);
	wire_put_str(&w, a->host, sizeof(a->host));
	wire_put_str(&w, a->link, sizeof(a->link));
	wire_put_f64(&w, a->link_gbps);
}

int net_accept_decode(const uint8_t *buf, size_t len, struct net_accept *a, char **err)
{
	struct wire_r r = WIRE_R(buf, len);
	if (check_len(len, NET_ACCEPT_LEN, "an ACCEPT", err))
		return -EPROTO;
	a->version = wire_get_u32(&r);
	a->token = wire_get_u64(&r);
	if (!wire_get_str(&r, a->host, sizeof(a->host)) || !wire_get_str(&r, a->link, sizeof(a->link)))
		return bad(err, "ACCEPT: a name is not terminated");
	a->link_gbps = wire_get_f64(&r);
	if (a->version != NET_PROTO_VERSION)
		return bad(err, "ACCEPT: another protocol version");
	if (!isfinite(a->link_gbps) || a->link_gbps < 0)
		return bad(err, "ACCEPT: the link rate is not a number");
	return 0;
}

void net_start_encode(const struct net_start *s, uint8_t out[NET_START_LEN])
{
	struct wire_w w = WIRE_W(out, NET_START_LEN);
	wire_put_u64(&w, s->size);
	wire_put_u64(&w, s->iters);
	wire_put_f64(&w, s->duration);
}

int net_start_decode(const uint8_t *buf, size_t len, struct net_start *s, char **err)
{
	struct wire_r r = WIRE_R(buf, len);
	if (check_len(len, NET_START_LEN, "a START", err))
		return -EPROTO;
	s->size = wire_get_u64(&r);
	s->iters = wire_get_u64(&r);
	s->duration = wire_get_f64(&r);
	if (s->size == 0 || s->size > (1ull << 30))
		return bad(err, "START: a message size of 0 or above 1 GiB");
	if (!isfinite(s->duration) || s->duration < 0 || s->duration > 3600)
		return bad(err, "START: a duration out of range");
	if (!s->iters && s->duration <= 0)
		return bad(err, "START: neither iterations nor a duration");
	return 0;
}

void net_result_encode(const struct net_samples *s, uint8_t out[NET_RESULT_LEN])
{
	struct wire_w w = WIRE_W(out, NET_RESULT_LEN);
	wire_put_u64(&w, s->bytes);
	wire_put_u64(&w, s->msgs);
	wire_put_f64(&w, s->seconds);
	wire_put_u64(&w, s->errors);
	for (int i = 0; i < NET_WINDOWS; i++)
		wire_put_f64(&w, i < s->n_windows ? s->window_s[i] : 0);
	wire_put_u32(&w, (uint32_t)s->n_windows);
}

int net_result_decode(const uint8_t *buf, size_t len, struct net_samples *s, char **err)
{
	struct wire_r r = WIRE_R(buf, len);
	if (check_len(len, NET_RESULT_LEN, "a RESULT", err))
		return -EPROTO;
	memset(s, 0, sizeof(*s));
	s->bytes = wire_get_u64(&r);
	s->msgs = wire_get_u64(&r);
	s->seconds = wire_get_f64(&r);
	s->errors = wire_get_u64(&r);
	for (int i = 0; i < NET_WINDOWS; i++)
		s->window_s[i] = wire_get_f64(&r);
	uint32_t n = wire_get_u32(&r);
	if (n > NET_WINDOWS || !isfinite(s->seconds) || s->seconds < 0)
		return bad(err, "RESULT: a time or window count out of range");
	for (int i = 0; i < NET_WINDOWS; i++)
		if (!isfinite(s->window_s[i]) || s->window_s[i] < 0)
			return bad(err, "RESULT: a window time out of range");
	s->n_windows = (int)n;
	return 0;
}

void net_data_hello_encode(const struct net_data_hello *d, uint8_t out[NET_DATA_HELLO_LEN])
{
	struct wire_w w = WIRE_W(out, NET_DATA_HELLO_LEN);
	wire_put_u64(&w, d->token);
	wire_put_u32(&w, d->stream);
	wire_put_u32(&w, d->nstreams);
}

int net_data_hello_decode(const uint8_t *buf, size_t len, struct net_data_hello *d, char **err)
{
	struct wire_r r = WIRE_R(buf, len);
	if (check_len(len, NET_DATA_HELLO_LEN, "a data connection's hello", err))
		return -EPROTO;
	d->token = wire_get_u64(&r);
	d->stream = wire_get_u32(&r);
	d->nstreams = wire_get_u32(&r);
	if (d->nstreams == 0 || d->nstreams > 64 || d->stream >= d->nstreams)
		return bad(err, "a data connection with a stream number out of range");
	return 0;
}

/* ---- framing ---- */

/* The most of a peer's ERROR or REFUSE text that is kept. */
#define NET_PEER_TEXT_MAX 255

int net_msg_send(int fd, uint32_t type, const void *payload, size_t len, double deadline)
{
	uint8_t h[NET_FRAME_HDR];
	struct wire_w w = WIRE_W(h, sizeof(h));
	if (len > NET_MSG_MAX)
		return -EMSGSIZE;
	wire_put_u32(&w, NET_PROTO_MAGIC);
	wire_put_u32(&w, type);
	wire_put_u32(&w, (uint32_t)len);
	int r = tcp_write_all(fd, h, sizeof(h), deadline);
	return r == 0 && len ? tcp_write_all(fd, payload, len, deadline) : r;
}

int net_frame_hdr_decode(const uint8_t h[NET_FRAME_HDR], uint32_t *type, size_t *len)
{
	struct wire_r rd = WIRE_R(h, NET_FRAME_HDR);
	uint32_t magic = wire_get_u32(&rd);
	*type = wire_get_u32(&rd);
	*len = wire_get_u32(&rd);
	return magic == NET_PROTO_MAGIC ? 0 : -EPROTO;
}

int net_msg_recv(int fd, uint32_t *type, uint8_t **payload, size_t *len, size_t max, double deadline)
{
	uint8_t h[NET_FRAME_HDR];
	int r = tcp_read_all(fd, h, sizeof(h), deadline);
	if (r < 0)
		return r;
	uint32_t t;
	size_t n;
	if (net_frame_hdr_decode(h, &t, &n) < 0)
		return -EPROTO;
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
	*type = t;
	*payload = p;
	*len = n;
	return 0;
}

int net_msg_expect(int fd, uint32_t want, uint8_t **payload, size_t *len, double deadline, char **err)
{
	uint32_t type;
	int r = net_msg_recv(fd, &type, payload, len, NET_MSG_MAX, deadline);
	if (r < 0) {
		*err = xstrdup(r == -ETIMEDOUT ? "the peer said nothing by the deadline"
			       : r == -ECONNRESET ? "the peer closed the connection"
			       : r == -EPROTO ? "the peer does not speak gpuready's protocol"
			       : r == -EMSGSIZE ? "the peer sent an oversized message"
						: strerror(-r));
		return r;
	}
	if (type == want)
		return 0;
	if (type == NETMSG_ERROR || type == NETMSG_REFUSE)
		*err = str_printable(xasprintf("%.*s", NET_PEER_TEXT_MAX, (char *)*payload), false);
	else
		*err = xasprintf("the peer sent message type %u where %u was expected", type, want);
	free(*payload);
	*payload = NULL;
	return type == NETMSG_ERROR || type == NETMSG_REFUSE ? -ECONNABORTED : -EPROTO;
}
