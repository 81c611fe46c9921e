"""What a place holds after a write, read again through its Kind (places/dispatch): a write's confirmation states
that, not what the write meant to do."""

from __future__ import annotations

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import Location
from rbln_artifact_studio.core.model.kinds import NoKvCacheError
from rbln_artifact_studio.places import dispatch


def confirm_blocks(where: Location, meant: int) -> int:
    """kvcache_num_blocks of the artifact at where, read again; a StudioError when the place holds another count (the
    write did not land, or another writer changed it since). An artifact without a KV cache has no count to hold."""
    try:
        held = dispatch.read_block_count(where)
    except NoKvCacheError:
        return meant
    if held != meant:
        raise StudioError(
            f"{where} holds kvcache_num_blocks={held} after the write, not the {meant} it wrote: another writer "
            "changed it since.",
            hint=f"Read it again with: rbln-studio-cli get-kvcache-num-blocks {where}",
        )
    return held
