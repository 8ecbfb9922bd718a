# e2e-parallel
# JobSet volumeClaimPolicies with pods as host processes: the claim
# `ckpt-<jobset>` (a node-local directory) is mounted in every attempt, so a
# checkpoint written by attempt 0 (which then fails, restarting the JobSet)
# is read by attempt 1, which completes. Deleting the JobSet (retention
# Delete) empties the claim: a new JobSet of the same name starts with
# nothing. With retention Retain the data outlives the JobSet.
source "$(dirname "$0")/lib.sh"
ensure_ns
MNT="$E2E_TMP/ckpt"

jobset() {  # jobset NAME RETENTION
  cat <<YAML | k create -f - >/dev/null
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: $1, namespace: $NS}
spec:
  failurePolicy: {maxRestarts: 1}
  volumeClaimPolicies:
  - templates: [{metadata: {name: ckpt}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}]
    retentionPolicy: {whenDeleted: $2}
  replicatedJobs:
  - name: w
    template:
      spec:
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: main
              image: busybox
              env:
              - name: ATTEMPT
                valueFrom: {fieldRef: {fieldPath: "metadata.labels['jobset.sigs.k8s.io/restart-attempt']"}}
              volumeMounts: [{name: ckpt, mountPath: "$MNT"}]
              command:
              - sh
              - -c
              - |
                echo "found: \$(ls "$MNT" | tr '\n' ' ')"
                echo "attempt \$ATTEMPT" > "$MNT/checkpoint-\$ATTEMPT"
                [ "\$ATTEMPT" = 0 ] && [ ! -f "$MNT/done" ] && exit 3
                touch "$MNT/done"
YAML
}
terminal() { [[ $(jp jobset "$1" '{.status.terminalState}') == "$2" ]]; }
logs_of() { k logs -n "$NS" -l "jobset.sigs.k8s.io/jobset-name=$1" --tail=5 2>/dev/null; }
gone() { ! k get jobset -n "$NS" "$1" >/dev/null 2>&1; }

# Attempt 0 writes its checkpoint and fails; attempt 1 finds it and completes.
jobset ck Delete
poll 90 terminal ck Completed || fail "ck not completed: $(jp jobset ck '{.status}')"
expect_eq "$(jp jobset ck '{.status.restarts}')" "1" "restarts"
expect_contains "$(logs_of ck)" "found: checkpoint-0" "attempt 1 sees attempt 0's checkpoint"
expect_eq "$(jp job ck-w-0 '{.spec.template.spec.volumes[0].persistentVolumeClaim.claimName}')" "ckpt-ck" "claim volume"
expect_eq "$(jp jobset ck '{.metadata.finalizers[0]}')" "batchd.io/jobset-volume-claims" "finalizer"

# Deleted with retention Delete: the claim is emptied; a new JobSet of the name finds nothing.
k delete jobset -n "$NS" ck --wait=false >/dev/null
poll 60 gone ck || fail "ck not deleted: $(jp jobset ck '{.metadata}')"
jobset ck Delete
poll 90 terminal ck Completed || fail "second ck not completed"
# Its attempt 1 sees its own attempt 0's checkpoint and nothing of the old JobSet's.
grep -qx 'found: checkpoint-0 ' <<<"$(logs_of ck)" || fail "the claim was not emptied: $(logs_of ck)"
expect_eq "$(jp jobset ck '{.status.restarts}')" "1" "the new JobSet restarted once (no old done file)"

# Retain: the data stays after the JobSet.
jobset kept Retain
poll 90 terminal kept Completed || fail "kept not completed"
expect_eq "$(jp jobset kept '{.metadata.finalizers}')" "" "no finalizer with Retain"
k delete jobset -n "$NS" kept --wait=false >/dev/null
poll 60 gone kept || fail "kept not deleted"
jobset kept Retain
poll 90 terminal kept Completed || fail "second kept not completed"
expect_contains "$(logs_of kept)" "found: checkpoint-0 checkpoint-1 done" "retained claim"
expect_eq "$(jp jobset kept '{.status.restarts}')" "0" "the second kept needed no restart"
