"""A slow ASGI app under hypercorn, over TLS: HTTP/2 through ALPN, HTTP/1.1 otherwise. It
shows how a client spreads concurrent requests over streams and connections.

    h2app.py PORT CERTFILE KEYFILE

Listens on 127.0.0.1:PORT in this one process (the state below is this process's).

Requests and statistics are kept per group (`group=G` on /slow, /stats and /reset; "" when
absent), so tests running at the same time each count only their own requests.

    GET /slow?ms=N&tag=T   waits N ms (default 1000, at most 10000), then answers
                           {"tag": T, "client_port": P, "http_version": "2" or "1.1",
                            "in_flight_at_start": n}; n counts the requests in flight when
                           this one started, itself included
    GET /stats             {"in_flight": n, "max_in_flight": m, "started": [tags in the order
                           their requests started], "client_ports": [distinct client ports, in
                           order], "http_versions": [distinct HTTP versions, in order]}
    GET or POST /reset     forgets all of that: {"reset": true}
    GET /trailers?n=N      N bytes of "x" in two pieces, then the trailer fields X-Checksum: abc and
                           X-Count: N (HTTP/2 only; hypercorn sends trailers only to a request
                           with "TE: trailers")
    anything else          404
"""
import asyncio
import json
import sys
from urllib.parse import parse_qs

groups = {}


def fresh():
    return dict(in_flight=0, max_in_flight=0, started=[], client_ports=[], http_versions=[])


def group(query):
    return groups.setdefault(query.get("group", [""])[0], fresh())


async def send_json(send, status, value):
    body = (json.dumps(value) + "\n").encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def slow(scope, send, query):
    try:
        ms = min(max(int(query.get("ms", ["1000"])[0]), 0), 10000)
    except ValueError:
        await send_json(send, 400, {"error": "ms must be an integer"})
        return
    tag = query.get("tag", [""])[0]
    state = group(query)
    client_port = scope["client"][1] if scope.get("client") else None
    version = scope["http_version"]
    state["started"].append(tag)
    if client_port not in state["client_ports"]:
        state["client_ports"].append(client_port)
    if version not in state["http_versions"]:
        state["http_versions"].append(version)
    state["in_flight"] += 1
    at_start = state["in_flight"]
    state["max_in_flight"] = max(state["max_in_flight"], at_start)
    try:
        await asyncio.sleep(ms / 1000)
    finally:
        state["in_flight"] -= 1
    await send_json(send, 200, {"tag": tag, "client_port": client_port, "http_version": version,
                                "in_flight_at_start": at_start})


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    while True:  # the request body, unused
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body"):
            break
    method, path = scope["method"], scope["path"]
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    if path == "/slow" and method == "GET":
        await slow(scope, send, query)
    elif path == "/stats" and method == "GET":
        await send_json(send, 200, group(query))
    elif path == "/trailers" and method == "GET" and "http.response.trailers" in scope.get("extensions", {}):
        n = int(query.get("n", ["100"])[0])
        await send({"type": "http.response.start", "status": 200, "trailers": True,
                    "headers": [(b"content-type", b"text/plain"), (b"trailer", b"X-Checksum, X-Count")]})
        await send({"type": "http.response.body", "body": b"x" * (n // 2), "more_body": True})
        await send({"type": "http.response.body", "body": b"x" * (n - n // 2)})
        await send({"type": "http.response.trailers", "headers": [(b"x-checksum", b"abc"), (b"x-count", str(n).encode())]})
    elif path == "/reset" and method in ("GET", "POST"):
        groups[query.get("group", [""])[0]] = fresh()
        await send_json(send, 200, {"reset": True})
    else:
        await send_json(send, 404, {"error": "not found"})


def main():
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    port, certfile, keyfile = sys.argv[1:4]
    config = Config()
    config.bind = [f"127.0.0.1:{int(port)}"]
    config.certfile, config.keyfile = certfile, keyfile
    config.alpn_protocols = ["h2", "http/1.1"]
    config.h2_max_concurrent_streams = 256  # hypercorn's default is 100
    # Idle connections stay open for the whole test run: one closed by the server just as a
    # test's twenty requests reuse it sent them out on a connection each (and lost one).
    config.keep_alive_timeout = 3600
    config.keep_alive_max_requests = 10000
    config.backlog = 1024
    config.accesslog = "-"
    config.access_log_format = '%(h)s "%(R)s" %(s)s %(b)s %(L)ss'
    config.errorlog = "-"
    asyncio.run(serve(app, config))


if __name__ == "__main__":
    main()
