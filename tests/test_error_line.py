"""An error and its hint read as two sentences on the CLI's one line, whatever the message's own words end with."""

from __future__ import annotations

from rbln_artifact_studio.core.errors import StudioError


def test_a_message_without_a_full_stop_gets_one_before_its_hint() -> None:
    unreachable = StudioError(
        "Cannot reach npu1: ssh: Could not resolve hostname npu1: Name or service not known",  # ssh's own words
        hint="Check that `ssh npu1` works in a terminal.",
    )
    assert unreachable.one_line() == (
        "Cannot reach npu1: ssh: Could not resolve hostname npu1: Name or service not known. "
        "Check that `ssh npu1` works in a terminal."
    )


def test_a_message_that_ends_a_sentence_is_left_as_it_is() -> None:
    assert StudioError("Nothing was changed.", hint="Try again.").one_line() == "Nothing was changed. Try again."
    assert StudioError("Nothing was changed.").one_line() == "Nothing was changed."
