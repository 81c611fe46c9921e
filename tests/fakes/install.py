"""Install the fakes the way a real toolchain is installed: a virtual environment with a console script.

A fake toolchain is a virtual environment (no pip, built in a fraction of a second) whose
`bin/optimum-rbln-cli` is a console script like the one pip writes: a shebang naming the
environment's Python, then `from fake_optimum_rbln.cli import main`. `.pth` files make the fake
packages importable in that Python only; the fake `rebel` is left out to build a broken install.
The fixtures that put it on PATH are in fakes/plugin.py.
"""

from __future__ import annotations

import subprocess
import venv
from dataclasses import dataclass
from pathlib import Path

from rbln_artifact_studio.backends import settings

FAKES = Path(__file__).resolve().parent
KNOBS = (
    "FAKE_OPTIMUM_DELAY",
    "FAKE_OPTIMUM_FAIL",
    "FAKE_OPTIMUM_HANG",
    "FAKE_OPTIMUM_IGNORE_TERM",
    "FAKE_OPTIMUM_PIDFILE",
    "FAKE_OPTIMUM_GATE",
    "FAKE_OPTIMUM_ARGV_LOG",
    "FAKE_OPTIMUM_VERSION",
    "FAKE_REBEL_HANG",
    "FAKE_REBEL_FAIL",
)
CONFIG_VARS = (
    settings.ENV_OPTIMUM_CLI,
    settings.ENV_TOOLCHAIN_PYTHON,
    settings.ENV_PROBE_TIMEOUT,
    settings.ENV_CHECK_TIMEOUT,
)

# The tiny model on one ATOM-Max, flash attention, block 1,024, batch 2: floor 9, full pool 16, and at a
# budget of 0.5 all 16 blocks fit.
TINY_CA25 = ("--npu", "RBLN-CA25", "--batch_size", "2", "--max_seq_len", "8192", "--kvcache_partition_len", "1024")

CONSOLE_SCRIPT = """#!{python}
# -*- coding: utf-8 -*-
import sys
from fake_optimum_rbln.cli import main
if __name__ == "__main__":
    sys.exit(main())
"""


@dataclass(frozen=True)
class FakeToolchain:
    root: Path
    python: Path
    cli: Path
    path_dir: Path  # holds only a link to the CLI: what a test puts on PATH


def build_toolchain(root: Path, *, with_rebel: bool = True) -> FakeToolchain:
    venv.EnvBuilder(with_pip=False, symlinks=True).create(root)
    site = next((root / "lib").glob("python*/site-packages"))
    (site / "fake_optimum_rbln.pth").write_text(str(FAKES / "optimum_site") + "\n")
    if with_rebel:
        (site / "fake_rebel.pth").write_text(str(FAKES / "rebel_site") + "\n")
    python = root / "bin" / "python"
    cli = root / "bin" / "optimum-rbln-cli"
    cli.write_text(CONSOLE_SCRIPT.format(python=python))
    cli.chmod(0o755)
    path_dir = root / "on-path"
    path_dir.mkdir()
    (path_dir / "optimum-rbln-cli").symlink_to(cli)
    return FakeToolchain(root, python, cli, path_dir)


def fake_compile(toolchain: FakeToolchain, model: Path, output: Path, *options: str) -> Path:
    """Compile with the fake optimum-rbln-cli directly (as a user would have), failing loudly if it fails."""
    argv = [str(toolchain.cli), "--model-id", str(model), "--output-dir", str(output), *options]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise AssertionError(f"the fake compile failed: {done.stderr}")
    return output
