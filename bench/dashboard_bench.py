#!/usr/bin/env python3
"""The dashboard's cost on the server (docs/benchmarks.md, docs/dashboard.md).

Starts `batchd server` (fresh data dir, no local node), creates N Workloads
(pending: their LocalQueue does not exist, so admission leaves them alone)
and changes R of them per second (a merge patch of an annotation, round
robin). Then measures the server process's CPU and RSS for S seconds twice:
with no dashboard open, and with C simulated dashboards, each doing what the
overview page does (src/ui/web/app.js): list ClusterQueues, Workloads,
Nodes and LocalQueues, then watch all four (`?watch=1&allowWatchBookmarks=true
&timeoutSeconds=240`, resumed from the last resourceVersion). Each client
reads every event; it parses only the annotation the changer writes, to
report how late changes reach a page (p50/p99).

    bench/dashboard_bench.py build/bin/batchd [--workloads 1000] [--rate 50] [--clients 10] [--seconds 30]
"""

import argparse
import http.client
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

KQ = "/apis/kueue.x-k8s.io/v1beta2"
OVERVIEW = [KQ + "/clusterqueues", KQ + "/workloads", "/api/v1/nodes", KQ + "/localqueues"]
TICK = re.compile(rb'"bench/tick":"([0-9.]+)"')


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def proc_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0


def request(conn, method, path, body=None, ctype="application/json"):
    conn.request(method, path, body=json.dumps(body) if body is not None else None,
                 headers={"Content-Type": ctype, "Accept": "application/json"})
    r = conn.getresponse()
    data = r.read()
    if r.status >= 300:
        raise RuntimeError(f"{method} {path}: {r.status} {data[:300]!r}")
    return json.loads(data) if data else None


class Changer(threading.Thread):
    def __init__(self, port, names, rate):
        super().__init__(daemon=True)
        self.port, self.names, self.rate = port, names, rate
        self.stop = threading.Event()
        self.done = 0

    def run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        i = 0
        start = time.time()
        while not self.stop.is_set():
            due = start + i / self.rate
            now = time.time()
            if due > now:
                time.sleep(due - now)
            name = self.names[i % len(self.names)]
            request(conn, "PATCH", f"{KQ}/namespaces/bench/workloads/{name}",
                    {"metadata": {"annotations": {"bench/tick": f"{time.time():.6f}"}}},
                    "application/merge-patch+json")
            i += 1
            self.done += 1


class Dashboard(threading.Thread):
    """One simulated browser on the overview page: 4 lists, then 4 watches."""

    def __init__(self, port, lags, stop):
        super().__init__(daemon=True)
        self.port, self.lags, self.stop = port, lags, stop
        self.events = 0
        self.lock = threading.Lock()

    def watch(self, path):
        while not self.stop.is_set():
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
            body = request(conn, "GET", path)
            rv = body["metadata"]["resourceVersion"]
            conn.request("GET", f"{path}?watch=1&allowWatchBookmarks=true&timeoutSeconds=240&resourceVersion={rv}",
                         headers={"Accept": "application/json"})
            r = conn.getresponse()
            while not self.stop.is_set():
                line = r.readline()
                if not line:
                    break
                now = time.time()
                m = TICK.search(line)
                with self.lock:
                    self.events += 1
                    if m:
                        self.lags.append(now - float(m.group(1)))
            conn.close()

    def run(self):
        threads = [threading.Thread(target=self.watch, args=(p,), daemon=True) for p in OVERVIEW]
        for t in threads:
            t.start()
        for t in threads:
            t.join()


def measure(pid, seconds):
    c0, t0 = proc_cpu(pid), time.time()
    peak = 0.0
    while time.time() - t0 < seconds:
        time.sleep(0.5)
        peak = max(peak, proc_rss_mib(pid))
    return 100 * (proc_cpu(pid) - c0) / (time.time() - t0), proc_rss_mib(pid), peak


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("batchd")
    ap.add_argument("--workloads", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=50)
    ap.add_argument("--clients", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=30)
    a = ap.parse_args()

    data = tempfile.mkdtemp(prefix="batchd-dashboard-bench.")
    port = free_port()
    log = open(os.path.join(data, "server.log"), "w")
    srv = subprocess.Popen([a.batchd, "server", "--listen", f"127.0.0.1:{port}", "--allow-loopback-admin",
                            "--data-dir", os.path.join(data, "d"), "--no-local-node"], stdout=log, stderr=log)
    try:
        for _ in range(300):
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.1)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        request(conn, "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}})
        names = []
        for i in range(a.workloads):
            name = f"wl-{i:05d}"
            request(conn, "POST", f"{KQ}/namespaces/bench/workloads", {
                "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
                "metadata": {"name": name, "namespace": "bench", "annotations": {"bench/tick": "0"}},
                "spec": {"queueName": "no-such-queue", "podSets": [{"name": "main", "count": 1, "template": {"spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}}}]}})
            names.append(name)
        changer = Changer(port, names, a.rate)
        changer.start()
        time.sleep(3)  # The changer's steady state.
        load0 = open("/proc/loadavg").read().split()[0]
        base_cpu, base_rss, base_peak = measure(srv.pid, a.seconds)
        base_changes = changer.done

        stop = threading.Event()
        lags = []
        clients = [Dashboard(port, lags, stop) for _ in range(a.clients)]
        t_open = time.time()
        for c in clients:
            c.start()
        time.sleep(3)  # Lists done, watches open.
        lags.clear()
        for c in clients:
            with c.lock:
                c.events = 0
        t1 = time.time()
        dash_cpu, dash_rss, dash_peak = measure(srv.pid, a.seconds)
        elapsed = time.time() - t1
        events = sum(c.events for c in clients)
        stop.set()
        changer.stop.set()
        changer.join(10)
        load1 = open("/proc/loadavg").read().split()[0]
        lags.sort()
        q = (lambda p: lags[min(len(lags) - 1, int(p * len(lags)))] * 1000) if lags else (lambda p: float("nan"))
        out = {
            "workloads": a.workloads, "changes_per_s": a.rate, "clients": a.clients, "seconds": a.seconds,
            "changes_done": changer.done,
            "server_cpu_pct_no_dashboard": round(base_cpu, 1), "server_rss_mib_no_dashboard": round(base_rss),
            "server_cpu_pct_with_dashboards": round(dash_cpu, 1), "server_rss_mib_with_dashboards": round(dash_rss),
            "server_peak_rss_mib_with_dashboards": round(dash_peak),
            "dashboard_cpu_pct": round(dash_cpu - base_cpu, 1), "dashboard_rss_mib": round(dash_rss - base_rss),
            "events_per_client_per_s": round(events / a.clients / elapsed, 1),
            "change_to_client_ms_p50": round(q(0.5), 1), "change_to_client_ms_p99": round(q(0.99), 1),
            "loadavg_before_after": [load0, load1], "cpus": os.cpu_count(),
        }
        print(json.dumps(out, indent=1))
    finally:
        srv.terminate()
        try:
            srv.wait(10)
        except subprocess.TimeoutExpired:
            srv.kill()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
