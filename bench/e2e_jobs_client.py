#!/usr/bin/env python3
"""End-to-end load client for a running batchd server (python3 stdlib only).

  e2e_jobs_client.py jobs --port P --n N [--conns K] [--server-pid PID]
      N one-pod Jobs running `true`; measures first submit -> all N Complete.
  e2e_jobs_client.py sim --port P --nodes M --pods N [--conns K] [--server-pid PID]
      M simulated Nodes (cpu 8, memory 32Gi, pods 110) then N pods with
      batchd.io/sim-duration 1h; measures first pod submit -> all N bound.
  e2e_jobs_client.py kubectl --port P --n N --workdir DIR [--kubectl PATH]
      The same N Jobs as `jobs`, written as one multi-document YAML file and
      created by one `kubectl create -f FILE` (discovery cached by a warm-up
      call first, as a user's would be): kubectl start -> all N Complete, and
      kubectl's own wall time, CPU (user+sys) and peak RSS. Latency is from
      the moment kubectl prints "job.batch/NAME created" (it creates one
      object at a time, in file order) to Complete.
  e2e_jobs_client.py kueue --port P --n N --quota Q [--cpu-request 100m]
      A ResourceFlavor, a ClusterQueue `bench` whose cpu nominalQuota is
      Q x the request (so at most Q of these Jobs are admitted at once), a
      LocalQueue `lq` in the namespace, then the N Jobs labelled
      kueue.x-k8s.io/queue-name=lq, each requesting --cpu-request: first
      submit -> all N Complete. The ClusterQueue's status is sampled every
      0.5 s: the most Workloads seen admitted at once (must be <= Q).

Submissions are POSTs over K keep-alive HTTP/1.1 connections (one thread each).
Completion/binding is observed through one watch stream (labelSelector on a
per-run label), started before the first submit; if the stream ends early the
client re-lists and re-watches from the list's resourceVersion.
Prints key=value lines (consumed by bench/e2e_jobs_bench.sh); <label>_per_s_halves
is the completion rate over the first and the second half of the N (does the
rate hold as the store fills?), <label>_client_rss_peak_mib this client's peak RSS.
"""
import argparse, http.client, json, os, resource, subprocess, sys, threading, time

TCK = os.sysconf("SC_CLK_TCK")
KQ = "/apis/kueue.x-k8s.io/v1beta2"


