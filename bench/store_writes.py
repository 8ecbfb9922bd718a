#!/usr/bin/env python3
"""Store writes per Job, by kind of write and by writer (python3 stdlib only).

  store_writes.py STATE_DB [--after REV] [--jobs N] [--label KEY=VALUE] [--markdown]

Reads the MVCC log of a stopped (or idle) `batchd server`'s SQLite store
(`DATA_DIR/state.db`, table `log`: one row per revision) and classifies every
write after revision REV by diffing it against the key's previous value:

  Job create / status writes (which status fields changed), Pod create, bind
  (spec.nodeName set), status writes (phase before -> after), finalizer
  removals, deletes, Event creates and updates (by reportingComponent and
  reason), Workload writes, and writes that changed nothing but the
  resourceVersion ("no-op").

A write belongs to a Job when its object is the Job, is owned by it (pods,
Workloads) or is an Event about either; the rest is "other" (Leases, Nodes).
The writer is the component that makes that kind of write in batchd (a Job
create is the client's, a bind the scheduler's, a pod status write the node
agent's, an Event its reportingComponent's).  Prints `key=value` lines and,
with --markdown, a table for docs/benchmarks.md.  Deterministic: the same run
gives the same figures however loaded the machine is.
"""
import argparse, collections, json, sqlite3, sys

VOLATILE_META = ("resourceVersion", "managedFields", "generation")


def parse_key(key):
    # /registry/<group|core>/<plural>/<ns>/<name> or /registry/<g>/<plural>/<name>
    parts = key.split("/")
    if len(parts) < 5 or parts[1] != "registry":
        return "?", "", key
    plural = parts[3]
    if len(parts) >= 6:
        return plural, parts[4], "/".join(parts[5:])
    return plural, "", parts[4]


def load(value):
    try:
        return json.loads(value)
    except (ValueError, UnicodeDecodeError):
        return None


def stripped_meta(o):
    m = dict((o or {}).get("metadata") or {})
    for k in VOLATILE_META:
        m.pop(k, None)
    return m


def changed_status_fields(prev, cur):
    ps, cs = (prev or {}).get("status") or {}, (cur or {}).get("status") or {}
    return sorted(k for k in set(ps) | set(cs) if ps.get(k) != cs.get(k))


def unschedulable(pod):
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return True
    return False


