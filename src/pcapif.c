/*
 * The pcap backend: an interface on a device that exists already (a NIC, a
 * bridge, a TAP device that a hypervisor owns), captured with libpcap and
 * written with pcap_inject().  This is how the proxy puts the guests on the
 * home LAN: it captures, promiscuously, the LAN's frames for the guests'
 * MACs, and injects the guests' frames as if they had been sent on the LAN.
 *
 * The names here start with pcapif_, not pcap_, which is libpcap's.
 *
 * A frame vnetd injected must never be captured and forwarded again (it
 * would go back to where it came from, or round a cycle).  The capture takes
 * only incoming frames (PCAP_D_IN), and on top of that a short memory of
 * what was injected drops a captured frame that equals one injected in the
 * last second: direction filtering is not available everywhere, and a
 * device can hand a frame back (a bridge port in hairpin mode, a reflecting
 * switch).
 */
#include <sys/types.h>

#include <sys/socket.h>

#include <linux/filter.h>
#include <net/if.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "clock.h"
#include "iface.h"
#include "iface_impl.h"
#include "inject.h"
#include "log.h"
#include "wire.h"

/* Longer than any frame a link carries, so that truncation shows. */
#define PCAPIF_SNAPLEN		(WIRE_FRAME_MAX + 1)
#define PCAPIF_BUFFER		(4 * 1024 * 1024)	/* kernel ring, bytes */

struct pcapif {
	pcap_t			*p;
	unsigned int		 ifindex;	/* of the device opened */
	uint64_t		 now_ms;	/* of the current dispatch */
	unsigned int		 drops;		/* pcap_stats() at last call */
	struct inject_memory	 injected;
};

static const char *
pcapif_error(pcap_t *p, int status)
{
	const char	*e = pcap_geterr(p);

	return e != NULL && e[0] != '\0' ? e : pcap_statustostr(status);
}

static int
pcapif_open(struct iface *ifc, char *err, size_t errlen)
{
	const char		*dev = iface_devname(ifc);
	char			 ebuf[PCAP_ERRBUF_SIZE];
	struct bpf_program	 prog;
	struct pcapif		*pi;
	unsigned int		 ifindex;
	int			 r, fd, fl;

	/* Cheap enough to ask every second while the device is missing. */
	if ((ifindex = if_nametoindex(dev)) == 0) {
		snprintf(err, errlen, "device %s: no such device", dev);
		errno = ENODEV;
		return -1;
	}
	if ((pi = calloc(1, sizeof(*pi))) == NULL) {
		snprintf(err, errlen, "device %s: out of memory", dev);
		return -1;
	}
	ebuf[0] = '\0';
	if ((pi->p = pcap_create(dev, ebuf)) == NULL) {
		snprintf(err, errlen, "device %s: %s", dev, ebuf);
		free(pi);
		errno = EIO;
		return -1;
	}
	pcap_set_snaplen(pi->p, PCAPIF_SNAPLEN);
	pcap_set_promisc(pi->p, ifc->conf.promisc);
	/* Frames are handed over as they come, not when a buffer fills. */
	pcap_set_immediate_mode(pi->p, 1);
	pcap_set_buffer_size(pi->p, ifc->conf.buffer != 0 ?
	    (int)ifc->conf.buffer : PCAPIF_BUFFER);
	if ((r = pcap_activate(pi->p)) < 0) {
		snprintf(err, errlen, "device %s: %s", dev,
		    pcapif_error(pi->p, r));
		pcap_close(pi->p);
		free(pi);
		errno = r == PCAP_ERROR_NO_SUCH_DEVICE ? ENODEV : EIO;
		return -1;
	}
	if (r > 0)
		log_warnx("interface %s: device %s: %s", ifc->name, dev,
		    pcapif_error(pi->p, r));
	if (pcap_datalink(pi->p) != DLT_EN10MB) {
		snprintf(err, errlen, "device %s: not an Ethernet device", dev);
		goto fail;
	}
	if (pcap_setdirection(pi->p, PCAP_D_IN) == -1)
		log_warnx("interface %s: device %s: cannot capture incoming "
		    "frames only (%s); injected frames are still recognised",
		    ifc->name, dev, pcap_geterr(pi->p));
	if (ifc->conf.filter[0] != '\0') {
		if (pcap_compile(pi->p, &prog, ifc->conf.filter, 1,
		    PCAP_NETMASK_UNKNOWN) == -1) {
			snprintf(err, errlen, "filter: %s", pcap_geterr(pi->p));
			goto fail;
		}
		r = pcap_setfilter(pi->p, &prog);
		pcap_freecode(&prog);
		if (r == -1) {
			snprintf(err, errlen, "device %s: filter: %s", dev,
			    pcap_geterr(pi->p));
			goto fail;
		}
	}
	if (pcap_setnonblock(pi->p, 1, ebuf) == -1) {
		snprintf(err, errlen, "device %s: %s", dev, ebuf);
		goto fail;
	}
	if ((fd = pcap_get_selectable_fd(pi->p)) == -1) {
		snprintf(err, errlen, "device %s: no descriptor to wait on",
		    dev);
		goto fail;
	}
	/*
	 * pcap_setnonblock() only makes reads return at once; pcap_inject()
	 * would still block the whole daemon on a full device queue.  A frame
	 * that does not fit is dropped and counted instead, as on a wire.
	 */
	if ((fl = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) == -1) {
		snprintf(err, errlen, "device %s: %s", dev, strerror(errno));
		goto fail;
	}
	pi->ifindex = ifindex;
	ifc->softc = pi;
	return fd;
 fail:
	pcap_close(pi->p);
	free(pi);
	errno = EIO;
	return -1;
}

