"""The CLI's JSON answers (devices, place across many nodes) are written by pydantic_core where its text is the
same as json's, so that a fleet of 8,000 NPUs prints fast; these check that the text never differs from json's."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from rbln_artifact_studio.cli.commands.fleet import json_text

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()  # non-ASCII, control characters, DEL, lone surrogates
)
DOCUMENTS = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4), max_leaves=20
)


@given(DOCUMENTS)
@example(5.960464477539063e-8)  # a bare number json spells with an exponent (found by this test)
@settings(max_examples=200, deadline=None)
def test_the_text_is_jsons_to_the_byte(data: Any) -> None:
    assert json_text(data) == json.dumps(data, indent=2)


def test_floats_json_writes_with_an_exponent_are_written_as_json_does() -> None:
    for value in (1e16, -2.5e-7, 1e-05, 5e-324, 1.7976931348623157e308):
        data = {"power": value, "points": [[1.0, value], value], "n": [1, value]}
        assert json_text(data) == json.dumps(data, indent=2)
    assert json_text({"host": "nœud-1", "x": "\x7f"}) == json.dumps({"host": "nœud-1", "x": "\x7f"}, indent=2)
