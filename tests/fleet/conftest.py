"""The real-fleet fixture: a fresh fleet per test (tests change it), and one shared for read-only tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from .layouts import Fleet, build_fleet


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    return build_fleet(tmp_path / "fleet-base")


@pytest.fixture(scope="module")
def fleet_ro(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    """For tests that only read (scans, inspect): built once per module."""
    return build_fleet(tmp_path_factory.mktemp("fleet-ro"))
