"""The budget and count fields: the parse function and every CLI field that takes one, fed hostile text.

Each ends in a BudgetError/StudioError (CLI: exit 1 and one `error:` line) or, for text argparse itself
rejects as not an integer, argparse's usage error (exit 2); never an internal error, and nothing written.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.budget import MemoryBudget, parse_budget
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
