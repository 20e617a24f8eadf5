/*
 * The AF_PACKET backend of a pcap interface (Linux): an existing device
 * (a NIC, a bridge, a veth, the TAP device of a VM) captured through a
 * packet socket that gives each frame its virtio-net header
 * (PACKET_VNET_HDR) into a memory-mapped ring of blocks (TPACKET_V3).
 *
 * The header is what libpcap cannot give: a frame that a guest or a local
 * program handed to the device with its checksum left to finish
 * (CHECKSUM_PARTIAL), or as a TCP super-frame, is known as such, and is
 * carried exactly as a TAP device's: whole to peers that take offload
 * frames, finished or cut for those that do not.  Injection goes through
 * the same socket with the header in front, so a super-frame for the
 * device is written whole and the kernel segments it (or not) for the
 * device as it would its own.
 *
 * A filter expression is compiled by libpcap (pcapif.c) and attached to
 * the socket, so the kernel drops what it rejects before the ring.  Only
 * incoming frames are kept (PACKET_IGNORE_OUTGOING, and the packet type on
 * top of it); a frame that comes back equal to one injected in the last
 * second is dropped as looped (inject.h).
 *
 * The ring hands over a block when it is full or when it has waited
 * AFPACKET_BLOCK_TMO_MS: that is the most a frame waits in it.  The
 * kernel's count of frames it dropped for want of room (PACKET_STATISTICS,
 * reset by each read) is summed by iface.c as capture drops.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "gso.h"
#include "iface.h"
#include "iface_impl.h"
#include "inject.h"
#include "log.h"
#include "wire.h"

/*
 * A block holds at least one frame of the longest kind a link carries (a
 * 64 KiB super-frame) after its headers; small frames share it.
 */
#define AFPACKET_BLOCK		(256 * 1024)
#define AFPACKET_FRAME		2048		/* nominal, for the kernel */
#define AFPACKET_BLOCKS_MIN	4
#define AFPACKET_BUFFER		(8 * 1024 * 1024)	/* default ring */
#define AFPACKET_BLOCK_TMO_MS	1
#define AFPACKET_VH_LEN		10	/* struct virtio_net_hdr */
#define AFPACKET_VLAN_LEN	4

struct afpacket {
	int			 fd;
	uint8_t			*ring;
	size_t			 ring_len;
	unsigned int		 nblocks;
	unsigned int		 cur;		/* next block to read */
	unsigned int		 ifindex;	/* of the device opened */
	uint64_t		 now_ms;	/* of the current dispatch */
	struct inject_memory	 injected;
};

/*
 * The socket's header is in host order; gso.c reads the TAP's, which is
 * little-endian.  Only the byte order of the four 16-bit fields differs.
 */
static void
afpacket_vh_swap(uint8_t *vh)
{
#if __BYTE_ORDER == __BIG_ENDIAN
	uint8_t	 t;
	int	 i;

	for (i = 2; i < AFPACKET_VH_LEN; i += 2) {
		t = vh[i];
		vh[i] = vh[i + 1];
		vh[i + 1] = t;
	}
#else
	(void)vh;
#endif
}

static void
afpacket_free(struct afpacket *ap)
{
	if (ap->ring != NULL && ap->ring != MAP_FAILED)
		munmap(ap->ring, ap->ring_len);
	if (ap->fd != -1)
		close(ap->fd);
	free(ap);
}

