"""A fleet behind one real sshd: each alias its own port and its own fake NPU tool setup, plus serving processes
whose command lines name (or do not name) an artifact folder on the "server"."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from rbln_artifact_studio.core.fleet.artifact import open_artifact
from remote.sshd import missing, running_sshd

FAKES = Path(__file__).resolve().parents[1] / "fakes"
CR13 = 150_323_855_360
ATOM = 16_877_879_296
GIB = 2**30
ALIASES = ("npu-a", "npu-b", "npu-c", "npu-hang", "npu-junk")
SLEEPER = (
    "import time, sys\ntime.sleep(float(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1][0].isdigit() else 300)\n"
)


@dataclass
class Fleet:
    root: Path
    client_config: Path
    ports: dict[str, int]
    setups: Path  # FAKE_NPU_FLEET: <port>.json per server
    artifact: Path  # a Qwen3-8B for one RBLN-CR13, on the "server"
    need: int  # its node 0's DRAM, from its own breakdown
    serving: int  # pid of `vllm serve ARTIFACT`
    relative: int  # pid of `vllm --model NAME` started in the artifact's parent folder
    anonymous: int  # pid of a process whose command line names no artifact

    def setup(self, alias: str, setup: Mapping[str, object]) -> None:
        (self.setups / f"{self.ports[alias]}.json").write_text(json.dumps(setup))

    def hung_pid(self, alias: str) -> int | None:
        marker = self.setups / f"{self.ports[alias]}.hung"
        return int(marker.read_text()) if marker.exists() else None

    def env(self, control_dir: Path) -> dict[str, str]:
        return {"RBLN_STUDIO_SSH_CONFIG": str(self.client_config), "XDG_RUNTIME_DIR": str(control_dir)}


def default_setups(fleet: Fleet) -> None:
    """a: JSON, two CR13 with two processes; b: text ("Infomation"), one CR13 serving by a relative --model;
    c: text ("Information"), two ATOM+; hang: never answers; junk: prints half a JSON document."""
    n = fleet.need
    fleet.setup(
        "npu-a",
        {
            "form": "json",
            "devices": [
                {
                    "name": "RBLN-CR13",
                    "used": n + n // 4,
                    "total": CR13,
                    "contexts": [{"pid": fleet.serving, "process": "vllm", "memalloc": n + n // 4}],
                },
                {
                    "name": "RBLN-CR13",
                    "used": 5 * GIB,
                    "total": CR13,
                    "contexts": [{"pid": fleet.anonymous, "process": "python3", "memalloc": 5 * GIB}],
                },
            ],
        },
    )
    fleet.setup(
        "npu-b",
        {
            "form": "text",
            "spelling": "Infomation",
            "devices": [
                {
                    "name": "RBLN-CR13",
                    "used": n,
                    "total": CR13,
                    "contexts": [{"pid": fleet.relative, "process": "vllm", "memalloc": n}],
                }
            ],
        },
    )
    fleet.setup(
        "npu-c",
        {
            "form": "text",
            "spelling": "Information",
            "devices": [{"name": "RBLN-CA12", "used": 0, "total": ATOM}] * 2,
        },
    )
    fleet.setup("npu-hang", {"form": "hang"})
    fleet.setup("npu-junk", {"form": "garbage", "garbage": '{"devices": [{"npu": 0, "memory": {"used": "12'})


def _start(argv: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, start_new_session=True)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory, _artifact_templates: dict[str, Path]) -> Iterator[Fleet]:
    absent = missing()
    if absent is not None:
        pytest.skip(f"needs {absent} (tools/system_packages.sh installs it when root)")
    root = tmp_path_factory.mktemp("fleet")
    bin_dir, setups, srv = root / "bin", root / "setups", root / "srv"
    for folder in (bin_dir, setups, srv):
        folder.mkdir()
    shutil.copy(FAKES / "fake_npu_tool.py", bin_dir / "rbln-stat")
    (bin_dir / "rbln-stat").chmod(0o755)
    artifact = Path(shutil.copytree(_artifact_templates["cr13"], srv / "qwen3-8b-cr13"))
    opened = open_artifact(artifact)
    fit = opened.breakdown()
    assert fit is not None
    need = sum(u.used for u in fit.usages if u.node == 0)
    (root / "vllm").write_text(SLEEPER)
    procs = [
        _start([sys.executable, str(root / "vllm"), "serve", str(artifact), "--port", "8000"], root),
        _start([sys.executable, str(root / "vllm"), "--model", artifact.name], srv),
        _start([sys.executable, "-c", SLEEPER, "--port", "8001"], root),
    ]
    env = {"PATH": os.pathsep.join([str(bin_dir), "/usr/local/bin", "/usr/bin", "/bin"]), "FAKE_NPU_FLEET": str(setups)}
    try:
        with running_sshd(root / "sshd", ALIASES[0], env, ALIASES[1:]) as sshd:
            fleet = Fleet(root, sshd.client_config, sshd.ports, setups, artifact, need, *(p.pid for p in procs))
            default_setups(fleet)
            yield fleet
            for alias in ALIASES:
                pid = fleet.hung_pid(alias)
                if pid is not None:  # the hung fake, if the client's stop did not reach it
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
    finally:
        for p in procs:
            p.kill()
            p.wait()
