#!/usr/bin/env python3
"""Client of bench/gang_bind_bench.sh: gang binding latency over HTTP.

gang_bind_client.py SERVER RUNS. Each run uses its own namespace and its own
32 simulated nodes (8 cpu each, tainted so only that run's pods land there),
a 1-cpu blocker pod, a PodGroup (gang, minCount 256) and 256 1-cpu pods. Once
the PodGroup reports "255 of 256 pods can be placed", the blocker is deleted
(grace 0) and the clock starts when the delete returns; it stops when a GET
of the PodGroup shows PodGroupScheduled=True (written after the 256 binds).
"""
import json
import statistics
import sys
import time

import bench_http

SERVER = sys.argv[1]
RUNS = int(sys.argv[2])
GANG = 256
NODES = 32


def call(method, path, body=None):
    return bench_http.call(SERVER, method, path, body)


def pod(ns, name, node_label, group=None):
    spec = {"restartPolicy": "Never",
            "nodeSelector": {"gang-bench": node_label},
            "tolerations": [{"key": "gang-bench", "operator": "Equal", "value": node_label,
                             "effect": "NoSchedule"}],
            "containers": [{"name": "main", "image": "busybox",
                            "resources": {"requests": {"cpu": "1"}}}]}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns,
                         "annotations": {"batchd.io/sim-duration": "1h"}},
            "spec": spec}


def condition(pg, ctype):
    for c in pg.get("status", {}).get("conditions", []):
        if c.get("type") == ctype:
            return c
    return {}


def wait(what, pred, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.05)
    raise SystemExit(f"timed out waiting for {what}")


def run(i):
    ns = f"gang-bench-{i}"
    label = f"run{i}"
    call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                        "metadata": {"name": ns}})
    for n in range(NODES):
        name = f"gang-bench-{i}-{n}"
        status = {"capacity": {"cpu": "8", "memory": "64Gi", "pods": "110"},
                  "allocatable": {"cpu": "8", "memory": "64Gi", "pods": "110"},
                  "conditions": [{"type": "Ready", "status": "True"}]}
        call("POST", "/api/v1/nodes", {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"gang-bench": label},
                         "annotations": {"batchd.io/simulated": "true"}},
            "spec": {"taints": [{"key": "gang-bench", "value": label, "effect": "NoSchedule"}]},
            "status": status})
        # Status is reset on create, as in Kubernetes: written separately.
        call("PATCH", f"/api/v1/nodes/{name}/status", {"status": status})
    call("POST", f"/api/v1/namespaces/{ns}/pods", pod(ns, "blocker", label))
    wait("the blocker to bind",
         lambda: call("GET", f"/api/v1/namespaces/{ns}/pods/blocker")["spec"].get("nodeName"))
    call("POST", f"/apis/scheduling.k8s.io/v1alpha2/namespaces/{ns}/podgroups", {
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
        "metadata": {"name": "pg", "namespace": ns},
        "spec": {"schedulingPolicy": {"gang": {"minCount": GANG}}}})
    for p in range(GANG):
        call("POST", f"/api/v1/namespaces/{ns}/pods", pod(ns, f"g{p}", label, "pg"))
    pg_path = f"/apis/scheduling.k8s.io/v1alpha2/namespaces/{ns}/podgroups/pg"
    want = f"{GANG - 1} of {GANG} pods can be placed, minCount is {GANG}"
    wait("the gang to wait one slot short",
         lambda: condition(call("GET", pg_path), "PodGroupScheduled").get("message") == want)
    call("DELETE", f"/api/v1/namespaces/{ns}/pods/blocker",
         {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0})
    t0 = time.monotonic()
    while condition(call("GET", pg_path), "PodGroupScheduled").get("status") != "True":
        if time.monotonic() - t0 > 60:
            raise SystemExit("the gang did not bind within 60 s")
        time.sleep(0.002)
    ms = (time.monotonic() - t0) * 1000
    pods = call("GET", f"/api/v1/namespaces/{ns}/pods")["items"]
    bound = sum(1 for p in pods if p["metadata"]["name"].startswith("g")
                and p["spec"].get("nodeName"))
    if bound != GANG:
        raise SystemExit(f"run {i}: {bound} of {GANG} bound when the condition said Scheduled")
    print(f"run {i}: 256 pods bound {ms:.1f} ms after the 256th slot freed", flush=True)
    return ms


def main():
    times = [run(i) for i in range(RUNS)]
    print(f"median {statistics.median(times):.1f} ms over {RUNS} runs "
          f"(min {min(times):.1f}, max {max(times):.1f})")


if __name__ == "__main__":
    main()
