#!/usr/bin/python3
"""A controllable HTTP/1.1 server on loopback for what Apache cannot do on demand.

It answers slowly, drip-feeds, resets mid-body, sends malformed or huge responses, speaks
100-continue, redirects in chains and loops, streams large bodies in both directions, and
records requests so tests can prove what a client sent. Standard library only, but for
brotli and zstd in /encoded (Debian's python3-brotli and python3-zstandard).

Usage: faultserver.py PORT [UNIX_SOCKET_PATH ABSTRACT_SOCKET_NAME]
With the two more arguments it serves the same routes on a Unix socket at that path and on one
named in Linux's abstract namespace too; /echo then says which in "socket" ("unix:PATH",
"abstract:NAME"; "tcp" on the port).
Body pattern of /bytes, /drip, /stall, /encoded and /cache?size=: byte i is i % 251.

Besides the fault routes:
  /file?size=N&version=V[&cut=K][&key=K2]   a file whose byte i is (i + V) % 251: ETag,
      Last-Modified, one Range (206/416), If-Range, HEAD; cut=K resets after K body bytes;
      requests with a key are logged, /file-log?key=K2[&clear=1] lists them.
  /retry?key=K&fail=N&code=C[&after=S][&mode=status|reset]   the first N requests with the key
      fail (status C with Retry-After: S, or a reset), later ones get 200; /retry-count?key=K.
  /encoded?enc=gzip|deflate|br|zstd&n=N[&force=1]   N pattern bytes in that content coding if
      Accept-Encoding allows it (or force=1), else identity; X-Identity-Length/-SHA256.
  /stall?n=N[&head_ms=A][&after_head_ms=B][&mid_ms=C]   pauses before the head, after it and
      halfway through the body.
  /blackhole   {"port": P}: a loopback port whose full accept queue lets connect() hang.
  /multipart   parses a multipart/form-data body as it streams in: each part's name, filename,
      contentType, size and sha256.
  /trickle?key=K&n=N[&size=S][&interval_ms=I][&head_ms=H][&gate=1]   N pattern bytes, S at a
      time every I ms, after H ms before the head (with gate=1 the body waits for
      /trickle-open?key=K, up to 300 s), watching the connection all along: /trickle-log?key=K
      says when (epoch seconds) it started, ended (as its last piece began to go out) and the
      client closed it ("closedAt"), and how many bytes went out ("sent").
  /own-port   {"port": P}: a new listener serving these routes, for a test whose connections no
      other test may reuse (each call one more).
  reset_if_reused=K on any request: read, then answered with an RST, when it is not the first
      request on its connection (a kept-alive connection the server dropped just as the client
      reused it); /reuse-resets?key=K says how many were ({"count": N}).
  /echo and /echo/ANY/PATH   the request as received, as JSON: "method", "target" (path and
      query as sent), "path", "query" (decoded [name, value] pairs in order), "headers" ([name,
      value] pairs in order), "body" (UTF-8, undecodable bytes replaced), "bodyLength",
      "bodySha256", and "form" (decoded pairs of an application/x-www-form-urlencoded body).
  /respond?status=N&type=T&body=B[&encoding=E][&header=NAME:VALUE]   status N (default 200)
      with Content-Type T (none without type) and the text B encoded in E, else T's charset,
      else UTF-8; header adds a field (repeatable).
  /bearer?token=T&key=K   401 with WWW-Authenticate: Bearer and a JSON error unless the request
      carries "Authorization: Bearer T"; then 200 with {"attempts": [...]}, the Authorization
      value of every request with the key so far (null where there was none).
  /cache?key=K&... (also /cache/ANY/PATH)   for HTTP cache tests: any method (a body is read and
      dropped), the answer set by the query (values percent-decoded byte for byte; "+" is a space):
      status=N (200-599; default 200); body=TEXT (default "body of K, version V"; echo=NAME appends
      ", NAME: " and the request's NAME field) or size=N pattern bytes, streamed; type=T, the
      Content-Type (default text/plain, with size application/octet-stream; empty: none);
      h=Name:Value (repeatable) fields sent as given, in order (not Content-Length or
      Transfer-Encoding); h304=Name:Value only on a 304, replacing the h fields of its name;
      date=now|none|offset:S|raw:T, the Date (default now); expires=offset:S|raw:T from now;
      last_modified=offset:S|raw:T from when the version appeared (so it holds still within a
      version); etag=TAG, at version V > 0 with -vV before its closing quote unless etag_fixed=1;
      version=V serves V instead of the key's version counter (0 at first), bump=1 adds one to the
      counter first; delay_ms=N; tag=ANY is ignored (tells URLs apart); te=CODINGS sends
      Transfer-Encoding: CODINGS instead of Content-Length, the body in chunked framing when the
      last coding is chunked, else as it is until the connection closes. With a 2xx status, a GET or
      HEAD whose If-None-Match is * or lists the ETag (weak comparison), or that has none and an
      If-Modified-Since at or after Last-Modified, gets 304: the same fields but Content-Type, and
      no body or Content-Length; no304=1 turns that off. HEAD: the GET's fields and Content-Length.
      An unknown parameter, a bad value, CR, LF or NUL in a field: 400 with the reason. Every request
      is logged under its key, /cache-log?key=K[&clear=1] lists them: {"count", "requests": [{"method",
      "target", "headers": [[name, value], ...], "status", "time", "version"}, ...]};
      /cache-bump?key=K[&version=V]: the resource changes, its version goes up by one (or to V).
  /trailers?n=N[&name=NAME&value=VALUE]...   N pattern bytes chunked (in pieces of up to 1000),
      announced with a Trailer field and followed, after the last chunk, by trailer fields
      (default X-Checksum: the body's SHA-256, and X-Count: N); repeated name/value pairs replace
      them; http2=... is ignored.
  /two-lengths?a=A&b=B[&n=N][&form=fields|list]   a response with two Content-Length values
      (two fields, or form=list one field "A, B") and N pattern bytes (default max(A, B)), then
      the connection closes.
  /stacked?n=N&enc=C1,C2...[&corrupt=1][&field=transfer]   N pattern bytes coded with C1, then C2
      ... (gzip, deflate, deflate-raw: deflate without zlib's header, br, zstd, or any other name:
      left as they are), named in Content-Encoding (or, with field=transfer, in
      Transfer-Encoding before chunked); corrupt=1 damages the bytes after the first 20.
  /empty   closes the connection without a byte of response (curl: "Empty reply from server").
  /short?n=N&send=K   a head announcing N body bytes, then K of them and a clean close (FIN).
  /zeros?n=N[&enc=gzip|deflate|raw]   N zero bytes (any size: made as they go out, never held),
      gzip-encoded by default (Content-Encoding, chunked, no Content-Length; X-Identity-Length), raw:
      as they are, with Content-Length.
"""
import calendar
import email.utils
import fcntl
import hashlib
import http.client
import json
import os
import re
import select
import socket
import socketserver
import struct
import sys
import termios
import threading
import time
import urllib.parse
import zlib

