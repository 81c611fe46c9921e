"""Fleet report: the artifact table as CSV, JSON and Markdown, from the core and through `scan --format`."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.columns import COLUMNS, REPORT_COLUMNS
from rbln_artifact_studio.core.fleet.fleet_report import escape_markdown, render, text_lines, to_csv, to_markdown
from rbln_artifact_studio.core.fleet.scan import scan

HEADERS = [
    "Name",
    "Status",
    "kvcache_num_blocks",
    "Floor",
    "Full pool",
    "KV cache / NPU",
    "NPU",
    "Devices",
    "Host",  # "local", or the server of an ssh://HOST/PATH row
    "Batch",
    "max_seq_len",
    "Block size",
    "Attention",
    "Kind",
    "Model",
    "Size on disk",
    "Modified",  # when its newest file was written: a compile, a resize (issue #23 item 11)
    "Reason",
]


@pytest.fixture
def fleet(cr13_artifact: Path, ca25_artifact: Path, tmp_path: Path) -> Path:
    """Two good artifacts, one with a pipe and a comma in its name, and one broken config."""
    root = tmp_path / "fleet"
    root.mkdir()
    shutil.move(cr13_artifact, root / "qwen|cr13, v2")
    shutil.move(ca25_artifact, root / "qwen-ca25x4")
    broken = root / "broken"
    broken.mkdir()
    (broken / "rbln_config.json").write_text('{"max_seq_len": 8192, "kvcache_num_blocks": "many"}')
    return root


def markdown_cells(line: str) -> list[str]:
    """Split a table row on unescaped pipes, as a Markdown renderer does."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def test_reports_have_the_table_columns_then_the_reason() -> None:
    assert [c.title for c in REPORT_COLUMNS] == HEADERS
    assert REPORT_COLUMNS[: len(COLUMNS)] == COLUMNS  # the GUI's table shows COLUMNS (tests/gui/test_gui_export.py)


def test_csv_round_trips_exact_values(fleet: Path) -> None:
    rows = list(scan(fleet))
    table = list(csv.DictReader(io.StringIO(to_csv(rows))))
    assert [r["Name"] for r in table] == ["broken", "qwen-ca25x4", "qwen|cr13, v2"]
    cr13 = table[2]
    assert (cr13["NPU"], cr13["Devices"], cr13["Batch"], cr13["max_seq_len"]) == ("RBLN-CR13", "1", "8", "40960")
    assert (cr13["kvcache_num_blocks"], cr13["Floor"], cr13["Full pool"]) == ("21", "9", "40")
    assert int(cr13["KV cache / NPU"]) == 21 * 1152 * 2**20  # 1.125 GiB per block
    assert int(cr13["Size on disk"]) == rows[2].size_on_disk > 0
    assert (cr13["Status"], cr13["Reason"], cr13["Path"]) == ("ok", "", str(fleet / "qwen|cr13, v2"))
    broken = table[0]
    assert broken["Status"] == "invalid" and "kvcache_num_blocks" in broken["Reason"]
    assert broken["NPU"] == "" and broken["kvcache_num_blocks"] == ""


def test_markdown_escapes_pipes_and_keeps_every_cell(fleet: Path) -> None:
    text = to_markdown(scan(fleet))
    lines = text.splitlines()
    assert markdown_cells(lines[0]) == [*HEADERS, "Path"]  # the path tells same-named artifacts apart, as in CSV
    assert len(lines) == 2 + 3
    for line in lines[2:]:
        assert len(markdown_cells(line)) == len(HEADERS) + 1
    cr13 = markdown_cells(lines[4])
    assert cr13[0] == "qwen\\|cr13, v2"
    assert cr13[HEADERS.index("Kind")] == "decoder-only"
    assert cr13[-1] == escape_markdown(str(fleet / "qwen|cr13, v2"))
    assert cr13[HEADERS.index("KV cache / NPU")] == "23.62 GiB"  # 21 blocks of 1.125 GiB, readable
    assert cr13[HEADERS.index("max_seq_len")] == "40,960"  # as the table shows it
    assert escape_markdown("a|b\\c\nd") == "a\\|b\\\\c d"


def test_json_is_scan_json(fleet: Path) -> None:
    data = json.loads(render(scan(fleet), "json"))
    assert [r["name"] for r in data] == ["broken", "qwen-ca25x4", "qwen|cr13, v2"]
    assert data[1]["kvcache_num_blocks"] == 14 and data[1]["num_devices"] == 4
    with pytest.raises(StudioError, match="Unknown report format"):
        render([], "xml")


def test_cli_scan_formats(run_cli, fleet: Path) -> None:
    # The fleet holds an invalid artifact ("broken"): scan exits 3, as inspect of it does (docs/cli.md).
    as_csv = run_cli("scan", fleet, "--format", "csv")
    assert as_csv.returncode == 3, as_csv.stderr
    assert next(csv.reader(io.StringIO(as_csv.stdout))) == [*HEADERS, "Path"]
    as_md = run_cli("scan", fleet, "--format", "markdown")
    assert as_md.returncode == 3 and as_md.stdout.splitlines()[1] == "|" + "---|" * (len(HEADERS) + 1)
    as_json = run_cli("scan", fleet, "--format", "json")
    legacy = run_cli("scan", fleet, "--json")
    assert as_json.returncode == legacy.returncode == 3
    assert json.loads(as_json.stdout) == json.loads(legacy.stdout) == json.loads(render(scan(fleet), "json"))
    assert run_cli("scan", fleet, "--json", "--format", "csv").returncode == 2
    assert run_cli("scan", fleet, "--format", "xml").returncode == 2
    text = run_cli("scan", fleet)
    assert text.returncode == 3 and "3 artifact(s)" in text.stderr
    assert text.stdout == "\n".join(text_lines(scan(fleet))) + "\n"


def test_cli_scan_prints_the_tables_first_columns_as_the_table_does(fleet: Path) -> None:
    lines = list(text_lines(scan(fleet)))
    assert lines[0].split("  ")[0].strip() == "Name" and "kvcache_num_blocks" in lines[0]
    assert lines[0].split()[-1] == "Devices"  # the table's first eight columns, in its order
    cr13 = next(line for line in lines if line.startswith("qwen|cr13, v2"))
    assert cr13.split()[2:] == ["ok", "21", "9", "40", "23.62", "GiB", "RBLN-CR13", "1"]
    broken = lines.index(next(line for line in lines if line.startswith("broken")))
    assert "?" in lines[broken].split() and lines[broken + 1].startswith("    ")  # unknown cells, then the reason


def test_the_cli_docs_name_every_exported_column_in_order() -> None:
    """docs/cli.md lists the CSV/Markdown columns; Host and Modified were missing from it (issue 34)."""
    import re

    from rbln_artifact_studio.core.fleet.columns import REPORT_COLUMNS

    docs = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text(encoding="utf-8")
    paragraph = docs[docs.index("CSV and Markdown carry the artifact table's columns") :].split("\n\n")[0]
    named = [n for n in re.findall(r"`([^`]+)`", paragraph) if n in {c.title for c in REPORT_COLUMNS}]
    assert named == [c.title for c in REPORT_COLUMNS]
