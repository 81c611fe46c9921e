"""Row 8: `scan ssh://HOST/ROOT --json` over ssh to 127.0.0.1 against its transport's floor.

The floor is the same bytes the scan's full check reads (each artifact's configs whole, each graph's preamble and
used header slots) walked on the server by a bare python3 and streamed raw through the same shared SSH connection
to this machine, where they are read and dropped: what any scan over that connection pays before it checks a byte.
The local `scan ROOT --json --no-cache` of the same tree runs in the same rounds too, for reference (the row's old
baseline). The tree (1,000 artifacts by default) is read through a throwaway sshd (tests/remote/sshd.py). The remote
side runs in the server's python3, started by sshd: its CPU time is not this process's child time, so only the
wall-clock ratio compares the two. A warm-up round opens the shared connection (ControlMaster), as an app that is
connected already would have it.

By default the server has only python3: the walk runs there and each artifact is checked here from what it sends.
--studio-on-server puts this checkout's rbln-studio-cli on the server's PATH, where the scan runs it instead
(the full check there, rows streamed back).

The fleet is copies of one model (build_fleet), as a fleet of a few models copied to many folders is: the scan sends
and checks each distinct set of bytes once (remote/scan_rows.py). --distinct ends each artifact's rbln_config.json
in its own run of spaces (the same JSON, other bytes), so that nothing is shared and every artifact is sent and
checked; the floor reads the same bytes either way.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, build_fleet, cli, interleave, machine, python, report, run, scratch

from rbln_artifact_studio.core.portable.container import (
    MAGIC,
    PREAMBLE_SIZE,
    SLOT,
    declared_slot_size,
    slot_body_length,
    valid_slot_size,
)

sys.path.insert(0, str(REPO / "tests"))

from remote.sshd import missing, running_sshd

# The floor's walker, run by the server's python3: argv ROOT and a JSON {graph name: [[offset, length], ...]}. It
# writes every config whole and each graph's pieces raw to stdout, in large writes, and nothing else.
FLOOR_WALKER = """
import json, os, sys
root, pieces = sys.argv[1], json.loads(sys.argv[2])
out = os.fdopen(sys.stdout.fileno(), "wb", buffering=1 << 18)
for folder, dirs, files in os.walk(root):
    dirs.sort()
    if "rbln_config.json" not in files:
        continue
    for name in sorted(files):
        path = os.path.join(folder, name)
        if name.endswith(".json"):
            with open(path, "rb") as f:
                out.write(f.read())
        elif name in pieces:
            fd = os.open(path, os.O_RDONLY)
            try:
                for offset, length in pieces[name]:
                    out.write(os.pread(fd, length, offset))
            finally:
                os.close(fd)
out.flush()
"""


def graph_pieces(artifact: Path) -> dict[str, list[tuple[int, int]]]:
    """(offset, length) of what the scan sends of each graph of one artifact (remote/on_server/scan.py's
    head_pieces: the preamble, then each header slot's used bytes); every artifact of the fleet is a copy of it."""
    pieces: dict[str, list[tuple[int, int]]] = {}
    for graph in sorted(artifact.glob("*.rbln")):
        with graph.open("rb") as f:
            head = f.read(PREAMBLE_SIZE)
            assert head.startswith(MAGIC), graph
            slot_size = declared_slot_size(head)
            assert valid_slot_size(slot_size), graph
            found = [(0, len(head.rstrip(b"\0")))]
            for offset in (PREAMBLE_SIZE, PREAMBLE_SIZE + slot_size):
                f.seek(offset)
                found.append((offset, SLOT.size + min(slot_body_length(f.read(SLOT.size)), slot_size - SLOT.size)))
        pieces[graph.name] = found
    return pieces


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=1000)
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
    parser.add_argument(
        "--distinct", action="store_true", help="every rbln_config.json its own bytes (nothing shared between copies)"
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
        if args.distinct:
            for i, config in enumerate(sorted(fleet.glob("*/*/rbln_config.json"))):
                with config.open("ab") as f:
                    f.write(b" " * (i + 1))  # trailing whitespace: the same JSON, bytes no other copy has
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
            # The floor runs on the connection the studio's warm-up round opened (its ControlPath), as the scan does.
            sock = f"ControlPath={sockets}/rbln-studio-ssh-{os.getuid()}/%C"
            ssh = ["ssh", "-F", str(sshd.client_config), "-o", sock, sshd.alias]
            pieces = graph_pieces(next(fleet.glob("*/*")))
            walker = [args.python, "-c", FLOOR_WALKER, str(fleet), json.dumps(pieces)]
            floor = run([*ssh, shlex.join(walker)])
            remote()  # opens the shared connection before the floor's first round uses it
            times = interleave({"ssh": remote, "floor": floor, "local": local}, args.runs)
            # The fixed cost of any command on this server: a session on the shared connection, the login
            # shell and its startup files, the interpreter's start (what every round trip pays once).
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
            if args.distinct:
                where += ", every config distinct"
            if args.jobs is not None:
                where += f", --jobs {args.jobs}"
            report(
                f"for reference: scan over ssh ({where}) vs the local scan --no-cache, {args.count} artifacts",
                times["ssh"],
                times["local"],
                1.5,
            )
            report(
                f"scan over ssh to 127.0.0.1 ({where}) vs the same bytes walked there and streamed through the same "
                f"connection, {args.count} artifacts{'' if args.distinct else ' (row 8)'}",
                times["ssh"],
                times["floor"],
                1.3,
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
