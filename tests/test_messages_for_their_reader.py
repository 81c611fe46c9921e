"""Messages built for their reader (issue 43 item 6): core gives the problem and the remedy as data, the CLI names
the remedy's option by its flag, and every message that says nothing was changed says it one way."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from rbln_artifact_studio.cli.flags import FLAGS
from rbln_artifact_studio.cli.main import main
from rbln_artifact_studio.core.errors import NOTHING_CHANGED, TO_A_COPY, Remedy, ResizeError, StudioError
from rbln_artifact_studio.gui.app.remedies import CONTROLS

pytest_plugins = ["fakes.plugin"]

APP = Path(__file__).resolve().parents[1] / "app" / "rbln_artifact_studio"
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]+")
# A sentence that says the work left things as they were, in any of the wordings the code used.
LEFT_AS_IT_WAS = re.compile(
    r"[^.;:!?]*(?:\b[Nn]othing (?:was|has been) (?:changed|written|copied|moved|recorded|left|made|touched)"
    r"|\b(?:is|are|was|were) (?:left )?unchanged|\bleft (?:as it (?:is|was)|untouched)|\bis as it was)[^.;:!?]*[.;:!?]?"
)


def _messages(tree: ast.AST) -> list[tuple[int, str]]:
    """The string constants of a module (f-strings' literal parts included), but for docstrings: a string standing
    as a statement is never shown."""
    docs = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


def test_every_message_that_leaves_things_as_they_were_closes_with_one_sentence() -> None:
    assert NOTHING_CHANGED == "Nothing was changed."
    said = [
        f"{path.relative_to(APP)}:{line}: {match.group(0).strip()}"
        for path in sorted(APP.rglob("*.py"))
        for line, text in _messages(ast.parse(path.read_text(encoding="utf-8")))
        for match in LEFT_AS_IT_WAS.finditer(text)
    ]
    assert said, "the scan finds the closing sentence itself"
    assert [s for s in said if not s.endswith(f": {NOTHING_CHANGED}")] == []


def test_a_refusal_closes_with_the_sentence_after_its_remedy() -> None:
    refused = ResizeError("/srv/a is read-only", remedy=TO_A_COPY, unchanged=True)
    assert refused.one_line(FLAGS) == "/srv/a is read-only. Resize to a copy instead (--output-dir). " + NOTHING_CHANGED
    desktop = refused.said(CONTROLS)
    assert desktop.endswith(NOTHING_CHANGED) and not FLAG.search(desktop) and "To a copy" in desktop
    with_value = Remedy("Resize to a copy instead ({option}).", "output", "s3://models/NEW-PREFIX")
    assert with_value.render(FLAGS) == "Resize to a copy instead (--output-dir s3://models/NEW-PREFIX)."
    assert StudioError("plain").one_line(FLAGS) == "plain"  # no remedy, no closing: as it was


def test_the_cli_names_the_flag_the_desktop_does_not(
    argv_log: Path, real_artifact: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real artifact resized in place on a file system that cannot swap folders: refused before the tool runs.
    The CLI's line names --output-dir; the same error as the desktop shows it names the resize dialog's field."""
    from rbln_artifact_studio.backends.registry import resize_artifact
    from rbln_artifact_studio.core.location import LocalFolder
    from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
    from rbln_artifact_studio.core.storage import swap

    monkeypatch.setattr(swap, "can_exchange", lambda _parent: False)
    assert main(["set-kvcache-num-blocks", str(real_artifact), "12"]) == 1
    line = capsys.readouterr().err
    assert (
        "cannot swap folders atomically" in line and "(--output-dir)" in line and line.endswith(f"{NOTHING_CHANGED}\n")
    )
    with pytest.raises(StudioError) as refused:
        resize_artifact(ResizeRequest(LocalFolder(real_artifact), target=12))
    assert refused.value.remedy == TO_A_COPY
    assert not FLAG.search(refused.value.said(CONTROLS)) and not FLAG.search(refused.value.message)
