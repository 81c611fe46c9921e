"""Crash-test harness: run the real CLI, SIGKILL it at a named step or a random time, check every invariant.

Used by tests/crash/test_crash_kills.py (a deterministic set) and tools/crash_loop.py (the deeper run).
The invariants are those of docs/crash-safety.md:

- the artifact opens and is not invalid; rbln_config.json and every .rbln agree on one count, the old or
  the new, and each equals, byte for byte in the config and field for field in every current header,
  what an uninterrupted run leaves (payloads and other files untouched);
- a resize to a copy never changes a byte of its source (only a stale lock file may remain);
- a partial output is absent, or hidden with the `.partial-` tag (and marked incomplete unless it is
  already complete), and neither `find_artifacts` nor `scan` reports it;
- running the same command again succeeds and yields the new count, and leaves no temp or staging files.
  (A kill after the output was published leaves the finished output; running the copy again then says
  the output already holds it and exits 0; a compile again is refused: the output folder is not empty.)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "app"
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

# Hypothesis reports a failing example by importing libcst where it is installed, and libcst imports a
# deprecated mypy_extensions API; with filterwarnings = error that turns a clear failure into an
# INTERNALERROR. Importing it once here, quietly, lets a failing property be reported as one.
with contextlib.suppress(ImportError), warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import hypothesis.extra._patching  # noqa: F401

from rbln_artifact_studio.core.fleet.artifact import Status, open_artifact  # noqa: E402
from rbln_artifact_studio.core.fleet.scan import find_artifacts, summarize  # noqa: E402
from rbln_artifact_studio.core.model.rbln_config import CONFIG_NAME  # noqa: E402
from rbln_artifact_studio.core.simulator.container import read_container  # noqa: E402
from rbln_artifact_studio.core.storage.fsutil import (  # noqa: E402
    CLAIM_TAG,
    INCOMPLETE_MARKER,
    LOCK_NAME,
    PARTIAL_TAG,
    TMP_TAG,
)

# The crash tests' seam: a sitecustomize that installs a hook into app/core/storage/faults.py in every CLI started
# with cli_env, acting on these variables.
FAULT_HOOK = Path(__file__).with_name("fault_hook")
ENV_STEP, ENV_ACTION, ENV_TRACE = "RBLN_STUDIO_FAULT_STEP", "RBLN_STUDIO_FAULT_ACTION", "RBLN_STUDIO_FAULT_TRACE"

OPS = ("resize_in_place", "resize_shared", "resize_copy", "compile")
IN_PLACE = ("resize_in_place", "resize_shared")  # resize_shared: the artifact's files are hard-linked by art.bak
SHAPE = ["--batch_size", "2", "--max_seq_len", "8192", "--kvcache_partition_len", "4096"]
HIDDEN = 256


def tiny_model_config(weights_mb: float) -> dict[str, object]:
    """A 2-layer Llama config whose weights take about weights_mb MiB (the vocabulary sets the size)."""
    vocab = max(1000, int(weights_mb * (1 << 20) / (4 * HIDDEN)))
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "num_hidden_layers": 2,
        "hidden_size": HIDDEN,
        "intermediate_size": 512,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "vocab_size": vocab,
        "max_position_embeddings": 8192,
        "torch_dtype": "bfloat16",
    }


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The installed CLI, importing this checkout's code, with the fault hook installed (FAULT_HOOK); no fault
    variables unless given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RBLN_STUDIO_")}
    env["PYTHONPATH"] = os.pathsep.join([str(FAULT_HOOK), str(SRC), env.get("PYTHONPATH", "")])
    return {**env, **(extra or {})}


def cli_command() -> list[str]:
    exe = shutil.which("rbln-studio-cli") or str(Path(sys.executable).parent / "rbln-studio-cli")
    if not Path(exe).exists():
        raise RuntimeError("rbln-studio-cli is not installed; run python -m pip install -e '.[test]'")
    return [exe]


@contextlib.contextmanager
def stopped_at(step: str, *args: object, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[str]]:
    """The CLI run with args, stopped (SIGSTOP) at step; killed on the way out unless continued() ended it."""
    proc = subprocess.Popen(
        [*cli_command(), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env({**(env or {}), ENV_STEP: step, ENV_ACTION: "stop"}),
    )
    try:
        _, status = os.waitpid(proc.pid, os.WUNTRACED)
        assert os.WIFSTOPPED(status), f"the CLI did not reach {step}: {proc.communicate()}"
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def continued(proc: subprocess.Popen[str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """A CLI stopped_at a step, continued and run to its end."""
    os.kill(proc.pid, signal.SIGCONT)
    out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def tree_digest(root: Path, skip: frozenset[str] = frozenset()) -> dict[str, str]:
    """Relative path -> sha256 of every file below root (hidden ones too), except names in skip."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if name in skip:
                continue
            path = Path(dirpath) / name
            if path.is_symlink():
                out[str(path.relative_to(root))] = "link:" + os.readlink(path)
            else:
                out[str(path.relative_to(root))] = file_sha(path) if path.is_file() else "special"
        for name in dirnames:
            if (Path(dirpath) / name).is_symlink():
                out[str((Path(dirpath) / name).relative_to(root))] = "link:" + os.readlink(Path(dirpath) / name)
    return out


