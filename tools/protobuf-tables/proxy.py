import http.server, http.client, sys, os, json, itertools
UP = int(sys.argv[2]); OUTDIR = sys.argv[3]
cnt = itertools.count()
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do(self):
        n = int(self.headers.get('Content-Length') or 0)
        body = self.rfile.read(n) if n else b''
        if body:
            i = next(cnt)
            with open(os.path.join(OUTDIR, f"{i:03d}.bin"), "wb") as f: f.write(body)
            with open(os.path.join(OUTDIR, f"{i:03d}.meta"), "w") as f:
                f.write(f"{self.command} {self.path}\n{self.headers}")
        p = self.path.split('?')[0]
        fn = os.path.join('canned', p.strip('/').replace('/', '_') + '.json')
        if self.command == 'GET' and os.path.exists(fn):
            data = open(fn, 'rb').read()
            self.send_response(200); self.send_header('Content-Type', 'application/json')
            self.send_header('Content-Length', str(len(data))); self.end_headers(); self.wfile.write(data); return
        c = http.client.HTTPConnection("127.0.0.1", UP)
        h = {k: v for k, v in self.headers.items() if k.lower() not in ('host',)}
        c.request(self.command, self.path, body=body, headers=h)
        r = c.getresponse(); data = r.read()
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() in ('transfer-encoding', 'content-length', 'connection'): continue
            self.send_header(k, v)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers(); self.wfile.write(data)
    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
