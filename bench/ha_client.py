#!/usr/bin/env python3
"""Load client for the etcd/HA benchmarks (bench/etcd_bench.sh); stdlib only.

  ha_client.py jobs --port P [--watch-port Q] --n N [--conns K]
      One big simulated Node, then N one-pod Jobs (batchd.io/sim-duration 0s)
      POSTed over K keep-alive connections to P, watched to Complete through
      Q (default P): jobs_per_sec from the first submit to the last Complete.
  ha_client.py latency --port A --watch-port B --n N
      N ConfigMaps created one at a time through A while B is watched:
      create-sent -> event-on-B latency, p50/p99 (ms).
  ha_client.py failover-setup --port P
      A simulated Node, a ResourceFlavor, a ClusterQueue (1000 CPUs) and the
      LocalQueue default/fo-lq for the failover measurement.
  ha_client.py failover --port S --old-holder ID --t0 EPOCH --job NAME --logs L1,L2,...
      Right after the leader was killed (at EPOCH, seconds): creates the
      queued Job NAME through survivor S and polls S every 20 ms for the new
      Lease holder, the Job's Workload admitted and its pod bound; then reads
      the new leader's log lines (leader election, controllers' start) from
      the replicas' logs. Times in seconds after the kill.
Prints key=value lines.
"""
import argparse, http.client, json, os, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_jobs_client import Watcher, job_complete, pct, post_all, request  # noqa: E402