def proc_rss_mib(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def proc_cpu_s(pid):
    try:
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / TCK
    except OSError:
        return 0.0


def proc_tree_cpu_s(pid):
    """CPU of pid, of its reaped descendants, and of its live children with
    theirs: pod shims are forked by the agent's shim launcher (a live child
    of the server that reaps them), so their CPU is in the launcher's."""
    def own_and_reaped(p):
        try:
            f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
            return sum(int(x) for x in f[11:15]) / TCK, int(f[1])
        except (OSError, ValueError, IndexError):
            return 0.0, -1
    total, _ = own_and_reaped(pid)
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != pid:
            cpu, ppid = own_and_reaped(int(entry))
            if ppid == pid:
                total += cpu
    return total


def thread_cpu_s(pid):
    """CPU seconds of each of pid's threads, summed by thread name (comm)."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            comm = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
            f = open(f"/proc/{pid}/task/{tid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[comm] = out.get(comm, 0.0) + (int(f[11]) + int(f[12])) / TCK
    return out


def store_revision(port):
    """The store's current revision: a list's resourceVersion."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    st, body = request(c, "GET", "/api/v1/namespaces?limit=1")
    c.close()
    return int(json.loads(body)["metadata"]["resourceVersion"]) if st == 200 else 0


def store_transactions(port):
    """batchd_store_transactions_total from /metrics (-1 when not served)."""
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        st, body = request(c, "GET", "/metrics")
        c.close()
    except OSError:
        return -1
    if st != 200:
        return -1
    for line in body.decode(errors="replace").splitlines():
        if line.startswith("batchd_store_transactions_total "):
            return int(float(line.split()[1]))
    return -1


def host_cpu():
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return sum(f) / TCK, (f[3] + f[4]) / TCK


class Sampler(threading.Thread):
    """Peak RSS of the server, sampled every 0.1 s."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.stop_ev, self.peak = pid, threading.Event(), 0.0

    def run(self):
        while not self.stop_ev.is_set():
            self.peak = max(self.peak, proc_rss_mib(self.pid))
            time.sleep(0.1)


def request(conn, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    hdrs = {"Content-Type": "application/json"} if data else {}
    conn.request(method, path, body=data, headers=hdrs)
    r = conn.getresponse()
    return r.status, r.read()


def post_all(port, path_fn, objs, conns, on_sent):
    """POSTs objs over `conns` keep-alive connections; returns failures."""
    failures, lock = [], threading.Lock()

    def worker(part):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for o in part:
            on_sent(o["metadata"]["name"])
            try:
                st, body = request(c, "POST", path_fn(o), o)
            except (OSError, http.client.HTTPException) as e:
                c.close()
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                st, body = -1, str(e).encode()
            if st not in (200, 201):
                with lock:
                    failures.append((o["metadata"]["name"], st, body[:200]))
        c.close()

    ts = [threading.Thread(target=worker, args=(objs[i::conns],)) for i in range(conns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return failures


class Watcher(threading.Thread):
    """Watches `path` (a collection URL with labelSelector); calls done_fn(obj)
    for each object seen and records the first time it returns True."""

    def __init__(self, port, path, done_fn, want):
        super().__init__(daemon=True)
        self.port, self.path, self.done_fn, self.want = port, path, done_fn, want
        self.done_at, self.stop_ev, self.errors = {}, threading.Event(), 0
        self.all_done = threading.Event()
        self.rv = self._list()

    def _see(self, obj):
        name = obj["metadata"]["name"]
        if name not in self.done_at and self.done_fn(obj):
            self.done_at[name] = time.monotonic()
            if len(self.done_at) >= self.want:
                self.all_done.set()

    def _list(self):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        st, body = request(c, "GET", self.path)
        c.close()
        if st != 200:
            raise RuntimeError(f"list {self.path}: {st} {body[:200]}")
        lst = json.loads(body)
        for o in lst.get("items") or []:
            self._see(o)
        return lst["metadata"]["resourceVersion"]

    def run(self):
        while not self.stop_ev.is_set() and not self.all_done.is_set():
            try:
                self._stream()
            except (OSError, http.client.HTTPException, ValueError):
                self.errors += 1
            if not self.all_done.is_set() and not self.stop_ev.is_set():
                time.sleep(0.2)
                self.rv = self._list()

    def _stream(self):
        sep = "&" if "?" in self.path else "?"
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        c.request("GET", f"{self.path}{sep}watch=true&resourceVersion={self.rv}"
                  "&allowWatchBookmarks=false")
        r = c.getresponse()
        if r.status != 200:
            raise ValueError(f"watch: {r.status}")
        while not self.stop_ev.is_set() and not self.all_done.is_set():
            line = r.readline()
            if not line:
                break
            ev = json.loads(line)
            if ev.get("type") == "ERROR":
                break
            obj = ev["object"]
            self.rv = obj["metadata"].get("resourceVersion", self.rv)
            if ev.get("type") in ("ADDED", "MODIFIED"):
                self._see(obj)
        c.close()


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def job_complete(o):
    for c in (o.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Complete" and c.get("status") == "True":
            return True
    return False


def job_failed(o):
    for c in (o.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Failed" and c.get("status") == "True":
            return True
    return False


def rate_halves(done_times, t0):
    """Completions per second over the first and the second half of them."""
    ts = sorted(t - t0 for t in done_times)
    if len(ts) < 4:
        return "n/a"
    h = len(ts) // 2
    first = h / ts[h - 1] if ts[h - 1] > 0 else 0.0
    span = ts[-1] - ts[h - 1]
    second = (len(ts) - h) / span if span > 0 else 0.0
    return f"{first:.1f} / {second:.1f}"


def run_measured(args, label, objs, path_fn, watch_path, done_fn, submit_fn=None):
    """Submits objs (POSTs, or submit_fn(sent) -> failures), waits for all
    done; prints the figures."""
    n = len(objs)
    sent = {}
    w = Watcher(args.port, watch_path, done_fn, n)
    samp = Sampler(args.server_pid) if args.server_pid else None
    c0 = proc_cpu_s(args.server_pid) if args.server_pid else 0.0
    th0 = thread_cpu_s(args.server_pid) if args.server_pid else {}
    t0_tree = proc_tree_cpu_s(args.server_pid) if args.server_pid else 0.0
    rev0 = store_revision(args.port)
    tx0 = store_transactions(args.port)
    me0 = sum(os.times()[:2])
    h0, i0 = host_cpu()
    if samp:
        samp.start()
    w.start()
    t0 = time.monotonic()
    if submit_fn is None:
        fails = post_all(args.port, path_fn, objs, args.conns,
                         lambda name: sent.__setitem__(name, time.monotonic()))
    else:
        fails = submit_fn(sent)
    t_sub = time.monotonic() - t0
    ok = w.all_done.wait(timeout=max(1.0, args.timeout - t_sub))
    t_end = (max(w.done_at.values()) if w.done_at else time.monotonic()) - t0
    w.stop_ev.set()
    h1, i1 = host_cpu()
    me1 = sum(os.times()[:2])
    rev1 = store_revision(args.port)
    tx1 = store_transactions(args.port)
    lat = [w.done_at[k] - sent[k] for k in w.done_at if k in sent]
    out = {
        f"{label}_n": n,
        f"{label}_conns": args.conns,
        f"{label}_submit_failures": len(fails),
        f"{label}_submit_s": round(t_sub, 3),
        f"{label}_submit_per_s": round(n / t_sub, 1),
        f"{label}_done": len(w.done_at),
        f"{label}_timed_out": int(not ok),
        f"{label}_e2e_s": round(t_end, 3),
        f"{label}_per_s": round(len(w.done_at) / t_end, 1) if t_end > 0 else 0,
        f"{label}_lat_p50_ms": round(1000 * pct(lat, 50), 1),
        f"{label}_lat_p99_ms": round(1000 * pct(lat, 99), 1),
        f"{label}_lat_max_ms": round(1000 * pct(lat, 100), 1),
        f"{label}_per_s_halves": rate_halves(w.done_at.values(), t0),
        f"{label}_watch_reconnects": w.errors,
        f"{label}_host_cpu_busy_pct": round(100 * ((h1 - h0) - (i1 - i0)) / max(h1 - h0, 1e-9), 1),
        f"{label}_host_cpu_ms_per_item": round(1000 * ((h1 - h0) - (i1 - i0)) / n, 2),
        f"{label}_client_cpu_ms_per_item": round(1000 * (me1 - me0) / n, 2),
        f"{label}_client_rss_peak_mib":
            round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        f"{label}_store_writes_per_item": round((rev1 - rev0) / n, 2),
        f"{label}_store_transactions_per_item":
            round((tx1 - tx0) / n, 2) if tx0 >= 0 and tx1 >= 0 else "n/a",
        f"{label}_rev0": rev0,
        f"{label}_rev1": rev1,
    }
    if samp:
        samp.stop_ev.set()
        samp.join()
        out[f"{label}_server_cpu_s"] = round(proc_cpu_s(args.server_pid) - c0, 2)
        out[f"{label}_server_cpu_ms_per_item"] = round(
            1000 * (proc_cpu_s(args.server_pid) - c0) / n, 2)
        # Shims and containers count once reaped (they are by the end).
        tree = proc_tree_cpu_s(args.server_pid) - t0_tree
        out[f"{label}_server_tree_cpu_ms_per_item"] = round(1000 * tree / n, 2)
        out[f"{label}_pods_cpu_ms_per_item"] = round(
            1000 * (tree - (proc_cpu_s(args.server_pid) - c0)) / n, 2)
        # By server thread (name), ms per item: where a change moved CPU is
        # clearer here than in the process total. Threads that ended in
        # between are missed (the long-lived ones are what counts).
        th1 = thread_cpu_s(args.server_pid)
        by = sorted(((th1[k] - th0.get(k, 0.0), k) for k in th1), reverse=True)
        out[f"{label}_server_threads_cpu_ms_per_item"] = ", ".join(
            f"{k} {1000 * v / n:.2f}" for v, k in by if v > 0)
        out[f"{label}_server_rss_peak_mib"] = round(samp.peak, 1)
        out[f"{label}_server_rss_end_mib"] = round(proc_rss_mib(args.server_pid), 1)
    for k, v in out.items():
        print(f"{k}={v}")
    for name, st, body in fails[:5]:
        print(f"# submit failure {name}: {st} {body!r}", file=sys.stderr)
    sys.stdout.flush()
    return ok and not fails


def job_objs(run_id, n, labels=None, cpu_request=None):
    """N one-pod Jobs running `true`, labelled bench=run_id (+ labels)."""
    container = {"name": "c", "image": "busybox", "command": ["true"]}
    if cpu_request:
        container["resources"] = {"requests": {"cpu": cpu_request}}
    return [{
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": f"{run_id}-{i:06d}", "labels": {"bench": run_id, **(labels or {})}},
        "spec": {"backoffLimit": 0, "template": {"spec": {
            "restartPolicy": "Never", "containers": [container]}}},
    } for i in range(n)]


def run_jobs(args, label, run_id, objs, submit_fn=None):
    """Measures objs (Jobs in args.namespace) to Complete; prints
    <label>_failed. Returns the exit code."""
    path = f"/apis/batch/v1/namespaces/{args.namespace}/jobs"
    failed = []

    def done(o):
        if job_failed(o):
            failed.append(o["metadata"]["name"])
            return True
        return job_complete(o)
    ok = run_measured(args, label, objs, lambda o: path,
                      f"{path}?labelSelector=bench%3D{run_id}", done, submit_fn)
    print(f"{label}_failed={len(failed)}")
    return 0 if ok and not failed else 1


def cmd_jobs(args):
    run_id = f"e2e{int(time.time())}"
    return run_jobs(args, "jobs", run_id, job_objs(run_id, args.n))


def job_yaml(o):
    """One Job as a user would write it (block-style YAML document)."""
    c = o["spec"]["template"]["spec"]["containers"][0]
    labels = "".join(f"    {k}: {v}\n" for k, v in o["metadata"]["labels"].items())
    return ("---\napiVersion: batch/v1\nkind: Job\nmetadata:\n"
            f"  name: {o['metadata']['name']}\n  labels:\n{labels}"
            f"spec:\n  backoffLimit: {o['spec']['backoffLimit']}\n  template:\n    spec:\n"
            "      restartPolicy: Never\n      containers:\n"
            f"      - name: {c['name']}\n        image: {c['image']}\n"
            "        command: [\"true\"]\n")


def cmd_kubectl(args):
    """N Jobs in one multi-document YAML file through `kubectl create -f`."""
    run_id = f"kc{int(time.time())}"
    objs = job_objs(run_id, args.n)
    os.makedirs(args.workdir, exist_ok=True)
    yaml_path = os.path.join(args.workdir, f"{run_id}.yaml")
    with open(yaml_path, "w") as f:
        for o in objs:
            f.write(job_yaml(o))
    env = dict(os.environ, KUBECONFIG="/dev/null")  # never the user's kubeconfig
    base = [args.kubectl, "-s", f"http://127.0.0.1:{args.port}",
            "--cache-dir", os.path.join(args.workdir, "kubectl-cache"), "--request-timeout=60s"]
    # Discovery fetched and cached before the clock starts, as a user's is.
    subprocess.run(base + ["api-resources"], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    stats = {}
    err_path = os.path.join(args.workdir, f"{run_id}.stderr")

    def submit(sent):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t_start = time.monotonic()
        with open(err_path, "wb") as err:
            p = subprocess.Popen(base + ["create", "-f", yaml_path], env=env,
                                 stdout=subprocess.PIPE, stderr=err)
            for line in p.stdout:  # "job.batch/NAME created", one per object as it goes
                parts = line.split()
                if len(parts) == 2 and parts[1] == b"created":
                    sent[parts[0].split(b"/", 1)[-1].decode()] = time.monotonic()
            rc = p.wait()
        wall = time.monotonic() - t_start
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        stats.update(rc=rc, wall=wall, cpu=cpu, user=r1.ru_utime - r0.ru_utime,
                     sys=r1.ru_stime - r0.ru_stime, rss=r1.ru_maxrss / 1024)
        return [(o["metadata"]["name"], rc, b"not created by kubectl")
                for o in objs if o["metadata"]["name"] not in sent]
    rc = run_jobs(args, "kc", run_id, objs, submit)
    n = len(objs)
    print(f"kc_kubectl_rc={stats.get('rc')}")
    print(f"kc_kubectl_wall_s={stats.get('wall', 0):.3f}")
    print(f"kc_kubectl_cpu_s={stats.get('cpu', 0):.3f}")
    print(f"kc_kubectl_user_sys_s={stats.get('user', 0):.2f} / {stats.get('sys', 0):.2f}")
    print(f"kc_kubectl_cpu_ms_per_item={1000 * stats.get('cpu', 0) / n:.2f}")
    print(f"kc_kubectl_wall_ms_per_item={1000 * stats.get('wall', 0) / n:.2f}")
    print(f"kc_kubectl_creates_per_s={n / stats['wall']:.1f}" if stats.get("wall") else "kc_kubectl_creates_per_s=0")
    print(f"kc_kubectl_rss_peak_mib={stats.get('rss', 0):.1f}")
    if stats.get("rc"):
        sys.stderr.write(open(err_path, errors="replace").read()[-2000:])
    return rc


def parse_milli(q):
    """A cpu quantity ("100m", "1", "0.5") in millicores."""
    return int(q[:-1]) if q.endswith("m") else int(round(float(q) * 1000))


class CqSampler(threading.Thread):
    """The most Workloads a ClusterQueue's status showed admitted / holding
    a quota reservation at once, sampled every `period` s."""

    def __init__(self, port, name, period=0.5):
        super().__init__(daemon=True)
        self.port, self.name, self.period = port, name, period
        self.stop_ev, self.admitted_max, self.reserving_max = threading.Event(), 0, 0

    def run(self):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        while not self.stop_ev.wait(self.period):
            try:
                st, body = request(c, "GET", f"{KQ}/clusterqueues/{self.name}")
            except (OSError, http.client.HTTPException):
                c.close()
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                continue
            if st == 200:
                status = json.loads(body).get("status") or {}
                self.admitted_max = max(self.admitted_max, int(status.get("admittedWorkloads") or 0))
                self.reserving_max = max(self.reserving_max, int(status.get("reservingWorkloads") or 0))
        c.close()


def cmd_kueue(args):
    """N Jobs through a Kueue LocalQueue whose ClusterQueue admits Q at once."""
    run_id = f"kq{int(time.time())}"
    ns = args.namespace
    milli = parse_milli(args.cpu_request)
    quota = f"{args.quota * milli}m"
    c = http.client.HTTPConnection("127.0.0.1", args.port, timeout=60)
    setup = [
        (f"{KQ}/resourceflavors", {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
                                   "metadata": {"name": "default"}, "spec": {}}),
        (f"{KQ}/clusterqueues", {
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": "bench"},
            "spec": {"namespaceSelector": {}, "resourceGroups": [{
                "coveredResources": ["cpu"], "flavors": [{"name": "default", "resources": [
                    {"name": "cpu", "nominalQuota": quota}]}]}]}}),
        (f"{KQ}/namespaces/{ns}/localqueues", {
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": ns}, "spec": {"clusterQueue": "bench"}}),
    ]
    for path, obj in setup:
        st, body = request(c, "POST", path, obj)
        if st not in (200, 201):
            print(f"# kueue setup {path}: {st} {body[:300]!r}", file=sys.stderr)
            return 1
    # The ClusterQueue must be Active (its flavor known) before the clock starts.
    deadline = time.monotonic() + 30
    while True:
        st, body = request(c, "GET", f"{KQ}/clusterqueues/bench")
        conds = (json.loads(body).get("status") or {}).get("conditions") or [] if st == 200 else []
        if any(x.get("type") == "Active" and x.get("status") == "True" for x in conds):
            break
        if time.monotonic() > deadline:
            print("# kueue: ClusterQueue bench not Active after 30 s", file=sys.stderr)
            return 1
        time.sleep(0.1)
    c.close()
    print(f"kq_quota={args.quota} x {args.cpu_request} cpu = {quota} cpu")
    samp = CqSampler(args.port, "bench")
    samp.start()
    rc = run_jobs(args, "kq", run_id,
                  job_objs(run_id, args.n, {"kueue.x-k8s.io/queue-name": "lq"}, args.cpu_request))
    samp.stop_ev.set()
    samp.join()
    print(f"kq_admitted_max={samp.admitted_max}")
    print(f"kq_reserving_max={samp.reserving_max}")
    if max(samp.admitted_max, samp.reserving_max) > args.quota:
        print(f"# kueue: {samp.admitted_max} admitted at once, over the quota of {args.quota}",
              file=sys.stderr)
        return 1
    return rc


def cmd_sim(args):
    run_id = f"sim{int(time.time())}"
    nodes = [{
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": f"{run_id}-node-{i:05d}", "labels": {"bench": run_id},
                     "annotations": {"batchd.io/simulated": "true"}},
        "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                   "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
    } for i in range(args.nodes)]
    t0 = time.monotonic()
    fails = post_all(args.port, lambda o: "/api/v1/nodes", nodes, args.conns, lambda n: None)
    print(f"sim_nodes={args.nodes}")
    print(f"sim_node_create_s={time.monotonic() - t0:.3f}")
    if fails:
        print(f"# node create failures: {fails[:3]}", file=sys.stderr)
        return 1
    time.sleep(args.settle)  # let the scheduler's node cache see every node
    ns = args.namespace
    pods = [{
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"{run_id}-pod-{i:06d}", "labels": {"bench": run_id},
                     "annotations": {"batchd.io/sim-duration": "1h"}},
        "spec": {"restartPolicy": "Never", "containers": [{
            "name": "c", "image": "busybox", "command": ["true"],
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]},
    } for i in range(args.pods)]
    path = f"/api/v1/namespaces/{ns}/pods"
    ok = run_measured(args, "bind", pods, lambda o: path,
                      f"{path}?labelSelector=bench%3D{run_id}",
                      lambda o: bool((o.get("spec") or {}).get("nodeName")))
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["jobs", "sim", "kubectl", "kueue"])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=5000)
    ap.add_argument("--conns", type=int, default=8)
    ap.add_argument("--namespace", default="default")
    ap.add_argument("--server-pid", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--settle", type=float, default=1.0)
    ap.add_argument("--workdir", default="/tmp", help="kubectl: where the YAML file and cache go")
    ap.add_argument("--kubectl", default="kubectl")
    ap.add_argument("--quota", type=int, default=8, help="kueue: Jobs admitted at once")
    ap.add_argument("--cpu-request", default="100m", help="kueue: each Job's cpu request")
    args = ap.parse_args()
    return {"jobs": cmd_jobs, "sim": cmd_sim, "kubectl": cmd_kubectl,
            "kueue": cmd_kueue}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
