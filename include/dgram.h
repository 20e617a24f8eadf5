/*
 * Datagrams: a link's frames and probes in UDP, authenticated and (over
 * TLS) encrypted.  Pure: bytes, keys and a clock in, verdicts out; no
 * socket, no event loop.  udp.c does the I/O; who supplies the keys is the
 * caller's business (struct dgram_keysrc: the TLS exporter is one source).
 *
 * A datagram is a 16-byte header, a payload and a 16-byte tag:
 *
 *   0      1      2      3      4             8                     16
 *   +------+------+------+------+-------------+---------------------+----
 *   | type | key  |   0  |   0  |receiver idx | counter (64 bits)   | ...
 *   +------+------+------+------+-------------+---------------------+----
 *
 *   type     DATA (one frame, below), FRAG (a piece of one, dfrag.h),
 *            PROBE (padded to the size it probes), REPLY (the answer to a
 *            probe, never larger than it).
 *   key      the low 8 bits of the sender's key epoch.
 *   receiver the index the receiver chose for this session and told its
 *            peer (over the link's TCP connection): it, not the source
 *            address, names the session a datagram is for.
 *   counter  per key, from 0; with the key's IV it makes the nonce
 *            (IV XOR counter, as TLS 1.3 does).
 *
 * The header is the AEAD's additional data, so none of it can be changed.
 * With a cipher (AES-GCM, ChaCha20-Poly1305: the one the link's TLS session
 * negotiated) the payload is encrypted and the tag authenticates both.
 * A plain link's tag is SipHash-2-4 of the header under a 16-byte secret
 * its peer chose and sent over the TCP connection: no one without the
 * secret can make a header (an index, a counter) pass, so forgeries and
 * replays are dropped as over TLS; but the payload is neither hidden nor
 * covered: plain datagrams are for a LAN you trust.
 *
 * A datagram that fails authentication is counted and dropped before any
 * other work.  One that passes goes through the key's replay window
 * (DGRAM_REPLAY_WINDOW counters behind the highest seen, RFC 6479's ring of
 * 64-bit blocks): a counter seen before or older than the window is
 * counted as replayed and dropped; the gaps and late arrivals give the
 * counts of lost and reordered datagrams.
 *
 * Rekeying: the sender moves to the next epoch after rekey_ms or
 * rekey_packets, whichever comes first, but only once the peer has shown
 * that it holds the current one (dgram_tx_confirm(): a probe's reply says
 * under which epoch the probe opened), so that it is never more than one
 * epoch ahead of what the receiver can open, however many datagrams were
 * lost.  The receiver holds the current
 * epoch's key and the next one's, derived in advance; the first datagram
 * that authenticates under the next key makes it current, and the old key
 * is kept for DGRAM_OVERLAP_MS more (datagrams sent before the change and
 * still on their way) before it is wiped.  Nothing is sent for a rekey:
 * both sides derive every epoch's key from the same source.  A key is
 * never used past DGRAM_REJECT_PACKETS.
 */
#ifndef VNET_DGRAM_H
#define VNET_DGRAM_H

#include <stddef.h>
#include <stdint.h>

#define DGRAM_HDR_LEN		16
#define DGRAM_TAG_LEN		16
#define DGRAM_OVERHEAD		(DGRAM_HDR_LEN + DGRAM_TAG_LEN)
#define DGRAM_KEY_MAX		32
#define DGRAM_IV_LEN		12
#define DGRAM_SECRET_LEN	(DGRAM_KEY_MAX + DGRAM_IV_LEN)
/* Counters behind the highest that are still taken: a power of two. */
#define DGRAM_REPLAY_WINDOW	4096
#define DGRAM_REPLAY_BLOCKS	(DGRAM_REPLAY_WINDOW / 64 + 1)
#define DGRAM_OVERLAP_MS	10000
#define DGRAM_REKEY_MS		120000
#define DGRAM_REKEY_PACKETS	(1ULL << 32)
#define DGRAM_REJECT_PACKETS	(1ULL << 60)

