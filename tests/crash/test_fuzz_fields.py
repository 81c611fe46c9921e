"""The budget and count fields: the parse function and every CLI field that takes one, fed hostile text.

Each ends in a BudgetError/StudioError (CLI: exit 1 and one `error:` line) or, for text argparse itself
rejects as not an integer, argparse's usage error (exit 2); never an internal error, and nothing written.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import shutil
from pathlib import Path

import pytest
from faultfs import FaultFS
from harness import SHAPE, artifact_state, tiny_model_config
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rbln_artifact_studio.cli import main as cli
from rbln_artifact_studio.core.errors import BudgetError
from rbln_artifact_studio.core.model.budget import MemoryBudget, parse_budget
from rbln_artifact_studio.core.model.config_fields import MAX_BLOCKS
from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile, write_artifact

# The list, and a few more of the same kind.
BAD = [
    "abc",
    "-1GB",
    "1e400",
    "nan",
    "inf",
    "150%",
    "0",
    "",
    "   ",
    "\t",
    "-1",
    "1" * 5000,
    "10 GB GB",
    "0%",
    "-inf%",
]
# For the CLI fields also a number that parses but is absurd as a count, a device number or a budget.
BAD_FIELDS = [*BAD, "9" * 29]


def _budget_ok(result: MemoryBudget) -> bool:
    if not result.is_set:
        return result.text == ""  # only None means unset
    if result.fraction is not None:
        return math.isfinite(result.fraction) and 0 < result.fraction <= 1
    return result.nbytes is not None and result.nbytes > 0


def _parse(value: object) -> None:
    try:
        result = parse_budget(value)
    except BudgetError as exc:
        message = exc.one_line()
        assert "\n" not in message and len(message) < 400, message
        return
    assert _budget_ok(result), result


@settings(max_examples=400, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.text(max_size=30),
        st.from_regex(r"\A[ +-]?[0-9.eE]{0,12}\s?(%|[kKmMgGtT]i?[bB]?|bytes)?\s?\Z"),
        st.integers(min_value=-(2**80), max_value=2**80),
        st.floats(allow_nan=True, allow_infinity=True),
        st.none(),
        st.booleans(),
        st.lists(st.integers(), max_size=2),
    )
)
def test_parse_budget_never_escapes(value: object) -> None:
    _parse(value)


@pytest.mark.parametrize("text", BAD, ids=lambda t: repr(t[:10]))
def test_listed_bad_budgets_are_refused_in_one_line(text: str) -> None:
    with pytest.raises(BudgetError) as caught:
        parse_budget(text)
    message = caught.value.one_line()
    assert "\n" not in message and len(message) < 300
    assert "0.8" in message or "(0, 1]" in message  # says how to write one


def test_integer_of_thousands_of_digits_and_two_units() -> None:
    """Found by probing the fields: 5,000 digits raised a plain ValueError (the CLI printed 'internal error'),
    and '10 GB GB' was read as 10 GiB. Both are now refused."""
    for text in ("1" * 5000, "1" * 5000 + "GB", "10 GB GB", "\u0661\u0660GB"):
        with pytest.raises(BudgetError, match="Cannot read memory_budget"):
            parse_budget(text)
    assert parse_budget("10 GB").nbytes == parse_budget("10GiB").nbytes == 10 << 30


# ---- the CLI's fields -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("fields")
    (root / "model").mkdir()
    (root / "model" / "config.json").write_text(json.dumps(tiny_model_config(1)))
    options = {k.lstrip("-"): int(v) for k, v in zip(SHAPE[::2], SHAPE[1::2], strict=True)}
    plan = plan_compile(CompileRequest(model_id=str(root / "model"), **options))  # type: ignore[arg-type]
    return root / "model", write_artifact(plan, root / "template")


def _cli(args: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            code = cli.main(args)
        except SystemExit as exc:  # argparse's usage errors
            code = int(exc.code or 0)
    return code, err.getvalue()


def _commands(value: str, art: Path, model: Path, out: Path) -> list[list[str]]:
    compile_base = ["compile", "--model-id", str(model), "-o", str(out), *SHAPE]
    commands = [
        ["set-memory-budget", str(art), value],
        ["set-memory-budget", str(art), value, "-o", str(out)],
        ["inspect", str(art), f"--memory-budget={value}"],
        ["set-memory-budget", str(art), "--", value],  # so that "-1GB" reaches the parser, not argparse
        ["set-kvcache-num-blocks", str(art), value],
        ["set-kvcache-num-blocks", str(art), value, "-o", str(out)],
        ["set-kvcache-num-blocks", str(art), "--", value],
        [*compile_base, f"--memory-budget={value}"],
        [*compile_base, f"--kvcache_num_blocks={value}"],
    ]
    for flag in ("--batch_size", "--max_seq_len", "--kvcache_partition_len"):
        i = compile_base.index(flag)
        commands.append([*compile_base[: i + 1], value, *compile_base[i + 2 :]])
    commands += [[*compile_base, f"--num_devices={value}"], [*compile_base, f"--prefill_chunk_size={value}"]]
    return commands


@pytest.mark.parametrize("value", BAD_FIELDS, ids=lambda t: repr(t[:10]))
def test_cli_fields_refuse_bad_values(lab: tuple[Path, Path], tmp_path: Path, value: str) -> None:
    model, template = lab
    art = Path(shutil.copytree(template, tmp_path / "art"))
    before = artifact_state(art)
    problems = []
    for args in _commands(value, art, model, tmp_path / "out"):
        if value == "0" and args[-1] == "--kvcache_num_blocks=0":
            continue  # 0 means "estimate automatically", as in optimum-rbln
        with FaultFS(tmp_path).active() as fs:
            code, err = _cli(args)
        shown = " ".join(a for a in args if not a.startswith("/"))[:120]
        if code == 1:
            if not err.startswith("error: ") or err.count("\n") != 1:
                problems.append(f"{shown}: {err!r}")
        elif code == 2:
            if "usage:" not in err or ": error: " not in err:
                problems.append(f"{shown}: exit 2 without a usage error: {err!r}")
        else:
            problems.append(f"{shown}: exit {code} {err[:200]!r}")
        if fs.points:
            problems.append(f"{shown}: wrote {fs.points[:2]}")
    assert artifact_state(art) == before
    assert problems == []


def test_zero_shape_fields_are_refused(lab: tuple[Path, Path], tmp_path: Path) -> None:
    """Found by test_cli_fields_refuse_bad_values: --max_seq_len 0 and --prefill_chunk_size 0 compiled
    silently with the defaults instead of being refused."""
    model, _ = lab
    for flag in ("--max_seq_len=0", "--prefill_chunk_size=0", "--kvcache_partition_len=0"):
        code, err = _cli(["compile", "--model-id", str(model), "-o", str(tmp_path / "out"), "--batch_size", "2", flag])
        assert code == 1 and "must be a positive integer, got 0" in err, err
    assert not (tmp_path / "out").exists()


def test_bad_count_is_refused_before_the_lock_is_taken(lab: tuple[Path, Path], tmp_path: Path) -> None:
    """Found by test_cli_fields_refuse_bad_values: a count below the floor (0, -1) was refused only after
    the lock file had been written into the artifact (and removed again)."""
    _, template = lab
    art = Path(shutil.copytree(template, tmp_path / "art"))
    with FaultFS(tmp_path).active() as fs:
        for args in (["set-kvcache-num-blocks", str(art), "0"], ["set-kvcache-num-blocks", str(art), "0", "-o", "x"]):
            code, err = _cli(args)
            assert code == 1 and "below the minimum" in err
    assert fs.points == []


def test_count_the_config_cannot_record_is_refused(lab: tuple[Path, Path], tmp_path: Path) -> None:
    """Found by test_cli_fields_refuse_bad_values: set-kvcache-num-blocks 10**29 (and compile with it)
    succeeded with two warnings and wrote an rbln_config.json that this tool then refused to open, so the
    artifact could not even be resized back; compile --num_devices 10**29 never returned (its tables
    grew until memory ran out). The largest recordable count is refused for what it is: it does not fit."""
    model, template = lab
    art = Path(shutil.copytree(template, tmp_path / "art"))
    before = artifact_state(art)
    for count in (10**29, MAX_BLOCKS + 1):
        for args in (
            ["set-kvcache-num-blocks", str(art), str(count)],
            ["set-kvcache-num-blocks", str(art), str(count), "-o", str(tmp_path / "copy")],
            ["compile", "--model-id", str(model), "-o", str(tmp_path / "new"), *SHAPE, f"--kvcache_num_blocks={count}"],
        ):
            code, err = _cli(args)
            assert code == 1 and "far too large" in err, err
    code, err = _cli(
        ["compile", "--model-id", str(model), "-o", str(tmp_path / "new"), *SHAPE, f"--num_devices={10**29}"]
    )
    assert code == 1 and "num_devices must be at most 65,536" in err
    assert artifact_state(art) == before and sorted(p.name for p in tmp_path.iterdir()) == ["art"]
    # The largest recordable count is not refused as unrecordable; its KV cache cannot fit any NPU, so it is
    # refused as impossible (issue 16), naming the largest count that fits, and nothing is written.
    code, err = _cli(["set-kvcache-num-blocks", str(art), str(MAX_BLOCKS)])
    assert code == 1 and "does not fit" in err and "far too large" not in err and "largest count that fits" in err
    assert artifact_state(art) == before
