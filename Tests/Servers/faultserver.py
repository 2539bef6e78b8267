#!/usr/bin/python3
"""A controllable HTTP/1.1 server on loopback for what Apache cannot do on demand.

It answers slowly, drip-feeds, resets mid-body, sends malformed or huge responses, speaks
100-continue, redirects in chains and loops, streams large bodies in both directions, and
records requests so tests can prove what a client sent. Standard library only.

Usage: faultserver.py PORT
Body pattern of /bytes and /drip: byte i is i % 251.
"""
import hashlib
import json
import socket
import socketserver
import struct
import sys
import threading
import time
import urllib.parse

PATTERN = bytes(i % 251 for i in range(251 * 1024))  # whole periods: chunks join seamlessly
RECORDED = []
# Client connections by their port: "open", or "closed" once the handler saw them end.
CONNECTIONS = {}
CONNECTIONS_LOCK = threading.Lock()
RECORDED_LOCK = threading.Lock()


def pattern(start, length):
    """length bytes of the pattern beginning at offset start."""
    out = bytearray()
    offset = start % 251
    while len(out) < length:
        take = min(len(PATTERN) - offset, length - len(out))
        out += PATTERN[offset:offset + take]
        offset = 0
    return bytes(out)


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

    def serve_one(self):
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
        route = ROUTES.get(request.path) or (record if request.path.startswith("/record/") else None)
        if route is None:
            self.discard_body(request)
            self.send_simple(404, b"not found\n")
            return True
        return route(self, request) is not False

    def body_chunks(self, request):
        """Yields the request body in pieces, for Content-Length or chunked bodies."""
        if (request.header("Transfer-Encoding") or "").lower() == "chunked":
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
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


REASONS = {200: "OK", 201: "Created", 302: "Found", 400: "Bad Request", 404: "Not Found"}


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
    code = request.int_arg("code", 302)
    body = b"moved" if code != 304 else b""  # a 304 has no body
    handler.send_simple(code, body, [("Location", request.arg("url", "/"))], reason="Redirect")


def headers(handler, request):
    handler.discard_body(request)
    handler.send_simple(200, b"headers", [
        ("Set-Cookie", "fault_a=1; Path=/"), ("Set-Cookie", "fault_b=2; Path=/"),
        ("X-Multi", "a"), ("X-Multi", "b"), ("X-MiXeD-Case", "yes"),
    ])


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


ROUTES = {
    "/delay": delay, "/drip": drip, "/bytes": send_bytes, "/reset": reset, "/malformed": malformed,
    "/hugeheader": huge_header, "/cuthead": cut_head, "/continue": continue_, "/sink": sink, "/redirect/chain": chain,
    "/redirect/loop": loop, "/redirect/to": redirect_to, "/headers": headers, "/record": record,
    "/recorded": recorded, "/status": status, "/connection": connection,
}


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024


if __name__ == "__main__":
    port = int(sys.argv[1])
    with Server(("127.0.0.1", port), Handler) as server:
        log(f"fault server on 127.0.0.1:{port}")
        server.serve_forever()
