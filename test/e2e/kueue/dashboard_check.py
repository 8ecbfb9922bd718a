"""The dashboard in a real headless Chromium (test_dashboard.sh sets the
stage and runs this). Environment: SERVER (http://127.0.0.1:PORT), CQ (a
ClusterQueue with 2 of its 4 cpu in use), NS (the namespace of its jobs),
ADMIT_CMD (a shell command that creates a Job the CQ admits at once, taking
the usage to 4 cpu), RO_TOKEN (a token allowed only get/list/watch),
AUTHN_SERVER (a server without the loopback admin) and ADMIN_TOKEN (its
admin token).
Prints one line per check; exits 1 with `FAIL: reason` on the first that
fails. Everything is asserted through DOM queries over the DevTools protocol.
"""

import json
import os
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cdp import Browser  # noqa: E402

SERVER = os.environ["SERVER"]
CQ = os.environ["CQ"]
NS = os.environ["NS"]


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def js(s):
    return json.dumps(s)


BAR = f"document.querySelector('.bar[data-cq={js(CQ)}][data-resource=\"cpu\"]')"


class AdmissionWatch(threading.Thread):
    """Watches the namespace's Workloads over the API (as a second client,
    beside the browser) and records when one becomes Admitted."""

    def __init__(self, rv):
        super().__init__(daemon=True)
        self.rv = rv
        self.admitted_at = None
        self.name = None
        self.ready = threading.Event()

    def run(self):
        url = (f"{SERVER}/apis/kueue.x-k8s.io/v1beta2/namespaces/{NS}/workloads"
               f"?watch=1&resourceVersion={self.rv}&timeoutSeconds=60")
        with urllib.request.urlopen(url, timeout=70) as r:
            self.ready.set()
            for line in r:
                ev = json.loads(line)
                o = ev.get("object", {})
                conds = (o.get("status") or {}).get("conditions") or []
                if any(c.get("type") == "Admitted" and c.get("status") == "True" for c in conds):
                    self.admitted_at = time.time()
                    self.name = o["metadata"]["name"]
                    return


