#!/usr/bin/env python3
"""Kueue's scheduler performance test ("baseline"), end to end against batchd.

  kueue_perf_client.py --port P [--cohorts 5] [--cqs-per-cohort 6] [--scale 1.0]
                       [--fraction 1.0] [--server-pid PID] [--timeout 1800]

Shape (Kueue's test/performance/scheduler/configs/baseline): C cohorts x Q
ClusterQueues, one flavor, each CQ cpu nominalQuota 20, borrowingLimit 100,
preemption reclaimWithinCohort Any + withinClusterQueue LowerPriority; one
namespace + LocalQueue per CQ. Per CQ three workload classes, generated
concurrently at fixed intervals:
    small   350 x  1 cpu, runs 200 ms, priority  50, one every  100 ms
    medium  100 x  5 cpu, runs 500 ms, priority 100, one every  500 ms
    large    50 x 20 cpu, runs 1000 ms, priority 200, one every 1200 ms
(15,000 workloads for 5 x 6). Kueue fakes execution (a controller marks each
admitted Workload Finished after its runtime); here every workload is a real
batch/v1 Job in a LocalQueue whose one pod runs on a simulated node for the
runtime (batchd.io/sim-duration), so the whole path is measured: Job ->
Workload -> admission -> unsuspend -> pod -> scheduler -> simulated kubelet
-> Job Complete -> Workload Finished -> quota released.

--shape tas runs Kueue's TAS variant (configs/tas): the same 30 ClusterQueues
and 15,000 workloads with the same cpu per workload, on 640 simulated nodes
(1 block x 10 racks x 64 hosts, 96 cpu / 256Gi each) of a Topology named by a
TAS ResourceFlavor; every class is split three ways by its pod template's
topology annotation, all at the rack level: required, preferred, and
"balanced" (Kueue's generator writes podset-slice-required-topology with a
slice size):
    small   2 pods x  500m: 120 required, 120 preferred, 110 slices of 1
    medium  4 pods x 1250m:  34 required,  33 preferred,  33 slices of 2
    large   8 pods x 2500m:  17 required,  17 preferred,  16 slices of 4
(45,000 pods). Runtimes, priorities and intervals are the baseline's.

--shape large-scale runs Kueue's large-scale config (configs/large-scale, as
reference/kueue.md section 4 gives it: 1,000 ClusterQueues, 50,000 workloads,
Kueue's periodic CI mean 1,179 s): 10 cohorts x 100 ClusterQueues with the
baseline's quotas and preemption (nominal 20 cpu, borrowingLimit 100), and
per CQ
    small    35 x  1 cpu, runs 150 ms, priority  50, one every  60 ms
    medium   11 x  5 cpu, runs 350 ms, priority 100, one every 300 ms
    large     4 x 20 cpu, runs 700 ms, priority 200, one every 700 ms
on 160 simulated nodes of 128 cpu (20,480 cpu >= the 20,000 cpu of quota).

--shape deep is a deep single queue (Kueue issue #14477: 9.6 admissions per
minute from a queue 536 deep): one ClusterQueue (no cohort) whose quota is 0
while --deep-workloads (20,000) 1-cpu Jobs of --deep-runtime-ms (1,000 ms)
are created as fast as the client can; once every Workload exists and waits,
the quota is raised to --deep-quota cpu (1,000) in one update, and the client
measures admissions per second from that update until the last admission
(deep_admissions_per_s), every pod running on 10 simulated nodes of 128 cpu.

--scale multiplies every interval and runtime ("real time scaled down" with
scale < 1). --fraction runs a fraction of each class's count (quick runs).

CPU of the server's queue-manager thread (the controller that feeds the
admission core, runs its cycles and writes the decisions; /proc task
"queue-manager") is reported over the run and per admission
(qm_cpu_ms_per_admission), with the server's whole CPU.

Time to admission of a workload = the moment this client sees its Workload
with status.admission on a watch stream minus the moment its Job create was
acknowledged. Prints key=value lines: wall time to admit all / finish all,
admissions/s, and per class mean / p50 / p90 / max time to admission.
"""
import argparse, http.client, json, os, queue, sys, threading, time

