/*
 * tests/wanem: a WAN emulator for the test bed (this kernel has no netem).
 *
 *   wanem [OPTIONS] IFACE_A IFACE_B
 *
 * Forwards Ethernet frames between two interfaces of the namespace it runs
 * in, as a cable would, through an emulated path in each direction: a to b
 * ("ab") and b to a ("ba").  Nothing is bridged in the kernel: the two
 * interfaces carry no addresses and only wanem moves frames between them.
 * Each direction, in this order:
 *
 *   loss        each frame is dropped with probability --loss (Bernoulli,
 *               from a generator seeded by --seed: the same seed and the
 *               same frames lose the same frames)
 *   rate        a bottleneck of --rate bits/s: each frame takes its length
 *               (plus --overhead bytes) times 8 / rate to serialise, after
 *               those before it; the backlog waiting for the bottleneck is
 *               bounded by --queue bytes (or --queue-ms of the rate,
 *               default 50 ms) and a frame that does not fit is dropped at
 *               the tail and counted (queue_drops)
 *   delay       once serialised, the frame leaves --delay ms later, plus a
 *               jitter drawn uniformly from [-jitter, +jitter] (never
 *               before it was serialised).  With --keep-order (default) no
 *               frame leaves before the one ahead of it, so jitter delays
 *               but does not reorder; --no-keep-order lets each frame keep
 *               its own draw, and frames overtake each other as with netem
 *   reorder     a fraction --reorder of the frames goes out of turn:
 *               --reorder-gap ms (default: the delay) earlier than its
 *               turn (never before it was serialised), or with
 *               --reorder-late that much later; such a frame is exempt
 *               from --keep-order, and the frames behind it are not held
 *               back by it
 *
 * Options apply to both directions unless --a2b or --b2a came before them
 * (--both returns to both): `wanem --delay 20 --rate 100mbit --b2a --loss
 * 1 wa wb` delays both ways and loses 1% of b's frames only.
 *
 *   -d, --delay MS           one-way delay (ms, fractions allowed)
 *   -j, --jitter MS          uniform jitter around the delay
 *       --keep-order         jitter never reorders (default)
 *       --no-keep-order      jitter may reorder
 *   -l, --loss PCT           random loss, per cent
 *   -r, --reorder PCT        frames sent out of turn, per cent
 *       --reorder-gap MS     how far out of turn (default: the delay)
 *       --reorder-late       out of turn means late, not early
 *   -R, --rate RATE          bits/s: 100mbit, 100M, 1.5g, 800k, 0 (no limit)
 *   -q, --queue BYTES        bottleneck backlog limit (k, m suffixes: 10^3)
 *       --queue-ms MS        the same as time at the rate (default 50)
 *       --overhead BYTES     added to each frame's length for the rate
 *                            (24 for preamble, FCS and gap; default 0)
 *       --a2b, --b2a, --both the direction the options that follow set
 *   -s, --seed N             random seed (default 1)
 *       --limit FRAMES       frames held at once, both ways (default 32768);
 *                            a frame beyond it is dropped (limit_drops)
 *       --report FILE        where the report goes (default stdout); a
 *                            file is replaced whole (written, then renamed)
 *       --realtime           SCHED_FIFO, so that the machine's load delays
 *                            wanem's timers less
 *   -h, --help
 *
 * The report, on SIGUSR1 and on exit (SIGTERM, SIGINT), one line per
 * direction of `wanem DIR key=value ...`, then `wanem end`:
 *
 *   frames_in bytes_in    frames read from the direction's source
 *   frames_out bytes_out  frames sent on to the other interface
 *   lost                  dropped by --loss
 *   reordered             sent out of turn by --reorder
 *   queue_drops           tail-dropped at the bottleneck
 *   limit_drops           no room among the --limit frames held
 *   oversize              larger than wanem's buffers, or offload
 *                         super-frames (it does not cut them: turn off
 *                         TSO/GSO on the interfaces' peers and GRO here)
 *   tx_errors             sends that failed
 *   held                  in the path now (on exit: dropped with wanem)
 *   kernel_drops          dropped by the kernel before wanem read them
 *                         (the packet socket's buffer was full)
 *   late_us_mean late_us_p50 late_us_p99 late_us_max
 *                         wanem's own added delay: how long after its
 *                         due time each frame was sent, the due time
 *                         counted from the kernel's receive timestamp
 *                         (the frame's arrival on the interface): wake-up,
 *                         read and send latency, in microseconds
 *
 * frames_in = frames_out + lost + queue_drops + limit_drops + oversize +
 * tx_errors + held, always.  Frames that the emulator itself sends (the
 * kernel shows a packet socket outgoing frames too) are not read back
 * (PACKET_IGNORE_OUTGOING, and the packet type where that is missing).
 *
 * Design: one thread, one epoll set of the two packet sockets, a timerfd
 * and a signalfd.  Frames are read in batches (recvmmsg) into a pool of
 * fixed buffers, each given its due time, and kept in a binary heap by due
 * time (and arrival, so that equal due times keep their order); the timerfd
 * is armed, absolutely, for the earliest, and every frame due is sent, in
 * batches per interface (sendmmsg).  The sockets use PACKET_VNET_HDR, so
 * that a frame whose checksum the sender left to offload keeps that state
 * across (the peers' checksum offload may stay on); 802.1Q tags the kernel
 * took off are put back.  The bottleneck is virtual: its backlog is the
 * time until it is free times the rate, so there is no second queue.
 */
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/prctl.h>

