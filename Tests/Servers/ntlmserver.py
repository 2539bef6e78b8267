"""A loopback HTTP server that requires NTLM and really checks the password.

The NTLM acceptor is pyspnego's (spnego.server(protocol="ntlm")), which verifies NTLMv2
responses against NTLM_USER_FILE (lines DOMAIN:USER:PASSWORD). NTLM authenticates a
connection, so the handshake state lives with the connection and later requests on it
are let through. Every path answers a JSON echo of the request with "remote_user".

    python ntlmserver.py PORT        (NTLM_USER_FILE must be set)
"""
import base64
import http.server
import json
import socketserver
import sys

import spnego


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        self.context = None   # the handshake in progress on this connection
        self.user = None      # set once the connection is authenticated

    def log_message(self, format, *args):
        sys.stderr.write("%s %s\n" % (self.address_string(), format % args))

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def answer(self, status, payload, extra=()):
        data = json.dumps(payload, sort_keys=True).encode()
        self.send_response(status)
        for name, value in extra:
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def challenge(self, token=None):
        value = "NTLM" + (" " + base64.b64encode(token).decode() if token else "")
        self.answer(401, {"error": "NTLM authentication required"}, [("WWW-Authenticate", value)])

    def handle_any(self):
        body = self.body()
        header = self.headers.get("Authorization", "")
        if self.user is None:
            if not header.startswith("NTLM "):
                self.context = None
                return self.challenge()
            try:
                token = base64.b64decode(header[5:])
                if self.context is None or token[8:12] == b"\x01\x00\x00\x00":
                    self.context = spnego.server(protocol="ntlm")
                reply = self.context.step(token)
            except Exception as error:  # a wrong password or a malformed message
                self.log_message("NTLM refused: %s", error)
                self.context = None
                return self.challenge()
            if not self.context.complete:
                return self.challenge(reply)
            self.user = self.context.client_principal
            self.context = None
        self.answer(200, {
            "method": self.command,
            "path": self.path,
            "headers": {name: value for name, value in self.headers.items()},
            "body_length": len(body),
            "remote_user": self.user,
            "auth_type": "NTLM",
        })

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


if __name__ == "__main__":
    port = int(sys.argv[1])
    with Server(("127.0.0.1", port), Handler) as server:
        sys.stderr.write(f"NTLM server on 127.0.0.1:{port}\n")
        server.serve_forever()
