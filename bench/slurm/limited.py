#!/usr/bin/env python3
"""Slurm with a concurrency limit: the counterpart of N Jobs through a Kueue
ClusterQueue that admits Q of them at once (bench/e2e_jobs_client.py kueue).
Run as root against the anchor's cluster (bench/slurm/run.sh sets it up).

  limited.py jobs  N --quota Q [--limit licenses|partition] [--partition fake]
  limited.py array N --quota Q [--partition fake]

jobs: N x `sbatch --wrap true`, one after another (as the anchor's bench.py
  submits), each under the limit:
  licenses (default): `-L quota:K` against the anchor's cluster-wide
     `Licenses=quota:8` in slurm.conf, K = 8 / Q (Q must divide the licence
     total). A licence is Slurm's counted resource that belongs to no node: a
     job that cannot get its K stays PENDING (Reason=Licenses) in slurmctld's
     queue and is started when a running job ends and returns them. That is
     what a ClusterQueue's nominalQuota does to Workloads (admission against
     a quota, separate from node capacity, which stays free here: 32 emulated
     nodes x 2 CPUs). Slurm's other quotas (QOS GrpJobs / GrpTRES, also as a
     partition QOS, or MaxJobsPerUser) need accounting storage (slurmdbd +
     MariaDB, AccountingStorageEnforce=limits,qos), which the anchor's default
     setup does not run and which would add its own cost to every job.
  partition: a partition made for the run (`scontrol create`) of the first Q
     emulated nodes with MaxCPUsPerNode=1, so at most Q one-CPU jobs run at
     once; jobs wait with Reason=Resources: a capacity limit (pods waiting
     for node room rather than for admission). Deleted afterwards; Q must not
     exceed the emulated nodes.
array: one `sbatch --array=0-(N-1)%Q --wrap true`: the array's own throttle
  (ArrayTaskThrottle): at most Q of its tasks run at once.

Completion is read, as the anchor's bench.py does, from the lines slurmctld
appends to its jobcomp/filetxt log (one per finished job or array task).
Latency: from just before a job's sbatch call to the poll (every 50 ms) that
sees its line; array tasks from just before the one sbatch. The partition's
allocated CPUs (= one-CPU jobs running) are read every 0.5 s (`sinfo %C`): the
most seen is printed (must be <= Q).
Prints key=value lines prefixed slurm_q_jobs_ / slurm_q_array_.
"""
import argparse, os, re, subprocess, sys, threading, time

JOBCOMP = "/var/log/slurm/jobcomp.log"
TCK = os.sysconf("SC_CLK_TCK")