try:
    import brotli  # Debian: python3-brotli
except ImportError:
    brotli = None
try:
    import zstandard  # Debian: python3-zstandard
except ImportError:
    zstandard = None

PATTERN = bytes(i % 251 for i in range(251 * 1024))  # whole periods: chunks join seamlessly
PATTERN_VIEW = memoryview(PATTERN)
RECORDED = []
# Client connections by their port: "open", or "closed" once the handler saw them end.
CONNECTIONS = {}
CONNECTIONS_LOCK = threading.Lock()
RECORDED_LOCK = threading.Lock()
# State of /file-log, /retry-count, /encoded and /blackhole, under STATE_LOCK.
FILE_LOGS = {}  # key: [{"method", "range", "ifRange", "status"}, ...]
RETRIES = {}  # key: {"count", "methods"}
ENCODED = {}  # (coding, n): encoded body; (None, n): SHA-256 of the identity body
BLACKHOLE = {}  # "port", "listener", "fillers"
TRICKLES = {}  # key: {"closedAt", "sent", "complete"}
REUSE_RESETS = {}  # reset_if_reused key: how many requests were reset
BEARER_ATTEMPTS = {}  # key: [Authorization value or None, ...]
CACHES = {}  # /cache key: {"version", "born": {version: epoch s it appeared}, "log": [request, ...]}
STATE_LOCK = threading.Lock()
FILE_EPOCH = calendar.timegm((2026, 1, 1, 0, 0, 0))  # Last-Modified of /file version 0


def pattern(start, length):
    """length bytes of the pattern beginning at offset start."""
    out = bytearray()
    offset = start % 251
    while len(out) < length:
        take = min(len(PATTERN) - offset, length - len(out))
        out += PATTERN[offset:offset + take]
        offset = 0
    return bytes(out)


def write_pattern(handler, start, length):
    """Writes length bytes of the pattern beginning at offset start, a piece at a time."""
    sent = 0
    while sent < length:
        offset = (start + sent) % 251
        take = min(len(PATTERN) - offset, length - sent, 1 << 18)
        handler.wfile.write(PATTERN_VIEW[offset:offset + take])
        sent += take


class Request:
    def __init__(self, method, target, headers):
        self.method = method
        self.target = target
        self.headers = headers  # list of (name, value) as received
        parsed = urllib.parse.urlsplit(target)
        self.path = parsed.path
        self.query = urllib.parse.parse_qs(parsed.query, keep_blank_values=True)

    def header(self, name):
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None

    def arg(self, name, default=None):
        values = self.query.get(name)
        return values[0] if values else default

    def int_arg(self, name, default):
        return int(self.arg(name, default))


class Discard:
    """Where the body a route writes after a HEAD response's head goes."""

    def write(self, data):
        return len(data)

    def flush(self):
        pass


class Handler(socketserver.StreamRequestHandler):
    rbufsize = 65536
    # A head and its body go out as separate writes: without TCP_NODELAY the body waited for
    # the client's delayed ACK (about 40 ms) on every reused connection.
    disable_nagle_algorithm = True

    def handle(self):
        port = self.client_address[1]
        with CONNECTIONS_LOCK:
            CONNECTIONS[port] = "open"
        try:
            while self.serve_one():
                pass
        except (ConnectionError, BrokenPipeError, socket.timeout, OSError):
            pass
        finally:
            with CONNECTIONS_LOCK:
                CONNECTIONS[port] = "closed"

    # -- reading -------------------------------------------------------------------------

    def setup(self):
        super().setup()
        self.socket_writer = self.wfile
        self.served = 0  # requests read on this connection

    def finish(self):
        self.wfile = self.socket_writer
        super().finish()

    def serve_one(self):
        self.wfile = self.socket_writer
        line = self.rfile.readline(65537)
        if not line:
            return False
        parts = line.decode("latin-1").strip().split(" ")
        if len(parts) != 3:
            self.send_simple(400, b"bad request line\n", close=True)
            return False
        headers = []
        while True:
            raw = self.rfile.readline(65537)
            if raw in (b"\r\n", b"\n", b""):
                break
            name, _, value = raw.decode("latin-1").partition(":")
            headers.append((name.strip(), value.strip()))
        request = Request(parts[0], parts[1], headers)
        self.method = request.method
        log(f"{request.method} {request.target}")
        self.served += 1
        reuse_key = request.arg("reset_if_reused")
        if reuse_key is not None and self.served > 1:
            with STATE_LOCK:
                REUSE_RESETS[reuse_key] = REUSE_RESETS.get(reuse_key, 0) + 1
            self.reset()
            return False
        route = ROUTES.get(request.path) or (record if request.path.startswith("/record/") else
                                             echo if request.path.startswith("/echo/") else
                                             cache if request.path.startswith("/cache/") else None)
        if route is None:
            self.discard_body(request)
            self.send_simple(404, b"not found\n")
            return True
        te = (request.header("Transfer-Encoding") or "").lower()
        self.body_read = te != "chunked" and int(request.header("Content-Length") or 0) == 0
        keep = route(self, request) is not False
        # A request body left unread would be taken for the next request line; bytes a route
        # writes after a HEAD response's head are dropped below. Either would reach the next
        # request on a reused connection as a response without a status line (HTTP/0.9).
        return keep and self.body_read

    def body_chunks(self, request):
        """Yields the request body in pieces, for Content-Length or chunked bodies."""
        if (request.header("Transfer-Encoding") or "").lower() == "chunked":
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    self.body_read = True
                    return
                remaining = size
                while remaining:
                    piece = self.rfile.read(min(remaining, 1 << 20))
                    if not piece:
                        raise ConnectionError("body ended early")
                    remaining -= len(piece)
                    yield piece
                self.rfile.readline()
        else:
            remaining = int(request.header("Content-Length") or 0)
            while remaining:
                piece = self.rfile.read(min(remaining, 1 << 20))
                if not piece:
                    raise ConnectionError("body ended early")
                remaining -= len(piece)
                yield piece
            self.body_read = True

    def discard_body(self, request):
        for _ in self.body_chunks(request):
            pass

    def digest_body(self, request):
        digest, length = hashlib.sha256(), 0
        for piece in self.body_chunks(request):
            digest.update(piece)
            length += len(piece)
        return length, digest.hexdigest()

    # -- writing -------------------------------------------------------------------------

    def send_head(self, status, reason, headers=(), length=None, close=False):
        lines = [f"HTTP/1.1 {status} {reason}".rstrip(" ")]
        lines += [f"{name}: {value}" for name, value in headers]
        if length is not None:
            lines.append(f"Content-Length: {length}")
        if close:
            lines.append("Connection: close")
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        if getattr(self, "method", "") == "HEAD":  # a response to HEAD ends with its head
            self.wfile.flush()
            self.wfile = Discard()

    def send_simple(self, status, body, headers=(), reason=None, close=False):
        reason = REASONS.get(status, "") if reason is None else reason
        if status in (204, 304):  # responses that never have a body
            body = b""
        self.send_head(status, reason, headers, len(body), close)
        if getattr(self, "method", "") != "HEAD":  # a response to HEAD has no body
            self.wfile.write(body)
        self.wfile.flush()

    def send_json(self, status, value):
        body = json.dumps(value, sort_keys=True).encode()
        self.send_simple(status, body, [("Content-Type", "application/json")])

    def reset(self):
        """Closes the connection with an RST instead of a FIN."""
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()


