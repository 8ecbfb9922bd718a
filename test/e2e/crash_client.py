#!/usr/bin/env python3
"""Load client for crash_test.sh (stdlib only).

  crash_client.py burst PORT PREFIX COUNT KILL_AFTER PID OUT.json
      COUNT concurrent Job creates over 16 keep-alive connections; once
      KILL_AFTER of them were acknowledged (HTTP 201) it sends SIGKILL to PID.
      Writes {"acked": {name: {"rv": int, "uid": str}}, "errors": {...}}.
  crash_client.py verify PORT OUT.json [OUT.json...]
      Checks every acknowledged create is stored unchanged (same uid and
      resourceVersion), and that a new create gets a larger resourceVersion
      than any acknowledged before. Exit 1 with a reason on stderr otherwise.
"""
import http.client
import json
import os
import signal
import sys
import threading

NS = "default"
PATH = f"/apis/batch/v1/namespaces/{NS}/jobs"


def job(name):
    return json.dumps({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "labels": {"e2e": "crash"}},
        "spec": {"template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}}},
    })


def burst(port, prefix, count, kill_after, pid, out):
    lock = threading.Lock()
    acked, errors = {}, {}
    next_i = [0]
    killed = threading.Event()

    def worker():
        conn = None
        while True:
            with lock:
                i = next_i[0]
                next_i[0] += 1
            if i >= count:
                break
            name = f"{prefix}-{i:04d}"
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                conn.request("POST", PATH, body=job(name),
                             headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                body = resp.read()
                if resp.status == 201:
                    meta = json.loads(body)["metadata"]
                    with lock:
                        acked[name] = {"rv": int(meta["resourceVersion"]), "uid": meta["uid"]}
                        if len(acked) == kill_after and not killed.is_set():
                            os.kill(pid, signal.SIGKILL)
                            killed.set()
                else:
                    with lock:
                        errors[name] = f"HTTP {resp.status}: {body[:200]!r}"
            except (OSError, http.client.HTTPException, ValueError, KeyError) as e:
                with lock:
                    errors[name] = f"{type(e).__name__}: {e}"
                if conn is not None:
                    conn.close()
                conn = None
                if killed.is_set():
                    break  # The server is gone; stop this connection.
        if conn is not None:
            conn.close()

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if not killed.is_set():
        os.kill(pid, signal.SIGKILL)  # The burst finished first; still crash it.
    with open(out, "w") as f:
        json.dump({"acked": acked, "errors": errors, "killed_mid_burst": killed.is_set()}, f)
    print(f"{prefix}: {len(acked)} acknowledged, {len(errors)} failed, "
          f"killed mid-burst: {killed.is_set()}")


def get_json(conn, method, path, body=None):
    headers = {"Content-Type": "application/json"} if body else {}
    conn.request(method, path, body=body, headers=headers)
    resp = conn.getresponse()
    data = resp.read()
    return resp.status, json.loads(data) if data else {}


def verify(port, outs):
    acked = {}
    for out in outs:
        with open(out) as f:
            acked.update(json.load(f)["acked"])
    if not acked:
        sys.exit("verify: nothing was acknowledged before the kill; the test proves nothing")
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    stored, cont = {}, ""
    list_rv = 0
    while True:
        q = "?labelSelector=e2e%3Dcrash&limit=500" + (f"&continue={cont}" if cont else "")
        status, lst = get_json(conn, "GET", PATH + q)
        if status != 200:
            sys.exit(f"verify: list returned HTTP {status}: {lst}")
        for it in lst["items"]:
            m = it["metadata"]
            stored[m["name"]] = {"rv": int(m["resourceVersion"]), "uid": m["uid"]}
        list_rv = max(list_rv, int(lst["metadata"]["resourceVersion"]))
        cont = lst["metadata"].get("continue", "")
        if not cont:
            break
        from urllib.parse import quote
        cont = quote(cont, safe="")
    lost = sorted(n for n in acked if n not in stored)
    if lost:
        sys.exit(f"verify: {len(lost)} acknowledged creates lost after kill -9, e.g. {lost[:5]}")
    # The same object (uid) must be there; controllers may have updated it
    # since, so its resourceVersion may only have grown.
    changed = sorted(n for n in acked
                     if stored[n]["uid"] != acked[n]["uid"] or stored[n]["rv"] < acked[n]["rv"])
    if changed:
        n = changed[0]
        sys.exit(f"verify: {len(changed)} objects differ after restart, e.g. {n}: "
                 f"acked {acked[n]}, stored {stored[n]}")
    max_rv = max(a["rv"] for a in acked.values())
    if list_rv < max_rv:
        sys.exit(f"verify: list resourceVersion {list_rv} < acknowledged {max_rv}")
    probe = f"crash-after-restart-{os.getpid()}"
    status, obj = get_json(conn, "POST", PATH, job(probe))
    if status != 201:
        sys.exit(f"verify: create after restart returned HTTP {status}: {obj}")
    new_rv = int(obj["metadata"]["resourceVersion"])
    if new_rv <= max_rv:
        sys.exit(f"verify: resourceVersion went backwards: new create got {new_rv}, "
                 f"an acknowledged create before the crash had {max_rv}")
    # Background: a Job's default (Orphan) would wait for a garbage collector.
    status, _ = get_json(conn, "DELETE", PATH + f"/{probe}?propagationPolicy=Background")
    if status != 200:
        sys.exit(f"verify: delete returned HTTP {status}")
    print(f"verify: {len(acked)} acknowledged creates all present ({len(stored)} stored), "
          f"new resourceVersion {new_rv} > {max_rv}")


def main():
    if len(sys.argv) >= 8 and sys.argv[1] == "burst":
        _, _, port, prefix, count, kill_after, pid, out = sys.argv[:8]
        burst(int(port), prefix, int(count), int(kill_after), int(pid), out)
    elif len(sys.argv) >= 4 and sys.argv[1] == "verify":
        verify(int(sys.argv[2]), sys.argv[3:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
