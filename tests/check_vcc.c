/*
 * vCC on real packet bytes (tests/vcc_frames.h: a capture of three Linux
 * connections): option parsing, window rewriting in every scale, virtual-ECN
 * both ways, IPv4, IPv6 and VLAN-tagged frames, checksums against a full
 * recomputation, malformed and truncated frames left alone and counted,
 * the flow table's limits, srtt, shares, and the vcc statements.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "pkt.h"
#include "stmt.h"
#include "vcc.h"
#include "vcc_frames.h"

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))
#define FRAME_MAX	2048
#define IF		"g"
#define ISN_G		1427483313u	/* v4: the guest's initial sequence */
#define ISN_R		144287839u	/* v4: the remote's */

struct frame {
	uint8_t		b[FRAME_MAX];
	size_t		len;
};

static void
fr_load(struct frame *f, const uint8_t *src, size_t len)
{
	ck_assert_uint_le(len, FRAME_MAX);
	memset(f->b, 0, sizeof(f->b));
	memcpy(f->b, src, len);
	f->len = len;
}

#define LOAD(f, a)	fr_load((f), (a), sizeof(a))

static void
fr_parse(const struct frame *f, struct pkt *p)
{
	ck_assert_int_eq(pkt_parse(p, f->b, f->len), PKT_OK);
	ck_assert(p->tcp);
}

/* Checksums the long way, after a test changed a field directly. */
static void
fr_fix(struct frame *f)
{
	struct pkt	 p;

	fr_parse(f, &p);
	if (p.ipver == 4)
		put_u16(f->b + p.l3off + 10, pkt_ipv4_csum(f->b, &p));
	put_u16(f->b + p.l4off + 16, pkt_tcp_csum(f->b, &p));
}

static void
fr_seq(struct frame *f, uint32_t seq)
{
	struct pkt	 p;

	fr_parse(f, &p);
	put_u32(f->b + p.l4off + 4, seq);
	fr_fix(f);
}

static void
fr_ack(struct frame *f, uint32_t ack)
{
	struct pkt	 p;

	fr_parse(f, &p);
	put_u32(f->b + p.l4off + 8, ack);
	fr_fix(f);
}

static void
fr_flags(struct frame *f, uint8_t set, uint8_t clear)
{
	struct pkt	 p;

	fr_parse(f, &p);
	f->b[p.l4off + 13] = (uint8_t)((f->b[p.l4off + 13] | set) & ~clear);
	fr_fix(f);
}

static void
fr_win(struct frame *f, uint16_t win)
{
	struct pkt	 p;

	fr_parse(f, &p);
	put_u16(f->b + p.l4off + 14, win);
	fr_fix(f);
}

static void
fr_sport(struct frame *f, int from_client, uint16_t port)
{
	struct pkt	 p;

	fr_parse(f, &p);
	put_u16(f->b + p.l4off + (from_client ? 0 : 2), port);
	fr_fix(f);
}

static void
fr_ecn(struct frame *f, uint8_t ecn)
{
	struct pkt	 p;
	uint8_t		*ip;

	fr_parse(f, &p);
	ip = f->b + p.l3off;
	if (p.ipver == 4)
		ip[1] = (uint8_t)((ip[1] & ~3) | ecn);
	else
		ip[1] = (uint8_t)((ip[1] & ~0x30) | ecn << 4);
	fr_fix(f);
}

/* Finds option kind in a SYN's options; the offset of its first byte. */
static size_t
fr_opt(const struct frame *f, uint8_t kind)
{
	struct pkt	 p;
	size_t		 o, end;

	fr_parse(f, &p);
	o = p.l4off + 20;
	end = p.l4off + p.tcp_hlen;
	while (o < end) {
		if (f->b[o] == kind)
			return o;
		if (f->b[o] == 0)
			break;
		o += f->b[o] == 1 ? 1 : f->b[o + 1];
	}
	ck_abort_msg("option %u not found", kind);
	return 0;
}

static void
fr_wscale(struct frame *f, uint8_t ws)
{
	f->b[fr_opt(f, 3) + 2] = ws;
	fr_fix(f);
}

/* Replaces the timestamps option by no-ops. */
static void
fr_no_ts(struct frame *f)
{
	memset(f->b + fr_opt(f, 8), 1, 10);
	fr_fix(f);
}

/* Inserts an 802.1Q tag (VLAN 42) after the MAC addresses. */
static void
fr_vlan(struct frame *f)
{
	memmove(f->b + 16, f->b + 12, f->len - 12);
	put_u16(f->b + 12, PKT_ETH_VLAN);
	put_u16(f->b + 14, 42);
	f->len += 4;
}

static int
csum_ok(const uint8_t *b, size_t len)
{
	struct pkt	 p;
	uint16_t	 tcp, ip;

	if (pkt_parse(&p, b, len) != PKT_OK || !p.tcp)
		return 0;
	tcp = (uint16_t)(b[p.l4off + 16] << 8 | b[p.l4off + 17]);
	if (tcp != pkt_tcp_csum(b, &p))
		return 0;
	if (p.ipver == 4) {
		ip = (uint16_t)(b[p.l3off + 10] << 8 | b[p.l3off + 11]);
		if (ip != pkt_ipv4_csum(b, &p))
			return 0;
	}
	return 1;
}

/* Passes a frame; out holds what goes on (the input when untouched). */
static enum vcc_verdict
pass(struct vcc *v, enum vcc_dir dir, const struct frame *in,
    struct frame *out, uint64_t now)
{
	enum vcc_verdict r;

	memset(out->b, 0xa5, sizeof(out->b));
	r = vcc_frame(v, IF, dir, in->b, in->len, out->b, 0, now);
	if (r == VCC_PASS)
		memcpy(out->b, in->b, in->len);
	out->len = in->len;
	if (r == VCC_REWRITTEN)
		ck_assert_msg(csum_ok(out->b, out->len),
		    "checksums differ from a full recomputation");
	return r;
}

static void
must_pass(struct vcc *v, enum vcc_dir dir, const struct frame *in,
    uint64_t now)
{
	struct frame	 out;

	ck_assert_int_eq(pass(v, dir, in, &out, now), VCC_PASS);
}

static uint8_t
out_flags(const struct frame *f)
{
	struct pkt	 p;

	fr_parse(f, &p);
	return p.flags;
}

static uint8_t
out_ecn(const struct frame *f)
{
	struct pkt	 p;

	fr_parse(f, &p);
	return p.ecn;
}

static uint16_t
out_win(const struct frame *f)
{
	struct pkt	 p;

	fr_parse(f, &p);
	return p.win;
}

static void
apply(struct vcc *v, const char *line)
{
	struct stmt		 st;
	struct stmt_error	 e;
	char			 err[256];

	ck_assert_msg(stmt_parse(line, &st, &e) == 1, "'%s': %s", line, e.msg);
	ck_assert_msg(vcc_apply(v, &st, err, sizeof(err)) == 0, "'%s': %s",
	    line, err);
}

/* The one flow of a test, as show flows sees it. */
static void
one_flow_cb(const struct vcc_flow_info *fi, void *arg)
{
	struct vcc_flow_info	*out = arg;

	ck_assert_msg(out->state == NULL, "more than one flow");
	*out = *fi;
}

static struct vcc_flow_info
flow(struct vcc *v, uint64_t now)
{
	struct vcc_flow_info	 fi;

	memset(&fi, 0, sizeof(fi));
	vcc_flow_foreach(v, now, one_flow_cb, &fi);
	ck_assert_msg(fi.state != NULL, "no flow");
	return fi;
}

static struct vcc_stats
stats(struct vcc *v)
{
	struct vcc_stats st;

	vcc_get_stats(v, &st);
	return st;
}

