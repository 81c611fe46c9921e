"""Bad-input fuzzing helpers: hostile JSON values and mutations, and the read-only paths every bad file must survive.

Every reader (open_artifact, inspect, summarize, scan, read_block_count and the CLI's inspect, get and
scan commands, run in-process) must end in a StudioError (exit 1 with one `error:` line) or a result,
never another exception, a hang or a write; inspect and scan exit 3 exactly when the artifact is invalid.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from faultfs import FaultFS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rbln_artifact_studio.cli import main as cli
from rbln_artifact_studio.core.display.report import inspect_dict, inspect_text
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.artifact import Status, open_artifact
from rbln_artifact_studio.core.fleet.scan import scan, summarize
from rbln_artifact_studio.core.model.budget import parse_budget
from rbln_artifact_studio.core.storage.jsonfile import read_block_count

DEADLINE = 10.0  # seconds one reader may take on one file before it counts as a hang


def fuzz(quick: int, deep: int) -> Callable[[Callable[..., None]], tuple[Any, Any]]:
    """Two tests from one property: a derandomized run for every suite run, a longer random one marked slow."""

    def make(prop: Callable[..., None]) -> tuple[Any, Any]:
        common: dict[str, Any] = {
            "deadline": None,
            "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        }
        fast = settings(max_examples=quick, derandomize=True, **common)(given(data=st.data())(prop))
        slow = pytest.mark.slow(settings(max_examples=deep, **common)(given(data=st.data())(prop)))
        return fast, slow

    return make


class Raw:
    """A JSON token written verbatim (numbers Python cannot dump, NaN, absurd nesting, lone surrogates)."""

    def __init__(self, token: str) -> None:
        self.token = token


SPECIAL = [
    "null",
    "true",
    "false",
    "-1",
    "0",
    "1",
    "1e400",
    "-1e400",
    "NaN",
    "Infinity",
    "-Infinity",
    "9" * 5000,
    "18446744073709551616",
    "-9223372036854775809",
    "1099511627777",
    "0.5",
    '""',
    '"abc"',
    '"RBLN-CR13"',
    '"RBLN-ZZ99"',
    '"\\ud800"',
    "[]",
    "{}",
    "[[]]",
    "[" * 3000 + "]" * 3000,
    '{"a":' * 3000 + "1" + "}" * 3000,
]

leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
)
json_values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
hostile = st.one_of(st.sampled_from(SPECIAL).map(Raw), json_values)


def dumps(value: Any) -> bytes:
    """JSON text with Raw tokens spliced in."""
    tokens: list[str] = []

    def swap(v: Any) -> Any:
        if isinstance(v, Raw):
            tokens.append(v.token)
            return f"@@RAW{len(tokens) - 1}@@"
        if isinstance(v, dict):
            return {k: swap(x) for k, x in v.items()}
        if isinstance(v, list):
            return [swap(x) for x in v]
        return v

    text = json.dumps(swap(value), indent=2)
    for i, token in enumerate(tokens):
        text = text.replace(f'"@@RAW{i}@@"', token)
    return text.encode("utf-8", "surrogatepass")


def mutate_mapping(data: dict[str, Any], draw: Callable[[Any], Any], extra_keys: list[str]) -> Any:
    """One to four structural mutations: drop keys, hostile values (also inside lists of objects), renames."""
    doc: Any = json.loads(json.dumps(data))
    for _ in range(draw(st.integers(1, 4))):
        if not isinstance(doc, dict):
            break
        op = draw(st.sampled_from(["drop", "set", "nested", "both-names", "whole"]))
        keys = sorted(doc)
        if op == "drop" and keys:
            doc.pop(draw(st.sampled_from(keys)))
        elif op == "set":
            doc[draw(st.sampled_from([*keys, *extra_keys]))] = draw(hostile)
        elif op == "nested":
            # an object inside the document: an entry of a list of objects, or an object value
            inner_objects = [
                x for k in keys for x in (doc[k] if isinstance(doc[k], list) else [doc[k]]) if isinstance(x, dict)
            ]
            if not inner_objects:
                continue
            entry = draw(st.sampled_from(inner_objects))
            inner = sorted(entry)
            if inner and draw(st.booleans()):
                entry.pop(draw(st.sampled_from(inner)))
            else:
                entry[draw(st.sampled_from([*inner, "name", "shape"]))] = draw(hostile)
        elif op == "both-names":
            new, old = draw(
                st.sampled_from([("num_devices", "tensor_parallel_size"), ("cache_metas", "kvcache_metas")])
            )
            doc[old] = doc.get(new) if draw(st.booleans()) else draw(hostile)
        else:
            doc = draw(hostile)
    return doc


def mutate_bytes(data: bytes, draw: Callable[[Any], Any]) -> bytes:
    """Sometimes damage the encoded text itself: truncation, a flipped or non-UTF-8 byte, BOM, UTF-16."""
    op = draw(st.sampled_from(["none", "none", "truncate", "flip", "non-utf8", "bom", "utf16"]))
    if op == "truncate":
        return data[: draw(st.integers(0, max(0, len(data) - 1)))]
    if op == "flip" and data:
        i = draw(st.integers(0, len(data) - 1))
        return data[:i] + bytes([data[i] ^ draw(st.integers(1, 255))]) + data[i + 1 :]
    if op == "non-utf8":
        i = draw(st.integers(0, len(data)))
        return data[:i] + b"\xff\xfe" + data[i:]
    if op == "bom":
        return b"\xef\xbb\xbf" + data
    if op == "utf16":
        return data.decode("utf-8", "surrogatepass").encode("utf-16", "surrogatepass")
    return data


def within_deadline(fn: Callable[[], Any], seconds: float = DEADLINE) -> Any:
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise TimeoutError(f"no answer within {seconds:g}s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(args)
    return code, out.getvalue(), err.getvalue()


def read_everything(folder: Path, scans: bool = True) -> list[str]:
    """Run every reader on folder (an artifact) and its parent; return the problems (empty when all is well).

    scans=False leaves out summarize and scan (for files app/core/fleet/scan.py cannot read safely yet)."""
    problems: list[str] = []
    root = folder.parent

    def attempt(label: str, fn: Callable[[], Any], may_raise: bool = True) -> Any:
        try:
            return within_deadline(fn)
        except StudioError as exc:
            if not may_raise:
                problems.append(f"{label} raised StudioError although it never should: {exc}")
            elif "\n" in exc.one_line():
                problems.append(f"{label}: message is not one line: {exc.one_line()!r}")
        except Exception as exc:
            problems.append(f"{label} raised {type(exc).__name__}: {str(exc)[:300]}")
        return None

    with FaultFS(root).active() as fs:
        artifact = attempt("open_artifact", lambda: open_artifact(folder))
        if artifact is not None:
            attempt("inspect_dict", lambda: json.dumps(inspect_dict(artifact)))
            attempt("inspect_dict at 0.5", lambda: inspect_dict(artifact, parse_budget(0.5)))
            attempt("inspect_text", lambda: inspect_text(artifact))
            if artifact.status is not Status.INVALID:
                count = artifact.config.kvcache_num_blocks
                held = {g.name: g.slot.header.kvcache_num_blocks for g in artifact.graph_files if g.slot}
                if any(n != count for n in held.values()):
                    problems.append(f"opened as {artifact.status.value} with config {count} but slots {held}")
        if scans:
            attempt("summarize", lambda: summarize(folder), may_raise=False)
            attempt("scan", lambda: list(scan(root)), may_raise=False)
        attempt("read_block_count", lambda: read_block_count(folder))
        for args in (
            ["inspect", str(folder)],
            ["inspect", str(folder), "--json"],
            ["get-kvcache-num-blocks", str(folder)],
        ):
            result = attempt(f"cli {args[0]}", functools.partial(_cli, args))
            if result is not None:
                code, _, err = result
                if code not in (0, 1, 3) or (code == 1 and (not err.startswith("error: ") or err.count("\n") != 1)):
                    problems.append(f"cli {' '.join(args[::2])}: exit {code}, stderr {err[:300]!r}")
                if args[0] == "inspect" and artifact is not None and (code == 3) != (artifact.status is Status.INVALID):
                    problems.append(f"cli inspect: exit {code} for an artifact that opens {artifact.status.value}")
        # scan exits 3 exactly when its row is invalid: the verdict inspect gives (1 when it cannot open it).
        result = attempt("cli scan", lambda: _cli(["scan", str(root)])) if scans else None
        invalid = artifact is None or artifact.status is Status.INVALID
        if result is not None and result[0] != (3 if invalid else 0):
            opened = "not opened" if artifact is None else f"opened {artifact.status.value}"
            problems.append(f"cli scan: exit {result[0]} ({opened}): {result[1][-600:]!r} {result[2][:300]!r}")
    if fs.points:
        problems.append(f"a reader wrote: {fs.points[:3]}")
    return problems
