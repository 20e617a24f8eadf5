/*
 * join.c: the parsers of joining in one step (join.h): the line, the
 * CA's invitation file and the exchange's messages.  Each bad input is
 * refused with a reason; nothing here reads past what it was given.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "buf.h"
#include "join.h"
#include "stmt.h"

/* hex_decode: exactly 2*n hex digits of s into out. */
static int
hex_decode(const char *s, size_t slen, uint8_t *out, size_t n)
{
	size_t	i;
	int	hi, lo;

	if (slen != 2 * n)
		return -1;
	for (i = 0; i < n; i++) {
		if ((hi = buf_hexval((unsigned char)s[2 * i])) < 0 ||
		    (lo = buf_hexval((unsigned char)s[2 * i + 1])) < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

int
join_id_valid(const char *s, size_t len)
{
	size_t	i;

	if (len != JOIN_ID_HEX)
		return 0;
	for (i = 0; i < len; i++)
		if (buf_hexval((unsigned char)s[i]) < 0 || isupper((unsigned char)s[i]))
			return 0;
	return 1;
}

/* hostport_ok: HOST:PORT or [V6]:PORT, copied into host and port. */
static int
hostport_split(const char *s, size_t len, char *host, size_t hostlen,
    char *port, size_t portlen)
{
	const char	*colon, *h = s;
	size_t		 hl, pl, i;
	long		 pn;
	char		*end;

	if (len > 0 && s[0] == '[') {
		const char *rb = memchr(s, ']', len);

		if (rb == NULL || rb + 1 >= s + len || rb[1] != ':')
			return -1;
		h = s + 1;
		hl = (size_t)(rb - h);
		colon = rb + 1;
	} else {
		colon = NULL;
		for (i = 0; i < len; i++)
			if (s[i] == ':') {
				if (colon != NULL)
					return -1;
				colon = s + i;
			}
		if (colon == NULL)
			return -1;
		hl = (size_t)(colon - s);
	}
	pl = len - (size_t)(colon + 1 - s);
	if (hl == 0 || hl >= hostlen || pl == 0 || pl >= portlen)
		return -1;
	for (i = 0; i < hl; i++)
		if (!isalnum((unsigned char)h[i]) && strchr(".-:_", h[i]) == NULL)
			return -1;
	memcpy(host, h, hl);
	host[hl] = '\0';
	memcpy(port, colon + 1, pl);
	port[pl] = '\0';
	if (!isdigit((unsigned char)port[0]))
		return -1;
	pn = strtol(port, &end, 10);
	if (*end != '\0' || pn < 1 || pn > 65535)
		return -1;
	return 0;
}

int
join_line_parse(const char *s, struct join_line *l, char *err, size_t errlen)
{
	static const char	 pfx[] = "vnet://";
	const char		*p, *slash1, *slash2, *end;

	memset(l, 0, sizeof(*l));
	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	if ((size_t)(end - s) < sizeof(pfx) - 1 ||
	    strncmp(s, pfx, sizeof(pfx) - 1) != 0) {
		snprintf(err, errlen, "not an invitation line (it starts with "
		    "vnet://, as vnet-ca invite prints it)");
		return -1;
	}
	p = s + sizeof(pfx) - 1;
	if ((slash1 = memchr(p, '/', (size_t)(end - p))) == NULL ||
	    (slash2 = memchr(slash1 + 1, '/', (size_t)(end - slash1 - 1))) == NULL) {
		snprintf(err, errlen, "invitation line cut short (vnet://HOST:PORT/ID/SECRET)");
		return -1;
	}
	if (hostport_split(p, (size_t)(slash1 - p), l->host, sizeof(l->host),
	    l->port, sizeof(l->port)) == -1) {
		snprintf(err, errlen, "invitation line: invalid HOST:PORT");
		return -1;
	}
	if (!join_id_valid(slash1 + 1, (size_t)(slash2 - slash1 - 1))) {
		snprintf(err, errlen, "invitation line: invalid ID (%d hex digits)",
		    JOIN_ID_HEX);
		return -1;
	}
	memcpy(l->id, slash1 + 1, JOIN_ID_HEX);
	l->id[JOIN_ID_HEX] = '\0';
	if (hex_decode(slash2 + 1, (size_t)(end - slash2 - 1), l->secret,
	    JOIN_SECRET_LEN) == -1) {
		snprintf(err, errlen, "invitation line: invalid SECRET (%d hex "
		    "digits): was the line cut when it was copied?",
		    2 * JOIN_SECRET_LEN);
		return -1;
	}
	return 0;
}

void
join_psk(const uint8_t *secret, uint8_t *psk)
{
	unsigned int	len = JOIN_PSK_LEN;

	HMAC(EVP_sha256(), secret, JOIN_SECRET_LEN,
	    (const unsigned char *)JOIN_PSK_LABEL, strlen(JOIN_PSK_LABEL),
	    psk, &len);
}

/* copy_word: a value of at most cap-1 bytes, without NULs. */
static int
copy_word(char *dst, size_t cap, const char *v, size_t vlen)
{
	if (vlen == 0 || vlen >= cap || memchr(v, '\0', vlen) != NULL)
		return -1;
	memcpy(dst, v, vlen);
	dst[vlen] = '\0';
	return 0;
}

int
join_invite_parse(const char *s, size_t len, struct join_invite *iv,
    char *err, size_t errlen)
{
	const char	*p = s, *end = s + len, *nl, *sp;
	size_t		 klen, vlen;
	unsigned	 have = 0;
	int		 lineno = 0;
	char		 host[256], port[6], num[24], *e;
	long long	 t;

	memset(iv, 0, sizeof(*iv));
	while (p < end) {
		lineno++;
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		if (nl == p || *p == '#') {
			p = nl + (nl < end);
			continue;
		}
		if ((sp = memchr(p, ' ', (size_t)(nl - p))) == NULL) {
			snprintf(err, errlen, "line %d: expected KEY VALUE", lineno);
			return -1;
		}
		klen = (size_t)(sp - p);
		vlen = (size_t)(nl - sp - 1);
		sp++;
		if (klen == 4 && memcmp(p, "node", 4) == 0) {
			if (copy_word(iv->node, sizeof(iv->node), sp, vlen) == -1 ||
			    !stmt_valid_name(iv->node))
				goto bad;
			have |= 1;
		} else if (klen == 5 && memcmp(p, "proxy", 5) == 0) {
			if (copy_word(iv->proxy, sizeof(iv->proxy), sp, vlen) == -1 ||
			    !stmt_valid_name(iv->proxy))
				goto bad;
			have |= 2;
		} else if (klen == 7 && memcmp(p, "network", 7) == 0) {
			if (copy_word(iv->network, sizeof(iv->network), sp,
			    vlen) == -1 || !stmt_valid_name(iv->network))
				goto bad;
		} else if (klen == 4 && memcmp(p, "link", 4) == 0) {
			if (copy_word(iv->link, sizeof(iv->link), sp, vlen) == -1 ||
			    hostport_split(sp, vlen, host, sizeof(host), port,
			    sizeof(port)) == -1)
				goto bad;
			have |= 4;
		} else if (klen == 7 && memcmp(p, "expires", 7) == 0) {
			if (copy_word(num, sizeof(num), sp, vlen) == -1 ||
			    !isdigit((unsigned char)num[0]))
				goto bad;
			t = strtoll(num, &e, 10);
			if (*e != '\0' || t <= 0)
				goto bad;
			iv->expires = (time_t)t;
			have |= 8;
		} else if (klen == 3 && memcmp(p, "psk", 3) == 0) {
			if (hex_decode(sp, vlen, iv->psk, JOIN_PSK_LEN) == -1)
				goto bad;
			have |= 16;
		}
		/* Other keys (a note, who made it) are the operator's. */
		p = nl + (nl < end);
	}
	if (have != 31) {
		snprintf(err, errlen, "lacks one of node, proxy, link, expires, psk");
		return -1;
	}
	return 0;
bad:
	snprintf(err, errlen, "line %d: invalid value", lineno);
	return -1;
}

int
join_msg_parse(const uint8_t *buf, size_t len, struct join_msg *m, char *err,
    size_t errlen)
{
	struct rbuf	 b;
	struct join_field *f;
	size_t		 i, klen, vlen;
	uint8_t		 c;

	memset(m, 0, sizeof(*m));
	rbuf_init(&b, buf, len);
	while (rbuf_left(&b) > 0) {
		if (m->n == JOIN_FIELDS) {
			snprintf(err, errlen, "more than %d fields", JOIN_FIELDS);
			return -1;
		}
		f = &m->f[m->n];
		for (klen = 0;; klen++) {
			if (rbuf_get_u8(&b, &c) == -1)
				goto cut;
			if (c == ' ')
				break;
			if (klen == sizeof(f->key) - 1 || !(islower(c) || c == '-')) {
				snprintf(err, errlen, "field %d: invalid key", m->n + 1);
				return -1;
			}
			f->key[klen] = (char)c;
		}
		if (klen == 0) {
			snprintf(err, errlen, "field %d: empty key", m->n + 1);
			return -1;
		}
		for (vlen = 0, i = 0;; i++) {
			if (rbuf_get_u8(&b, &c) == -1)
				goto cut;
			if (c == '\n' && i > 0)
				break;
			if (!isdigit(c) || i == 6) {
				snprintf(err, errlen, "field %s: invalid length", f->key);
				return -1;
			}
			vlen = vlen * 10 + (size_t)(c - '0');
		}
		if (rbuf_left(&b) < vlen + 1)
			goto cut;
		f->val = b.p + b.off;
		f->len = vlen;
		b.off += vlen;
		if (rbuf_get_u8(&b, &c) == -1 || c != '\n') {
			snprintf(err, errlen, "field %s: no newline after its value", f->key);
			return -1;
		}
		for (i = 0; i < (size_t)m->n; i++)
			if (strcmp(m->f[i].key, f->key) == 0) {
				snprintf(err, errlen, "field %s twice", f->key);
				return -1;
			}
		m->n++;
	}
	return 0;
cut:
	snprintf(err, errlen, "message cut short");
	return -1;
}

const struct join_field *
join_msg_get(const struct join_msg *m, const char *key)
{
	int	i;

	for (i = 0; i < m->n; i++)
		if (strcmp(m->f[i].key, key) == 0)
			return &m->f[i];
	return NULL;
}

/* join_msg_str: field KEY as a string of printable characters. */
int
join_msg_str(const struct join_msg *m, const char *key, char *out, size_t cap)
{
	const struct join_field	*f = join_msg_get(m, key);
	size_t			 i;

	if (f == NULL || f->len >= cap)
		return -1;
	for (i = 0; i < f->len; i++)
		if (!isprint(f->val[i]))
			return -1;
	memcpy(out, f->val, f->len);
	out[f->len] = '\0';
	return 0;
}

/* join_msg_put: appends a field at off; the new length, or 0 if it does
 * not fit in cap. */
size_t
join_msg_put(uint8_t *out, size_t cap, size_t off, const char *key,
    const void *val, size_t len)
{
	int	n;

	if (off >= cap || len > 999999)
		return 0;
	n = snprintf((char *)out + off, cap - off, "%s %zu\n", key, len);
	if (n < 0 || (size_t)n >= cap - off || cap - off - (size_t)n < len + 1)
		return 0;
	off += (size_t)n;
	memcpy(out + off, val, len);
	off += len;
	out[off++] = '\n';
	return off;
}
