"""Shared fixtures: simulator-compiled artifacts and a runner for the installed CLI."""

from __future__ import annotations

import filecmp
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# A shell starts a background job (`pytest … &`, a CI runner's) with SIGINT ignored, and every command a test starts
# would inherit that: the Ctrl-C tests would send a signal nobody hears. Ctrl-C as in a terminal, for us and them.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
# Scan caches, settings, logs and the demo workspace go to throwaway folders (core/app_dirs.py), never the user's own.
_THROWAWAY = tempfile.mkdtemp(prefix="rbln-studio-test-")
for _variable, _kind in (("CACHE", "cache"), ("CONFIG", "config"), ("DATA", "share"), ("LOG", "log")):
    os.environ.setdefault(f"RBLN_STUDIO_{_variable}_DIR", os.path.join(_THROWAWAY, _kind, "rbln-studio"))

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "app"
"""The source root: what the editable install puts on sys.path, and what CLIs started by tests get on PYTHONPATH."""
PACKAGE_DIR = SRC / "rbln_artifact_studio"
# This checkout's code, even where the venv's editable install points at another checkout (a worktree).
sys.path.insert(0, str(SRC))
# The crash tests' helpers (harness, faultfs) by the names they use among themselves, for the tests that share them.
sys.path.insert(1, str(REPO / "tests" / "crash"))

from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile, write_artifact  # noqa: E402

# The session's Prometheus servers, one set for every folder whose tests use them (see its docstring).
pytest_plugins = ["prometheus.servers"]

# DESIGN section 8: Qwen3-8B, max_seq_len 40,960, partition 8,192, batch 8.
QWEN3_8B = {"model_id": "Qwen/Qwen3-8B", "batch_size": 8, "max_seq_len": 40_960, "kvcache_partition_len": 8_192}


def compile_artifact(output: Path, **options: object) -> Path:
    """Compile with the built-in simulator (Qwen3-8B reference shape unless overridden)."""
    request = CompileRequest(**{**QWEN3_8B, **options})  # type: ignore[arg-type]
    return write_artifact(plan_compile(request), output)


TINY_MODEL = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "num_hidden_layers": 2,
    "hidden_size": 256,
    "intermediate_size": 512,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 1000,
    "max_position_embeddings": 8192,
    "torch_dtype": "bfloat16",
}


@pytest.fixture
def tiny_model(tmp_path: Path) -> Path:
    """A local model folder with a tiny config.json (weights of about 4 MiB): fast materialized payloads."""
    import json

    folder = tmp_path / "tiny-llama"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(TINY_MODEL))
    return folder


@pytest.fixture(scope="session")
def _artifact_templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("templates")
    return {
        "cr13": compile_artifact(root / "qwen3-8b-cr13", npu="RBLN-CR13", memory_budget=0.3),
        "ca25x4": compile_artifact(root / "qwen3-8b-ca25x4", npu="RBLN-CA25", num_devices=4, memory_budget=0.5),
    }


@pytest.fixture
def cr13_artifact(_artifact_templates: dict[str, Path], tmp_path: Path) -> Path:
    """A fresh copy of Qwen3-8B on one RBLN-CR13 at budget 0.3 (21 blocks)."""
    return Path(shutil.copytree(_artifact_templates["cr13"], tmp_path / "qwen3-8b-cr13"))


@pytest.fixture
def ca25_artifact(_artifact_templates: dict[str, Path], tmp_path: Path) -> Path:
    """A fresh copy of Qwen3-8B on four RBLN-CA25 at budget 0.5 (14 blocks)."""
    return Path(shutil.copytree(_artifact_templates["ca25x4"], tmp_path / "qwen3-8b-ca25x4"))


def cli_env() -> dict[str, str]:
    # The installed command, importing this checkout's code (a worktree may differ from the editable install).
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("RBLN_STUDIO_DEBUG", None)
    return env


def cli_command() -> list[str]:
    exe = shutil.which("rbln-studio-cli") or str(Path(sys.executable).parent / "rbln-studio-cli")
    if not Path(exe).exists():
        pytest.fail("rbln-studio-cli is not installed; run python -m pip install -e '.[test]'")
    return [exe]


SERVER_TRACEBACK = 'File "<rbln-studio>"'  # a line of a traceback of a program the studio ran on a server
PAUSE_HOOK = Path(__file__).parent / "gui" / "cli_pause"


