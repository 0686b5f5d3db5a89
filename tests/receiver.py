#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A loopback backend for the agent's tests: Grafana Pyroscope's ingest
contract and the OTLP/HTTP profiles endpoint, strictly, with faults
injected on request.

usage: receiver.py DIR

It listens on 127.0.0.1 (a free port, written to DIR/port once it
listens) and accepts only

  POST /ingest?name=SERVICE{KEY=VALUE,...}&from=SEC&until=SEC&format=pprof
       &spyName=NAME&sampleRate=HZ
       Content-Type: application/octet-stream, a gzip body (a pprof)

and

  POST /v1development/profiles
       Content-Type: application/x-protobuf, Content-Encoding: gzip, a gzip
       body (an ExportProfilesServiceRequest)

answering 200; anything else gets a 4xx that says what was wrong, as
Pyroscope's handler or an OTLP receiver would refuse it.  Each accepted
body is saved as DIR/NNNN.pb.gz (pprof) or DIR/NNNN.otlp (the request,
uncompressed), and every attempt — accepted, refused or failed — is a
JSON line in DIR/log.jsonl: {"n", "time", "outcome", "status", "query",
"headers", "body"}.

Faults come from DIR/control.json, read again before each connection and
each request (write it whole: to a temporary name, then rename):

  {"down_until": T}   the port is closed until time T (epoch seconds)
  {"fail": N, "status": S, "retry_after": "R"}
                      answer the next N requests with status S (500
                      unless given), with a Retry-After header if given
  {"stall": S}        the next request waits S seconds before its body is
                      read (a client that gave up finds it gone)
  {"cut": N}          the next N requests are cut mid-body (connection
                      reset)