REASONS = {200: "OK", 201: "Created", 206: "Partial Content", 302: "Found", 400: "Bad Request",
           404: "Not Found", 405: "Method Not Allowed", 416: "Range Not Satisfiable",
           429: "Too Many Requests", 501: "Not Implemented", 503: "Service Unavailable"}


def log(text):
    sys.stdout.write(f"{time.strftime('%H:%M:%S')} {text}\n")
    sys.stdout.flush()


# -- routes ------------------------------------------------------------------------------

def delay(handler, request):
    handler.discard_body(request)
    time.sleep(request.int_arg("ms", 0) / 1000)
    handler.send_simple(200, b"delayed")


def drip(handler, request):
    chunks, size = request.int_arg("chunks", 10), request.int_arg("size", 100)
    interval = request.int_arg("interval_ms", 100) / 1000
    handler.discard_body(request)
    handler.send_head(200, "OK", [("Content-Type", "application/octet-stream")], chunks * size)
    handler.wfile.flush()
    for index in range(chunks):
        time.sleep(interval)
        handler.wfile.write(pattern(index * size, size))
        handler.wfile.flush()


def send_bytes(handler, request):
    """n pattern bytes; with chunked=1 in chunked transfer coding, so no length is announced."""
    total, chunked = request.int_arg("n", 0), request.int_arg("chunked", 0) == 1
    handler.discard_body(request)
    if chunked:
        handler.send_head(200, "OK", [("Content-Type", "application/octet-stream"), ("Transfer-Encoding", "chunked")])
    else:
        handler.send_head(200, "OK", [("Content-Type", "application/octet-stream")], total)
    sent = 0
    while sent < total:
        take = min(len(PATTERN) - sent % len(PATTERN), total - sent, 65536 * 4)
        start = sent % len(PATTERN)
        piece = PATTERN[start:start + take]
        handler.wfile.write(b"%x\r\n%s\r\n" % (take, piece) if chunked else piece)
        sent += take
    if chunked:
        handler.wfile.write(b"0\r\n\r\n")
    handler.wfile.flush()


def reset(handler, request):
    after, wait = request.int_arg("after", 0), request.int_arg("wait_ms", 0) / 1000
    handler.discard_body(request)
    handler.send_head(200, "OK", [("Content-Type", "application/octet-stream")], after + 1_000_000)
    handler.wfile.write(pattern(0, after))
    handler.wfile.flush()
    time.sleep(wait)
    handler.reset()
    return False


def malformed(handler, request):
    handler.discard_body(request)
    handler.wfile.write(b"HTTX/9.9 ABC broken\r\nGarbage\r\n\r\nnonsense")
    handler.wfile.flush()
    return False


def cut_head(handler, request):
    """The head cut off: after the status line (?at=status) or inside a header line (?at=field)."""
    handler.discard_body(request)
    if request.arg("at", "status") == "status":
        handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
    else:
        handler.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/pl")
    handler.wfile.flush()
    return False


def huge_header(handler, request):
    handler.discard_body(request)
    handler.send_simple(200, b"ok", [("X-Huge", "a" * (request.int_arg("kb", 1) * 1024))])


def continue_(handler, request):
    saw_expect = (request.header("Expect") or "").lower() == "100-continue"
    if saw_expect:
        handler.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        handler.wfile.flush()
    length, digest = handler.digest_body(request)
    handler.send_json(200, {"body_length": length, "body_sha256": digest, "saw_expect": saw_expect})


def sink(handler, request):
    # ?pause_ms=N sleeps after each piece read, for clients that show upload progress.
    pause = request.int_arg("pause_ms", 0) / 1000
    digest, length = hashlib.sha256(), 0
    for piece in handler.body_chunks(request):
        digest.update(piece)
        length += len(piece)
        time.sleep(pause)
    digest = digest.hexdigest()
    handler.send_json(200, {"method": request.method, "body_length": length, "body_sha256": digest,
                            "headers": dict(request.headers)})


def chain(handler, request):
    handler.discard_body(request)
    hops, target = request.int_arg("n", 0), request.arg("to")
    if hops > 0:
        query = {"n": hops - 1}
        if target:
            query["to"] = target
        location = "/redirect/chain?" + urllib.parse.urlencode(query)
    elif target:
        location = target
    else:
        handler.send_simple(200, b"end of chain")
        return
    handler.send_simple(302, b"", [("Location", location)])


def loop(handler, request):
    handler.discard_body(request)
    handler.send_simple(302, b"", [("Location", "/redirect/loop")])


def redirect_to(handler, request):
    handler.discard_body(request)
    if request.arg("record"):  # kept for /recorded, with the connection it came on
        with RECORDED_LOCK:
            RECORDED.append({"method": request.method, "path": request.target, "client_port": handler.client_address[1]})
    code = request.int_arg("code", 302)
    body = b"moved" if code != 304 else b""  # a 304 has no body
    handler.send_simple(code, body, [("Location", request.arg("url", "/"))], reason="Redirect")


def headers(handler, request):
    handler.discard_body(request)
    handler.send_simple(200, b"headers", [
        ("Set-Cookie", "fault_a=1; Path=/"), ("Set-Cookie", "fault_b=2; Path=/"),
        ("X-Multi", "a"), ("X-Multi", "b"), ("X-MiXeD-Case", "yes"),
    ])


def disposition(handler, request):
    """A body with Content-Disposition: attachment; filename="NAME" (curl's -J names its file so)."""
    handler.discard_body(request)
    name = request.arg("name") or "fromheader.txt"
    handler.send_simple(200, b"disposition body\n", [("Content-Disposition", 'attachment; filename="%s"' % name)])


def record(handler, request):
    length, digest = handler.digest_body(request)
    time.sleep(request.int_arg("delay_ms", 0) / 1000)
    entry = {"method": request.method, "path": request.target, "headers": dict(request.headers),
             "body_length": length, "client_port": handler.client_address[1]}
    with RECORDED_LOCK:
        RECORDED.append(entry)
    handler.send_json(200, entry)


def recorded(handler, request):
    handler.discard_body(request)
    with RECORDED_LOCK:
        snapshot = list(RECORDED)
        if request.arg("clear") == "1":
            RECORDED.clear()
    handler.send_json(200, snapshot)


