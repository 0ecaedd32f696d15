#!/bin/bash
# softroce-vm stage 2: runs as PID 1 on the overlay root (host userland, guest
# kernel). Mounts the pseudo filesystems and shares, brings up Soft-RoCE (rxe0
# on dummy0), runs the user command and records its exit code for the host.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CTL=/run/softroce-vm/ctl
KDIR=/run/softroce-vm/kernel

poweroff_now() {
    sync
    # busybox poweroff -f calls reboot(2) directly (silent with loglevel=0);
    # the sysrq fallback prints one kernel line.
    if [ -x /bin/busybox ]; then /bin/busybox poweroff -f; fi
    echo o > /proc/sysrq-trigger
    sleep 10
}
say() { echo "softroce-vm(guest): $*"; }
fail() { say "$*"; poweroff_now; exit 1; }

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=0755 tmpfs /run
# Fresh /tmp; the host's /tmp stays reachable (read-only lower + tmpfs upper)
# at /run/softroce-vm/hosttmp.
mkdir -p /run/softroce-vm/hosttmp "$CTL" "$KDIR"
mount --bind /tmp /run/softroce-vm/hosttmp
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 ctl "$CTL" || fail "cannot mount control share"
# No CR/LF translation on the serial console: the host gets plain "\n".
stty -onlcr 2>/dev/null </dev/console || true
exec </dev/null

# shellcheck source=/dev/null
. "$CTL/config.sh"   # SVM_OUT SVM_PWD SVM_KVER SVM_VERBOSE SVM_KEEP_GOING SVM_HOSTNAME
v() { [ "$SVM_VERBOSE" = 1 ] && say "$*"; return 0; }
v "stage2 up at $(cut -d' ' -f1 /proc/uptime)s guest uptime"

mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose,ro kernel "$KDIR" \
    || fail "cannot mount kernel share"
# If the working directory is under the host's /tmp, make it visible again.
case $SVM_PWD in
    /tmp/?*)
        if [ -d "/run/softroce-vm/hosttmp/${SVM_PWD#/tmp/}" ]; then
            mkdir -p "$SVM_PWD" && mount --bind "/run/softroce-vm/hosttmp/${SVM_PWD#/tmp/}" "$SVM_PWD"
        fi ;;
esac
mkdir -p "$SVM_OUT"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 out "$SVM_OUT" || fail "cannot mount out share at $SVM_OUT"
hostname "$SVM_HOSTNAME" 2>/dev/null || true
# Make the guest kernel's modules visible at the standard place, so that plain
# modprobe and the kernel's own request_module (e.g. crypto-crc32 needed by
# rdma_rxe) work.
mkdir -p "/lib/modules/$SVM_KVER" && mount --bind "$KDIR/lib/modules/$SVM_KVER" "/lib/modules/$SVM_KVER" \
    || fail "cannot bind the kernel modules to /lib/modules/$SVM_KVER"

setup_rdma() {
    modprobe -a dummy rdma_rxe ib_uverbs rdma_ucm ib_umad || { say "modprobe of RDMA modules failed"; return 1; }
    ip link set lo up || return 1
    ip link add dummy0 type dummy || return 1
    ip addr add 10.0.0.1/24 dev dummy0 || return 1
    ip link set dummy0 mtu 1500 up || return 1
    rdma link add rxe0 type rxe netdev dummy0 || { say "rdma link add rxe0 failed"; return 1; }
    # Wait until the port is active (normally immediate).
    for _ in $(seq 50); do
        grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null && return 0
        sleep 0.1
    done
    say "rxe0 port did not become ACTIVE"; return 1
}
if ! setup_rdma; then
    if [ "$SVM_KEEP_GOING" = 1 ]; then
        say "RDMA setup failed, continuing anyway (--keep-going)"
    else
        echo setup-failed > "$CTL/exit.tmp" && mv "$CTL/exit.tmp" "$CTL/exit"
        poweroff_now; exit 1
    fi
fi
ulimit -l unlimited
ulimit -n 65536 2>/dev/null || true
v "rdma ready at $(cut -d' ' -f1 /proc/uptime)s guest uptime; running command"

# Command and environment (cmd.sh sets exports, cd, and the array SVM_CMD).
# shellcheck source=/dev/null
(
    . "$CTL/cmd.sh" && exec "${SVM_CMD[@]}"
)
rc=$?
v "command exited with $rc at $(cut -d' ' -f1 /proc/uptime)s guest uptime"
sync
echo "$rc" > "$CTL/exit.tmp" && mv "$CTL/exit.tmp" "$CTL/exit"
poweroff_now
