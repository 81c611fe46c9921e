"""The project's own error types: every failure a user can cause ends in one of these."""

from collections.abc import Callable, Mapping  # loaded with typing already: costs the fast path nothing
from typing import NamedTuple

# Part of get-kvcache-num-blocks' fast path (docs/performance.md row 1), as every command imports it: a NamedTuple
# rather than a dataclass (dataclasses loads inspect, a fifth of that command's time), its fields typed with classes
# rather than strings (no `from __future__ import annotations`: NamedTuple compiles each string, and a process's
# first compile costs that command ~6%).


NOTHING_CHANGED = "Nothing was changed."
"""The one sentence a refusal closes with: nothing on disk, on a server or in a bucket was touched."""

OptionNames = Mapping[str, str]
"""How a front end names an option a remedy asks for: option (or option=value) -> its words, `{value}` where the
value goes (the CLI's flag, "--backend {value}"; the desktop's control, "Where ▸ To a copy")."""

OPTION_WORDS: OptionNames = {"output": "the output option", "backend": "the backend option: {value}"}
"""The options' plain names, where no front end renders them (a log line); the CLI's are cli/flags.py's, the
desktop's gui/app/remedies.py's."""


class Fix(NamedTuple):
    """One way out of an error, as compile options to change: what the GUI offers as a one-click choice."""

    label: str  # e.g. "kvcache_partition_len 8,192"
    changes: tuple[tuple[str, object], ...]  # (CompileRequest field, new value) pairs, applied together


class Remedy(NamedTuple):
    """What to do instead, as data: `words` with `{option}` where each front end names `option` its own way
    ("Resize to a copy instead ({option})." reads "(--output-dir)" in the CLI and names the dialog's field in the
    desktop); `value` is the value the remedy asks the option for ('' : the user's own)."""

    words: str
    option: str
    value: str = ""

    def render(self, names: OptionNames | None = None) -> str:
        """The remedy in names' words: `option=value` where names says that value its own way, else `option`."""
        keys = (f"{self.option}={self.value}", self.option)
        name = next((n for table in (names or {}, OPTION_WORDS) for k in keys if (n := table.get(k))), self.option)
        return self.words.format(option=name.format(value=self.value).strip())


TO_A_COPY = Remedy("Resize to a copy instead ({option}).", "output")
"""The way out of an in-place resize refused: the same resize into a folder of its own."""


def _sentences(*parts: str) -> str:
    """Parts joined as sentences: each ends with a stop (ssh's and other tools' own words end bare)."""
    said = ""
    for part in filter(None, (p.strip() for p in parts)):
        if said:
            said += ("" if said.endswith((".", "!", "?", ":")) else ".") + " "
        said += part
    return said


class StudioError(Exception):
    """A problem the user can act on; its message is shown as is, without a traceback.

    `fixes` are the remedies the message lists, in a form a front end can apply without parsing the text.
    `remedy` is what to do instead with an option each front end names its own way (said()); `unchanged` says
    nothing was changed (a refusal, a cancel, a failure before anything was kept): its message closes with
    NOTHING_CHANGED, the one wording every refusal uses.
    """

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        fixes: tuple[Fix, ...] = (),
        remedy: Remedy | None = None,
        unchanged: bool = False,
    ) -> None:
        self.problem, self.remedy, self.unchanged = message, remedy, unchanged
        self.message = self.said()
        super().__init__(self.message)
        self.hint = hint
        self.fixes = fixes

    def said(self, names: OptionNames | None = None) -> str:
        """The problem, the remedy with its option in names' words (the plain ones without), and the closing."""
        if self.remedy is None and not self.unchanged:
            return self.problem
        return _sentences(
            self.problem, self.remedy.render(names) if self.remedy else "", NOTHING_CHANGED if self.unchanged else ""
        )

    def one_line(self, names: OptionNames | None = None) -> str:
        """The message and its hint on one line, as the CLI prints errors (names: its flags)."""
        return _sentences(self.said(names), self.hint or "") if self.hint else self.said(names)


class UnknownNpuError(StudioError):
    """An NPU name with no known family prefix."""


class ShapeError(StudioError):
    """A compile shape (batch, max_seq_len, partition, chunk, devices) outside the NPU's limits."""


class BudgetError(StudioError):
    """A memory_budget that cannot be parsed or does not fit the target NPU."""


class ConfigError(StudioError):
    """An rbln_config.json (or model config.json) that cannot be read or is not valid."""


class NotAnArtifactError(ConfigError):
    """A folder (or prefix) asked for as an artifact that holds no rbln_config.json: no artifact at all, not an
    invalid one (the CLI exits 1, not 3)."""


class LegacyConfigError(ConfigError):
    """An rbln_config.json in the pre-0.x `_meta` format."""


class ContainerError(StudioError):
    """A .rbln container that is truncated, corrupt or of an unknown version."""


class InsufficientMemoryError(StudioError):
    """The KV cache that fits is below the floor the configuration requires."""


class ResizeError(StudioError):
    """A resize request that breaks the rules (below the floor, bad output folder, ...)."""


class InvalidArtifactError(StudioError):
    """An artifact the work needs is invalid (damaged, inconsistent, over the DRAM); the CLI exits 3."""


class ChangingError(StudioError):
    """An artifact that changed under every read (a resize running beside): busy, not broken; read it again later."""


class ArtifactLockedError(StudioError):
    """Another writer holds the artifact."""


class CancelledError(StudioError):
    """The user cancelled a long operation; nothing was left half-done."""


def reworded(exc: StudioError, rename: Callable[[str], str]) -> StudioError:
    """exc with its problem renamed (rename: the problem's words in a reader's place, a server's URL or a bucket's),
    of its own class, its remedy, closing, hint and fixes kept: what the CLI's exit code and a caller's except read."""
    again = type(exc).__new__(type(exc))  # no __init__: a subclass may take other arguments
    again.__dict__.update(exc.__dict__)
    again.problem = rename(exc.problem)
    again.message = again.said()
    again.args = (again.message,)
    return again
