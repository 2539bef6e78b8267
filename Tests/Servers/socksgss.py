#!/usr/bin/python3
"""A SOCKS5 proxy with Kerberos (GSS-API, RFC 1961) on loopback, for the library's own
handshake (libcurl 7.88 cannot speak it; Debian's dante is built without GSS-API).

Usage: socksgss.py --allow PRINCIPAL [--allow ...] MODE=PORT [MODE=PORT ...]

The keytab is the one KRB5_KTNAME names (its rcmd/127.0.0.1 and rcmd/localhost keys, curl's
default SOCKS service), the realm's configuration KRB5_CONFIG's. Every mode listens on
127.0.0.1:PORT:

  normal     offers GSS-API (method 1) alone; context tokens (MTYP 1) until GSS-API is done,
             then the protection level (MTYP 2, wrapped): the level the client asks for when
             it is 0 (none, as curl and dante speak it), else 0 all the same; then the SOCKS5
             request and reply unwrapped, and the bytes relayed to the target unprotected.
             A principal not --allow'ed gets RFC 1961's abort message (1, 0xFF).
  close      closes the connection after the client's first context token.
  garbage    answers the first context token with 32 random bytes as the server's token.
  oversized  answers it with a token announced as 65535 bytes long, then closes.
  nomethod   answers the greeting with "no acceptable method" (0xFF).
  silent     reads and never answers.
  protect    authenticates, then answers the protection level with 1 (integrity), which a
             client that sends its request unwrapped cannot go on with.

Each connection's outcome is one line on stdout: "accepted PRINCIPAL connect HOST:PORT",
"refused PRINCIPAL", "closed PRINCIPAL HOST:PORT", "silent: the client closed the connection",
or "failed MODE: WHY". An "accepted" or
"refused" line is written before the client is answered, so a client that has its answer
finds the line.
Standard library only, but for Debian's python3-gssapi.
"""
import os
import select
import socket
import socketserver
import struct
import sys
import threading

import gssapi

allowed = set()
print_lock = threading.Lock()


def log(line):
    with print_lock:
        print(line, flush=True)


def receive(conn, n):
    data = b""
    while len(data) < n:
        piece = conn.recv(n - len(data))
        if not piece:
            raise EOFError(f"the client closed the connection after {len(data)} of {n} bytes")
        data += piece
    return data


def receive_message(conn, mtyp):
    version, kind = receive(conn, 2)
    if (version, kind) == (1, 0xFF):
        raise EOFError("the client aborted the GSS-API authentication")
    if version != 1 or kind != mtyp:
        raise ValueError(f"message version {version} type {kind}, not 1 {mtyp}")
    (length,) = struct.unpack("!H", receive(conn, 2))
    return receive(conn, length)


def send_message(conn, mtyp, token):
    conn.sendall(bytes([1, mtyp]) + struct.pack("!H", len(token)) + token)


def greet(conn):
    version, count = receive(conn, 2)
    methods = receive(conn, count)
    if version != 5:
        raise ValueError(f"SOCKS version {version}")
    return methods


def relay(client, target):
    ends = [client, target]
    while True:
        readable, _, _ = select.select(ends, [], [], 300)
        if not readable:
            return
        for end in readable:
            data = end.recv(65536)
            if not data:
                return
            (target if end is client else client).sendall(data)


def authenticate(conn, mode):
    """The RFC 1961 context exchange; returns the context and the client's principal."""
    context = gssapi.SecurityContext(usage="accept", creds=gssapi.Credentials(usage="accept"))
    while not context.complete:
        token = receive_message(conn, 1)
        output = context.step(token)
        if context.complete and str(context.initiator_name) not in allowed:
            raise Refused(str(context.initiator_name), bytes([1, 0xFF]))
        if output:
            send_message(conn, 1, output)
    return context, str(context.initiator_name)


class Refused(Exception):
    """A refusal: logged first, then `answer` is sent, so a client that has read the answer
    finds the line in the log."""

    def __init__(self, why, answer):
        super().__init__(why)
        self.answer = answer


