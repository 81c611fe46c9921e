"""SIGKILL the real CLI at every named fault step and at a few random times; every invariant must hold after each.

The deeper randomized run is tools/crash_loop.py (see the README); both use tests/crash/harness.py.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from harness import OPS, Lab, Trial, artifact_state

from rbln_artifact_studio.core.storage.fsutil import INCOMPLETE_MARKER

REPO = Path(__file__).resolve().parents[2]

# Every checkpoint each operation passes, in order (docs/crash-safety.md lists them). A new checkpoint in
# a write path must be added here, so that the kill test below covers it.
EXPECTED_STEPS = {
    "resize_in_place": [
        "resize.locked#1",
        "container.half_header_written#1",
        "resize.header_written.0#1",
        "container.half_header_written#2",
        "resize.header_written.1#1",
        "resize.config.tmp_written#1",
        "resize.config.renamed#1",
        "resize.done#1",
    ],
    "resize_shared": [  # copy-on-write first: the backup sharing the files by hard link is only read
        "resize.locked#1",
        "cow.copied.0#1",
        "cow.renamed.0#1",
        "cow.copied.1#1",
        "cow.renamed.1#1",
        "container.half_header_written#1",
        "resize.header_written.0#1",
        "container.half_header_written#2",
        "resize.header_written.1#1",
        "resize.config.tmp_written#1",
        "resize.config.renamed#1",
        "resize.done#1",
    ],
    "resize_copy": [
        "copy.locked#1",
        "staging.created#1",
        "copy.copied#1",
        "container.half_header_written#1",
        "resize.header_written.0#1",
        "container.half_header_written#2",
        "resize.header_written.1#1",
        "resize.config.tmp_written#1",
        "resize.config.renamed#1",
        "publish.before#1",
        "publish.marker_removed#1",
        "publish.renamed#1",
    ],
    "compile": [
        "staging.created#1",
        "compile.graph_written.prefill#1",
        "compile.graph_written.decoder_batch_2#1",
        "compile.config_written#1",
        "publish.before#1",
        "publish.marker_removed#1",
        "publish.renamed#1",
    ],
}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    """A tiny artifact (2 graphs, 4 blocks, resized to its floor of 3) without materialized weights."""
    return Lab(tmp_path_factory.mktemp("crash-lab")).build()


def _run_all(trials: list[tuple[str, str | None, float | None, bool]], lab: Lab) -> list[Trial]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda t: lab.trial(*t), trials))


def _report(results: list[Trial]) -> str:
    return "\n".join(f"{t.describe()}: {problem}" for t in results for problem in t.violations)


@pytest.mark.parametrize("op", OPS)
def test_each_operation_passes_its_documented_steps(lab: Lab, op: str) -> None:
    assert lab.refs[op].steps == EXPECTED_STEPS[op]
    doc = (REPO / "docs" / "crash-safety.md").read_text()
    for step in EXPECTED_STEPS[op]:
        name = step.split("#")[0]
        generic = re.sub(
            r"\.\d+$", ".<i>", re.sub(r"^compile\.graph_written\..*", "compile.graph_written.<graph>", name)
        )
        assert f"`{generic}`" in doc, f"docs/crash-safety.md does not list {generic}"


@pytest.mark.parametrize("op", OPS)
def test_kill_at_every_named_step(lab: Lab, op: str) -> None:
    results = _run_all([(op, step, None, False) for step in EXPECTED_STEPS[op]], lab)
    assert all(t.killed for t in results)
    assert _report(results) == ""


def test_random_kills_during_writes(tmp_path: Path) -> None:
    """A few kills at random instants of runs that move real bytes (16 MiB of materialized weights)."""
    lab = Lab(tmp_path / "lab", weights_mb=16).build()
    rng = random.Random(20240605)
    plan = [(op, None, *lab.random_delay(op, rng)) for op in OPS for _ in range(2)]
    results = _run_all(plan, lab)  # type: ignore[arg-type]
    assert _report(results) == ""


# ---- the checker itself must catch what it is meant to catch ------------------------------------------


def test_checker_flags_a_mixed_artifact(lab: Lab, tmp_path: Path) -> None:
    work = lab.prepare("resize_in_place")
    raw = json.loads((work / "art" / "rbln_config.json").read_text())
    raw["kvcache_num_blocks"] = lab.new  # the config commits a count no container holds
    (work / "art" / "rbln_config.json").write_text(json.dumps(raw, indent=2))
    problems = lab.check("resize_in_place", work, rerun=False)
    assert any("is invalid" in p for p in problems) and any(
        "reading the artifact's state raised" in p for p in problems
    )


def test_checker_flags_a_changed_payload_or_file(lab: Lab) -> None:
    from rbln_artifact_studio.core.operations.resize import resize_in_place

    work = lab.prepare("resize_in_place")
    resize_in_place(work / "art", lab.new)
    assert lab.check("resize_in_place", work, rerun=False) == []
    with open(work / "art" / "config.json", "a") as f:
        f.write(" ")
    assert any("neither the old nor the new" in p for p in lab.check("resize_in_place", work, rerun=False))


def test_checker_flags_a_changed_source_and_a_visible_partial(lab: Lab) -> None:
    work = lab.prepare("resize_copy")
    with open(work / "art" / "config.json", "a") as f:
        f.write(" ")
    shutil.copytree(work / "art", work / "out-half")
    problems = lab.check("resize_copy", work, rerun=False)
    assert "the source of the copy changed" in problems
    assert any("unexpected entry out-half" in p for p in problems)


def test_checker_flags_an_unmarked_incomplete_staging_folder(lab: Lab) -> None:
    work = lab.prepare("compile")
    staging = work / f".out.partial-{os.getpid()}-abcd"  # a live writer's: scans sweep only those of dead ones
    shutil.copytree(lab.template, staging)
    (staging / "prefill.rbln").unlink()
    assert any("neither marked incomplete nor complete" in p for p in lab.check("compile", work, rerun=False))
    (staging / INCOMPLETE_MARKER).write_text("{}")
    assert lab.check("compile", work, rerun=False) == []


def test_state_compares_meaning_not_generations(lab: Lab) -> None:
    a = lab.prepare("resize_in_place") / "art"
    b = lab.prepare("resize_in_place") / "art"
    from rbln_artifact_studio.core.operations.resize import resize_in_place

    resize_in_place(a, lab.new)
    for count in (lab.new, lab.old, lab.new):  # same meaning as a, other slot generations
        resize_in_place(b, count)
    assert artifact_state(a) == artifact_state(b) == lab.refs["resize_in_place"].result