/* SYN and SYN-ACK options as Linux sent them. */
static const struct {
	const uint8_t	*b;
	size_t		 len;
	uint16_t	 mss;
	uint8_t		 ws;
	uint32_t	 tsval, tsecr;
} opts[] = {
	{ v4_syn, sizeof(v4_syn), 1460, 10, 2762341045u, 0 },
	{ v4_synack, sizeof(v4_synack), 1460, 10, 4267903122u, 2762341045u },
	{ ecn_syn, sizeof(ecn_syn), 1460, 10, 1535118414u, 0 },
	{ ecn_synack, sizeof(ecn_synack), 1460, 10, 4033397713u, 1535118414u },
	{ v6_syn, sizeof(v6_syn), 1440, 10, 1028222533u, 0 },
	{ v6_synack, sizeof(v6_synack), 1440, 10, 2724679367u, 1028222533u },
};

START_TEST(test_options)
{
	struct pkt		 p;
	struct pkt_tcpopt	 o;

	ck_assert_int_eq(pkt_parse(&p, opts[_i].b, opts[_i].len), PKT_OK);
	ck_assert_int_eq(pkt_tcp_options(&p, opts[_i].b, &o), 0);
	ck_assert(o.mss_set && o.wscale_set && o.sack_ok && o.ts_set);
	ck_assert_uint_eq(o.mss, opts[_i].mss);
	ck_assert_uint_eq(o.wscale, opts[_i].ws);
	ck_assert_uint_eq(o.tsval, opts[_i].tsval);
	ck_assert_uint_eq(o.tsecr, opts[_i].tsecr);
}
END_TEST

/* The handshake's options end up in the flow, each side's own. */
START_TEST(test_flow_options)
{
	struct vcc		*v = vcc_new(16, 1);
	struct frame		 syn, synack;
	struct vcc_flow_info	 fi;

	LOAD(&syn, v6_syn);
	LOAD(&synack, v6_synack);
	fr_wscale(&syn, 7);
	must_pass(v, VCC_FROM_GUEST, &syn, 0);
	must_pass(v, VCC_TO_GUEST, &synack, 10);
	fi = flow(v, 10);
	ck_assert_str_eq(fi.state, "established");
	ck_assert_int_eq(fi.family, 6);
	ck_assert_uint_eq(fi.ws_guest, 7);
	ck_assert_uint_eq(fi.ws_remote, 10);
	ck_assert_uint_eq(fi.mss_guest, 1440);
	ck_assert_uint_eq(fi.mss_remote, 1440);
	ck_assert_uint_eq(fi.gport, 60222);
	ck_assert_uint_eq(fi.rport, 5202);
	ck_assert(fi.guest_opened);
	vcc_free(v);
}
END_TEST

struct conn {
	const uint8_t	*b[10];
	size_t		 len[10];
};

