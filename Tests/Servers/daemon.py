"""Starts a server detached: in a session of its own, with no descriptor of the caller's but
its log, and no blocked signals (test runners' threads block some, and children inherit
the mask). Prints the server's pid.

    daemon.py LOG COMMAND [ARGUMENT...]

A caller that waits for its child's descriptors to close (as Foundation's Process does)
therefore never waits for the server too.
"""
import signal
import subprocess
import sys

log = open(sys.argv[1], "ab")
server = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=log, stderr=log, close_fds=True,
                          start_new_session=True, preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_SETMASK, []))
print(server.pid)