/* The ring, as large as `buffer` asks (whole blocks, at least a few). */
static int
afpacket_ring(struct afpacket *ap, uint32_t buffer, char *err, size_t errlen)
{
	struct tpacket_req3	 req;
	int			 v = TPACKET_V3;

	ap->nblocks = (buffer != 0 ? buffer : AFPACKET_BUFFER) / AFPACKET_BLOCK;
	if (ap->nblocks < AFPACKET_BLOCKS_MIN)
		ap->nblocks = AFPACKET_BLOCKS_MIN;
	memset(&req, 0, sizeof(req));
	req.tp_block_size = AFPACKET_BLOCK;
	req.tp_block_nr = ap->nblocks;
	req.tp_frame_size = AFPACKET_FRAME;
	req.tp_frame_nr = AFPACKET_BLOCK / AFPACKET_FRAME * ap->nblocks;
	req.tp_retire_blk_tov = AFPACKET_BLOCK_TMO_MS;
	if (setsockopt(ap->fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) == -1 ||
	    setsockopt(ap->fd, SOL_PACKET, PACKET_RX_RING, &req,
	    sizeof(req)) == -1) {
		snprintf(err, errlen, "ring of %u KiB: %s",
		    ap->nblocks * (AFPACKET_BLOCK / 1024), strerror(errno));
		return -1;
	}
	ap->ring_len = (size_t)ap->nblocks * AFPACKET_BLOCK;
	ap->ring = mmap(NULL, ap->ring_len, PROT_READ | PROT_WRITE,
	    MAP_SHARED, ap->fd, 0);
	if (ap->ring == MAP_FAILED) {
		snprintf(err, errlen, "ring: mmap: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int
afpacket_open(struct iface *ifc, char *err, size_t errlen)
{
	const char		*dev = iface_devname(ifc);
	char			 why[256];
	struct afpacket		*ap;
	struct sockaddr_ll	 sll;
	struct packet_mreq	 mr;
	unsigned int		 ifindex;
	int			 one = 1, e;

	if ((ifindex = if_nametoindex(dev)) == 0) {
		snprintf(err, errlen, "device %s: no such device", dev);
		errno = ENODEV;
		return -1;
	}
	if ((ap = calloc(1, sizeof(*ap))) == NULL) {
		snprintf(err, errlen, "device %s: out of memory", dev);
		return -1;
	}
	ap->ring = NULL;
	/* Protocol 0: nothing arrives before the filter and the ring. */
	if ((ap->fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1) {
		e = errno;
		snprintf(err, errlen, "device %s: packet socket: %s", dev,
		    strerror(e));
		free(ap);
		errno = e;
		return -1;
	}
	if (setsockopt(ap->fd, SOL_PACKET, PACKET_VNET_HDR, &one,
	    sizeof(one)) == -1) {
		snprintf(err, errlen, "device %s: offload headers: %s", dev,
		    strerror(errno));
		goto fail;
	}
	if (ifc->conf.filter[0] != '\0' &&
	    pcapif_filter_attach(ap->fd, ifc->conf.filter, why,
	    sizeof(why)) == -1) {
		snprintf(err, errlen, "device %s: %s", dev, why);
		goto fail;
	}
	if (afpacket_ring(ap, ifc->conf.buffer, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "device %s: %s", dev, why);
		goto fail;
	}
	/* Older kernels lack it; the packet type still tells. */
	(void)setsockopt(ap->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one,
	    sizeof(one));
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)ifindex;
	if (bind(ap->fd, (struct sockaddr *)&sll, sizeof(sll)) == -1) {
		e = errno;
		snprintf(err, errlen, "device %s: %s", dev, strerror(e));
		afpacket_free(ap);
		errno = e == ENODEV || e == ENXIO ? ENODEV : EIO;
		return -1;
	}
	/* Membership ends with the socket: the device is left as found. */
	if (ifc->conf.promisc) {
		memset(&mr, 0, sizeof(mr));
		mr.mr_ifindex = (int)ifindex;
		mr.mr_type = PACKET_MR_PROMISC;
		if (setsockopt(ap->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr,
		    sizeof(mr)) == -1) {
			snprintf(err, errlen, "device %s: promiscuous mode: %s",
			    dev, strerror(errno));
			goto fail;
		}
	}
	ap->ifindex = ifindex;
	ifc->softc = ap;
	return ap->fd;
 fail:
	afpacket_free(ap);
	errno = EIO;
	return -1;
}

/*
 * One frame of a block.  The kernel took the 802.1Q tag out into the
 * header (VLAN acceleration): it goes back in, as it was on the wire, and
 * the offload header's offsets move with it.
 */
static void
afpacket_frame(struct iface *ifc, const struct tpacket3_hdr *h,
    const uint8_t *pkt, size_t room)
{
	struct afpacket		*ap = ifc->softc;
	struct sockaddr_ll	 sll;
	struct gso_hdr		 g;
	uint8_t			 vh[GSO_VNET_HDR_LEN];
	const uint8_t		*eth;
	size_t			 len = h->tp_snaplen;
	uint16_t		 tpid;
	uint8_t			*buf;
	size_t			 buflen;

	if (room < TPACKET_ALIGN(sizeof(*h)) + sizeof(sll))
		return;
	memcpy(&sll, pkt + TPACKET_ALIGN(sizeof(*h)), sizeof(sll));
	if (sll.sll_pkttype == PACKET_OUTGOING)
		return;
	if (h->tp_mac < AFPACKET_VH_LEN || h->tp_mac > room ||
	    len > room - h->tp_mac) {
		ifc->c.read_errors++;
		return;
	}
	/*
	 * Too long for a link (a device set to make super-frames beyond
	 * 64 KiB, or cut short by the ring): a link must not carry part of
	 * a frame.
	 */
	if (h->tp_snaplen < h->tp_len || len < ETHER_HDR_LEN ||
	    len > WIRE_FRAME_MAX) {
		ifc->c.drops++;
		return;
	}
	eth = pkt + h->tp_mac;
	memcpy(vh, eth - AFPACKET_VH_LEN, AFPACKET_VH_LEN);
	vh[10] = vh[11] = 0;
	afpacket_vh_swap(vh);
	if (inject_seen(&ap->injected, eth, len, ap->now_ms)) {
		ifc->c.looped++;
		return;
	}
	if (h->tp_status & TP_STATUS_VLAN_VALID) {
		/* The tag goes back in, in the switch's buffer. */
		buf = sw_rxbuf(ifc->env->sw, &buflen);
		if (len + AFPACKET_VLAN_LEN > buflen) {
			ifc->c.drops++;
			return;
		}
		tpid = (h->tp_status & TP_STATUS_VLAN_TPID_VALID) &&
		    h->hv1.tp_vlan_tpid != 0 ? h->hv1.tp_vlan_tpid :
		    ETH_P_8021Q;
		memcpy(buf, eth, 2 * ETHER_ADDR_LEN);
		buf[12] = (uint8_t)(tpid >> 8);
		buf[13] = (uint8_t)tpid;
		buf[14] = (uint8_t)(h->hv1.tp_vlan_tci >> 8);
		buf[15] = (uint8_t)h->hv1.tp_vlan_tci;
		memcpy(buf + 16, eth + 12, len - 12);
		eth = buf;
		len += AFPACKET_VLAN_LEN;
		gso_hdr_decode(vh, &g);
		if (g.flags & GSO_F_NEEDS_CSUM)
			g.csum_start += AFPACKET_VLAN_LEN;
		if (g.hdr_len != 0)
			g.hdr_len += AFPACKET_VLAN_LEN;
		gso_hdr_encode(vh, &g);
	}
	iface_input(ifc, sw_vh(vh), eth, len);
}

/* The frames of one block that the kernel handed over. */
static int
afpacket_block(struct iface *ifc, const uint8_t *b)
{
	struct tpacket_block_desc	 bd;
	struct tpacket3_hdr		 h;
	size_t				 off;
	uint32_t			 i, n;

	memcpy(&bd, b, sizeof(bd));
	n = bd.hdr.bh1.num_pkts;
	off = bd.hdr.bh1.offset_to_first_pkt;
	for (i = 0; i < n; i++) {
		if (off < sizeof(bd) || off > AFPACKET_BLOCK - sizeof(h)) {
			ifc->c.read_errors++;
			break;
		}
		memcpy(&h, b + off, sizeof(h));
		afpacket_frame(ifc, &h, b + off, AFPACKET_BLOCK - off);
		if (h.tp_next_offset == 0)
			break;
		off += h.tp_next_offset;
	}
	return (int)i;
}

static int
afpacket_dispatch(struct iface *ifc, int max, char *err, size_t errlen)
{
	struct afpacket			*ap = ifc->softc;
	struct tpacket_block_desc	*bd;
	socklen_t			 sl = sizeof(int);
	int				 n = 0, e = 0;

	ap->now_ms = clock_now_ms();
	while (n < max) {
		bd = (struct tpacket_block_desc *)(ap->ring +
		    (size_t)ap->cur * AFPACKET_BLOCK);
		if ((__atomic_load_n(&bd->hdr.bh1.block_status,
		    __ATOMIC_ACQUIRE) & TP_STATUS_USER) == 0)
			break;
		n += afpacket_block(ifc, (const uint8_t *)bd);
		__atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL,
		    __ATOMIC_RELEASE);
		ap->cur = (ap->cur + 1) % ap->nblocks;
	}
	/*
	 * Woken with nothing to read: the socket has an error pending (its
	 * device went away), which would wake the loop again and again.
	 */
	if (n == 0 && getsockopt(ap->fd, SOL_SOCKET, SO_ERROR, &e, &sl) == 0 &&
	    e != 0) {
		snprintf(err, errlen, "%s", strerror(e));
		return -1;
	}
	return n;
}

static int
afpacket_write_vh(struct iface *ifc, const uint8_t *vh, const uint8_t *eth,
    size_t len)
{
	struct afpacket	*ap = ifc->softc;
	uint8_t		 h[AFPACKET_VH_LEN];
	struct iovec	 iov[2];
	ssize_t		 n;

	/*
	 * EAGAIN or ENOBUFS when the device's queue is full, ENETDOWN when
	 * it is down: the frame is lost, as on a wire, and counted.
	 */
	if (vh != NULL)
		memcpy(h, vh, sizeof(h));
	else
		memset(h, 0, sizeof(h));
	afpacket_vh_swap(h);
	iov[0].iov_base = h;
	iov[0].iov_len = sizeof(h);
	iov[1].iov_base = (void *)eth;
	iov[1].iov_len = len;
	do {
		n = writev(ap->fd, iov, 2);
	} while (n == -1 && errno == EINTR);
	if (n != (ssize_t)(sizeof(h) + len))
		return -1;
	inject_remember(&ap->injected, eth, len, clock_now_ms());
	return 0;
}

static int
afpacket_write(struct iface *ifc, const uint8_t *buf, size_t len)
{
	return afpacket_write_vh(ifc, NULL, buf, len);
}

/* A device of the same name made anew is another device: reopen it. */
static int
afpacket_present(struct iface *ifc)
{
	struct afpacket	*ap = ifc->softc;

	return ap != NULL && if_nametoindex(iface_devname(ifc)) == ap->ifindex;
}

/* The kernel's count since the last call (reading it resets it). */
static uint64_t
afpacket_capture_drops(struct iface *ifc)
{
	struct afpacket		*ap = ifc->softc;
	struct tpacket_stats_v3	 st;
	socklen_t		 sl = sizeof(st);

	if (ap == NULL || getsockopt(ap->fd, SOL_PACKET, PACKET_STATISTICS,
	    &st, &sl) == -1)
		return 0;
	return st.tp_drops;
}

static void
afpacket_close(struct iface *ifc)
{
	if (ifc->softc != NULL)
		afpacket_free(ifc->softc);
	ifc->softc = NULL;
	ifc->fd = -1;
}

const struct iface_ops afpacket_ops = {
	.type = "pcap",
	.open = afpacket_open,
	.read = NULL,
	.write = afpacket_write,
	.write_vh = afpacket_write_vh,
	.close = afpacket_close,
	.dispatch = afpacket_dispatch,
	.present = afpacket_present,
	.capture_drops = afpacket_capture_drops,
	.fallback = &pcapif_ops,
};
