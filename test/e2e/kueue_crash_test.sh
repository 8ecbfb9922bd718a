#!/usr/bin/env bash
# Queueing survives kill -9: a server with --no-local-node and one simulated
# node; two ClusterQueues (10 cpu each) in one cohort (cq-a may borrow at
# most 4), LocalQueues, three WorkloadPriorityClasses (preemption within a
# ClusterQueue and reclaim within the cohort happen). 150 one-cpu Jobs
# (pods run 1-3 s) are submitted over HTTP while the server is kill -9'd
# twice and restarted on the same data directory. A sampler lists all
# Workloads throughout (one LIST is one consistent snapshot) and flags any
# moment a ClusterQueue's admitted usage exceeds nominal + borrowable or the
# cohort's exceeds its total. At the end: every Job Complete exactly once
# (succeeded == 1, exactly one Succeeded pod), exactly one Workload per Job,
# all Finished, no Job left suspended with an admitted Workload, and the
# ClusterQueue status and kueue_* metrics agree with the objects.
# Run by run.sh (E2E_FILTER=kueue_crash); standalone:
#   BIN_DIR=build/bin test/e2e/kueue_crash_test.sh
# KUEUE_CRASH_NO_KILL=1 runs the same load without the crashes (diagnosis).
set -euo pipefail
BATCHD="${BIN_DIR:?BIN_DIR not set}/batchd"
REASON=${E2E_REASON:-/dev/null}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/batchd-kueue-crash.XXXXXX")

cleanup() {
  if [[ -f "$WORK/pid" ]]; then
    local pid
    pid=$(cat "$WORK/pid")
    kill -9 "$pid" 2>/dev/null || true
  fi
  [[ -n "${KEEP_WORK:-}" ]] || rm -rf "$WORK"
}
trap cleanup EXIT

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')

cat >"$WORK/client.py" <<'PY'
import http.client, json, os, random, re, signal, subprocess, sys, threading, time

BATCHD, PORT, WORK = sys.argv[1], int(sys.argv[2]), sys.argv[3]
NS = "kc"
KQ = "/apis/kueue.x-k8s.io/v1beta2"
N_JOBS = 150
NOMINAL = {"cq-a": 10, "cq-b": 10}
BORROW_LIMIT = {"cq-a": 4, "cq-b": 10}  # cq-b: no limit, i.e. all of cq-a's quota
COHORT_TOTAL = 20
problems = []
server = [None]


def problem(msg):
    if not problems and os.environ.get("E2E_REASON"):
        with open(os.environ["E2E_REASON"], "a") as f:
            f.write(msg + "\n")
    if len(problems) < 20:
        problems.append(msg)
    print("PROBLEM:", msg, file=sys.stderr, flush=True)


def call(method, path, body=None, ctype="application/json", timeout=10):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=timeout)
    try:
        data = None if body is None else (body if isinstance(body, str) else json.dumps(body))
        c.request(method, path, body=data, headers={"Content-Type": ctype})
        r = c.getresponse()
        raw = r.read()
        return r.status, raw
    finally:
        c.close()


def must(method, path, body=None, ok=(200, 201), ctype="application/json"):
    deadline = time.time() + 30
    while True:
        try:
            st, raw = call(method, path, body, ctype)
            if st in ok or (method == "POST" and st == 409):
                return json.loads(raw) if raw else {}
            raise RuntimeError(f"{method} {path}: HTTP {st}: {raw[:300]!r}")
        except (OSError, http.client.HTTPException):
            if time.time() > deadline:
                raise
            time.sleep(0.2)