Counts left are written back to DIR/state.json as they are used.
"""
import gzip
import http.server
import json
import os
import re
import socket
import struct
import sys
import threading
import time
import urllib.parse

OUT = sys.argv[1]
LOCK = threading.Lock()
STATE = {"fail": 0, "stall": 0, "cut": 0, "seen": None}
COUNT = [0]
NAME_RE = re.compile(r"^[^{}]+\{([A-Za-z_][A-Za-z0-9_]*=[^,{}=]*(,[A-Za-z_][A-Za-z0-9_]*=[^,{}=]*)*)?\}$")


def control():
    """The control file, and the faults it adds (once per new content)."""
    try:
        with open(os.path.join(OUT, "control.json")) as f:
            text = f.read()
        c = json.loads(text)
    except (OSError, ValueError):
        return {}
    with LOCK:
        if STATE["seen"] != text:
            STATE["seen"] = text
            for k in ("fail", "stall", "cut"):
                if k in c:
                    STATE[k] = c[k] if k != "stall" else 1
            STATE["status"] = c.get("status", 500)
            STATE["retry_after"] = c.get("retry_after")
            STATE["stall_s"] = c.get("stall", 0)
    return c


def log(entry):
    with LOCK:
        COUNT[0] += 1
        entry["n"] = COUNT[0]
        entry["time"] = time.time()
        with open(os.path.join(OUT, "log.jsonl"), "a") as f:
            f.write(json.dumps(entry) + "\n")
        with open(os.path.join(OUT, "state.json.tmp"), "w") as f:
            json.dump({k: STATE[k] for k in ("fail", "stall", "cut")}, f)
        os.rename(os.path.join(OUT, "state.json.tmp"), os.path.join(OUT, "state.json"))


def save(body, ext, entry):
    """An accepted body, as DIR/NNNN.EXT, and its log line."""
    with LOCK:
        saved = len([f for f in os.listdir(OUT) if f.endswith(ext)])
        entry["body"] = "%04d%s" % (saved, ext)
        with open(os.path.join(OUT, entry["body"]), "wb") as f:
            f.write(body)
    entry.update(outcome="accepted", status=200)
    log(entry)


def take(kind):
    with LOCK:
        if STATE[kind] > 0:
            STATE[kind] -= 1
            return True
    return False


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def refuse(self, status, why, entry):
        body = why.encode()
        entry.update(outcome="refused", status=status, why=why)
        log(entry)
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.refuse(405, "method not allowed", {"path": self.path})

    do_PUT = do_GET

    def do_POST(self):
        control()
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        entry = {"path": url.path, "query": {k: v[0] for k, v in query.items()},
                 "headers": {k.lower(): v for k, v in self.headers.items()}}
        length = int(self.headers.get("Content-Length", "0"))
        if take("stall"):
            time.sleep(STATE["stall_s"])
            try:
                self.rfile.read(length)
            except OSError:
                pass
            entry.update(outcome="stalled")
            log(entry)
            self.close_connection = True
            return
        if take("cut"):
            self.rfile.read(length // 2)
            entry.update(outcome="cut")
            log(entry)
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.close_connection = True
            return
        body = self.rfile.read(length)
        if len(body) != length:
            entry.update(outcome="short body")
            log(entry)
            self.close_connection = True
            return
        if take("fail"):
            entry.update(outcome="failed", status=STATE["status"])
            log(entry)
            msg = b"injected failure"
            self.send_response(STATE["status"])
            if STATE.get("retry_after") is not None:
                self.send_header("Retry-After", str(STATE["retry_after"]))
            self.send_header("Content-Length", str(len(msg)))
            self.end_headers()
            self.wfile.write(msg)
            return
        if url.path == "/v1development/profiles":
            return self.otlp(body, entry)
        if url.path != "/ingest":
            return self.refuse(404, "no such endpoint: " + url.path, entry)
        q = entry["query"]
        for k in ("name", "from", "until", "format", "spyName", "sampleRate"):
            if k not in q:
                return self.refuse(400, "missing query parameter " + k, entry)
        if not NAME_RE.match(q["name"]):
            return self.refuse(400, "bad name " + q["name"], entry)
        if q["format"] != "pprof":
            return self.refuse(400, "format must be pprof", entry)
        try:
            frm, until, rate = int(q["from"]), int(q["until"]), int(q["sampleRate"])
        except ValueError:
            return self.refuse(400, "from, until and sampleRate are integers", entry)
        if frm > until or frm < 1e9 or until > time.time() + 60 or rate < 0:
            return self.refuse(400, "bad time range or rate", entry)
        if self.headers.get("Content-Type") != "application/octet-stream":
            return self.refuse(415, "content type", entry)
        try:
            gzip.decompress(body)
        except (OSError, EOFError):
            return self.refuse(400, "body is not gzip", entry)
        save(body, ".pb.gz", entry)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


    def otlp(self, body, entry):
        if url_query := entry["query"]:
            return self.refuse(400, "no query expected: %s" % url_query, entry)
        if self.headers.get("Content-Type") != "application/x-protobuf":
            return self.refuse(415, "content type must be application/x-protobuf", entry)
        if self.headers.get("Content-Encoding") != "gzip":
            return self.refuse(400, "this receiver wants Content-Encoding: gzip", entry)
        try:
            raw = gzip.decompress(body)
        except (OSError, EOFError):
            return self.refuse(400, "body is not gzip", entry)
        save(raw, ".otlp", entry)
        # An empty ExportProfilesServiceResponse: full success.
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()


class Server:
    """Enough of socketserver for the handler, with a port that can go
    down and come back on the same number."""

    def __init__(self):
        self.sock = None
        self.port = 0
        self.conns = set()

    def listen(self):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(16)
        s.settimeout(0.05)
        self.port = s.getsockname()[1]
        self.sock = s

    def serve(self):
        self.listen()
        with open(os.path.join(OUT, "port.tmp"), "w") as f:
            f.write(str(self.port))
        os.rename(os.path.join(OUT, "port.tmp"), os.path.join(OUT, "port"))
        while True:
            c = control()
            if c.get("down_until", 0) > time.time():
                if self.sock:
                    self.sock.close()
                    self.sock = None
                    # Down is down: kept-alive connections go too.
                    with LOCK:
                        for k in list(self.conns):
                            try:
                                k.shutdown(socket.SHUT_RDWR)
                            except OSError:
                                pass
                time.sleep(0.05)
                continue
            if not self.sock:
                self.listen()
            try:
                conn, addr = self.sock.accept()
            except socket.timeout:
                continue
            conn.settimeout(None)
            threading.Thread(target=self.handle, args=(conn, addr), daemon=True).start()

    def handle(self, conn, addr):
        with LOCK:
            self.conns.add(conn)
        try:
            Handler(conn, addr, self)
        except OSError:
            pass
        finally:
            with LOCK:
                self.conns.discard(conn)
            try:
                conn.close()
            except OSError:
                pass


if __name__ == "__main__":
    Server().serve()