def connection(handler, request):
    """Whether the client connection from `port` is open or was closed (by either side)."""
    handler.discard_body(request)
    with CONNECTIONS_LOCK:
        state = CONNECTIONS.get(request.int_arg("port", 0), "unknown")
    handler.send_json(200, {"state": state})


def status(handler, request):
    handler.discard_body(request)
    handler.send_simple(request.int_arg("code", 200), b"status", reason=request.arg("reason", ""))


def expect_continue(handler, request):
    """Answers Expect: 100-continue at once, so clients need not wait before sending a body."""
    if (request.header("Expect") or "").lower() == "100-continue":
        handler.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        handler.wfile.flush()


def parse_range(value, size):
    """(first, last) of a single `bytes=` range, "unsatisfiable", or None to ignore the header."""
    match = re.fullmatch(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", value, re.IGNORECASE | re.ASCII)
    if not match or match.group(1) == match.group(2) == "":
        return None  # several ranges, another unit or bad syntax: the whole file
    if match.group(1) == "":  # bytes=-n: the last n bytes
        suffix = int(match.group(2))
        return "unsatisfiable" if suffix == 0 or size == 0 else (max(0, size - suffix), size - 1)
    first = int(match.group(1))
    if match.group(2) and int(match.group(2)) < first:
        return None
    last = min(int(match.group(2) or size - 1), size - 1)
    return "unsatisfiable" if first >= size else (first, last)


def file(handler, request):
    """size bytes whose byte i is (i + version) % 251, with validators, one Range and If-Range."""
    size, version, key = request.int_arg("size", 0), request.int_arg("version", 0), request.arg("key")
    cut = request.int_arg("cut", -1)  # negative: no cut
    handler.discard_body(request)
    etag = f'"f{version}-{size}"'
    modified = email.utils.formatdate(FILE_EPOCH + version * 86400, usegmt=True)
    headers = [("Accept-Ranges", "bytes"), ("ETag", etag), ("Last-Modified", modified)]
    range_, if_range = request.header("Range"), request.header("If-Range")
    if request.method not in ("GET", "HEAD"):
        status = 405
    elif range_ is not None and if_range in (None, etag, modified):
        span = parse_range(range_, size)
        status = 200 if span is None else 416 if span == "unsatisfiable" else 206
    else:
        status = 200
    if key is not None:
        with STATE_LOCK:
            FILE_LOGS.setdefault(key, []).append(
                {"method": request.method, "range": range_, "ifRange": if_range, "status": status})
    if status == 405:
        handler.send_simple(405, b"GET or HEAD\n", [("Allow", "GET, HEAD")])
        return
    if status == 416:
        handler.send_simple(416, b"range not satisfiable\n", headers + [
            ("Content-Type", "text/plain"), ("Content-Range", f"bytes */{size}")])
        return
    first, last = span if status == 206 else (0, size - 1)
    headers.insert(0, ("Content-Type", "application/octet-stream"))
    if status == 206:
        headers.append(("Content-Range", f"bytes {first}-{last}/{size}"))
    length = last - first + 1
    handler.send_head(status, REASONS[status], headers, length)
    if request.method == "HEAD":
        handler.wfile.flush()
        return
    limit = length if cut < 0 else min(cut, length)
    write_pattern(handler, first + version, limit)
    if limit < length:
        drain(handler)  # a reset discards what is still queued: the client must get all K bytes
        handler.reset()
        return False
    handler.wfile.flush()


def drain(handler, stuck=2.0):
    """Waits until the client has acknowledged all sent bytes, or `stuck` s pass without progress."""
    last, since = None, time.monotonic()
    while True:
        queued = struct.unpack("i", fcntl.ioctl(handler.connection, termios.TIOCOUTQ, b"\0" * 4))[0]
        if queued == 0:
            return
        if queued != last:
            last, since = queued, time.monotonic()
        elif time.monotonic() - since > stuck:
            return
        time.sleep(0.002)


def file_log(handler, request):
    """The requests /file saw with this key; clear=1 forgets them."""
    handler.discard_body(request)
    key = request.arg("key", "")
    with STATE_LOCK:
        entries = list(FILE_LOGS.get(key, []))
        if request.arg("clear") == "1":
            FILE_LOGS.pop(key, None)
    handler.send_json(200, entries)


def retry(handler, request):
    """The first `fail` requests with this key fail (status `code`, or a reset), then 200 ok."""
    key, fail, code = request.arg("key", ""), request.int_arg("fail", 1), request.int_arg("code", 503)
    with STATE_LOCK:
        seen = RETRIES.setdefault(key, {"count": 0, "methods": []})
        seen["count"] += 1
        seen["methods"].append(request.method)
        number = seen["count"]
    if number <= fail and request.arg("mode", "status") == "reset":
        if (request.header("Expect") or "").lower() != "100-continue":  # else no body comes yet
            handler.discard_body(request)
        handler.reset()
        return False
    expect_continue(handler, request)
    handler.discard_body(request)
    if number > fail:
        handler.send_simple(200, b"ok")
    else:
        after = request.arg("after")
        handler.send_simple(code, b"retry later", [] if after is None else [("Retry-After", after)])


def retry_count(handler, request):
    handler.discard_body(request)
    with STATE_LOCK:
        seen = RETRIES.get(request.arg("key", ""), {"count": 0, "methods": []})
        value = {"count": seen["count"], "methods": list(seen["methods"])}
    handler.send_json(200, value)


def accepts(header, coding):
    """Whether an Accept-Encoding value names coding with a q-value above 0."""
    for item in (header or "").split(","):
        token, *params = [part.strip() for part in item.split(";")]
        if token.lower() != coding:
            continue
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    return float(value) > 0
                except ValueError:
                    pass
        return True
    return False


def compressor(coding, n):
    """(compress, finish) functions of a fresh compressor for the content coding."""
    if coding in ("gzip", "deflate"):
        engine = zlib.compressobj(6, zlib.DEFLATED, 31 if coding == "gzip" else 15)
        return engine.compress, engine.flush
    if coding == "br":
        engine = brotli.Compressor(quality=5)
        return engine.process, engine.finish
    engine = zstandard.ZstdCompressor(level=3).compressobj(size=n)
    return engine.compress, engine.flush


def encoded_body(coding, n):
    """The n pattern bytes in the coding (None: their SHA-256), made once and cached."""
    with STATE_LOCK:
        cached = ENCODED.get((coding, n))
    if cached is not None:
        return cached
    if coding is None:
        digest = hashlib.sha256()
        compress, finish = digest.update, digest.hexdigest
    else:
        out = []
        compress, finish = compressor(coding, n)
    for start in range(0, n, len(PATTERN)):
        result = compress(PATTERN_VIEW[:min(len(PATTERN), n - start)])
        if coding is not None:
            out.append(result)
    value = finish() if coding is None else b"".join(out) + finish()
    with STATE_LOCK:
        ENCODED[(coding, n)] = value
    return value


def encoded(handler, request):
    """n pattern bytes in the content coding `enc` when Accept-Encoding allows it or force=1."""
    coding, n = (request.arg("enc") or "").lower(), request.int_arg("n", 0)
    handler.discard_body(request)
    if coding not in ("gzip", "deflate", "br", "zstd"):
        handler.send_simple(400, b"enc is gzip, deflate, br or zstd\n")
        return
    module = {"br": (brotli, "python3-brotli"), "zstd": (zstandard, "python3-zstandard")}.get(coding)
    if module and module[0] is None:
        handler.send_simple(501, f"{coding} needs the Debian package {module[1]}\n".encode())
        return
    use = request.arg("force") == "1" or accepts(request.header("Accept-Encoding"), coding)
    body = encoded_body(coding, n) if use else None
    headers = [("Content-Type", "application/octet-stream"), ("Vary", "Accept-Encoding"),
               ("X-Identity-Length", n), ("X-Identity-SHA256", encoded_body(None, n))]
    if use:
        headers.append(("Content-Encoding", coding))
    handler.send_head(200, "OK", headers, n if body is None else len(body))
    if request.method != "HEAD":
        if body is None:
            write_pattern(handler, 0, n)
        else:
            handler.wfile.write(body)
    handler.wfile.flush()


def pause(handler, seconds):
    """Sleeps; False early if the client closes its end meanwhile."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if not select.select([handler.connection], [], [], left)[0]:
            return True
        try:
            if not handler.connection.recv(1, socket.MSG_PEEK):
                return False
        except OSError:
            return False
        time.sleep(max(0.0, deadline - time.monotonic()))  # a pipelined request waits its turn
    return True


def stall(handler, request):
    """n pattern bytes after head_ms, then after_head_ms after the head, mid_ms halfway."""
    n = request.int_arg("n", 0)
    handler.discard_body(request)
    if not pause(handler, request.int_arg("head_ms", 0) / 1000):
        return False
    handler.send_head(200, "OK", [("Content-Type", "application/octet-stream")], n)
    handler.wfile.flush()
    if request.method == "HEAD":
        return
    if not pause(handler, request.int_arg("after_head_ms", 0) / 1000):
        return False
    write_pattern(handler, 0, n // 2)
    handler.wfile.flush()
    if not pause(handler, request.int_arg("mid_ms", 0) / 1000):
        return False
    write_pattern(handler, n // 2, n - n // 2)
    handler.wfile.flush()


def blackhole(handler, request):
    """A loopback port that never accepts and whose accept queue is full: connects hang."""
    handler.discard_body(request)
    with STATE_LOCK:
        if "port" not in BLACKHOLE:
            listener = socket.socket()
            listener.bind(("127.0.0.1", 0))
            listener.listen(0)  # Linux queues one connection then drops SYNs
            port, fillers = listener.getsockname()[1], []
            while len(fillers) < 8:  # fill the queue until a connect no longer completes
                filler = socket.socket()
                filler.settimeout(0.3)
                try:
                    filler.connect(("127.0.0.1", port))
                except OSError:
                    filler.close()
                    break
                fillers.append(filler)
            BLACKHOLE.update(port=port, listener=listener, fillers=fillers)
        port = BLACKHOLE["port"]
    handler.send_json(200, {"port": port})


def own_port(handler, request):
    """A new listener with these routes, on a port of its own: {"port": P}."""
    handler.discard_body(request)
    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    handler.send_json(200, {"port": server.server_address[1]})


def reuse_resets(handler, request):
    """How many requests with reset_if_reused=key were reset."""
    handler.discard_body(request)
    with STATE_LOCK:
        count = REUSE_RESETS.get(request.arg("key", ""), 0)
    handler.send_json(200, {"count": count})


def header_params(value):
    """The parameters of a header value such as `form-data; name="a"; filename="b.txt"`."""
    params = {}
    for match in re.finditer(r';\s*([^=;\s]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)', value):
        raw = match.group(2).strip()
        if raw.startswith('"'):
            raw = re.sub(r"\\(.)", r"\1", raw[1:-1])
        params[match.group(1).lower()] = raw
    return params


class Multipart:
    """An incremental multipart/form-data parser: feed() pieces, then finish()."""

    def __init__(self, boundary):
        self.delimiter = b"\r\n--" + boundary
        self.buffer = b"\r\n"  # so the first boundary line looks like all the others
        self.state = "preamble"  # then delimiter, headers, body, delimiter, ..., epilogue
        self.parts, self.digest = [], None

    def feed(self, data):
        self.buffer += data
        while self.step():
            pass

    def finish(self):
        if self.state != "epilogue":
            raise ValueError("the body ended before the closing boundary")

    def step(self):
        """Consumes what it can of the buffer; True if another step may consume more."""
        buffer = self.buffer
        if self.state in ("preamble", "body"):
            index = buffer.find(self.delimiter)
            end = index if index >= 0 else max(0, len(buffer) - len(self.delimiter) + 1)
            if self.state == "body" and end:
                self.digest.update(memoryview(buffer)[:end])
                self.parts[-1]["size"] += end
            if index < 0:
                self.buffer = buffer[end:]
                return False
            if self.state == "body":
                self.parts[-1]["sha256"] = self.digest.hexdigest()
            self.buffer, self.state = buffer[index + len(self.delimiter):], "delimiter"
            return True
        if self.state == "delimiter":  # "--" closes the body; else optional blanks and CRLF
            if buffer.startswith(b"--"):
                self.buffer, self.state = b"", "epilogue"
                return False
            end = buffer.find(b"\r\n")
            if end < 0:
                if len(buffer) > 1024:
                    raise ValueError("no line end after a boundary")
                return False
            if buffer[:end].strip(b" \t"):
                raise ValueError("text after a boundary")
            self.buffer, self.state = buffer[end + 2:], "headers"
            return True
        if self.state == "headers":
            if buffer.startswith(b"\r\n"):  # a part without headers
                block, self.buffer = b"", buffer[2:]
            elif (end := buffer.find(b"\r\n\r\n")) >= 0:
                block, self.buffer = buffer[:end], buffer[end + 4:]
            elif len(buffer) > 65536:
                raise ValueError("part headers too long")
            else:
                return False
            self.start_part(block)
            self.state = "body"
            return True
        self.buffer = b""  # the epilogue is ignored
        return False

    def start_part(self, block):
        headers = {}
        for line in filter(None, block.split(b"\r\n")):
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                text = line.decode("latin-1")
            name, _, value = text.partition(":")
            headers[name.strip().lower()] = value.strip()
        params = header_params(headers.get("content-disposition", ""))
        self.parts.append({"name": params.get("name"), "filename": params.get("filename"),
                           "contentType": headers.get("content-type"), "size": 0, "sha256": None})
        self.digest = hashlib.sha256()


def multipart(handler, request):
    """Parses a multipart/form-data body as it streams in: each part's name, size and SHA-256."""
    content_type = request.header("Content-Type") or ""
    boundary = header_params(content_type).get("boundary")
    expect_continue(handler, request)
    if not content_type.lower().startswith("multipart/form-data") or not boundary:
        handler.discard_body(request)
        handler.send_simple(400, b"not multipart/form-data with a boundary\n")
        return
    parser, error = Multipart(boundary.encode("latin-1")), None
    for piece in handler.body_chunks(request):
        if error is None:
            try:
                parser.feed(piece)
            except ValueError as problem:
                error = str(problem)
    if error is None:
        try:
            parser.finish()
        except ValueError as problem:
            error = str(problem)
    if error is not None:
        handler.send_json(400, {"error": error})
        return
    handler.send_json(200, {"parts": parser.parts})

def trickle(handler, request):
    """A slow body that notices at once when the client closes the connection."""
    n, size = request.int_arg("n", 1 << 20), request.int_arg("size", 1024)
    interval = request.int_arg("interval_ms", 20) / 1000
    entry = {"startedAt": time.time(), "endedAt": None, "closedAt": None, "sent": 0, "complete": False,
             "open": request.int_arg("gate", 0) == 0}
    with STATE_LOCK:
        TRICKLES[request.arg("key", "")] = entry

    def closed():
        entry["closedAt"] = entry["endedAt"] = time.time()
        return False

    handler.discard_body(request)
    if not pause(handler, request.int_arg("head_ms", 0) / 1000):
        return closed()
    handler.send_head(200, "OK", [("Content-Type", "application/octet-stream")], n)
    handler.wfile.flush()
    # Long enough for a test starved under ThreadSanitizer (its suites share two pool
    # threads with blocking tests: 358 s was seen) to look before the gate opens by itself.
    deadline = time.monotonic() + 1200
    while not entry["open"] and time.monotonic() < deadline:  # gate=1: the body waits for /trickle-open
        if not pause(handler, 0.005):
            return closed()
    while entry["sent"] < n:
        if not pause(handler, interval):
            return closed()
        piece = min(size, n - entry["sent"])
        if entry["sent"] + piece == n:
            # Taken before the last piece goes out: the client may have it, end the response
            # and send its next request before this thread runs again.
            entry["endedAt"] = time.time()
        try:
            handler.wfile.write(pattern(entry["sent"], piece))
            handler.wfile.flush()
        except OSError:
            return closed()
        entry["sent"] += piece
    if entry["endedAt"] is None:  # n=0: no piece went out
        entry["endedAt"] = time.time()
    entry["complete"] = True


def trickle_log(handler, request):
    handler.discard_body(request)
    with STATE_LOCK:
        entry = dict(TRICKLES.get(request.arg("key", ""), {}))
    handler.send_json(200 if entry else 404, entry)


def trickle_open(handler, request):
    handler.discard_body(request)
    with STATE_LOCK:
        entry = TRICKLES.get(request.arg("key", ""))
        if entry is not None:
            entry["open"] = True
    handler.send_json(200 if entry is not None else 404, {})


def echo(handler, request):
    """The request as received: method, target, headers, body (text and SHA-256), form pairs."""
    expect_continue(handler, request)
    body = b"".join(handler.body_chunks(request))
    content_type = (request.header("Content-Type") or "").split(";")[0].strip().lower()
    form = None
    if content_type == "application/x-www-form-urlencoded":
        form = urllib.parse.parse_qsl(body.decode("latin-1"), keep_blank_values=True, encoding="utf-8")
    query = urllib.parse.urlsplit(request.target).query
    handler.send_json(200, {
        "method": request.method, "target": request.target, "path": request.path,
        "query": urllib.parse.parse_qsl(query, keep_blank_values=True, encoding="utf-8"),
        "headers": [[name, value] for name, value in request.headers],
        "body": body.decode("utf-8", "replace"), "bodyLength": len(body),
        "bodySha256": hashlib.sha256(body).hexdigest(), "form": form,
        "socket": getattr(handler, "socket_name", "tcp"),
    })


def respond(handler, request):
    """status with Content-Type type and the text body in the type's charset."""
    handler.discard_body(request)
    content_type = request.arg("type")
    charset = request.arg("encoding") or header_params(content_type or "").get("charset", "utf-8")
    headers = [] if content_type is None else [("Content-Type", content_type)]
    for field in request.query.get("header", []):
        name, _, value = field.partition(":")
        headers.append((name.strip(), value.strip()))
    handler.send_simple(request.int_arg("status", 200), request.arg("body", "").encode(charset), headers)


def bearer(handler, request):
    """401 unless Authorization is "Bearer <token>"; logs every attempt's Authorization."""
    handler.discard_body(request)
    authorization = request.header("Authorization")
    with STATE_LOCK:
        attempts = BEARER_ATTEMPTS.setdefault(request.arg("key", ""), [])
        attempts.append(authorization)
        attempts = list(attempts)
    if authorization == "Bearer " + request.arg("token", ""):
        handler.send_json(200, {"attempts": attempts})
    else:
        body = json.dumps({"error": "invalid_token"}).encode()
        handler.send_simple(401, body, [("WWW-Authenticate", 'Bearer error="invalid_token"'),
                                        ("Content-Type", "application/json")], reason="Unauthorized")


TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
CACHE_PARAMS = {"key", "status", "body", "type", "h", "h304", "date", "expires", "last_modified", "etag",
                "etag_fixed", "version", "bump", "no304", "delay_ms", "size", "echo", "tag", "te"}


def cache_query(request):
    """The query's parameters, name: [values], percent-decoded as Latin-1 so any byte passes."""
    params = {}
    query = urllib.parse.urlsplit(request.target).query
    for name, value in urllib.parse.parse_qsl(query, keep_blank_values=True, encoding="latin-1"):
        params.setdefault(name, []).append(value)
    return params


def cache_int(params, name, default, low, high):
    text = params.get(name, [str(default)])[0]
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{name}={text!r} is not a whole number") from None
    if not low <= value <= high:
        raise ValueError(f"{name}={value} is not in {low}...{high}")
    return value


def cache_date(name, text, base):
    """A date field's value: base + S as an IMF-fixdate for offset:S, T for raw:T."""
    kind, _, value = text.partition(":")
    if kind == "raw":
        return value
    if kind == "offset" and re.fullmatch(r"[+-]?[0-9]{1,10}", value) and abs(int(value)) <= 3_000_000_000:
        return email.utils.formatdate(base + int(value), usegmt=True)
    raise ValueError(f"{name}={text!r} is neither offset:SECONDS (|SECONDS| <= 3e9) nor raw:TEXT")


def cache_fields(params, name):
    """The Name:Value fields of the repeatable parameter."""
    fields = []
    for field in params.get(name, []):
        field_name, colon, value = field.partition(":")
        if not colon or not TOKEN.fullmatch(field_name):
            raise ValueError(f"{name}={field!r} is not Name:Value with a token for Name")
        if field_name.lower() == "transfer-encoding" or (name == "h" and field_name.lower() == "content-length"):
            raise ValueError(f"{name}={field!r}: the server frames the body itself")
        fields.append((field_name, value.strip(" \t")))
    return fields


def http_time(text):
    """The epoch seconds of an HTTP date, or None."""
    try:
        return email.utils.mktime_tz(email.utils.parsedate_tz(text))
    except (TypeError, ValueError, OverflowError):
        return None


def etag_matches(header, etag):
    """Whether an If-None-Match value is * or lists etag (weak comparison)."""
    tags = re.findall(r'(?:W/)?"[^"]*"|[^,\s]+', header)
    opaque = lambda tag: tag[2:] if tag.startswith("W/") else tag
    return "*" in tags or (etag is not None and any(opaque(tag) == opaque(etag) for tag in tags))


def cache_state(key):
    """The state of a /cache key; only with STATE_LOCK held."""
    return CACHES.setdefault(key, {"version": 0, "born": {}, "log": []})


def cache_bump(state, now, to=None):
    """The key's next version (or version `to`), born at least a second after the current one."""
    old = state["born"].setdefault(state["version"], now)
    state["version"] = state["version"] + 1 if to is None else to
    state["born"][state["version"]] = max(now, old + 1)
    return state["version"]


def cache_answer(request, params, now):
    """(status, headers, body or None for the pattern, length, delay in s, version); ValueError if bad."""
    one = lambda name, default=None: params.get(name, [default])[0]
    key = one("key", "")
    if not key:
        raise ValueError("key is required")
    for name, values in params.items():
        if name not in CACHE_PARAMS:
            raise ValueError(f"unknown parameter {name!r}")
        if name not in ("key", "body", "echo") and any(re.search("[\r\n\0]", value) for value in values):
            raise ValueError(f"{name} has CR, LF or NUL")
    status, delay = cache_int(params, "status", 200, 200, 599), cache_int(params, "delay_ms", 0, 0, 600_000)
    size = cache_int(params, "size", 0, 0, 1 << 40) if "size" in params else None
    if size is not None and "body" in params:
        raise ValueError("body and size exclude each other")
    override = cache_int(params, "version", 0, 0, 1 << 40) if "version" in params else None
    date, etag, modified = one("date", "now"), one("etag"), one("last_modified")
    date = None if date == "none" else cache_date("date", "offset:0" if date == "now" else date, now)
    expires = None if one("expires") is None else cache_date("expires", one("expires"), now)
    if modified is not None:
        cache_date("last_modified", modified, 0)  # checked before the state changes
    fields, fields_304 = cache_fields(params, "h"), cache_fields(params, "h304")
    with STATE_LOCK:
        state = cache_state(key)
        state["born"].setdefault(state["version"], now)
        if one("bump") == "1":
            cache_bump(state, now)
        version = state["version"] if override is None else override
        born = state["born"].setdefault(version, now)  # Last-Modified stays put within a version
    if etag is not None and version and one("etag_fixed") != "1":
        etag = etag[:-1] + f'-v{version}"' if etag.endswith('"') else etag + f"-v{version}"
    modified = None if modified is None else cache_date("last_modified", modified, born)
    conditional = request.method in ("GET", "HEAD") and 200 <= status < 300 and one("no304") != "1"
    none_match = ", ".join(value for name, value in request.headers if name.lower() == "if-none-match")
    since = request.header("If-Modified-Since")
    if conditional and none_match:
        status = 304 if etag_matches(none_match, etag) else status
    elif conditional and since is not None and modified is not None:
        since, changed = http_time(since), http_time(modified)
        status = 304 if None not in (since, changed) and since >= changed else status
    content_type = one("type", "text/plain" if size is None else "application/octet-stream")
    headers = [(name, value) for name, value in (
        ("Date", date), ("Content-Type", content_type if status not in (204, 304) else None), ("ETag", etag),
        ("Last-Modified", modified), ("Expires", expires)) if value]
    if status == 304:  # h304 fields replace the h fields of their names
        replaced = {name.lower() for name, _ in fields_304}
        fields = [field for field in fields if field[0].lower() not in replaced] + fields_304
    if size is not None:
        return status, headers + fields, None, size, delay / 1000, version
    echo = one("echo")
    text = f"body of {key}, version {version}" + ("" if echo is None else f", {echo}: {request.header(echo)}")
    body = one("body", text).encode("latin-1")
    return status, headers + fields, body, len(body), delay / 1000, version


def cache(handler, request):
    """The response the query configures, answering conditionals; every request logged by key."""
    expect_continue(handler, request)
    handler.discard_body(request)
    params, error = cache_query(request), None
    try:
        status, headers, body, length, wait, version = cache_answer(request, params, int(time.time()))
    except ValueError as problem:
        status, version, error = 400, None, f"{problem}\n".encode("latin-1", "replace")
    key = params.get("key", [""])[0]
    if key:
        entry = {"method": request.method, "target": request.target, "status": status, "time": time.time(),
                 "headers": [[name, value] for name, value in request.headers], "version": version}
        with STATE_LOCK:
            cache_state(key)["log"].append(entry)
    if error is not None:
        handler.send_simple(400, error, [("Content-Type", "text/plain")])
        return
    time.sleep(wait)
    reason = http.client.responses.get(status, "Unknown")
    codings = params.get("te", [None])[0]
    if status in (204, 304):  # no body and no Content-Length
        handler.send_head(status, reason, headers)
    elif codings is not None:  # the body as it is, under codings it names: chunked, or until the close
        chunked = codings.replace(" ", "").lower().endswith("chunked")
        handler.send_head(status, reason, headers + [("Transfer-Encoding", codings)], close=not chunked)
        piece = body if body is not None else pattern(0, length)
        if request.method != "HEAD":
            handler.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(piece), piece) if chunked else piece)
        handler.wfile.flush()
        return chunked
    else:
        handler.send_head(status, reason, headers, length)
        if request.method != "HEAD" and body is not None:
            handler.wfile.write(body)
        elif request.method != "HEAD":
            write_pattern(handler, 0, length)
    handler.wfile.flush()


