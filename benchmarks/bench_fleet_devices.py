"""`devices` and `place` across 8 servers whose NPU tool takes 1 s each, against the same command on one server.

The servers are aliases of one throwaway sshd on 127.0.0.1 (tests/remote/sshd.py), each on a port of its own, so
each has its own shared connection. The `rbln-stat` there is a shell script, as cheap to start as the driver's
binary: it sleeps --delay seconds, then prints what tests/fakes/fake_npu_tool.py renders for that server: two
RBLN-CR13 in rbln-stat -j's JSON, one held by a process serving a Qwen3-8B artifact whose command line names its
folder (so `devices` also looks the process up and opens the artifact there; --no-contexts leaves that out).
The servers' side runs on this machine too: on a shared machine their CPU time competes with the client's,
and each session starts with this account's login shell (bash reads ~/.bashrc for a command sshd runs: here
pyenv's init, a few tenths of a CPU second), which 8 fake servers pay on the same 2 CPUs where a real fleet
pays it on each server's own. --skip-login-scripts measures without it (sshd sets SHLVL=1: bash then counts
as nested and reads no ~/.bashrc); the default keeps it.
The goal: 8 servers take at most 1.5x the time of one (they are read at once). The worse ratio is printed last.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from _common import REPO, cli, compile_reference, interleave, machine, report, run, scratch

sys.path.insert(0, str(REPO / "tests"))

from fakes import fake_npu_tool
from remote.sshd import missing, running_sshd

CR13 = 150_323_855_360
SLEEPER = "import time\ntime.sleep(3600)\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--servers", type=int, default=8)
    parser.add_argument("--delay", type=float, default=1.0, help="seconds the fake NPU tool takes on each server")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--no-contexts", action="store_true", help="NPUs held by no process: no process look-up, no artifact opened"
    )
    parser.add_argument(
        "--skip-login-scripts",
        action="store_true",
        help="the servers' sessions read no ~/.bashrc (the cost of this machine's account, paid 8 times here)",
    )
    args = parser.parse_args()
    absent = missing()
    if absent is not None:
        print(f"skipped: needs {absent}")
        return 0
    print(machine())
    with scratch("fleet-devices") as root, tempfile.TemporaryDirectory(prefix="rs-") as sockets:
        bin_dir, setups = root / "bin", root / "setups"
        bin_dir.mkdir()
        setups.mkdir()
        tool = bin_dir / "rbln-stat"
        # SSH_CONNECTION's fourth field is the port the session came in on: which server this is.
        tool.write_text(f'#!/bin/sh\nsleep {args.delay:g}\nset -- $SSH_CONNECTION\nexec cat "$FAKE_NPU_FLEET/$4.out"\n')
        tool.chmod(0o755)
        artifact = compile_reference(root / "srv" / "qwen3-8b-cr13")
        (root / "vllm").write_text(SLEEPER)
        serving = subprocess.Popen([sys.executable, str(root / "vllm"), "serve", str(artifact)], cwd=root)
        aliases = [f"bench-npu-{i}" for i in range(args.servers)]
        env = {"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin", "FAKE_NPU_FLEET": str(setups)}
        if args.skip_login_scripts:
            env["SHLVL"] = "1"  # bash reads ~/.bashrc for sshd's commands only at the top level (SHLVL < 2)
        print(f"servers' login scripts: {'skipped' if args.skip_login_scripts else 'read, as sshd runs them'}")
        try:
            with running_sshd(root / "sshd", aliases[0], env, tuple(aliases[1:])) as sshd:
                for port in sshd.ports.values():
                    used = 40 * 2**30
                    context = {"pid": serving.pid, "process": "vllm", "memalloc": used}
                    devices = [
                        {
                            "name": "RBLN-CR13",
                            "used": used,
                            "total": CR13,
                            "contexts": [] if args.no_contexts else [context],
                        },
                        {"name": "RBLN-CR13", "used": 0, "total": CR13},
                    ]
                    (setups / f"{port}.out").write_text(fake_npu_tool._json({"devices": devices}) + "\n")
                ssh_env = {"RBLN_STUDIO_SSH_CONFIG": str(sshd.client_config), "XDG_RUNTIME_DIR": sockets}
                every = [f"ssh://{a}" for a in aliases]
                one = every[:1]
                actions = {
                    "devices-8": run([*cli(), "devices", *every, "--json"], ssh_env),
                    "devices-1": run([*cli(), "devices", *one, "--json"], ssh_env),
                    "place-8": run([*cli(), "place", str(artifact), "--on", *every, "--json"], ssh_env),
                    "place-1": run([*cli(), "place", str(artifact), "--on", *one, "--json"], ssh_env),
                }
                # The floor under both: plain ssh running the tool on each server at once, on the same shared
                # connections (what the machine's sshd and ssh cost when the servers are this machine).
                control = f"ControlPath={sockets}/rbln-studio-ssh-{os.getuid()}/%C"

                def raw(hosts: list[str]) -> Callable[[], None]:
                    def action() -> None:
                        ssh = ["ssh", "-F", str(sshd.client_config), "-o", control]
                        procs = [
                            subprocess.Popen([*ssh, h, "rbln-stat", "-j"], stdout=subprocess.DEVNULL) for h in hosts
                        ]
                        for p in procs:
                            p.wait()

                    return action

                actions["ssh-8"], actions["ssh-1"] = raw(aliases), raw(aliases[:1])
                times = interleave(actions, args.runs)
                n = args.servers
                label = f"{n} servers vs 1, the NPU tool taking {args.delay:g} s on each"
                devices_ratio = report(f"devices: {label}", times["devices-8"], times["devices-1"], 1.5)
                report(f"plain ssh running the tool (the floor): {label}", times["ssh-8"], times["ssh-1"], 1.5)
                place_ratio = report(f"place: {label}", times["place-8"], times["place-1"], 1.5)
                for sock in Path(sockets).rglob("*"):
                    if sock.is_socket():
                        subprocess.run(["ssh", "-o", f"ControlPath={sock}", "-O", "exit", "x"], capture_output=True)
        finally:
            serving.kill()
            serving.wait()
    worst = max(devices_ratio, place_ratio)
    print(f"ratio {worst:.2f} (the worse of devices and place; goal <= 1.5: {'holds' if worst <= 1.5 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
