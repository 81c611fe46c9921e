"""The programs sent to servers parse in the oldest Python the studio promises to run them in (server.MIN_PYTHON)."""

from __future__ import annotations

import ast

import pytest

from rbln_artifact_studio.remote import server


@pytest.mark.parametrize("program", sorted(p.name for p in server.PROGRAMS.glob("*.py") if p.name != "__init__.py"))
def test_a_server_program_parses_in_the_oldest_python_promised(program: str) -> None:
    source = (server.PROGRAMS / program).read_text()
    ast.parse(source, filename=program, feature_version=server.MIN_PYTHON)  # no walrus, no newer syntax