def classify(plural, prev, cur, deleted):
    """(what, writer) of one write; prev is None for a create."""
    if deleted:
        return "delete", "gc/agent"
    if prev is None:
        if plural == "pods":
            owners = [r.get("kind") for r in (cur.get("metadata") or {}).get("ownerReferences") or []]
            return "create", "job-controller" if "Job" in owners else "client"
        if plural == "jobs":
            return "create", "client"
        if plural == "events":
            comp = cur.get("reportingComponent") or (cur.get("source") or {}).get("component") or "?"
            return f"create {cur.get('reason', '?')}", comp
        if plural == "workloads":
            return "create", "workload-controller"
        return "create", "?"
    pm, cm = stripped_meta(prev), stripped_meta(cur)
    parts = []
    if pm.get("finalizers") != cm.get("finalizers"):
        parts.append("finalizers")
    if pm.get("deletionTimestamp") != cm.get("deletionTimestamp"):
        parts.append("deletionTimestamp")
    other_meta = sorted(k for k in set(pm) | set(cm)
                        if k not in ("finalizers", "deletionTimestamp") and pm.get(k) != cm.get(k))
    if other_meta:
        parts.append("metadata." + ",".join(other_meta))
    ps, cs = (prev.get("spec") or {}), (cur.get("spec") or {})
    if plural == "pods" and not ps.get("nodeName") and cs.get("nodeName"):
        parts.append("bind")
    elif ps != cs:
        parts.append("spec")
    sf = changed_status_fields(prev, cur)
    if plural == "events":
        rest = sorted(k for k in set(prev) | set(cur)
                      if k not in ("metadata",) and prev.get(k) != cur.get(k))
        what = "update " + (",".join(rest) or "nothing")
        comp = cur.get("reportingComponent") or (cur.get("source") or {}).get("component") or "?"
        return what, comp
    if sf:
        if plural == "pods":
            pp, cp = (prev.get("status") or {}).get("phase"), (cur.get("status") or {}).get("phase")
            if "bind" in parts:
                parts.append("status")
            else:
                parts.append(f"status {pp}->{cp}" if pp != cp else "status (" + ",".join(sf) + ")")
        else:
            parts.append("status." + ",".join(sf))
    if not parts:
        return "no-op (nothing changed)", "?"
    if plural == "pods":
        if "bind" in parts:
            writer = "default-scheduler"
        elif parts == ["status (conditions)"] and unschedulable(cur):
            parts[0] = "status PodScheduled=False (Unschedulable)"
            writer = "default-scheduler"
        elif any(p.startswith("status") for p in parts):
            writer = "kubelet (node agent)"
        elif parts == ["finalizers"]:
            writer = "job-controller"
        else:
            writer = "?"
    elif plural == "jobs":
        writer = "job-controller" if all(p.startswith("status") for p in parts) else "?"
    elif plural == "workloads":
        writer = "workload/queueing"
    else:
        writer = "?"
    return " + ".join(parts), writer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("--after", type=int, default=0, help="count writes after this revision")
    ap.add_argument("--jobs", type=int, default=0, help="divide by N (default: Jobs created)")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    con = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    last = {}  # key -> previous value (decoded)
    for key, value in con.execute(
            "SELECT l.key, l.value FROM log l JOIN (SELECT key, MAX(rev) AS rev FROM log "
            "WHERE rev <= ? GROUP BY key) m ON l.key = m.key AND l.rev = m.rev AND l.deleted = 0",
            (args.after,)):
        last[key] = load(value)
    job_uids, owner_of = set(), {}  # uid -> job uid
    rows = []
    for rev, key, value, deleted in con.execute(
            "SELECT rev, key, value, deleted FROM log WHERE rev > ? ORDER BY rev", (args.after,)):
        plural, ns, name = parse_key(key)
        cur = load(value)
        prev = last.get(key)
        what, writer = classify(plural, prev, cur or {}, bool(deleted))
        meta = (cur or {}).get("metadata") or {}
        uid = meta.get("uid")
        if plural == "jobs" and prev is None and uid:
            job_uids.add(uid)
        for ref in meta.get("ownerReferences") or []:
            if ref.get("kind") == "Job" and uid:
                owner_of[uid] = ref.get("uid")
        rows.append((rev, plural, what, writer, uid, (cur or {}).get("involvedObject") or {}))
        if deleted:
            last.pop(key, None)
        else:
            last[key] = cur
    n = args.jobs or len(job_uids) or 1

    def belongs(plural, uid, involved):
        if plural == "events":
            u = involved.get("uid")
            return u in job_uids or owner_of.get(u) in job_uids
        return uid in job_uids or owner_of.get(uid) in job_uids

    by = collections.Counter()
    by_writer = collections.Counter()
    total = other = 0
    for rev, plural, what, writer, uid, involved in rows:
        if belongs(plural, uid, involved):
            kind = {"events": "Event"}.get(plural, plural[:-1].capitalize() if plural.endswith("s") else plural)
            if plural == "events":
                kind = "Event (" + (involved.get("kind") or "?") + ")"
            by[(kind, what, writer)] += 1
            by_writer[writer] += 1
            total += 1
        else:
            other += 1
    print(f"writes_jobs={n}")
    print(f"writes_total={total + other}")
    print(f"writes_per_job={total / n:.2f}")
    print(f"writes_other_per_job={other / n:.2f}")
    for w, c in sorted(by_writer.items(), key=lambda x: -x[1]):
        print(f"writes_by_writer[{w}]={c / n:.2f}")
    for (kind, what, writer), c in sorted(by.items(), key=lambda x: (x[0][0], -x[1])):
        print(f"writes[{kind} | {what} | {writer}]={c / n:.2f}")
    if args.markdown:
        print()
        print(f"| object | write | writer | per job |")
        print("|---|---|---|---|")
        for (kind, what, writer), c in sorted(by.items(), key=lambda x: (x[0][0], -x[1])):
            print(f"| {kind} | {what} | {writer} | {c / n:.2f} |")
        print(f"| **all** | | | **{total / n:.2f}** |")
        print(f"| (not about a Job: Leases, Nodes, ...) | | | {other / n:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
