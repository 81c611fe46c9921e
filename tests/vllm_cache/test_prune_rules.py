"""Which entries a prune selects (--older-than, --keep-last), and what a prune killed midway leaves."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import LocalFolder
from rbln_artifact_studio.core.portable.vllm_cache_disk import prune
from rbln_artifact_studio.core.vllm_cache.entries import CacheEntry
from rbln_artifact_studio.core.vllm_cache.prune import parse_duration, plan_prune
from rbln_artifact_studio.places.vllm_cache import read_cache
from vllm_cache.cache_fixture import build_cache

DAY = 86400


def _entry(name: str, model: str, used_days_ago: float, status: str = "ok") -> CacheEntry:
    now = 1_000 * DAY
    return CacheEntry(
        name, "compiled_models", name, status, [status], 100, used=int(now - used_days_ago * DAY), model=model
    )


def test_older_than_and_keep_last_select_by_last_use_and_never_one_in_use() -> None:
    now = 1_000 * DAY
    entries = [
        _entry("a1", "a", 1),
        _entry("a2", "a", 10),
        _entry("a3", "a", 40),
        _entry("b1", "b", 50, status="in-use"),
        _entry("b2", "b", 60),
    ]
    old = plan_prune(entries, now, older_than=parse_duration("30d"))
    assert sorted(e.name for e, _ in old.remove) == ["a3", "b2"]
    assert dict((e.name, why) for e, why in old.keep)["b1"].startswith("in use")
    last = plan_prune(entries, now, keep_last=1)
    assert sorted(e.name for e, _ in last.remove) == ["a2", "a3", "b2"]  # b1 is b's most recent, and in use anyway
    assert plan_prune(entries, now).remove == []  # no rule: nothing
    assert parse_duration("12h") == 12 * 3600 and parse_duration("2w") == 14 * DAY
    with pytest.raises(StudioError, match="30d"):
        parse_duration("soon")


def test_a_prune_killed_midway_leaves_no_entry_and_the_next_prune_finishes_it(tmp_path: Path) -> None:
    root = tmp_path / "vllm"
    folders = build_cache(root)
    # What a prune killed after its rename leaves: the entry under a hidden staging name of a pid that is gone.
    staged = root / "compiled_models" / f".{folders['stale'].name}.pruning-999999999-0a0b0c0d"
    shutil.move(folders["stale"], staged)
    names = {e.name for e in read_cache(LocalFolder(root)).entries}
    assert folders["stale"].name not in names and staged.name not in names  # no hit, no entry
    [result] = prune(str(root), [f"compiled_models/{folders['incomplete'].name}"])
    assert result["removed"] and not staged.exists() and not folders["incomplete"].exists()


def test_keep_last_counts_a_model_s_entries_together_whether_or_not_their_key_is_known() -> None:
    now = 1_000 * DAY
    entries = [  # the newest is known by its hub id; the older two only by their folder's name (key not recovered)
        _entry("Qwen_Qwen3-0.6B_0000000000000001", "Qwen/Qwen3-0.6B", 1),
        _entry("Qwen_Qwen3-0.6B_0000000000000002", "Qwen_Qwen3-0.6B", 2, status="incomplete"),
        _entry("Qwen_Qwen3-0.6B_0000000000000003", "Qwen_Qwen3-0.6B", 3, status="stale"),
    ]
    plan = plan_prune(entries, now, keep_last=1)
    assert sorted(e.name[-1] for e, _ in plan.remove) == ["2", "3"]
    hours = plan_prune(entries[:1], now, older_than=parse_duration("2h"))
    assert [why for _, why in hours.remove] == ["unused for 1 day"]
    minutes = plan_prune([_entry("m_0000000000000004", "m", 0.01)], now, older_than=parse_duration("5m"))
    assert [why for _, why in minutes.remove] == ["unused for 14 minutes"]