def cache_log(handler, request):
    """The requests /cache saw with this key, in order; clear=1 forgets them."""
    handler.discard_body(request)
    params = cache_query(request)
    key = params.get("key", [""])[0]
    if not key:
        handler.send_simple(400, b"key is required\n")
        return
    with STATE_LOCK:
        state = CACHES.get(key)
        entries = list(state["log"]) if state else []
        if state and params.get("clear") == ["1"]:
            state["log"] = []
    handler.send_json(200, {"count": len(entries), "requests": entries})


def cache_bump_route(handler, request):
    """The key's resource changes: its version goes up by one, or to version=V."""
    handler.discard_body(request)
    params = cache_query(request)
    key = params.get("key", [""])[0]
    try:
        if not key:
            raise ValueError("key is required")
        to = cache_int(params, "version", 0, 0, 1 << 40) if "version" in params else None
    except ValueError as problem:
        handler.send_simple(400, f"{problem}\n".encode("latin-1", "replace"))
        return
    with STATE_LOCK:
        version = cache_bump(cache_state(key), int(time.time()), to)
    handler.send_json(200, {"version": version})


def trailers(handler, request):
    handler.discard_body(request)
    n = request.int_arg("n", 100)
    body = pattern(0, n)
    names, values = request.query.get("name", []), request.query.get("value", [])
    fields = list(zip(names, values)) or [("X-Checksum", hashlib.sha256(body).hexdigest()), ("X-Count", str(n))]
    handler.send_head(200, "OK", [("Content-Type", "application/octet-stream"), ("Transfer-Encoding", "chunked"),
                                  ("Trailer", ", ".join(name for name, _ in fields))])
    for start in range(0, n, 1000):
        piece = body[start:start + 1000]
        handler.wfile.write(b"%x\r\n" % len(piece) + piece + b"\r\n")
    handler.wfile.write(b"0\r\n" + b"".join(f"{name}: {value}\r\n".encode("latin-1") for name, value in fields) + b"\r\n")
    handler.wfile.flush()