def sh(*args, check=True):
    r = subprocess.run(args, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: rc={r.returncode} {r.stderr.strip()}")
    return r.stdout


def proc_cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TCK


def host_cpu():
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return sum(f) / TCK, (f[3] + f[4]) / TCK


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


class Completions:
    """Lines appended to the jobcomp log since construction: when each job
    id was first seen, and the count per JobState."""
    rx = re.compile(r"JobId=(\d+) .*?JobState=(\S+)")

    def __init__(self):
        self.f = open(JOBCOMP) if os.path.exists(JOBCOMP) else None
        if self.f:
            self.f.seek(0, 2)
        self.buf, self.states, self.seen = "", {}, {}

    def poll(self):
        if self.f is None:
            if not os.path.exists(JOBCOMP):
                return 0
            self.f = open(JOBCOMP)
        self.buf += self.f.read()
        *lines, self.buf = self.buf.split("\n")
        now = time.monotonic()
        for ln in lines:
            m = self.rx.search(ln)
            if m and m.group(1) not in self.seen:
                self.seen[m.group(1)] = now
                self.states[m.group(2)] = self.states.get(m.group(2), 0) + 1
        return len(self.seen)


class Running(threading.Thread):
    """The most CPUs of a partition seen allocated at once (`sinfo %C` every
    0.5 s): with one-CPU jobs and nothing else on the partition, the most
    jobs running (or completing) at once. A node query, so its cost does not
    grow with the jobs queued (`squeue` lists them all on every call)."""

    def __init__(self, partition):
        super().__init__(daemon=True)
        self.partition, self.stop_ev, self.max = partition, threading.Event(), 0

    def run(self):
        while not self.stop_ev.wait(0.5):
            out = sh("sinfo", "-h", "-p", self.partition, "-o", "%C", check=False).split("/")
            if out and out[0].strip().isdigit():
                self.max = max(self.max, int(out[0]))


def quiesce():
    """Cancels leftovers and waits for an empty queue (runs must not overlap)."""
    subprocess.run(["scancel", "--user=root"], capture_output=True)
    for _ in range(600):
        if not sh("squeue", "-h", "-o", "%i").strip():
            return
        time.sleep(0.2)
    raise RuntimeError("queue did not drain")


def licence_total(name):
    m = re.search(r"Total=(\d+)", sh("scontrol", "show", "licenses", name))
    if not m:
        raise RuntimeError(f"no licence {name} in slurm.conf")
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["jobs", "array"])
    ap.add_argument("n", type=int)
    ap.add_argument("--quota", type=int, required=True, help="jobs running at once")
    ap.add_argument("--limit", choices=["licenses", "partition"], default="licenses")
    ap.add_argument("--partition", default="fake")
    ap.add_argument("--licence", default="quota", help="the slurm.conf licence to draw on")
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args()
    n, q = args.n, args.quota
    if q < 1:
        sys.exit("limited.py: --quota must be at least 1")
    part, extra, made = args.partition, [], None
    if args.mode == "array":
        limit = f"array throttle --array=0-{n - 1}%{q}"
    elif args.limit == "licenses":
        total = licence_total(args.licence)
        if total % q:
            sys.exit(f"limited.py: --quota {q} does not divide the {total} '{args.licence}' licences "
                     f"(use 1, 2, 4 or 8 with the anchor's Licenses=quota:8, or --limit partition)")
        extra = ["-L", f"{args.licence}:{total // q}"]
        limit = f"licences -L {args.licence}:{total // q} of Licenses={args.licence}:{total}"
    else:
        nodes = f"f[001-{q:03d}]"
        made = f"benchq{q}"
        sh("scontrol", "create", f"PartitionName={made}", f"Nodes={nodes}",
           "MaxCPUsPerNode=1", "MaxTime=INFINITE", "State=UP")
        part = made
        limit = f"partition {made}: Nodes={nodes} MaxCPUsPerNode=1"
    try:
        quiesce()
        time.sleep(1)
        base = ["sbatch", "--parsable", "-p", part, "-o", "/dev/null", "-e", "/dev/null",
                "-J", f"bench-q{args.mode}", *extra]
        pid = int(open("/run/slurmctld.pid").read().strip())
        comp, run = Completions(), Running(part)
        sent = {}
        c0, (h0, i0) = proc_cpu(pid), host_cpu()
        run.start()
        t0 = time.monotonic()
        if args.mode == "jobs":
            for _ in range(n):
                t = time.monotonic()
                jid = sh(*base, "--wrap", "true").strip().split(";")[0]
                sent[jid] = t
                if len(sent) % 50 == 0:
                    comp.poll()
        else:
            sh(*base, f"--array=0-{n - 1}%{q}", "--wrap", "true")
        t_sub = time.monotonic() - t0
        deadline = t0 + args.timeout
        while comp.poll() < n and time.monotonic() < deadline:
            time.sleep(0.05)
        done = comp.seen
        t_end = (max(done.values()) if done else time.monotonic()) - t0
        run.stop_ev.set()
        run.join()
        c1, (h1, i1) = proc_cpu(pid), host_cpu()
    finally:
        if made:
            quiesce()
            sh("scontrol", "delete", f"PartitionName={made}", check=False)
    if args.mode == "jobs":
        lat = [done[j] - sent[j] for j in done if j in sent]
    else:
        lat = [t - t0 for t in done.values()]
    ts = sorted(t - t0 for t in done.values())
    halves = "n/a"
    if len(ts) >= 4:
        h = len(ts) // 2
        halves = (f"{h / ts[h - 1]:.1f} / "
                  f"{(len(ts) - h) / (ts[-1] - ts[h - 1]):.1f}" if ts[-1] > ts[h - 1] > 0 else "n/a")
    k = f"slurm_q_{args.mode}"
    busy = (h1 - h0) - (i1 - i0)
    out = {
        "n": n, "quota": q, "limit": limit, "partition": part,
        "completed": len(done), "states": " ".join(f"{s}:{c}" for s, c in sorted(comp.states.items())),
        "timed_out": int(len(done) < n),
        "submit_s": round(t_sub, 3), "e2e_s": round(t_end, 3),
        "per_s": round(len(done) / t_end, 1) if t_end > 0 else 0,
        "per_s_halves": halves,
        "lat_p50_ms": round(1000 * pct(lat, 50), 1), "lat_p99_ms": round(1000 * pct(lat, 99), 1),
        "running_max": run.max,
        "ctld_cpu_ms_per_job": round(1000 * (c1 - c0) / n, 2),
        "host_cpu_ms_per_job": round(1000 * busy / n, 2),
        "host_cpu_busy_pct": round(100 * busy / max(h1 - h0, 1e-9), 1),
    }
    for key, v in out.items():
        print(f"{k}_{key}={v}")
    if run.max > q:
        print(f"limited.py: {run.max} jobs seen running at once, over the limit of {q}", file=sys.stderr)
        return 1
    return 0 if len(done) == n else 1


if __name__ == "__main__":
    sys.exit(main())