def start_server():
    log = open(os.path.join(WORK, "server.log"), "ab")
    p = subprocess.Popen([BATCHD, "server", "--allow-loopback-admin", "--listen", f"127.0.0.1:{PORT}",
                          "--data-dir", os.path.join(WORK, "data"), "--no-local-node"],
                         stdout=log, stderr=subprocess.STDOUT)
    server[0] = p
    open(os.path.join(WORK, "pid"), "w").write(str(p.pid))
    deadline = time.time() + 30
    while time.time() < deadline:
        if p.poll() is not None:
            raise SystemExit(f"server exited while starting (rc {p.returncode})")
        try:
            if call("GET", "/healthz", timeout=2)[1] == b"ok":
                return
        except (OSError, http.client.HTTPException):
            pass
        time.sleep(0.1)
    raise SystemExit("server not healthy within 30s")


def crash():
    p = server[0]
    p.send_signal(signal.SIGKILL)
    p.wait()
    print(f"{time.strftime('%X')} killed the server (pid {p.pid})", flush=True)


def setup():
    must("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                        "metadata": {"name": NS}})
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "kc-node", "annotations": {"batchd.io/simulated": "true"},
                         "labels": {"kubernetes.io/hostname": "kc-node", "e2e-node": "kc-node"}},
            "status": {"capacity": {"cpu": "64", "memory": "256Gi", "pods": "500"},
                       "allocatable": {"cpu": "64", "memory": "256Gi", "pods": "500"},
                       "conditions": [{"type": "Ready", "status": "True",
                                       "reason": "KubeletReady"}]}}
    must("POST", "/api/v1/nodes", node)
    must("PATCH", "/api/v1/nodes/kc-node/status", {"status": node["status"]},
         ctype="application/merge-patch+json")
    must("POST", f"{KQ}/resourceflavors", {
        "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
        "metadata": {"name": "kc-f"}, "spec": {"nodeLabels": {"e2e-node": "kc-node"}}})
    for name, prio in (("kc-low", 10), ("kc-mid", 100), ("kc-high", 1000)):
        must("POST", f"{KQ}/workloadpriorityclasses", {
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
            "metadata": {"name": name}, "value": prio})
    for cq in ("cq-a", "cq-b"):
        cpu = {"name": "cpu", "nominalQuota": str(NOMINAL[cq])}
        if cq == "cq-a":
            cpu["borrowingLimit"] = str(BORROW_LIMIT[cq])
        must("POST", f"{KQ}/clusterqueues", {
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": cq},
            "spec": {"cohortName": "kc-cohort", "namespaceSelector": {},
                     "preemption": {"withinClusterQueue": "LowerPriority",
                                    "reclaimWithinCohort": "Any"},
                     "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                         {"name": "kc-f", "resources": [cpu]}]}]}})
        must("POST", f"{KQ}/namespaces/{NS}/localqueues", {
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"name": "lq-" + cq[-1], "namespace": NS},
            "spec": {"clusterQueue": cq}})


def job_body(i):
    rnd = random.Random(i)
    # Low priority first, so later mid/high jobs must preempt to get in.
    prio = "kc-low" if i < 50 else rnd.choice(["kc-low", "kc-mid", "kc-high"])
    lq = "lq-a" if i % 3 else "lq-b"
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": f"j{i:03d}", "namespace": NS,
                         "labels": {"kueue.x-k8s.io/queue-name": lq,
                                    "kueue.x-k8s.io/priority-class": prio}},
            "spec": {"parallelism": 1, "completions": 1, "backoffLimit": 0,
                     "template": {"metadata": {"annotations": {
                         "batchd.io/sim-duration": f"{1 + i % 3}s"}},
                         "spec": {"restartPolicy": "Never",
                                  "tolerations": [{"operator": "Exists"}],
                                  "containers": [{"name": "main", "image": "busybox",
                                                  "command": ["true"],
                                                  "resources": {"requests": {"cpu": "1"}}}]}}}}


submitted = [0]


def submitter():
    for i in range(N_JOBS):
        must("POST", f"/apis/batch/v1/namespaces/{NS}/jobs", job_body(i))
        submitted[0] = i + 1
        time.sleep(0.08)


