"""Bad input in the compile wizard: whatever is typed, the page shows the core's verdict and never raises or warns.

Hypothesis drives the budget, count and shape fields of one open wizard. Each example must leave no exception
(a slot that raised would open the excepthook's dialog for a user), no error dialog and no Qt warning (those fail
the test through qt_log_level_fail), and the page must agree with rbln_artifact_studio.core: its error inline and Next disabled,
or its result and Next enabled.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QRadioButton, QSpinBox, QWizard
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.errors import BudgetError, StudioError
from rbln_artifact_studio.core.estimation.estimator import largest_fitting
from rbln_artifact_studio.core.model.budget import parse_budget
from rbln_artifact_studio.core.model.npu import get_npu
from rbln_artifact_studio.core.simulator.compile_preview import preview_compile
from rbln_artifact_studio.core.simulator.compiler import plan_compile, resolve_shape
from rbln_artifact_studio.gui.app.tones import Tone, message_html, tone
from rbln_artifact_studio.gui.dialogs.compile_wizard import CompileWizard
from rbln_artifact_studio.gui.widgets.number_field import NumberField
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import click_next
from .fuzzing import (
    COUNT_TEXTS,
    FUZZ,
    NASTY,
    budget_texts,
    examples,
    no_error_dialog,
    type_count,
    type_into_spin,
    typed_counts,
)
from .widgets import child, present


@pytest.fixture
def wizard(qtbot: QtBot, window: MainWindow) -> CompileWizard:
    """The wizard on its shape page: Qwen3-8B (bundled preset) on one RBLN-CR13."""
    wizard = window.dialogs.open_compile_wizard()
    qtbot.waitUntil(lambda: wizard.button(QWizard.WizardButton.NextButton).isEnabled())
    click_next(qtbot, wizard)
    wizard.target_page.set_npu("RBLN-CR13")
    click_next(qtbot, wizard)
    return wizard


def _to_sizing(qtbot: QtBot, wizard: CompileWizard) -> None:
    wizard.shape_page.batch_spin.setValue(8)
    wizard.shape_page.partition_spin.setValue(8192)
    click_next(qtbot, wizard)


def _check_sizing_page(wizard: CompileWizard) -> None:
    """The page shows exactly the core's preview: its error and no Next, or its block count and Next."""
    page = wizard.sizing_page
    request = wizard.request()
    assert request is not None
    expected = preview_compile(request, wizard.model)  # type: ignore[arg-type]
    text = page.preview_label.text()
    next_enabled = wizard.button(QWizard.WizardButton.NextButton).isEnabled()
    if expected.error is not None:
        assert f"✖ {message_html(expected.error)}" in text
        assert not next_enabled
    else:
        assert expected.plan is not None and f"kvcache_num_blocks {expected.plan.num_blocks}</b>" in text
        assert next_enabled


def test_budget_field_shows_the_cores_error_for_any_text(qtbot: QtBot, wizard: CompileWizard) -> None:
    _to_sizing(qtbot, wizard)
    edit = child(wizard, QLineEdit, "wizardBudgetEdit")
    width = wizard.width()

    @FUZZ
    @given(text=budget_texts)
    @examples(NASTY)
    def typed(text: str) -> None:
        with qtbot.captureExceptions() as raised:
            edit.setText(text)
        assert not raised, raised
        no_error_dialog()
        _check_sizing_page(wizard)
        try:
            parse_budget(text.strip() or None)
        except BudgetError as exc:  # what the core says about the text itself is on the page, Next is off
            assert message_html(exc.one_line()) in wizard.sizing_page.preview_label.text()
            assert not wizard.button(QWizard.WizardButton.NextButton).isEnabled()
        assert wizard.width() == width  # a long message wraps; it never widens the wizard

    typed()


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("abc", "Cannot read memory_budget 'abc'."),
        ("-1GB", "memory_budget must be positive, got -1GB."),
        ("1e400", "memory_budget fraction must be in (0, 1] (or (0%, 100%]), got 1e400."),
        ("nan", "memory_budget fraction must be in (0, 1] (or (0%, 100%]), got nan."),
        ("inf", "memory_budget fraction must be in (0, 1] (or (0%, 100%]), got inf."),
        ("150%", "memory_budget fraction must be in (0, 1] (or (0%, 100%]), got 150%."),
        ("0", "memory_budget must be a positive number of bytes, got 0."),
        ("1", "the weights alone, 15.27 GiB (16,391,340,032 B) per NPU, exceed the memory_budget of 1 byte"),
        ("", None),
        ("   ", None),
    ],
)
def test_budget_values_from_the_issue_typed_key_by_key(
    qtbot: QtBot, wizard: CompileWizard, typed: str, expected: str | None
) -> None:
    _to_sizing(qtbot, wizard)
    edit = child(wizard, QLineEdit, "wizardBudgetEdit")
    edit.clear()
    with qtbot.captureExceptions() as raised:
        qtbot.keyClicks(edit, typed)
    assert not raised
    text = child(wizard, QLabel, "wizardPreviewLabel").text()
    next_enabled = wizard.button(QWizard.WizardButton.NextButton).isEnabled()
    if expected is None:  # empty or blank: unset, the whole NPU
        assert "kvcache_num_blocks 40</b>" in text and next_enabled
    else:
        assert message_html(expected) in text and not next_enabled
    if typed == "1":
        assert "memory_budget=1 is read as 1 byte, not 100% of the NPU" in text
    no_error_dialog()