def main():
    with Browser(width=1280, height=900) as b:
        # 1. The page loads and shows the ClusterQueue's usage.
        b.navigate(f"{SERVER}/ui/#/clusterqueues/{CQ}")
        if not b.wait_for(f"!!{BAR} && document.body.dataset.view === 'clusterqueues'", 30):
            fail("the ClusterQueue page did not show a cpu usage bar in 30 s; view="
                 + str(b.evaluate("document.body.dataset.view + ' ' + document.getElementById('view').innerText.slice(0, 300)")))
        title = b.evaluate("document.getElementById('page-title').textContent")
        if title != f"ClusterQueue {CQ}":
            fail(f"page title {title!r}, want 'ClusterQueue {CQ}'")
        used = b.wait_for(f"{BAR}.dataset.used === '2' && {BAR}.dataset.used", 20)
        if used != "2":
            fail(f"cpu usage shown {b.evaluate(BAR + '.dataset.used')!r}, want '2' (one 2-cpu job admitted)")
        text = b.evaluate(f"{BAR}.parentElement.querySelector('.usage-text').textContent")
        if not text.startswith("2 / 4"):
            fail(f"usage text {text!r}, want it to start with '2 / 4'")
        if not b.wait_for("document.body.dataset.live === '1'", 20):
            fail("the page's watches did not start (body data-live never became 1)")
        print(f"ok: ClusterQueue {CQ} page shows cpu usage {text!r} and is live", flush=True)

        # 2. Admission shows within a second, without reloading.
        b.evaluate("window.__loaded = performance.timeOrigin; window.__seen = null;"
                   "new MutationObserver(() => { const e = " + BAR + ";"
                   " if (!window.__seen && e && e.dataset.used === '4') window.__seen = Date.now(); })"
                   ".observe(document.getElementById('view'), {childList: true, subtree: true, attributes: true}); true")
        rv = json.load(urllib.request.urlopen(
            f"{SERVER}/apis/kueue.x-k8s.io/v1beta2/namespaces/{NS}/workloads", timeout=30))["metadata"]["resourceVersion"]
        watch = AdmissionWatch(rv)
        watch.start()
        watch.ready.wait(30)
        subprocess.run(["bash", "-c", os.environ["ADMIT_CMD"]], check=True)
        seen = b.wait_for("window.__seen", 40)
        watch.join(40)
        if watch.admitted_at is None:
            fail("the new job's workload was not admitted within 40 s (API watch)")
        if not seen:
            fail("the page never showed cpu usage 4 after the job was admitted; shows "
                 + str(b.evaluate(BAR + " && " + BAR + ".dataset.used")))
        if b.evaluate("window.__loaded") != b.evaluate("performance.timeOrigin"):
            fail("the page reloaded")
        lag = seen / 1000.0 - watch.admitted_at
        print(f"ok: usage 4 shown {lag:+.3f} s after the API reported workload {watch.name} Admitted", flush=True)
        if lag > 1.0:
            fail(f"the page showed the admission {lag:.3f} s after it happened (want within 1 s)")

        # 3. The other views render from live data.
        for route, check, what in [
            ("#/", "document.querySelector('[data-card=\"admitted\"] .n')", "overview cards"),
            ("#/clusterqueues", f"document.querySelector('[data-cq-card={js(CQ)}]')", "cohort tree"),
            ("#/localqueues", f"document.getElementById('view').innerText.includes({js(NS)})", "LocalQueues"),
            ("#/workloads/admitted", f"document.getElementById('view').innerText.includes({js(NS)})", "admitted workloads"),
            ("#/jobs", f"document.querySelector('a[href^=\"#/jobs/{NS}/\"]')", "jobs"),
            ("#/nodes", "document.querySelector('.cell[data-node]')", "node heat map"),
        ]:
            b.evaluate(f"location.hash = {js(route)}; true")
            if not b.wait_for(f"!!({check})", 20):
                fail(f"{what} ({route}) did not render: "
                     + str(b.evaluate("document.getElementById('view').innerText.slice(0, 300)")))
        heat = b.evaluate(f"document.querySelector('.cell[data-node=\"node-{NS}\"]').dataset.heat")
        if heat is None or float(heat) <= 0:
            fail(f"node-{NS} heat {heat!r}: its bound pods' requests should show as allocated")
        print(f"ok: overview, cohort tree, LocalQueues, workloads, jobs and nodes render (node-{NS} {float(heat):.0%} allocated)", flush=True)

        # 4. A missing object is a clear not-found page.
        b.evaluate("location.hash = '#/clusterqueues/no-such-queue'; true")
        nf = b.wait_for("document.querySelector('[data-notfound]') && document.getElementById('view').innerText", 20)
        if not nf or "no-such-queue" not in nf:
            fail(f"no not-found page for a missing ClusterQueue: {nf!r}")
        b.evaluate("location.hash = '#/jobs/nobody/ghost'; true")
        if not b.wait_for("document.querySelector('[data-notfound]') && document.getElementById('view').innerText.includes('nobody/ghost')", 20):
            fail("no not-found page for a missing Job")
        print("ok: missing ClusterQueue and Job show not-found pages", flush=True)

        # 5. Login: a refused token shows the login page; a read-only token
        # shows the data without write actions; the loopback admin may write.
        if not b.wait_for("document.body.dataset.mode === 'write'", 10):
            fail("the loopback admin is not offered write actions (body data-mode "
                 + repr(b.evaluate("document.body.dataset.mode")) + ")")
        b.evaluate(f"location.hash = '#/clusterqueues/{CQ}'; true")
        if not b.wait_for("!!document.querySelector('button[data-action=\"cq-stop\"]')", 10):
            fail("the admin sees no Stop button on the ClusterQueue page")
        b.evaluate("sessionStorage.setItem('batchd.token', 'not-a-valid-token'); location.reload(); true")
        if not b.wait_for("document.body.dataset.view === 'login' && !!document.getElementById('login-error')", 20):
            fail("a refused token did not lead to the login page")
        b.evaluate("document.getElementById('token').value = " + js(os.environ["RO_TOKEN"]) + ";"
                   "document.getElementById('login-form').requestSubmit(); true")
        if not b.wait_for(f"document.body.dataset.mode === 'read-only' && !!{BAR}", 20):
            fail("logging in with the read-only token did not show the queue read-only: "
                 + str(b.evaluate("document.body.dataset.view + ' ' + document.body.dataset.mode")))
        if b.evaluate("!!document.querySelector('button[data-action=\"cq-stop\"]')"):
            fail("a read-only user is offered the Stop button")
        if b.evaluate("document.getElementById('mode').textContent") != "read-only":
            fail("no read-only badge")
        print("ok: refused token -> login page; read-only token -> data without write actions", flush=True)

        # 6. A phone-width screen: nothing wider than the screen but tables (which scroll).
        b.viewport(390, 844, mobile=True)
        b.evaluate("location.hash = '#/'; true")
        b.wait_for("!!document.querySelector('[data-card]')", 20)
        width = b.evaluate("document.documentElement.scrollWidth")
        if width > 390:
            fail(f"at 390 px wide the page is {width} px wide (it should fit a phone)")
        print(f"ok: phone width 390 px: page {width} px wide", flush=True)

        # 7. Without the loopback admin: the page asks for a token, then works.
        b.viewport(1280, 900)
        authn = os.environ["AUTHN_SERVER"]
        b.navigate(f"{authn}/ui/#/clusterqueues")
        if not b.wait_for("document.body.dataset.view === 'login' && !!document.getElementById('token')", 20):
            fail("an anonymous visitor of a server without --allow-loopback-admin is not shown the login page: "
                 + str(b.evaluate("document.body && document.body.dataset.view")))
        b.evaluate("document.getElementById('token').value = " + js(os.environ["ADMIN_TOKEN"]) + ";"
                   "document.getElementById('login-form').requestSubmit(); true")
        user = b.wait_for("document.body.dataset.view === 'clusterqueues' && document.body.dataset.live === '1'"
                          " && document.getElementById('user').textContent", 20)
        if user != "batchd-admin":
            fail(f"after logging in with the admin token: user {user!r}, view "
                 + str(b.evaluate("document.body.dataset.view + ' ' + document.getElementById('view').innerText.slice(0, 200)")))
        b.evaluate("document.getElementById('logout').click(); true")
        if not b.wait_for("document.body.dataset.view === 'login' && sessionStorage.getItem('batchd.token') === null", 10):
            fail("Log out did not forget the token and show the login page")
        print("ok: without the loopback admin: login page, admin token logs in, log out forgets it", flush=True)


if __name__ == "__main__":
    main()