# /proc readers shared with the jobs benchmark (same folder).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_jobs_client import proc_cpu_s, proc_rss_mib  # noqa: E402


def proc_hwm_mib(pid):
    """The process's peak resident set (VmHWM), submission included."""
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0

CLASSES = [  # name, count, cpu, runtime_ms, priority, interval_ms
    ("small", 350, 1, 200, 50, 100),
    ("medium", 100, 5, 500, 100, 500),
    ("large", 50, 20, 1000, 200, 1200),
]
LARGE_SCALE_CLASSES = [  # Kueue's configs/large-scale, per ClusterQueue
    ("small", 35, 1, 150, 50, 60),
    ("medium", 11, 5, 350, 100, 300),
    ("large", 4, 20, 700, 200, 700),
]
# --shape tas: per class, (pods, cpu per pod, [(mode, count, slice size)]);
# the class's cpu per workload, runtime, priority and interval stay as above.
TAS_CLASSES = {
    "small": (2, "500m", [("required", 120, 0), ("preferred", 120, 0), ("balanced", 110, 1)]),
    "medium": (4, "1250m", [("required", 34, 0), ("preferred", 33, 0), ("balanced", 33, 2)]),
    "large": (8, "2500m", [("required", 17, 0), ("preferred", 17, 0), ("balanced", 16, 4)]),
}
TAS_RACK = "cloud.provider.com/topology-rack"
TAS_BLOCK = "cloud.provider.com/topology-block"
KQ = "/apis/kueue.x-k8s.io/v1beta2"


class Api:
    def __init__(self, port):
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def do(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        for attempt in range(3):
            try:
                self.conn.request(method, path, body=data,
                                  headers={"Content-Type": "application/json"})
                r = self.conn.getresponse()
                return r.status, r.read()
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                if attempt == 2:
                    raise
        return 0, b""

    def create(self, path, obj):
        code, body = self.do("POST", path, obj)
        if code not in (200, 201, 409):
            raise RuntimeError(f"POST {path}: {code} {body[:300]!r}")

    def merge_patch(self, path, patch):
        self.conn.request("PATCH", path, body=json.dumps(patch).encode(),
                          headers={"Content-Type": "application/merge-patch+json"})
        r = self.conn.getresponse()
        body = r.read()
        if r.status != 200:
            raise RuntimeError(f"PATCH {path}: {r.status} {body[:300]!r}")


def setup(api, cohorts, per_cohort, nodes, node_cpu, tas, classes=CLASSES, deep_cq=False):
    flavor_spec = {}
    if tas:
        api.create(f"{KQ}/topologies", {"apiVersion": "kueue.x-k8s.io/v1beta2",
                   "kind": "Topology", "metadata": {"name": "default-topology"},
                   "spec": {"levels": [{"nodeLabel": TAS_BLOCK}, {"nodeLabel": TAS_RACK},
                                       {"nodeLabel": "kubernetes.io/hostname"}]}})
        flavor_spec = {"nodeLabels": {"tas-node-group": "tas"},
                       "topologyName": "default-topology"}
    api.create(f"{KQ}/resourceflavors", {"apiVersion": "kueue.x-k8s.io/v1beta2",
               "kind": "ResourceFlavor", "metadata": {"name": "default"},
               "spec": flavor_spec})
    for name, _, _, _, prio, _ in classes:
        api.create(f"{KQ}/workloadpriorityclasses", {"apiVersion": "kueue.x-k8s.io/v1beta2",
                   "kind": "WorkloadPriorityClass", "metadata": {"name": f"perf-{name}"},
                   "value": prio})
    cqs = []
    if deep_cq:  # one ClusterQueue, no cohort, quota 0 until raised
        cqs.append("deep")
        api.create(f"{KQ}/clusterqueues", {
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": "deep"},
            "spec": {"namespaceSelector": {}, "resourceGroups": [{
                "coveredResources": ["cpu"], "flavors": [{"name": "default", "resources": [
                    {"name": "cpu", "nominalQuota": "0"}]}]}]}})
        api.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                          "metadata": {"name": "deep"}})
        api.create(f"{KQ}/namespaces/deep/localqueues", {
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "deep"}, "spec": {"clusterQueue": "deep"}})
        cohorts = 0
    for c in range(cohorts):
        for q in range(per_cohort):
            cq = f"cohort{c}-cq{q}"
            cqs.append(cq)
            api.create(f"{KQ}/clusterqueues", {
                "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
                "metadata": {"name": cq},
                "spec": {"cohortName": f"cohort{c}", "namespaceSelector": {},
                         "preemption": {"reclaimWithinCohort": "Any",
                                        "withinClusterQueue": "LowerPriority"},
                         "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                             {"name": "default", "resources": [
                                 {"name": "cpu", "nominalQuota": "20",
                                  "borrowingLimit": "100"}]}]}]}})
            api.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                              "metadata": {"name": cq}})
            api.create(f"{KQ}/namespaces/{cq}/localqueues", {
                "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                "metadata": {"name": "lq", "namespace": cq}, "spec": {"clusterQueue": cq}})
    for i in range(nodes):
        cap = {"cpu": str(node_cpu), "memory": "1Ti", "pods": "1000"}
        labels = {"kubernetes.io/hostname": f"perf-node-{i}"}
        if tas:  # 1 block x 10 racks x 64 hosts, 96 cpu / 256Gi
            cap["memory"] = "256Gi"
            labels.update({TAS_BLOCK: "block-0", TAS_RACK: f"rack-{i // 64}",
                           "tas-node-group": "tas"})
        api.create("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                   "metadata": {"name": f"perf-node-{i}", "labels": labels,
                                "annotations": {"batchd.io/simulated": "true"}},
                   "status": {"capacity": cap, "allocatable": cap,
                              "conditions": [{"type": "Ready", "status": "True"}]}})
    return cqs