def ensure_node(port):
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "bench-node", "annotations": {"batchd.io/simulated": "true"}},
            "status": {"capacity": {"cpu": "100000", "memory": "100000Gi", "pods": "1000000"},
                       "allocatable": {"cpu": "100000", "memory": "100000Gi", "pods": "1000000"},
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    st, body = request(c, "POST", "/api/v1/nodes", node)
    c.close()
    if st not in (200, 201, 409):
        raise RuntimeError(f"node: {st} {body[:200]}")


def cmd_jobs(a):
    ensure_node(a.port)
    run = f"r{int(time.time() * 1000) % 10**9}"
    jobs = [{"apiVersion": "batch/v1", "kind": "Job",
             "metadata": {"name": f"{run}-{i}", "namespace": "default", "labels": {"run": run}},
             "spec": {"template": {
                 "metadata": {"annotations": {"batchd.io/sim-duration": "0s"}},
                 "spec": {"restartPolicy": "Never", "containers": [{
                     "name": "main", "image": "busybox", "command": ["true"],
                     "resources": {"requests": {"cpu": "10m", "memory": "1Mi"}}}]}}}}
            for i in range(a.n)]
    w = Watcher(a.watch_port or a.port,
                f"/apis/batch/v1/namespaces/default/jobs?labelSelector=run%3D{run}",
                job_complete, a.n)
    w.start()
    t0 = time.monotonic()
    fails = post_all(a.port, lambda o: "/apis/batch/v1/namespaces/default/jobs", jobs, a.conns,
                     lambda name: None)
    t_sub = time.monotonic() - t0
    ok = w.all_done.wait(a.timeout)
    t = (max(w.done_at.values()) if w.done_at else time.monotonic()) - t0
    print(f"jobs={a.n}\nsubmit_failures={len(fails)}\nsubmit_s={t_sub:.2f}\n"
          f"complete={len(w.done_at)}\nall_complete={int(ok)}\nelapsed_s={t:.2f}\n"
          f"jobs_per_sec={a.n / t:.1f}")


def cmd_latency(a):
    run = f"l{int(time.time() * 1000) % 10**9}"
    sent, seen, lock = {}, {}, threading.Lock()
    ready = threading.Event()

    def watch():
        c = http.client.HTTPConnection("127.0.0.1", a.watch_port, timeout=600)
        c.request("GET", f"/api/v1/namespaces/default/configmaps?labelSelector=run%3D{run}"
                  "&watch=true&allowWatchBookmarks=false")
        r = c.getresponse()
        ready.set()
        while len(seen) < a.n:
            line = r.readline()
            if not line:
                break
            ev = json.loads(line)
            if ev.get("type") == "ADDED":
                with lock:
                    seen[ev["object"]["metadata"]["name"]] = time.monotonic()

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    ready.wait(30)
    time.sleep(0.2)
    c = http.client.HTTPConnection("127.0.0.1", a.port, timeout=60)
    for i in range(a.n):
        name = f"{run}-{i}"
        cm = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": name, "labels": {"run": run}}, "data": {"i": str(i)}}
        sent[name] = time.monotonic()
        st, body = request(c, "POST", "/api/v1/namespaces/default/configmaps", cm)
        if st not in (200, 201):
            raise RuntimeError(f"create: {st} {body[:200]}")
        time.sleep(a.gap)
    t.join(30)
    lat = [(seen[k] - sent[k]) * 1000 for k in sent if k in seen]
    print(f"latency_n={len(lat)}\nlatency_p50_ms={pct(lat, 50):.2f}\n"
          f"latency_p99_ms={pct(lat, 99):.2f}\nlatency_max_ms={max(lat) if lat else 0:.2f}")


KQ = "/apis/kueue.x-k8s.io/v1beta2"
LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/batchd-controller-manager"


def cmd_failover_setup(a):
    ensure_node(a.port)
    c = http.client.HTTPConnection("127.0.0.1", a.port, timeout=60)
    for path, obj in [
        (KQ + "/resourceflavors", {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
                                   "metadata": {"name": "fo-flavor"}}),
        (KQ + "/clusterqueues", {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
                                 "metadata": {"name": "fo-cq"},
                                 "spec": {"namespaceSelector": {}, "resourceGroups": [{
                                     "coveredResources": ["cpu", "memory"],
                                     "flavors": [{"name": "fo-flavor", "resources": [
                                         {"name": "cpu", "nominalQuota": "1000"},
                                         {"name": "memory", "nominalQuota": "1000Gi"}]}]}]}}),
        (KQ + "/namespaces/default/localqueues", {"apiVersion": "kueue.x-k8s.io/v1beta2",
                                                  "kind": "LocalQueue",
                                                  "metadata": {"name": "fo-lq", "namespace": "default"},
                                                  "spec": {"clusterQueue": "fo-cq"}})]:
        st, body = request(c, "POST", path, obj)
        if st not in (200, 201, 409):
            raise RuntimeError(f"{path}: {st} {body[:200]}")


def leader_log(paths, holder):
    """The new leader's log lines: (expired, attempt, acquired, started) in
    Unix seconds, None where its log has no such line (older binaries)."""
    import re
    lead = re.compile(r"leader election: " + re.escape(holder) + r" now leads .*expired at (\d+), "
                      r"attempt at (\d+), acquired at (\d+)")
    start = re.compile(r"leading: fence taken in \d+ ms, controllers started in \d+ ms, at (\d+)")
    for p in paths:
        try:
            lines = open(p, errors="replace").read().splitlines()
        except OSError:
            continue
        for i, line in enumerate(lines):
            m = lead.search(line)
            if not m:
                continue
            out = [int(x) / 1000 if int(x) else None for x in m.groups()]
            started = None
            for later in lines[i + 1:]:
                ms = start.search(later)
                if ms:
                    started = int(ms.group(1)) / 1000
                    break
            return out + [started]
    return [None] * 4


def cmd_failover(a):
    c = http.client.HTTPConnection("127.0.0.1", a.port, timeout=30)
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": a.job, "namespace": "default",
                        "labels": {"kueue.x-k8s.io/queue-name": "fo-lq"}},
           "spec": {"template": {
               "metadata": {"annotations": {"batchd.io/sim-duration": "0s"}},
               "spec": {"restartPolicy": "Never", "containers": [{
                   "name": "main", "image": "busybox", "command": ["true"],
                   "resources": {"requests": {"cpu": "100m", "memory": "1Mi"}}}]}}}}
    st, body = request(c, "POST", "/apis/batch/v1/namespaces/default/jobs", job)
    if st not in (200, 201):
        raise RuntimeError(f"job: {st} {body[:200]}")
    created = time.time() - a.t0
    lease_s = admitted_s = bound_s = None
    holder = ""
    deadline = time.time() + a.timeout
    while time.time() < deadline and bound_s is None:
        now = time.time() - a.t0
        if lease_s is None:
            st, body = request(c, "GET", LEASE)
            if st == 200:
                h = json.loads(body).get("spec", {}).get("holderIdentity", "")
                if h and h != a.old_holder:
                    lease_s, holder = now, h
        if admitted_s is None:
            st, body = request(c, "GET", KQ + "/namespaces/default/workloads")
            if st == 200:
                for w in json.loads(body).get("items", []):
                    owners = [o.get("name") for o in w["metadata"].get("ownerReferences", [])]
                    conds = {x["type"]: x["status"] for x in w.get("status", {}).get("conditions", [])}
                    if a.job in owners and conds.get("Admitted") == "True":
                        admitted_s = now
        st, body = request(c, "GET", f"/api/v1/namespaces/default/pods?labelSelector=job-name%3D{a.job}")
        if st == 200 and any(p.get("spec", {}).get("nodeName") for p in json.loads(body).get("items", [])):
            bound_s = now
            if admitted_s is None:
                admitted_s = now
        time.sleep(0.02)
    expired, attempt, acquired, started = leader_log(a.logs.split(","), holder) if holder else [None] * 4
    f = lambda v: "" if v is None else f"{v:.2f}"
    rel = lambda v: None if v is None else v - a.t0
    print(f"created_s={f(created)}\nlease_s={f(lease_s)}\nadmitted_s={f(admitted_s)}\n"
          f"bound_s={f(bound_s)}\nexpired_s={f(rel(expired))}\nattempt_s={f(rel(attempt))}\n"
          f"acquired_s={f(rel(acquired))}\nstarted_s={f(rel(started))}")


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    j = sub.add_parser("jobs")
    j.add_argument("--port", type=int, required=True)
    j.add_argument("--watch-port", type=int, default=0)
    j.add_argument("--n", type=int, default=1000)
    j.add_argument("--conns", type=int, default=8)
    j.add_argument("--timeout", type=float, default=300)
    l = sub.add_parser("latency")
    l.add_argument("--port", type=int, required=True)
    l.add_argument("--watch-port", type=int, required=True)
    l.add_argument("--n", type=int, default=200)
    l.add_argument("--gap", type=float, default=0.01)
    fs = sub.add_parser("failover-setup")
    fs.add_argument("--port", type=int, required=True)
    f = sub.add_parser("failover")
    f.add_argument("--port", type=int, required=True)
    f.add_argument("--old-holder", required=True)
    f.add_argument("--t0", type=float, required=True)
    f.add_argument("--job", required=True)
    f.add_argument("--logs", default="")
    f.add_argument("--timeout", type=float, default=90)
    a = p.parse_args()
    {"jobs": cmd_jobs, "latency": cmd_latency, "failover-setup": cmd_failover_setup,
     "failover": cmd_failover}[a.cmd](a)


if __name__ == "__main__":
    main()
