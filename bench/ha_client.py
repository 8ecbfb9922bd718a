#!/usr/bin/env python3
"""Load client for the etcd/HA benchmarks (bench/etcd_bench.sh); stdlib only.

  ha_client.py jobs --port P [--watch-port Q] --n N [--conns K]
      One big simulated Node, then N one-pod Jobs (batchd.io/sim-duration 0s)
      POSTed over K keep-alive connections to P, watched to Complete through
      Q (default P): jobs_per_sec from the first submit to the last Complete.
  ha_client.py latency --port A --watch-port B --n N
      N ConfigMaps created one at a time through A while B is watched:
      create-sent -> event-on-B latency, p50/p99 (ms).
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
    a = p.parse_args()
    {"jobs": cmd_jobs, "latency": cmd_latency}[a.cmd](a)


if __name__ == "__main__":
    main()
