"""Builds a fleet laid out the way real ones are (issue 16), with each layout's path for the tests to use."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from conftest import TINY_MODEL as TINY

from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile, write_artifact

# Tiny Llama, batch 2, 8,192 tokens in 4,096-token blocks: full pool 4, floor 3, compiled at 4.
TINY_SHAPE = {"batch_size": 2, "max_seq_len": 8192, "kvcache_partition_len": 4096, "npu": "RBLN-CA25"}


@dataclass(frozen=True)
class Fleet:
    """base holds the root (the folder a user opens) and folders beside it that the root links to."""

    base: Path
    root: Path
    art: Path  # a plain simulator artifact...
    backup: Path  # ...and its `cp -al` backup: every file a hard link to art's
    blobs: Path  # a Hugging Face cache: snapshots/revA and revB are symlinks into these blobs
    rev_a: Path
    rev_b: Path
    outside: Path  # an artifact outside the root, linked from it
    linked: Path  # root/linked-out -> outside
    selfloop: Path  # a symlink to itself
    up: Path  # root/up -> .. (the root's parent)
    hand_edit: Path  # rbln_config.json's kvcache_num_blocks edited by hand (no header holds it)
    truncated: Path  # prefill.rbln cut short
    zero: Path  # decoder_batch_2.rbln emptied
    overwritten: Path  # prefill.rbln's preamble overwritten with zeros
    llama70b: Path  # Llama-3.3-70B on 16 ATOM-Max (8 KV heads, tensor parallel 16)
    sibling: Path  # base/fleet2: a folder whose name starts with the root's

    @property
    def layouts(self) -> dict[str, Path]:
        """Every artifact-like entry under the root, by layout name."""
        return {
            "plain": self.art,
            "hard-linked backup": self.backup,
            "hf snapshot revA": self.rev_a,
            "hf snapshot revB": self.rev_b,
            "link to an artifact outside": self.linked,
            "self-loop": self.selfloop,
            "hand edit": self.hand_edit,
            "truncated": self.truncated,
            "zero-byte": self.zero,
            "overwritten": self.overwritten,
            "70B on 16 devices": self.llama70b,
        }


def compile_tiny(model_dir: Path, output: Path, **options: object) -> Path:
    request = CompileRequest(model_id=str(model_dir), **{**TINY_SHAPE, **options})  # type: ignore[arg-type]
    return write_artifact(plan_compile(request), output)


def tree_bytes(root: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file's content (following links), for "was anything written" checks."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _hard_link_copy(src: Path, dst: Path) -> None:
    """What `cp -al src dst` does."""
    dst.mkdir()
    for name in os.listdir(src):
        os.link(src / name, dst / name)


def _hf_cache(template: Path, cache: Path) -> tuple[Path, Path, Path]:
    """models--org--tiny/{blobs/<sha>, snapshots/revA/<file> -> ../../blobs/<sha>, revB the same}."""
    blobs = cache / "blobs"
    blobs.mkdir(parents=True)
    revs = []
    for rev in ("revA", "revB"):
        folder = cache / "snapshots" / rev
        folder.mkdir(parents=True)
        revs.append(folder)
    for name in sorted(os.listdir(template)):
        data = (template / name).read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        (blobs / digest).write_bytes(data)
        for folder in revs:
            os.symlink(f"../../blobs/{digest}", folder / name)
    return blobs, revs[0], revs[1]


def build_fleet(base: Path) -> Fleet:
    base.mkdir(parents=True, exist_ok=True)
    model = base / "tiny-llama"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(TINY))
    root = base / "fleet"
    root.mkdir()
    template = compile_tiny(model, base / "template")

    art = Path(shutil.copytree(template, root / "art"))
    backup = root / "art.bak"
    _hard_link_copy(art, backup)
    blobs, rev_a, rev_b = _hf_cache(template, root / "hf" / "models--org--tiny")

    outside = Path(shutil.copytree(template, base / "outside" / "art-out"))
    linked = root / "linked-out"
    os.symlink(outside, linked)
    selfloop = root / "selfloop"
    os.symlink("selfloop", selfloop)
    up = root / "up"
    os.symlink("..", up)

    hand_edit = Path(shutil.copytree(template, root / "hand-edit"))
    config = hand_edit / "rbln_config.json"
    raw = json.loads(config.read_text())
    raw["kvcache_num_blocks"] = 3  # the floor: a valid-looking count, but no .rbln header holds it
    config.write_text(json.dumps(raw, indent=2))

    truncated = Path(shutil.copytree(template, root / "truncated"))
    with open(truncated / "prefill.rbln", "r+b") as f:
        f.truncate(os.path.getsize(truncated / "prefill.rbln") - 4096)
    zero = Path(shutil.copytree(template, root / "zero-byte"))
    (zero / "decoder_batch_2.rbln").write_bytes(b"")
    overwritten = Path(shutil.copytree(template, root / "overwritten"))
    with open(overwritten / "prefill.rbln", "r+b") as f:
        f.write(b"\0" * 4096)

    llama70b = write_artifact(
        plan_compile(
            CompileRequest(
                model_id="meta-llama/Llama-3.3-70B-Instruct",
                npu="RBLN-CA25",
                num_devices=16,
                batch_size=4,
                max_seq_len=32_768,
                kvcache_partition_len=16_384,
            )
        ),
        root / "llama-3.3-70b-ca25x16",
    )
    sibling = base / "fleet2"
    sibling.mkdir()
    return Fleet(
        base, root, art, backup, blobs, rev_a, rev_b, outside, linked, selfloop, up, hand_edit, truncated, zero,
        overwritten, llama70b, sibling,
    )  # fmt: skip
