"""A squid NTLM authentication helper that really checks passwords.

Speaks squid's stateful NTLM helper protocol on stdin/stdout: "YR <type-1>" is answered
"TT <type-2>", "KK <type-3>" is answered "AF DOMAIN\\user" or "NA <reason>". The NTLM
acceptor is pyspnego's, verifying NTLMv2 responses against NTLM_USER_FILE (lines
DOMAIN:USER:PASSWORD).
"""
import base64
import sys

import spnego


def main():
    context = None
    for line in sys.stdin:
        command, _, argument = line.strip().partition(" ")
        try:
            token = base64.b64decode(argument) if argument else b""
            if command == "YR":
                context = spnego.server(protocol="ntlm")
                answer = "TT " + base64.b64encode(context.step(token)).decode()
            elif command == "KK" and context is not None:
                context.step(token)
                answer = "AF " + context.client_principal if context.complete else "NA incomplete handshake"
                context = None
            else:
                answer = "BH unexpected " + command
        except Exception as error:
            answer = "NA " + " ".join(str(error).split())
            context = None
        sys.stdout.write(answer + "\n")
        sys.stdout.flush()


main()
