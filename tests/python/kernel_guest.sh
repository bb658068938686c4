#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Run a command of this checkout inside a QEMU guest booted with a distribution kernel that has
# every qdisc, classifier and action as a module (docs/kernel-conformance.md). The guest's root
# is this machine's root, read-only over 9p (so the guest runs this machine's iproute2, Python
# and this checkout), with tmpfs on /run, /tmp and /var/tmp. Every sch_/cls_/act_/em_ module and
# veth are loaded before the command runs, so nothing depends on module autoloading (which
# needs HOME and a modprobe for the guest's kernel, neither of which the host root has).
#
#   sudo tests/python/kernel_guest.sh linux-image-6.1.0-56-amd64_6.1.192-2_amd64.deb
#   sudo ICOUNT=1 tests/python/kernel_guest.sh KERNEL.deb airsched conformance behaviour --scale 0.4
#
# Needs: qemu-system-x86, busybox-static (apt), root. The default command is
# `airsched conformance kernel` (the corpus table). PY picks the Python (default: the
# checkout's .venv, else python3). ICOUNT=1 boots with `-icount shift=0,sleep=off` (software
# emulation; the guest's clock advances 2^shift ns per emulated instruction, so the guest is a
# fixed 1-instruction-per-ns machine however slow the emulation, and when its CPU idles the
# clock jumps to the next timer instead of waiting in real time (QEMU's `sleep=off`): nothing the
# guest measures depends on the host's speed or load. For behaviour numbers; ICOUNT_SHIFT sets
# another shift, ICOUNT_SLEEP=on lets idle time pass in real time (the earlier setting: the
# guest's rows then drifted with the host's load). `shift=auto` instead ties the guest clock to
# the host's wall clock: the emulated CPU is then too slow for a Python UDP sender to offer
# 12 Mbit/s (the kernel rows read a third of the rate). Otherwise KVM when /dev/kvm exists.
# `-cpu max`: the host's numpy (pandas, for `conformance behaviour`) needs more than QEMU's
# default qemu64 CPU model offers (it died with SIGILL, "Illegal instruction").
set -eu
deb=${1:?usage: kernel_guest.sh KERNEL.deb [COMMAND...]}
shift
repo=$(cd "$(dirname "$0")/../.." && pwd)
py=${PY:-$repo/.venv/bin/python}
[ -x "$py" ] || py=$(command -v python3)
if [ $# -eq 0 ]; then set -- airsched conformance kernel; fi
if [ "$1" = airsched ]; then shift; set -- "$py" -m airsched "$@"; fi
work=$(mktemp -d /tmp/airsched-guest.XXXXXX)
trap 'rm -rf "$work"' EXIT
dpkg-deb -x "$deb" "$work/k"
kver=$(ls "$work/k/lib/modules")
init=$work/initrd
mods=lib/modules/$kver
mkdir -p "$init/bin" "$init/proc" "$init/sys" "$init/dev" "$init/newroot" "$init/$mods/kernel/drivers/net"
cp "$(command -v busybox)" "$init/bin/busybox"
for d in net/sched net/9p fs/9p fs/netfs fs/fscache drivers/virtio; do
    mkdir -p "$init/$mods/kernel/$d"
    cp -r "$work/k/$mods/kernel/$d/." "$init/$mods/kernel/$d/"
done
cp "$work/k/$mods/kernel/drivers/net/veth.ko" "$init/$mods/kernel/drivers/net/"
cp "$work/k/$mods/modules.builtin" "$work/k/$mods/modules.order" "$init/$mods/" 2>/dev/null || true
busybox depmod -b "$init" "$kver"
# The command, quoted for the guest's shell.
cmd=""
for a in "$@"; do cmd="$cmd '$(printf %s "$a" | sed "s/'/'\\\\''/g")'"; done
# quoted once more: it is spliced into the single-quoted `sh -c '...'` of the init script below
# (an argument with a space, e.g. `--case 'cake 10mbit flows'`, was split there and the guest's
# init exited: "Attempted to kill init")
cmd=$(printf %s "$cmd" | sed "s/'/'\\\\''/g")
cat > "$init/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in virtio_pci 9pnet_virtio 9p veth; do modprobe \$m; done
for f in /$mods/kernel/net/sched/*.ko; do
    m=\$(basename \$f .ko)
    case \$m in act_ct|act_ctinfo|act_ipt|em_ipt|em_ipset|act_connmark|em_canid) continue;; esac
    modprobe \$m 2>/dev/null || echo "guest: cannot load \$m"
done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144 hostroot /newroot
for d in run tmp var/tmp; do mount -t tmpfs tmpfs /newroot/\$d; done
mount --move /proc /newroot/proc; mount --move /sys /newroot/sys; mount --move /dev /newroot/dev
exec switch_root /newroot /bin/sh -c 'export HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$repo/python; cd $repo; echo "guest: \$(uname -r)"; $cmd; echo "guest: exit \$?"; echo o > /proc/sysrq-trigger; sleep 10'
EOF
chmod +x "$init/init"
(cd "$init" && find . | busybox cpio -o -H newc | gzip -1) > "$work/initrd.gz"
if [ "${ICOUNT:-0}" = 1 ]; then accel="-icount shift=${ICOUNT_SHIFT:-0},sleep=${ICOUNT_SLEEP:-off}"; elif [ -w /dev/kvm ] && [ "${KVM:-1}" = 1 ]; then accel="-enable-kvm"; else accel=""; fi
# Software emulation's default CPU model (qemu64) lacks the SSE4/AVX that numpy's wheels need
# (`airsched conformance behaviour` imports pandas: "Illegal instruction"); emulate them all.
case "$accel" in *enable-kvm*) ;; *) accel="$accel -cpu max" ;; esac
# shellcheck disable=SC2086
qemu-system-x86_64 $accel -cpu max -m 2048 -smp 1 -nographic -no-reboot \
    -kernel "$work/k/boot/vmlinuz-$kver" -initrd "$work/initrd.gz" \
    -append "console=ttyS0 earlyprintk=serial,ttyS0 panic=-1 loglevel=4" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on \
    -nic none </dev/null | tr -d '\r'