def job(cq, cls, idx, cpu, runtime_ms, tas=None):
    """tas: None, or (pods, cpu per pod, mode, slice size)."""
    name = f"{cls}-{idx}"
    annotations = {"batchd.io/sim-duration": f"{runtime_ms}ms"}
    pods = 1
    if tas:
        pods, cpu, mode, slice_size = tas
        if mode == "required":
            annotations["kueue.x-k8s.io/podset-required-topology"] = TAS_RACK
        elif mode == "preferred":
            annotations["kueue.x-k8s.io/podset-preferred-topology"] = TAS_RACK
        else:
            annotations["kueue.x-k8s.io/podset-slice-required-topology"] = TAS_RACK
            annotations["kueue.x-k8s.io/podset-slice-size"] = str(slice_size)
    return name, {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": cq,
                     "labels": {"kueue.x-k8s.io/queue-name": "lq",
                                "kueue.x-k8s.io/priority-class": f"perf-{cls}",
                                "perf-class": cls}},
        "spec": {"parallelism": pods, "completions": pods, "template": {
            "metadata": {"annotations": annotations},
            "spec": {"restartPolicy": "Never", "containers": [{
                "name": "main", "image": "busybox", "command": ["true"],
                "resources": {"requests": {"cpu": str(cpu)}}}]}}}}