def paused_cli(step: str, *args: object) -> subprocess.Popen[str]:
    """`rbln-studio-cli ARGS` in another process, stopped at the write path's step (core/storage/faults.py) until its
    stdin is closed; returned once it is there."""
    env = cli_env()
    env["PYTHONPATH"] = f"{PAUSE_HOOK}{os.pathsep}{env['PYTHONPATH']}"
    env["RBLN_STUDIO_PAUSE_STEP"] = step
    proc = subprocess.Popen(
        [*cli_command(), *map(str, args)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # blocks until the CLI is there (or ends: then the line is empty)
    assert line.strip() == f"paused at {step}", proc.stderr.read() if proc.stderr else ""
    return proc


@pytest.fixture
def run_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the installed rbln-studio-cli; returns the completed process (never raises on exit codes)."""

    def run(*args: object, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [*cli_command(), *map(str, args)],
            capture_output=True,
            text=True,
            env={**cli_env(), **(env or {})},
            timeout=timeout,
        )
        # Whatever a test asks: a server program's traceback never reaches a user (issue 42).
        assert SERVER_TRACEBACK not in done.stdout + done.stderr, done.stdout + done.stderr
        return done

    return run


@pytest.fixture
def log_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """The app's log folder, empty, for this test; the log set up by the test is shut down after it."""
    from rbln_artifact_studio.core import app_dirs, logs

    folder = tmp_path / "log"
    monkeypatch.setenv(app_dirs.LOG_ENV, str(folder))
    yield folder
    logs.stop()


PYTEST_OWN = "PYTEST_CURRENT_TEST"  # pytest sets it at every phase of every test: it always differs, and is pytest's


def restore_environment(saved: Mapping[str, str]) -> None:
    """Put back, one by one, the variables that differ from saved; never clear the environment and rebuild it.

    C's environment is not thread-safe: setenv() of a variable that is not there grows the `environ` array with
    realloc(), which may free the old one while another thread's getenv() walks it. Every Qt thread reads
    QT_NO_GLIB there as it starts (a QThreadPool's, after 30 s idle). Clearing and refilling the whole
    environment after each test (PYTEST_CURRENT_TEST always differs) did ~100 reallocs per test, and a pool
    thread starting meanwhile took the whole run down with a segfault in no Python thread. Unchanged, nothing
    is written; a variable a test added is removed (unsetenv frees nothing).
    """
    for name in os.environ.keys() - saved.keys() - {PYTEST_OWN}:
        del os.environ[name]
    for name, value in saved.items():
        if name != PYTEST_OWN and os.environ.get(name) != value:
            os.environ[name] = value


def same_files(a: Path, b: Path) -> bool:
    """The same file names below a and b, each file byte for byte (a copy or download made whole)."""
    names = sorted(str(p.relative_to(a)) for p in a.rglob("*"))
    return names == sorted(str(p.relative_to(b)) for p in b.rglob("*")) and all(
        filecmp.cmp(a / n, b / n, shallow=False) for n in names if (a / n).is_file()
    )


def threads_started_since(before: set[threading.Thread]) -> list[threading.Thread]:
    """Threads this process started since `before`, less the test servers' request threads: a server a fixture
    keeps for the session (the exporter a real Prometheus scrapes) answers in a thread of its own meanwhile."""
    return [t for t in threading.enumerate() if t not in before and "process_request_thread" not in t.name]


@pytest.fixture(autouse=True)
def _nothing_leaks_into_the_next_test() -> Iterator[None]:
    """Put back what a test changed in this process's shared state, so that no test depends on which ran before
    it (the suite passes in any order, pytest-randomly's included):
    - the environment: a variable a test left there changes every later CLI a test runs;
    - the servers' registry (and the ssh_config a window chose for it): a test that configures it for its sshd,
      or back to ssh's defaults, would otherwise decide how every later in-process call reaches a server;
    - the toolchain detection, and the optimum-rbln version it noted: a version found once (a test's fake
      toolchain) made later artifact checks compare against it;
    - the windows a test left shown: a dialog of a closed window stays visible until Qt deletes it on a later
      loop, and a next test that looks for "the visible dialog" of its kind found that one instead (seed 424242).
    """
    environ = dict(os.environ)
    yield
    restore_environment(environ)
    registry = sys.modules.get("rbln_artifact_studio.remote.registry")
    if registry is not None:
        registry.forget()
    preferences = sys.modules.get("rbln_artifact_studio.remote.preferences")  # a window's ssh_config, chosen early
    if preferences is not None:
        preferences.forget()
    toolchain = sys.modules.get("rbln_artifact_studio.backends.toolchain")
    if toolchain is not None:
        toolchain.clear_cache()
    widgets = sys.modules.get("PySide6.QtWidgets")
    if widgets is not None and widgets.QApplication.instance() is not None:
        for shown in widgets.QApplication.topLevelWidgets():
            if shown.isVisible():
                shown.hide()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Name the run's order again at its end, where a failure is read: the header that also names it is far above."""
    seed = getattr(config.option, "randomly_seed", None)
    if isinstance(seed, int):
        terminalreporter.write_line(f"This run's order: --randomly-seed={seed} (pass it to pytest to replay it)")