enum dgram_type {
	DGRAM_DATA = 1,
	DGRAM_FRAG = 2,
	DGRAM_PROBE = 3,
	DGRAM_REPLY = 4,
	DGRAM_LIVE = 5,	/* a link liveness probe (wire.h's PROBE body) */
};

enum dgram_aead {
	DGRAM_PLAIN = 0,	/* the secret as tag, no encryption */
	DGRAM_AES128GCM = 1,
	DGRAM_AES256GCM = 2,
	DGRAM_CHACHA20 = 3,
};

struct dgram_hdr {
	uint8_t		type;
	uint8_t		key;
	uint32_t	receiver;
	uint64_t	counter;
};

/* Decodes n >= DGRAM_HDR_LEN bytes: -1 if it is no datagram of ours. */
int		 dgram_hdr_decode(const uint8_t *p, size_t n, struct dgram_hdr *);
void		 dgram_hdr_encode(uint8_t out[DGRAM_HDR_LEN],
		    const struct dgram_hdr *);
/* The receiver index of a datagram, or 0 (no session has 0). */
uint32_t	 dgram_receiver(const uint8_t *p, size_t n);

/* RFC 6479's window, one per key. */
struct dgram_replay {
	uint64_t	top;		/* highest counter seen + 1; 0: none */
	uint64_t	bits[DGRAM_REPLAY_BLOCKS];
};

enum dgram_seen {
	DGRAM_NEW,		/* above everything seen */
	DGRAM_LATE,		/* behind the highest, not seen before */
	DGRAM_REPLAYED,		/* seen, or too old to tell */
};

void		 dgram_replay_init(struct dgram_replay *);
/* Whether counter may be taken; nothing changes. */
enum dgram_seen	 dgram_replay_check(const struct dgram_replay *, uint64_t);
/* Marks it seen (after it authenticated); returns the gap it jumped. */
uint64_t	 dgram_replay_mark(struct dgram_replay *, uint64_t);

/*
 * Where keys come from: the secret (DGRAM_SECRET_LEN bytes: the key, then
 * the IV) of one epoch in one direction (tx: ours to send with).  0, or -1
 * if it cannot be had (the session then stops sending).
 */
struct dgram_keysrc {
	int	 (*secret)(void *arg, uint32_t epoch, int tx,
		    uint8_t out[DGRAM_SECRET_LEN]);
	void	*arg;
};

struct dgram_stats {
	uint64_t	sent, received;		/* datagrams that passed */
	uint64_t	auth_failed;		/* dropped: not authentic */
	uint64_t	malformed;		/* dropped: no datagram of ours */
	uint64_t	replayed;		/* dropped: seen before */
	uint64_t	lost;			/* counters never seen */
	uint64_t	reordered;		/* came after a later one */
	uint64_t	rekeys;			/* epochs we moved to, sending */
	uint64_t	rx_rekeys;		/* epochs the peer moved to */
};

struct dgram_key;	/* dgram.c's: a cipher context, IV, counter, window */

struct dgram {
	enum dgram_aead		 aead;
	uint32_t		 local;		/* our receiver index */
	uint32_t		 remote;	/* the peer's */
	struct dgram_keysrc	 src;
	uint64_t		 rekey_ms;
	uint64_t		 rekey_packets;
	struct dgram_key	*tx;
	struct dgram_key	*rx[3];		/* previous, current, next */
	uint64_t		 prev_until;	/* ms: rx[0] wiped then */
	uint32_t		 confirmed;	/* the peer opened this epoch */
	struct dgram_stats	 st;
};

/*
 * A session with our index local and the peer's remote: the keys of
 * epoch 0 (and 1, to receive) are taken from src at once.  0, or -1 if a
 * key cannot be had or there is no memory (nothing to free then).
 */
int		 dgram_init(struct dgram *, enum dgram_aead, uint32_t local,
		    uint32_t remote, const struct dgram_keysrc *,
		    uint64_t now_ms);
/* Wipes and frees the keys. */
void		 dgram_free(struct dgram *);
size_t		 dgram_key_len(enum dgram_aead);
const char	*dgram_aead_name(enum dgram_aead);

