#!/usr/bin/env python3
"""Client of bench/jobset_start_bench.sh: time to start a JobSet of 1 leader +
100 workers on simulated nodes, over HTTP.

jobset_start_client.py SERVER RUNS SHAPE. Each run uses its own namespace and
26 simulated nodes (4 cpu each, tainted so only that run's pods land there).
SHAPE "1x100": the workers are one Indexed Job of 100 pods; "100x1": 100
Jobs of one pod. Every pod requests 1 cpu and "runs" for an hour. The clock
starts before the JobSet's POST and stops when a watch of the run's pods
(opened before the POST) has seen all 101 pods Running; also reported: when
all 101 were bound (spec.nodeName). Prints the median, min and max.
"""
import json
import statistics
import sys
import threading
import time
import urllib.request

import bench_http

SERVER = sys.argv[1]
RUNS = int(sys.argv[2])
SHAPE = sys.argv[3] if len(sys.argv) > 3 else "1x100"
WORKERS = 100
NODES = 26


def call(method, path, body=None):
    return bench_http.call(SERVER, method, path, body)


def template(label, pods):
    return {"spec": {
        "parallelism": pods, "completions": pods,
        "template": {
            "metadata": {"annotations": {"batchd.io/sim-duration": "1h"}},
            "spec": {"restartPolicy": "Never",
                     "nodeSelector": {"js-bench": label},
                     "tolerations": [{"key": "js-bench", "operator": "Equal", "value": label,
                                      "effect": "NoSchedule"}],
                     "containers": [{"name": "main", "image": "busybox",
                                     "resources": {"requests": {"cpu": "1"}}}]}}}}


def watch_pods(ns, total, out, ready):
    """Counts pods bound and Running from a watch; fills out["bound"], out["running"]."""
    bound, running = set(), set()
    url = f"{SERVER}/api/v1/namespaces/{ns}/pods?watch=1&timeoutSeconds=300"
    with urllib.request.urlopen(url, timeout=330) as r:
        ready.set()
        for line in r:
            ev = json.loads(line)
            pod = ev.get("object", {})
            name = pod.get("metadata", {}).get("name")
            if pod.get("spec", {}).get("nodeName"):
                bound.add(name)
                if len(bound) == total and "bound" not in out:
                    out["bound"] = time.monotonic()
            if pod.get("status", {}).get("phase") == "Running":
                running.add(name)
                if len(running) == total:
                    out["running"] = time.monotonic()
                    return


def run(i):
    ns = f"js-bench-{SHAPE}-{i}"
    label = f"{SHAPE}-run{i}"
    call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                        "metadata": {"name": ns}})
    for n in range(NODES):
        name = f"js-bench-{SHAPE}-{i}-{n}"
        status = {"capacity": {"cpu": "4", "memory": "64Gi", "pods": "110"},
                  "allocatable": {"cpu": "4", "memory": "64Gi", "pods": "110"},
                  "conditions": [{"type": "Ready", "status": "True"}]}
        call("POST", "/api/v1/nodes", {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"js-bench": label},
                         "annotations": {"batchd.io/simulated": "true"}},
            "spec": {"taints": [{"key": "js-bench", "value": label, "effect": "NoSchedule"}]}})
        # Status is reset on create, as in Kubernetes: written separately.
        call("PATCH", f"/api/v1/nodes/{name}/status", {"status": status})
    time.sleep(1)  # The simulated kubelet takes the nodes over (Ready).
    workers = ({"name": "workers", "replicas": 1, "template": template(label, WORKERS)}
               if SHAPE == "1x100" else
               {"name": "workers", "replicas": WORKERS, "template": template(label, 1)})
    js = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
          "metadata": {"name": "train", "namespace": ns},
          "spec": {"replicatedJobs": [
              {"name": "leader", "replicas": 1, "template": template(label, 1)}, workers]}}
    out, ready = {}, threading.Event()
    t = threading.Thread(target=watch_pods, args=(ns, WORKERS + 1, out, ready), daemon=True)
    t.start()
    ready.wait(30)
    t0 = time.monotonic()
    call("POST", f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{ns}/jobsets", js)
    t.join(300)
    if "running" not in out:
        raise SystemExit(f"run {i}: not all pods Running")
    return out["bound"] - t0, out["running"] - t0


def main():
    bound, running = [], []
    for i in range(RUNS):
        b, r = run(i)
        bound.append(b)
        running.append(r)
        print(f"run {i}: all bound {b:.3f} s, all Running {r:.3f} s", file=sys.stderr)
    print(f"| 1 leader + {WORKERS} workers ({SHAPE}) | {RUNS} | "
          f"{statistics.median(bound):.3f} | {statistics.median(running):.3f} | "
          f"{min(running):.3f} | {max(running):.3f} |")


main()
