#!/usr/bin/env python3
"""Takes the screenshots in docs/dashboard.md: starts `batchd server` with
a small demo cluster (16 simulated nodes in 2 blocks x 2 racks x 4 hosts, a
Topology, two cohorts, three ClusterQueues with borrowing and lending
limits, Jobs of which some wait), opens the dashboard in headless Chromium
(test/e2e/cdp.py) and saves each main view as a PNG.

    scripts/dashboard-screenshots.py build/bin/batchd docs/img
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "e2e"))
from cdp import Browser  # noqa: E402

KQ = "kueue.x-k8s.io/v1beta2"


def post(base, path, obj):
    req = urllib.request.Request(base + path, data=json.dumps(obj).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        urllib.request.urlopen(req, timeout=30).read()
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"POST {path}: {e.code} {e.read()[:300]!r}")


def demo(base):
    post(base, "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
    post(base, "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-b"}})
    for b in range(2):
        for r in range(2):
            for h in range(4):
                name = f"b{b}-r{r}-h{h}"
                post(base, "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {
                    "name": name, "annotations": {"batchd.io/simulated": "true"},
                    "labels": {"kubernetes.io/hostname": name, "topology.batchd.io/block": f"block-{b}",
                               "topology.batchd.io/rack": f"rack-{b}{r}", "pool": "gpu"}},
                    "status": {"capacity": {"cpu": "16", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": "4"},
                               "allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": "4"},
                               "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}})
    kq = "/apis/kueue.x-k8s.io/v1beta2"
    post(base, kq + "/topologies", {"apiVersion": KQ, "kind": "Topology", "metadata": {"name": "datacenter"},
                                    "spec": {"levels": [{"nodeLabel": "topology.batchd.io/block"},
                                                        {"nodeLabel": "topology.batchd.io/rack"},
                                                        {"nodeLabel": "kubernetes.io/hostname"}]}})
    post(base, kq + "/resourceflavors", {"apiVersion": KQ, "kind": "ResourceFlavor", "metadata": {"name": "gpu"},
                                         "spec": {"nodeLabels": {"pool": "gpu"}, "topologyName": "datacenter"}})
    post(base, kq + "/cohorts", {"apiVersion": KQ, "kind": "Cohort", "metadata": {"name": "org"}, "spec": {}})
    post(base, kq + "/cohorts", {"apiVersion": KQ, "kind": "Cohort", "metadata": {"name": "research"},
                                 "spec": {"parentName": "org"}})

    def cq(name, cohort, cpu, gpu, extra=None):
        res = [dict({"name": "cpu", "nominalQuota": cpu}, **(extra or {})),
               {"name": "memory", "nominalQuota": "256Gi"}, {"name": "nvidia.com/gpu", "nominalQuota": gpu}]
        post(base, kq + "/clusterqueues", {"apiVersion": KQ, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": {
            "cohortName": cohort, "namespaceSelector": {},
            "resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                                "flavors": [{"name": "gpu", "resources": res}]}]}})
    cq("vision", "research", 48, 12, {"borrowingLimit": 16})
    cq("language", "research", 64, 16, {"lendingLimit": 32})
    cq("batch", "org", 32, 4)
    for ns, lq, cqn in [("team-a", "vision", "vision"), ("team-a", "language", "language"), ("team-b", "batch", "batch")]:
        post(base, f"{kq}/namespaces/{ns}/localqueues", {"apiVersion": KQ, "kind": "LocalQueue",
                                                         "metadata": {"name": lq, "namespace": ns}, "spec": {"clusterQueue": cqn}})
    jobs = [("team-a", "vision", "resnet", 4, 8, 2), ("team-a", "vision", "detector", 4, 8, 2),
            ("team-a", "vision", "segment", 2, 8, 2), ("team-a", "language", "llm-pretrain", 4, 10, 3),
            ("team-a", "language", "llm-eval", 1, 6, 1), ("team-b", "batch", "etl-nightly", 3, 8, 0),
            ("team-b", "batch", "etl-backfill", 3, 8, 0), ("team-b", "batch", "report", 2, 4, 0)]
    for ns, lq, name, pods, cpu, gpu in jobs:
        req = {"cpu": str(cpu), "memory": "8Gi"}
        lim = {}
        if gpu:
            req["nvidia.com/gpu"] = lim["nvidia.com/gpu"] = str(gpu)
        post(base, f"/apis/batch/v1/namespaces/{ns}/jobs", {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
            "name": name, "namespace": ns, "labels": {"kueue.x-k8s.io/queue-name": lq}}, "spec": {
            "parallelism": pods, "completions": pods, "template": {
                "metadata": {"annotations": {"batchd.io/sim-duration": "2h"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox", "command": ["true"],
                                                                    "resources": {"requests": req, "limits": lim}}]}}}})


def main():
    batchd, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    data = tempfile.mkdtemp(prefix="batchd-shots.")
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    log = open(os.path.join(data, "server.log"), "w")
    srv = subprocess.Popen([batchd, "server", "--listen", f"127.0.0.1:{port}", "--allow-loopback-admin",
                            "--data-dir", os.path.join(data, "d"), "--no-local-node"], stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if urllib.request.urlopen(base + "/healthz", timeout=2).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.1)
        demo(base)
        time.sleep(8)  # Admission and binding.
        with Browser(width=1100, height=760) as b:
            shots = [("overview", "#/", "[data-card]"), ("queues", "#/clusterqueues", "[data-cohort]"),
                     ("clusterqueue", "#/clusterqueues/vision", ".bar"),
                     ("workloads", "#/workloads/pending", "table"), ("jobs", "#/jobs", "table"),
                     ("job", "#/jobs/team-a/resnet", "table"), ("nodes", "#/nodes", ".cell")]
            for name, route, sel in shots:
                b.navigate(f"{base}/ui/{route}")
                b.wait_for(f"document.querySelector({json.dumps(sel)}) && document.body.dataset.live === '1'", 20)
                time.sleep(0.3)
                b.screenshot(os.path.join(out, f"dashboard-{name}.png"))
                print("saved", name)
            b.viewport(390, 760, mobile=True)
            b.navigate(f"{base}/ui/#/clusterqueues")
            b.wait_for("document.querySelector('.bar')", 20)
            time.sleep(0.3)
            b.screenshot(os.path.join(out, "dashboard-phone.png"))
            b.viewport(1100, 500)
            b.navigate(f"{base}/ui/#/clusterqueues/no-such-queue")
            b.wait_for("document.querySelector('[data-notfound]')", 20)
            b.screenshot(os.path.join(out, "dashboard-notfound.png"))
            b.evaluate("sessionStorage.setItem('batchd.token', 'expired'); location.reload(); true")
            b.wait_for("document.body.dataset.view === 'login'", 20)
            time.sleep(0.2)
            b.screenshot(os.path.join(out, "dashboard-login.png"))
    finally:
        srv.terminate()
        srv.wait(10)
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
