#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A loopback backend for the agent's tests: Grafana Pyroscope's ingest
contract and the OTLP/HTTP profiles endpoint, strictly, with faults
injected on request.

usage: receiver.py DIR [PROTO-DIR]

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
Pyroscope's handler or an OTLP receiver would refuse it.

Pyroscope's rules are ported from its ingest path (grafana/pyroscope:
pkg/og/storage/segment ParseKey and pkg/og/flameql for the name, the
pprof converter's metricName and createLabels for the series labels,
pkg/model/pprofsplit for sample labels, which become series labels,
pkg/validation ValidateLabels and ValidateProfile with the default
limits).  The pprof is decoded here, strictly (every string valid
UTF-8, as a proto3 string must be); the accepted entry says its
profile type ("profile_type"), its series ("series") and the names
of their labels ("series_labels").  An OTLP request is decoded by
protoc with the messages in PROTO-DIR (it refuses a string that is not
UTF-8), and the dictionary's tables must start with their empty
entry, the link table too.  Each accepted
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
                      read, and is then taken as any other (a slow backend
                      counts what it was sent, even when the client gave
                      up waiting for the answer: its entry then says
                      "client_gone")
  {"poison": N}       the next N requests' bodies are poisoned: every
                      request with one of those bodies is answered 500
                      (a window a backend cannot take, however often)
  {"cut": N}          the next N requests are cut mid-body (connection
                      reset)

Counts left are written back to DIR/state.json as they are used.
"""
import gzip
import hashlib
import http.server
import json
import os
import re
import socket
import struct
import sys
import threading
import time
import subprocess
import urllib.parse

OUT = sys.argv[1]
PROTOS = sys.argv[2] if len(sys.argv) > 2 else None
LOCK = threading.Lock()
STATE = {"fail": 0, "stall": 0, "cut": 0, "poison": 0, "seen": None}
POISONED = set()
COUNT = [0]
# Pyroscope's defaults (pkg/validation/limits.go).
MAX_LABEL_NAMES = 30
MAX_LABEL_NAME_LEN = 1024
MAX_LABEL_VALUE_LEN = 2048
MAX_SAMPLE_LABELS = 100
METRIC_NAME_RE = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
# Prometheus' label names, with the '.' flameql's tag keys have.
LABEL_NAME_RE = re.compile(r"^[a-zA-Z_.][a-zA-Z0-9_.]*$")


class Refused(Exception):
    pass


def app_name_ok(n):
    """flameql.ValidateAppName: [A-Za-z0-9_./-]+."""
    return n != "" and re.fullmatch(r"[A-Za-z0-9_./-]+", n) is not None


def tag_key_ok(k):
    """flameql.ValidateTagKey: [A-Za-z0-9_.]+, not __name__."""
    return re.fullmatch(r"[A-Za-z0-9_.]+", k) is not None and k != "__name__"


def parse_key(name):
    """segment.ParseKey, rune by rune: NAME{K=V,...}, its parts trimmed."""
    state, key, value, labels = "name", "", "", {}
    for r in name + "{":
        if state == "name":
            if r == "{":
                app = value.strip()
                if not app_name_ok(app):
                    raise Refused("invalid app name %r" % app)
                labels["__name__"] = app
                state = "key"
            else:
                value += r
        elif state == "key":
            if r == "}":
                state = "done"
            elif r == "=":
                state, value = "value", ""
            else:
                key += r
        elif state == "value":
            if r in ",}":
                k = key.strip()
                if k != "__name__" and not tag_key_ok(k):
                    raise Refused("invalid tag key %r" % k)
                labels[k] = value.strip()
                key, state = "", "key"
            else:
                value += r
    return labels


def varint(b, i):
    v = shift = 0
    while True:
        if i >= len(b):
            raise Refused("malformed profile: truncated varint")
        c = b[i]
        i += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def fields(b):
    """A message's fields: (number, wire type, value) in order."""
    i = 0
    while i < len(b):
        k, i = varint(b, i)
        f, t = k >> 3, k & 7
        if t == 0:
            v, i = varint(b, i)
        elif t == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise Refused("malformed profile: truncated field")
            v, i = b[i:i + n], i + n
        elif t == 1:
            v, i = b[i:i + 8], i + 8
        elif t == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise Refused("malformed profile: wire type %d" % t)
        yield f, t, v


def ints(t, v):
    """A repeated integer field's values, packed or not."""
    if t == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def sint(x):
    return x - (1 << 64) if x >= 1 << 63 else x


def decode_pprof(raw):
    """The parts of a pprof Pyroscope's checks read."""
    p = {"strings": [], "types": [], "samples": [], "locations": [], "functions": []}
    for f, t, v in fields(raw):
        if f == 6:
            try:
                p["strings"].append(v.decode("utf-8"))
            except UnicodeDecodeError:
                raise Refused("malformed profile: string_table[%d] is not UTF-8: %r"
                              % (len(p["strings"]), v))
        elif f == 1:
            p["types"].append({n: sint(x) for n, _, x in fields(v) if n in (1, 2)})
        elif f == 2:
            s = {"labels": [], "locations": []}
            for n, tt, x in fields(v):
                if n == 1:
                    s["locations"] += ints(tt, x)
                elif n == 3:
                    s["labels"].append({m: sint(y) for m, _, y in fields(x) if m in (1, 2, 3)})
            p["samples"].append(s)
        elif f in (4, 5):
            ids = [x for n, _, x in fields(v) if n == 1]
            p["locations" if f == 4 else "functions"].append(ids[0] if ids else 0)
    return p


