"""JSON over HTTP to a batchd server, for the benchmark clients in bench/."""
import json
import urllib.error
import urllib.request


def call(server, method, path, body=None):
    """One request; the decoded JSON answer. PATCH bodies are merge patches.
    An HTTP error ends the benchmark with its code and the start of its body."""
    data = json.dumps(body).encode() if body is not None else None
    ctype = "application/merge-patch+json" if method == "PATCH" else "application/json"
    req = urllib.request.Request(server + path, data=data, method=method,
                                 headers={"Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        raise SystemExit(f"{method} {path}: {e.code} {e.read()[:300]!r}")