def two_lengths(handler, request):
    handler.discard_body(request)
    a, b = request.int_arg("a", 5), request.int_arg("b", 7)
    n = request.int_arg("n", max(a, b))
    if request.arg("form", "fields") == "list":
        fields = [("Content-Length", f"{a}, {b}")]
    else:
        fields = [("Content-Length", str(a)), ("Content-Length", str(b))]
    handler.send_head(200, "OK", [("Content-Type", "text/plain")] + fields, close=True)
    handler.wfile.write(pattern(0, n))
    handler.wfile.flush()
    return False


def stacked(handler, request):
    handler.discard_body(request)
    n = request.int_arg("n", 1000)
    names = [name for name in (request.arg("enc") or "").split(",") if name]
    body = pattern(0, n)
    for name in names:
        if name in ("gzip", "deflate", "deflate-raw"):
            engine = zlib.compressobj(6, zlib.DEFLATED, {"gzip": 31, "deflate": 15, "deflate-raw": -15}[name])
            body = engine.compress(body) + engine.flush()
        elif name == "br" and brotli is not None:
            body = brotli.compress(body)
        elif name == "zstd" and zstandard is not None:
            body = zstandard.ZstdCompressor().compress(body)
    if request.arg("corrupt") == "1":
        body = body[:20] + bytes(b ^ 0x5A for b in body[20:])
    coded = ", ".join("deflate" if name == "deflate-raw" else name for name in names)
    if request.arg("field") == "transfer":
        handler.send_head(200, "OK", [("Content-Type", "application/octet-stream"), ("Transfer-Encoding", coded + ", chunked")])
        if body:
            handler.wfile.write(b"%x\r\n" % len(body) + body + b"\r\n")
        handler.wfile.write(b"0\r\n\r\n")
    else:
        handler.send_head(200, "OK", [("Content-Type", "application/octet-stream"), ("Content-Encoding", coded)], len(body))
        handler.wfile.write(body)
    handler.wfile.flush()


