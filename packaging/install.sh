#!/usr/bin/env bash
# `make install`: installs batchd into DESTDIR + PREFIX.
#   packaging/install.sh BUILD_DIR
# Environment: PREFIX (/usr/local), DESTDIR (""), SYSCONFDIR (/etc; with
# PREFIX=/usr/local it stays /etc, as autotools' packages do when told so),
# STRIP=1 strips debug info from the binaries.
# Installs: bin/{batchd,batchctl,batchd-shim}; the systemd units in
# lib/systemd/system (ExecStart names PREFIX/bin); SYSCONFDIR/batchd/
# {server,agent}.env (never overwriting an existing one); bash and zsh
# completion for batchctl; share/batchd/deploy (Prometheus, Grafana);
# share/doc/batchd (install.md, README.md).
set -euo pipefail
BUILD_DIR=${1:?usage: $0 BUILD_DIR}
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
SYSCONFDIR=${SYSCONFDIR:-/etc}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN="$BUILD_DIR/bin"
for b in batchd batchctl batchd-shim; do
  [[ -x "$BIN/$b" ]] || { echo "install: $BIN/$b not built (make build)" >&2; exit 1; }
done
D="$DESTDIR$PREFIX"
DOCDIR="$PREFIX/share/doc/batchd"
install -d "$D/bin" "$D/lib/systemd/system" "$DESTDIR$SYSCONFDIR/batchd" \
  "$D/share/bash-completion/completions" "$D/share/zsh/vendor-completions" \
  "$D/share/batchd" "$DESTDIR$DOCDIR"
for b in batchd batchctl batchd-shim; do
  install -m 0755 "$BIN/$b" "$D/bin/$b"
  if [[ "${STRIP:-}" == 1 ]]; then strip --strip-debug --strip-unneeded "$D/bin/$b"; fi
done
for u in batchd-server batchd-agent; do
  sed -e "s|@BINDIR@|$PREFIX/bin|g" -e "s|@SYSCONFDIR@|$SYSCONFDIR|g" -e "s|@DOCDIR@|$DOCDIR|g" \
    "$ROOT/packaging/systemd/$u.service.in" >"$D/lib/systemd/system/$u.service"
  chmod 0644 "$D/lib/systemd/system/$u.service"
done
for f in server.env agent.env; do
  if [[ -e "$DESTDIR$SYSCONFDIR/batchd/$f" ]]; then
    echo "install: keeping $DESTDIR$SYSCONFDIR/batchd/$f"
  else
    # The agent's settings name its token file: not for every user to read.
    mode=0644
    [[ $f == agent.env ]] && mode=0640
    install -m "$mode" "$ROOT/packaging/etc/$f" "$DESTDIR$SYSCONFDIR/batchd/$f"
  fi
done
"$BIN/batchctl" completion bash >"$D/share/bash-completion/completions/batchctl"
"$BIN/batchctl" completion zsh >"$D/share/zsh/vendor-completions/_batchctl"
chmod 0644 "$D/share/bash-completion/completions/batchctl" "$D/share/zsh/vendor-completions/_batchctl"
rm -rf "$D/share/batchd/deploy"
cp -r "$ROOT/deploy" "$D/share/batchd/deploy"
find "$D/share/batchd/deploy" -type d -exec chmod 0755 {} + -o -type f -exec chmod 0644 {} +
chmod 0755 "$D/share/batchd/deploy/grafana/generate.py"
install -m 0644 "$ROOT/docs/install.md" "$ROOT/README.md" "$DESTDIR$DOCDIR/"
echo "install: batchd installed under $D"
