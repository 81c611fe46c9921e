"""What makes a folder an optimum-rbln pipeline (model_index.json naming compiled components): one rule, read the
same by the studio's model kinds and a server's scan."""

import json
import os

from rbln_artifact_studio.core.portable.files import read_small

PIPELINE_INDEX = "model_index.json"
COMPILED_BY = "optimum.rbln"  # the library model_index.json names for a component optimum-rbln compiled


def pipeline_components(index: "dict") -> "list[tuple[str, str]]":
    """(subfolder, class) of every component model_index.json says optimum-rbln compiled."""
    return [
        (name, str(v[1]))
        for name, v in index.items()
        if isinstance(v, list) and len(v) == 2 and v[0] == COMPILED_BY and isinstance(v[1], str)
    ]


def is_rbln_pipeline(index: object) -> bool:
    """Whether a parsed model_index.json is an optimum-rbln pipeline's (an RBLN class, or compiled components)."""
    return isinstance(index, dict) and (
        str(index.get("_class_name", "")).startswith("RBLN") or bool(pipeline_components(index))
    )


def is_pipeline_folder(folder: "str | os.PathLike[str]", config_name: str, limit: int) -> bool:
    """A folder with an optimum-rbln model_index.json (read as at most `limit` bytes, never waiting on a pipe) and
    no `config_name` (rbln_config.json) of its own."""
    if os.path.exists(os.path.join(folder, config_name)):
        return False
    try:
        index = json.loads(read_small(os.path.join(folder, PIPELINE_INDEX), limit).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return is_rbln_pipeline(index)
