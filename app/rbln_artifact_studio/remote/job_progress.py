"""Progress of a job on a server, carried in its log as marked lines: the studio's CLI there writes them, follow reads them."""

from __future__ import annotations

import json

ENV = "RBLN_STUDIO_PROGRESS_LINES"  # set by a server job's runner: the studio's CLI writes its byte counts as lines
PREFIX = "rbln-studio-progress "


def progress_line(done: int, total: int, message: str) -> str:
    return PREFIX + json.dumps([done, total, message])


def parse_progress(line: str) -> tuple[int, int, str] | None:
    """(done, total, message) of a marked line; None for any other log line."""
    if not line.startswith(PREFIX):
        return None
    try:
        done, total, message = json.loads(line[len(PREFIX) :])
        return int(done), int(total), str(message)
    except (ValueError, TypeError):
        return None