#define CONN(p) { { p##_syn, p##_synack, p##_ack, p##_data, p##_dack,	\
	p##_rdata, p##_ack2, p##_fin, p##_rfin, p##_lastack },		\
	{ sizeof(p##_syn), sizeof(p##_synack), sizeof(p##_ack),		\
	sizeof(p##_data), sizeof(p##_dack), sizeof(p##_rdata),		\
	sizeof(p##_ack2), sizeof(p##_fin), sizeof(p##_rfin),		\
	sizeof(p##_lastack) } }

static const struct conn conns[] = { CONN(v4), CONN(ecn), CONN(v6) };

/* Which way a captured frame goes when the guest is 02:..:01. */
static enum vcc_dir
dir_of(const uint8_t *b)
{
	return b[11] == 0x01 ? VCC_FROM_GUEST : VCC_TO_GUEST;
}

/* No policy for the interface: every frame leaves exactly as it came. */
START_TEST(test_untouched)
{
	struct vcc	*v = vcc_new(16, 2);
	struct frame	 in, out;
	size_t		 c, i;

	/* Policies elsewhere change nothing here. */
	apply(v, "vcc other ecn virtual");
	apply(v, "vcc share other window 3000");
	apply(v, "vcc class c interface other weight 5 rate 1mbit");
	for (c = 0; c < nitems(conns); c++)
		for (i = 0; i < 10; i++) {
			fr_load(&in, conns[c].b[i], conns[c].len[i]);
			memset(out.b, 0xa5, sizeof(out.b));
			ck_assert_int_eq(vcc_frame(v, IF, dir_of(in.b), in.b,
			    in.len, out.b, 0, 1000 * i), VCC_PASS);
			ck_assert(memcmp(in.b, conns[c].b[i], in.len) == 0);
			ck_assert_uint_eq(out.b[0], 0xa5);
		}
	ck_assert_uint_eq(stats(v).flows_created, 3);
	ck_assert_uint_eq(stats(v).flows_closed, 3);
	ck_assert_uint_eq(stats(v).rewritten, 0);
	ck_assert_uint_eq(vcc_flow_count(v), 0);
	vcc_free(v);
}
END_TEST

/*
 * Every window scale 0..14, targets around and beyond each scale's range:
 * the window toward the guest is lowered to the target (rounded up to the
 * scale's unit), never raised, and so is the guest's own toward the remote.
 */
static const uint64_t targets[] = {
	1, 1000, 2920, 4000, 65535, 100000, 1000000, 30000000, 1u << 30,
};

START_TEST(test_window_scales)
{
	uint8_t		 ws = (uint8_t)_i;
	struct frame	 syn, synack, ack, data, dack, ack2, out;
	size_t		 t;
	uint64_t	 target, want;
	char		 line[80];

	for (t = 0; t < nitems(targets); t++) {
		struct vcc *v = vcc_new(16, 3);

		snprintf(line, sizeof(line), "vcc share " IF " window %llu",
		    (unsigned long long)targets[t]);
		apply(v, line);
		LOAD(&syn, v4_syn);
		LOAD(&synack, v4_synack);
		LOAD(&ack, v4_ack);
		LOAD(&data, v4_data);
		LOAD(&dack, v4_dack);
		LOAD(&ack2, v4_ack2);
		fr_wscale(&syn, ws);
		fr_wscale(&synack, (uint8_t)(14 - ws));
		fr_win(&dack, 0xffff);
		fr_win(&ack2, 0xfff0);
		must_pass(v, VCC_FROM_GUEST, &syn, 0);
		must_pass(v, VCC_TO_GUEST, &synack, 100);
		pass(v, VCC_FROM_GUEST, &ack, &out, 200);
		pass(v, VCC_FROM_GUEST, &data, &out, 300);

		/* Floor: two of the remote's MSS (1460). */
		target = targets[t] < 2920 ? 2920 : targets[t];
		/* Toward the guest: the remote's scale, 14 - ws. */
		want = (target + (1ULL << (14 - ws)) - 1) >> (14 - ws);
		if (want >= 0xffff) {
			ck_assert_int_eq(pass(v, VCC_TO_GUEST, &dack, &out,
			    400), VCC_PASS);
		} else {
			ck_assert_int_eq(pass(v, VCC_TO_GUEST, &dack, &out,
			    400), VCC_REWRITTEN);
			ck_assert_uint_eq(out_win(&out), want);
		}
		ck_assert_uint_ge((uint64_t)out_win(&out) << (14 - ws),
		    target < ((uint64_t)0xffff << (14 - ws)) ? target : 0);
		/* Toward the remote: the guest's scale. */
		want = (target + (1ULL << ws) - 1) >> ws;
		pass(v, VCC_FROM_GUEST, &ack2, &out, 500);
		ck_assert_uint_eq(out_win(&out), want < 0xfff0 ? want : 0xfff0);
		vcc_free(v);
	}
}
END_TEST

/* A window already at or below the target is never raised. */
START_TEST(test_never_raise)
{
	struct vcc	*v = vcc_new(16, 4);
	struct frame	 f, out;
	uint16_t	 raw;

	apply(v, "vcc share " IF " window 65536");
	LOAD(&f, v4_syn);
	must_pass(v, VCC_FROM_GUEST, &f, 0);
	LOAD(&f, v4_synack);
	must_pass(v, VCC_TO_GUEST, &f, 1);
	for (raw = 0; raw <= 64; raw++) {
		LOAD(&f, v4_dack);
		fr_win(&f, raw);	/* 0..64 KiB in scale 10 */
		ck_assert_int_eq(pass(v, VCC_TO_GUEST, &f, &out, 2), VCC_PASS);
	}
	LOAD(&f, v4_dack);
	fr_win(&f, 65);
	ck_assert_int_eq(pass(v, VCC_TO_GUEST, &f, &out, 3), VCC_REWRITTEN);
	ck_assert_uint_eq(out_win(&out), 64);
	vcc_free(v);
}
END_TEST

enum variant { V_V4, V_VLAN, V_V6 };

static void
load_var(struct frame *f, enum variant var, int idx)
{
	const struct conn *c = &conns[var == V_V6 ? 2 : 0];

	fr_load(f, c->b[idx], c->len[idx]);
	if (var == V_VLAN)
		fr_vlan(f);
}

/*
 * The guest (no ECN) sends under ecn virtual: its SYN asks for ECN, the
 * answer is hidden, data leaves ECT(0), ECE is cleared and halves the
 * target window, CWR goes out on the next data; and as a receiver, CE on
 * arriving data is cleared and echoed as ECE until the sender's CWR.
 */
START_TEST(test_virtual_ecn)
{
	enum variant		 var = (enum variant)_i;
	struct vcc		*v = vcc_new(16, 5);
	struct frame		 f, out, orig;
	struct vcc_flow_info	 fi;
	struct pkt		 p;
	uint32_t		 gseq, rseq;

	apply(v, "vcc " IF " ecn virtual");
	load_var(&f, var, 0);
	fr_parse(&f, &p);
	gseq = p.seq + 1;
	ck_assert_int_eq(pass(v, VCC_FROM_GUEST, &f, &out, 0), VCC_REWRITTEN);
	ck_assert_uint_eq(out_flags(&out), TCP_SYN | TCP_ECE | TCP_CWR);
	ck_assert(memcmp(out.b, f.b, 12) == 0);

	/* The remote agrees; the guest gets the SYN-ACK it would without. */
	load_var(&orig, var, 1);
	fr_parse(&orig, &p);
	rseq = p.seq + 1;
	f = orig;
	fr_flags(&f, TCP_ECE, 0);
	ck_assert_int_eq(pass(v, VCC_TO_GUEST, &f, &out, 100), VCC_REWRITTEN);
	ck_assert(memcmp(out.b, orig.b, orig.len) == 0);
	ck_assert_str_eq(flow(v, 100).ecn, "virtual");

	load_var(&f, var, 2);
	must_pass(v, VCC_FROM_GUEST, &f, 200);

	/* Data leaves ECT(0). */
	load_var(&f, var, 3);
	ck_assert_int_eq(pass(v, VCC_FROM_GUEST, &f, &out, 300), VCC_REWRITTEN);
	ck_assert_uint_eq(out_ecn(&out), PKT_ECN_ECT0);
	ck_assert_uint_eq(out_flags(&out), out_flags(&f));

	/* ECE on its ACK: cleared, and the window cut to the floor. */
	load_var(&f, var, 4);
	fr_flags(&f, TCP_ECE, 0);
	ck_assert_int_eq(pass(v, VCC_TO_GUEST, &f, &out, 400), VCC_REWRITTEN);
	ck_assert_uint_eq(out_flags(&out), TCP_ACK);
	fi = flow(v, 400);
	ck_assert_uint_eq(fi.cuts, 1);
	ck_assert_uint_eq(fi.ece, 1);
	ck_assert_uint_eq(fi.target, 2 * fi.mss_remote);
	ck_assert_uint_eq(out_win(&out),
	    (2 * fi.mss_remote + (1u << fi.ws_remote) - 1) >> fi.ws_remote);

	/* The next data carries CWR. */
	load_var(&f, var, 3);
	fr_seq(&f, gseq + 100);
	ck_assert_int_eq(pass(v, VCC_FROM_GUEST, &f, &out, 500), VCC_REWRITTEN);
	ck_assert_uint_eq(out_flags(&out), TCP_ACK | TCP_PSH | TCP_CWR);
	ck_assert_uint_eq(out_ecn(&out), PKT_ECN_ECT0);

	/* Receiver side: CE arrives, the guest sees the data unmarked. */
	load_var(&orig, var, 5);
	fr_win(&orig, 2);	/* below the target: only ECN changes */
	f = orig;
	fr_ecn(&f, PKT_ECN_CE);
	ck_assert_int_eq(pass(v, VCC_TO_GUEST, &f, &out, 600), VCC_REWRITTEN);
	ck_assert(memcmp(out.b, orig.b, orig.len) == 0);
	ck_assert_uint_eq(flow(v, 600).ce, 1);

	/* Its ACKs echo ECE ... */
	load_var(&f, var, 6);
	ck_assert_int_eq(pass(v, VCC_FROM_GUEST, &f, &out, 700), VCC_REWRITTEN);
	ck_assert_uint_eq(out_flags(&out), TCP_ACK | TCP_ECE);

	/* ... until the sender's CWR, which the guest does not see either. */
	load_var(&orig, var, 5);
	fr_seq(&orig, rseq + 200);
	fr_win(&orig, 2);
	f = orig;
	fr_flags(&f, TCP_CWR, 0);
	fr_ecn(&f, PKT_ECN_ECT0);
	ck_assert_int_eq(pass(v, VCC_TO_GUEST, &f, &out, 800), VCC_REWRITTEN);
	ck_assert(memcmp(out.b, orig.b, orig.len) == 0);
	load_var(&f, var, 6);
	fr_ack(&f, rseq + 400);
	must_pass(v, VCC_FROM_GUEST, &f, 900);

	ck_assert_uint_eq(stats(v).ect_set, 2);
	ck_assert_uint_eq(stats(v).cwr_set, 1);
	ck_assert_uint_eq(stats(v).ece_set, 1);
	ck_assert_uint_eq(stats(v).ce_seen, 1);
	ck_assert_uint_eq(stats(v).truncated + stats(v).malformed, 0);
	vcc_free(v);
}
END_TEST

/* The remote opens: the guest's SYN-ACK accepts ECN on its behalf. */
START_TEST(test_virtual_ecn_server)
{
	struct vcc	*v = vcc_new(16, 6);
	struct frame	 f, out;

	apply(v, "vcc " IF " ecn virtual");
	/* The guest is 02:..:02 here: the client's frames come to it. */
	LOAD(&f, v4_syn);
	fr_flags(&f, TCP_ECE | TCP_CWR, 0);
	must_pass(v, VCC_TO_GUEST, &f, 0);
	LOAD(&f, v4_synack);
	ck_assert_int_eq(pass(v, VCC_FROM_GUEST, &f, &out, 10), VCC_REWRITTEN);
	ck_assert_uint_eq(out_flags(&out), TCP_SYN | TCP_ACK | TCP_ECE);
	ck_assert_str_eq(flow(v, 10).ecn, "virtual");
	/* Its data (the reply) leaves ECT(0). */
	LOAD(&f, v4_ack);
	must_pass(v, VCC_TO_GUEST, &f, 20);
	LOAD(&f, v4_rdata);
	ck_assert_int_eq(pass(v, VCC_FROM_GUEST, &f, &out, 30), VCC_REWRITTEN);
	ck_assert_uint_eq(out_ecn(&out), PKT_ECN_ECT0);
	vcc_free(v);
}
END_TEST

/* A guest that does ECN itself is left alone, policy or not. */
START_TEST(test_native_ecn)
{
	struct vcc	*v = vcc_new(16, 7);
	struct frame	 f;
	size_t		 i;

	apply(v, "vcc " IF " ecn virtual");
	for (i = 0; i < 10; i++) {
		fr_load(&f, conns[1].b[i], conns[1].len[i]);
		must_pass(v, dir_of(f.b), &f, i);
		if (i == 1)
			ck_assert_str_eq(flow(v, i).ecn, "native");
	}
	ck_assert_uint_eq(stats(v).flows_closed, 1);
	vcc_free(v);
}
END_TEST

/* Every captured frame cut short, and impossible headers: untouched. */
START_TEST(test_truncated)
{
	struct vcc	*v = vcc_new(16, 8);
	const struct conn *c = &conns[_i];
	struct frame	 f, out;
	size_t		 i, cut, n = 0;

	apply(v, "vcc " IF " ecn virtual");
	apply(v, "vcc share " IF " window 3000");
	for (i = 0; i < 10; i++)
		for (cut = 0; cut < c->len[i]; cut++) {
			fr_load(&f, c->b[i], cut);
			ck_assert_int_eq(pass(v, dir_of(c->b[i]), &f, &out,
			    i), VCC_PASS);
			ck_assert(memcmp(f.b, c->b[i], cut) == 0);
			n++;
		}
	ck_assert_uint_eq(stats(v).truncated, n);
	ck_assert_uint_eq(stats(v).flows_created, 0);
	vcc_free(v);
}
END_TEST

START_TEST(test_malformed)
{
	struct vcc	*v = vcc_new(16, 9);
	struct frame	 f, out;
	struct pkt	 p;

	apply(v, "vcc " IF " ecn virtual");
	/* IPv4 header length 16 bytes. */
	LOAD(&f, v4_syn);
	f.b[14] = 0x44;
	ck_assert_int_eq(pass(v, VCC_FROM_GUEST, &f, &out, 0), VCC_PASS);
	/* IP version 5. */
	LOAD(&f, v4_syn);
	f.b[14] = 0x55;
	ck_assert_int_eq(pass(v, VCC_FROM_GUEST, &f, &out, 0), VCC_PASS);
	/* TCP data offset 16 bytes. */
	LOAD(&f, v4_syn);
	fr_parse(&f, &p);
	f.b[p.l4off + 12] = 0x40;
	ck_assert_int_eq(pass(v, VCC_FROM_GUEST, &f, &out, 0), VCC_PASS);
	/* IPv6 version 4. */
	LOAD(&f, v6_syn);
	f.b[14] = 0x40;
	ck_assert_int_eq(pass(v, VCC_FROM_GUEST, &f, &out, 0), VCC_PASS);
	ck_assert_uint_eq(stats(v).malformed, 4);
	/* A window scale option of the wrong length: not tracked. */
	LOAD(&f, v4_syn);
	f.b[fr_opt(&f, 3) + 1] = 4;
	ck_assert_int_eq(pass(v, VCC_FROM_GUEST, &f, &out, 0), VCC_PASS);
	ck_assert_uint_eq(stats(v).bad_options, 1);
	ck_assert_uint_eq(vcc_flow_count(v), 0);
	/* A pure ACK of an unknown flow passes untracked (data picks up). */
	LOAD(&f, v4_ack);
	ck_assert_int_eq(pass(v, VCC_FROM_GUEST, &f, &out, 0), VCC_PASS);
	ck_assert_uint_eq(stats(v).untracked, 1);
	ck_assert_uint_eq(vcc_flow_count(v), 0);
	vcc_free(v);
}
END_TEST

/* A NEEDS_CSUM frame: the TCP checksum field is the device's business. */
START_TEST(test_partial)
{
	struct vcc	*v = vcc_new(16, 10);
	struct frame	 f, out;
	struct pkt	 p;

	apply(v, "vcc share " IF " window 5000");
	LOAD(&f, v4_syn);
	must_pass(v, VCC_FROM_GUEST, &f, 0);
	LOAD(&f, v4_synack);
	must_pass(v, VCC_TO_GUEST, &f, 1);
	LOAD(&f, v4_dack);
	ck_assert_int_eq(vcc_frame(v, IF, VCC_TO_GUEST, f.b, f.len, out.b, 1,
	    2), VCC_REWRITTEN);
	fr_parse(&f, &p);
	ck_assert_uint_eq(out.b[p.l4off + 14] << 8 | out.b[p.l4off + 15], 5);
	ck_assert(memcmp(out.b + p.l4off + 16, f.b + p.l4off + 16, 2) == 0);
	vcc_free(v);
}
END_TEST

/* srtt from timestamps, and from data-to-ACK timing without them. */
START_TEST(test_srtt)
{
	struct vcc	*v = vcc_new(16, 11);
	struct frame	 f;

	LOAD(&f, v4_syn);
	must_pass(v, VCC_FROM_GUEST, &f, 0);
	LOAD(&f, v4_synack);
	must_pass(v, VCC_TO_GUEST, &f, 100);
	LOAD(&f, v4_ack);		/* TSval ...045 first seen at 1000 */
	must_pass(v, VCC_FROM_GUEST, &f, 1000);
	LOAD(&f, v4_data);
	must_pass(v, VCC_FROM_GUEST, &f, 1200);
	LOAD(&f, v4_dack);		/* echoes it at 3500 */
	must_pass(v, VCC_TO_GUEST, &f, 3500);
	ck_assert_uint_eq(flow(v, 3500).srtt_us, 2500);
	ck_assert_uint_eq(flow(v, 3500).inflight, 0);
	vcc_free(v);

	v = vcc_new(16, 12);
	LOAD(&f, v4_syn);
	fr_no_ts(&f);
	must_pass(v, VCC_FROM_GUEST, &f, 0);
	LOAD(&f, v4_synack);
	fr_no_ts(&f);
	must_pass(v, VCC_TO_GUEST, &f, 100);
	LOAD(&f, v4_data);		/* timed: sent at 1000 */
	must_pass(v, VCC_FROM_GUEST, &f, 1000);
	ck_assert_uint_eq(flow(v, 1000).inflight, 100);
	LOAD(&f, v4_dack);		/* acked at 4000 */
	must_pass(v, VCC_TO_GUEST, &f, 4000);
	ck_assert_uint_eq(flow(v, 4000).srtt_us, 3000);
	vcc_free(v);
}
END_TEST

/* Guest data of n bytes at offset off of its stream; the remote's ACK. */
static void
gdata(struct vcc *v, uint32_t off, uint64_t now)
{
	struct frame	 f, out;

	LOAD(&f, v4_data);		/* 100 bytes */
	fr_seq(&f, ISN_G + 1 + off);
	pass(v, VCC_FROM_GUEST, &f, &out, now);
}

static struct frame
rack(struct vcc *v, uint32_t off, int ece, uint64_t now)
{
	struct frame	 f, out;

	LOAD(&f, v4_dack);
	fr_ack(&f, ISN_G + 1 + off);
	if (ece)
		fr_flags(&f, TCP_ECE, 0);
	pass(v, VCC_TO_GUEST, &f, &out, now);
	return out;
}

/* Halving at most once per srtt (and per window), floor, growth, cap. */
START_TEST(test_cut_and_grow)
{
	struct vcc	*v = vcc_new(16, 13);
	struct frame	 f, out;
	uint32_t	 off;
	uint64_t	 t, now = 1000, before;

	apply(v, "vcc " IF " ecn virtual");
	LOAD(&f, v4_syn);
	pass(v, VCC_FROM_GUEST, &f, &out, 0);
	LOAD(&f, v4_synack);
	fr_flags(&f, TCP_ECE, 0);
	pass(v, VCC_TO_GUEST, &f, &out, 100);
	/* 20000 bytes in flight, srtt 10 ms from the first ACK. */
	for (off = 0; off < 20000; off += 100)
		gdata(v, off, now);
	now += 10000;
	rack(v, 100, 0, now);
	ck_assert_uint_eq(flow(v, now).srtt_us, 10000);
	rack(v, 200, 1, now);
	t = flow(v, now).target;
	ck_assert_uint_eq(t, (20000 - 100) / 2);
	/* More ECE in the same RTT: no second cut. */
	rack(v, 300, 1, now + 5000);
	rack(v, 400, 1, now + 12000);	/* not past the data of the cut */
	ck_assert_uint_eq(flow(v, now).target, t);
	ck_assert_uint_eq(flow(v, now).cuts, 1);
	/* Past it, and an srtt later: halved again, down to 2 MSS. */
	now += 20000;
	gdata(v, 20000, now);
	rack(v, 20100, 1, now);
	ck_assert_uint_eq(flow(v, now).target, (20000 - 100) / 4);
	now += 20000;
	gdata(v, 20100, now);
	rack(v, 20200, 1, now);
	ck_assert_uint_eq(flow(v, now).target, 2920);
	rack(v, 20200, 1, now + 20000);	/* nothing new acked: no cut */
	ck_assert_uint_eq(flow(v, now).cuts, 3);
	/*
	 * Growth: a window's worth of acked bytes adds about one MSS (less
	 * as the window grows during it, as in Reno).
	 */
	for (off = 20200; off < 40000; off += 100)
		gdata(v, off, now);
	before = flow(v, now).target;
	for (off = 20300; off <= 20200 + 2900; off += 100)
		rack(v, off, 0, now);
	ck_assert_uint_ge(flow(v, now).target, before + 1100);
	ck_assert_uint_le(flow(v, now).target, before + 1460);
	/* Up to the receiver's window (64 in scale 10), no further. */
	for (off = 23200; off < 40000; off += 100)
		rack(v, off, 0, now);
	ck_assert_uint_le(flow(v, now).target, 65536);
	for (; off < 2000000; off += 100) {
		gdata(v, off + 19800, now);
		rack(v, off, 0, now);
	}
	ck_assert_uint_eq(flow(v, now).target, 65536);
	f = rack(v, off, 0, now);
	ck_assert_uint_eq(out_win(&f), 64);
	vcc_free(v);
}
END_TEST

/* A flow on its own port (client side port), handshake done, data sent. */
static void
open_flow(struct vcc *v, uint16_t port, uint64_t now)
{
	struct frame	 f;

	LOAD(&f, v4_syn);
	fr_sport(&f, 1, port);
	must_pass(v, VCC_FROM_GUEST, &f, now);
	LOAD(&f, v4_synack);
	fr_sport(&f, 0, port);
	must_pass(v, VCC_TO_GUEST, &f, now);
	LOAD(&f, v4_data);
	fr_sport(&f, 1, port);
	vcc_frame(v, IF, VCC_FROM_GUEST, f.b, f.len, f.b, 0, now);
}

struct shares {
	uint64_t	 target[8];
	int		 active[8];
	uint64_t	 window, share;
	size_t		 active_flows;
};

static void
shares_cb(const struct vcc_flow_info *fi, void *arg)
{
	struct shares	*s = arg;

	ck_assert_uint_ge(fi->gport, 40000);
	ck_assert_uint_lt(fi->gport, 40008);
	s->target[fi->gport - 40000] = fi->target;
	s->active[fi->gport - 40000] = fi->active;
}

static void
shares_if_cb(const struct vcc_if_info *ii, void *arg)
{
	struct shares	*s = arg;

	s->window = ii->window;
	s->share = ii->share;
	s->active_flows = ii->active;
}

static struct shares
shares(struct vcc *v, uint64_t now)
{
	struct shares	 s;

	memset(&s, 0, sizeof(s));
	vcc_flow_foreach(v, now, shares_cb, &s);
	vcc_if_foreach(v, now, shares_if_cb, &s);
	return s;
}

/* The total divided by weight among active flows, following them. */
START_TEST(test_share)
{
	struct vcc	*v = vcc_new(64, 14);
	struct shares	 s;
	uint16_t	 i;
	uint64_t	 now = 1000;

	apply(v, "vcc share " IF " window 90000");
	apply(v, "vcc class pref match tcp-port 40003,40004 weight 3");
	for (i = 0; i < 3; i++)
		open_flow(v, (uint16_t)(40000 + i), now);
	s = shares(v, now);
	for (i = 0; i < 3; i++) {
		ck_assert(s.active[i]);
		ck_assert_uint_eq(s.target[i], 30000);
	}
	ck_assert_uint_eq(s.window, 90000);
	ck_assert_uint_eq(s.active_flows, 3);
	/* Two preferred flows start: 3 each, out of 3 + 3 + 1 + 1 + 1. */
	open_flow(v, 40003, now);
	open_flow(v, 40004, now);
	s = shares(v, now);
	ck_assert_uint_eq(s.target[0], 10000);
	ck_assert_uint_eq(s.target[3], 30000);
	ck_assert_uint_eq(s.target[4], 30000);
	ck_assert_uint_eq(s.window, 90000);
	/*
	 * The preferred ones have all their data acked and stay quiet, the
	 * others go on: those share again.
	 */
	for (i = 0; i < 5; i++) {
		struct frame f;

		LOAD(&f, v4_dack);
		fr_sport(&f, 0, (uint16_t)(40000 + i));
		vcc_frame(v, IF, VCC_TO_GUEST, f.b, f.len, f.b, 0, now + 2000);
	}
	now += 50000;
	for (i = 0; i < 3; i++) {
		struct frame f;

		LOAD(&f, v4_data);
		fr_sport(&f, 1, (uint16_t)(40000 + i));
		fr_seq(&f, ISN_G + 101);
		vcc_frame(v, IF, VCC_FROM_GUEST, f.b, f.len, f.b, 0, now);
	}
	s = shares(v, now);
	ck_assert(!s.active[3] && !s.active[4]);
	for (i = 0; i < 3; i++)
		ck_assert_uint_eq(s.target[i], 30000);
	/* An idle flow is offered what it would get on starting. */
	ck_assert_uint_eq(s.target[3], 90000 * 3 / 6);
	ck_assert_uint_eq(s.window, 90000);
	/* A class rate caps by rate x srtt (2 ms: 2000 bytes, floor 2 MSS). */
	apply(v, "vcc class pref rate 8mbit");
	apply(v, "del-vcc share " IF);
	s = shares(v, now);
	ck_assert_uint_eq(s.target[0], 0);
	ck_assert_uint_eq(s.target[3], 2920);
	vcc_free(v);
}
END_TEST

START_TEST(test_rate)
{
	struct vcc	*v = vcc_new(16, 15);
	struct frame	 f, out;

	apply(v, "vcc class slow match dst 10.77.0.0/24 rate 8mbit");
	LOAD(&f, v4_syn);
	must_pass(v, VCC_FROM_GUEST, &f, 0);
	LOAD(&f, v4_synack);
	must_pass(v, VCC_TO_GUEST, &f, 0);
	LOAD(&f, v4_ack);
	must_pass(v, VCC_FROM_GUEST, &f, 1000);
	LOAD(&f, v4_data);
	must_pass(v, VCC_FROM_GUEST, &f, 1000);
	LOAD(&f, v4_dack);			/* srtt 20 ms */
	pass(v, VCC_TO_GUEST, &f, &out, 21000);
	ck_assert_str_eq(flow(v, 21000).cls, "slow");
	/* 1 MB/s x 20 ms */
	ck_assert_uint_eq(flow(v, 21000).target, 20000);
	ck_assert_uint_eq(out_win(&out), 20);
	/* Reclassified when classes change. */
	apply(v, "vcc class slow match dst 10.78.0.0/16");
	ck_assert_str_eq(flow(v, 21000).cls, "-");
	ck_assert_uint_eq(flow(v, 21000).target, 0);
	vcc_free(v);
}
END_TEST

/* Both directions one entry; FIN, RST, idle timeout; a bounded table. */
START_TEST(test_table)
{
	struct vcc	*v = vcc_new(4 * VCC_IF_SHARE, 16);
	struct frame	 f;
	uint16_t	 i;

	for (i = 0; i < 6; i++) {
		LOAD(&f, v4_syn);
		fr_sport(&f, 1, (uint16_t)(40000 + i));
		must_pass(v, VCC_FROM_GUEST, &f, i);
	}
	/* One interface holds its share, a quarter. */
	ck_assert_uint_eq(vcc_flow_count(v), 4);
	ck_assert_uint_eq(stats(v).over_share, 2);
	ck_assert_uint_eq(stats(v).evictions, 0);
	/* Half-open entries go after the short timeout. */
	vcc_expire(v, 2 + VCC_LINGER_US - 1);
	ck_assert_uint_eq(vcc_flow_count(v), 4);
	vcc_expire(v, 5 + VCC_LINGER_US);
	ck_assert_uint_eq(vcc_flow_count(v), 0);
	ck_assert_uint_eq(stats(v).expired, 4);

	/* Established: the long one. */
	LOAD(&f, v4_syn);
	must_pass(v, VCC_FROM_GUEST, &f, 0);
	LOAD(&f, v4_synack);
	must_pass(v, VCC_TO_GUEST, &f, 0);
	ck_assert_uint_eq(vcc_flow_count(v), 1);
	vcc_expire(v, VCC_LINGER_US * 2);
	ck_assert_uint_eq(vcc_flow_count(v), 1);
	vcc_expire(v, VCC_IDLE_US);
	ck_assert_uint_eq(vcc_flow_count(v), 0);

	/* RST from either side ends it. */
	LOAD(&f, v4_syn);
	must_pass(v, VCC_FROM_GUEST, &f, 0);
	LOAD(&f, v4_synack);
	must_pass(v, VCC_TO_GUEST, &f, 0);
	LOAD(&f, v4_dack);
	fr_flags(&f, TCP_RST, 0);
	must_pass(v, VCC_TO_GUEST, &f, 1);
	ck_assert_uint_eq(vcc_flow_count(v), 0);
	ck_assert_uint_eq(stats(v).flows_closed, 1);
	vcc_free(v);
}
END_TEST

/* The statements: forms, canonical text, errors. */
static const struct {
	const char	*line, *canon;
} vcc_valid[] = {
	{ "vcc g1 ecn virtual",			"vcc g1 ecn virtual" },
	{ "add-vcc g1 ecn virtual",		"vcc g1 ecn virtual" },
	{ "del-vcc g1 ecn",			"del-vcc g1 ecn" },
	{ "vcc share g1 window 200000",		"vcc share g1 window 200000" },
	{ "vcc share g1 window 01",		"vcc share g1 window 1" },
	{ "del-vcc share g1",			"del-vcc share g1" },
	{ "vcc class pref match tcp-port 5204,5205 weight 3",
	    "vcc class pref match tcp-port 5204,5205 weight 3" },
	{ "vcc class p weight 3 match tcp-port 80 interface g1",
	    "vcc class p match tcp-port 80 interface g1 weight 3" },
	{ "vcc class p match src 10.0.0.0/8 match dst fd00::1",
	    "vcc class p match src 10.0.0.0/8 match dst fd00::1/128" },
	{ "vcc class p match dst 2001:db8:8000::/33",
	    "vcc class p match dst 2001:db8:8000::/33" },
	{ "vcc class p rate 10000kbit",		"vcc class p rate 10mbit" },
	{ "vcc class p rate 1500kbit",		"vcc class p rate 1500kbit" },
	{ "vcc class p rate 8kbit",		"vcc class p rate 8kbit" },
	{ "vcc class p rate 2.5gbit",		"vcc class p rate 2500mbit" },
	{ "vcc class p rate 1000gbit",		"vcc class p rate 1tbit" },
	{ "vcc class p rate none",		"vcc class p rate none" },
	{ "vcc class p",			"vcc class p" },
	{ "vcc class share weight 2",		"vcc class share weight 2" },
	{ "del-vcc class p",			"del-vcc class p" },
	{ "vcc class p match tcp-port 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 "
	    "match src 0.0.0.0/0 match dst ::/0 interface i weight 1000 "
	    "rate 1gbit",
	    "vcc class p match tcp-port 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 "
	    "match src 0.0.0.0/0 match dst ::/0 interface i weight 1000 "
	    "rate 1gbit" },
	{ "show flows",				"show flows" },
	{ "show vcc",				"show vcc" },
};

START_TEST(test_stmt_valid)
{
	struct stmt		 a, b;
	struct stmt_error	 err;
	char			 buf[STMT_LINE_MAX];

	ck_assert_msg(stmt_parse(vcc_valid[_i].line, &a, &err) == 1,
	    "'%s': %s", vcc_valid[_i].line, err.msg);
	ck_assert_int_eq(stmt_print(&a, buf, sizeof(buf)),
	    (int)strlen(vcc_valid[_i].canon));
	ck_assert_str_eq(buf, vcc_valid[_i].canon);
	ck_assert_int_eq(stmt_parse(buf, &b, &err), 1);
	ck_assert(stmt_equal(&a, &b));
}
END_TEST

static const struct {
	const char	*line, *msg;
	int		 col;
} vcc_errors[] = {
	{ "vcc", "vcc: expected IFACE ecn virtual, share IFACE window BYTES "
	    "or class NAME ...", 4 },
	{ "vcc g1", "vcc: expected IFACE ecn virtual, share IFACE window "
	    "BYTES or class NAME ...", 7 },
	{ "vcc g1 ecn real", "vcc: expected 'virtual', not 'real'", 12 },
	{ "vcc g1 ecn virtual x", "vcc: unexpected 'x'", 20 },
	{ "vcc share class window 5", "vcc: expected NAME after 'class'", 11 },
	{ "vcc share g1 window 0", "vcc: invalid window '0' (1..1073741824 "
	    "bytes)", 21 },
	{ "vcc share g1 window 1073741825", "vcc: invalid window "
	    "'1073741825' (1..1073741824 bytes)", 21 },
	{ "vcc share g1 size 5", "vcc: expected 'window', not 'size'", 14 },
	{ "vcc class p weight 0", "vcc: invalid weight '0' (1..1000)", 20 },
	{ "vcc class p weight 1001", "vcc: invalid weight '1001' (1..1000)",
	    20 },
	{ "vcc class p weight 3 weight 4", "vcc: weight given twice", 22 },
	{ "vcc class p match tcp-port 0", "vcc: invalid port list '0' "
	    "(1..65535, up to 16, comma-separated)", 28 },
	{ "vcc class p match tcp-port 80,", "vcc: invalid port list '80,' "
	    "(1..65535, up to 16, comma-separated)", 28 },
	{ "vcc class p match udp-port 80", "vcc: unknown match 'udp-port' "
	    "(expected tcp-port, src or dst)", 19 },
	{ "vcc class p match src 10.0.0.0/33", "vcc: invalid prefix length "
	    "'33' (0..32)", 23 },
	{ "vcc class p match src host", "vcc: invalid IPv4 address 'host'",
	    23 },
	{ "vcc class p match src 10.1.2.3/8", "vcc: '10.1.2.3/8' has host "
	    "bits set (the network is 10.0.0.0/8)", 23 },
	{ "vcc class p match src", "vcc: expected IFACE ecn virtual, share "
	    "IFACE window BYTES or class NAME ...", 22 },
	{ "vcc class p rate 10mb", "vcc: invalid rate '10mb' (such as "
	    "500kbit, 10mbit, 2.5gbit; 8kbit to 1tbit; or none)", 18 },
	{ "vcc class p rate 1001gbit", "vcc: invalid rate '1001gbit' (such "
	    "as 500kbit, 10mbit, 2.5gbit; 8kbit to 1tbit; or none)", 18 },
	{ "vcc class p speed 3", "vcc: unexpected 'speed' (expected match, "
	    "interface, weight or rate)", 13 },
	{ "del-vcc g1 ecn virtual", "del-vcc: unexpected 'virtual'", 16 },
	{ "del-vcc class p weight 3", "del-vcc: unexpected 'weight'", 17 },
};

START_TEST(test_stmt_error)
{
	struct stmt		 st;
	struct stmt_error	 err;

	ck_assert_int_eq(stmt_parse(vcc_errors[_i].line, &st, &err), -1);
	ck_assert_str_eq(err.msg, vcc_errors[_i].msg);
	ck_assert_int_eq(err.column, vcc_errors[_i].col);
}
END_TEST

static void
print_cb(const struct stmt *st, void *arg)
{
	char	*out = arg, line[STMT_LINE_MAX];

	stmt_print(st, line, sizeof(line));
	strcat(out, line);
	strcat(out, "\n");
}

/* Policies print back as statements that build the same policies. */
START_TEST(test_config)
{
	struct vcc	*a = vcc_new(16, 17), *b = vcc_new(16, 18);
	char		 text[4096] = "", again[4096] = "", *line, *save;
	struct stmt	 st;
	char		 err[128];

	apply(a, "vcc g1 ecn virtual");
	apply(a, "vcc share g1 window 100000");
	apply(a, "vcc share g2 window 5000");
	apply(a, "vcc class pref match tcp-port 5204,5205 weight 3");
	apply(a, "vcc class pref rate 10mbit");
	apply(a, "vcc class bulk interface g2 weight 1");
	apply(a, "vcc g3 ecn virtual");
	apply(a, "del-vcc g3 ecn");
	vcc_config_foreach(a, print_cb, text);
	ck_assert_str_eq(text, "vcc g1 ecn virtual\n"
	    "vcc share g1 window 100000\n"
	    "vcc share g2 window 5000\n"
	    "vcc class pref match tcp-port 5204,5205 weight 3 rate 10mbit\n"
	    "vcc class bulk interface g2 weight 1\n");
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		apply(b, line);
	vcc_config_foreach(b, print_cb, again);
	vcc_config_foreach(a, print_cb, text);	/* strtok cut it */
	ck_assert_str_eq(again, "vcc g1 ecn virtual\n"
	    "vcc share g1 window 100000\n"
	    "vcc share g2 window 5000\n"
	    "vcc class pref match tcp-port 5204,5205 weight 3 rate 10mbit\n"
	    "vcc class bulk interface g2 weight 1\n");
	/* Deleting what is not there fails and changes nothing. */
	ck_assert_int_eq(stmt_parse("del-vcc g3 ecn", &st, NULL), 1);
	ck_assert_int_eq(vcc_apply(b, &st, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "no vcc ecn policy on g3");
	ck_assert_int_eq(stmt_parse("del-vcc class nope", &st, NULL), 1);
	ck_assert_int_eq(vcc_apply(b, &st, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "no vcc class nope");
	vcc_free(a);
	vcc_free(b);
}
END_TEST

/* A virtual-ECN flow of interface IF, open and with data out. */
static void
open_virtual(struct vcc *v, uint64_t now)
{
	struct frame	 f, out;

	LOAD(&f, v4_syn);
	pass(v, VCC_FROM_GUEST, &f, &out, now);
	LOAD(&f, v4_synack);
	fr_flags(&f, TCP_ECE, 0);
	pass(v, VCC_TO_GUEST, &f, &out, now);
	LOAD(&f, v4_ack);
	must_pass(v, VCC_FROM_GUEST, &f, now);
	ck_assert_str_eq(flow(v, now).ecn, "virtual");
}

/*
 * Another guest's SYN flood (60,000 SYNs on interface "flood") against the
 * default table: it churns its own quarter, and IF's virtual-ECN flow keeps
 * its state (its data still leaves ECT(0)).
 */
START_TEST(test_syn_flood_quota)
{
	struct vcc	*v = vcc_new(0, 17);
	struct frame	 f, out;
	uint32_t	 i;

	apply(v, "vcc " IF " ecn virtual");
	open_virtual(v, 0);
	for (i = 0; i < 60000; i++) {
		LOAD(&f, v4_syn);
		fr_sport(&f, 1, (uint16_t)(1024 + i));
		vcc_frame(v, "flood", VCC_FROM_GUEST, f.b, f.len, out.b, 0,
		    1 + i);
	}
	ck_assert_uint_eq(vcc_flow_count(v),
	    VCC_FLOWS_DEFAULT / VCC_IF_SHARE + 1);
	ck_assert_uint_eq(stats(v).over_share,
	    60000 - VCC_FLOWS_DEFAULT / VCC_IF_SHARE);
	ck_assert_uint_eq(stats(v).evictions, 0);
	LOAD(&f, v4_data);
	ck_assert_int_eq(pass(v, VCC_FROM_GUEST, &f, &out, 70000),
	    VCC_REWRITTEN);
	ck_assert_uint_eq(out_ecn(&out), PKT_ECN_ECT0);
	ck_assert_uint_eq(stats(v).picked_up, 0);
	vcc_free(v);
}
END_TEST

/* A full table takes from the interface that holds the most. */
START_TEST(test_table_full_fattest)
{
	struct vcc	*v = vcc_new(4 * VCC_IF_SHARE, 18);
	struct frame	 f, out;
	const char	*ifs[] = { "a", "b", "c", "d" };
	uint16_t	 i, j;

	/* a, b, c hold 4 each, d 3: one more on e fills the table */
	for (i = 0; i < 4; i++)
		for (j = 0; j < (i == 3 ? 3 : 4); j++) {
			LOAD(&f, v4_syn);
			fr_sport(&f, 1, (uint16_t)(1000 + 10 * i + j));
			vcc_frame(v, ifs[i], VCC_FROM_GUEST, f.b, f.len, out.b,
			    0, 10 * i + j);
		}
	LOAD(&f, v4_syn);
	vcc_frame(v, "e", VCC_FROM_GUEST, f.b, f.len, out.b, 0, 100);
	ck_assert_uint_eq(vcc_flow_count(v), 16);
	ck_assert_uint_eq(stats(v).evictions, 0);
	/* e's second: a is the first of those holding the most */
	LOAD(&f, v4_syn);
	fr_sport(&f, 1, 2000);
	vcc_frame(v, "e", VCC_FROM_GUEST, f.b, f.len, out.b, 0, 101);
	ck_assert_uint_eq(vcc_flow_count(v), 16);
	ck_assert_uint_eq(stats(v).evictions, 1);
	LOAD(&f, v4_syn);
	fr_sport(&f, 1, 2001);
	vcc_frame(v, "e", VCC_FROM_GUEST, f.b, f.len, out.b, 0, 102);
	ck_assert_uint_eq(stats(v).evictions, 2);
	/* then b: d (3) is never the one while others hold 4 */
	LOAD(&f, v4_syn);
	fr_sport(&f, 1, 2002);
	vcc_frame(v, "e", VCC_FROM_GUEST, f.b, f.len, out.b, 0, 103);
	ck_assert_uint_eq(stats(v).evictions, 3);
	ck_assert_uint_eq(stats(v).over_share, 0);
	vcc_free(v);
}
END_TEST

/*
 * A virtual-ECN connection seen first mid-stream (its entry evicted, or the
 * daemon restarted): the guest's data is not ECT, the remote's is, so ECN
 * was negotiated on the guest's behalf and the flow is virtual again: the
 * guest's data leaves ECT(0), ECE is hidden and cuts the window, CE toward
 * the guest is cleared.
 */
START_TEST(test_pickup_virtual_ecn)
{
	struct vcc		*v = vcc_new(16, 19);
	struct frame		 f, out;
	struct vcc_flow_info	 fi;

	apply(v, "vcc " IF " ecn virtual");
	LOAD(&f, v4_data);			/* 100 bytes, not ECT */
	must_pass(v, VCC_FROM_GUEST, &f, 1000);
	fi = flow(v, 1000);
	ck_assert_str_eq(fi.state, "picked-up");
	ck_assert_str_eq(fi.ecn, "unknown");
	ck_assert(fi.guest_opened);		/* port 5201 is the server's */
	ck_assert_uint_eq(stats(v).picked_up, 1);
	ck_assert_uint_eq(stats(v).untracked, 0);

	/* The remote's data is ECT(0): negotiated.  It reaches the guest
	 * unchanged while the guest's side is not known twice. */
	LOAD(&f, v4_rdata);
	fr_ecn(&f, PKT_ECN_ECT0);
	must_pass(v, VCC_TO_GUEST, &f, 2000);
	ck_assert_str_eq(flow(v, 2000).ecn, "unknown");

	/* The guest's next data, not ECT either: virtual, sent ECT(0). */
	LOAD(&f, v4_data);
	fr_seq(&f, ISN_G + 1 + 100);
	ck_assert_int_eq(pass(v, VCC_FROM_GUEST, &f, &out, 3000),
	    VCC_REWRITTEN);
	ck_assert_uint_eq(out_ecn(&out), PKT_ECN_ECT0);
	ck_assert_str_eq(flow(v, 3000).ecn, "virtual");

	/* ECE on the remote's ACK: hidden, and a cut. */
	LOAD(&f, v4_dack);
	fr_ack(&f, ISN_G + 1 + 200);
	fr_flags(&f, TCP_ECE, 0);
	ck_assert_int_eq(pass(v, VCC_TO_GUEST, &f, &out, 4000),
	    VCC_REWRITTEN);
	ck_assert_uint_eq(out_flags(&out) & TCP_ECE, 0);
	ck_assert_uint_eq(flow(v, 4000).cuts, 1);

	/* CE on the remote's data: cleared for the guest, ECE echoed. */
	LOAD(&f, v4_rdata);
	fr_seq(&f, ISN_R + 1 + 1000);
	fr_ecn(&f, PKT_ECN_CE);
	ck_assert_int_eq(pass(v, VCC_TO_GUEST, &f, &out, 5000),
	    VCC_REWRITTEN);
	ck_assert_uint_eq(out_ecn(&out), PKT_ECN_NOT_ECT);
	LOAD(&f, v4_ack2);
	ck_assert_int_eq(pass(v, VCC_FROM_GUEST, &f, &out, 6000),
	    VCC_REWRITTEN);
	ck_assert(out_flags(&out) & TCP_ECE);
	vcc_free(v);
}
END_TEST

/* A guest that does ECN itself, picked up: native, hands off. */
START_TEST(test_pickup_native)
{
	struct vcc	*v = vcc_new(16, 20);
	struct frame	 f, out;

	apply(v, "vcc " IF " ecn virtual");
	LOAD(&f, v4_data);
	fr_ecn(&f, PKT_ECN_ECT0);
	must_pass(v, VCC_FROM_GUEST, &f, 1000);
	ck_assert_str_eq(flow(v, 1000).ecn, "native");
	LOAD(&f, v4_dack);
	fr_flags(&f, TCP_ECE, 0);
	ck_assert_int_eq(pass(v, VCC_TO_GUEST, &f, &out, 2000), VCC_PASS);
	/* Without ECT anywhere it stays unknown: nothing is rewritten. */
	LOAD(&f, v4_data);
	fr_sport(&f, 1, 41000);
	must_pass(v, VCC_FROM_GUEST, &f, 3000);
	fr_seq(&f, ISN_G + 1 + 100);
	must_pass(v, VCC_FROM_GUEST, &f, 3100);
	ck_assert_uint_eq(stats(v).picked_up, 2);
	ck_assert_uint_eq(stats(v).rewritten, 0);
	vcc_free(v);
}
END_TEST

/*
 * Window scales of a picked-up flow are estimated from below: the remote
 * advertises 64 (in its real scale 10: 64 KiB) and the guest has 30,000
 * bytes in flight, so the scale is at least 9.  A share of 20,000 bytes
 * then lowers the window to 40 units: 40 KiB in the real scale, above the
 * target (never below it), where with scale 0 it would not be lowered.
 */
START_TEST(test_pickup_scale)
{
	struct vcc		*v = vcc_new(16, 21);
	struct frame		 f, out;
	uint32_t		 off;

	apply(v, "vcc share " IF " window 20000");
	LOAD(&f, v4_data);
	must_pass(v, VCC_FROM_GUEST, &f, 1000);
	LOAD(&f, v4_dack);
	fr_ack(&f, ISN_G + 1 + 100);
	fr_win(&f, 64);
	pass(v, VCC_TO_GUEST, &f, &out, 1100);
	for (off = 100; off < 30100; off += 100) {
		LOAD(&f, v4_data);
		fr_seq(&f, ISN_G + 1 + off);
		must_pass(v, VCC_FROM_GUEST, &f, 1200);
	}
	ck_assert_uint_eq(flow(v, 1200).ws_remote, 9);
	LOAD(&f, v4_dack);
	fr_ack(&f, ISN_G + 1 + 200);
	fr_win(&f, 64);
	ck_assert_int_eq(pass(v, VCC_TO_GUEST, &f, &out, 1300),
	    VCC_REWRITTEN);
	ck_assert_uint_eq(out_win(&out), 40);
	ck_assert_uint_ge(40u << 10, 20000);
	vcc_free(v);
}
END_TEST

static Suite *
vcc_suite(void)
{
	Suite	*s = suite_create("vcc");
	TCase	*tc;

	tc = tcase_create("frames");
	tcase_add_loop_test(tc, test_options, 0, nitems(opts));
	tcase_add_test(tc, test_flow_options);
	tcase_add_test(tc, test_untouched);
	tcase_add_loop_test(tc, test_window_scales, 0, 15);
	tcase_add_test(tc, test_never_raise);
	tcase_add_loop_test(tc, test_virtual_ecn, V_V4, V_V6 + 1);
	tcase_add_test(tc, test_virtual_ecn_server);
	tcase_add_test(tc, test_native_ecn);
	tcase_add_loop_test(tc, test_truncated, 0, nitems(conns));
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_partial);
	suite_add_tcase(s, tc);

	tc = tcase_create("flows");
	tcase_add_test(tc, test_srtt);
	tcase_add_test(tc, test_cut_and_grow);
	tcase_add_test(tc, test_share);
	tcase_add_test(tc, test_rate);
	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_syn_flood_quota);
	tcase_add_test(tc, test_table_full_fattest);
	tcase_add_test(tc, test_pickup_virtual_ecn);
	tcase_add_test(tc, test_pickup_native);
	tcase_add_test(tc, test_pickup_scale);
	suite_add_tcase(s, tc);

	tc = tcase_create("statements");
	tcase_add_loop_test(tc, test_stmt_valid, 0, nitems(vcc_valid));
	tcase_add_loop_test(tc, test_stmt_error, 0, nitems(vcc_errors));
	tcase_add_test(tc, test_config);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner	*sr = srunner_create(vcc_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
