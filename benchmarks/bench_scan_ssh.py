"""Row 8: `scan ssh://HOST/ROOT --json` over ssh to 127.0.0.1 against the local `scan ROOT --json --no-cache`.

The same 5,000-artifact tree, read through a throwaway sshd (tests/remote/sshd.py) or directly. The remote
side runs in the server's python3, started by sshd: its CPU time is not this process's child time, so only
the wall-clock ratio compares the two. A warm-up round opens the shared connection (ControlMaster), as an
app that is connected already would have it.

By default the server has only python3: the walk runs there and each artifact is checked here from what it sends.
--studio-on-server puts this checkout's rbln-studio-cli on the server's PATH, where the scan runs it instead
(the full check there, rows streamed back).
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, build_fleet, cli, interleave, machine, python, report, run, scratch

sys.path.insert(0, str(REPO / "tests"))

from remote.sshd import missing, running_sshd


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--python",
        default="python3",
        help="the server's Python (RBLN_STUDIO_REMOTE_PYTHON); default: python3 on its PATH",
    )
    parser.add_argument(
        "--studio-on-server", action="store_true", help="rbln-studio-cli on the server's PATH (the server's own scan)"
    )
    parser.add_argument(
        "--jobs", type=int, help="both scans in N processes (default: theirs, one per idle CPU by the load average)"
    )
    args = parser.parse_args()
    absent = missing()
    if absent is not None:
        print(f"skipped: needs {absent}")
        return 0
    print(machine())
    with scratch("scan-ssh") as root, tempfile.TemporaryDirectory(prefix="rs-") as sockets:
        fleet = root / "fleet"
        build_fleet(fleet, args.count)
        server_path = "/usr/local/bin:/usr/bin:/bin"
        if args.studio_on_server:
            server_path = f"{Path(python()).parent}:{server_path}"
        with running_sshd(root / "sshd", "bench-npu", {"PATH": server_path}) as sshd:
            ssh_env = {
                "RBLN_STUDIO_SSH_CONFIG": str(sshd.client_config),
                "XDG_RUNTIME_DIR": sockets,
                "RBLN_STUDIO_REMOTE_PYTHON": args.python,
            }
            jobs = [] if args.jobs is None else ["--jobs", str(args.jobs)]
            remote = run([*cli(), "scan", f"ssh://{sshd.alias}{fleet}", "--json", *jobs], ssh_env)
            local = run([*cli(), "scan", str(fleet), "--json", "--no-cache", *jobs])
            times = interleave({"ssh": remote, "local": local}, args.runs)
            # The fixed cost of any command on this server: a session on the shared connection, the login
            # shell and its startup files, the interpreter's start (what every round trip pays once).
            sock = f"ControlPath={sockets}/rbln-studio-ssh-{os.getuid()}/%C"
            ssh = ["ssh", "-F", str(sshd.client_config), "-o", sock, sshd.alias]
            start = time.perf_counter()
            run([*ssh, "true"])()
            empty = time.perf_counter() - start
            start = time.perf_counter()
            run([*ssh, shlex.join([args.python, "-c", "pass"])])()
            print(
                f"fixed cost per round trip: empty command {empty * 1000:.0f} ms, "
                f"{args.python} -c pass {(time.perf_counter() - start) * 1000:.0f} ms"
            )
            where = "rbln-studio-cli on the server" if args.studio_on_server else "bare python3 on the server"
            if args.jobs is not None:
                where += f", --jobs {args.jobs}"
            report(
                f"scan over ssh to 127.0.0.1 ({where}) vs local scan --no-cache, {args.count} artifacts (row 8)",
                times["ssh"],
                times["local"],
                1.5,
            )
            for control in Path(sockets).rglob("*"):
                if control.is_socket():
                    # Ended here, not left running: a shared connection outlives the script otherwise.
                    subprocess.run(
                        ["ssh", "-o", f"ControlPath={control}", "-O", "exit", "x"],
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                        timeout=30,
                        check=False,
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
