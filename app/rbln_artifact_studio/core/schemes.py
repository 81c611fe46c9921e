"""The URL schemes that name a place, and whether a text names a folder on this computer.

Part of `get-kvcache-num-blocks`' fast path (docs/performance.md row 1): it asks is_local before reading one file,
so this module stays small and loads nothing beyond the standard library's `os` and `re`; the Location classes that
parse a place are core/location.py's.
"""

from __future__ import annotations

import os
import re

SSH_SCHEME = "ssh://"
S3_SCHEME = "s3://"
S3_ENDPOINT_SCHEMES = ("s3+http://", "s3+https://")  # a bucket with its store's URL: s3+http://HOST:PORT/BUCKET
URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
"""Any SCHEME:// at the start of a text, the scheme its group 1."""


def is_local(text: str | os.PathLike[str]) -> bool:
    """Whether text names a folder on this computer (no URL scheme)."""
    value = str(text)
    return not value.startswith((SSH_SCHEME, S3_SCHEME, *S3_ENDPOINT_SCHEMES)) and URL.match(value) is None
