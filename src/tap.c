/*
 * The TAP backend: a kernel TAP device, one frame per read and write.
 *
 * Every frame crosses the device behind a 12-byte virtio-net header
 * (IFF_VNET_HDR).  With offload on, the device is also told that we take
 * TCP segmentation and checksum offload (TUNSETOFFLOAD), so that a guest
 * hands over 64 KiB super-frames with their checksums left to finish: a
 * twentieth of the frames, and of the system calls, for the same bytes.
 * Written frames carry their header as received; a plain frame gets a
 * zero header.
 *
 * A persistent device outlives the daemon (TUNSETPERSIST): a bridge port,
 * a VM's peer, its addresses stay while vnetd restarts, and the next start
 * attaches to it again.  It goes with the interface: del-interface, or a
 * reload whose configuration no longer has it, removes it (iface_del sets
 * removing).  `persist no` leaves the kernel to remove the device when the
 * daemon's descriptor closes.  `persist auto`, the default, is yes while the
 * device stays in the daemon's network namespace and no once it has been
 * moved to another (a container's): a start finds a device by name in its
 * own namespace only, so one kept in another would outlive a killed daemon
 * there and stand in the way of the one its next start makes (the name
 * taken when that is moved in too).  Once a second tap_tick() looks.
 * With `bridge BR` the device is put into bridge BR each time it is opened
 * (unless it is there), so that a device made anew joins it again.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <net/if.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gso.h"
#include "iface.h"
#include "iface_impl.h"
#include "log.h"

/* What a TAP interface keeps across its opened devices (iface->backend). */
struct tap_state {
	int	persisting;	/* TUNSETPERSIST 1 is set by us */
	int	ifindex;	/* in our namespace when opened */
};

static int
tap_set_persist(struct iface *ifc, int fd, int on)
{
	struct tap_state	*ts = ifc->backend;

	if (ioctl(fd, TUNSETPERSIST, on) == -1)
		return -1;
	ts->persisting = on;
	return 0;
}

/*
 * Puts dev into bridge br unless it is there already (a persistent device
 * that a restart finds in its bridge).
 */
static int
tap_bridge(const char *dev, const char *br, char *err, size_t errlen)
{
	char		 path[64], link[PATH_MAX];
	const char	*m;
	struct ifreq	 ifr;
	ssize_t		 n;
	int		 s, e;

	snprintf(path, sizeof(path), "/sys/class/net/%s/master", dev);
	if ((n = readlink(path, link, sizeof(link) - 1)) > 0) {
		link[n] = '\0';
		m = strrchr(link, '/');
		if (strcmp(m != NULL ? m + 1 : link, br) == 0)
			return 0;
	}
	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(s, SIOCGIFINDEX, &ifr) == 0)
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", br);
	if (ifr.ifr_name[0] == '\0' || strcmp(ifr.ifr_name, br) != 0 ||
	    ioctl(s, SIOCBRADDIF, &ifr) == -1) {
		e = errno;
		snprintf(err, errlen, "%s: cannot put into bridge %s: %s", dev,
		    br, e == ENODEV ? "no such bridge" : e == EOPNOTSUPP ||
		    e == EINVAL ? "not a bridge" : strerror(e));
		close(s);
		return -1;
	}
	close(s);
	return 0;
}

/* A persistent device goes with the interface, not with the daemon. */
static void
tap_unpersist(struct iface *ifc, int fd)
{
	struct tap_state	*ts = ifc->backend;

	if (ts->persisting && tap_set_persist(ifc, fd, 0) == -1)
		log_warn("interface %s: cannot remove device %s", ifc->name,
		    iface_devname(ifc));
}

static int
tap_attach(struct iface *ifc, char *err, size_t errlen)
{
	if ((ifc->backend = calloc(1, sizeof(struct tap_state))) == NULL) {
		snprintf(err, errlen, "interface %s: out of memory", ifc->name);
		return -1;
	}
	return 0;
}

static void
tap_detach(struct iface *ifc)
{
	free(ifc->backend);
	ifc->backend = NULL;
}

/*
 * persist auto: the device is kept while it is ours to find again, in our
 * namespace under its index, and let go with the daemon while it is not.
 */
