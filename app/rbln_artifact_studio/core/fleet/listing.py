"""A folder's listing as a scan keys its rows by: each file's name, size, times and inode, and its graphs' sizes."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from rbln_artifact_studio.core.storage.fsutil import is_internal_name
from rbln_artifact_studio.core.storage.jsonfile import CONFIG_NAME

if TYPE_CHECKING:
    from rbln_artifact_studio.core.fleet.scan_cache import Signature

GRAPH_SUFFIX = ".rbln"


def folder_listing(entries: Iterable[os.DirEntry[str]], prefix: str = "") -> tuple[Signature, int, dict[str, int]]:
    """The folder's files as (name, size, mtime, ctime, inode), their total size, and each graph's size.

    Subfolders holding a compiled part of the same model (a VLM's language_model/, a pipeline's unet/) are
    listed too, their names prefixed, so a change there refreshes the row.
    """
    signature: Signature = []
    graphs: dict[str, int] = {}
    size = 0
    for entry in entries:
        if is_internal_name(entry.name):
            continue
        if not entry.is_file():
            part = not prefix and not entry.name.startswith(".") and entry.is_dir()
            if part and os.path.exists(os.path.join(entry.path, CONFIG_NAME)):
                with os.scandir(entry.path) as it:
                    sub_signature, sub_size, _ = folder_listing(list(it), f"{entry.name}/")
                signature += sub_signature
                size += sub_size
            continue
        st = entry.stat()
        signature.append([prefix + entry.name, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino])
        size += st.st_size
        if entry.name.endswith(GRAPH_SUFFIX):
            graphs[entry.name[: -len(GRAPH_SUFFIX)]] = st.st_size
    signature.sort()
    return signature, size, graphs


def folder_signature(folder: str) -> Signature | None:
    """The listing a cached row is keyed by, or None when the folder cannot be listed."""
    try:
        with os.scandir(folder) as it:
            return folder_listing(list(it))[0]
    except OSError:
        return None
