#!/usr/bin/python3
"""Echo CGI: answers, as JSON, what the request looked like when it reached Apache.

Query options: status=NNN, set_cookie=NAME=VALUE[; attrs] (repeatable), redirect=URL,
header=Name:value (repeatable). Bodies are hashed as they stream in; body_b64 is given
for bodies up to 1 MiB.
"""
import base64
import hashlib
import json
import os
import sys
import urllib.parse

LIMIT = 1 << 20


def request_headers():
    headers = {}
    for key, value in os.environ.items():
        if key.startswith("HTTP_"):
            headers[key[5:].replace("_", "-").title()] = value
    for key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
        if os.environ.get(key):
            headers[key.replace("_", "-").title()] = os.environ[key]
    return headers


def read_body():
    digest, kept, length = hashlib.sha256(), bytearray(), 0
    stream = sys.stdin.buffer
    remaining = int(os.environ.get("CONTENT_LENGTH") or 0)
    while remaining:
        piece = stream.read(min(remaining, 1 << 20))
        if not piece:
            break
        remaining -= len(piece)
        length += len(piece)
        digest.update(piece)
        if len(kept) <= LIMIT:
            kept += piece
    return length, digest.hexdigest(), (base64.b64encode(bytes(kept)).decode() if length <= LIMIT else None)


def main():
    query = urllib.parse.parse_qs(os.environ.get("QUERY_STRING", ""), keep_blank_values=True)
    length, sha256, b64 = read_body()
    uri = os.environ.get("REQUEST_URI", "")
    answer = {
        "method": os.environ.get("REQUEST_METHOD"),
        "uri": uri,
        "path": uri.split("?", 1)[0],
        "query": os.environ.get("QUERY_STRING", ""),
        "headers": request_headers(),
        "body_length": length,
        "body_sha256": sha256,
        "body_b64": b64,
        "remote_user": os.environ.get("REMOTE_USER"),
        "auth_type": os.environ.get("AUTH_TYPE"),
    }
    out = ["Content-Type: application/json"]
    status = query.get("status", [None])[0]
    if "redirect" in query:
        out.append(f"Location: {query['redirect'][0]}")
        status = status or "302"
    if status:
        out.append(f"Status: {status}")
    out += [f"Set-Cookie: {cookie}" for cookie in query.get("set_cookie", [])]
    out += [header.replace(":", ": ", 1) for header in query.get("header", [])]
    body = json.dumps(answer, sort_keys=True).encode()
    sys.stdout.buffer.write(("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + body)


main()