static void
tap_tick(struct iface *ifc)
{
	struct tap_state	*ts = ifc->backend;
	const char		*dev = iface_devname(ifc);
	int			 idx, here;

	if (ifc->conf.persist != STMT_PERSIST_AUTO)
		return;
	/* Not here (ENODEV), or not known: nothing is changed on a failure. */
	if ((idx = (int)if_nametoindex(dev)) == 0 && errno != ENODEV)
		return;
	here = idx != 0 && idx == ts->ifindex;
	if (here == ts->persisting)
		return;
	if (tap_set_persist(ifc, ifc->fd, here) == -1) {
		log_warn("interface %s: device %s: TUNSETPERSIST", ifc->name,
		    dev);
		return;
	}
	if (here)
		log_info("interface %s: device %s is back in our network "
		    "namespace: it outlives vnetd again (persist auto)",
		    ifc->name, dev);
	else
		log_info("interface %s: device %s was moved to another network "
		    "namespace: it goes when vnetd exits, and a restart makes it "
		    "anew (persist auto; persist yes keeps it)", ifc->name, dev);
}

static int
tap_open(struct iface *ifc, char *err, size_t errlen)
{
	struct ifreq	 ifr;
	const char	*dev = iface_devname(ifc);
	int		 fd, hdrsz = GSO_VNET_HDR_LEN, le = 1;

	if ((fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "/dev/net/tun: %s", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(fd, TUNSETIFF, &ifr) == -1) {
		snprintf(err, errlen, "%s: cannot create or attach TAP device: %s",
		    dev, errno == EBUSY ? "device busy (used by another "
		    "program, or not a TAP device)" : strerror(errno));
		close(fd);
		return -1;
	}
	if (ioctl(fd, TUNSETVNETHDRSZ, &hdrsz) == -1) {
		snprintf(err, errlen, "%s: cannot set the offload header size: %s",
		    dev, strerror(errno));
		close(fd);
		return -1;
	}
	/* The header is little-endian whatever the host (gso.c reads it so). */
	(void)ioctl(fd, TUNSETVNETLE, &le);
	if (ifc->env->offload && ioctl(fd, TUNSETOFFLOAD, TUN_F_CSUM |
	    TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN) == -1) {
		snprintf(err, errlen, "%s: cannot enable offload: %s "
		    "(offload no turns it off)", dev, strerror(errno));
		close(fd);
		return -1;
	}
	((struct tap_state *)ifc->backend)->persisting = 0;
	if (ifc->conf.persist != STMT_PERSIST_NO &&
	    tap_set_persist(ifc, fd, 1) == -1) {
		snprintf(err, errlen, "%s: cannot make persistent: %s", dev,
		    strerror(errno));
		close(fd);
		return -1;
	}
	((struct tap_state *)ifc->backend)->ifindex = (int)if_nametoindex(dev);
	if (iface_dev_up(dev, err, errlen) == -1 ||
	    (ifc->conf.bridge[0] != '\0' &&
	    tap_bridge(dev, ifc->conf.bridge, err, errlen) == -1)) {
		tap_unpersist(ifc, fd);
		close(fd);
		return -1;
	}
	return fd;
}

static ssize_t
tap_read(struct iface *ifc, uint8_t *buf, size_t len)
{
	ssize_t	 n;

	do {
		n = read(ifc->fd, buf, len);
	} while (n == -1 && errno == EINTR);
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	return n;
}

static int
tap_write_vh(struct iface *ifc, const uint8_t *vh, const uint8_t *eth,
    size_t len)
{
	static const uint8_t	 zero[GSO_VNET_HDR_LEN];
	struct iovec		 iov[2];
	ssize_t			 n;

	/*
	 * EIO while the device is down (moved to a namespace and not yet
	 * up), EAGAIN when its queue is full: either way the frame is lost,
	 * as on a real wire, and counted by the caller.
	 */
	iov[0].iov_base = (void *)(vh != NULL ? vh : zero);
	iov[0].iov_len = GSO_VNET_HDR_LEN;
	iov[1].iov_base = (void *)eth;
	iov[1].iov_len = len;
	do {
		n = writev(ifc->fd, iov, 2);
	} while (n == -1 && errno == EINTR);
	return n == (ssize_t)(GSO_VNET_HDR_LEN + len) ? 0 : -1;
}

static int
tap_write(struct iface *ifc, const uint8_t *buf, size_t len)
{
	return tap_write_vh(ifc, NULL, buf, len);
}

static void
tap_close(struct iface *ifc)
{
	if (ifc->fd != -1 && ifc->removing)
		tap_unpersist(ifc, ifc->fd);
	if (ifc->fd != -1)
		close(ifc->fd);
	ifc->fd = -1;
}

const struct iface_ops tap_ops = {
	.type = "tap",
	.open = tap_open,
	.read = tap_read,
	.write = tap_write,
	.write_vh = tap_write_vh,
	.vnet_hdr = 1,
	.close = tap_close,
	.attach = tap_attach,
	.detach = tap_detach,
	.tick = tap_tick,
};
