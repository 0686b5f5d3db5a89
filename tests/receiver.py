#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A loopback backend for the agent's tests: Grafana Pyroscope's push API
and the OTLP/HTTP profiles endpoint, strictly, with faults injected on
request.

usage: receiver.py DIR [PROTO-DIR]

It listens on 127.0.0.1 (a free port, written to DIR/port once it
listens) and accepts only

  POST /push.v1.PusherService/Push
       Content-Type: application/proto (a unary call of the connect
       protocol; Content-Encoding gzip or none), a push.v1.PushRequest:
       series of {labels, samples of {raw_profile, ID}}, each raw profile
       a pprof, gzipped or not, as Pyroscope takes them

answering 200 and an empty PushResponse, and

  POST /v1development/profiles
       Content-Type: application/x-protobuf, Content-Encoding: gzip, a gzip
       body (an ExportProfilesServiceRequest)

answering 200; anything else gets a 4xx that says what was wrong, as
Pyroscope's handler or an OTLP receiver would refuse it (a push as a
connect error: the status, and {"code", "message"} in JSON).

Pyroscope's rules are ported from its push path (grafana/pyroscope:
pkg/distributor PushBatch and pushSeries, pkg/model/pprofsplit for
sample labels, which become series labels, pkg/validation ValidateLabels
and ValidateProfile with the default limits, the ingestion window
among them).  The pprof is decoded here, strictly (every string valid
UTF-8, as a proto3 string must be).  And the agent's own contract: a
series named process_cpu carries no off_cpu or wall sample type, one
named off_cpu only off_cpu/nanoseconds and the count of its waits, one
named wall only wall/nanoseconds; every series of a request is of one
window (one time, one ID).  A push's log entry says its window: "id"
(the samples' ID), "service", "from" and "until" (epoch seconds, as
/ingest had them: the start rounded down, the end up), "from_ns" and
"until_ns", "profile_types" (Pyroscope's profile type IDs,
NAME:TYPE:UNIT:PERIOD_TYPE:PERIOD_UNIT), "series" (each series: its
"name", "labels", "profile_types", "samples", "totals" per sample type,
"waits" (samples labelled wait) and its "body"), and "series_labels"
(the names of every series' labels once pprofsplit made them); an
attempt cut short says what its start holds ("id", "service").  An
OTLP request is decoded by protoc with the messages in PROTO-DIR (it
refuses a string that is not UTF-8), and the dictionary's tables must
start with their empty entry, the link table too.  Each accepted
profile is saved as DIR/NNNN.pb (each series' pprof of a push,
uncompressed; "body" is the first's) or DIR/NNNN.otlp (the request,
uncompressed), and every
attempt — accepted, refused or failed — is a JSON line in
DIR/log.jsonl: {"n", "time", "outcome", "status", "path", "query",
"headers", "body"} and a push's fields above.

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
# Prometheus' label names, with the '.' that SanitizeLegacyLabelName
# makes '_'.
LABEL_NAME_RE = re.compile(r"^[a-zA-Z_.][a-zA-Z0-9_.]*$")
PUSH_PATH = "/push.v1.PusherService/Push"
# validation.RejectOlderThan and RejectNewerThan, the defaults.
REJECT_OLDER_S = 3600
REJECT_NEWER_S = 600
# The connect protocol's codes of the HTTP statuses a push is refused with.
CONNECT_CODES = {400: "invalid_argument", 401: "unauthenticated", 403: "permission_denied",
                 404: "not_found", 429: "resource_exhausted", 500: "internal",
                 501: "unimplemented", 503: "unavailable"}
# What each profile type the agent names may carry.
SERIES_TYPES = {"process_cpu": lambda ts: not {"off_cpu", "wall"} & set(ts),
                "off_cpu": lambda ts: "off_cpu" in ts and set(ts) <= {"off_cpu", "samples"},
                "wall": lambda ts: ts == ["wall"]}


class Refused(Exception):
    pass


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
    return ((f, t, v) for f, t, v, _ in fields_prefix(b, strict=True))


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
    p = {"strings": [], "types": [], "samples": [], "locations": [], "functions": [],
         "time": 0, "duration": 0, "period_type": {}}
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
            s = {"labels": [], "locations": [], "values": []}
            for n, tt, x in fields(v):
                if n == 1:
                    s["locations"] += ints(tt, x)
                elif n == 2:
                    s["values"] += [sint(y) for y in ints(tt, x)]
                elif n == 3:
                    s["labels"].append({m: sint(y) for m, _, y in fields(x) if m in (1, 2, 3)})
            p["samples"].append(s)
        elif f in (4, 5):
            ids = [x for n, _, x in fields(v) if n == 1]
            p["locations" if f == 4 else "functions"].append(ids[0] if ids else 0)
        elif f == 9:
            p["time"] = sint(v)
        elif f == 10:
            p["duration"] = sint(v)
        elif f == 11:
            p["period_type"] = {n: sint(x) for n, _, x in fields(v) if n in (1, 2)}
    return p


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
    samples' string labels (on top of `base`, the series' own), each
    through ValidateLabels.  The sample types' names, and the series."""
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
    if not types:
        raise Refused("empty profile")
    for smp in p["samples"]:
        if len(smp["values"]) != len(types):
            raise Refused("sample value length mismatch")
    if 0 in p["locations"]:
        raise Refused("location id is 0")
    if 0 in p["functions"]:
        raise Refused("function id is 0")
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
    return types, series


