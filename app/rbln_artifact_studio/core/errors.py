"""The project's own error types: every failure a user can cause ends in one of these."""

from typing import NamedTuple

# Part of get-kvcache-num-blocks' fast path (docs/performance.md row 1), as every command imports it: a NamedTuple
# rather than a dataclass (dataclasses loads inspect, a fifth of that command's time), its fields typed with classes
# rather than strings (no `from __future__ import annotations`: NamedTuple compiles each string, and a process's
# first compile costs that command ~6%).


class Fix(NamedTuple):
    """One way out of an error, as compile options to change: what the GUI offers as a one-click choice."""

    label: str  # e.g. "kvcache_partition_len 8,192"
    changes: tuple[tuple[str, object], ...]  # (CompileRequest field, new value) pairs, applied together


class StudioError(Exception):
    """A problem the user can act on; its message is shown as is, without a traceback.

    `fixes` are the remedies the message lists, in a form a front end can apply without parsing the text.
    """

    def __init__(self, message: str, *, hint: str | None = None, fixes: tuple[Fix, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.fixes = fixes

    def one_line(self) -> str:
        """The message and its hint on one line, as the CLI prints errors."""
        if not self.hint:
            return self.message
        stop = "" if self.message.rstrip().endswith((".", "!", "?", ":")) else "."  # ssh's own words end bare
        return f"{self.message}{stop} {self.hint}"


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


def reworded(exc: StudioError, message: str) -> StudioError:
    """exc with message in place of its own, of its own class, its hint and fixes kept: a reader that names paths
    in its place's words (a server's URL, a bucket's) keeps what the CLI's exit code and a caller's except read."""
    again = type(exc).__new__(type(exc))  # no __init__: a subclass may take other arguments
    again.__dict__.update(exc.__dict__)
    again.args = (message,)
    again.message = message
    return again
