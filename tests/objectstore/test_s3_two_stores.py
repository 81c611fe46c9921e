"""A bucket is named with its store: `s3://PROFILE@BUCKET/PREFIX` reaches that profile's store (two real SeaweedFS,
one bucket name in each, different artifacts at the same key), in every command; one command reads from one store
and writes to the other."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from objectstore.conftest import TwoStores

Run = Callable[..., subprocess.CompletedProcess[str]]


def same_key_two_artifacts(stores: TwoStores, cr13_artifact: Path, ca25_artifact: Path) -> None:
    """fleet/qwen holds Qwen3-8B on one CR13 (21 blocks) in store a, on four CA25 (14 blocks) in store b."""
    stores.a.upload(cr13_artifact, "fleet/qwen")
    stores.b.upload(ca25_artifact, "fleet/qwen")


def test_get_inspect_scan_and_plan_read_each_locations_own_store(
    two_stores: TwoStores, cr13_artifact: Path, ca25_artifact: Path, run_cli: Run
) -> None:
    same_key_two_artifacts(two_stores, cr13_artifact, ca25_artifact)
    for profile, blocks in (("a", "21"), ("b", "14")):
        url = two_stores.url(profile, "fleet/qwen")
        got = run_cli("get-kvcache-num-blocks", url)
        assert (got.returncode, got.stdout.strip()) == (0, blocks), got.stderr
        inspected = run_cli("inspect", url, "--json")
        assert inspected.returncode == 0, inspected.stderr
        shown = json.loads(inspected.stdout)
        assert (shown["path"], shown["kvcache_num_blocks"]) == (url, int(blocks))
        scanned = run_cli("scan", two_stores.url(profile, "fleet"), "--json", "--no-cache")
        assert scanned.returncode == 0, scanned.stderr
        [row] = json.loads(scanned.stdout)
        assert (row["path"], row["kvcache_num_blocks"]) == (url, int(blocks))
    # The chain's own store (AWS_ENDPOINT_URL names store a) stays what s3://BUCKET/PREFIX reads.
    assert run_cli("get-kvcache-num-blocks", two_stores.a.url("fleet/qwen")).stdout.strip() == "21"
    both = run_cli("plan", two_stores.url("a", "fleet/qwen"), two_stores.url("b", "fleet/qwen"))  # one command
    assert both.stderr == "", both.stderr  # exit 1: two NPU families are not comparable, each planned on its own
    assert "RBLN-CR13 x1, kvcache_num_blocks 21" in both.stdout, both.stdout
    assert "RBLN-CA25 x4, kvcache_num_blocks 14" in both.stdout, both.stdout


def test_a_resize_from_store_a_into_store_b_lands_in_b_only(
    two_stores: TwoStores, cr13_artifact: Path, ca25_artifact: Path, run_cli: Run
) -> None:
    same_key_two_artifacts(two_stores, cr13_artifact, ca25_artifact)
    a_before, b_before = two_stores.a.objects(), two_stores.b.objects()
    source, output = two_stores.url("a", "fleet/qwen"), two_stores.url("b", "fleet/qwen-12")
    done = run_cli("set-kvcache-num-blocks", source, "12", "--output-dir", output)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(f"Set kvcache_num_blocks to 12 for artifact at {output}"), done.stdout
    assert two_stores.a.objects() == a_before  # store a only read: no new prefix, nothing rewritten
    written = set(two_stores.b.objects()) - set(b_before)
    assert {k.removeprefix("fleet/qwen-12/") for k in written} == {
        k.removeprefix("fleet/qwen/") for k in two_stores.a.objects("fleet/qwen/")
    }
    assert run_cli("get-kvcache-num-blocks", output).stdout.strip() == "12"
    assert run_cli("inspect", output, "--json").returncode == 0
    assert run_cli("get-kvcache-num-blocks", source).stdout.strip() == "21"
    again = run_cli("set-kvcache-num-blocks", source, "12", "--output-dir", output)  # the output is taken now
    assert again.returncode == 1 and "not empty" in again.stderr and "Traceback" not in again.stderr, again.stderr


def test_an_unknown_profile_is_named_with_the_file_to_add_it_to(two_stores: TwoStores, run_cli: Run) -> None:
    done = run_cli("scan", f"s3://c@{two_stores.a.name}/fleet")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "no profile 'c' in ~/.aws/config" in done.stderr, done.stderr
    keys = run_cli("scan", f"s3://KEY:SECRET@{two_stores.a.name}/fleet")  # keys typed into a location
    assert keys.returncode == 1 and "never keys" in keys.stderr and "SECRET" not in keys.stderr, keys.stderr


def test_vllm_cache_list_and_prune_reach_the_locations_store(
    two_stores: TwoStores, run_cli: Run, tmp_path: Path
) -> None:
    from vllm_cache.cache_fixture import build_cache

    folders = build_cache(tmp_path / "vllm")
    two_stores.b.upload(tmp_path / "vllm", "nodes/n1/vllm")  # store b only; the chain's own store is a
    root = two_stores.url("b", "nodes/n1/vllm")
    listed = run_cli("vllm-cache", "list", root, "--json")
    assert listed.returncode == 3, listed.stderr  # its stale and incomplete entries
    entries = {e["name"]: e for e in json.loads(listed.stdout)}
    ok = folders["ok"].name
    assert (entries[ok]["status"], entries[ok]["path"]) == ("ok", f"{root}/compiled_models/{ok}")
    before = two_stores.b.objects()
    pruned = run_cli("vllm-cache", "prune", root, "--stale")
    assert pruned.returncode == 0, pruned.stderr
    stale = f"nodes/n1/vllm/compiled_models/{folders['stale'].name}/"
    assert {k for k in before if not k.startswith(stale)} == set(two_stores.b.objects()) != set(before)
    assert two_stores.a.objects() == {}


def add_profile(stores: TwoStores, name: str, keys: tuple[str, str], endpoint: str | None) -> None:
    """One more profile in the test's ~/.aws/config and ~/.aws/credentials (the files the environment names), as
    `aws configure --profile` adds one."""
    with open(os.environ["AWS_CONFIG_FILE"], "a") as out:
        out.write(f"\n[profile {name}]\nregion = us-east-1\n" + (f"endpoint_url = {endpoint}\n" if endpoint else ""))
    with open(os.environ["AWS_SHARED_CREDENTIALS_FILE"], "a") as out:
        out.write(f"\n[{name}]\naws_access_key_id = {keys[0]}\naws_secret_access_key = {keys[1]}\n")


def test_a_profile_without_endpoint_url_reaches_the_chains_endpoint_with_its_own_keys(
    two_stores: TwoStores, cr13_artifact: Path, ca25_artifact: Path, run_cli: Run
) -> None:
    same_key_two_artifacts(two_stores, cr13_artifact, ca25_artifact)
    store = two_stores.a.store
    add_profile(two_stores, "keys-only", (store.access_key, store.secret_key), None)
    wrong = {"AWS_ACCESS_KEY_ID": "NOTTHEKEY", "AWS_SECRET_ACCESS_KEY": "not-the-secret"}  # the profile's keys decide
    got = run_cli("get-kvcache-num-blocks", two_stores.url("keys-only", "fleet/qwen"), env=wrong)
    assert (got.returncode, got.stdout.strip()) == (0, "21"), got.stderr  # AWS_ENDPOINT_URL: store a, as aws has it
    to_b = run_cli(
        "get-kvcache-num-blocks",
        two_stores.url("keys-only", "fleet/qwen"),
        env={"AWS_ENDPOINT_URL": two_stores.b.store.endpoint},
    )
    assert (to_b.returncode, to_b.stdout.strip()) == (0, "14"), to_b.stderr


def test_keys_a_store_refuses_are_named_by_their_profile_and_never_shown(
    two_stores: TwoStores, cr13_artifact: Path, run_cli: Run
) -> None:
    two_stores.a.upload(cr13_artifact, "fleet/qwen")
    add_profile(two_stores, "Lab.Ops-2", ("WRONGKEYID", "wrong-secret-never-shown"), two_stores.b.store.endpoint)
    done = run_cli("inspect", two_stores.url("Lab.Ops-2", "fleet/qwen"))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "refused the credentials" in done.stderr and two_stores.b.store.endpoint in done.stderr, done.stderr
    assert "under [Lab.Ops-2] in ~/.aws/credentials" in done.stderr, done.stderr
    assert "AWS_ACCESS_KEY_ID" not in done.stderr and "wrong-secret-never-shown" not in done.stderr, done.stderr
    other = run_cli("get-kvcache-num-blocks", two_stores.url("a", "fleet/qwen"))  # store a's own keys still serve
    assert (other.returncode, other.stdout.strip()) == (0, "21"), other.stderr


def test_a_profile_whose_store_does_not_answer_is_one_line_naming_its_endpoint_url(
    two_stores: TwoStores, run_cli: Run
) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"  # nothing listens here once the socket is closed
    add_profile(two_stores, "down", (two_stores.a.store.access_key, two_stores.a.store.secret_key), dead)
    for command in (("scan", two_stores.url("down", "fleet")), ("get-kvcache-num-blocks", two_stores.url("down", "q"))):
        done = run_cli(*command, env={"RBLN_STUDIO_S3_TIMEOUT": "2"})
        assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
        assert f"Cannot reach the object store at {dead}" in done.stderr, done.stderr
        assert "the connection was refused" in done.stderr and "endpoint_url of profile down" in done.stderr
        assert "Generic S3 error" not in done.stderr and "list-type" not in done.stderr, done.stderr


def test_a_buckets_rows_say_when_each_artifact_was_last_written(
    two_stores: TwoStores, cr13_artifact: Path, run_cli: Run
) -> None:
    import time

    started = int(time.time())
    two_stores.b.upload(cr13_artifact, "fleet/qwen")
    uploaded = int(time.time())
    for flags in (("--no-cache",), (), ()):  # read, then from the scan cache
        scanned = run_cli("scan", two_stores.url("b", "fleet"), "--json", *flags)
        [row] = json.loads(scanned.stdout)
        assert row["modified"] is not None and started - 1 <= row["modified"] <= uploaded + 1, (flags, row)


def test_a_password_in_a_profiles_endpoint_url_is_never_in_an_error(
    two_stores: TwoStores, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the desktop shows of a failed job is the error itself (no terminal's redaction on the way)."""
    from rbln_artifact_studio.core.errors import StudioError
    from rbln_artifact_studio.core.location import parse_bucket_prefix
    from rbln_artifact_studio.objectstore.store import Bucket

    monkeypatch.setenv("RBLN_STUDIO_S3_TIMEOUT", "2")
    store = two_stores.a.store
    add_profile(two_stores, "pw", (store.access_key, store.secret_key), "http://ops:hunter2-not-shown@127.0.0.1:9")
    where = parse_bucket_prefix(two_stores.url("pw", "fleet"))
    with pytest.raises(StudioError) as err:
        Bucket(where).listing(where)
    assert "hunter2-not-shown" not in str(err.value) and "127.0.0.1:9" in str(err.value), err.value
