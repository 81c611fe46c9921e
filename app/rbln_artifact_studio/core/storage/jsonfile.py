"""Reading JSON files with errors a user can act on: part of get-kvcache-num-blocks' fast path (docs/performance.md
row 1), so small and standard library only."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from typing import TYPE_CHECKING

from rbln_artifact_studio.core.errors import ConfigError, LegacyConfigError
from rbln_artifact_studio.core.portable.files import read_to_end

# No pathlib at import: `get-kvcache-num-blocks` reads its one number with this module alone (docs/performance.md
# row 1), and a path is only ever passed to open() here.
if TYPE_CHECKING:
    PathText = str | os.PathLike[str]

CONFIG_NAME = "rbln_config.json"
MAX_JSON_BYTES = 64 << 20  # an rbln_config.json is kilobytes; a huge file is read no further
MAX_BLOCK_COUNT = 1 << 40  # the largest kvcache_num_blocks (or any shape dimension) a valid file records


def block_count_problem(count: int) -> str | None:
    """Why a recorded kvcache_num_blocks is not valid (the loader takes it all the same), or None."""
    if count < 1:
        return f"kvcache_num_blocks={count} is not valid: a compiled artifact records at least 1 block."
    if count > MAX_BLOCK_COUNT:
        return f"kvcache_num_blocks={count} is not valid: it is above {MAX_BLOCK_COUNT:,}, more than any NPU holds."
    return None


def read_bytes(path: PathText) -> bytes:
    """Read a small regular file, turning OS errors into ConfigError; never waits on a pipe or a device."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a named pipe would block a plain open forever
    except FileNotFoundError:
        raise ConfigError(f"{path} does not exist: this folder is not a compiled artifact.") from None
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise ConfigError(f"{path} is a folder, not a file.")
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(
                f"{path} is not a regular file (a pipe, socket or device); replace it with the real file."
            )
        if st.st_size > MAX_JSON_BYTES:
            raise ConfigError(f"{path} is {st.st_size:,} bytes, far too large for a config file.")
        return read_to_end(fd, st.st_size, MAX_JSON_BYTES)  # os.read: a scan reads thousands (io's objects cost more)
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    finally:
        os.close(fd)


def decode_json(data: bytes, path: PathText, loads: Callable[[str], object] = json.loads) -> object:
    """Bytes to JSON with errors a user can act on (encoding, syntax, nesting).

    `loads` may be a faster parser with the same results (scans pass pydantic_core.from_json).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text (byte {exc.start}); it is not an rbln_config.json.") from None
    try:
        return loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}).") from None
    except RecursionError:
        raise ConfigError(f"{path} is nested too deeply to be an rbln_config.json.") from None
    except ValueError as exc:  # pydantic_core's syntax and depth errors; Python's int digit limit
        message = str(exc)
        if "recursion limit" in message and loads is not json.loads:
            return decode_json(data, path)  # pydantic_core stops at 200 levels, json.loads near 1,000: as inspect reads
        if "recursion limit" in message:
            raise ConfigError(f"{path} is nested too deeply to be an rbln_config.json.") from None
        if "digits" in message:
            raise ConfigError(
                f"{path} holds a number with thousands of digits; it is not a valid config file."
            ) from None
        raise ConfigError(f"{path} is not valid JSON ({exc}).") from None


def require_current_format(raw: object, path: PathText) -> dict[str, object]:
    """The top-level object of an rbln_config.json, refusing the legacy `_meta` format."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a JSON object at the top level, found {type(raw).__name__}.")
    if "_meta" in raw:
        raise LegacyConfigError(
            f"{path} is in the legacy `_meta` format of an old optimum-rbln version; "
            "please recompile the model with a current optimum-rbln."
        )
    return raw


def read_block_count(artifact_dir: PathText) -> int:
    """kvcache_num_blocks from DIR/rbln_config.json without validating the rest (the get command's fast path)."""
    path = os.path.join(artifact_dir, CONFIG_NAME)  # not pathlib's: this module is on that fast path
    raw = require_current_format(decode_json(read_bytes(path), path), path)
    count = raw.get("kvcache_num_blocks")
    if not isinstance(count, int) or isinstance(count, bool):
        raise ConfigError(f"{path} has no integer kvcache_num_blocks (found {count!r}); it is not a decoder artifact.")
    return count


def plain_decoder_count(artifact_dir: PathText) -> int | None:
    """kvcache_num_blocks of a decoder-only artifact, read without validating the rest (the get command's fast
    path); None for any other kind, which rbln_artifact_studio.core.model.kinds tells apart.

    optimum-rbln saves cache_metas with every decoder-only config and with no other kind (Whisper and BART
    keep a kvcache_num_blocks of their own without it); a multimodal model nests its language model.
    """
    path = os.path.join(artifact_dir, CONFIG_NAME)  # not pathlib's: shell loops run this once per artifact
    if not os.path.lexists(path):
        return None  # a diffusers pipeline (model_index.json), or no artifact: kinds says which
    raw = require_current_format(decode_json(read_bytes(path), path), path)
    count = raw.get("kvcache_num_blocks")
    if not isinstance(count, int) or isinstance(count, bool):
        return None
    if "cache_metas" not in raw and "kvcache_metas" not in raw:
        return None
    if any(isinstance(raw.get(section), dict) for section in ("language_model", "text_model")):
        return None
    return count
