#!/usr/bin/env bash
# Soak test (not part of `make test`): thousands of short Jobs through Kueue
# queues on real pods (the server's local node and one remote `batchd agent`)
# while the server and the agent are killed with SIGKILL at random and
# restarted on the same data directories. Bounded in time: SOAK_MINUTES
# (default 10) of load with kills, then a calm tail (a quarter of the time, at
# least 60 s) with the same load and no kills, then a drain.
#
# Checks at the end:
#   - no acknowledged write lost: every Job whose create was answered 201
#     exists, or was seen Complete and deleted by the soak's reaper;
#   - no job double-counted: each Job is Complete with succeeded == 1 and has
#     at most one Succeeded pod and one Workload (checked by the reaper, which
#     then deletes it, so the number of objects stays steady, and at the end);
#   - quota never exceeded: a sampler lists the Workloads all along (one LIST is
#     one snapshot) and flags admitted usage above the ClusterQueue's quota;
#   - no stray process: once everything is done, no pod process (marker) and
#     no pod shim is left;
#   - memory flat after warm-up: the server's RSS during the calm tail (after
#     its first half) grows by less than 10% + 16 MiB. Events are kept for
#     SOAK_EVENT_TTL (default 60s, passed as --event-ttl): with kube's 1 h
#     default a soak of minutes never reaches the steady state in which as
#     many Events expire as are written, and memory can only grow.
# Usage: BIN_DIR=build/bin [SOAK_MINUTES=3] test/soak/soak.sh
# Prints a summary line per check and "SOAK PASS" / "SOAK FAIL"; exit status 1
# on failure. KEEP_WORK=1 keeps the work directory (logs, data).
set -euo pipefail
BIN_DIR=${BIN_DIR:?set BIN_DIR to the directory holding batchd and batchd-shim}
BIN_DIR=$(cd "$BIN_DIR" && pwd)
BATCHD="$BIN_DIR/batchd"
[[ -x "$BATCHD" ]] || { echo "soak: $BATCHD not found" >&2; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/batchd-soak.XXXXXX")
chmod 711 "$WORK"  # pods run as the unprivileged pod user: their dirs must be reachable
MARK="soak-$$-$RANDOM"
cleanup() {
  for f in "$WORK"/*.pid; do
    [[ -f "$f" ]] && kill -9 "$(cat "$f")" 2>/dev/null || true
  done
  pkill -9 -f -- "$MARK" 2>/dev/null || true
  pkill -9 -f -- "$WORK/" 2>/dev/null || true
  [[ -n "${KEEP_WORK:-}" ]] || rm -rf "$WORK"
}
trap cleanup EXIT
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
cat >"$WORK/config.yaml" <<'YAML'
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
manageJobsWithoutQueueName: false
integrations:
  frameworks: ["batch/job"]
YAML
python3 - "$BATCHD" "$PORT" "$WORK" "$MARK" "${SOAK_MINUTES:-10}" "${SOAK_EVENT_TTL:-60s}" <<'PY'
import http.client, json, os, random, signal, subprocess, sys, threading, time

BATCHD, PORT, WORK, MARK, MINUTES = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5])
EVENT_TTL = sys.argv[6]
NS = "soak"
KQ = "/apis/kueue.x-k8s.io/v1beta2"
QUOTA_MILLI = {"cq-a": 2000, "cq-b": 1000}
REQ = "100m"
problems = []
procs = {}
lock = threading.Lock()
rnd = random.Random(int(os.environ.get("SOAK_SEED", "1")))


def problem(msg):
    with lock:
        if len(problems) < 30:
            problems.append(msg)
    print("PROBLEM:", msg, flush=True)


def call(method, path, body=None, ctype="application/json", timeout=10):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=timeout)
    try:
        data = None if body is None else json.dumps(body)
        c.request(method, path, body=data, headers={"Content-Type": ctype})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def must(method, path, body=None, ctype="application/json", tries_for=60):
    deadline = time.time() + tries_for
    while True:
        try:
            st, raw = call(method, path, body, ctype)
            if st in (200, 201) or (method == "POST" and st == 409):
                return json.loads(raw) if raw else {}
            if st < 500 and st != 429:
                raise RuntimeError(f"{method} {path}: HTTP {st}: {raw[:300]!r}")
        except (OSError, http.client.HTTPException):
            pass
        if time.time() > deadline:
            raise RuntimeError(f"{method} {path}: no answer for {tries_for}s")
        time.sleep(0.2)


def spawn(name, argv):
    log = open(os.path.join(WORK, name + ".log"), "ab")
    p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=WORK)
    procs[name] = p
    open(os.path.join(WORK, name + ".pid"), "w").write(str(p.pid))
    return p


def start_server():
    spawn("server", [BATCHD, "server", "--listen", f"127.0.0.1:{PORT}", "--allow-loopback-admin", "--data-dir",
                     os.path.join(WORK, "data"), "--config", os.path.join(WORK, "config.yaml"),
                     "--event-ttl", EVENT_TTL])
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if call("GET", "/healthz", timeout=2)[1] == b"ok":
                return
        except (OSError, http.client.HTTPException):
            pass
        time.sleep(0.1)
    raise SystemExit("server not healthy within 60s")


def start_agent():
    # The node's credential (system:node:soak-remote) and the CA its log port
    # accepts client certificates from (the server's kubelet client).
    data = os.path.join(WORK, "data")
    token = os.path.join(WORK, "soak-remote.token")
    with open(token, "w") as f:
        subprocess.run([os.path.join(os.path.dirname(BATCHD), "batchctl"), "create", "node-token",
                        "soak-remote", "--data-dir", data], stdout=f, check=True)
    spawn("agent", [BATCHD, "agent", "--server", f"http://127.0.0.1:{PORT}", "--node-name",
                    "soak-remote", "--data-dir", os.path.join(WORK, "agent"), "--log-port", "0",
                    "--token-file", token, "--client-ca-file", os.path.join(data, "pki", "ca.crt")])


def kill(name):
    p = procs[name]
    p.send_signal(signal.SIGKILL)
    p.wait()
    print(f"{time.strftime('%X')} killed {name} (pid {p.pid})", flush=True)


def setup():
    must("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                        "metadata": {"name": NS}})
    must("POST", f"{KQ}/resourceflavors", {"apiVersion": "kueue.x-k8s.io/v1beta2",
                                           "kind": "ResourceFlavor", "metadata": {"name": "soak-f"}})
    for cq, milli in QUOTA_MILLI.items():
        must("POST", f"{KQ}/clusterqueues", {
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": cq},
            "spec": {"namespaceSelector": {}, "resourceGroups": [{
                "coveredResources": ["cpu"],
                "flavors": [{"name": "soak-f", "resources": [
                    {"name": "cpu", "nominalQuota": f"{milli}m"}]}]}]}})
        must("POST", f"{KQ}/namespaces/{NS}/localqueues", {
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"name": "lq-" + cq[-1], "namespace": NS}, "spec": {"clusterQueue": cq}})


acked = set()
attempted = [0]
stop_submit = threading.Event()


def job_body(i):
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": f"j{i:05d}", "namespace": NS,
                         "labels": {"kueue.x-k8s.io/queue-name": "lq-a" if i % 3 else "lq-b"}},
            "spec": {"completions": 1, "parallelism": 1, "backoffLimit": 6,
                     "template": {"spec": {
                         "restartPolicy": "Never", "terminationGracePeriodSeconds": 1,
                         "tolerations": [{"operator": "Exists"}],
                         "containers": [{"name": "main", "image": "busybox",
                                         "command": ["sh", "-c", f"sleep 0.2; : {MARK}"],
                                         "resources": {"requests": {"cpu": REQ}}}]}}}}


def submitter():
    i = 0
    while not stop_submit.is_set():
        # Keep a bounded backlog: at most 300 unfinished Jobs ahead.
        if len(acked) - len(verified) - done_count[0] > 300:
            time.sleep(0.2)
            continue
        attempted[0] += 1
        try:
            st, raw = call("POST", f"/apis/batch/v1/namespaces/{NS}/jobs", job_body(i), timeout=10)
            if st == 201:
                acked.add(f"j{i:05d}")
                i += 1
            elif st == 409:  # the write landed before a crash cut the answer
                acked.add(f"j{i:05d}")
                i += 1
            else:
                time.sleep(0.2)
        except (OSError, http.client.HTTPException):
            time.sleep(0.2)  # unanswered: not acknowledged; the same name is tried again


def cpu_milli(q):
    q = str(q)
    return int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)


def cond(obj, t):
    for c in (obj.get("status") or {}).get("conditions", []):
        if c.get("type") == t:
            return c.get("status")
    return None


stop_sampling = threading.Event()
stats = {"samples": 0, "max": {}, "rss": []}
done_count = [0]
verified = set()  # Complete, counted once, then deleted by the reaper
double = [0]


def check_job(j, succeeded_pods, wl_count):
    """Problems of a Complete Job (and counts it)."""
    n, st = j["metadata"]["name"], j.get("status") or {}
    if st.get("succeeded") != 1 or succeeded_pods.get(n, 0) > 1 or wl_count.get(n, 0) > 1:
        double[0] += 1
        if double[0] <= 5:
            problem(f"job {n}: succeeded={st.get('succeeded')}, {succeeded_pods.get(n, 0)} "
                    f"Succeeded pods, {wl_count.get(n, 0)} Workloads")


def group_counts(pods, wls):
    succeeded, wl_by_job = {}, {}
    for p in pods:
        if (p.get("status") or {}).get("phase") == "Succeeded":
            jn = p["metadata"].get("labels", {}).get("job-name", "")
            succeeded[jn] = succeeded.get(jn, 0) + 1
    for wl in wls:
        for o in wl["metadata"].get("ownerReferences", []):
            if o.get("kind") == "Job":
                wl_by_job[o["name"]] = wl_by_job.get(o["name"], 0) + 1
    return succeeded, wl_by_job


stop_reaper = threading.Event()


def reaper():
    """Checks Complete Jobs and deletes them (Background): a steady object count."""
    while not stop_reaper.is_set():
        time.sleep(2)
        try:
            st1, raw1 = call("GET", f"/apis/batch/v1/namespaces/{NS}/jobs", timeout=20)
            st2, raw2 = call("GET", f"/api/v1/namespaces/{NS}/pods", timeout=20)
            st3, raw3 = call("GET", f"{KQ}/namespaces/{NS}/workloads", timeout=20)
            if st1 != 200 or st2 != 200 or st3 != 200:
                continue
            succeeded, wl_by_job = group_counts(json.loads(raw2)["items"], json.loads(raw3)["items"])
            for j in json.loads(raw1)["items"]:
                n = j["metadata"]["name"]
                if cond(j, "Complete") != "True" or n in verified or stop_reaper.is_set():
                    continue
                check_job(j, succeeded, wl_by_job)
                # Checked: whatever becomes of the delete (a crash may cut its
                # answer), the Job is accounted for.
                verified.add(n)
                call("DELETE", f"/apis/batch/v1/namespaces/{NS}/jobs/{n}",
                     {"propagationPolicy": "Background"}, timeout=10)
        except (OSError, http.client.HTTPException, ValueError):
            pass


def sampler():
    while not stop_sampling.is_set():
        try:
            st, raw = call("GET", f"{KQ}/workloads", timeout=5)
            if st == 200:
                usage = {}
                for wl in json.loads(raw)["items"]:
                    s = wl.get("status") or {}
                    adm = s.get("admission")
                    if not adm or cond(wl, "Finished") == "True":
                        continue
                    u = sum(cpu_milli((ps.get("resourceUsage") or {}).get("cpu", "0"))
                            for ps in adm.get("podSetAssignments", []))
                    usage[adm.get("clusterQueue")] = usage.get(adm.get("clusterQueue"), 0) + u
                stats["samples"] += 1
                for cq, u in usage.items():
                    stats["max"][cq] = max(stats["max"].get(cq, 0), u)
                    if u > QUOTA_MILLI.get(cq, 0):
                        problem(f"ClusterQueue {cq} admitted usage {u}m > quota {QUOTA_MILLI.get(cq)}m")
            st, raw = call("GET", f"/apis/batch/v1/namespaces/{NS}/jobs", timeout=10)
            if st == 200:
                done_count[0] = sum(1 for j in json.loads(raw)["items"] if cond(j, "Complete") == "True")
        except (OSError, http.client.HTTPException, ValueError):
            pass
        time.sleep(0.5)


def rss_kib(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def main():
    t0 = time.time()
    start_server()
    setup()
    start_agent()
    threading.Thread(target=sampler, daemon=True).start()
    threading.Thread(target=submitter, daemon=True).start()
    th_r = threading.Thread(target=reaper, daemon=True)
    th_r.start()
    chaos_end = t0 + MINUTES * 60
    calm = max(60.0, MINUTES * 60 / 4)
    kills = {"server": 0, "agent": 0}
    while time.time() < chaos_end:
        time.sleep(rnd.uniform(10, 30))
        if time.time() >= chaos_end:
            break
        victim = rnd.choice(["server", "agent"])
        kill(victim)
        kills[victim] += 1
        time.sleep(rnd.uniform(0.2, 2))
        start_server() if victim == "server" else start_agent()
    print(f"{time.strftime('%X')} chaos over: {kills}; calm tail of {calm:.0f}s", flush=True)
    calm_start = time.time()
    while time.time() < calm_start + calm:
        r = rss_kib(procs["server"].pid)
        if r:
            stats["rss"].append((time.time() - calm_start, r))
        time.sleep(1)
    stop_submit.set()
    # Drain: every acknowledged Job completes.
    deadline = time.time() + 300
    jobs = []
    while time.time() < deadline:
        try:
            jobs = must("GET", f"/apis/batch/v1/namespaces/{NS}/jobs")["items"]
        except RuntimeError:
            continue
        present = {j["metadata"]["name"] for j in jobs}
        if all(cond(j, "Complete") == "True" for j in jobs) and acked <= present | verified:
            break
        time.sleep(1)
    stop_reaper.set()
    th_r.join(30)
    time.sleep(2)
    stop_sampling.set()
    elapsed = time.time() - t0
    jobs = must("GET", f"/apis/batch/v1/namespaces/{NS}/jobs")["items"]
    pods = must("GET", f"/api/v1/namespaces/{NS}/pods")["items"]
    wls = must("GET", f"{KQ}/namespaces/{NS}/workloads")["items"]
    names = {j["metadata"]["name"] for j in jobs}
    lost = sorted(acked - names - verified)
    if lost:
        problem(f"{len(lost)} acknowledged Jobs lost: {lost[:5]}")
    succeeded, wl_by_job = group_counts(pods, wls)
    incomplete = 0
    for j in jobs:
        n, st = j["metadata"]["name"], j.get("status") or {}
        if n in verified:
            continue
        if cond(j, "Complete") != "True":
            incomplete += 1
            if incomplete <= 5:
                problem(f"job {n} not Complete: {st}")
        else:
            check_job(j, succeeded, wl_by_job)
    # Stray processes: nothing of the pods may be left once all are done.
    time.sleep(3)
    strays = subprocess.run(["pgrep", "-f", "--", f": {MARK}"], capture_output=True, text=True).stdout.split()
    shims = subprocess.run(["pgrep", "-f", "--", f"batchd-shim --pod-dir {WORK}/"],
                           capture_output=True, text=True).stdout.split()
    if strays:
        problem(f"{len(strays)} pod processes left: {strays[:5]}")
    if shims:
        problem(f"{len(shims)} pod shims left: {shims[:5]}")
    # Memory: after the first half of the calm tail (warm-up), the server's
    # RSS grows by less than 10% + 16 MiB.
    rss = stats["rss"]
    warm = [r for t, r in rss if t >= calm / 2]
    if len(warm) >= 2:
        base, peak, last = warm[0], max(warm), warm[-1]
        flat = peak <= base * 1.10 + 16 * 1024
        print(f"server RSS over the calm tail after warm-up: first {base // 1024} MiB, "
              f"peak {peak // 1024} MiB, last {last // 1024} MiB ({'flat' if flat else 'GROWING'})",
              flush=True)
        if not flat:
            problem(f"server RSS grew from {base} KiB to {peak} KiB after warm-up")
    else:
        problem("too few RSS samples")
    try:
        events = len(must("GET", f"/api/v1/namespaces/{NS}/events")["items"])
        print(f"{events} Events stored in the namespace at the end", flush=True)
    except RuntimeError:
        pass
    complete = sum(1 for j in jobs if cond(j, "Complete") == "True" and j["metadata"]["name"] not in verified)
    print(f"jobs: {len(acked)} acknowledged ({attempted[0]} create attempts), "
          f"{len(verified)} verified Complete and deleted, {complete} more Complete, "
          f"{double[0]} double-counted, {len(lost)} lost; kills: {kills}; "
          f"{stats['samples']} quota samples, max admitted {stats['max']} of {QUOTA_MILLI}; "
          f"{elapsed:.0f}s", flush=True)
    if stats["samples"] < 20:
        problem(f"only {stats['samples']} quota samples")
    print("SOAK FAIL" if problems else "SOAK PASS", flush=True)
    sys.exit(1 if problems else 0)


main()
PY
