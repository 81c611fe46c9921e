"""Shared benchmark helpers: build artifacts with the simulator, time ours and a baseline interleaved, report."""

from __future__ import annotations

import ctypes
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile, write_artifact  # noqa: E402

QWEN3_8B = {"model_id": "Qwen/Qwen3-8B", "batch_size": 8, "max_seq_len": 40_960, "kvcache_partition_len": 8_192}

Timed = Callable[[], object]


def compile_reference(output: Path, **options: object) -> Path:
    """Qwen3-8B on one RBLN-CR13 at budget 0.3 unless overridden (a Qwen3-8B-sized rbln_config.json)."""
    request = CompileRequest(**{**QWEN3_8B, "npu": "RBLN-CR13", "memory_budget": 0.3, **options})  # type: ignore[arg-type]
    return write_artifact(plan_compile(request), output)


def build_fleet(root: Path, count: int, per_folder: int = 100) -> None:
    """count artifacts under root/team-XX/: rbln_config.json copied (own inode), other files hard-linked."""
    template = compile_reference(root / ".template")
    for i in range(count):
        folder = root / f"team-{i // per_folder:03d}" / f"qwen3-8b-{i:05d}"
        folder.mkdir(parents=True)
        for item in template.iterdir():
            if item.name == "rbln_config.json":
                shutil.copyfile(item, folder / item.name)
            else:
                os.link(item, folder / item.name)
    shutil.rmtree(template)


# A Llama-shaped local model whose bf16 weights come to about 4 GiB (29 layers of 2,560 hidden).
FOUR_GIB_MODEL = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "num_hidden_layers": 29,
    "hidden_size": 2560,
    "intermediate_size": 6912,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 32000,
    "max_position_embeddings": 32768,
    "torch_dtype": "bfloat16",
}


def compile_payload_pair(root: Path) -> tuple[Path, Path]:
    """The same model compiled twice: with its ~4 GiB weights in prefill.rbln, and metadata only."""
    import json

    model = root / "llama-4gib-config"
    model.mkdir(parents=True)
    (model / "config.json").write_text(json.dumps(FOUR_GIB_MODEL))
    shape: dict[str, Any] = {
        "model_id": str(model),
        "npu": "RBLN-CA25",
        "batch_size": 4,
        "max_seq_len": 32768,
        "attn_impl": "flash_attn",
        "kvcache_partition_len": 16384,
    }
    heavy = write_artifact(plan_compile(CompileRequest(**shape, materialize_weights=True)), root / "with-weights")
    light = write_artifact(plan_compile(CompileRequest(**shape)), root / "metadata-only")
    return heavy, light


def free_bytes(path: Path) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def require_space(path: Path, needed: int) -> None:
    """Refuse to start rather than fill the disk (the copy rows write several 4 GiB files)."""
    if free_bytes(path) < needed:
        sys.exit(f"{path}: {free_bytes(path) / 2**30:.1f} GiB free, the benchmark needs {needed / 2**30:.1f} GiB")


@contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """A fresh folder under $TMPDIR (or --dir), removed afterwards whatever happens."""
    path = Path(tempfile.mkdtemp(prefix=f"rbln-bench-{prefix}-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def python() -> str:
    """This interpreter as it was started: a virtual environment's own python (its symlink must not be resolved,
    or the venv's packages vanish), never a pyenv shim (sys.executable is already the real binary there)."""
    return sys.executable


def cli() -> list[str]:
    """The installed console script beside the interpreter, run directly like the baseline's python."""
    exe = Path(sys.executable).with_name("rbln-studio-cli")
    if not exe.exists():
        sys.exit(f"{exe} is missing: python -m pip install -e .")
    return [str(exe)]


BYTECODE = Path(tempfile.gettempdir()) / f"rbln-studio-bench-bytecode-{os.getuid()}"


def env() -> dict[str, str]:
    """The environment of the measured commands: the installed package (`bash bootstrap.sh` installs this checkout
    in editable mode). For a before/after, install the other checkout into its own venv and run its script there.

    Every command runs with compiled bytecode, as an installed copy has it (pip compiles a wheel at install), kept
    in a scratch PYTHONPYCACHEPREFIX even where PYTHONDONTWRITEBYTECODE is set (as on the machine of
    docs/performance.md, where each start would otherwise compile our modules from source); the first, unrecorded
    round of each benchmark writes it."""
    return {**os.environ, "PYTHONDONTWRITEBYTECODE": "", "PYTHONPYCACHEPREFIX": str(BYTECODE)}


def write_bytecode() -> None:
    """Compile the package's modules into env()'s bytecode cache, for benchmarks whose every run is recorded."""
    package = Path(str(__import__("rbln_artifact_studio").__file__)).parent
    subprocess.run([python(), "-m", "compileall", "-q", str(package)], check=True, env=env(), stdout=subprocess.DEVNULL)


def run(argv: Sequence[str], extra_env: dict[str, str] | None = None) -> Timed:
    """A timed action: run a command to completion, output discarded, failing loudly."""

    def action() -> None:
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env={**env(), **(extra_env or {})})

    return action


def cpu_seconds() -> float:
    """User + system CPU time of this process and its finished children."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@dataclass
class Series:
    """Wall-clock and CPU seconds of one action over the interleaved rounds."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def interleave(
    actions: dict[str, Timed], runs: int, before_each: dict[str, Timed] | None = None, warmup: int = 1
) -> dict[str, Series]:
    """Time each action once per round, rounds in a row, so load on a shared machine hits all of them alike.

    The order within a round flips every round (whoever runs first may find a colder page cache).
    before_each[name] runs untimed before that action (e.g. to fill a cache or reset a file). Warm-up
    rounds (page cache, imports) are not recorded.
    """
    times = {name: Series() for name in actions}
    for i in range(warmup + runs):
        order = list(actions.items())
        for name, action in order if i % 2 else reversed(order):
            if before_each and name in before_each:
                before_each[name]()
            cpu, start = cpu_seconds(), time.perf_counter()
            action()
            elapsed, used = time.perf_counter() - start, cpu_seconds() - cpu
            if i >= warmup:
                times[name].wall.append(elapsed)
                times[name].cpu.append(used)
    return times


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    with open("/proc/cpuinfo") as f:
        models = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs ({models[0] if models else cpu}), Python {platform.python_version()}"


def _line(name: str, values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return f"  {name:9} median {statistics.median(ms):9.1f} ms  (min {min(ms):.1f}, max {max(ms):.1f})"


def report(label: str, ours: Series, baseline: Series, goal: float) -> float:
    """Both medians, the noise, and the wall-clock ratio of medians printed last (docs/performance.md quotes it).

    Noise: the spread (min-max) of each series and of the per-round ratios. The CPU-time ratio is printed
    too: on a shared machine it moves much less than wall-clock time, so it tells load from a real change.
    """
    ratio = statistics.median(ours.wall) / statistics.median(baseline.wall)
    cpu_ratio = statistics.median(ours.cpu) / max(statistics.median(baseline.cpu), 1e-9)
    pairs = sorted(o / b for o, b in zip(ours.wall, baseline.wall, strict=True))
    print(f"{label}:")
    print(_line("ours", ours.wall))
    print(_line("baseline", baseline.wall))
    print(f"  per-round wall ratios {pairs[0]:.2f} .. {pairs[-1]:.2f} over {len(pairs)} interleaved rounds")
    print(
        f"  CPU time: ours {statistics.median(ours.cpu) * 1000:.1f} ms, baseline "
        f"{statistics.median(baseline.cpu) * 1000:.1f} ms, ratio {cpu_ratio:.2f}"
    )
    verdict = "holds" if ratio <= goal else "MISSED"
    print(f"ratio {ratio:.2f} (goal <= {goal}: {verdict})")
    return ratio


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks")
    ]


def malloc_in_use_kb() -> float:
    """Bytes glibc's malloc has handed out and not had back (all arenas): grows with a native leak, not with
    memory the allocator keeps for reuse."""
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _MallInfo2
    info = libc.mallinfo2()
    return (info.uordblks + info.hblkhd) / 1024


def slope(points: list[tuple[int, float]]) -> float:
    """The least-squares slope of (cycle, value) points."""
    if len(points) < 2:
        return 0.0
    return statistics.linear_regression([x for x, _ in points], [y for _, y in points]).slope