def fields_prefix(b, strict=False):
    """A message's fields: (number, wire type, value, whole) in order.
    Not strict, as far as `b` holds them: a length-delimited field cut
    short comes last, with what there is of it and whole False, and
    anything else cut short ends them."""
    i = 0
    while i < len(b):
        try:
            k, i = varint(b, i)
            f, t = k >> 3, k & 7
            if t == 0:
                v, i = varint(b, i)
            elif t == 2:
                n, i = varint(b, i)
                if i + n > len(b):
                    if strict:
                        raise Refused("malformed profile: truncated field")
                    yield f, t, b[i:], False
                    return
                v, i = b[i:i + n], i + n
            elif t in (1, 5):
                v, i = b[i:i + (8 if t == 1 else 4)], i + (8 if t == 1 else 4)
            else:
                raise Refused("malformed profile: wire type %d" % t)
        except Refused:
            if strict:
                raise
            return
        yield f, t, v, True


def push_series(body, strict=True):
    """A push.v1.PushRequest's series: each [labels (name, value) in
    order, samples [(raw profile or None, ID or None)]].  Strictly, the
    whole of it (Refused if it is not one); else what a body cut short
    holds."""
    if strict:
        list(fields(body))
    out = []
    for f, t, v, _ in fields_prefix(body):
        if f != 1 or t != 2:
            if strict:
                raise Refused("PushRequest: unexpected field %d" % f)
            continue
        labels, samples = [], []
        for g, u, x, whole in fields_prefix(v):
            if g == 1 and u == 2 and whole:
                kv = {n: y for n, _, y, ok in fields_prefix(x) if ok}
                try:
                    labels.append((kv.get(1, b"").decode("utf-8"),
                                   kv.get(2, b"").decode("utf-8")))
                except UnicodeDecodeError:
                    raise Refused("a label is not UTF-8: %r" % (kv,))
            elif g == 2 and u == 2:
                kv = {n: y for n, _, y, ok in fields_prefix(x) if ok}
                ident = kv.get(2)
                samples.append((kv.get(1), ident.decode("utf-8", "replace")
                                if ident is not None else None))
        out.append([labels, samples])
    return out


def window_of(path, data):
    """What a push's start says of its window, for the log of an attempt
    that did not get through: its ID and service, and its time when the
    whole of it came."""
    if path != PUSH_PATH or not data:
        return {}
    got = {}
    for labels, samples in push_series(data, strict=False):
        for k, v in labels:
            if k == "service_name":
                got.setdefault("service", v)
        for raw, ident in samples:
            if ident:
                got.setdefault("id", ident)
            if raw and "from_ns" not in got:
                try:
                    got.update(window_time(decode_pprof(maybe_gunzip(raw))))
                except (Refused, OSError, EOFError):
                    pass
    return got


def maybe_gunzip(raw):
    """A raw profile, gzipped or not, as Pyroscope takes it."""
    return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw


def window_time(p):
    """A pprof's window: its start and end, in ns, and in seconds as
    /ingest had them (the start rounded down, the end up)."""
    frm, until = p["time"], p["time"] + p["duration"]
    return {"from_ns": frm, "until_ns": until, "from": frm // 10**9,
            "until": -(-until // 10**9)}


def check_push(body):
    """A push as Pyroscope's distributor takes it (PushBatch, pushSeries),
    and the agent's contract.  The log entry's fields, and the raw
    profiles to keep."""
    series = push_series(body)
    if not series or not any(s for _, s in series):
        raise Refused("no profiles received")
    now, out, raws, windows = time.time(), [], [], set()
    for labels, samples in series:
        names = [k for k, _ in labels]
        if len(set(names)) != len(names):
            raise Refused("duplicate label names: %s" % sorted(names))
        ls = dict(labels)
        validate_labels(ls)
        name = ls["__name__"]
        for raw, ident in samples:
            try:
                p = decode_pprof(maybe_gunzip(raw or b""))
            except (OSError, EOFError):
                raise Refused("a raw profile is neither a pprof nor a gzipped one")
            types, split = validate_pprof(p, ls)
            if p["time"] <= 0:
                raise Refused("the pprof has no time_nanos: Pyroscope files it at its arrival")
            if not now - REJECT_OLDER_S < p["time"] / 1e9 < now + REJECT_NEWER_S:
                raise Refused("profile time %d is outside the ingestion window" % p["time"])
            if name not in SERIES_TYPES or not SERIES_TYPES[name](types):
                raise Refused("a series named %s carries the sample types %s" % (name, types))
            strs = p["strings"]
            ptype = [strs[p["period_type"].get(n, 0)] for n in (1, 2)]
            ids = ["%s:%s:%s:%s:%s" % (name, strs[t.get(1, 0)], strs[t.get(2, 0)], ptype[0],
                                       ptype[1]) for t in p["types"]]
            waits = sum(1 for smp in p["samples"]
                        if any(strs[l.get(1, 0)] == "wait" for l in smp["labels"]))
            w = window_time(p)
            windows.add((w["from_ns"], w["until_ns"], ident))
            raws.append(raw)
            out.append({"name": name, "labels": ls, "profile_types": ids,
                        "samples": len(p["samples"]), "waits": waits,
                        "totals": {t: sum(smp["values"][i] for smp in p["samples"])
                                   for i, t in enumerate(types)},
                        "split": split, "window": w, "id": ident})
    if len(windows) != 1:
        raise Refused("the series are not of one window: %s" % sorted(windows))
    entry = dict(out[0]["window"], id=out[0]["id"], service=out[0]["labels"]["service_name"],
                 profile_types=[i for s in out for i in s["profile_types"]],
                 series_labels=sorted({k for s in out for ls in s["split"] for k, _ in ls}))
    for s in out:
        del s["split"], s["window"], s["id"]
    entry["series"] = out
    return entry, raws


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


def keep_files(datas, ext, entry):
    """A push's profiles, each as DIR/NNNN.EXT, named in its series; "body"
    is the first's."""
    with LOCK:
        saved = len([f for f in os.listdir(OUT) if f.endswith(ext)])
        for i, (data, s) in enumerate(zip(datas, entry["series"])):
            s["body"] = "%04d%s" % (saved + i, ext)
            with open(os.path.join(OUT, s["body"]), "wb") as f:
                f.write(data)
    entry["body"] = entry["series"][0]["body"]


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
        body, ctype = why.encode(), "text/plain"
        if entry.get("path") == PUSH_PATH and status in CONNECT_CODES:
            # A connect error (415 is not one: connect answers it bare).
            body = json.dumps({"code": CONNECT_CODES[status], "message": why}).encode()
            ctype = "application/json"
        entry.update(outcome="refused", status=status, why=why)
        log(entry)
        self.send_response(status)
        self.send_header("Content-Type", ctype)
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
            log(dict(entry, outcome="stalling"))
            time.sleep(STATE["stall_s"])
            entry["stalled"] = STATE["stall_s"]
        if take("cut"):
            entry.update(window_of(url.path, self.rfile.read(length // 2)))
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
            entry.update(window_of(url.path, body))
            entry.update(outcome="failed", status=500, poisoned=True)
            log(entry)
            msg = b"injected failure: a poisoned window"
            self.send_response(500)
            self.send_header("Content-Length", str(len(msg)))
            self.end_headers()
            self.wfile.write(msg)
            return
        if take("fail"):
            entry.update(window_of(url.path, body))
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
        if url.path == PUSH_PATH:
            return self.push(body, entry)
        return self.refuse(404, "no such endpoint: " + url.path, entry)

    def push(self, body, entry):
        """Pyroscope's PusherService.Push, a unary call of the connect
        protocol."""
        if url_query := entry["query"]:
            return self.refuse(400, "no query expected: %s" % url_query, entry)
        if self.headers.get("Content-Type") != "application/proto":
            return self.refuse(415, "content type must be application/proto", entry)
        enc = self.headers.get("Content-Encoding", "identity")
        if enc not in ("identity", "gzip"):
            return self.refuse(501, "unsupported Content-Encoding " + enc, entry)
        try:
            fields_of = check_push(gzip.decompress(body) if enc == "gzip" else body)
        except (OSError, EOFError):
            return self.refuse(400, "body is not gzip", entry)
        except Refused as e:
            entry.update(window_of(PUSH_PATH, body))
            return self.refuse(400, str(e), entry)
        entry.update(fields_of[0])
        keep_files([maybe_gunzip(r) for r in fields_of[1]], ".pb", entry)
        entry.update(outcome="accepted", status=200)
        log(entry)
        # An empty PushResponse.
        self.send_response(200)
        self.send_header("Content-Type", "application/proto")
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