def serve_socks_request(conn, principal):
    version, command, _, address_type = receive(conn, 4)
    if version != 5 or command != 1:
        conn.sendall(bytes([5, 7, 0, 1, 0, 0, 0, 0, 0, 0]))
        raise ValueError(f"request version {version} command {command}")
    if address_type == 1:
        host = socket.inet_ntop(socket.AF_INET, receive(conn, 4))
    elif address_type == 4:
        host = socket.inet_ntop(socket.AF_INET6, receive(conn, 16))
    elif address_type == 3:
        host = receive(conn, receive(conn, 1)[0]).decode("ascii", "replace")
    else:
        conn.sendall(bytes([5, 8, 0, 1, 0, 0, 0, 0, 0, 0]))
        raise ValueError(f"address type {address_type}")
    (port,) = struct.unpack("!H", receive(conn, 2))
    # Loopback targets only: this proxy is a test's.
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise Refused(f"{principal} asked for {host}:{port}, not a loopback target",
                      bytes([5, 2, 0, 1, 0, 0, 0, 0, 0, 0]))
    try:
        target = socket.create_connection((host, port), timeout=10)
    except OSError as error:
        conn.sendall(bytes([5, 5, 0, 1, 0, 0, 0, 0, 0, 0]))
        raise ConnectionError(f"{host}:{port}: {error}")
    target.settimeout(None)
    bound_host, bound_port = target.getsockname()[:2]
    log(f"accepted {principal} connect {host}:{port}")
    conn.sendall(bytes([5, 0, 0, 1]) + socket.inet_aton(bound_host) + struct.pack("!H", bound_port))
    try:
        relay(conn, target)
    finally:
        target.close()
        log(f"closed {principal} {host}:{port}")


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        conn, mode = self.request, self.server.mode
        conn.settimeout(30)
        try:
            methods = greet(conn)
            if mode == "nomethod":
                conn.sendall(bytes([5, 0xFF]))
                return
            if mode == "silent":
                conn.settimeout(120)
                while conn.recv(4096):
                    pass
                log("silent: the client closed the connection")
                return
            if 1 not in methods:
                raise Refused(f"the client offered methods {list(methods)}, not GSS-API", bytes([5, 0xFF]))
            conn.sendall(bytes([5, 1]))
            if mode in ("close", "garbage", "oversized"):
                receive_message(conn, 1)
                if mode == "garbage":
                    send_message(conn, 1, os.urandom(32))
                elif mode == "oversized":
                    conn.sendall(bytes([1, 1, 0xFF, 0xFF]) + os.urandom(1000))
                return
            context, principal = authenticate(conn, mode)
            asked = context.unwrap(receive_message(conn, 2)).message
            if len(asked) != 1:
                raise ValueError(f"a protection level of {len(asked)} bytes")
            level = 1 if mode == "protect" else 0
            send_message(conn, 2, context.wrap(bytes([level]), False).message)
            if mode == "protect":
                conn.recv(4096)
                log(f"failed protect: {principal} was answered level 1")
                return
            serve_socks_request(conn, principal)
        except Refused as refused:
            log(f"refused {refused}")
            try:
                conn.sendall(refused.answer)
            except OSError:
                pass
        except (EOFError, ValueError, ConnectionError, OSError, gssapi.exceptions.GSSError) as error:
            log(f"failed {mode}: {error}")


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    arguments = sys.argv[1:]
    servers = []
    while arguments:
        argument = arguments.pop(0)
        if argument == "--allow":
            allowed.add(arguments.pop(0))
            continue
        mode, _, port = argument.partition("=")
        server = Server(("127.0.0.1", int(port)), Handler)
        server.mode = mode
        servers.append(server)
    if not servers:
        sys.exit(__doc__)
    for server in servers[1:]:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    log(f"listening: {', '.join(f'{s.mode}={s.server_address[1]}' for s in servers)}; allowed: {sorted(allowed)}")
    servers[0].serve_forever()


if __name__ == "__main__":
    main()
