"""Where the real toolchain lives: environment variables first, then what the caller configured (the GUI's
preferences), passed explicitly to every detection, compile and resize."""

from __future__ import annotations

import os
from dataclasses import dataclass

ENV_OPTIMUM_CLI = "RBLN_STUDIO_OPTIMUM_CLI"
"""Path of the optimum-rbln-cli executable to use instead of the one on PATH."""

ENV_TOOLCHAIN_PYTHON = "RBLN_STUDIO_TOOLCHAIN_PYTHON"
"""The Python (or the virtual environment folder) where optimum-rbln and rebel-compiler are installed."""

ENV_PROBE_TIMEOUT = "RBLN_STUDIO_PROBE_TIMEOUT"
"""Seconds the rebel inspection helper may take to read an artifact's .rbln files."""

ENV_CHECK_TIMEOUT = "RBLN_STUDIO_CHECK_TIMEOUT"
"""Seconds `optimum-rbln-cli --version` and the `import rebel` check may take."""


@dataclass(frozen=True)
class ToolchainSettings:
    """What detection starts from; None means "find it" (PATH, then the CLI script's own interpreter)."""

    optimum_cli: str | None = None
    toolchain_python: str | None = None
    probe_timeout: float = 180.0
    check_timeout: float = 30.0


def _env_text(name: str) -> str | None:
    return os.environ.get(name, "").strip() or None


def _env_seconds(name: str) -> float | None:
    try:
        value = float(_env_text(name) or "")
    except ValueError:
        return None
    return value if value > 0 else None


def current_settings(configured: ToolchainSettings | None = None) -> ToolchainSettings:
    """The configured values (the GUI's preferences; none for the CLI) with each environment variable that is set
    (and valid) replacing its field."""
    settings = configured or ToolchainSettings()
    return ToolchainSettings(
        optimum_cli=_env_text(ENV_OPTIMUM_CLI) or settings.optimum_cli,
        toolchain_python=_env_text(ENV_TOOLCHAIN_PYTHON) or settings.toolchain_python,
        probe_timeout=_env_seconds(ENV_PROBE_TIMEOUT) or settings.probe_timeout,
        check_timeout=_env_seconds(ENV_CHECK_TIMEOUT) or settings.check_timeout,
    )
