#!/usr/bin/env python3
# Generates batchd-kueue.json (python3 deploy/grafana/generate.py > deploy/grafana/batchd-kueue.json).
# Edit here, not in the JSON; test/e2e/test_prometheus.sh checks the two agree and
# runs every query of the dashboard against a real Prometheus.
import json
DS = {"type": "prometheus", "uid": "${datasource}"}
panels = []
pid = [0]
y = [0]
def nid():
    pid[0] += 1
    return pid[0]
def row(title):
    panels.append({"type": "row", "title": title, "id": nid(), "collapsed": False,
                   "gridPos": {"h": 1, "w": 24, "x": 0, "y": y[0]}, "panels": []})
    y[0] += 1
x = [0]
def place(w, h):
    if x[0] + w > 24:
        x[0] = 0
        y[0] += h
    g = {"h": h, "w": w, "x": x[0], "y": y[0]}
    x[0] += w
    return g
def newline(h):
    if x[0] != 0:
        y[0] += h
        x[0] = 0
def target(expr, legend="", ref="A", instant=False, fmt=None):
    t = {"datasource": DS, "expr": expr, "legendFormat": legend, "refId": ref}
    if instant:
        t["instant"] = True
        t["range"] = False
    if fmt:
        t["format"] = fmt
    return t
def stat(title, expr, unit="short", w=6, h=4, desc=""):
    panels.append({"type": "stat", "title": title, "description": desc, "id": nid(), "datasource": DS,
                   "gridPos": place(w, h), "targets": [target(expr)],
                   "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
                   "options": {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                               "colorMode": "value", "graphMode": "area", "textMode": "auto"}})
def ts(title, targets, unit="short", w=12, h=8, desc="", stack=False):
    panels.append({"type": "timeseries", "title": title, "description": desc, "id": nid(), "datasource": DS,
                   "gridPos": place(w, h),
                   "targets": [target(e, l, chr(65 + i)) for i, (e, l) in enumerate(targets)],
                   "fieldConfig": {"defaults": {"unit": unit, "custom": {"stacking": {"mode": "normal" if stack else "none"}}},
                                   "overrides": []},
                   "options": {"legend": {"displayMode": "table", "placement": "bottom", "calcs": ["lastNotNull", "max"]},
                               "tooltip": {"mode": "multi"}}})
def table(title, expr, w=12, h=8, desc=""):
    panels.append({"type": "table", "title": title, "description": desc, "id": nid(), "datasource": DS,
                   "gridPos": place(w, h), "targets": [target(expr, "", "A", True, "table")],
                   "transformations": [{"id": "organize", "options": {"excludeByName": {"Time": True, "__name__": True, "job": True, "instance": True}}}],
                   "fieldConfig": {"defaults": {}, "overrides": []}, "options": {"showHeader": True}})

CQ = 'cluster_queue=~"$cluster_queue"'
row("Overview")
stat("Pending workloads", f'sum(kueue_pending_workloads{{{CQ}}})', desc="kueue_pending_workloads: active (in the queue) + inadmissible (parked)")
stat("Admitted active workloads", f'sum(kueue_admitted_active_workloads{{{CQ}}})')
stat("Admissions / min", f'sum(rate(kueue_admitted_workloads_total{{{CQ}}}[5m])) * 60')
stat("Nodes not Ready", 'count(kube_node_status_condition{condition="Ready",status="true"} == 0) or vector(0)')
newline(4)
row("Queues")
ts("Pending workloads by ClusterQueue", [(f'sum by (cluster_queue, status) (kueue_pending_workloads{{{CQ}}})', "{{cluster_queue}} {{status}}")], stack=True)
ts("Reserving and admitted active workloads", [
    (f'sum by (cluster_queue) (kueue_reserving_active_workloads{{{CQ}}})', "{{cluster_queue}} reserving"),
    (f'sum by (cluster_queue) (kueue_admitted_active_workloads{{{CQ}}})', "{{cluster_queue}} admitted")])
ts("Admission wait time p50 / p95", [
    (f'histogram_quantile(0.5, sum by (cluster_queue, le) (rate(kueue_admission_wait_time_seconds_bucket{{{CQ}}}[5m])))', "{{cluster_queue}} p50"),
    (f'histogram_quantile(0.95, sum by (cluster_queue, le) (rate(kueue_admission_wait_time_seconds_bucket{{{CQ}}}[5m])))', "{{cluster_queue}} p95")],
   unit="s", desc="Time from creation (or requeue) to admission: kueue_admission_wait_time_seconds")