#include <arpa/inet.h>
#include <linux/ethtool.h>
#include <linux/if.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <linux/virtio_net.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"

#define WANEM_BATCH		64
#define WANEM_HEADROOM		4	/* room to put a VLAN tag back */
#define WANEM_LATE_BUCKETS	20000	/* microseconds; then one overflow bucket */
#define WANEM_CMSG_SPACE	(CMSG_SPACE(sizeof(struct tpacket_auxdata)) + \
				 CMSG_SPACE(sizeof(struct timespec)) + 64)

enum { WANEM_AB, WANEM_BA };
enum { RNG_LOSS, RNG_JITTER, RNG_REORDER, RNG_N };

struct wanem_path {
	uint64_t	 delay_ns;
	uint64_t	 jitter_ns;
	int		 keep_order;
	double		 loss;		/* probability */
	double		 reorder;	/* probability */
	int64_t		 reorder_gap_ns;	/* -1: the delay */
	int		 reorder_late;
	double		 rate;		/* bits/s, 0: none */
	uint64_t	 queue_bytes;	/* 0: from queue_ms */
	double		 queue_ms;
	uint32_t	 overhead;
};

/* Microsecond histogram of a latency. */
struct wanem_hist {
	uint64_t	 n, sum_ns, max_ns;
	uint32_t	 bucket[WANEM_LATE_BUCKETS + 1];
};

struct wanem_stats {
	uint64_t	 frames_in, bytes_in, frames_out, bytes_out;
	uint64_t	 lost, reordered, queue_drops, limit_drops, oversize;
	uint64_t	 tx_errors, kernel_drops, held;
	struct wanem_hist late;		/* due time to send */
	struct wanem_hist rx;		/* kernel's timestamp to read */
};

struct wanem_dir {
	const char		*name;
	struct wanem_path	 path;
	struct wanem_stats	 st;
	uint64_t		 rng[RNG_N];
	uint64_t		 busy_until;	/* the bottleneck is free then */
	uint64_t		 last_due;	/* for keep_order */
	int			 in, out;	/* socket indices */
};

struct wanem_frame {
	uint64_t		 due;
	uint64_t		 seq;
	uint32_t		 len;
	uint8_t			 dir;
	uint8_t			 off;		/* where in data the frame starts */
	struct virtio_net_hdr	 vh;
	uint8_t			*data;		/* WANEM_HEADROOM, then the frame */
};

struct wanem_txq {
	struct mmsghdr		 msg[WANEM_BATCH];
	struct iovec		 iov[WANEM_BATCH][2];
	uint32_t		 frame[WANEM_BATCH];
	int			 n;
};

struct wanem {
	const char		*ifname[2];
	int			 ifindex[2];
	int			 sock[2];
	int			 ep, tfd, sfd;
	struct wanem_dir	 dir[2];
	uint64_t		 seed;
	const char		*report;
	int			 realtime;
	uint32_t		 limit;
	size_t			 slot;		/* bytes per frame buffer */
	struct wanem_frame	*frames;
	uint8_t			*buffers;
	uint32_t		*free;		/* stack of free frame indices */
	uint32_t		 nfree;
	uint32_t		*heap;		/* frame indices by (due, seq) */
	uint32_t		 nheap;
	uint64_t		 seq;
	uint64_t		 armed;		/* the timerfd's expiry, 0: none */
	int			 warned_oversize;
	struct wanem_txq	 txq[2];
	/* receive batch */
	struct mmsghdr		 rmsg[WANEM_BATCH];
	struct iovec		 riov[WANEM_BATCH][2];
	struct sockaddr_ll	 rname[WANEM_BATCH];
	uint8_t			 rcmsg[WANEM_BATCH][WANEM_CMSG_SPACE];
	uint32_t		 rframe[WANEM_BATCH];
	struct virtio_net_hdr	 scratch_vh;
	uint8_t			*scratch;
};