def cpu_milli(q):
    q = str(q)
    if q.endswith("m"):
        return int(q[:-1])
    return int(float(q) * 1000)


def admitted_usage(wl):
    st = wl.get("status") or {}
    adm = st.get("admission")
    if not adm:
        return None, 0
    if any(c.get("type") == "Finished" and c.get("status") == "True"
           for c in st.get("conditions", [])):
        return None, 0
    total = 0
    for ps in adm.get("podSetAssignments", []):
        total += cpu_milli((ps.get("resourceUsage") or {}).get("cpu", "0"))
    return adm.get("clusterQueue"), total


stop_sampling = threading.Event()
stats = {"samples": 0, "max": {"cq-a": 0, "cq-b": 0}, "max_cohort": 0}
suspended_admitted_since = {}


def cond(obj, t):
    for c in (obj.get("status") or {}).get("conditions", []):
        if c.get("type") == t:
            return c.get("status")
    return None


def sample_once():
    st, raw = call("GET", f"{KQ}/workloads", timeout=5)
    if st != 200:
        return
    usage = {"cq-a": 0, "cq-b": 0}
    for wl in json.loads(raw)["items"]:
        cq, u = admitted_usage(wl)
        if cq is not None:
            usage[cq] = usage.get(cq, 0) + u
    stats["samples"] += 1
    for cq, u in usage.items():
        stats["max"][cq] = max(stats["max"].get(cq, 0), u)
        limit = (NOMINAL[cq] + BORROW_LIMIT[cq]) * 1000
        if u > limit:
            problem(f"ClusterQueue {cq} admitted usage {u}m > nominal+borrowable {limit}m")
    total = sum(usage.values())
    stats["max_cohort"] = max(stats["max_cohort"], total)
    if total > COHORT_TOTAL * 1000:
        problem(f"cohort admitted usage {total}m > {COHORT_TOTAL * 1000}m")


def sample_suspended():
    st1, raw1 = call("GET", f"{KQ}/namespaces/{NS}/workloads", timeout=5)
    st2, raw2 = call("GET", f"/apis/batch/v1/namespaces/{NS}/jobs", timeout=5)
    if st1 != 200 or st2 != 200:
        return
    suspended = {j["metadata"]["name"] for j in json.loads(raw2)["items"]
                 if (j.get("spec") or {}).get("suspend")}
    now = time.time()
    seen = set()
    for wl in json.loads(raw1)["items"]:
        owner = next((o["name"] for o in wl["metadata"].get("ownerReferences", [])
                      if o.get("kind") == "Job"), None)
        if (owner in suspended and cond(wl, "Admitted") == "True"
                and cond(wl, "Evicted") != "True" and cond(wl, "Finished") != "True"):
            seen.add(owner)
            first = suspended_admitted_since.setdefault(owner, now)
            if now - first > 15:
                problem(f"job {owner} suspended with an admitted Workload for over 15s")
                suspended_admitted_since[owner] = now + 1e9
    for k in list(suspended_admitted_since):
        if k not in seen:
            del suspended_admitted_since[k]


def sampler():
    n = 0
    while not stop_sampling.is_set():
        try:
            sample_once()
            n += 1
            if n % 10 == 0:
                sample_suspended()
        except (OSError, http.client.HTTPException, ValueError):
            time.sleep(0.05)
        time.sleep(0.03)


def object_counts():
    """Per ClusterQueue: (reserving count, reserved millicpu, pending count) from the Workloads."""
    lqs = {"lq-a": "cq-a", "lq-b": "cq-b"}
    out = {cq: [0, 0, 0] for cq in NOMINAL}
    for wl in must("GET", f"{KQ}/namespaces/{NS}/workloads")["items"]:
        if cond(wl, "Finished") == "True":
            continue
        cq, u = admitted_usage(wl)
        if cq is not None:
            out[cq][0] += 1
            out[cq][1] += u
        elif (wl.get("spec") or {}).get("active", True):
            out[lqs[wl["spec"]["queueName"]]][2] += 1
    return out


