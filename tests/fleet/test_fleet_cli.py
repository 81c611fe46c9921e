"""Issue 16 through the CLI, on a fleet laid out as real ones are: writes stay in the artifact, links never
duplicate or hide, one verdict everywhere, damage named, impossible counts refused, outputs checked."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rbln_artifact_studio.core.fleet.scan import is_inside, scan
from rbln_artifact_studio.core.status import Status

from .layouts import Fleet, tree_bytes

EXIT_INVALID = 3


def scan_rows(run_cli, root: Path) -> tuple[list[dict], int]:
    out = run_cli("scan", root, "--json", "--no-cache")
    return json.loads(out.stdout), out.returncode


def inspect_json(run_cli, path: Path) -> tuple[dict, int]:
    out = run_cli("inspect", path, "--json")
    return json.loads(out.stdout), out.returncode


def count(run_cli, path: Path) -> int:
    return int(run_cli("get-kvcache-num-blocks", path).stdout)


# ---- 2. links: each real artifact once, no loops, never out of the root, a failing entry is a row ------


def test_scan_lists_each_artifact_once_and_stays_inside_the_root(run_cli, fleet_ro: Fleet) -> None:
    rows, code = scan_rows(run_cli, fleet_ro.root)
    paths = [r["path"] for r in rows]
    assert len(paths) == len(set(paths))  # `up -> ..` and `selfloop` add nothing twice
    assert all(is_inside(p, str(fleet_ro.root)) for p in paths)  # `up` never leads out of the root
    assert sorted(paths) == sorted(str(p) for p in fleet_ro.layouts.values())
    by_path = {r["path"]: r for r in rows}
    linked = by_path[str(fleet_ro.linked)]
    assert linked["link_target"] == str(fleet_ro.outside) and linked["status"] == "ok"
    assert linked["name"] == "linked-out"
    text = run_cli("scan", fleet_ro.root).stdout
    assert f"linked-out -> {fleet_ro.outside}" in text  # marked as a link, with its target
    loop = by_path[str(fleet_ro.selfloop)]
    assert loop["status"] == "invalid" and "leads back to itself" in loop["problems"][0]
    assert code == EXIT_INVALID  # the fleet holds invalid artifacts (docs/cli.md)


def test_a_link_to_the_root_itself_or_inside_it_adds_no_row(fleet: Fleet) -> None:
    os.symlink(".", fleet.root / "here")
    os.symlink("art", fleet.root / "art-link")
    paths = [r.path for r in scan(fleet.root, use_cache=False)]
    assert sorted(paths) == sorted(str(p) for p in fleet.layouts.values())


# ---- 3/4. one verdict; damage named ------------------------------------------------------------------


def test_scan_inspect_and_serving_agree_on_every_layout(run_cli, fleet_ro: Fleet) -> None:
    rows, _ = scan_rows(run_cli, fleet_ro.root)
    statuses = {}
    for row in rows:
        if row["path"] == str(fleet_ro.selfloop):
            continue  # not an artifact: nothing to inspect
        data, code = inspect_json(run_cli, Path(row["path"]))
        messages = [p["message"] for p in data["problems"]]
        assert (row["status"], row["problems"]) == (data["status"], messages), row["path"]
        assert code == (EXIT_INVALID if row["status"] == "invalid" else 0)
        serving = run_cli("serving", row["path"])
        if row["status"] == "invalid":
            assert serving.returncode == EXIT_INVALID and "Concurrency: 0 of" in serving.stdout
        statuses[Path(row["path"]).name] = row["status"]
    assert statuses == {
        "art": "ok",
        "art.bak": "ok",
        "revA": "ok",
        "revB": "ok",
        "linked-out": "ok",
        "llama-3.3-70b-ca25x16": "ok",
        "hand-edit": "invalid",
        "truncated": "invalid",
        "zero-byte": "invalid",
        "overwritten": "invalid",
    }


def test_damaged_graphs_are_named_never_taken_for_real_compiler_output(run_cli, fleet_ro: Fleet) -> None:
    for folder, file, why in (
        (fleet_ro.zero, "decoder_batch_2.rbln", "empty: 0 bytes"),
        (fleet_ro.truncated, "prefill.rbln", "truncated"),
        (fleet_ro.overwritten, "prefill.rbln", "broken header"),
    ):
        data, code = inspect_json(run_cli, folder)
        assert code == EXIT_INVALID and data["status"] == "invalid"
        assert any(p["message"].startswith(f"damaged: {file} ({why}") for p in data["problems"]), data["problems"]
        assert "real compiler" not in (data["allocations_unknown_reason"] or "")


def test_resizing_a_damaged_artifact_names_the_file(run_cli, fleet: Fleet) -> None:
    for folder, file in ((fleet.zero, "decoder_batch_2.rbln"), (fleet.overwritten, "prefill.rbln")):
        before = tree_bytes(folder)
        out = run_cli("set-kvcache-num-blocks", folder, "3")
        assert out.returncode == 1 and f"damaged: {file}" in out.stderr
        assert "optimum-rbln-cli" not in out.stderr and "Traceback" not in out.stderr
        assert tree_bytes(folder) == before


def test_the_fast_scan_never_says_ok_before_the_full_check(fleet: Fleet) -> None:
    fast = {Path(r.path).name: r for r in scan(fleet.root, use_cache=False, verify=False)}
    statuses = {name: r.status for name, r in fast.items()}
    assert statuses.pop("selfloop") is Status.INVALID  # an entry that cannot be read: nothing to check
    assert set(statuses.values()) == {Status.CHECKING}  # the full check has the last word on every artifact
    assert fast["hand-edit"].problems == []  # its config alone looks fine; the headers say otherwise
    assert fast["zero-byte"].problems[0].startswith("damaged: decoder_batch_2.rbln")  # seen from the listing
    full = {Path(r.path).name: r.status for r in scan(fleet.root, use_cache=False)}
    assert full["hand-edit"] is Status.INVALID and full["art"] is Status.OK
    cached = {Path(r.path).name: r.status for r in scan(fleet.root)}  # a second scan reads the cache
    assert cached == full


# ---- 1. writes stay inside the artifact --------------------------------------------------------------


def test_a_hard_linked_backup_is_never_written(run_cli, fleet: Fleet) -> None:
    backup = tree_bytes(fleet.backup)
    out = run_cli("set-kvcache-num-blocks", fleet.art, "3")
    assert out.returncode == 0, out.stderr
    assert "note: copied decoder_batch_2.rbln (a hard link shared by 2 names)" in out.stderr
    assert tree_bytes(fleet.backup) == backup
    assert count(run_cli, fleet.art) == 3 and count(run_cli, fleet.backup) == 4
    assert inspect_json(run_cli, fleet.backup) == inspect_json(run_cli, fleet.backup)  # stable
    data, code = inspect_json(run_cli, fleet.backup)
    assert code == 0 and data["status"] == "ok"
    for name in ("prefill.rbln", "decoder_batch_2.rbln"):
        assert os.stat(fleet.art / name).st_nlink == 1 and os.stat(fleet.backup / name).st_nlink == 1
    rows, _ = scan_rows(run_cli, fleet.root)
    assert {Path(r["path"]).name: r["status"] for r in rows}["art.bak"] == "ok"


def test_a_hugging_face_snapshot_resize_leaves_the_blobs_and_the_other_revision(run_cli, fleet: Fleet) -> None:
    blobs = tree_bytes(fleet.blobs)
    out = run_cli("set-kvcache-num-blocks", fleet.rev_a, "3")
    assert out.returncode == 0, out.stderr
    assert tree_bytes(fleet.blobs) == blobs
    assert count(run_cli, fleet.rev_a) == 3 and count(run_cli, fleet.rev_b) == 4
    data, code = inspect_json(run_cli, fleet.rev_b)
    assert code == 0 and data["status"] == "ok"
    assert all((fleet.rev_b / name).is_symlink() for name in os.listdir(fleet.rev_b))
    for name in ("prefill.rbln", "decoder_batch_2.rbln", "rbln_config.json"):
        assert not (fleet.rev_a / name).is_symlink()  # revA owns the files it changed now


def test_a_copy_from_a_snapshot_owns_its_files(run_cli, fleet: Fleet) -> None:
    blobs = tree_bytes(fleet.blobs)
    out_dir = fleet.base / "copies" / "revA-3"
    out = run_cli("set-kvcache-num-blocks", fleet.rev_a, "3", "--output-dir", out_dir)
    assert out.returncode == 0, out.stderr
    assert tree_bytes(fleet.blobs) == blobs and count(run_cli, fleet.rev_a) == 4
    assert not any(p.is_symlink() for p in out_dir.iterdir())
    assert inspect_json(run_cli, out_dir)[1] == 0 and count(run_cli, out_dir) == 3


# ---- 5. impossible counts refused --------------------------------------------------------------------


def test_a_count_that_cannot_fit_the_dram_is_refused_with_the_largest_that_does(run_cli, fleet: Fleet) -> None:
    before = tree_bytes(fleet.llama70b)
    out = run_cli("set-kvcache-num-blocks", fleet.llama70b, "1000")
    assert out.returncode == 1 and "kvcache_num_blocks=1000 does not fit RBLN-CA25" in out.stderr
    largest = int(out.stderr.split("The largest count that fits is ")[1].split(".")[0])
    assert tree_bytes(fleet.llama70b) == before
    # The count it names does fit: the resize to it succeeds, one more is refused.
    assert run_cli("set-kvcache-num-blocks", fleet.llama70b, str(largest + 1)).returncode == 1
    ok = run_cli("set-kvcache-num-blocks", fleet.llama70b, str(largest))
    assert ok.returncode == 0 and "may fail to allocate" not in ok.stderr
    assert inspect_json(run_cli, fleet.llama70b)[0]["status"] in ("ok", "warning")


def test_compile_refuses_an_explicit_count_that_cannot_fit(run_cli, tmp_path: Path) -> None:
    out = run_cli(
        "compile", "--model-id", "Qwen/Qwen3-8B", "--npu", "RBLN-CA25", "--batch_size", "1",
        "--max_seq_len", "8192", "--kvcache_num_blocks", "100", "-o", tmp_path / "x",
    )  # fmt: skip
    assert out.returncode == 1 and "does not fit RBLN-CA25" in out.stderr and "largest count that fits" in out.stderr
    assert not (tmp_path / "x").exists()


# ---- 6. one KV-per-NPU formula, one sequences formula ------------------------------------------------


def test_70b_on_16_devices_has_one_kv_per_npu_figure(run_cli, fleet_ro: Fleet) -> None:
    rows, _ = scan_rows(run_cli, fleet_ro.root)
    row = next(r for r in rows if r["path"] == str(fleet_ro.llama70b))
    data, _ = inspect_json(run_cli, fleet_ro.llama70b)
    per_chiplet = {c["kv_cache"] for c in data["breakdown"]["chiplets"]}
    # 8 KV heads over 16 devices: one whole head per device (replicated), 1/8 of the model's KV cache each.
    assert row["kv_bytes_per_npu"] == data["kv_bytes_per_npu"] == data["kv_bytes_per_block"] * 8 // 8
    assert per_chiplet == {row["kv_bytes_per_npu"]} == {5 << 30}
    csv_out = run_cli("scan", fleet_ro.root, "--format", "csv").stdout
    line = next(x for x in csv_out.splitlines() if x.startswith("llama-3.3-70b-ca25x16,"))
    assert f",{5 << 30}," in line


def test_a_device_count_that_does_not_divide_the_heads_is_sized_as_the_tables_say(tmp_path: Path) -> None:
    from rbln_artifact_studio.core.fleet.artifact import open_artifact
    from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile, write_artifact

    request = CompileRequest(
        model_id="Qwen/Qwen3-8B", npu="RBLN-CA25", num_devices=3, batch_size=1, max_seq_len=8192,
        kvcache_num_blocks=1,
    )  # fmt: skip
    compile_plan = plan_compile(request)
    assert any("num_devices=3 does not divide the model's 8 KV heads" in w for w in compile_plan.warnings)
    folder = write_artifact(compile_plan, tmp_path / "qwen-x3")
    artifact = open_artifact(folder)
    breakdown = artifact.breakdown()
    assert breakdown is not None
    (row,) = scan(tmp_path, use_cache=False)
    kv_tables = {u.kv for u in breakdown.usages}
    # 8 KV heads over 3 devices: 3 heads on each (never 8/3 of one), as the allocation tables hold them.
    per_block = artifact.config.kv_bytes(1)
    assert per_block is not None
    assert row.kv_bytes_per_npu == artifact.kv_bytes_per_npu == per_block * 3 // 8
    assert all(abs(kv - row.kv_bytes_per_npu) < (2 << 20) * 72 for kv in kv_tables)  # 2 MiB alignment per tensor


def test_full_length_sequences_never_exceed_the_batch(run_cli, cr13_artifact: Path) -> None:
    assert run_cli("set-kvcache-num-blocks", cr13_artifact, "50").returncode == 0  # batch 8, full pool 40
    assert "8 full-length sequences" in run_cli("inspect", cr13_artifact).stdout
    assert "Concurrency: 8 of 8" in run_cli("serving", cr13_artifact).stdout
    assert run_cli("set-kvcache-num-blocks", cr13_artifact, "12").returncode == 0  # 5 blocks per sequence
    assert "2 full-length sequences" in run_cli("inspect", cr13_artifact).stdout
    assert "Concurrency: 2 of 8" in run_cli("serving", cr13_artifact).stdout


# ---- 7. outputs ---------------------------------------------------------------------------------------


def test_outputs_inside_an_artifact_are_refused_and_a_repeat_is_done(run_cli, fleet: Fleet) -> None:
    inside_other = run_cli("set-kvcache-num-blocks", fleet.art, "3", "--output-dir", fleet.llama70b / "copy")
    assert inside_other.returncode == 1 and "lies inside the artifact" in inside_other.stderr
    inside_source = run_cli("set-kvcache-num-blocks", fleet.art, "3", "--output-dir", fleet.art / "copy")
    assert inside_source.returncode == 1 and "inside the source artifact" in inside_source.stderr
    sibling = fleet.root / "art-3"  # shares a name prefix with the source: not inside it
    first = run_cli("set-kvcache-num-blocks", fleet.art, "3", "--output-dir", sibling)
    assert first.returncode == 0, first.stderr
    again = run_cli("set-kvcache-num-blocks", fleet.art, "3", "--output-dir", sibling)
    assert again.returncode == 0 and "already holds this copy" in again.stdout
    other = run_cli("set-kvcache-num-blocks", fleet.art, "4", "--output-dir", sibling)
    assert other.returncode == 1 and "exists and is not empty" in other.stderr


# ---- 8. warnings follow the computation ---------------------------------------------------------------


def test_a_budget_that_fits_more_blocks_gives_no_contradicting_warning(run_cli, cr13_artifact: Path) -> None:
    out = run_cli("set-memory-budget", cr13_artifact, "0.5")  # 21 blocks now; 0.5 of a CR13 fits more
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split("fits kvcache_num_blocks=")[1].split()[0]) > 21
    assert "above the current count" not in out.stderr and "may fail" not in out.stderr
    assert run_cli("inspect", cr13_artifact).returncode == 0
    rows = json.loads(run_cli("scan", cr13_artifact.parent, "--json").stdout)
    assert [r["status"] for r in rows] == ["ok"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores permission bits")
def test_a_read_only_cache_blob_behind_a_link_does_not_block_an_in_place_resize(run_cli, fleet: Fleet) -> None:
    for blob in fleet.blobs.iterdir():
        blob.chmod(0o444)  # as some caches keep them
    blobs = tree_bytes(fleet.blobs)
    out = run_cli("set-kvcache-num-blocks", fleet.rev_a, "3")
    assert out.returncode == 0, out.stderr
    assert tree_bytes(fleet.blobs) == blobs and count(run_cli, fleet.rev_a) == 3 and count(run_cli, fleet.rev_b) == 4


def test_plan_refuses_an_invalid_artifact_as_scan_and_inspect_call_it(run_cli, fleet_ro: Fleet) -> None:
    out = run_cli("plan", fleet_ro.art, fleet_ro.hand_edit)
    assert out.returncode == EXIT_INVALID and f"{fleet_ro.hand_edit} is invalid" in out.stderr
    assert run_cli("plan", fleet_ro.art, fleet_ro.backup).returncode == 0


def test_the_cli_rows_and_the_tables_second_pass_give_the_same_rows(fleet: Fleet) -> None:
    """The CLI reads each artifact once (the full check); the table shows fast rows, then verifies them: the
    same row either way, field by field."""
    from rbln_artifact_studio.core.fleet.verify import verify_rows

    once = list(scan(fleet.root, use_cache=False))
    fast = list(scan(fleet.root, use_cache=False, verify=False))
    settled = {r.path: r for r in fast if r.status is not Status.CHECKING}
    settled |= {r.path: r for r in verify_rows(fleet.root, fast, use_cache=False)}
    assert [settled[r.path] for r in fast] == once
