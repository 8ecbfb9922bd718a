# e2e-parallel
# e2e-timeout: 300
# `make install` and `make deb` (packaging/install.sh, packaging/build-deb.sh):
# a staged install with PREFIX and DESTDIR puts binaries, systemd units
# naming PREFIX/bin, settings (an edited one survives a re-install),
# completion and deploy files in place; the Debian package lists the
# expected files owned by root, carries control fields with shared-library
# dependencies, conffiles and maintainer scripts that parse; its binaries
# are stripped and run; its units pass `systemd-analyze verify` with the
# package's files in place.
source "$E2E_LIB"
ROOT=$(cd "$(dirname "$E2E_LIB")/../.." && pwd)
BUILD=$(cd "${BIN_DIR:?}/.." && pwd)

# --- make install: PREFIX=/opt/batchd DESTDIR=stage ---
STAGE="$E2E_TMP/stage"
expect_ok env PREFIX=/opt/batchd DESTDIR="$STAGE" SYSCONFDIR=/etc "$ROOT/packaging/install.sh" "$BUILD"
for f in opt/batchd/bin/batchd opt/batchd/bin/batchctl opt/batchd/bin/batchd-shim \
         opt/batchd/lib/systemd/system/batchd-server.service \
         opt/batchd/lib/systemd/system/batchd-agent.service \
         etc/batchd/server.env etc/batchd/agent.env \
         opt/batchd/share/bash-completion/completions/batchctl \
         opt/batchd/share/zsh/vendor-completions/_batchctl \
         opt/batchd/share/batchd/deploy/prometheus/prometheus.yml \
         opt/batchd/share/batchd/deploy/prometheus/rules/batchd-alerts.yml \
         opt/batchd/share/batchd/deploy/grafana/batchd-kueue.json \
         opt/batchd/share/doc/batchd/install.md; do
  [[ -e "$STAGE/$f" ]] || fail "make install: $f missing"
done
unit=$(cat "$STAGE/opt/batchd/lib/systemd/system/batchd-server.service")
expect_contains "$unit" "ExecStart=/opt/batchd/bin/batchd server --data-dir \${BATCHD_DATA_DIR} \$BATCHD_SERVER_ARGS" "unit names PREFIX"
expect_contains "$unit" "User=batchd" "server runs as batchd"
expect_contains "$unit" "EnvironmentFile=-/etc/batchd/server.env" "unit reads /etc/batchd"
expect_not_contains "$unit" "@" "no placeholder left"
expect_eq "$("$STAGE/opt/batchd/bin/batchd" --version)" "$("$BIN_DIR/batchd" --version)" "installed binary runs"
expect_contains "$(cat "$STAGE/opt/batchd/share/bash-completion/completions/batchctl")" "complete -o default -F _batchctl batchctl" "completion installed"
# An edited setting survives a re-install.
echo '# edited' >>"$STAGE/etc/batchd/server.env"
expect_ok env PREFIX=/opt/batchd DESTDIR="$STAGE" "$ROOT/packaging/install.sh" "$BUILD"
expect_contains "$OUT" "keeping $STAGE/etc/batchd/server.env" "re-install keeps settings"
expect_contains "$(cat "$STAGE/etc/batchd/server.env")" "# edited" "edit kept"

