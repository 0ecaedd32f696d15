#!/bin/sh
# softroce-vm stage 1: /init of the initramfs (runs under busybox-static).
# Loads virtio/9p/overlay modules, mounts the host root (read-only 9p) under
# a tmpfs overlay and switches to it, handing over to stage 2 (host's bash).
# Everything here is quiet unless something fails.
export PATH=/bin
/bin/busybox mkdir -p /proc /sys /dev /lower /rw /newroot
/bin/busybox mount -t devtmpfs devtmpfs /dev 2>/dev/null
exec 0</dev/console 1>/dev/console 2>&1
/bin/busybox --install -s /bin

fail() {
    echo "softroce-vm(guest): stage1: $*"
    echo o > /proc/sysrq-trigger
    sleep 5
    exit 1
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys

# Modules in dependency order (generated when the initramfs was built).
while read -r m; do
    [ -n "$m" ] || continue
    insmod "/modules/$m.ko" || fail "insmod $m failed"
done < /modules/order

mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose,ro hostroot /lower \
    || fail "cannot mount host root over 9p"
mount -t tmpfs -o mode=0755,size=80% tmpfs /rw || fail "cannot mount tmpfs"
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /newroot \
    || fail "cannot mount overlay root"
mkdir -p /newroot/.softroce-vm
cp /stage2.sh /newroot/.softroce-vm/stage2.sh || fail "cannot install stage 2"
[ -x /newroot/bin/bash ] || fail "host root has no /bin/bash"
umount /proc /sys
exec switch_root /newroot /bin/bash /.softroce-vm/stage2.sh
