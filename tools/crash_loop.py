"""The deeper crash run: SIGKILL the real CLI hundreds of times during resizes and compiles, check every invariant.

Each trial copies a compiled template artifact, runs one operation (resize in place, resize to a copy,
compile) through the installed rbln-studio-cli, kills it at a named fault step or at a random time inside
its write phase, checks the invariants of docs/crash-safety.md (tests/crash/harness.py), runs the same
command again and checks its result. The weights are materialized so copies and compiles take long enough
to be interrupted mid-write.

    python tools/crash_loop.py --kills 200 [--weights-mb 64] [--seed 1] [--jobs 2] [--workdir DIR]

Exit status 0 when no invariant was violated, 1 otherwise.
"""

from __future__ import annotations

import argparse
import itertools
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "crash"))

from harness import OPS, Lab, Trial


def plan(lab: Lab, rng: random.Random, named_share: float) -> tuple[str, str | None, float | None, bool]:
    """The next trial: an operation, and either a named step or a random delay (anchored or not)."""
    op = rng.choice(OPS)
    if rng.random() < named_share:
        return op, rng.choice(lab.refs[op].steps), None, False
    return op, None, *lab.random_delay(op, rng)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=200, help="stop after this many processes were killed")
    parser.add_argument("--weights-mb", type=float, default=64, help="materialized weights of the test model")
    parser.add_argument("--seed", type=int, default=None, help="random seed (printed; default: from the clock)")
    parser.add_argument("--jobs", type=int, default=2, help="trials run at once")
    parser.add_argument("--named-share", type=float, default=0.25, help="share of trials killed at a named step")
    parser.add_argument("--workdir", type=Path, help="where to work (default: a temporary folder, removed)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (failed trials are always kept)")
    args = parser.parse_args(argv)

    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)
    root = Path(args.workdir or tempfile.mkdtemp(prefix="rbln-crash-loop-"))
    root.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    print(f"crash loop: seed {seed}, weights {args.weights_mb:g} MiB, work folder {root}", flush=True)
    lab = Lab(root / "lab", weights_mb=args.weights_mb).build()
    for op, ref in lab.refs.items():
        print(f"  {op}: {len(ref.steps)} steps, {ref.duration:.2f}s uninterrupted", flush=True)

    kills, finished, trials = 0, 0, 0
    violations: list[tuple[Trial, str]] = []
    landed: Counter[str] = Counter()
    pending: set[Future[Trial]] = set()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for _ in itertools.count():
            while len(pending) < args.jobs and kills + len(pending) < args.kills:
                op, step, delay, anchored = plan(lab, rng, args.named_share)
                pending.add(pool.submit(lab.trial, op, step, delay, anchored))
            if not pending:
                break
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                trial = future.result()
                trials += 1
                if trial.killed:
                    kills += 1
                    landed[f"{trial.op} after {trial.last_step or 'start'}"] += 1
                else:
                    finished += 1
                for problem in trial.violations:
                    violations.append((trial, problem))
                    print(f"VIOLATION in {trial.describe()}: {problem}", flush=True)
                if trials % 25 == 0:
                    print(f"  {trials} trials, {kills} kills, {len(violations)} violations", flush=True)

    elapsed = time.monotonic() - start
    print("where the kills landed (operation after its last checkpoint):")
    for where, n in sorted(landed.items()):
        print(f"  {n:4d}  {where}")
    print(
        f"crash loop result: kills={kills} trials={trials} (finished before the kill: {finished}) "
        f"invariant violations={len(violations)} seed={seed} weights={args.weights_mb:g}MiB in {elapsed:.0f}s"
    )
    if not violations and not args.keep and args.workdir is None:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