ts("Quota utilisation (cpu)", [
    (f'sum by (cluster_queue) (kueue_cluster_queue_resource_usage{{{CQ},resource="cpu"}}) / sum by (cluster_queue) (kueue_cluster_queue_nominal_quota{{{CQ},resource="cpu"}}) * 100', "{{cluster_queue}}")],
   unit="percent", desc="Kueue's cookbook query: usage / nominal quota. Above 100% the queue borrows from its cohort.")
ts("Usage and quota by flavor and resource", [
    (f'sum by (cluster_queue, flavor, resource) (kueue_cluster_queue_resource_usage{{{CQ}}})', "{{cluster_queue}} {{flavor}} {{resource}} usage"),
    (f'sum by (cluster_queue, flavor, resource) (kueue_cluster_queue_nominal_quota{{{CQ}}})', "{{cluster_queue}} {{flavor}} {{resource}} nominal")])
ts("Admissions and evictions / min", [
    (f'sum by (cluster_queue) (rate(kueue_admitted_workloads_total{{{CQ}}}[5m])) * 60', "{{cluster_queue}} admitted"),
    (f'sum by (cluster_queue, reason) (rate(kueue_evicted_workloads_total{{{CQ}}}[5m])) * 60', "{{cluster_queue}} evicted {{reason}}")])
ts("Preemptions / min by reason", [
    ('sum by (preempting_cluster_queue, reason) (rate(kueue_preempted_workloads_total[5m])) * 60', "{{preempting_cluster_queue}} {{reason}}")])
table("ClusterQueue status", f'kueue_cluster_queue_status{{{CQ}}} == 1', desc="status: pending (inactive), active or terminating")
newline(8)
row("Admission cycle")
ts("Admission attempts / s by result", [('sum by (result) (rate(kueue_admission_attempts_total[5m]))', "{{result}}")])
ts("Admission attempt latency p99", [
    ('histogram_quantile(0.99, sum by (result, le) (rate(kueue_admission_attempt_duration_seconds_bucket[5m])))', "{{result}}")], unit="s")
newline(8)
row("Nodes")
table("Node conditions that are True", 'kube_node_status_condition{status="true"} == 1')
ts("Allocatable cpu by node", [('sum by (node) (kube_node_status_allocatable{resource="cpu"})', "{{node}}")], stack=True)
newline(8)
row("Server")
ts("API requests / s by code", [('sum by (code) (rate(apiserver_request_total[5m]))', "{{code}}")], unit="reqps")
ts("API request latency p99 (no watches)", [
    ('histogram_quantile(0.99, sum by (verb, le) (rate(apiserver_request_duration_seconds_bucket{verb!~"WATCH|watch"}[5m])))', "{{verb}}")], unit="s")
ts("Store latency p99 by operation", [
    ('histogram_quantile(0.99, sum by (operation, le) (rate(batchd_store_operation_duration_seconds_bucket[5m])))', "{{operation}}")], unit="s")
ts("In-flight requests and watches", [
    ('sum by (request_kind) (apiserver_current_inflight_requests)', "inflight {{request_kind}}"),
    ('sum(apiserver_registered_watchers)', "watches"),
    ('sum(batchd_http_connections)', "connections")])

dash = {
    "uid": "batchd-kueue",
    "title": "batchd / Kueue",
    "description": "Queues, admission and nodes of a batchd cluster over Kueue's metric names (kueue_*), so Kueue's PromQL cookbook works here.",
    "tags": ["batchd", "kueue"],
    "timezone": "browser",
    "schemaVersion": 39,
    "version": 1,
    "editable": True,
    "refresh": "30s",
    "time": {"from": "now-6h", "to": "now"},
    "templating": {"list": [
        {"type": "datasource", "name": "datasource", "label": "Data source", "query": "prometheus",
         "current": {}, "hide": 0},
        {"type": "query", "name": "cluster_queue", "label": "ClusterQueue", "datasource": DS,
         "query": {"query": "label_values(kueue_cluster_queue_status, cluster_queue)", "refId": "cq"},
         "definition": "label_values(kueue_cluster_queue_status, cluster_queue)",
         "includeAll": True, "multi": True, "allValue": ".*", "refresh": 2, "current": {}, "hide": 0, "sort": 1},
    ]},
    "annotations": {"list": []},
    "panels": panels,
}
print(json.dumps(dash, indent=2))