static void
wanem_die(const char *what)
{
	fprintf(stderr, "wanem: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void
wanem_usage_fail(const char *fmt, const char *arg)
{
	fprintf(stderr, "wanem: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (wanem --help)\n");
	exit(2);
}

static uint64_t
mono_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int64_t
real_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* splitmix64: small, fast and good enough for loss and jitter draws. */
static uint64_t
rng_next(uint64_t *s)
{
	uint64_t	 z;

	z = (*s += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* A uniform double in [0, 1). */
static double
rng_unit(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) * 0x1.0p-53;
}

/* ---- options */

static double
parse_num(const char *opt, const char *arg, double lo, double hi)
{
	char	*end;
	double	 v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno != 0 || end == arg || *end != '\0' || !isfinite(v) ||
	    v < lo || v > hi) {
		fprintf(stderr, "wanem: %s: '%s' is not a number from %g to %g"
		    " (wanem --help)\n", opt, arg, lo, hi);
		exit(2);
	}
	return v;
}

/*
 * A number with an optional k, m or g (10^3, 10^6, 10^9) and then, for a
 * rate, "bit" or "bps": "100mbit", "1.5g", "800k", "64000".
 */
static double
parse_scaled(const char *opt, const char *arg, int rate, double lo, double hi)
{
	char	*end;
	double	 v, mul = 1;

	errno = 0;
	v = strtod(arg, &end);
	if (errno == 0 && end != arg && isfinite(v)) {
		switch (*end) {
		case 'k': case 'K': mul = 1e3; end++; break;
		case 'm': case 'M': mul = 1e6; end++; break;
		case 'g': case 'G': mul = 1e9; end++; break;
		default: break;
		}
		if (rate && (strcmp(end, "bit") == 0 ||
		    strcmp(end, "bps") == 0 || strcmp(end, "b") == 0))
			end += strlen(end);
		v *= mul;
		if (*end == '\0' && v >= lo && v <= hi)
			return v;
	}
	fprintf(stderr, "wanem: %s: '%s' is not %s from %g to %g (wanem --help)\n",
	    opt, arg, rate ? "a rate in bits/s (100mbit, 1.5g, 800k)" :
	    "a size in bytes (64000, 64k, 1m)", lo, hi);
	exit(2);
}

static uint64_t
ms_to_ns(double ms)
{
	return (uint64_t)llround(ms * 1e6);
}

static void
usage(FILE *f)
{
	fprintf(f,
"usage: wanem [OPTIONS] IFACE_A IFACE_B\n"
"Forwards Ethernet frames between two interfaces through an emulated path,\n"
"each direction (a to b, b to a) on its own: loss, then a rate-limited\n"
"bottleneck with a bounded queue, then delay and jitter, and reordering.\n"
"Options set both directions unless --a2b or --b2a came before them.\n"
"  -d, --delay MS          one-way delay in ms (fractions allowed)\n"
"  -j, --jitter MS         uniform jitter in [-MS, +MS] around the delay\n"
"      --keep-order        jitter never reorders frames (default)\n"
"      --no-keep-order     each frame keeps its own jitter: frames overtake\n"
"  -l, --loss PCT          random loss, per cent\n"
"  -r, --reorder PCT       per cent of frames sent out of turn\n"
"      --reorder-gap MS    how far out of turn (default: the delay)\n"
"      --reorder-late      out of turn is late (default: early)\n"
"  -R, --rate RATE         bottleneck bits/s: 100mbit, 100M, 1.5g, 0 (none)\n"
"  -q, --queue BYTES       bottleneck queue limit in bytes (k, m: 10^3, 10^6)\n"
"      --queue-ms MS       the queue limit as time at the rate (default 50)\n"
"      --overhead BYTES    added to each frame's length for the rate\n"
"      --a2b | --b2a | --both   the direction later options set\n"
"  -s, --seed N            random seed for loss, jitter, reordering (1)\n"
"      --limit FRAMES      frames held at once, both ways (32768)\n"
"      --report FILE       write the report there (default stdout)\n"
"      --realtime          run SCHED_FIFO (fewer late wake-ups under load)\n"
"  -h, --help\n"
"The report (SIGUSR1, and on exit by SIGTERM or SIGINT): one line per\n"
"direction, 'wanem ab|ba key=value ...' (frames_in bytes_in frames_out\n"
"bytes_out lost reordered queue_drops limit_drops oversize tx_errors held\n"
"kernel_drops late_us_mean late_us_p50 late_us_p99 late_us_max), then\n"
"'wanem end'.  frames_in = frames_out + lost + queue_drops + limit_drops +\n"
"oversize + tx_errors + held.\n");
}

enum {
	OPT_KEEP = 256, OPT_NOKEEP, OPT_GAP, OPT_LATE, OPT_QMS, OPT_OVERHEAD,
	OPT_A2B, OPT_B2A, OPT_BOTH, OPT_LIMIT, OPT_REPORT, OPT_RT
};

static void
wanem_options(struct wanem *w, int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "delay", required_argument, NULL, 'd' },
		{ "jitter", required_argument, NULL, 'j' },
		{ "keep-order", no_argument, NULL, OPT_KEEP },
		{ "no-keep-order", no_argument, NULL, OPT_NOKEEP },
		{ "loss", required_argument, NULL, 'l' },
		{ "reorder", required_argument, NULL, 'r' },
		{ "reorder-gap", required_argument, NULL, OPT_GAP },
		{ "reorder-late", no_argument, NULL, OPT_LATE },
		{ "rate", required_argument, NULL, 'R' },
		{ "queue", required_argument, NULL, 'q' },
		{ "queue-ms", required_argument, NULL, OPT_QMS },
		{ "overhead", required_argument, NULL, OPT_OVERHEAD },
		{ "a2b", no_argument, NULL, OPT_A2B },
		{ "b2a", no_argument, NULL, OPT_B2A },
		{ "both", no_argument, NULL, OPT_BOTH },
		{ "seed", required_argument, NULL, 's' },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "report", required_argument, NULL, OPT_REPORT },
		{ "realtime", no_argument, NULL, OPT_RT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int	 c, d, lo = 0, hi = 1;
	double	 v;

	for (d = 0; d < 2; d++) {
		w->dir[d].path.keep_order = 1;
		w->dir[d].path.reorder_gap_ns = -1;
		w->dir[d].path.queue_ms = 50;
	}
	w->seed = 1;
	w->limit = 32768;
	while ((c = getopt_long(argc, argv, "d:j:l:r:R:q:s:h", longopts,
	    NULL)) != -1) {
		for (d = lo; d <= hi; d++) {
			struct wanem_path	*p = &w->dir[d].path;

			switch (c) {
			case 'd':
				p->delay_ns = ms_to_ns(parse_num("--delay",
				    optarg, 0, 100000));
				break;
			case 'j':
				p->jitter_ns = ms_to_ns(parse_num("--jitter",
				    optarg, 0, 100000));
				break;
			case OPT_KEEP: p->keep_order = 1; break;
			case OPT_NOKEEP: p->keep_order = 0; break;
			case 'l':
				p->loss = parse_num("--loss", optarg, 0, 100) /
				    100;
				break;
			case 'r':
				p->reorder = parse_num("--reorder", optarg, 0,
				    100) / 100;
				break;
			case OPT_GAP:
				p->reorder_gap_ns = (int64_t)ms_to_ns(parse_num(
				    "--reorder-gap", optarg, 0, 100000));
				break;
			case OPT_LATE: p->reorder_late = 1; break;
			case 'R':
				p->rate = parse_scaled("--rate", optarg, 1, 0,
				    1e12);
				break;
			case 'q':
				p->queue_bytes = (uint64_t)parse_scaled(
				    "--queue", optarg, 0, 1, 1e12);
				break;
			case OPT_QMS:
				p->queue_ms = parse_num("--queue-ms", optarg,
				    0.001, 100000);
				p->queue_bytes = 0;
				break;
			case OPT_OVERHEAD:
				p->overhead = (uint32_t)parse_num("--overhead",
				    optarg, 0, 1000);
				break;
			default:
				break;
			}
		}
		switch (c) {
		case OPT_A2B: lo = hi = WANEM_AB; break;
		case OPT_B2A: lo = hi = WANEM_BA; break;
		case OPT_BOTH: lo = 0; hi = 1; break;
		case 's':
			v = parse_num("--seed", optarg, 0, 9007199254740992.0);
			w->seed = (uint64_t)v;
			break;
		case OPT_LIMIT:
			w->limit = (uint32_t)parse_num("--limit", optarg, 64,
			    4194304);
			break;
		case OPT_REPORT: w->report = optarg; break;
		case OPT_RT: w->realtime = 1; break;
		case 'h': usage(stdout); exit(0);
		case '?': fprintf(stderr, "wanem: see wanem --help\n"); exit(2);
		default: break;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "wanem: two interfaces needed (wanem --help)\n");
		exit(2);
	}
	w->ifname[0] = argv[optind];
	w->ifname[1] = argv[optind + 1];
	if (strcmp(w->ifname[0], w->ifname[1]) == 0)
		wanem_usage_fail("'%s' twice: two interfaces needed",
		    w->ifname[0]);
}

/* ---- the heap of frames by due time */

static int
heap_before(const struct wanem *w, uint32_t a, uint32_t b)
{
	const struct wanem_frame *fa = &w->frames[a], *fb = &w->frames[b];

	return fa->due < fb->due || (fa->due == fb->due && fa->seq < fb->seq);
}

static void
heap_push(struct wanem *w, uint32_t f)
{
	uint32_t	 i = w->nheap++, parent;

	while (i > 0) {
		parent = (i - 1) / 2;
		if (!heap_before(w, f, w->heap[parent]))
			break;
		w->heap[i] = w->heap[parent];
		i = parent;
	}
	w->heap[i] = f;
}

static uint32_t
heap_pop(struct wanem *w)
{
	uint32_t	 top = w->heap[0], last = w->heap[--w->nheap];
	uint32_t	 i = 0, c;

	while ((c = 2 * i + 1) < w->nheap) {
		if (c + 1 < w->nheap && heap_before(w, w->heap[c + 1],
		    w->heap[c]))
			c++;
		if (!heap_before(w, w->heap[c], last))
			break;
		w->heap[i] = w->heap[c];
		i = c;
	}
	if (w->nheap > 0)
		w->heap[i] = last;
	return top;
}

/* ---- the report */

static void
hist_add(struct wanem_hist *h, uint64_t ns)
{
	uint64_t	 us = ns / 1000;

	h->n++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
	h->bucket[us < WANEM_LATE_BUCKETS ? us : WANEM_LATE_BUCKETS]++;
}

static uint64_t
hist_quantile(const struct wanem_hist *h, double q)
{
	uint64_t	 want, n = 0;
	uint32_t	 i;

	if (h->n == 0)
		return 0;
	want = (uint64_t)ceil(q * (double)h->n);
	if (want == 0)
		want = 1;
	for (i = 0; i <= WANEM_LATE_BUCKETS; i++) {
		n += h->bucket[i];
		if (n >= want)
			return i;
	}
	return WANEM_LATE_BUCKETS;
}

static void
hist_print(FILE *f, const char *name, const struct wanem_hist *h)
{
	fprintf(f, " %s_us_mean=%.1f %s_us_p50=%" PRIu64 " %s_us_p99=%" PRIu64
	    " %s_us_max=%" PRIu64, name, h->n ? (double)h->sum_ns / 1e3 /
	    (double)h->n : 0.0, name, hist_quantile(h, 0.5), name,
	    hist_quantile(h, 0.99), name, h->max_ns / 1000);
}

static void
wanem_kernel_drops(struct wanem *w)
{
	struct tpacket_stats	 ks;
	socklen_t		 len;
	int			 s;

	/* Reading the statistics resets them: they are added up here. */
	for (s = 0; s < 2; s++) {
		len = sizeof(ks);
		if (getsockopt(w->sock[s], SOL_PACKET, PACKET_STATISTICS, &ks,
		    &len) == 0)
			w->dir[s == 0 ? WANEM_AB : WANEM_BA].st.kernel_drops +=
			    ks.tp_drops;
	}
}

static void
wanem_report_to(struct wanem *w, FILE *f)
{
	int	 d;

	wanem_kernel_drops(w);
	for (d = 0; d < 2; d++) {
		const struct wanem_stats *st = &w->dir[d].st;

		fprintf(f, "wanem %s frames_in=%" PRIu64 " bytes_in=%" PRIu64
		    " frames_out=%" PRIu64 " bytes_out=%" PRIu64
		    " lost=%" PRIu64 " reordered=%" PRIu64
		    " queue_drops=%" PRIu64 " limit_drops=%" PRIu64
		    " oversize=%" PRIu64 " tx_errors=%" PRIu64
		    " held=%" PRIu64 " kernel_drops=%" PRIu64,
		    w->dir[d].name, st->frames_in, st->bytes_in,
		    st->frames_out, st->bytes_out, st->lost, st->reordered,
		    st->queue_drops, st->limit_drops, st->oversize,
		    st->tx_errors, st->held, st->kernel_drops);
		hist_print(f, "late", &st->late);
		hist_print(f, "rx", &st->rx);
		fputc('\n', f);
	}
	fprintf(f, "wanem end\n");
}

static void
wanem_report(struct wanem *w)
{
	char	 tmp[4096];
	FILE	*f;

	if (w->report == NULL) {
		wanem_report_to(w, stdout);
		fflush(stdout);
		return;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", w->report) >=
	    (int)sizeof(tmp)) {
		fprintf(stderr, "wanem: --report: name too long\n");
		return;
	}
	if ((f = fopen(tmp, "w")) == NULL) {
		fprintf(stderr, "wanem: %s: %s\n", tmp, strerror(errno));
		return;
	}
	wanem_report_to(w, f);
	if (fclose(f) != 0 || rename(tmp, w->report) != 0)
		fprintf(stderr, "wanem: %s: %s\n", w->report, strerror(errno));
}

/* ---- set-up */

/* Turns off GRO and LRO on our own interface: wanem wants wire frames. */
static void
wanem_no_offload(int fd, const char *ifname)
{
	struct ethtool_value	 ev;
	struct ifreq		 ifr;
	uint32_t		 cmds[] = { ETHTOOL_SGRO };
	size_t			 i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		memset(&ifr, 0, sizeof(ifr));
		memset(&ev, 0, sizeof(ev));
		ev.cmd = cmds[i];
		ev.data = 0;
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
		ifr.ifr_data = (void *)&ev;
		if (ioctl(fd, SIOCETHTOOL, &ifr) == -1 && errno != EOPNOTSUPP)
			fprintf(stderr, "wanem: %s: cannot turn GRO off: %s\n",
			    ifname, strerror(errno));
	}
}

