# e2e-parallel
# Secret and configMap volumes (docs/security.md "Secrets"): a pod reads a
# Secret's keys as files (items renamed, mode per item) and a ConfigMap's
# (defaultMode), owned by the pod's user; a missing Secret keeps a pod
# waiting with the kubelet's FailedMount event (no value in it); an
# optional one gives an empty volume; the secret value appears in no event
# and not in the server's log. Pods get the `default` ServiceAccount; one
# naming a missing ServiceAccount is refused with Kubernetes' message.
source "$(dirname "$0")/lib.sh"
ensure_ns
cleanup() { k delete pods --all -n "$NS" --grace-period=0 --wait=false >/dev/null 2>&1 || true; }
trap cleanup EXIT
SECRET="vol-s3cr3t-$RANDOM$RANDOM"
SERVER_LOG="$(dirname "$E2E_TMP")/logs/jobs-server.log"
M="$E2E_TMP/mnt"

expect_ok k create secret generic db -n "$NS" --from-literal=password="$SECRET" --from-literal=user=admin
expect_ok k create configmap cfg -n "$NS" --from-literal=app.conf=mode=fast
# Mounted where the pod is isolated (root agent); else $BATCHD_VOLUME_<NAME>.
cat <<YAML | k apply -f - >/dev/null || fail "create volpod"
apiVersion: v1
kind: Pod
metadata: {name: volpod, namespace: $NS}
spec:
  restartPolicy: Never
  volumes:
  - name: creds
    secret:
      secretName: db
      items: [{key: password, path: pw/secret.txt, mode: 0400}, {key: user, path: user}]
  - {name: cfg, configMap: {name: cfg, defaultMode: 0440}}
  - {name: maybe, secret: {secretName: absent, optional: true}}
  containers:
  - name: main
    image: busybox
    command:
    - sh
    - -c
    - |
      c=\${BATCHD_VOLUME_CREDS:-$M/creds}; g=\${BATCHD_VOLUME_CFG:-$M/cfg}; o=\${BATCHD_VOLUME_MAYBE:-$M/maybe}
      [ "\$(cat \$c/pw/secret.txt)" = "$SECRET" ] && echo secret-ok
      echo "user=\$(cat \$c/user) conf=\$(cat \$g/app.conf)"
      echo "modes=\$(stat -c %a \$c/pw/secret.txt) \$(stat -c %a \$c/user) \$(stat -c %a \$g/app.conf)"
      [ "\$(stat -c %u \$c/user)" = "\$(id -u)" ] && echo owner-ok
      echo "optional=\$(ls -A \$o | wc -l)"
      if [ -n "\$BATCHD_VOLUME_CREDS" ]; then echo not-isolated; else touch \$c/new 2>/dev/null || echo read-only; fi
    volumeMounts:
    - {name: creds, mountPath: "$M/creds"}
    - {name: cfg, mountPath: "$M/cfg"}
    - {name: maybe, mountPath: "$M/maybe"}
YAML
phase_is() { [[ $(jp pod "$1" '{.status.phase}') == "$2" ]]; }
poll 60 phase_is volpod Succeeded || fail "volpod not Succeeded: $(k get pod -n "$NS" volpod -o jsonpath='{.status}' | head -c 400)"
logs=$(k logs -n "$NS" volpod)
expect_contains "$logs" "secret-ok" "the secret's value as a file"
expect_contains "$logs" "user=admin conf=mode=fast" "items and configMap keys"
expect_contains "$logs" "modes=400 644 440" "item mode, default 0644, defaultMode"
expect_contains "$logs" "owner-ok" "files owned by the pod's user"
expect_contains "$logs" "optional=0" "a missing optional secret is an empty volume"
# Read-only where the pod is isolated (a root agent: this suite's).
[[ $logs == *not-isolated* ]] || expect_contains "$logs" "read-only" "mounted read-only"
expect_eq "$(jp pod volpod '{.spec.serviceAccountName}')" "default" "pods get the default ServiceAccount"
expect_eq "$(k get serviceaccount default -n "$NS" -o jsonpath='{.metadata.name}')" "default" "the namespace's default ServiceAccount"

# A missing Secret: the pod waits with the kubelet's FailedMount event.
cat <<YAML | k apply -f - >/dev/null || fail "create waiting pod"
apiVersion: v1
kind: Pod
metadata: {name: waiting, namespace: $NS}
spec:
  volumes: [{name: creds, secret: {secretName: nope}}]
  containers: [{name: main, image: busybox, command: ["true"], volumeMounts: [{name: creds, mountPath: "$M/w"}]}]
YAML
failed_mount() { k get events -n "$NS" -o jsonpath='{.items[*].message}' | grep -q 'MountVolume.SetUp failed for volume "creds" : secret "nope" not found'; }
poll 30 failed_mount || fail "no FailedMount event: $(k get events -n "$NS" 2>&1 | tail -n 3)"
expect_eq "$(jp pod waiting '{.status.phase}')" "Pending" "waiting pod's phase"
expect_not_contains "$(k get events -n "$NS" -o yaml)" "$SECRET" "events"
[[ -r $SERVER_LOG ]] && ! grep -q -- "$SECRET" "$SERVER_LOG" || fail "the secret value is in the server's log (or the log is unreadable)"

# A pod naming a ServiceAccount that does not exist is refused.
expect_fail k run nosa -n "$NS" --image=busybox --restart=Never --overrides='{"spec":{"serviceAccountName":"bot"}}' -- true
expect_contains "$OUT" "pods \"nosa\" is forbidden: service account $NS/bot was not found, retry after the service account is created" "missing ServiceAccount"
