#!/usr/bin/env python3
"""Checker for test_list_snapshot.sh (stdlib only).

  list_snapshot.py PORT NAMESPACE COUNT

1. Creates COUNT Leases (cheap objects no controller touches) over 16
   keep-alive connections.
2. While 4 writer threads update, create and delete Leases and log every
   acknowledged create/update with its resourceVersion, it
   a. pages through the collection with limit=500 / continue and checks the
      pages are one snapshot: every page has the first page's
      resourceVersion R, no name twice, no item newer than R, each item at
      the version the writers' log says it had at R, and the same set of
      (name, resourceVersion) as a resourceVersionMatch=Exact list at R;
   b. runs an informer: that paged list, then a watch from its
      resourceVersion (with bookmarks), applying every event to a map.
3. Stops the writers, writes a marker, waits for the informer to see it,
   and checks the informer's map equals a fresh list of the collection.
Prints a summary; exit 1 with the first violation on stderr.
"""
import http.client
import json
import random
import sys
import threading
import time
import urllib.parse

PORT = int(sys.argv[1])
NS = sys.argv[2]
COUNT = int(sys.argv[3])
BASE = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases"


def die(msg):
    print(f"list_snapshot: {msg}", file=sys.stderr)
    sys.exit(1)


def conn():
    return http.client.HTTPConnection("127.0.0.1", PORT, timeout=60)


def request(c, method, path, body=None):
    headers = {"Content-Type": "application/json"} if body is not None else {}
    c.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    r = c.getresponse()
    data = r.read()
    return r.status, (json.loads(data) if data else None)


def lease(name, holder):
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name}, "spec": {"holderIdentity": holder}}


def create_all():
    names = [f"l{i:05d}" for i in range(COUNT)]
    chunks = [names[i::16] for i in range(16)]
    errors = []

    def worker(part):
        c = conn()
        for n in part:
            st, body = request(c, "POST", BASE, lease(n, "init"))
            if st != 201:
                errors.append(f"create {n}: {st} {body}")
                return

    threads = [threading.Thread(target=worker, args=(p,)) for p in chunks]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        die(errors[0])


# Every acknowledged create/update: name -> [(rv, holder)], appended in ack
# order per writer (a name is written by one writer only).
log = {}
log_lock = threading.Lock()
stop = threading.Event()
writes = [0]


def writer(wid):
    c = conn()
    rnd = random.Random(wid)
    mine = [f"l{i:05d}" for i in range(wid, COUNT, 4)]
    extra = 0
    while not stop.is_set():
        op = rnd.random()
        if op < 0.8:
            n = rnd.choice(mine)
            st, body = request(c, "GET", f"{BASE}/{n}")
            if st != 200:
                continue
            holder = f"w{wid}-{writes[0]}"
            body["spec"]["holderIdentity"] = holder
            st, body = request(c, "PUT", f"{BASE}/{n}", body)
            if st == 200:
                with log_lock:
                    log.setdefault(n, []).append((int(body["metadata"]["resourceVersion"]), holder))
        elif op < 0.9:
            n = f"x{wid}-{extra:05d}"
            extra += 1
            st, body = request(c, "POST", BASE, lease(n, "new"))
            if st == 201:
                with log_lock:
                    log.setdefault(n, []).append((int(body["metadata"]["resourceVersion"]), "new"))
        else:
            if extra == 0:
                continue
            n = f"x{wid}-{rnd.randrange(extra):05d}"
            request(c, "DELETE", f"{BASE}/{n}")
        writes[0] += 1


def paged_list(c, limit=500):
    items, rvs, token, pages = [], set(), "", 0
    while True:
        q = f"?limit={limit}"
        if token:
            q += "&continue=" + urllib.parse.quote(token, safe="")
        st, body = request(c, "GET", BASE + q)
        if st != 200:
            die(f"list page {pages}: {st} {body}")
        pages += 1
        rvs.add(body["metadata"]["resourceVersion"])
        items.extend(body["items"])
        token = body["metadata"].get("continue", "")
        if not token:
            break
    if len(rvs) != 1:
        die(f"pages carry different resourceVersions: {sorted(rvs)}")
    return items, int(rvs.pop()), pages


def check_snapshot(items, rv, initial):
    seen = {}
    for o in items:
        n = o["metadata"]["name"]
        orv = int(o["metadata"]["resourceVersion"])
        if n in seen:
            die(f"{n} listed twice")
        if orv > rv:
            die(f"{n} at resourceVersion {orv}, newer than the list's {rv}")
        seen[n] = (orv, o["spec"].get("holderIdentity"))
    time.sleep(0.3)  # a write acknowledged during the list is logged by now
    with log_lock:
        snap = {n: list(v) for n, v in log.items()}
    for n, (orv, holder) in seen.items():
        versions = [(r, h) for r, h in snap.get(n, []) if r <= rv]
        if versions:
            want = max(versions)
        elif n in initial:
            want = initial[n]
        else:
            continue  # a create not yet logged when read
        if (orv, holder) != want:
            die(f"{n}: listed at {orv} ({holder}); at {rv} it was {want}")
    return seen


