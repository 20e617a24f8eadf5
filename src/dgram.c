#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "buf.h"
#include "dgram.h"
#include "wire.h"

struct dgram_key {
	uint32_t		 epoch;
	EVP_CIPHER_CTX		*ctx;		/* NULL: plain */
	uint8_t			 iv[DGRAM_IV_LEN];
	uint8_t			 tag[DGRAM_TAG_LEN];	/* plain: the secret */
	uint64_t		 next;		/* tx: the next counter */
	uint64_t		 born;		/* ms */
	struct dgram_replay	 rw;		/* rx */
};

static void
put_u64(uint8_t *p, uint64_t v)
{
	put_u32(p, (uint32_t)(v >> 32));
	put_u32(p + 4, (uint32_t)v);
}

static uint64_t
le64(const uint8_t *p)
{
	uint64_t	 v = 0;
	int		 i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

#define ROTL(x, b)	(uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND do {							\
	v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);	\
	v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;				\
	v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;				\
	v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);	\
} while (0)

/*
 * SipHash-2-4 of a header (two 64-bit words) under a 128-bit key: a plain
 * link's tag, so that no one off the path can forge a header (an index, a
 * counter) without the secret, at the cost of a few rounds.
 */
static uint64_t
siphash_hdr(const uint8_t key[16], const uint8_t hdr[DGRAM_HDR_LEN])
{
	uint64_t	 k0 = le64(key), k1 = le64(key + 8), m, b;
	uint64_t	 v0 = 0x736f6d6570736575ULL ^ k0;
	uint64_t	 v1 = 0x646f72616e646f6dULL ^ k1;
	uint64_t	 v2 = 0x6c7967656e657261ULL ^ k0;
	uint64_t	 v3 = 0x7465646279746573ULL ^ k1;
	int		 i;

	for (i = 0; i < 2; i++) {
		m = le64(hdr + 8 * i);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	b = (uint64_t)DGRAM_HDR_LEN << 56;
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* The plain tag: two SipHashes of the header, under the two key halves. */
static void
plain_tag(const struct dgram_key *k, const uint8_t *hdr,
    uint8_t out[DGRAM_TAG_LEN])
{
	uint8_t		 k2[16];
	uint64_t	 a, b;
	int		 i;

	memcpy(k2, k->tag + 8, 8);
	memcpy(k2 + 8, k->tag, 8);
	a = siphash_hdr(k->tag, hdr);
	b = siphash_hdr(k2, hdr);
	for (i = 0; i < 8; i++) {
		out[i] = (uint8_t)(a >> (8 * i));
		out[8 + i] = (uint8_t)(b >> (8 * i));
	}
}

int
dgram_hdr_decode(const uint8_t *p, size_t n, struct dgram_hdr *h)
{
	struct rbuf	 b;
	uint16_t	 zero;
	uint32_t	 hi, lo;

	rbuf_init(&b, p, n);
	if (rbuf_get_u8(&b, &h->type) == -1 ||
	    rbuf_get_u8(&b, &h->key) == -1 ||
	    rbuf_get_u16(&b, &zero) == -1 ||
	    rbuf_get_u32(&b, &h->receiver) == -1 ||
	    rbuf_get_u32(&b, &hi) == -1 || rbuf_get_u32(&b, &lo) == -1)
		return -1;
	h->counter = (uint64_t)hi << 32 | lo;
	if (zero != 0 || h->receiver == 0 || h->type < DGRAM_DATA ||
	    h->type > DGRAM_LIVE)
		return -1;
	return 0;
}

void
dgram_hdr_encode(uint8_t out[DGRAM_HDR_LEN], const struct dgram_hdr *h)
{
	out[0] = h->type;
	out[1] = h->key;
	out[2] = out[3] = 0;
	put_u32(out + 4, h->receiver);
	put_u64(out + 8, h->counter);
}

uint32_t
dgram_receiver(const uint8_t *p, size_t n)
{
	struct dgram_hdr	 h;

	return dgram_hdr_decode(p, n, &h) == 0 ? h.receiver : 0;
}

void
dgram_replay_init(struct dgram_replay *r)
{
	memset(r, 0, sizeof(*r));
}

enum dgram_seen
dgram_replay_check(const struct dgram_replay *r, uint64_t ctr)
{
	if (ctr >= r->top)
		return DGRAM_NEW;
	if (r->top - ctr > DGRAM_REPLAY_WINDOW)
		return DGRAM_REPLAYED;
	if (r->bits[(ctr >> 6) % DGRAM_REPLAY_BLOCKS] & (1ULL << (ctr & 63)))
		return DGRAM_REPLAYED;
	return DGRAM_LATE;
}

uint64_t
dgram_replay_mark(struct dgram_replay *r, uint64_t ctr)
{
	uint64_t	 from, to, b, gap = 0;

	if (ctr >= r->top) {
		/* The blocks the window moves onto held older counters. */
		from = r->top == 0 ? 0 : ((r->top - 1) >> 6) + 1;
		to = ctr >> 6;
		if (to >= from && to - from >= DGRAM_REPLAY_BLOCKS)
			memset(r->bits, 0, sizeof(r->bits));
		else
			for (b = from; b <= to && to >= from; b++)
				r->bits[b % DGRAM_REPLAY_BLOCKS] = 0;
		gap = ctr - r->top;
		r->top = ctr + 1;
	}
	r->bits[(ctr >> 6) % DGRAM_REPLAY_BLOCKS] |= 1ULL << (ctr & 63);
	return gap;
}

size_t
dgram_key_len(enum dgram_aead a)
{
	switch (a) {
	case DGRAM_AES128GCM:
		return 16;
	case DGRAM_AES256GCM:
	case DGRAM_CHACHA20:
		return 32;
	case DGRAM_PLAIN:
		break;
	}
	return DGRAM_TAG_LEN;
}

const char *
dgram_aead_name(enum dgram_aead a)
{
	switch (a) {
	case DGRAM_AES128GCM:
		return "AES-128-GCM";
	case DGRAM_AES256GCM:
		return "AES-256-GCM";
	case DGRAM_CHACHA20:
		return "ChaCha20-Poly1305";
	case DGRAM_PLAIN:
		break;
	}
	return "none";
}

static const EVP_CIPHER *
dgram_cipher(enum dgram_aead a)
{
	switch (a) {
	case DGRAM_AES128GCM:
		return EVP_aes_128_gcm();
	case DGRAM_AES256GCM:
		return EVP_aes_256_gcm();
	case DGRAM_CHACHA20:
		return EVP_chacha20_poly1305();
	case DGRAM_PLAIN:
		break;
	}
	return NULL;
}

static void
dgram_key_free(struct dgram_key *k)
{
	if (k == NULL)
		return;
	EVP_CIPHER_CTX_free(k->ctx);
	OPENSSL_cleanse(k, sizeof(*k));
	free(k);
}

static struct dgram_key *
dgram_key_new(struct dgram *dg, uint32_t epoch, int tx, uint64_t now)
{
	struct dgram_key	*k;
	uint8_t			 s[DGRAM_SECRET_LEN];
	size_t			 klen = dgram_key_len(dg->aead);
	const EVP_CIPHER	*ci = dgram_cipher(dg->aead);

	if ((k = calloc(1, sizeof(*k))) == NULL)
		return NULL;
	if (dg->src.secret(dg->src.arg, epoch, tx, s) == -1)
		goto fail;
	k->epoch = epoch;
	k->born = now;
	memcpy(k->iv, s + DGRAM_KEY_MAX, DGRAM_IV_LEN);
	if (ci == NULL)
		memcpy(k->tag, s, DGRAM_TAG_LEN);
	else if ((k->ctx = EVP_CIPHER_CTX_new()) == NULL ||
	    EVP_CipherInit_ex(k->ctx, ci, NULL, NULL, NULL, tx) != 1 ||
	    (size_t)EVP_CIPHER_CTX_key_length(k->ctx) != klen ||
	    EVP_CIPHER_CTX_ctrl(k->ctx, EVP_CTRL_AEAD_SET_IVLEN, DGRAM_IV_LEN,
	    NULL) != 1 ||
	    EVP_CipherInit_ex(k->ctx, NULL, NULL, s, NULL, tx) != 1)
		goto fail;
	OPENSSL_cleanse(s, sizeof(s));
	return k;
 fail:
	OPENSSL_cleanse(s, sizeof(s));
	dgram_key_free(k);
	return NULL;
}

int
dgram_init(struct dgram *dg, enum dgram_aead aead, uint32_t local,
    uint32_t remote, const struct dgram_keysrc *src, uint64_t now)
{
	memset(dg, 0, sizeof(*dg));
	dg->aead = aead;
	dg->local = local;
	dg->remote = remote;
	dg->src = *src;
	dg->rekey_ms = DGRAM_REKEY_MS;
	dg->rekey_packets = DGRAM_REKEY_PACKETS;
	if ((dg->tx = dgram_key_new(dg, 0, 1, now)) == NULL ||
	    (dg->rx[1] = dgram_key_new(dg, 0, 0, now)) == NULL ||
	    (dg->rx[2] = dgram_key_new(dg, 1, 0, now)) == NULL) {
		dgram_free(dg);
		return -1;
	}
	return 0;
}

void
dgram_free(struct dgram *dg)
{
	size_t	 i;

	dgram_key_free(dg->tx);
	dg->tx = NULL;
	for (i = 0; i < 3; i++) {
		dgram_key_free(dg->rx[i]);
		dg->rx[i] = NULL;
	}
}

void
dgram_tx_confirm(struct dgram *dg, uint32_t epoch)
{
	if (dg->tx != NULL && epoch <= dg->tx->epoch && epoch > dg->confirmed)
		dg->confirmed = epoch;
}

uint32_t
dgram_tx_epoch(const struct dgram *dg)
{
	return dg->tx != NULL ? dg->tx->epoch : 0;
}

static void
dgram_nonce(const struct dgram_key *k, uint64_t ctr, uint8_t out[DGRAM_IV_LEN])
{
	uint8_t	 c[8];
	size_t	 i;

	put_u64(c, ctr);
	memcpy(out, k->iv, DGRAM_IV_LEN);
	for (i = 0; i < 8; i++)
		out[DGRAM_IV_LEN - 8 + i] ^= c[i];
}

/* Moves the sender to the next epoch when this one has served its time. */
static void
dgram_tx_rekey(struct dgram *dg, uint64_t now)
{
	struct dgram_key	*k;

	if ((now - dg->tx->born < dg->rekey_ms &&
	    dg->tx->next < dg->rekey_packets) ||
	    dg->confirmed < dg->tx->epoch)
		return;
	if ((k = dgram_key_new(dg, dg->tx->epoch + 1, 1, now)) == NULL) {
		dg->tx->born = now;	/* tried again later */
		return;
	}
	dgram_key_free(dg->tx);
	dg->tx = k;
	dg->st.rekeys++;
}

size_t
dgram_seal_parts(struct dgram *dg, uint64_t now, uint8_t type, uint8_t *out,
    const struct dgram_part *parts, size_t nparts)
{
	struct dgram_hdr	 h;
	struct dgram_key	*k;
	uint8_t			 nonce[DGRAM_IV_LEN];
	uint8_t			*p = out + DGRAM_HDR_LEN;
	size_t			 i, len = 0;
	int			 n, m;

	if (dg->tx == NULL)
		return 0;
	dgram_tx_rekey(dg, now);
	k = dg->tx;
	if (k->next >= DGRAM_REJECT_PACKETS)
		return 0;
	h.type = type;
	h.key = (uint8_t)k->epoch;
	h.receiver = dg->remote;
	h.counter = k->next++;
	dgram_hdr_encode(out, &h);
	if (k->ctx == NULL) {
		for (i = 0; i < nparts; i++) {
			if (p + len != parts[i].p)
				memmove(p + len, parts[i].p, parts[i].len);
			len += parts[i].len;
		}
		plain_tag(k, out, p + len);
	} else {
		dgram_nonce(k, h.counter, nonce);
		if (EVP_EncryptInit_ex(k->ctx, NULL, NULL, NULL, nonce) != 1 ||
		    EVP_EncryptUpdate(k->ctx, NULL, &n, out,
		    DGRAM_HDR_LEN) != 1)
			return 0;
		for (i = 0; i < nparts; i++) {
			if (parts[i].len == 0)
				continue;
			if (EVP_EncryptUpdate(k->ctx, p + len, &n, parts[i].p,
			    (int)parts[i].len) != 1)
				return 0;
			len += (size_t)n;
		}
		if (EVP_EncryptFinal_ex(k->ctx, p + len, &m) != 1 ||
		    EVP_CIPHER_CTX_ctrl(k->ctx, EVP_CTRL_AEAD_GET_TAG,
		    DGRAM_TAG_LEN, p + len) != 1)
			return 0;
	}
	dg->st.sent++;
	return DGRAM_HDR_LEN + len + DGRAM_TAG_LEN;
}

size_t
dgram_seal(struct dgram *dg, uint64_t now, uint8_t type, uint8_t *buf,
    size_t len)
{
	struct dgram_part	 part = { buf + DGRAM_HDR_LEN, len };

	return dgram_seal_parts(dg, now, type, buf, &part, 1);
}

/* Verifies (and decrypts) in place: 0 if authentic. */
static int
dgram_verify(struct dgram_key *k, uint64_t ctr, uint8_t *buf, size_t len)
{
	uint8_t		 nonce[DGRAM_IV_LEN];
	uint8_t		*p = buf + DGRAM_HDR_LEN;
	int		 n, m;
	uint8_t		 tag[DGRAM_TAG_LEN];

	if (k->ctx == NULL) {
		plain_tag(k, buf, tag);
		return CRYPTO_memcmp(p + len, tag, DGRAM_TAG_LEN) == 0 ? 0 : -1;
	}
	dgram_nonce(k, ctr, nonce);
	if (EVP_DecryptInit_ex(k->ctx, NULL, NULL, NULL, nonce) != 1 ||
	    EVP_DecryptUpdate(k->ctx, NULL, &n, buf, DGRAM_HDR_LEN) != 1 ||
	    EVP_DecryptUpdate(k->ctx, p, &n, p, (int)len) != 1 ||
	    EVP_CIPHER_CTX_ctrl(k->ctx, EVP_CTRL_AEAD_SET_TAG, DGRAM_TAG_LEN,
	    p + len) != 1 ||
	    EVP_DecryptFinal_ex(k->ctx, p + n, &m) != 1)
		return -1;
	return 0;
}

/* The peer moved to the next epoch: it is current, the old one lingers. */
static void
dgram_rx_rotate(struct dgram *dg, uint64_t now)
{
	dgram_key_free(dg->rx[0]);
	dg->rx[0] = dg->rx[1];
	dg->rx[1] = dg->rx[2];
	dg->rx[2] = dgram_key_new(dg, dg->rx[1]->epoch + 1, 0, now);
	dg->prev_until = now + DGRAM_OVERLAP_MS;
	dg->st.rx_rekeys++;
}

int
dgram_open(struct dgram *dg, uint64_t now, uint8_t *buf, size_t n,
    struct dgram_rx *rx)
{
	struct dgram_hdr	 h;
	struct dgram_key	*k = NULL;
	size_t			 i, len;

	if (dg->rx[0] != NULL && now >= dg->prev_until) {
		dgram_key_free(dg->rx[0]);
		dg->rx[0] = NULL;
	}
	if (n < DGRAM_OVERHEAD || dgram_hdr_decode(buf, n, &h) == -1 ||
	    h.receiver != dg->local) {
		dg->st.malformed++;
		return -1;
	}
	for (i = 0; i < 3 && k == NULL; i++)
		if (dg->rx[i] != NULL && (uint8_t)dg->rx[i]->epoch == h.key)
			k = dg->rx[i];
	len = n - DGRAM_OVERHEAD;
	if (k == NULL || h.counter >= DGRAM_REJECT_PACKETS ||
	    dgram_verify(k, h.counter, buf, len) == -1) {
		dg->st.auth_failed++;
		return -1;
	}
	switch (dgram_replay_check(&k->rw, h.counter)) {
	case DGRAM_REPLAYED:
		dg->st.replayed++;
		return -1;
	case DGRAM_LATE:
		dg->st.reordered++;
		if (dg->st.lost > 0)
			dg->st.lost--;
		break;
	case DGRAM_NEW:
		break;
	}
	dg->st.lost += dgram_replay_mark(&k->rw, h.counter);
	dg->st.received++;
	if (k == dg->rx[2])
		dgram_rx_rotate(dg, now);
	rx->type = h.type;
	rx->epoch = k->epoch;
	rx->payload = buf + DGRAM_HDR_LEN;
	rx->len = len;
	return 0;
}

int
dgram_probe_decode(const uint8_t *p, size_t n, struct dgram_probe *pr)
{
	struct rbuf	 b;
	uint32_t	 hi, lo;

	rbuf_init(&b, p, n);
	if (rbuf_get_u32(&b, &pr->id) == -1 ||
	    rbuf_get_u32(&b, &pr->size) == -1 ||
	    rbuf_get_u32(&b, &hi) == -1 || rbuf_get_u32(&b, &lo) == -1 ||
	    rbuf_get_u32(&b, &pr->epoch) == -1 ||
	    rbuf_get_u32(&b, &pr->lost) == -1)
		return -1;
	pr->stamp = (uint64_t)hi << 32 | lo;
	return 0;
}

void
dgram_probe_encode(uint8_t *out, const struct dgram_probe *pr)
{
	put_u32(out, pr->id);
	put_u32(out + 4, pr->size);
	put_u64(out + 8, pr->stamp);
	put_u32(out + 16, pr->epoch);
	put_u32(out + 20, pr->lost);
}

int
dgram_frame_decode(const uint8_t *p, size_t n, struct dgram_frame *f)
{
	struct rbuf	 b;
	uint8_t		 flags;
	uint16_t	 zero;

	rbuf_init(&b, p, n);
	f->vh = NULL;
	if (rbuf_get_u8(&b, &flags) == -1 || rbuf_get_u8(&b, &f->hops) == -1 ||
	    rbuf_get_u16(&b, &zero) == -1 || rbuf_get_u32(&b, &f->origin) ||
	    rbuf_get_u32(&b, &f->seq) == -1 || zero != 0 ||
	    (flags & ~DGRAM_F_VH) != 0 ||
	    ((flags & DGRAM_F_VH) &&
	    rbuf_get_ptr(&b, DGRAM_FRAME_VH, &f->vh) == -1))
		return -1;
	f->len = rbuf_left(&b);
	if (f->len < WIRE_FRAME_MIN || f->len > WIRE_FRAME_MAX)
		return -1;
	(void)rbuf_get_ptr(&b, f->len, &f->eth);
	return 0;
}

size_t
dgram_frame_encode_hdr(uint8_t *out, uint8_t hops, uint32_t origin,
    uint32_t seq, const uint8_t *vh)
{
	static const uint8_t	 zero[DGRAM_FRAME_VH];
	int			 with = vh != NULL &&
				    memcmp(vh, zero, sizeof(zero)) != 0;

	out[0] = with ? DGRAM_F_VH : 0;
	out[1] = hops;
	out[2] = out[3] = 0;
	put_u32(out + 4, origin);
	put_u32(out + 8, seq);
	if (!with)
		return DGRAM_FRAME_HDR;
	memcpy(out + DGRAM_FRAME_HDR, vh, DGRAM_FRAME_VH);
	return DGRAM_FRAME_HDR + DGRAM_FRAME_VH;
}