class Watcher(threading.Thread):
    """Watches all Workloads; records when each one's Job is first seen
    admitted and finished (keyed by namespace/job-name)."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.admitted, self.finished, self.seen = port, {}, {}, set()
        self.lock = threading.Lock()
        self.ready = threading.Event()
        self.reconnects, self.relists = 0, 0

    def relist(self):
        """Lists every Workload (pages of 5,000) after a watch error: counts
        stay right (times of what happened meanwhile are the list's)."""
        api, cont, rv = Api(self.port), "", ""
        while True:
            path = f"{KQ}/workloads?limit=5000" + (f"&continue={cont}" if cont else "")
            code, body = api.do("GET", path)
            if code != 200:
                time.sleep(1)
                continue
            lst = json.loads(body)
            for item in lst.get("items", []):
                self.event({"type": "ADDED", "object": item})
            meta = lst.get("metadata", {})
            rv = rv or meta.get("resourceVersion", "")
            cont = meta.get("continue", "")
            if not cont:
                return rv

    def run(self):
        rv, need_list = "", False
        while True:
            if need_list:
                rv, need_list = self.relist(), False
                self.relists += 1
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=3600)
            path = f"{KQ}/workloads?watch=1&allowWatchBookmarks=true"
            if rv:
                path += f"&resourceVersion={rv}"
            conn.request("GET", path)
            r = conn.getresponse()
            self.ready.set()
            buf = b""
            while True:
                chunk = r.read1(65536) if hasattr(r, "read1") else r.read(65536)
                if not chunk:
                    break
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if line.strip():
                        ev = json.loads(line)
                        if ev.get("type") == "ERROR":  # e.g. 410: too old
                            need_list = True
                        rv = self.event(ev) or rv
                if need_list:
                    break
            conn.close()
            self.reconnects += 1

    def event(self, ev):
        obj = ev.get("object", {})
        meta = obj.get("metadata", {})
        if ev.get("type") == "ERROR":
            return ""
        refs = meta.get("ownerReferences", [])
        if refs:
            key = meta.get("namespace", "") + "/" + refs[0].get("name", "")
            st = obj.get("status", {})
            now = time.monotonic()
            with self.lock:
                self.seen.add(key)
                if st.get("admission") and key not in self.admitted:
                    self.admitted[key] = now
                for c in st.get("conditions", []):
                    if c.get("type") == "Finished" and c.get("status") == "True":
                        self.finished.setdefault(key, now)
        return meta.get("resourceVersion", "")


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def store_transactions(port):
    """batchd_store_transactions_total from the server's /metrics, or None."""
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("GET", "/metrics")
        body = c.getresponse().read().decode()
        for line in body.splitlines():
            if line.startswith("batchd_store_transactions_total "):
                return float(line.split()[1])
    except (OSError, http.client.HTTPException, ValueError):
        pass
    return None