# --- make deb ---
# xz -1: the compression level is not what is tested, and -6 of the binaries
# is most of this test's time on a loaded machine.
expect_ok env DEB_COMPRESS_LEVEL=1 "$ROOT/packaging/build-deb.sh" "$BUILD" "$E2E_TMP/deb"
DEB=$OUT
[[ -f $DEB && $DEB == *.deb ]] || fail "build-deb printed '$DEB', not a .deb"
expect_match "$(basename "$DEB")" '^batchd_[0-9]+\.[0-9]+\.[0-9]+_[a-z0-9]+\.deb$' "package file name"
expect_ok dpkg-deb -c "$DEB"
LIST=$OUT
for f in ./usr/bin/batchd ./usr/bin/batchctl ./usr/bin/batchd-shim \
         ./usr/lib/systemd/system/batchd-server.service ./usr/lib/systemd/system/batchd-agent.service \
         ./etc/batchd/server.env ./etc/batchd/agent.env \
         ./usr/share/bash-completion/completions/batchctl ./usr/share/zsh/vendor-completions/_batchctl \
         ./usr/share/batchd/deploy/prometheus/rules/batchd-recording.yml \
         ./usr/share/batchd/deploy/prometheus/rbac.yaml \
         ./usr/share/batchd/deploy/grafana/batchd-kueue.json \
         ./usr/share/doc/batchd/install.md ./usr/share/doc/batchd/copyright; do
  grep -qE " $(sed 's/[.]/[.]/g' <<<"$f")\$" <<<"$LIST" || fail "package lacks $f: $(head -c 400 <<<"$LIST")"
done
grep -vq ' root/root ' <<<"$LIST" && fail "files not owned by root/root: $(grep -v ' root/root ' <<<"$LIST" | head -3)"
expect_match "$(grep ' ./usr/bin/batchd$' <<<"$LIST")" '^-rwxr-xr-x ' "binary mode"
expect_match "$(grep ' ./etc/batchd/server.env$' <<<"$LIST")" '^-rw-r--r-- ' "server settings mode"
expect_match "$(grep ' ./etc/batchd/agent.env$' <<<"$LIST")" '^-rw-r----- ' "agent settings mode"
expect_eq "$(dpkg-deb -f "$DEB" Package)" "batchd" "Package"
expect_eq "$(dpkg-deb -f "$DEB" Architecture)" "$(dpkg --print-architecture)" "Architecture"
expect_match "$(dpkg-deb -f "$DEB" Depends)" '^adduser, .*libc6 \(>= ' "Depends from dpkg-shlibdeps"
expect_match "$(dpkg-deb -f "$DEB" Version)" '^[0-9]+\.[0-9]+\.[0-9]+$' "Version"
X="$E2E_TMP/x"
mkdir -p "$X"
dpkg-deb -e "$DEB" "$X/DEBIAN"
expect_eq "$(cat "$X/DEBIAN/conffiles")" $'/etc/batchd/server.env\n/etc/batchd/agent.env' "conffiles"
for s in postinst prerm postrm; do
  [[ -x "$X/DEBIAN/$s" ]] || fail "$s missing or not executable"
  sh -n "$X/DEBIAN/$s" || fail "$s does not parse"
done
expect_contains "$(cat "$X/DEBIAN/postinst")" "adduser --system --group" "postinst creates the user"
(cd "$X" && dpkg-deb -x "$DEB" .)
(cd "$X" && md5sum --quiet -c DEBIAN/md5sums) || fail "md5sums do not match the files"
# Stripped, and still runs.
readelf -S "$X/usr/bin/batchd" | grep -q '\.debug_info' && fail "batchd in the package is not stripped"
expect_eq "$("$X/usr/bin/batchd" --version)" "$("$BIN_DIR/batchd" --version)" "packaged binary runs"
expect_ok "$X/usr/bin/batchctl" completion bash

# The units pass systemd-analyze verify with the package's files in place:
# verify checks that ExecStart's binary exists, so the copies checked name
# the extracted tree's binaries; anything it warns about fails the test
# (an unknown key only warns).
if command -v systemd-analyze >/dev/null; then
  for u in batchd-server batchd-agent; do
    sed "s|/usr/bin/|$X/usr/bin/|g" "$X/usr/lib/systemd/system/$u.service" >"$E2E_TMP/$u.service"
    out=$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify "$E2E_TMP/$u.service" 2>&1) ||
      fail "systemd-analyze verify $u.service: $out"
    [[ -z $out ]] || fail "systemd-analyze verify $u.service warns: $out"
  done
fi
