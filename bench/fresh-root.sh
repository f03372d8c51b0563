#!/bin/sh
# The main job's time on a fresh Debian 12: a minimal bookworm root (debootstrap --variant=minbase,
# made once and kept in WORKDIR/pristine), a copy of it with a clone of this repository's HEAD in
# /zkpipe, and `time ./scripts/main-job.sh` run inside it with chroot, package installs and npm ci
# included. Run as root on a Debian host; the figure goes in bench/RESULTS.md ("Main job").
#   bench/fresh-root.sh [WORKDIR]        (default /var/tmp/zkpipe-fresh)
# The host's CA bundle, local CAs and npm configuration are copied in, for machines whose egress
# passes a TLS-inspecting proxy; so are node and npm when the host has them under /usr (the
# workplace's machines come with Node.js 20; without it, install-deps.sh installs Debian's).
set -eu
W=${1:-/var/tmp/zkpipe-fresh}
SRC=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$W"
if [ ! -d "$W/pristine" ]; then
    command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
    debootstrap --variant=minbase bookworm "$W/pristine.tmp" http://deb.debian.org/debian >/dev/null
    mv "$W/pristine.tmp" "$W/pristine"
fi
R=$W/root.$$
cp -a "$W/pristine" "$R"
git clone -q "$SRC" "$R/zkpipe"
undo() {
    umount "$R/dev/shm" "$R/dev/pts" "$R/dev" "$R/proc" "$R/sys" 2>/dev/null || true
    rm -rf "$R"
}
trap undo EXIT
mount --bind /dev "$R/dev"
mount --bind /dev/pts "$R/dev/pts"
mount -t proc proc "$R/proc"
mount -t sysfs sys "$R/sys"
mount -t tmpfs tmpfs "$R/dev/shm"
cp /etc/resolv.conf "$R/etc/resolv.conf"
mkdir -p "$R/etc/ssl/certs" "$R/usr/local/share/ca-certificates"
cp /etc/ssl/certs/ca-certificates.crt "$R/etc/ssl/certs/"
cp /usr/local/share/ca-certificates/*.crt "$R/usr/local/share/ca-certificates/" 2>/dev/null || true
cp /root/.npmrc "$R/root/.npmrc" 2>/dev/null || true
cp /etc/npmrc "$R/etc/npmrc" 2>/dev/null || true
if [ -x /usr/bin/node ] && [ -d /usr/lib/node_modules/npm ]; then
    cp /usr/bin/node "$R/usr/bin/node"
    mkdir -p "$R/usr/lib/node_modules"
    cp -a /usr/lib/node_modules/npm "$R/usr/lib/node_modules/"
    ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$R/usr/bin/npm"
    ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$R/usr/bin/npx"
fi
echo "fresh root $R, $(git -C "$R/zkpipe" log -1 --format=%h), $(date -u '+%F %T UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
chroot "$R" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    CCACHE_DISABLE=1 NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt sh -c 'cd /zkpipe && ./scripts/main-job.sh'
echo "main job on a fresh root: $(($(date +%s) - start)) s wall, exit 0; load after $(cut -d' ' -f1-3 /proc/loadavg)"
