"""`get-kvcache-num-blocks DIR`, on the start-up-critical path: shell loops call it per artifact, and its whole process
is measured against a one-line json.load (docs/performance.md row 1).

It reads the common kind's one number with what the entry has loaded already; the location model, every kind of
place and the wording of a warning load only when that number is not the whole answer (tests/test_cli_fast_paths.py
holds which modules it may import).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rbln_artifact_studio.core.errors import ConfigError
from rbln_artifact_studio.core.schemes import is_local
from rbln_artifact_studio.core.storage.jsonfile import block_count_problem, plain_decoder_count

if TYPE_CHECKING:
    import argparse


def cmd_get(args: argparse.Namespace) -> int:
    return print_blocks(args.dir)


def print_blocks(where: str) -> int:
    """Print the artifact's kvcache_num_blocks as optimum-rbln-cli does: what the file records, whatever it is,
    exit 0 (a count that is no valid one is warned about)."""
    count = None
    if is_local(where):  # shell loops call get per artifact: the common kind's one number, read first
        try:  # what places.local reads first too; anything else (a file it cannot read) takes the road below
            count = plain_decoder_count(where)
        except ConfigError:
            count = None
    if count is None:  # any other kind or place, or an error to word: the location model and its dispatch
        # deferred: the location model, every kind of place and pydantic's reader, off the common kind's fast path
        from rbln_artifact_studio.cli.commands.common import read_block_count

        count = read_block_count(where)
    print(count)
    problem = block_count_problem(count)
    if problem is not None:
        # deferred: a warning's wording, loaded only when there is one
        from rbln_artifact_studio.cli.problems import warn

        warn(f"{where}: {problem} `inspect` says what else is wrong.")
    return 0
