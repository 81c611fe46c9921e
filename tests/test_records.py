"""The core's records (typing.NamedTuples every command loads) keep their fields, equality by kind and pickling."""

from __future__ import annotations

import pickle
from pathlib import Path

from rbln_artifact_studio.core.errors import Fix
from rbln_artifact_studio.core.location import BucketPrefix, LocalFolder, ServerFolder, UrlFolder, parse_location
from rbln_artifact_studio.core.storage.json_style import JsonStyle


def test_the_core_records_keep_their_fields_and_defaults() -> None:
    assert Fix("a", (("x", 1),)).changes == (("x", 1),)
    assert JsonStyle() == (2, ": ", False, True, "\n")
    assert BucketPrefix("b", "p") == BucketPrefix("b", "p", "", "")
    here = parse_location("/tmp/x")
    assert isinstance(here, LocalFolder) and here.name == "x" and str(here.parent) == "/tmp"


def test_a_location_equals_only_one_of_its_own_kind() -> None:
    here = LocalFolder(Path("/tmp/x"))
    assert here == LocalFolder(here.path) and hash(here) == hash(LocalFolder(here.path))
    assert here != ServerFolder("h", "/tmp/x") and here != (here.path,)
    assert ServerFolder("h", "/a") != UrlFolder("h", "/a") and ServerFolder("h", "/a") != ("h", "/a")
    assert len({ServerFolder("h", "/a"), UrlFolder("h", "/a")}) == 2


def test_the_core_records_survive_pickling() -> None:
    for record in (parse_location("/tmp/x"), ServerFolder("h", "/a"), BucketPrefix("b", "p", "prof"), Fix("a", ())):
        assert pickle.loads(pickle.dumps(record)) == record
