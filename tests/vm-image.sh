#!/bin/bash
#
# tests/vm-image.sh DIR: a kernel and an initramfs for the test VMs of
# it-vm, made from Debian packages and kept in DIR (DIR/vmlinuz,
# DIR/initrd.gz); nothing is done when they are there for the same kernel
# package and this script has not changed.
#
#   - the kernel: the package linux-image-amd64 points to, downloaded with
#     apt-get download and unpacked with dpkg-deb -x, with virtio_net, the
#     PCI transport and what they need from its modules;
#   - busybox from busybox-static (unpacked the same way: it conflicts with
#     the busybox package that the tests use on the host);
#   - iperf3, ping (iputils, for -M do) and dnsmasq from the host, with the
#     shared libraries ldd names.
#
# The VM's /init configures each NIC by its MAC address from the kernel
# command line (vnet.net=MAC=ADDR/PLEN,...) and then serves commands on
# its second serial port (tests/vm_ctl.py is the other end): a line
# "TOKEN COMMAND" runs COMMAND with sh; its output follows "@@BEGIN TOKEN"
# and ends with "@@END TOKEN STATUS".
set -euo pipefail

dir=$1
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
	awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
[[ -n $kpkg ]] || { echo "vm-image: no kernel package behind linux-image-amd64" >&2; exit 1; }
stamp="$kpkg $(sha256sum "$0" | cut -c1-16)"
if [[ -s $dir/vmlinuz && -s $dir/initrd.gz && $(cat "$dir/stamp" 2>/dev/null) == "$stamp" ]]; then
	exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/vnet-vm.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download "$kpkg" busybox-static >/dev/null 2>"$work/apt.err") || {
	echo "vm-image: apt-get download $kpkg busybox-static failed:" >&2
	cat "$work/apt.err" >&2
	exit 1
}
dpkg-deb -x "$work/$kpkg"_*.deb "$work/k"
dpkg-deb -x "$work"/busybox-static_*.deb "$work/bb"
kver=$(ls "$work/k/lib/modules")
mods=$work/k/lib/modules/$kver
depmod -b "$work/k" "$kver"

root=$work/root
mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,root,run,mod,usr/bin,usr/sbin}
cp "$work/bb/bin/busybox" "$root/bin/busybox"

# Modules, each after what it needs (modules.dep lists those).
declare -A done_mod=()
order=()
add_mod() {
	local m=$1 deps d
	[[ -z ${done_mod[$m]:-} ]] || return 0
	done_mod[$m]=1
	deps=$(awk -F': *' -v m="$m" '$1 == m { print $2 }' "$mods/modules.dep")
	for d in $deps; do
		add_mod "$d"
	done
	order+=("$m")
}
for m in virtio_pci virtio_net; do
	path=$(awk -F: -v m="/$m.ko" 'index($1, m) && substr($1, length($1) - length(m) + 1) == m { print $1; exit }' "$mods/modules.dep")
	[[ -n $path ]] || { echo "vm-image: no module $m in $kpkg" >&2; exit 1; }
	add_mod "$path"
done
for m in "${order[@]}"; do
	cp "$mods/$m" "$root/mod/"
	basename "$m" >>"$root/mod/order"
done

# Host programs and the libraries they load.
copy_bin() {
	local b lib
	b=$(command -v "$1") || { echo "vm-image: $1 is missing on the host" >&2; exit 1; }
	cp -L "$b" "$root/usr/bin/$1"
	for lib in $(ldd "$b" | awk '/=> \// { print $3 } /^\t\// { print $1 }'); do
		[[ -e $root$lib ]] || cp -L --parents "$lib" "$root"
	done
}
copy_bin iperf3
copy_bin ping
copy_bin dnsmasq
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\n' >"$root/etc/group"

cat >"$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/usr/bin:/usr/sbin:/bin:/sbin HOME=/root
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
for m in $(cat /mod/order); do
	insmod "/mod/$m" || echo "init: insmod $m failed"
done
ip link set lo up
net=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^vnet\.net=//p')
for spec in $(echo "$net" | tr , ' '); do
	mac=${spec%%=*}
	for n in /sys/class/net/*; do
		[ "$(cat "$n/address")" = "$mac" ] || continue
		ip addr add "${spec#*=}" dev "${n##*/}"
		ip link set "${n##*/}" up
	done
done
echo "init: ready"
stty -F /dev/ttyS1 raw -echo
exec 3</dev/ttyS1 4>/dev/ttyS1
while read -r tok cmd <&3; do
	[ -n "$tok" ] || continue
	sh -c "$cmd" </dev/null >/tmp/out 2>&1
	rc=$?
	{ echo "@@BEGIN $tok"; cat /tmp/out; echo "@@END $tok $rc"; } >&4
done
echo "init: control port closed"
exec sleep 100000
INIT
chmod +x "$root/init"

(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initrd.gz"
cp "$work/k/boot/vmlinuz-$kver" "$work/vmlinuz"
mv "$work/initrd.gz" "$work/vmlinuz" "$dir/"
echo "$stamp" >"$dir/stamp"