def test_block_count_field_accepts_only_what_the_core_accepts(qtbot: QtBot, wizard: CompileWizard) -> None:
    _to_sizing(qtbot, wizard)
    qtbot.mouseClick(child(wizard, QRadioButton, "wizardExplicitRadio"), Qt.MouseButton.LeftButton)
    spin = child(wizard, NumberField, "wizardBlocksSpin")
    unsized = replace(present(wizard.request()), kvcache_num_blocks=None, memory_budget=None)
    layout, npu = plan_compile(unsized).layout, get_npu(unsized.npu)
    room = npu.available_per_chiplet
    largest = largest_fitting(lambda n: layout.fits(n, room), 1, 10**7, otherwise=0)

    @FUZZ
    @given(text=typed_counts)
    @examples(COUNT_TEXTS)
    def typed(text: str) -> None:
        type_count(qtbot, spin, text)
        shown = spin.typed_value()  # the number the field shows (None: not a number in range)
        next_enabled = wizard.button(QWizard.WizardButton.NextButton).isEnabled()
        if not shown:  # empty, not a number or 0: an error, never the last good count
            assert "✖" in wizard.sizing_page.preview_label.text() and not next_enabled
            return
        assert wizard.request().kvcache_num_blocks == shown  # type: ignore[union-attr]
        _check_sizing_page(wizard)
        try:  # the floor, and (issue 16) a KV cache that fits the NPU: what the core's compile accepts
            plan_compile(present(wizard.request()))
            accepted = True
        except StudioError:
            accepted = False
        assert accepted == (shown >= 9 and shown <= largest)
        assert next_enabled == accepted

    typed()


SHAPE_SPINS = ("wizardBatchSpin", "wizardMaxSeqLenSpin", "wizardPartitionSpin", "wizardChunkSpin")


def test_shape_fields_show_the_cores_verdict_for_any_input(qtbot: QtBot, wizard: CompileWizard) -> None:
    page = wizard.shape_page
    spins = {name: child(wizard, QSpinBox, name) for name in SHAPE_SPINS}

    @FUZZ
    @given(
        name=st.sampled_from(SHAPE_SPINS),
        text=st.one_of(typed_counts, st.integers(0, 1 << 24).map(str)),
    )
    def typed(name: str, text: str) -> None:
        with qtbot.captureExceptions() as raised:
            type_into_spin(qtbot, spins[name], text)
        assert not raised, raised
        no_error_dialog()
        request = wizard.request()
        assert request is not None
        message = page.message.text()
        next_enabled = wizard.button(QWizard.WizardButton.NextButton).isEnabled()
        problem = wizard.input_problem()
        if problem is not None:  # a field that is empty or out of range says so; no stale value is used
            assert f"✖ {message_html(problem)}" in message and not next_enabled
            return
        try:
            resolve_shape(replace(request, memory_budget=None, kvcache_num_blocks=None), present(wizard.model))
        except StudioError as exc:
            assert f"✖ {message_html(exc.one_line())}" in message and not next_enabled
        else:
            assert message.startswith(f"<span style='color:{tone(Tone.OK)}'>✓") and next_enabled

    typed()