static int
wanem_socket(struct wanem *w, int i)
{
	struct packet_mreq	 mr;
	struct sockaddr_ll	 sll;
	struct ifreq		 ifr;
	int			 fd, one = 1, buf = 8 << 20;

	if ((fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		wanem_die("packet socket");
	if (strlen(w->ifname[i]) >= IFNAMSIZ) {
		fprintf(stderr, "wanem: %s: interface name too long\n",
		    w->ifname[i]);
		exit(1);
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", w->ifname[i]);
	if (ioctl(fd, SIOCGIFINDEX, &ifr) == -1)
		wanem_die(w->ifname[i]);
	w->ifindex[i] = ifr.ifr_ifindex;
	if (ioctl(fd, SIOCGIFMTU, &ifr) == -1)
		wanem_die(w->ifname[i]);
	if ((size_t)ifr.ifr_mtu + 64 > w->slot)
		w->slot = (size_t)ifr.ifr_mtu + 64;
	wanem_no_offload(fd, w->ifname[i]);
	if (setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one,
	    sizeof(one)) == -1)
		wanem_die("PACKET_VNET_HDR");
	if (setsockopt(fd, SOL_PACKET, PACKET_AUXDATA, &one,
	    sizeof(one)) == -1)
		wanem_die("PACKET_AUXDATA");
	/* Older kernels lack it: the packet type still tells (below). */
	(void)setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one,
	    sizeof(one));
	(void)setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one,
	    sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one,
	    sizeof(one)) == -1)
		wanem_die("SO_TIMESTAMPNS");
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) == -1)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)) == -1)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = w->ifindex[i];
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) == -1)
		wanem_die(w->ifname[i]);
	memset(&mr, 0, sizeof(mr));
	mr.mr_ifindex = w->ifindex[i];
	mr.mr_type = PACKET_MR_PROMISC;
	if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr,
	    sizeof(mr)) == -1)
		wanem_die("promiscuous mode");
	return fd;
}

