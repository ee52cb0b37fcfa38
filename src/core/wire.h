/* A little-endian cursor over a byte buffer, for the wire formats: the
 * job's frames (src/job/wire.c), the bench-net control protocol
 * (src/bench/net/proto.c) and the RDMA connection and control messages
 * (src/bench/net/rdma_wire.c).
 *
 * Integers are written least significant byte first whatever the host's
 * order, doubles as their IEEE 754 bits in a u64. A writer that runs out
 * of room sets `overflow` and writes nothing more; a reader asked for more
 * than is left sets `short_read`, reads nothing more and gives zeros. Both
 * flags are sticky, so a codec checks once, after its last field, and no
 * call ever touches a byte outside [p, p + len). */
#ifndef GPUREADY_WIRE_H
#define GPUREADY_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct wire_w {
	uint8_t *p;
	size_t len, off;
	bool overflow;
};

struct wire_r {
	const uint8_t *p;
	size_t len, off;
	bool short_read;
};

#define WIRE_W(buf, n) ((struct wire_w){ .p = (uint8_t *)(buf), .len = (n) })
#define WIRE_R(buf, n) ((struct wire_r){ .p = (const uint8_t *)(buf), .len = (n) })

/* ---- writing ---- */

/* The next n bytes to fill; NULL when n is 0, or when they do not fit
 * (then overflow is set). */
static inline uint8_t *wire_w_take(struct wire_w *w, size_t n)
{
	if (w->overflow || n > w->len - w->off) {
		w->overflow = true;
		return NULL;
	}
	if (!n)
		return NULL;
	uint8_t *at = w->p + w->off;
	w->off += n;
	return at;
}

/* The n low bytes of v, least significant first. */
static inline void wire_put_le(struct wire_w *w, uint64_t v, size_t n)
{
	uint8_t *at = wire_w_take(w, n);
	for (size_t i = 0; at && i < n; i++)
		at[i] = (uint8_t)(v >> (8 * i));
}

static inline void wire_put_u8(struct wire_w *w, uint8_t v) { wire_put_le(w, v, 1); }
static inline void wire_put_u16(struct wire_w *w, uint16_t v) { wire_put_le(w, v, 2); }
static inline void wire_put_u32(struct wire_w *w, uint32_t v) { wire_put_le(w, v, 4); }
static inline void wire_put_u64(struct wire_w *w, uint64_t v) { wire_put_le(w, v, 8); }

static inline void wire_put_f64(struct wire_w *w, double d)
{
	uint64_t v;
	memcpy(&v, &d, sizeof(v));
	wire_put_u64(w, v);
}

static inline void wire_put_bytes(struct wire_w *w, const void *src, size_t n)
{
	uint8_t *at = wire_w_take(w, n);
	if (at)
		memcpy(at, src, n);
}

static inline void wire_put_zeros(struct wire_w *w, size_t n)
{
	uint8_t *at = wire_w_take(w, n);
	if (at)
		memset(at, 0, n);
}

/* A fixed field of n bytes (n >= 1): s cut to n - 1 bytes, then zeros, so
 * it is always terminated; NULL writes zeros. */
static inline void wire_put_str(struct wire_w *w, const char *s, size_t n)
{
	uint8_t *at = wire_w_take(w, n);
	if (!at)
		return;
	memset(at, 0, n);
	if (s)
		memcpy(at, s, strnlen(s, n - 1));
}

/* ---- reading ---- */

/* The next n bytes; NULL when n is 0, or when fewer are left (then
 * short_read is set). */
static inline const uint8_t *wire_r_take(struct wire_r *r, size_t n)
{
	if (r->short_read || n > r->len - r->off) {
		r->short_read = true;
		return NULL;
	}
	if (!n)
		return NULL;
	const uint8_t *at = r->p + r->off;
	r->off += n;
	return at;
}

/* n bytes, least significant first; 0 on a short read. */
static inline uint64_t wire_get_le(struct wire_r *r, size_t n)
{
	const uint8_t *at = wire_r_take(r, n);
	uint64_t v = 0;
	for (size_t i = n; at && i-- > 0;)
		v = v << 8 | at[i];
	return v;
}

static inline uint8_t wire_get_u8(struct wire_r *r) { return (uint8_t)wire_get_le(r, 1); }
static inline uint16_t wire_get_u16(struct wire_r *r) { return (uint16_t)wire_get_le(r, 2); }
static inline uint32_t wire_get_u32(struct wire_r *r) { return (uint32_t)wire_get_le(r, 4); }
static inline uint64_t wire_get_u64(struct wire_r *r) { return wire_get_le(r, 8); }

static inline double wire_get_f64(struct wire_r *r)
{
	uint64_t v = wire_get_u64(r);
	double d;
	memcpy(&d, &v, sizeof(d));
	return d;
}

/* n bytes into out; zeros on a short read. */
static inline void wire_get_bytes(struct wire_r *r, void *out, size_t n)
{
	const uint8_t *at = wire_r_take(r, n);
	if (at)
		memcpy(out, at, n);
	else if (n)
		memset(out, 0, n);
}

static inline void wire_skip(struct wire_r *r, size_t n)
{
	(void)wire_r_take(r, n);
}

/* A fixed field of n bytes (n >= 1) into out[n], always terminated
 * there; true when the field held its own NUL (false on a short read). */
static inline bool wire_get_str(struct wire_r *r, char *out, size_t n)
{
	const uint8_t *at = wire_r_take(r, n);
	if (!at) {
		memset(out, 0, n);
		return false;
	}
	memcpy(out, at, n);
	out[n - 1] = '\0';
	return memchr(at, '\0', n) != NULL;
}

/* The bytes not read yet. */
static inline size_t wire_r_left(const struct wire_r *r)
{
	return r->short_read ? 0 : r->len - r->off;
}

#endif
