"""Standard-library-only pieces the studio runs both here and on NPU servers, sent there as source text.

Each module imports nothing but the standard library and keeps to Python 3.6's grammar and library (no
dataclasses, no walrus, no `from __future__ import annotations`: annotations that name newer types are quoted),
so remote/server.py can bundle it, as it is, with a program for a server's bare python3 (remote/on_server/).
"""