static void
wanem_epoll_add(struct wanem *w, int fd)
{
	struct epoll_event	 ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.fd = fd;
	if (epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev) == -1)
		wanem_die("epoll_ctl");
}

static void
wanem_setup(struct wanem *w)
{
	struct sched_param	 sp;
	sigset_t		 sigs;
	uint32_t		 i;
	int			 d, k;

	w->dir[WANEM_AB].name = "ab";
	w->dir[WANEM_AB].in = 0;
	w->dir[WANEM_AB].out = 1;
	w->dir[WANEM_BA].name = "ba";
	w->dir[WANEM_BA].in = 1;
	w->dir[WANEM_BA].out = 0;
	w->slot = 1600;
	w->sock[0] = wanem_socket(w, 0);
	w->sock[1] = wanem_socket(w, 1);
	w->slot += WANEM_HEADROOM;
	for (d = 0; d < 2; d++) {
		struct wanem_path	*p = &w->dir[d].path;

		for (k = 0; k < RNG_N; k++) {
			uint64_t s = w->seed ^ (0x5851f42d4c957f2du *
			    (uint64_t)(d * RNG_N + k + 1));

			w->dir[d].rng[k] = rng_next(&s);
		}
		if (p->rate > 0 && p->queue_bytes == 0)
			p->queue_bytes = (uint64_t)(p->rate / 8 *
			    p->queue_ms / 1000);
		/* At least one largest frame fits. */
		if (p->rate > 0 && p->queue_bytes < w->slot)
			p->queue_bytes = w->slot;
		if (p->reorder_gap_ns < 0)
			p->reorder_gap_ns = (int64_t)p->delay_ns;
	}
	w->frames = calloc(w->limit, sizeof(*w->frames));
	w->buffers = malloc((size_t)w->limit * w->slot);
	w->free = calloc(w->limit, sizeof(*w->free));
	w->heap = calloc(w->limit, sizeof(*w->heap));
	w->scratch = malloc(w->slot);
	if (!w->frames || !w->buffers || !w->free || !w->heap || !w->scratch)
		wanem_die("memory for the frames");
	for (i = 0; i < w->limit; i++) {
		w->frames[i].data = w->buffers + (size_t)i * w->slot;
		w->free[i] = w->limit - 1 - i;
	}
	w->nfree = w->limit;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &sigs, NULL) == -1)
		wanem_die("sigprocmask");
	if ((w->sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC)) == -1)
		wanem_die("signalfd");
	if ((w->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK |
	    TFD_CLOEXEC)) == -1)
		wanem_die("timerfd");
	if ((w->ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
		wanem_die("epoll");
	wanem_epoll_add(w, w->sock[0]);
	wanem_epoll_add(w, w->sock[1]);
	wanem_epoll_add(w, w->tfd);
	wanem_epoll_add(w, w->sfd);
	(void)prctl(PR_SET_TIMERSLACK, 1UL);
	if (w->realtime) {
		memset(&sp, 0, sizeof(sp));
		sp.sched_priority = 10;
		if (sched_setscheduler(0, SCHED_FIFO, &sp) == -1)
			fprintf(stderr, "wanem: --realtime: %s (running as"
			    " before)\n", strerror(errno));
	}
}

/* ---- the path */

/*
 * The frame's due time from its arrival, or 0 when the path drops it
 * (counted).  In order: loss, the bottleneck, delay and jitter, reordering.
 */
static uint64_t
wanem_schedule(struct wanem_dir *dr, uint64_t arrival, uint32_t len)
{
	struct wanem_path	*p = &dr->path;
	uint64_t		 sent = arrival, due, backlog, gap;
	double			 j;

	if (p->loss > 0 && rng_unit(&dr->rng[RNG_LOSS]) < p->loss) {
		dr->st.lost++;
		return 0;
	}
	if (p->rate > 0) {
		backlog = dr->busy_until > arrival ? (uint64_t)((double)
		    (dr->busy_until - arrival) * p->rate / 8e9) : 0;
		if (backlog + len > p->queue_bytes) {
			dr->st.queue_drops++;
			return 0;
		}
		if (dr->busy_until < arrival)
			dr->busy_until = arrival;
		dr->busy_until += (uint64_t)llround((double)(len +
		    p->overhead) * 8e9 / p->rate);
		sent = dr->busy_until;
	}
	due = sent + p->delay_ns;
	if (p->jitter_ns > 0) {
		j = (2 * rng_unit(&dr->rng[RNG_JITTER]) - 1) *
		    (double)p->jitter_ns;
		if (j < 0 && (uint64_t)-j > due - sent)
			due = sent;
		else
			due = (uint64_t)((int64_t)due + (int64_t)j);
	}
	if (p->reorder > 0 && rng_unit(&dr->rng[RNG_REORDER]) < p->reorder) {
		dr->st.reordered++;
		gap = (uint64_t)p->reorder_gap_ns;
		if (p->reorder_late)
			due += gap;
		else
			due = due - sent > gap ? due - gap : sent;
		return due;	/* out of turn: not held to, nor holding, order */
	}
	if (p->keep_order) {
		if (due < dr->last_due)
			due = dr->last_due;
		dr->last_due = due;
	}
	return due;
}

static void
wanem_txq_flush(struct wanem *w, int s)
{
	struct wanem_txq	*q = &w->txq[s];
	struct wanem_dir	*dr;
	struct wanem_frame	*f;
	int			 i = 0, n;

	while (i < q->n) {
		n = sendmmsg(w->sock[s], q->msg + i, (unsigned)(q->n - i), 0);
		if (n <= 0) {
			if (n == -1 && errno == EINTR)
				continue;
			/* The first message failed: count it, go on after it. */
			f = &w->frames[q->frame[i]];
			w->dir[f->dir].st.tx_errors++;
			w->dir[f->dir].st.held--;
			w->free[w->nfree++] = q->frame[i];
			i++;
			continue;
		}
		for (; n > 0; n--, i++) {
			f = &w->frames[q->frame[i]];
			dr = &w->dir[f->dir];
			dr->st.frames_out++;
			dr->st.bytes_out += f->len;
			dr->st.held--;
			w->free[w->nfree++] = q->frame[i];
		}
	}
	q->n = 0;
}

static void
wanem_release(struct wanem *w)
{
	struct wanem_frame	*f;
	struct wanem_stats	*st;
	struct wanem_txq	*q;
	uint64_t		 now = mono_ns();
	uint32_t		 fi;
	int			 s;

	while (w->nheap > 0 && w->frames[w->heap[0]].due <= now) {
		fi = heap_pop(w);
		f = &w->frames[fi];
		st = &w->dir[f->dir].st;
		hist_add(&st->late, now - f->due);
		s = w->dir[f->dir].out;
		q = &w->txq[s];
		q->frame[q->n] = fi;
		q->iov[q->n][0].iov_base = &f->vh;
		q->iov[q->n][0].iov_len = sizeof(f->vh);
		q->iov[q->n][1].iov_base = f->data + f->off;
		q->iov[q->n][1].iov_len = f->len;
		memset(&q->msg[q->n], 0, sizeof(q->msg[q->n]));
		q->msg[q->n].msg_hdr.msg_iov = q->iov[q->n];
		q->msg[q->n].msg_hdr.msg_iovlen = 2;
		if (++q->n == WANEM_BATCH) {
			wanem_txq_flush(w, s);
			now = mono_ns();
		}
	}
	wanem_txq_flush(w, 0);
	wanem_txq_flush(w, 1);
}

static void
wanem_arm(struct wanem *w)
{
	struct itimerspec	 its;
	uint64_t		 due = w->nheap ? w->frames[w->heap[0]].due : 0;

	if (due == w->armed)
		return;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(due / 1000000000u);
	its.it_value.tv_nsec = (long)(due % 1000000000u);
	if (timerfd_settime(w->tfd, TFD_TIMER_ABSTIME, &its, NULL) == -1)
		wanem_die("timerfd_settime");
	w->armed = due;
}

/*
 * Where the frame arrived: the kernel's receive timestamp (real time) moved
 * to the monotonic clock, or now when there is none or it is not sane.
 */
static uint64_t
wanem_arrival(struct msghdr *mh, uint64_t now, int64_t real_minus_mono,
    struct tpacket_auxdata **aux)
{
	struct cmsghdr	*c;
	struct timespec	 ts;
	int64_t		 t;
	uint64_t	 at = now;

	*aux = NULL;
	for (c = CMSG_FIRSTHDR(mh); c != NULL; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level == SOL_PACKET &&
		    c->cmsg_type == PACKET_AUXDATA &&
		    c->cmsg_len >= CMSG_LEN(sizeof(**aux)))
			*aux = (struct tpacket_auxdata *)(void *)CMSG_DATA(c);
		else if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_TIMESTAMPNS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(ts))) {
			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			t = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec -
			    real_minus_mono;
			if (t > 0 && (uint64_t)t <= now &&
			    now - (uint64_t)t < 1000000000u)
				at = (uint64_t)t;
		}
	}
	return at;
}

