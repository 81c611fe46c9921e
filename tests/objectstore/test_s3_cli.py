"""The commands on s3:// locations, as a user with the AWS chain set up for a store runs them (no other set-up)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from objectstore.conftest import BucketFixture

Run = Callable[..., subprocess.CompletedProcess[str]]


def test_scan_inspect_get_and_resize_on_a_bucket(
    bucket: BucketFixture, cr13_artifact: Path, run_cli: Run, tmp_path: Path
) -> None:
    bucket.upload(cr13_artifact, "fleet/qwen")
    url = bucket.url("fleet/qwen")
    scanned = run_cli("scan", bucket.url("fleet"), "--json")
    assert scanned.returncode == 0, scanned.stderr
    [row] = json.loads(scanned.stdout)
    assert (row["path"], row["status"], row["kvcache_num_blocks"]) == (url, "ok", 21)
    inspected = run_cli("inspect", url)
    assert inspected.returncode == 0 and inspected.stdout.startswith(f"{url}  [ok]"), inspected.stderr
    assert run_cli("get-kvcache-num-blocks", url).stdout.strip() == "21"
    in_place = run_cli("set-kvcache-num-blocks", url, "12")
    assert in_place.returncode == 0, in_place.stderr
    assert in_place.stdout.strip().endswith(f"Set kvcache_num_blocks to 12 for artifact at {url}")
    copy = run_cli("set-kvcache-num-blocks", url, "14", "--output-dir", "fleet/qwen-14")  # a prefix beside it
    assert copy.returncode == 0, copy.stderr
    assert run_cli("get-kvcache-num-blocks", bucket.url("fleet/qwen-14")).stdout.strip() == "14"
    down = run_cli("set-memory-budget", url, "0.3", "--output-dir", str(tmp_path / "here"))
    assert down.returncode == 0, down.stderr
    assert run_cli("get-kvcache-num-blocks", tmp_path / "here").stdout.strip() == "21"
    up = run_cli("set-kvcache-num-blocks", tmp_path / "here", "13", "--output-dir", bucket.url("fleet/back"))
    assert up.returncode == 0, up.stderr
    assert run_cli("get-kvcache-num-blocks", bucket.url("fleet/back")).stdout.strip() == "13"
    for command in ("serving", "explore"):
        shown = run_cli(command, url)
        assert shown.returncode == 0 and url in shown.stdout, shown.stderr
    planned = run_cli("plan", url, bucket.url("fleet/qwen-14"))
    assert planned.returncode == 0 and "qwen-14" in planned.stdout, planned.stderr


def test_errors_exit_1_without_a_traceback(bucket: BucketFixture, run_cli: Run) -> None:
    cases = {
        ("scan", "s3://no-such-bucket/fleet"): "no bucket 'no-such-bucket'",
        ("inspect", bucket.url("nothing/here")): "holds no objects",
    }
    for args, message in cases.items():
        out = run_cli(*args)
        assert out.returncode == 1 and message in out.stderr and "Traceback" not in out.stderr, out.stderr
    wrong = run_cli("scan", bucket.url(), env={"AWS_SECRET_ACCESS_KEY": "wrong"})
    assert wrong.returncode == 1 and "refused the credentials" in wrong.stderr and "Traceback" not in wrong.stderr


def test_without_the_extra_the_command_names_it(run_cli: Run, tmp_path: Path) -> None:
    """boto3 absent (a package that cannot be imported shadows it): the command says which extra to install."""
    for name in ("boto3", "obstore"):
        (tmp_path / "absent" / name).mkdir(parents=True)
        (tmp_path / "absent" / name / "__init__.py").write_text("raise ImportError('not installed here')\n")
    import os

    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path / "absent"), os.environ.get("PYTHONPATH", "")])}
    from conftest import SRC

    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env["PYTHONPATH"]])
    out = run_cli("scan", "s3://models/fleet", env=env)
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    assert "pip install 'rbln-artifact-studio[s3]'" in out.stderr
    local = run_cli("scan", tmp_path, env=env)  # the rest of the studio does not need it
    assert local.returncode == 0, local.stderr
