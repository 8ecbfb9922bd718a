#!/usr/bin/env python3
"""Client for test_disk_full.sh (stdlib only).

  disk_full.py fill PORT NS FILLER OUT.json
      Creates 20 Leases, fills the disk (FILLER), then creates Leases (with
      a 64 KiB annotation) until a create fails; the
      failure must be a 500 (or 507) Status naming the full disk. Meanwhile
      reads must keep working. Then removes FILLER (space returns) and
      retries a create until it succeeds (within 30 s). Writes every
      acknowledged create {name: rv} to OUT.json.
  disk_full.py verify PORT NS OUT.json
      Every acknowledged create is stored, at its resourceVersion.
"""
import http.client
import json
import os
import sys
import time


def req(port, method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request(method, path, body=json.dumps(body) if body is not None else None,
              headers={"Content-Type": "application/json"} if body is not None else {})
    r = c.getresponse()
    data = r.read()
    c.close()
    try:
        return r.status, json.loads(data) if data else None
    except ValueError:
        return r.status, {"raw": data[:300].decode("latin-1")}


def lease(name):
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name, "annotations": {"pad": "p" * 65536}},
            "spec": {"holderIdentity": name}}


def die(msg):
    print(f"disk_full: {msg}", file=sys.stderr)
    sys.exit(1)


def fill_disk(path):
    """Writes zeros to `path` until the file system is full."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for size in (65536, 4096, 512):
            chunk = b"\0" * size
            try:
                while True:
                    os.write(fd, chunk)
            except OSError:
                pass
    finally:
        os.close(fd)


def fill(port, ns, filler, out):
    base = f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"
    acked = {}
    # Some writes while there is space, then the disk fills up.
    for i in range(20):
        name = f"ok{i:03d}"
        st, body = req(port, "POST", base, lease(name))
        if st != 201:
            die(f"create {name} with space left: {st} {body}")
        acked[name] = body["metadata"]["resourceVersion"]
    fill_disk(filler)
    failure = None
    for i in range(5000):
        name = f"df{i:05d}"
        st, body = req(port, "POST", base, lease(name))
        if st == 201:
            acked[name] = body["metadata"]["resourceVersion"]
            continue
        failure = (st, body)
        break
    if failure is None:
        die("5000 creates of 64 KiB succeeded on a full disk")
    st, body = failure
    if st not in (500, 507):
        die(f"a write on a full disk got {st}, want 500/507: {body}")
    msg = json.dumps(body)
    if "full" not in msg or body.get("kind") != "Status":
        die(f"the refusal does not name the full disk: {msg[:300]}")
    print(f"refused after {len(acked)} creates: {st} {body.get('reason')}: {body.get('message')}")
    # More refusals, and reads keep working meanwhile.
    for i in range(3):
        st2, b2 = req(port, "POST", base, lease(f"full{i}"))
        if st2 == 201:  # fitted in space the store had already allocated
            acked[f"full{i}"] = b2["metadata"]["resourceVersion"]
        elif st2 not in (500, 507):
            die(f"a write on a full disk got {st2}: {b2}")
        st3, lst = req(port, "GET", base)
        if st3 != 200 or len(lst["items"]) != len(acked):
            die(f"list while full: {st3}, {len(lst['items']) if lst else None} items, "
                f"want {len(acked)}")
        st4, one = req(port, "GET", f"{base}/ok000")
        if st4 != 200:
            die(f"get while full: {st4}")
    os.remove(filler)
    deadline = time.time() + 30
    while True:
        st, body = req(port, "POST", base, lease("after-space"))
        if st == 201:
            acked["after-space"] = body["metadata"]["resourceVersion"]
            break
        if time.time() > deadline:
            die(f"writes did not resume within 30 s of space returning: {st} {body}")
        time.sleep(0.2)
    json.dump(acked, open(out, "w"))
    print(f"writes resumed; {len(acked)} acknowledged")


def verify(port, ns, out):
    acked = json.load(open(out))
    base = f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"
    st, lst = req(port, "GET", base)
    if st != 200:
        die(f"list after restart: {st}")
    stored = {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in lst["items"]}
    for name, rv in acked.items():
        if stored.get(name) != rv:
            die(f"acknowledged {name}@{rv} is {stored.get(name)} after restart")
    print(f"all {len(acked)} acknowledged creates survived")


if sys.argv[1] == "fill":
    fill(int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5])
else:
    verify(int(sys.argv[2]), sys.argv[3], sys.argv[4])