static void
pcapif_frame(u_char *arg, const struct pcap_pkthdr *h, const u_char *bytes)
{
	struct iface	*ifc = (struct iface *)arg;
	struct pcapif	*pi = ifc->softc;

	/* Too long for a link: a link must not carry part of a frame. */
	if (h->caplen < h->len) {
		ifc->c.drops++;
		return;
	}
	if (inject_seen(&pi->injected, bytes, h->caplen, pi->now_ms)) {
		ifc->c.looped++;
		return;
	}
	iface_input(ifc, NULL, bytes, h->caplen);
}

static int
pcapif_dispatch(struct iface *ifc, int max, char *err, size_t errlen)
{
	struct pcapif	*pi = ifc->softc;
	int		 n;

	pi->now_ms = clock_now_ms();
	n = pcap_dispatch(pi->p, max, pcapif_frame, (u_char *)ifc);
	if (n == PCAP_ERROR) {
		snprintf(err, errlen, "%s", pcap_geterr(pi->p));
		return -1;
	}
	return n < 0 ? 0 : n;
}

static int
pcapif_write(struct iface *ifc, const uint8_t *buf, size_t len)
{
	struct pcapif	*pi = ifc->softc;

	if (pcap_inject(pi->p, buf, len) != (int)len)
		return -1;
	inject_remember(&pi->injected, buf, len, clock_now_ms());
	return 0;
}

/* A device of the same name made anew is another device: reopen it. */
static int
pcapif_present(struct iface *ifc)
{
	struct pcapif	*pi = ifc->softc;

	return pi != NULL && if_nametoindex(iface_devname(ifc)) == pi->ifindex;
}

static uint64_t
pcapif_capture_drops(struct iface *ifc)
{
	struct pcapif		*pi = ifc->softc;
	struct pcap_stat	 st;
	unsigned int		 n;

	if (pi == NULL || pcap_stats(pi->p, &st) == -1)
		return 0;
	n = st.ps_drop - pi->drops;
	pi->drops = st.ps_drop;
	return n;
}

static void
pcapif_close(struct iface *ifc)
{
	struct pcapif	*pi = ifc->softc;

	if (pi != NULL) {
		pcap_close(pi->p);
		free(pi);
	}
	ifc->softc = NULL;
	ifc->fd = -1;
}

/*
 * A compiled program's accept verdict is the snapshot length it was made
 * for: large enough here that a super-frame is never cut.
 */
#define PCAPIF_ATTACH_SNAPLEN	(256 * 1024)

int
pcapif_filter_attach(int fd, const char *expr, char *err, size_t errlen)
{
	struct bpf_program	 prog;
	struct sock_fprog	 fp;
	pcap_t			*p;
	int			 r;

	if ((p = pcap_open_dead(DLT_EN10MB, PCAPIF_ATTACH_SNAPLEN)) == NULL) {
		snprintf(err, errlen, "filter: out of memory");
		return -1;
	}
	if (pcap_compile(p, &prog, expr, 1, PCAP_NETMASK_UNKNOWN) == -1) {
		snprintf(err, errlen, "filter: %s", pcap_geterr(p));
		pcap_close(p);
		return -1;
	}
	memset(&fp, 0, sizeof(fp));
	fp.len = (unsigned short)prog.bf_len;
	fp.filter = (struct sock_filter *)prog.bf_insns;
	r = setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp));
	if (r == -1)
		snprintf(err, errlen, "filter: %s", strerror(errno));
	pcap_freecode(&prog);
	pcap_close(p);
	return r;
}

int
pcapif_filter_check(const char *expr, char *err, size_t errlen)
{
	struct bpf_program	 prog;
	pcap_t			*p;

	if ((p = pcap_open_dead(DLT_EN10MB, PCAPIF_SNAPLEN)) == NULL) {
		snprintf(err, errlen, "filter: out of memory");
		return -1;
	}
	if (pcap_compile(p, &prog, expr, 1, PCAP_NETMASK_UNKNOWN) == -1) {
		snprintf(err, errlen, "filter: %s", pcap_geterr(p));
		pcap_close(p);
		return -1;
	}
	pcap_freecode(&prog);
	pcap_close(p);
	return 0;
}

const struct iface_ops pcapif_ops = {
	.type = "pcap",
	.open = pcapif_open,
	.read = NULL,
	.write = pcapif_write,
	.close = pcapif_close,
	.dispatch = pcapif_dispatch,
	.present = pcapif_present,
	.capture_drops = pcapif_capture_drops,
};
