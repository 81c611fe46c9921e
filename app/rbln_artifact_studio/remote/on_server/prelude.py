"""Put before every program sent to a server: when the connection ends (stdin closes), the program ends too.

The client keeps stdin open while it reads the answer and closes it when done or cancelled; a dropped
connection closes it as well, so nothing keeps running on the server for a client that is gone.
"""

import contextlib
import os
import signal
import subprocess  # noqa: F401 (named in a type comment)
import threading

CHILDREN = []  # type: list[subprocess.Popen[bytes]]  # processes a program started: they end with it


def _exit_when_client_leaves() -> None:
    try:
        while os.read(0, 65536):  # the raw descriptor: a buffered read would hold a lock at interpreter exit
            pass
    except Exception:
        pass
    for child in CHILDREN:
        with contextlib.suppress(OSError):
            os.kill(child.pid, signal.SIGKILL)
    os._exit(130)


threading.Thread(target=_exit_when_client_leaves, daemon=True).start()
