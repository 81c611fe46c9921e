"""memory_budget parsing, resolution and messages (DESIGN section 4)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rbln_artifact_studio.core.errors import BudgetError, StudioError
from rbln_artifact_studio.core.model.budget import EXCLUSIVE_MESSAGE, UNSET, check_exclusive, parse_budget
from rbln_artifact_studio.core.model.npu import get_npu

CR13 = get_npu("RBLN-CR13")
CA25 = get_npu("RBLN-CA25")


@pytest.mark.parametrize(
    ("value", "npu", "expected"),
    [
        (None, CR13, 150_323_855_360),
        (0.3, CR13, int(150_323_855_360 * 0.3)),
        ("0.3", CR13, int(150_323_855_360 * 0.3)),
        ("80%", CA25, int(16_877_879_296 * 0.8)),
        (" 80 % ", CA25, int(16_877_879_296 * 0.8)),
        (1.0, CA25, 16_877_879_296),
        ("100%", CA25, 16_877_879_296),
        ("10GB", CA25, 10 * 2**30),
        ("512MB", CA25, 512 * 2**20),
        ("512mb", CA25, 512 * 2**20),
        ("10 GiB", CR13, 10 * 2**30),
        ("1TB", CR13, 2**40 if 2**40 <= 150_323_855_360 else None),
        (4096, CA25, 4096),
    ],
)
def test_forms_resolve_per_npu(value, npu, expected) -> None:
    if expected is None:
        with pytest.raises(BudgetError):
            parse_budget(value).bytes_per_npu(npu)
        return
    assert parse_budget(value).bytes_per_npu(npu) == expected


def test_per_chiplet_is_an_even_split() -> None:
    assert parse_budget(0.3).bytes_per_chiplet(CR13) == int(150_323_855_360 * 0.3) // 4
    assert parse_budget(0.3).bytes_per_chiplet(CA25) == int(16_877_879_296 * 0.3)


@pytest.mark.parametrize(
    ("value", "shown"),
    [(1.5, "1.5"), ("150%", "150%"), ("nan", "nan"), ("inf", "inf"), ("1e400", "1e400"), (0.0, "0.0"), ("-5%", "-5%")],
)
def test_fraction_out_of_range(value, shown) -> None:
    with pytest.raises(BudgetError) as err:
        parse_budget(value)
    assert str(err.value) == f"memory_budget fraction must be in (0, 1] (or (0%, 100%]), got {shown}."


def test_bytes_above_the_npu_are_rejected_not_clamped() -> None:
    with pytest.raises(BudgetError) as err:
        parse_budget("1TB").bytes_per_npu(CR13)
    assert str(err.value) == (
        "memory_budget (1099511627776 bytes) exceeds the target NPU's available DRAM (150323855360 bytes)."
    )
    with pytest.raises(BudgetError) as err:
        parse_budget("100GB").bytes_per_npu(CA25)
    assert str(err.value) == (
        "memory_budget (107374182400 bytes) exceeds the target NPU's available DRAM (16877879296 bytes)."
    )


def test_mutual_exclusion_message() -> None:
    with pytest.raises(BudgetError) as err:
        check_exclusive(parse_budget(0.5), 16)
    assert str(err.value) == EXCLUSIVE_MESSAGE
    assert EXCLUSIVE_MESSAGE.startswith("`memory_budget` and an explicit `kvcache_num_blocks` are mutually exclusive.")
    check_exclusive(UNSET, 16)
    check_exclusive(parse_budget(0.5), 0)  # 0 means unset: estimation runs


@pytest.mark.parametrize("value", ["abc", "", "   ", "-1GB", "0", 0, -1, True, [1], "1.2.3GB", "GB"])
def test_bad_input_is_a_budget_error_that_says_what_to_write(value) -> None:
    with pytest.raises(BudgetError) as err:
        parse_budget(value)
    assert "0.8" in str(err.value) or "fraction" in str(err.value)


def test_int_one_warns_that_it_is_one_byte() -> None:
    warnings = parse_budget(1).warnings()
    assert len(warnings) == 1 and "1 byte" in warnings[0] and "1.0" in warnings[0]
    assert "80%" in parse_budget("80").warnings()[0]
    assert parse_budget(1.0).warnings() == []
    assert parse_budget("10GB").warnings() == []


@given(st.one_of(st.text(max_size=20), st.integers(), st.floats(allow_nan=True), st.none(), st.booleans()))
def test_parsing_raises_only_budget_errors(value: object) -> None:
    try:
        budget = parse_budget(value)
    except StudioError:
        return
    for npu in (CR13, CA25):
        try:
            resolved = budget.bytes_per_npu(npu)
        except BudgetError:
            continue
        assert 0 <= resolved <= npu.available_per_npu


def test_absurd_byte_counts_still_describe_themselves() -> None:
    budget = parse_budget(10**400)
    assert "2^100" in budget.describe()
    with pytest.raises(BudgetError, match="exceeds the target NPU"):
        budget.bytes_per_npu(CA25)