def metric_name(types):
    """The profile type of a pprof posted to /ingest (the converter's
    metricName, with the default sample type mapping)."""
    for st in types:
        if st == "wall":
            return st
    st = ""
    for st in types:
        if "cpu" in st:
            return "process_cpu"
        if "alloc_" in st or "inuse_" in st or st in ("space", "objects"):
            return "memory"
        for k, v in (("mutex_", "mutex"), ("block_", "block"), ("goroutines", "goroutines")):
            if k in st:
                return v
    return st


def validate_labels(ls):
    """validation.ValidateLabels with the default limits."""
    if not ls:
        raise Refused("missing labels")
    if len(ls) > MAX_LABEL_NAMES:
        raise Refused("%d label names; limit %d: %s" % (len(ls), MAX_LABEL_NAMES, sorted(ls)))
    if not METRIC_NAME_RE.match(ls.get("__name__", "")):
        raise Refused("invalid metric name %r" % ls.get("__name__"))
    if not ls.get("service_name"):
        raise Refused("service name is not provided")
    for k, v in ls.items():
        if len(k) > MAX_LABEL_NAME_LEN or len(v.encode()) > MAX_LABEL_VALUE_LEN:
            raise Refused("label name or value too long: %r" % k)
        if not LABEL_NAME_RE.match(k):
            raise Refused("invalid label name %r" % k)


def validate_pprof(p, base):
    """validation.ValidateProfile, then the series pprofsplit makes of the
    samples' string labels, each through ValidateLabels."""
    strs = p["strings"]

    def s(i):
        if not 0 <= i < len(strs):
            raise Refused("malformed profile: string index %d of %d" % (i, len(strs)))
        return strs[i]
    if not strs or strs[0] != "":
        raise Refused("malformed profile: string_table[0] must be \"\"")
    types = [s(t.get(1, 0)) for t in p["types"]]
    for t in types:
        if "-" in t:
            raise Refused("sample type contains -: %r" % t)
    if 0 in p["locations"]:
        raise Refused("location id is 0")
    if 0 in p["functions"]:
        raise Refused("function id is 0")
    base = dict(base, __name__=metric_name(types))
    series = set()
    for smp in p["samples"]:
        if len(smp["labels"]) > MAX_SAMPLE_LABELS:
            raise Refused("sample labels limit: %d" % len(smp["labels"]))
        ls = dict(base)
        for l in smp["labels"]:
            if l.get(2, 0) > 0 and s(l.get(1, 0)) not in ls:
                ls[s(l[1])] = s(l[2])
        series.add(tuple(sorted(ls.items())))
    for ls in series or [tuple(sorted(base.items()))]:
        validate_labels(dict(ls))
    return base["__name__"], series


def otlp_check(raw):
    """protoc's decoding of an ExportProfilesServiceRequest, and the zero
    entries of the dictionary's tables (profiles.proto: each table's
    index 0 is its empty entry; link_table[0] and attribute_table[0]
    too)."""
    dec = subprocess.run(["protoc", "-I", PROTOS, "--decode",
                          "opentelemetry.proto.collector.profiles.v1development."
                          "ExportProfilesServiceRequest", "otlp_profiles_service.proto"],
                         input=raw, capture_output=True)
    if dec.returncode:
        raise Refused("not an ExportProfilesServiceRequest: " + dec.stderr.decode(errors="replace"))
    text = dec.stdout.decode()
    lines = text.splitlines()
    for table in ("mapping_table", "location_table", "function_table", "link_table",
                  "attribute_table", "stack_table"):
        at = [i for i, l in enumerate(lines) if l == "  %s {" % table]
        if not at:
            raise Refused("the dictionary has no %s: its index 0 must be the empty entry" % table)
        if lines[at[0] + 1] != "  }":
            raise Refused("%s[0] is not the empty entry: %s" % (table, lines[at[0] + 1]))
    st = [l for l in lines if l.startswith("  string_table: ")]
    if not st or st[0] != '  string_table: ""':
        raise Refused("string_table[0] must be \"\"")


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
            for k in ("fail", "stall", "cut", "poison"):
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
            json.dump({k: STATE[k] for k in ("fail", "stall", "cut", "poison")}, f)
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
            entry["stalled"] = STATE["stall_s"]
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
        if "stalled" in entry:
            # Whether the client gave up meanwhile: its end is closed.
            try:
                gone = self.connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
            except BlockingIOError:
                gone = False
            except OSError:
                gone = True
            entry["client_gone"] = gone
        digest = hashlib.sha256(body).hexdigest()
        if take("poison"):
            with LOCK:
                POISONED.add(digest)
        entry["digest"] = digest
        if digest in POISONED:
            entry.update(outcome="failed", status=500, poisoned=True)
            log(entry)
            msg = b"injected failure: a poisoned window"
            self.send_response(500)
            self.send_header("Content-Length", str(len(msg)))
            self.end_headers()
            self.wfile.write(msg)
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
        try:
            key = parse_key(q["name"])
        except Refused as e:
            return self.refuse(400, "bad name %r: %s" % (q["name"], e), entry)
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
            raw = gzip.decompress(body)
        except (OSError, EOFError):
            return self.refuse(400, "body is not gzip", entry)
        base = {k: v for k, v in key.items() if not k.startswith("__")}
        base.update(__delta__="false", service_name=key["__name__"],
                    pyroscope_spy=q["spyName"])
        try:
            ptype, series = validate_pprof(decode_pprof(raw), base)
        except Refused as e:
            return self.refuse(400, str(e), entry)
        entry.update(profile_type=ptype, series=len(series),
                     series_labels=sorted({k for ls in series for k, _ in ls}))
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
        if PROTOS:
            try:
                otlp_check(raw)
            except Refused as e:
                return self.refuse(400, str(e), entry)
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
