"""core/records.py's NamedTuple behaves as typing.NamedTuple does for the records the core writes with it."""

from __future__ import annotations

import pickle

import pytest

from rbln_artifact_studio.core.errors import Fix
from rbln_artifact_studio.core.location import LocalFolder, ServerFolder, parse_location
from rbln_artifact_studio.core.storage.jsonfile import JsonStyle

TYPE_CHECKING = False
if TYPE_CHECKING:  # as the core's modules import it: type checkers see typing's
    from typing import NamedTuple
else:
    from rbln_artifact_studio.core.records import NamedTuple


class Point(NamedTuple):
    """A point."""

    x: int
    y: int = 0
    label: str = ""

    def moved(self, dx: int) -> Point:
        return self._replace(x=self.x + dx)


def test_fields_defaults_methods_and_docstring_are_those_written() -> None:
    p = Point(1)
    assert p == (1, 0, "") and (p.x, p.y, p.label) == (1, 0, "")
    assert Point._fields == ("x", "y", "label") and Point._field_defaults == {"y": 0, "label": ""}
    assert p.moved(2) == Point(3) and Point.__doc__ == "A point."
    assert repr(Point(1, 2, "a")) == "Point(x=1, y=2, label='a')"
    assert Point.__qualname__ == "Point" and Point.__module__ == __name__
    assert pickle.loads(pickle.dumps(Point(4, 5))) == Point(4, 5)
    with pytest.raises(AttributeError):
        p.x = 2  # type: ignore[misc]


def test_a_field_without_a_default_after_one_with_a_default_is_refused() -> None:
    with pytest.raises(TypeError, match="without a default"):

        class Bad(NamedTuple):
            a: int = 0
            b: int  # type: ignore[misc]


def test_the_core_records_built_on_it_keep_their_behaviour() -> None:
    assert Fix("a", (("x", 1),)).changes == (("x", 1),)
    assert JsonStyle() == (2, ": ", False, True, "\n")
    here = parse_location("/tmp/x")
    assert isinstance(here, LocalFolder) and here.name == "x" and str(here.parent) == "/tmp"
    assert here != ServerFolder("h", "/tmp/x") and here == LocalFolder(here.path)
    assert pickle.loads(pickle.dumps(here)) == here