def status_counts():
    out = {}
    for cq in NOMINAL:
        st = must("GET", f"{KQ}/clusterqueues/{cq}").get("status") or {}
        total = sum(cpu_milli(r.get("total", "0")) for fr in st.get("flavorsReservation", [])
                    for r in fr.get("resources", []) if r.get("name") == "cpu")
        out[cq] = [st.get("reservingWorkloads", 0), total, st.get("pendingWorkloads", 0)]
    return out


def check_status_converges(when):
    """ClusterQueue status must match the Workloads at some quiet moment soon after a restart."""
    deadline = time.time() + 20
    last = None
    while time.time() < deadline:
        a = object_counts()
        st = status_counts()
        b = object_counts()
        if a == b == st:
            return
        last = (a, st, b)
        time.sleep(0.02)
    problem(f"{when}: ClusterQueue status never matched the Workloads within 20s: "
            f"objects/status/objects {last}")


def jobs_done():
    js = must("GET", f"/apis/batch/v1/namespaces/{NS}/jobs")["items"]
    done = [j for j in js if cond(j, "Complete") == "True"]
    return len(js), len(done)


def final_checks():
    jobs = must("GET", f"/apis/batch/v1/namespaces/{NS}/jobs")["items"]
    wls = must("GET", f"{KQ}/namespaces/{NS}/workloads")["items"]
    pods = must("GET", f"/api/v1/namespaces/{NS}/pods")["items"]
    if len(jobs) != N_JOBS:
        problem(f"{len(jobs)} jobs stored, want {N_JOBS}")
    by_owner = {}
    for wl in wls:
        for o in wl["metadata"].get("ownerReferences", []):
            if o.get("kind") == "Job":
                by_owner.setdefault(o["uid"], []).append(wl)
        if cond(wl, "Finished") != "True":
            problem(f"workload {wl['metadata']['name']} not Finished: {wl.get('status')}")
    succeeded_pods = {}
    for p in pods:
        if (p.get("status") or {}).get("phase") == "Succeeded":
            jn = p["metadata"].get("labels", {}).get("job-name", "")
            succeeded_pods[jn] = succeeded_pods.get(jn, 0) + 1
    preempted = sum(1 for wl in wls if cond(wl, "Preempted") is not None)
    print(f"{preempted} workloads were preempted at least once", flush=True)
    if preempted == 0:
        problem("no workload was preempted: the run did not exercise preemption")
    for j in jobs:
        name, uid = j["metadata"]["name"], j["metadata"]["uid"]
        st = j.get("status") or {}
        if cond(j, "Complete") != "True":
            problem(f"job {name} not Complete: {st}")
        if st.get("succeeded", 0) != 1 or st.get("failed", 0) not in (0, None):
            problem(f"job {name}: succeeded={st.get('succeeded')} failed={st.get('failed')}")
        if succeeded_pods.get(name, 0) != 1:
            detail = [(p["metadata"]["name"], p["status"].get("phase"),
                       p["metadata"].get("creationTimestamp"),
                       p["metadata"].get("deletionTimestamp"))
                      for p in pods if p["metadata"].get("labels", {}).get("job-name") == name]
            problem(f"job {name}: {succeeded_pods.get(name, 0)} Succeeded pods, want 1: {detail}")
        n = len(by_owner.get(uid, []))
        if n != 1:
            problem(f"job {name}: {n} Workloads, want 1")
    for cq in ("cq-a", "cq-b"):
        st = must("GET", f"{KQ}/clusterqueues/{cq}").get("status") or {}
        for f in ("pendingWorkloads", "reservingWorkloads", "admittedWorkloads"):
            if st.get(f, 0) != 0:
                problem(f"ClusterQueue {cq} status.{f}={st.get(f)} with every workload finished")
        for fu in st.get("flavorsReservation", []) + st.get("flavorsUsage", []):
            for r in fu.get("resources", []):
                if cpu_milli(r.get("total", "0")) != 0:
                    problem(f"ClusterQueue {cq} status reports usage {r} with nothing admitted")
    st, raw = call("GET", "/metrics")
    text = raw.decode()
    for metric in ("kueue_pending_workloads", "kueue_admitted_active_workloads",
                   "kueue_reserving_active_workloads", "kueue_cluster_queue_resource_usage",
                   "kueue_cluster_queue_resource_reservation"):
        for m in re.finditer(rf'^{metric}\{{([^}}]*)\}} (\S+)$', text, re.M):
            if 'cluster_queue="cq-' in m.group(1) and float(m.group(2)) != 0:
                problem(f"metric {metric}{{{m.group(1)}}} = {m.group(2)}, want 0")
    for metric in ("kueue_admitted_active_workloads", "kueue_pending_workloads"):
        if not re.search(rf'^{metric}\{{[^}}]*cluster_queue="cq-a"', text, re.M):
            problem(f"metric {metric} missing for cq-a")