/* Puts back the 802.1Q tag the kernel took into the auxiliary data. */
static int
wanem_vlan_back(struct wanem_frame *f, const struct tpacket_auxdata *aux)
{
	uint8_t		*p = f->data;
	uint16_t	 tpid = ETH_P_8021Q;

	if (aux == NULL || !(aux->tp_status & TP_STATUS_VLAN_VALID))
		return 0;
	if (f->len < 12)
		return -1;
	if (aux->tp_status & TP_STATUS_VLAN_TPID_VALID)
		tpid = aux->tp_vlan_tpid;
	memmove(p, p + WANEM_HEADROOM, 12);
	put_u16(p + 12, tpid);
	put_u16(p + 14, aux->tp_vlan_tci);
	f->off = 0;		/* the frame now starts in the headroom */
	f->len += 4;
	if (f->vh.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)
		f->vh.csum_start = (uint16_t)(f->vh.csum_start + 4);
	return 1;
}

static void
wanem_rx(struct wanem *w, int s)
{
	struct wanem_dir	*dr = &w->dir[s == 0 ? WANEM_AB : WANEM_BA];
	struct tpacket_auxdata	*aux;
	struct wanem_frame	*f;
	struct msghdr		*mh;
	struct rbuf		 rb;
	const uint8_t		*hdr;
	uint64_t		 now, at, due;
	int64_t			 rmm;
	uint32_t		 len;
	int			 i, n, npool, round;

	for (round = 0; round < 8; round++) {
		npool = w->nfree < WANEM_BATCH ? (int)w->nfree : WANEM_BATCH;
		for (i = 0; i < WANEM_BATCH; i++) {
			mh = &w->rmsg[i].msg_hdr;
			memset(mh, 0, sizeof(*mh));
			if (i < npool) {
				w->rframe[i] = w->free[--w->nfree];
				f = &w->frames[w->rframe[i]];
				w->riov[i][0].iov_base = &f->vh;
				w->riov[i][1].iov_base = f->data +
				    WANEM_HEADROOM;
			} else {
				w->riov[i][0].iov_base = &w->scratch_vh;
				w->riov[i][1].iov_base = w->scratch +
				    WANEM_HEADROOM;
			}
			w->riov[i][0].iov_len = sizeof(struct virtio_net_hdr);
			w->riov[i][1].iov_len = w->slot - WANEM_HEADROOM;
			mh->msg_iov = w->riov[i];
			mh->msg_iovlen = 2;
			mh->msg_name = &w->rname[i];
			mh->msg_namelen = sizeof(w->rname[i]);
			mh->msg_control = w->rcmsg[i];
			mh->msg_controllen = sizeof(w->rcmsg[i]);
		}
		n = recvmmsg(w->sock[s], w->rmsg, WANEM_BATCH, MSG_DONTWAIT,
		    NULL);
		now = mono_ns();
		rmm = real_ns() - (int64_t)now;
		if (n < 0)
			n = 0;
		for (i = 0; i < n; i++) {
			mh = &w->rmsg[i].msg_hdr;
			if (w->rname[i].sll_pkttype == PACKET_OUTGOING)
				continue;	/* our own, or the namespace's */
			dr->st.frames_in++;
			len = w->rmsg[i].msg_len;
			if (len >= sizeof(struct virtio_net_hdr))
				len -= sizeof(struct virtio_net_hdr);
			else
				len = 0;
			dr->st.bytes_in += len;
			if (i >= npool) {
				dr->st.limit_drops++;
				continue;
			}
			f = &w->frames[w->rframe[i]];
			/* The header's first byte: flags; the second: GSO type. */
			rbuf_init(&rb, &f->vh, sizeof(f->vh));
			if (rbuf_get_ptr(&rb, 2, &hdr) == -1 ||
			    (mh->msg_flags & MSG_TRUNC) ||
			    hdr[1] != VIRTIO_NET_HDR_GSO_NONE || len == 0) {
				dr->st.oversize++;
				if (!w->warned_oversize++)
					fprintf(stderr, "wanem: %s: a frame larger"
					    " than %zu bytes or a super-frame"
					    " (turn off TSO/GSO on the peer,"
					    " GRO here); dropped and counted\n",
					    w->ifname[s], w->slot -
					    WANEM_HEADROOM);
				continue;
			}
			at = wanem_arrival(mh, now, rmm, &aux);
			hist_add(&dr->st.rx, now - at);
			f->len = len;
			f->off = WANEM_HEADROOM;
			f->dir = (uint8_t)(dr - w->dir);
			if (wanem_vlan_back(f, aux) == -1) {
				dr->st.oversize++;
				continue;
			}
			if ((due = wanem_schedule(dr, at, f->len)) == 0)
				continue;
			f->due = due;
			f->seq = w->seq++;
			dr->st.held++;
			heap_push(w, w->rframe[i]);
			w->rframe[i] = UINT32_MAX;
		}
		/* Buffers that got no frame, or a dropped one, go back. */
		for (i = 0; i < npool; i++)
			if (w->rframe[i] != UINT32_MAX)
				w->free[w->nfree++] = w->rframe[i];
		if (n < WANEM_BATCH)
			break;
	}
}

