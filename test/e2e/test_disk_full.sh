# Disk full: a server whose data directory is on a small, full tmpfs refuses
# writes with a 500 Status naming the cause, keeps serving reads, loses and
# corrupts nothing acknowledged, and resumes writing by itself once space
# returns. Runs its own server (the shared one's store is elsewhere); needs
# root for the mount, and is skipped with a message without it.
source "$E2E_LIB"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BATCHD="${BIN_DIR:?}/batchd"
MNT=$(mktemp -d "${TMPDIR:-/tmp}/batchd-diskfull.XXXXXX")
DF_PID=""
cleanup_df() {
  if [[ -n "$DF_PID" ]]; then kill -9 "$DF_PID" 2>/dev/null || true; wait "$DF_PID" 2>/dev/null || true; fi
  umount "$MNT" 2>/dev/null || true
  rm -rf "$MNT"
}
trap cleanup_df EXIT
if ! mount -t tmpfs -o size=12m tmpfs "$MNT" 2>/dev/null; then
  echo "SKIP: cannot mount a tmpfs at $MNT (needs root)"
  exit 0
fi
DF_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
start_df() {
  "$BATCHD" server --listen "127.0.0.1:$DF_PORT" --allow-loopback-admin --data-dir "$MNT/data" --no-local-node \
    >>"$E2E_TMP/diskfull-server.log" 2>&1 &
  DF_PID=$!
  local deadline=$((SECONDS + 30))
  until [[ $(curl -s -m 2 "http://127.0.0.1:$DF_PORT/healthz" 2>/dev/null) == ok ]]; do
    kill -0 "$DF_PID" 2>/dev/null || fail "disk-full server exited while starting: $(tail -n 3 "$E2E_TMP/diskfull-server.log")"
    ((SECONDS < deadline)) || fail "disk-full server not healthy within 30s"
    sleep 0.1
  done
}
start_df
printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: df\n' |
  kubectl -s "http://127.0.0.1:$DF_PORT" --cache-dir "$E2E_CACHE" apply -f - >/dev/null
# The client writes, fills what is left (the store keeps some free pages:
# writes fail a little later), checks the refusals and reads, frees the space.
expect_ok timeout 120 python3 "$HERE/disk_full.py" fill "$DF_PORT" df "$MNT/filler" "$E2E_TMP/acked.json"
echo "$OUT"
# kubectl shows the same refusal while full.
dd if=/dev/zero of="$MNT/filler" bs=64k >/dev/null 2>&1 || true
for i in 1 2 3 4 5 6 7 8; do
  printf 'apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: k%s\n  namespace: df\n  annotations: {pad: "%s"}\n' "$i" "$(head -c 60000 /dev/zero | tr '\0' p)" >"$E2E_TMP/l.yaml"
  if ! OUT=$(kubectl -s "http://127.0.0.1:$DF_PORT" --cache-dir "$E2E_CACHE" create -f "$E2E_TMP/l.yaml" 2>&1); then
    break
  fi
done
expect_contains "$OUT" "disk is full" "kubectl create on a full disk"
rm -f "$MNT/filler"
# Acknowledged writes survive kill -9 and a restart, uncorrupted.
kill -9 "$DF_PID"; wait "$DF_PID" 2>/dev/null || true; DF_PID=""
start_df
expect_ok timeout 60 python3 "$HERE/disk_full.py" verify "$DF_PORT" df "$E2E_TMP/acked.json"
echo "$OUT"
if grep -qiE "corrupt|malformed" "$E2E_TMP/diskfull-server.log"; then
  fail "server log reports store damage: $(grep -iE 'corrupt|malformed' "$E2E_TMP/diskfull-server.log" | head -n 1)"
fi