def empty(handler, request):
    handler.discard_body(request)
    return False


def short(handler, request):
    handler.discard_body(request)
    n, send = request.int_arg("n", 1000), request.int_arg("send", 10)
    handler.send_head(200, "OK", [("Content-Type", "application/octet-stream")], n, close=True)
    handler.wfile.write(pattern(0, min(send, n)))
    handler.wfile.flush()
    return False


def zeros(handler, request):
    handler.discard_body(request)
    n = request.int_arg("n", 1 << 20)
    enc = request.arg("enc", "gzip")
    if enc == "raw":
        handler.send_head(200, "OK", [("Content-Type", "application/octet-stream")], length=n)
        block = bytes(1 << 16)
        while n > 0:
            handler.wfile.write(block[:min(n, len(block))])
            n -= len(block)
        handler.wfile.flush()
        return
    wbits = 31 if enc == "gzip" else 15
    encoder = zlib.compressobj(9, zlib.DEFLATED, wbits)
    handler.send_head(200, "OK", [("Content-Type", "application/octet-stream"), ("Content-Encoding", enc),
                                  ("Transfer-Encoding", "chunked"), ("X-Identity-Length", str(n))])
    block = bytes(1 << 20)

    def chunk(data):
        if data:
            handler.wfile.write(b"%x\r\n" % len(data) + data + b"\r\n")
    left = n
    while left > 0:
        chunk(encoder.compress(block[:min(left, len(block))]))
        left -= len(block)
    chunk(encoder.flush())
    handler.wfile.write(b"0\r\n\r\n")
    handler.wfile.flush()