def artifact_state(path: Path) -> dict[str, object]:
    """What an artifact means: its config bytes, each graph's current header, and every other byte.

    Header slots are compared by content (generations differ between a fresh and a repeated resize);
    the preamble and payload of each container, and every other file, by hash.
    """
    config = (path / CONFIG_NAME).read_bytes()
    count = json.loads(config)["kvcache_num_blocks"]
    headers, bodies, others = {}, {}, {}
    for entry in sorted(os.listdir(path)):
        file = path / entry
        if entry.endswith(".rbln"):
            info = read_container(file)
            headers[entry] = info.current(count).header.model_dump()
            with open(file, "rb") as f:
                preamble = f.read(4096)
                f.seek(info.payload_offset)
                bodies[entry] = sha(preamble + f.read())
        elif entry != CONFIG_NAME and not entry.startswith("."):
            others[entry] = file_sha(file)
    return {"count": count, "config": sha(config), "headers": headers, "bodies": bodies, "others": others}


@dataclass
class Reference:
    """What an uninterrupted run of one operation does: its steps, timing and result."""

    op: str
    steps: list[str]
    duration: float
    first_step_at: float
    result: dict[str, object]


@dataclass
class Trial:
    op: str
    step: str | None
    delay: float | None
    killed: bool
    last_step: str | None = None
    violations: list[str] = field(default_factory=list)

    def describe(self) -> str:
        how = f"step {self.step}" if self.step else f"{self.delay:.3f}s (after step {self.last_step})"
        return f"{self.op} killed at {how}" if self.killed else f"{self.op} (kill at {how} came after the end)"


