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
from harness import SHAPE, tiny_model_config
from hypothesis import given, settings
from hypothesis import strategies as st

from app import cli
from app.core.budget import MemoryBudget, parse_budget
from app.core.compiler import CompileRequest, plan_compile, write_artifact
from app.core.errors import BudgetError

# The list, and a few more of the same kind.
BAD = ["abc", "-1GB", "1e400", "nan", "inf", "150%", "0", "", "   ", "\t", "-1", "1" * 5000, "10 GB GB", "0%", "-inf%"]


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


@settings(max_examples=400, derandomize=True, deadline=None)
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
