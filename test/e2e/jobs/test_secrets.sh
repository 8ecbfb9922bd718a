# e2e-parallel
# Secrets and ConfigMaps (docs/api.md): kubectl create secret generic /
# create configmap --from-literal, the tables, stringData merged into data,
# immutable objects, validation with field paths; a pod's env from
# secretKeyRef / configMapKeyRef / envFrom (prefix) reaches the process; a
# missing key leaves the pod waiting with the kubelet's
# CreateContainerConfigError; and the secret value appears nowhere it must
# not: kubectl describe, events, the server's log.
source "$(dirname "$0")/lib.sh"
ensure_ns
cleanup() { k delete pods --all -n "$NS" --grace-period=0 --wait=false >/dev/null 2>&1 || true; }
trap cleanup EXIT
SECRET="s3cr3t-$RANDOM$RANDOM-value"
SERVER_LOG="$(dirname "$E2E_TMP")/logs/jobs-server.log"

expect_ok k create secret generic db -n "$NS" --from-literal=password="$SECRET" --from-literal=user=admin
expect_eq "$OUT" "secret/db created" "create secret output"
expect_ok k create configmap cfg -n "$NS" --from-literal=mode=fast --from-literal=level=3
expect_eq "$OUT" "configmap/cfg created" "create configmap output"
table=$(k get secrets -n "$NS")
expect_match "$table" "^NAME +TYPE +DATA +AGE" "secret table header"
expect_match "$table" "^db +Opaque +2 " "secret row"
expect_match "$(k get cm -n "$NS")" "^cfg +2 " "configmap row (short name cm)"
expect_eq "$(jp secret db '{.data.password}' | base64 -d)" "$SECRET" "data is base64 of the value"

# stringData is merged into data on write and not stored.
cat <<YAML | k apply -f - >/dev/null || fail "apply stringData secret"
apiVersion: v1
kind: Secret
metadata: {name: sd, namespace: $NS}
stringData: {token: abc}
data: {other: eHl6}
YAML
expect_eq "$(jp secret sd '{.data.token}')" "YWJj" "stringData merged into data"
expect_eq "$(jp secret sd '{.stringData}')" "" "stringData is not stored"
# Immutable: data cannot change; validation has field paths.
cat <<YAML | k apply -f - >/dev/null || fail "apply immutable configmap"
apiVersion: v1
kind: ConfigMap
metadata: {name: frozen, namespace: $NS}
immutable: true
data: {a: "1"}
YAML
expect_fail k patch configmap frozen -n "$NS" --type=merge -p '{"data":{"a":"2"}}'
expect_contains "$OUT" "data: Forbidden: field is immutable when \`immutable\` is set" "immutable configmap"
# (kubectl create secret checks keys itself; a manifest reaches the server.)
expect_fail k apply -f - <<YAML
apiVersion: v1
kind: Secret
metadata: {name: bad, namespace: $NS}
data: {"bad key": eA==, pw: "not base64 at all"}
YAML
expect_contains "$OUT" "data[bad key]: Invalid value: \"bad key\": a valid config key must consist of alphanumeric characters" "invalid key"
expect_contains "$OUT" "data[pw]: Invalid value: \"<secret contents redacted>\": illegal base64 data" "bad base64, value redacted"
expect_not_contains "$OUT" "not base64 at all" "the error message"

# env: secretKeyRef, configMapKeyRef, envFrom with a prefix.
cat <<YAML | k apply -f - >/dev/null || fail "create envpod"
apiVersion: v1
kind: Pod
metadata: {name: envpod, namespace: $NS}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: ["sh", "-c", "printf %s \"\$PASSWORD\" | sha256sum | cut -c1-64; echo mode=\$MODE; echo cfg_level=\$CFG_level; printf %s \"\$DB_password\" | sha256sum | cut -c1-64"]
    env:
    - name: PASSWORD
      valueFrom: {secretKeyRef: {name: db, key: password}}
    - name: MODE
      valueFrom: {configMapKeyRef: {name: cfg, key: mode}}
    - name: MISSING_OK
      valueFrom: {secretKeyRef: {name: db, key: nope, optional: true}}
    envFrom:
    - {prefix: CFG_, configMapRef: {name: cfg}}
    - {prefix: DB_, secretRef: {name: db}}
YAML
phase_is() { [[ $(jp pod "$1" '{.status.phase}') == "$2" ]]; }
poll 60 phase_is envpod Succeeded || fail "envpod not Succeeded: $(jp pod envpod '{.status}' | head -c 400)"
want=$(printf %s "$SECRET" | sha256sum | cut -c1-64)
mapfile -t out < <(k logs -n "$NS" envpod)
expect_eq "${out[0]}" "$want" "the secret reached the process (its sha256)"
expect_eq "${out[1]}" "mode=fast" "configMapKeyRef"
expect_eq "${out[2]}" "cfg_level=3" "envFrom configMapRef with a prefix"
expect_eq "${out[3]}" "$want" "envFrom secretRef with a prefix"

# A missing key: CreateContainerConfigError with the kubelet's message.
cat <<YAML | k apply -f - >/dev/null || fail "create nokey"
apiVersion: v1
kind: Pod
metadata: {name: nokey, namespace: $NS}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: ["true"]
    env: [{name: X, valueFrom: {secretKeyRef: {name: db, key: nope}}}]
YAML
waiting() { [[ $(jp pod nokey '{.status.containerStatuses[0].state.waiting.reason}') == CreateContainerConfigError ]]; }
poll 30 waiting || fail "nokey not CreateContainerConfigError: $(jp pod nokey '{.status}' | head -c 400)"
expect_eq "$(jp pod nokey '{.status.containerStatuses[0].state.waiting.message}')" \
  "couldn't find key nope in Secret $NS/db" "the waiting message"
events() { k get events -n "$NS" -o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}'; }
has_failed() { events | grep -qF "Failed: Error: couldn't find key nope in Secret $NS/db"; }
poll 30 has_failed || fail "no Failed event for nokey: $(events | head -c 400)"

# The value is nowhere it must not be.
expect_not_contains "$(k describe secret db -n "$NS")" "$SECRET" "kubectl describe secret"
expect_contains "$(k describe secret db -n "$NS")" "password:  " "describe shows the key (and its size)"
expect_not_contains "$(k describe pod envpod -n "$NS")" "$SECRET" "kubectl describe pod"
expect_not_contains "$(k describe pod nokey -n "$NS")" "$SECRET" "kubectl describe pod nokey"
expect_not_contains "$(k get events -n "$NS" -o yaml)" "$SECRET" "events"
[[ -f $SERVER_LOG ]] || fail "no server log at $SERVER_LOG"
if grep -qF -- "$SECRET" "$SERVER_LOG"; then fail "the secret value is in the server's log"; fi
if grep -rqF -- "$(printf %s "$SECRET" | base64)" "$SERVER_LOG"; then fail "the secret's base64 is in the server's log"; fi