static void
wanem_free(struct wanem *w)
{
	close(w->sock[0]);
	close(w->sock[1]);
	close(w->ep);
	close(w->tfd);
	close(w->sfd);
	free(w->frames);
	free(w->buffers);
	free(w->free);
	free(w->heap);
	free(w->scratch);
	free(w);
}

int
main(int argc, char **argv)
{
	struct epoll_event		 evs[8];
	struct signalfd_siginfo		 si;
	struct wanem			*w;
	uint64_t			 expirations;
	int				 i, n, quit = 0;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		wanem_die("memory");
	wanem_options(w, argc, argv);
	wanem_setup(w);
	fprintf(stderr, "wanem: forwarding %s <-> %s (seed %" PRIu64 ")\n",
	    w->ifname[0], w->ifname[1], w->seed);
	while (!quit) {
		n = epoll_wait(w->ep, evs, 8, -1);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			wanem_die("epoll_wait");
		}
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd == w->sock[0])
				wanem_rx(w, 0);
			else if (evs[i].data.fd == w->sock[1])
				wanem_rx(w, 1);
			else if (evs[i].data.fd == w->tfd) {
				if (read(w->tfd, &expirations,
				    sizeof(expirations)) == -1 &&
				    errno != EAGAIN)
					wanem_die("timerfd");
				w->armed = 0;
			} else if (evs[i].data.fd == w->sfd) {
				while (read(w->sfd, &si, sizeof(si)) ==
				    (ssize_t)sizeof(si)) {
					if (si.ssi_signo == SIGUSR1)
						wanem_report(w);
					else
						quit = 1;
				}
			}
		}
		wanem_release(w);
		wanem_arm(w);
	}
	wanem_report(w);
	wanem_free(w);
	return 0;
}