ROUTES = {
    "/delay": delay, "/drip": drip, "/bytes": send_bytes, "/reset": reset, "/malformed": malformed,
    "/hugeheader": huge_header, "/cuthead": cut_head, "/continue": continue_, "/sink": sink, "/redirect/chain": chain,
    "/redirect/loop": loop, "/redirect/to": redirect_to, "/headers": headers, "/record": record, "/disposition": disposition,
    "/recorded": recorded, "/status": status, "/connection": connection,
    "/file": file, "/file-log": file_log, "/retry": retry, "/retry-count": retry_count,
    "/encoded": encoded, "/stall": stall, "/blackhole": blackhole, "/multipart": multipart,
    "/trickle": trickle, "/trickle-log": trickle_log, "/trickle-open": trickle_open,
    "/echo": echo, "/respond": respond, "/bearer": bearer, "/own-port": own_port, "/reuse-resets": reuse_resets,
    "/cache": cache, "/cache-log": cache_log, "/cache-bump": cache_bump_route,
    "/trailers": trailers, "/two-lengths": two_lengths, "/zeros": zeros, "/stacked": stacked,
    "/empty": empty, "/short": short,
}


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024


class UnixHandler(Handler):
    """The routes on a Unix socket: no TCP options, no client port (0 stands for it)."""
    disable_nagle_algorithm = False

    def handle(self):
        self.client_address = ("unix", 0)
        try:
            while self.serve_one():
                pass
        except (ConnectionError, BrokenPipeError, socket.timeout, OSError):
            pass


class UnixServer(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True
    request_queue_size = 1024


def serve_unix(address, name):
    """Serves the routes on the Unix socket at address (a path, or NUL and a name), in a thread."""
    handler = type("NamedUnixHandler", (UnixHandler,), {"socket_name": name})
    server = UnixServer(address, handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    log(f"fault server on {name}")


if __name__ == "__main__":
    port = int(sys.argv[1])
    if len(sys.argv) > 3:
        path, abstract = sys.argv[2], sys.argv[3]
        if os.path.exists(path):
            os.unlink(path)
        serve_unix(path, f"unix:{path}")
        os.chmod(path, 0o666)
        serve_unix("\0" + abstract, f"abstract:{abstract}")
    with Server(("127.0.0.1", port), Handler) as server:
        log(f"fault server on 127.0.0.1:{port}")
        server.serve_forever()