class Informer(threading.Thread):
    def __init__(self, items, rv):
        super().__init__(daemon=True)
        self.state = {o["metadata"]["name"]: int(o["metadata"]["resourceVersion"]) for o in items}
        self.rv = rv
        self.lock = threading.Lock()
        self.error = None
        self.events = 0

    def run(self):
        try:
            c = conn()
            c.request("GET", f"{BASE}?watch=1&allowWatchBookmarks=true&timeoutSeconds=120"
                             f"&resourceVersion={self.rv}")
            r = c.getresponse()
            if r.status != 200:
                self.error = f"watch: {r.status} {r.read()[:300]}"
                return
            last = self.rv
            while True:
                line = r.readline()
                if not line:
                    return
                ev = json.loads(line)
                t, o = ev["type"], ev["object"]
                if t == "ERROR":
                    self.error = f"watch error: {o}"
                    return
                orv = int(o["metadata"]["resourceVersion"])
                if orv < last:
                    self.error = f"{t} at {orv} after {last}: out of order"
                    return
                last = orv
                with self.lock:
                    self.rv = orv
                    if t == "BOOKMARK":
                        continue
                    self.events += 1
                    n = o["metadata"]["name"]
                    if t == "DELETED":
                        self.state.pop(n, None)
                    else:
                        self.state[n] = orv
        except Exception as e:  # noqa: BLE001
            self.error = f"watch failed: {e!r}"


def main():
    t0 = time.time()
    create_all()
    c = conn()
    items0, _, _ = paged_list(c)
    if len(items0) != COUNT:
        die(f"listed {len(items0)} leases after creating {COUNT}")
    initial = {o["metadata"]["name"]: (int(o["metadata"]["resourceVersion"]),
                                       o["spec"].get("holderIdentity")) for o in items0}
    t_created = time.time() - t0
    writers = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for w in writers:
        w.start()
    time.sleep(1)  # churn under way
    snapshots = 0
    informer = None
    deadline = time.time() + 15
    while time.time() < deadline or snapshots < 2:
        items, rv, pages = paged_list(c)
        if pages < 2:
            die(f"a list of {len(items)} items came in {pages} page(s)")
        check_snapshot(items, rv, initial)
        st, exact = request(c, "GET", f"{BASE}?resourceVersion={rv}&resourceVersionMatch=Exact")
        if st != 200:
            die(f"Exact list at {rv}: {st} {exact}")
        a = {(o["metadata"]["name"], o["metadata"]["resourceVersion"]) for o in items}
        b = {(o["metadata"]["name"], o["metadata"]["resourceVersion"]) for o in exact["items"]}
        if a != b:
            die(f"paged list at {rv} differs from the Exact list: {len(a - b)} only paged, "
                f"{len(b - a)} only exact, e.g. {sorted(a ^ b)[:3]}")
        snapshots += 1
        if informer is None:
            informer = Informer(items, rv)
            informer.start()
        if snapshots > 50:
            break
    stop.set()
    for w in writers:
        w.join()
    st, marker = request(c, "POST", BASE, lease("zz-marker", "end"))
    if st != 201:
        die(f"marker create: {st} {marker}")
    mrv = int(marker["metadata"]["resourceVersion"])
    end = time.time() + 30
    while time.time() < end:
        with informer.lock:
            if informer.rv >= mrv:
                break
        if informer.error:
            break
        time.sleep(0.05)
    if informer.error:
        die(informer.error)
    with informer.lock:
        if informer.rv < mrv:
            die(f"the informer did not reach the marker ({informer.rv} < {mrv})")
        got = dict(informer.state)
    st, final = request(c, "GET", BASE)
    if st != 200:
        die(f"final list: {st}")
    want = {o["metadata"]["name"]: int(o["metadata"]["resourceVersion"]) for o in final["items"]}
    if got != want:
        missing = sorted(set(want) - set(got))[:3]
        extra = sorted(set(got) - set(want))[:3]
        stale = sorted(n for n in set(got) & set(want) if got[n] != want[n])[:3]
        die(f"informer differs from the store: missing {missing}, extra {extra}, stale {stale}")
    print(f"created {COUNT} in {t_created:.1f}s; {snapshots} paged snapshots checked under "
          f"{writes[0]} concurrent writes; informer saw {informer.events} events and matches "
          f"{len(want)} objects; total {time.time() - t0:.1f}s")


main()