def thread_cpu_s(pid, name):
    """CPU of the process's threads named `name` (/proc/PID/task/*/comm)."""
    total = 0.0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0.0
    for tid in tids:
        try:
            if open(f"/proc/{pid}/task/{tid}/comm").read().strip() != name:
                continue
            f = open(f"/proc/{pid}/task/{tid}/stat").read().rsplit(")", 1)[1].split()
            total += (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            pass
    return total


def metric_sum(port, name):
    """Sum of a metric's samples (all label sets) in /metrics, or None."""
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("GET", "/metrics")
        body = c.getresponse().read().decode()
    except (OSError, http.client.HTTPException):
        return None
    total, found = 0.0, False
    for line in body.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            try:
                total += float(line.rsplit(" ", 1)[1])
                found = True
            except ValueError:
                pass
    return total if found else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--cohorts", type=int, default=5)
    ap.add_argument("--cqs-per-cohort", type=int, default=6)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--fraction", type=float, default=1.0)
    ap.add_argument("--nodes", type=int, default=20)
    ap.add_argument("--node-cpu", type=int, default=32)
    ap.add_argument("--conns", type=int, default=8)
    ap.add_argument("--server-pid", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=1800)
    # Stop waiting when nothing was admitted or finished for this long after
    # submission (workloads stuck after a preemption would hold the run to
    # --timeout); the ones left are reported as unfinished.
    ap.add_argument("--settle", type=float, default=60)
    ap.add_argument("--shape", choices=["baseline", "tas", "large-scale", "deep"],
                    default="baseline")
    ap.add_argument("--deep-workloads", type=int, default=20000)
    ap.add_argument("--deep-quota", type=int, default=1000)
    ap.add_argument("--deep-runtime-ms", type=int, default=1000)
    a = ap.parse_args()
    tas = a.shape == "tas"
    deep = a.shape == "deep"
    classes = CLASSES
    if tas:
        a.nodes, a.node_cpu = 640, 96
    if a.shape == "large-scale":
        a.cohorts, a.cqs_per_cohort, a.nodes, a.node_cpu = 10, 100, 160, 128
        classes = LARGE_SCALE_CLASSES
    if deep:
        a.nodes, a.node_cpu = 10, 128
        classes = [("small", a.deep_workloads, 1, a.deep_runtime_ms, 50, 0)]

    cqs = setup(Api(a.port), a.cohorts, a.cqs_per_cohort, a.nodes, a.node_cpu, tas, classes,
                deep_cq=deep)
    w = Watcher(a.port)
    w.start()
    w.ready.wait(30)

    # The schedule: every (cq, class, i) at i * interval (scaled).
    sched = []
    for cq in cqs:
        for cls, count, cpu, runtime, _, interval in classes:
            # One creation stream per (class, mode) at the class's interval,
            # as Kueue's generator runs one per workload set.
            streams = [(count, None)]
            if tas:
                pods, pod_cpu, modes = TAS_CLASSES[cls]
                streams = [(n, (pods, pod_cpu, mode, size)) for mode, n, size in modes]
            idx = 0
            for n, shape in streams:
                for i in range(max(1, int(n * a.fraction))):
                    sched.append((i * interval * a.scale / 1000.0, cq, cls, idx, cpu,
                                  max(1, int(runtime * a.scale)), shape))
                    idx += 1
    sched.sort()
    total = len(sched)
    created, cls_of = {}, {}
    lock = threading.Lock()
    work = queue.Queue()
    for s in sched:
        work.put(s)
    cpu0 = proc_cpu_s(a.server_pid) if a.server_pid else 0.0
    qm0 = thread_cpu_s(a.server_pid, "queue-manager") if a.server_pid else 0.0
    attempts0 = metric_sum(a.port, "kueue_admission_attempt_duration_seconds_sum") or 0.0
    txns0 = store_transactions(a.port)
    t0 = time.monotonic()

    def submitter():
        api = Api(a.port)
        while True:
            try:
                at, cq, cls, i, cpu, runtime, shape = work.get_nowait()
            except queue.Empty:
                return
            delay = t0 + at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            name, obj = job(cq, cls, i, cpu, runtime, shape)
            api.create(f"/apis/batch/v1/namespaces/{cq}/jobs", obj)
            with lock:
                created[f"{cq}/{name}"] = time.monotonic()
                cls_of[f"{cq}/{name}"] = cls

    threads = [threading.Thread(target=submitter, daemon=True) for _ in range(a.conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    t_submitted = time.monotonic()
    t_raise = None
    if deep:
        # Every Workload exists and waits (quota 0); then one quota update.
        while time.monotonic() - t0 < a.timeout:
            with w.lock:
                if len(w.seen) >= total:
                    break
            time.sleep(0.2)
        time.sleep(2)  # let the manager settle on them (statuses written)
        qm_pending = thread_cpu_s(a.server_pid, "queue-manager") if a.server_pid else 0.0
        t_raise = time.monotonic()
        Api(a.port).merge_patch(f"{KQ}/clusterqueues/deep", {"spec": {"resourceGroups": [{
            "coveredResources": ["cpu"], "flavors": [{"name": "default", "resources": [
                {"name": "cpu", "nominalQuota": str(a.deep_quota)}]}]}]}})
    peak_rss = 0.0
    last, last_change = None, time.monotonic()
    while time.monotonic() - t0 < a.timeout:
        with w.lock:
            na, nf = len(w.admitted), len(w.finished)
        if a.server_pid:
            peak_rss = max(peak_rss, proc_rss_mib(a.server_pid))
        if nf >= total:
            break
        if (na, nf) != last:
            last, last_change = (na, nf), time.monotonic()
        elif time.monotonic() - last_change > a.settle:
            break
        time.sleep(0.2)
    with w.lock:
        adm, fin = dict(w.admitted), dict(w.finished)
    qm1 = thread_cpu_s(a.server_pid, "queue-manager") if a.server_pid else 0.0
    attempts1 = metric_sum(a.port, "kueue_admission_attempt_duration_seconds_sum")
    print(f"workloads={total}")
    print(f"cluster_queues={len(cqs)}")
    print(f"shape={a.shape}")
    print(f"scale={a.scale}")
    print(f"submit_s={t_submitted - t0:.1f}")
    print(f"admitted={len(adm)}")
    print(f"finished={len(fin)}")
    if adm:
        print(f"all_admitted_s={max(adm.values()) - t0:.1f}")
    if len(fin) >= total:
        print(f"all_finished_s={max(fin.values()) - t0:.1f}")
        print(f"admissions_per_s={total / (max(adm.values()) - t0):.1f}")
    elif fin:  # stopped by --settle or --timeout
        print(f"unfinished={total - len(fin)}")
        print(f"last_finished_s={max(fin.values()) - t0:.1f}")
        print(f"admissions_per_s={len(adm) / (max(adm.values()) - t0):.1f}")
    if deep and t_raise is not None and adm:
        after = sorted(v - t_raise for v in adm.values())
        print(f"deep_pending_at_raise={total - sum(1 for v in adm.values() if v < t_raise)}")
        print(f"deep_first_admission_s={after[0]:.2f}")
        print(f"deep_all_admitted_s={after[-1]:.1f}")
        print(f"deep_admissions_per_s={len(after) / max(after[-1], 1e-9):.1f}")
        for q in (0.1, 0.5, 0.9):  # admissions/s up to a fraction of them
            n = max(1, int(len(after) * q))
            print(f"deep_admissions_per_s_first_{int(q * 100)}pct={n / max(after[n - 1], 1e-9):.1f}")
        if a.server_pid:
            print(f"deep_qm_cpu_s_while_pending={qm_pending - qm0:.1f}")
            print(f"deep_qm_cpu_ms_per_admission_after_raise="
                  f"{1000 * (qm1 - qm_pending) / max(1, len(after)):.2f}")
    for cls, *_ in classes:
        waits = [adm[k] - created[k] for k in created if cls_of[k] == cls and k in adm]
        if waits:
            print(f"{cls}_admission_mean_s={sum(waits) / len(waits):.2f}")
            print(f"{cls}_admission_p50_s={pct(waits, 50):.2f}")
            print(f"{cls}_admission_p90_s={pct(waits, 90):.2f}")
            print(f"{cls}_admission_max_s={max(waits):.2f}")
    txns1 = store_transactions(a.port)
    if txns0 is not None and txns1 is not None:
        # Every write transaction of the server while the workloads ran
        # (Jobs, Workloads, Pods, Events, queue statuses), per workload.
        print(f"store_transactions={txns1 - txns0:.0f}")
        print(f"store_transactions_per_workload={(txns1 - txns0) / max(1, total):.2f}")
    if a.server_pid:
        print(f"server_cpu_s={proc_cpu_s(a.server_pid) - cpu0:.1f}")
        # The queue manager's thread: conversions, cycles, decision writes.
        print(f"qm_cpu_s={qm1 - qm0:.1f}")
        print(f"qm_cpu_ms_per_admission={1000 * (qm1 - qm0) / max(1, len(adm)):.2f}")
        print(f"server_rss_peak_mib={peak_rss:.0f}")  # sampled from the end of submission
        print(f"server_vmhwm_mib={proc_hwm_mib(a.server_pid):.0f}")  # the kernel's peak, whole run
    if attempts0 is not None and attempts1 is not None:
        # Time inside scheduling cycles, as Kueue's histogram counts it.
        print(f"admission_attempts_s={attempts1 - attempts0:.1f}")
    print(f"watch_reconnects={w.reconnects}")
    print(f"watch_relists={w.relists}")
    return 0 if len(fin) >= total else 1


if __name__ == "__main__":
    sys.exit(main())
