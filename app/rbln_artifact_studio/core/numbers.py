"""Numbers a user types (a flag, an environment variable) read once, the same way: finite and above 0, or a
one-line error naming where the value came from and what to give instead."""

from __future__ import annotations

import math
import os

from rbln_artifact_studio.core.errors import StudioError

MAX_SECONDS = 10 * 365 * 86400.0  # ten years: longer is no limit at all, and deadlines overflow beyond float's range


class BadNumber(StudioError, ValueError):
    """A typed number that is not one, is not finite, or is not above 0; a ValueError too, so argparse's type=
    callables report it as a usage error (exit 2)."""


def positive_seconds(text: str | float, where: str, example: str = "30") -> float:
    """text as seconds: a finite number above 0 and at most MAX_SECONDS; BadNumber naming `where` (`--timeout `,
    `RBLN_STUDIO_SERVER_TIMEOUT=`; "" where argparse names the flag) before the text otherwise."""
    shown = f"{where}{text.strip() if isinstance(text, str) else text!r}"
    try:
        value = float(text)
    except OverflowError:  # an int beyond float's range
        value = math.inf
    except (TypeError, ValueError):
        raise BadNumber(f"{shown} is not a number of seconds; give e.g. {example}.") from None
    if math.isnan(value) or math.isinf(value):
        raise BadNumber(f"{shown} is not a finite number of seconds; give e.g. {example}.")
    if value <= 0:
        raise BadNumber(f"{shown} is not above 0 seconds; give e.g. {example}.")
    if value > MAX_SECONDS:
        raise BadNumber(f"{shown} is more than ten years; give e.g. {example}.")
    return value


def seconds_from_environment(name: str, default: float) -> float:
    """The environment variable `name` read as positive_seconds, or `default` when it is unset or blank."""
    text = os.environ.get(name, "")
    return positive_seconds(text, f"{name}=") if text.strip() else default