class Lab:
    """A model folder, a compiled template artifact, and what each operation does to it uninterrupted."""

    def __init__(self, root: Path, weights_mb: float = 0.0) -> None:
        self.root = Path(root)
        self.weights_mb = weights_mb
        self.materialize = weights_mb > 0
        self.model = self.root / "model"
        self.template = self.root / "template"
        self.refs: dict[str, Reference] = {}
        self._serial = 0
        self._serial_lock = threading.Lock()

    # ---- set-up -------------------------------------------------------------------------------------

    def build(self) -> Lab:
        self.root.mkdir(parents=True, exist_ok=True)
        self.model.mkdir()
        (self.model / "config.json").write_text(json.dumps(tiny_model_config(self.weights_mb or 1)))
        out = self.run([*self.compile_args(self.template)])
        if out.returncode != 0:
            raise RuntimeError(f"compiling the template failed: {out.stderr}")
        self.template_digest = tree_digest(self.template)
        self.model_digest = tree_digest(self.model)
        self.old_state = artifact_state(self.template)
        self.old = int(self.old_state["count"])  # type: ignore[call-overload]
        self.new = open_artifact(self.template).config.num_min_blocks
        assert self.new != self.old, "the template must be resizable to a different count"
        for op in OPS:
            self.refs[op] = self._reference(op)
        return self

    def compile_args(self, output: Path) -> list[str]:
        extra = ["--materialize-weights"] if self.materialize else []
        return ["compile", "--model-id", str(self.model), "-o", str(output), *SHAPE, *extra]

    def command(self, op: str, work: Path) -> list[str]:
        if op in IN_PLACE:
            return ["set-kvcache-num-blocks", str(work / "art"), str(self.new)]
        if op == "resize_copy":
            return ["set-kvcache-num-blocks", str(work / "art"), str(self.new), "--output-dir", str(work / "out")]
        return self.compile_args(work / "out")

    def prepare(self, op: str, name: str | None = None) -> Path:
        with self._serial_lock:
            self._serial += 1
            serial = self._serial
        work = self.root / (name or f"trial-{serial:05d}")
        work.mkdir()
        if op != "compile":
            shutil.copytree(self.template, work / "art", symlinks=True)
        if op == "resize_shared":  # a backup made with `cp -al`: every file shares its inode with art
            (work / "art.bak").mkdir()
            for name in os.listdir(work / "art"):
                os.link(work / "art" / name, work / "art.bak" / name)
        return work

    def run(
        self, args: list[str], env: dict[str, str] | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*cli_command(), *args], capture_output=True, text=True, env=cli_env(env), timeout=timeout
        )

    def _reference(self, op: str) -> Reference:
        runs = []
        for attempt in range(2):  # the second run's timing is the one without cold caches
            work = self.prepare(op, f"reference-{op}-{attempt}")
            trace = work.parent / f"{work.name}.trace"
            start = time.monotonic()
            out = self.run(self.command(op, work), {ENV_TRACE: str(trace)})
            end = time.monotonic()
            if out.returncode != 0:
                raise RuntimeError(f"reference {op} failed: {out.stderr}")
            lines = [line.split() for line in trace.read_text().splitlines()]
            steps = [name for name, _ in lines]
            first = float(lines[0][1]) - start if lines else 0.0
            result: dict[str, object] = (
                artifact_state(work / "art") if op in IN_PLACE else dict(tree_digest(work / "out"))
            )
            runs.append(Reference(op, steps, end - start, first, result))
            trace.unlink()
            if attempt == 0:
                shutil.rmtree(work)
        first_run, second = runs
        assert first_run.steps == second.steps and first_run.result == second.result, f"{op} is not deterministic"
        self.reference_dirs = getattr(self, "reference_dirs", {})
        self.reference_dirs[op] = self.root / f"reference-{op}-1"
        return second

    # ---- one trial ----------------------------------------------------------------------------------

    def random_delay(self, op: str, rng: random.Random) -> tuple[float, bool]:
        """A kill time: mostly inside the write phase (anchored at the first checkpoint), sometimes anywhere."""
        ref = self.refs[op]
        if rng.random() < 0.8:
            return rng.uniform(0.0, 1.2 * (ref.duration - ref.first_step_at)), True
        return rng.uniform(0.0, ref.duration), False

    def trial(
        self, op: str, step: str | None = None, delay: float | None = None, anchored: bool = False, keep: bool = False
    ) -> Trial:
        """Run op and SIGKILL it: at step (by the fault hook), or delay seconds after its start, or delay
        seconds after its first checkpoint when anchored (it stops itself there until it is continued).
        Then check every invariant, run the command again and check its result."""
        work = self.prepare(op)
        trace = work.parent / f"{work.name}.trace"
        env = {ENV_TRACE: str(trace)}
        if step:
            env[ENV_STEP] = step
        elif anchored:
            env.update({ENV_STEP: self.refs[op].steps[0], ENV_ACTION: "stop"})
        proc = subprocess.Popen(
            [*cli_command(), *self.command(op, work)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(env),
        )
        if delay is not None:
            if anchored:
                _, status = os.waitpid(proc.pid, os.WUNTRACED)
                if os.WIFSTOPPED(status):
                    os.kill(proc.pid, signal.SIGCONT)
                else:
                    proc.returncode = os.waitstatus_to_exitcode(status)
            if proc.returncode is None:
                try:
                    proc.wait(timeout=delay)
                except subprocess.TimeoutExpired:
                    proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=120)
        killed = proc.returncode == -signal.SIGKILL
        steps = trace.read_text().split() if trace.exists() else []
        trace.unlink(missing_ok=True)
        trial = Trial(op, step, delay, killed, steps[-2] if steps else None)
        v = trial.violations
        if step and not killed:
            v.append(f"the process was not killed at step {step} (exit {proc.returncode}): {err.strip()[-300:]}")
        if not killed and proc.returncode != 0:
            v.append(f"the command failed without a kill (exit {proc.returncode}): {err.strip()[-300:]}")
        if "Traceback" in err:
            v.append(f"traceback on stderr: {err[-500:]}")
        try:
            v += self.check(op, work, rerun=True)
        except Exception as exc:  # a crashing check is itself a finding
            v.append(f"checking raised {type(exc).__name__}: {exc}")
        if not keep and not v:
            shutil.rmtree(work, ignore_errors=True)
        return trial

    # ---- invariants ---------------------------------------------------------------------------------

    def check(self, op: str, work: Path, rerun: bool) -> list[str]:
        if op in IN_PLACE:
            return self._check_in_place(work, rerun, op)
        return self._check_new_folder(op, work, rerun)

    def _check_opens(self, path: Path, allowed: tuple[int, ...]) -> list[str]:
        v = []
        try:
            art = open_artifact(path)
        except Exception as exc:
            return [f"{path.name} does not open: {type(exc).__name__}: {exc}"]
        if art.status is Status.INVALID:
            v.append(f"{path.name} is invalid: {[p.message for p in art.problems]}")
        count = art.config.kvcache_num_blocks
        if count not in allowed:
            v.append(f"{path.name} records {count} blocks, expected one of {allowed}")
        slots = {g.name: g.slot.header.kvcache_num_blocks if g.slot else None for g in art.graph_files}
        if any(n != count for n in slots.values()):
            v.append(f"{path.name}: config says {count} but the current slots hold {slots}")
        summary = summarize(path)
        if summary.status is Status.INVALID or summary.kvcache_num_blocks != count:
            v.append(f"scan summary of {path.name} disagrees: {summary.status} {summary.kvcache_num_blocks}")
        return v

    def _check_in_place(self, work: Path, rerun: bool, op: str = "resize_in_place") -> list[str]:
        art = work / "art"
        new_state = self.refs["resize_in_place"].result
        v = self._check_opens(art, (self.old, self.new))
        backup = work / "art.bak"
        if op == "resize_shared" and tree_digest(backup) != self.template_digest:
            v.append("the hard-linked backup changed: a write reached another path")
        try:
            state = artifact_state(art)
            if state not in (self.old_state, new_state):
                v.append(
                    f"the artifact is neither the old nor the new state: {_diff(state, self.old_state, new_state)}"
                )
        except Exception as exc:
            v.append(f"reading the artifact's state raised {type(exc).__name__}: {exc}")
        allowed_extra = {LOCK_NAME}
        for name in os.listdir(art):
            if name not in self.template_digest and name not in allowed_extra and TMP_TAG not in name:
                v.append(f"unexpected file {name} in the artifact")
        found = sorted(p.name for p in find_artifacts(work))
        if found != (["art", "art.bak"] if op == "resize_shared" else ["art"]):
            v.append(f"find_artifacts reports {found}")
        if not rerun or v:
            return v
        out = self.run(self.command(op, work))
        if out.returncode != 0:
            return [*v, f"running the resize again failed: {out.stderr.strip()}"]
        if artifact_state(art) != new_state:
            v.append("after running again the artifact is not the new state")
        if op == "resize_shared" and tree_digest(backup) != self.template_digest:
            v.append("running again changed the hard-linked backup")
        left = sorted(set(os.listdir(art)) - set(self.template_digest))
        if left:
            v.append(f"running again left {left} in the artifact")
        return v

    def _check_new_folder(self, op: str, work: Path, rerun: bool) -> list[str]:
        v: list[str] = []
        ref = self.refs[op].result
        output = work / "out"
        if op == "resize_copy":
            source = work / "art"
            if tree_digest(source, frozenset({LOCK_NAME})) != self.template_digest:
                v.append("the source of the copy changed")
            v += self._check_opens(source, (self.old,))
        if tree_digest(self.model) != self.model_digest:
            v.append("the model folder changed")
        complete = output.exists()
        if complete:
            if tree_digest(output) != ref:
                v.append("the published output differs from an uninterrupted run's")
            v += self._check_opens(output, (self.new if op == "resize_copy" else self.old,))
        expected = {"art"} if op == "resize_copy" else set()
        if complete:
            expected.add("out")
        for name in sorted(set(os.listdir(work)) - expected):
            v += self._check_partial(work / name, ref)
        found = {p.name for p in find_artifacts(work)}
        if found != expected:
            v.append(f"find_artifacts reports {sorted(found)}, expected {sorted(expected)}")
        if not rerun or v:
            return v
        out = self.run(self.command(op, work))
        if complete and op == "resize_copy":
            # The output already holds exactly this result: running again says so and succeeds.
            if out.returncode != 0 or "already holds this copy" not in out.stdout:
                v.append(f"running again over a finished copy: exit {out.returncode} {out.stderr.strip()}")
        elif complete:
            if out.returncode != 1 or "exists and is not empty" not in out.stderr:
                v.append(f"running again over a finished output: exit {out.returncode} {out.stderr.strip()}")
        elif out.returncode != 0:
            v.append(f"running the {op} again failed: {out.stderr.strip()}")
        elif tree_digest(output) != ref:
            v.append("after running again the output differs from an uninterrupted run's")
        left = sorted(set(os.listdir(work)) - expected - {"out"})
        if left:
            v.append(f"running again left {left} beside the output")
        if op == "resize_copy" and tree_digest(work / "art", frozenset({LOCK_NAME})) != self.template_digest:
            v.append("running the copy again changed its source")
        return v

    def _check_partial(self, path: Path, ref: dict[str, object]) -> list[str]:
        name = path.name
        if name == f".out{CLAIM_TAG}" and path.is_file():
            return []  # the killed writer's claim: its flock died with it (the next run takes it and removes it)
        if not (name.startswith(".") and PARTIAL_TAG in name and path.is_dir() and not path.is_symlink()):
            return [f"unexpected entry {name} beside the output"]
        if (path / INCOMPLETE_MARKER).exists():
            return []
        if tree_digest(path) != ref:
            return [f"staging folder {name} is neither marked incomplete nor complete"]
        return []


def _diff(state: dict[str, object], old: dict[str, object], new: dict[str, object]) -> str:
    keys = [k for k in state if state[k] != old.get(k) and state[k] != new.get(k)]
    mixed = [k for k in state if state[k] != old.get(k)]
    return f"fields matching neither: {keys}; fields differing from the old state: {mixed}"