def main():
    t0 = time.time()
    start_server()
    setup()
    th_s = threading.Thread(target=sampler, daemon=True)
    th_s.start()
    th_j = threading.Thread(target=submitter, daemon=True)
    th_j.start()
    # Crash 1 while jobs are arriving; crash 2 once all are in and many run.
    for when in (lambda: submitted[0] >= 60, lambda: submitted[0] >= N_JOBS):
        deadline = time.time() + 60
        while not when() and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(1.5)
        if os.environ.get("KUEUE_CRASH_NO_KILL") == "1":  # Diagnosis: the same run, no crash.
            continue
        crash()
        time.sleep(0.5)
        start_server()
        print(f"{time.strftime('%X')} restarted; {submitted[0]} submitted", flush=True)
        check_status_converges(f"after restart with {submitted[0]} submitted")
    th_j.join(60)
    if th_j.is_alive():
        problem("submitter did not finish")
    deadline = time.time() + 120
    total = done = 0
    while time.time() < deadline:
        try:
            total, done = jobs_done()
        except (OSError, RuntimeError):
            pass
        if total == N_JOBS and done == N_JOBS:
            break
        time.sleep(0.5)
    time.sleep(1.0)  # Let the last Finished writes and status updates land.
    stop_sampling.set()
    th_s.join(5)
    print(f"{done}/{total} jobs complete after {time.time() - t0:.1f}s; "
          f"{stats['samples']} samples; max usage {stats['max']}, cohort {stats['max_cohort']}",
          flush=True)
    if stats["samples"] < 50:
        problem(f"only {stats['samples']} usage samples")
    if stats["max"]["cq-a"] <= NOMINAL["cq-a"] * 1000 and stats["max"]["cq-b"] <= NOMINAL["cq-b"] * 1000:
        print("note: no ClusterQueue borrowed during the run", flush=True)
    final_checks()
    if problems:
        print("\n".join(problems), file=sys.stderr)
        sys.exit(1)


main()
PY

rc=0
timeout -k 5 220 python3 "$WORK/client.py" "$BATCHD" "$PORT" "$WORK" || rc=$?
if ((rc != 0)); then
  [[ -s "$REASON" ]] || echo "kueue crash test failed (rc $rc): see its log" >"$REASON" 2>/dev/null || true
  tail -n 20 "$WORK/server.log" >&2 || true
  exit 1
fi
if grep -qE "quota invariant violated|corrupt|malformed" "$WORK/server.log"; then
  msg=$(grep -E "quota invariant violated|corrupt|malformed" "$WORK/server.log" | head -n 1)
  [[ -s "$REASON" ]] || echo "server log: $msg" >"$REASON" 2>/dev/null || true
  echo "FAIL: server log: $msg" >&2
  exit 1
fi
echo "kueue crash test passed"