/*
 * Seals a datagram in place: buf holds DGRAM_HDR_LEN bytes of room, len
 * bytes of payload, then DGRAM_TAG_LEN bytes of room.  Returns the
 * datagram's length, or 0 if it cannot be sent (no key).  It may move to
 * the next epoch first (rekey_ms, rekey_packets).
 */
size_t		 dgram_seal(struct dgram *, uint64_t now_ms, uint8_t type,
		    uint8_t *buf, size_t len);

/*
 * The same, sealing payload gathered from parts (n of them, len bytes in
 * all) into out (DGRAM_OVERHEAD + len bytes of room), encrypted on the way:
 * no copy of the payload first.
 */
struct dgram_part {
	const uint8_t	*p;
	size_t		 len;
};
size_t		 dgram_seal_parts(struct dgram *, uint64_t now_ms,
		    uint8_t type, uint8_t *out, const struct dgram_part *,
		    size_t n);

struct dgram_rx {
	uint8_t		 type;
	uint32_t	 epoch;		/* of the key that opened it */
	uint8_t		*payload;	/* in the datagram's buffer */
	size_t		 len;
};

/*
 * Opens a datagram in place (for this session: its receiver index matched):
 * 0 with what it holds, or -1 if it was dropped (and counted: malformed,
 * not authentic, replayed).  Only a datagram that returned 0 may cause
 * anything to be sent.
 */
int		 dgram_open(struct dgram *, uint64_t now_ms, uint8_t *buf,
		    size_t n, struct dgram_rx *);

/*
 * The frame a DATA datagram (or the pieces of FRAG ones) carries: what
 * wire.h's FRAME message says, in 12 bytes rather than 28, so that a
 * guest's full-sized frame (MTU 1400) still fits one datagram of a path of
 * MTU 1500:
 *
 *   u8 flags (DGRAM_F_VH: the 12-byte offload header follows, else the
 *   frame needs nothing done), u8 hops, u16 0, u32 origin, u32 sequence,
 *   [offload header], the Ethernet frame (14 bytes to WIRE_FRAME_MAX).
 */
#define DGRAM_FRAME_HDR		12
#define DGRAM_FRAME_VH		12
#define DGRAM_F_VH		0x01
struct dgram_frame {
	uint8_t		 hops;
	uint32_t	 origin, seq;
	const uint8_t	*vh;		/* DGRAM_FRAME_VH bytes, NULL: none */
	const uint8_t	*eth;
	size_t		 len;
};
/* 0, or -1 if it is no frame message. */
int		 dgram_frame_decode(const uint8_t *p, size_t n,
		    struct dgram_frame *);
/*
 * The message's header into out (DGRAM_FRAME_HDR + DGRAM_FRAME_VH bytes of
 * room): its length.  vh NULL or all zero: none.
 */
size_t		 dgram_frame_encode_hdr(uint8_t *out, uint8_t hops,
		    uint32_t origin, uint32_t seq, const uint8_t *vh);

/*
 * A PROBE's or REPLY's payload: u32 id, u32 size (a probe: the size it
 * probes; a reply: the size of the probe it answers), u64 the prober's
 * clock (echoed), u32 epoch (a reply: the key epoch the probe opened
 * under), u32 lost (a reply: the datagrams the replier counted lost, low
 * 32 bits), then padding.
 */
#define DGRAM_PROBE_LEN		24
struct dgram_probe {
	uint32_t	id;
	uint32_t	size;
	uint64_t	stamp;
	uint32_t	epoch;
	uint32_t	lost;
};
int		 dgram_probe_decode(const uint8_t *p, size_t n,
		    struct dgram_probe *);
/* Writes the payload: DGRAM_PROBE_LEN bytes. */
void		 dgram_probe_encode(uint8_t *out, const struct dgram_probe *);

/* The peer opened a datagram of ours sealed under epoch. */
void		 dgram_tx_confirm(struct dgram *, uint32_t epoch);
/* The epoch we send with. */
uint32_t	 dgram_tx_epoch(const struct dgram *);

#endif
