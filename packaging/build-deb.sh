#!/usr/bin/env bash
# `make deb`: builds a Debian package of batchd with dpkg-deb (no network).
#   packaging/build-deb.sh BUILD_DIR OUT_DIR
# Stages `make install` with PREFIX=/usr SYSCONFDIR=/etc (binaries
# stripped), adds DEBIAN/ (control with the shared-library dependencies
# dpkg-shlibdeps finds, conffiles, postinst/prerm/postrm) and writes
# OUT_DIR/batchd_VERSION_ARCH.deb; prints its path. DEB_COMPRESS_LEVEL
# (xz, default 6 as dpkg-deb's) trades package size for time; the e2e test
# uses 1.
set -euo pipefail
BUILD_DIR=$(cd "${1:?usage: $0 BUILD_DIR OUT_DIR}" && pwd)
OUT=${2:?usage: $0 BUILD_DIR OUT_DIR}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/batchd-deb.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
PKG="$STAGE/pkg"
PREFIX=/usr SYSCONFDIR=/etc DESTDIR="$PKG" STRIP=1 "$ROOT/packaging/install.sh" "$BUILD_DIR" >/dev/null
install -d -m 0755 "$PKG/DEBIAN" "$PKG/usr/share/doc/batchd"
cat >"$PKG/usr/share/doc/batchd/copyright" <<'TXT'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: batchd
Files: *
Copyright: batchd developers
License: see the project's repository
TXT
VERSION=$("$BUILD_DIR/bin/batchd" --version | sed -n 's/^batchd v\([0-9][0-9.]*\).*/\1/p')
[[ -n "$VERSION" ]] || { echo "build-deb: cannot read the version from batchd --version" >&2; exit 1; }
ARCH=$(dpkg --print-architecture)
# Shared-library dependencies, as debhelper would compute them.
DEPENDS=""
if command -v dpkg-shlibdeps >/dev/null; then
  mkdir -p "$STAGE/src/debian"
  printf 'Source: batchd\n\nPackage: batchd\nArchitecture: any\n' >"$STAGE/src/debian/control"
  DEPENDS=$(cd "$STAGE/src" && dpkg-shlibdeps -O -e"$PKG/usr/bin/batchd" -e"$PKG/usr/bin/batchctl" \
    -e"$PKG/usr/bin/batchd-shim" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
fi
if [[ -z "$DEPENDS" ]]; then
  echo "build-deb: dpkg-shlibdeps gave nothing (Debian: dpkg-dev); Depends lists libc6, libstdc++6 without versions" >&2
  DEPENDS="libc6, libstdc++6"
fi
SIZE=$(du -sk --exclude=DEBIAN "$PKG" | cut -f1)
sed -e "s|@VERSION@|$VERSION|" -e "s|@ARCH@|$ARCH|" -e "s|@DEPENDS@|$DEPENDS|" -e "s|@SIZE@|$SIZE|" \
  "$ROOT/packaging/debian/control.in" >"$PKG/DEBIAN/control"
printf '/etc/batchd/server.env\n/etc/batchd/agent.env\n' >"$PKG/DEBIAN/conffiles"
for s in postinst prerm postrm; do install -m 0755 "$ROOT/packaging/debian/$s" "$PKG/DEBIAN/$s"; done
(cd "$PKG" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum) \
  >"$PKG/DEBIAN/md5sums"
chmod 0644 "$PKG/DEBIAN/control" "$PKG/DEBIAN/conffiles" "$PKG/DEBIAN/md5sums"
DEB="$OUT/batchd_${VERSION}_${ARCH}.deb"
dpkg-deb --root-owner-group -Zxz -z"${DEB_COMPRESS_LEVEL:-6}" --build "$PKG" "$DEB" >/dev/null
echo "$DEB"
