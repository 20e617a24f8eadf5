/*
 * Bounds-checked readers over byte buffers.  Every packet, wire message or
 * header is read through one of these: no raw offsets into received data.
 */
#ifndef VNET_BUF_H
#define VNET_BUF_H

#include <stddef.h>
#include <stdint.h>

struct rbuf {
	const uint8_t	*p;
	size_t		 len;
	size_t		 off;
};

static inline void
rbuf_init(struct rbuf *b, const void *p, size_t len)
{
	b->p = p;
	b->len = len;
	b->off = 0;
}

static inline size_t
rbuf_left(const struct rbuf *b)
{
	return b->len - b->off;
}

static inline int
rbuf_get_u8(struct rbuf *b, uint8_t *v)
{
	if (rbuf_left(b) < 1)
		return -1;
	*v = b->p[b->off++];
	return 0;
}

/* Network byte order. */
static inline int
rbuf_get_u16(struct rbuf *b, uint16_t *v)
{
	if (rbuf_left(b) < 2)
		return -1;
	*v = (uint16_t)(b->p[b->off] << 8 | b->p[b->off + 1]);
	b->off += 2;
	return 0;
}

static inline int
rbuf_get_u32(struct rbuf *b, uint32_t *v)
{
	if (rbuf_left(b) < 4)
		return -1;
	*v = (uint32_t)b->p[b->off] << 24 | (uint32_t)b->p[b->off + 1] << 16 |
	    (uint32_t)b->p[b->off + 2] << 8 | (uint32_t)b->p[b->off + 3];
	b->off += 4;
	return 0;
}

/* Points *v at the next n bytes (no copy) and steps over them. */
static inline int
rbuf_get_ptr(struct rbuf *b, size_t n, const uint8_t **v)
{
	if (rbuf_left(b) < n)
		return -1;
	*v = b->p + b->off;
	b->off += n;
	return 0;
}

static inline int
rbuf_skip(struct rbuf *b, size_t n)
{
	if (rbuf_left(b) < n)
		return -1;
	b->off += n;
	return 0;
}

/* Writers for headers we build ourselves into buffers of known size. */
static inline void
put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* The value of hex digit c, either case, or -1. */
static inline int
buf_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
