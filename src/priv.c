/*
 * Raw capset(2) rather than libcap: one call with a fixed set is all this
 * needs, and it keeps a dependency out.
 */
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <linux/capability.h>

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "priv.h"

#define CAP_PROBE_MAX	64	/* past the kernel's last, PR_CAPBSET_DROP fails */

int
priv_drop(uid_t uid, gid_t gid, char *err, size_t errlen)
{
	struct __user_cap_header_struct	 hdr;
	struct __user_cap_data_struct	 data[_LINUX_CAPABILITY_U32S_3];
	int				 cap;

	if (uid == 0) {
		snprintf(err, errlen, "user: uid 0 is root; nothing to drop");
		return -1;
	}
	/*
	 * No program we might run may get back what we give up: empty the
	 * bounding set but for CAP_NET_ADMIN (needs CAP_SETPCAP, so while
	 * still root).
	 */
	for (cap = 0; cap < CAP_PROBE_MAX; cap++) {
		if (cap == CAP_NET_ADMIN)
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == -1 &&
		    errno != EINVAL) {
			snprintf(err, errlen, "dropping capability %d: %s",
			    cap, strerror(errno));
			return -1;
		}
	}
	/* Keep the permitted set across the change of uid. */
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) == -1) {
		snprintf(err, errlen, "PR_SET_KEEPCAPS: %s", strerror(errno));
		return -1;
	}
	if (setgroups(1, &gid) == -1 || setresgid(gid, gid, gid) == -1) {
		snprintf(err, errlen, "setting group %ld: %s", (long)gid,
		    strerror(errno));
		return -1;
	}
	if (setresuid(uid, uid, uid) == -1) {
		snprintf(err, errlen, "setting user %ld: %s", (long)uid,
		    strerror(errno));
		return -1;
	}
	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	hdr.pid = 0;
	data[CAP_TO_INDEX(CAP_NET_ADMIN)].effective = CAP_TO_MASK(CAP_NET_ADMIN);
	data[CAP_TO_INDEX(CAP_NET_ADMIN)].permitted = CAP_TO_MASK(CAP_NET_ADMIN);
	if (syscall(SYS_capset, &hdr, data) == -1) {
		snprintf(err, errlen, "capset: %s", strerror(errno));
		return -1;
	}
	(void)prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
	(void)prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	/* Trust, but verify: root must be gone for good. */
	if (setresuid(0, 0, 0) != -1 || geteuid() != uid) {
		snprintf(err, errlen, "could regain root after dropping it");
		return -1;
	}
	return 0;
}
