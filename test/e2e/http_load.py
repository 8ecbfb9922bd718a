#!/usr/bin/env python3
"""Load helpers for test_http_limits.sh and test_tls.sh.

  http_load.py hold PORT IDLE SLOW
      Opens IDLE connections that send nothing and SLOW connections that send
      half a request header, prints "ready N" (N connections open), then keeps
      them open until stdin closes. Prints "closed K" for connections the
      server closed meanwhile.
  http_load.py burst PORT CLIENTS REQUESTS PATH [METHOD] [BODY]
      CLIENTS threads, each sending REQUESTS requests on its own keep-alive
      connection; prints one line "CODE COUNT" per status code (0: transport
      error).
  http_load.py tls-garbage PORT
      Against an HTTPS port: connections cut mid-handshake, a broken
      ClientHello, random bytes, and garbage records after a completed
      handshake. Prints "done".
"""
import collections
import http.client
import os
import resource
import select
import socket
import ssl
import sys
import threading


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def hold(port, idle, slow):
    raise_nofile()
    socks = []
    for i in range(idle + slow):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        if i >= idle:
            s.sendall(b"GET /api HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        socks.append(s)
    print("ready", len(socks), flush=True)
    sys.stdin.read()  # Until the test closes our stdin.
    closed = 0
    for s in socks:
        p = select.poll()
        p.register(s, select.POLLIN)
        if p.poll(0):
            try:
                if s.recv(1) == b"":
                    closed += 1
            except OSError:
                closed += 1
        s.close()
    print("closed", closed, flush=True)


def burst(port, clients, requests, path, method="GET", body=""):
    raise_nofile()
    codes = collections.Counter()
    lock = threading.Lock()

    def run(n):
        conn = None
        for i in range(requests):
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                b = body.replace("{n}", f"{n}-{i}") if body else None
                headers = {"Content-Type": "application/json"} if b else {}
                conn.request(method, path, body=b, headers=headers)
                r = conn.getresponse()
                r.read()
                code = r.status
                if code == 429 and r.getheader("Retry-After") != "1":
                    code = -429  # A 429 without Retry-After counts as a failure.
            except Exception:  # noqa: BLE001 - any transport failure counts
                code = 0
                conn = None
            with lock:
                codes[code] += 1

    threads = [threading.Thread(target=run, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for code, count in sorted(codes.items()):
        print(code, count)


def tls_garbage(port):
    addr = ("127.0.0.1", port)
    hello = bytes.fromhex("160301020001")  # A ClientHello record header, cut short.
    # 1. Cut mid-handshake, twenty times.
    for _ in range(20):
        s = socket.create_connection(addr, timeout=10)
        s.sendall(hello)
        s.close()
    # 2. A malformed ClientHello and pure garbage.
    for payload in (bytes.fromhex("16030100050102030405"), os.urandom(4096), b"\x17" * 3000):
        s = socket.create_connection(addr, timeout=10)
        try:
            s.sendall(payload)
            s.recv(1024)
        except OSError:
            pass
        s.close()
    # 3. A real handshake, then garbage records on the raw socket.
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    for _ in range(5):
        raw = socket.create_connection(addr, timeout=10)
        tls = ctx.wrap_socket(raw, server_hostname="localhost")
        raw2 = socket.socket(fileno=os.dup(tls.fileno()))
        raw2.sendall(b"\x17\x03\x03\x00\x20" + os.urandom(32) + b"\x15\x03\x03\xff\xff" + os.urandom(64))
        try:
            raw2.settimeout(10)
            raw2.recv(1024)
        except OSError:
            pass
        raw2.close()
        tls.close()
    # 4. A handshake that stops after the ClientHello: left open, then dropped.
    s = socket.create_connection(addr, timeout=10)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(incoming, outgoing, server_hostname="localhost")
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    s.sendall(outgoing.read())
    s.recv(65536)  # The server's answer; we never finish.
    s.close()
    print("done", flush=True)


def main():
    cmd = sys.argv[1]
    if cmd == "hold":
        hold(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "burst":
        burst(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], *sys.argv[6:])
    elif cmd == "tls-garbage":
        tls_garbage(int(sys.argv[2]))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
