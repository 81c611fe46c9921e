"""vllm-rbln's cache on the server: list its entries (files, sizes, times, owner, config, holding processes) or prune.

Arguments: "list", the config file name (rbln_config.json), the incomplete marker's name, the cache root; or
"prune", the cache root, then entries as "AREA/NAME"; or "restore", the cache root and the JSON of the access
times to put back (core/portable/vllm_cache_disk.restore_used). Writes one JSON line per entry (list: the record of
core/portable/vllm_cache_disk.read_cache, then {"toolchain": optimum-rbln's version in this python3 or null}, then {"serving": its running vllm serve
commands (vllm_cache_disk.serve_processes)};
prune: {"name", "removed", "freed", "reason"}), or {"error": message} when the root is no folder (or, to list, holds no cache). Prune renames
each entry to a hidden name before deleting it and never touches one a process holds.
"""

import json
import os
import sys

from rbln_artifact_studio.core.portable.vllm_cache_disk import (
    is_cache,
    prune,
    read_cache,
    restore_used,
    serve_processes,
)


def emit(record):
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def installed_optimum():
    try:
        # deferred: importlib.metadata is Python 3.8's, and a server's Python may be older (then: not known)
        from importlib import metadata

        return metadata.version("optimum-rbln")
    except Exception:
        return None


def main():
    action = sys.argv[1]
    root = os.path.expanduser(sys.argv[-1] if action == "list" else sys.argv[2])
    if not os.path.isdir(root):
        emit({"error": "is no folder on the server"})
        return
    if action == "list" and not is_cache(root):
        emit({"error": "holds no compiled_models/ or rbln/ folder, so no vLLM cache"})
        return
    if action == "list":
        for record in read_cache(root, sys.argv[2], sys.argv[3]):
            emit(record)
        emit({"toolchain": installed_optimum()})
        emit({"serving": serve_processes()})
    elif action == "restore":
        restore_used(root, json.loads(sys.argv[3]))
        emit({"restored": True})
    else:
        for result in prune(root, sys.argv[3:]):
            emit(result)


main()
