"""Reading a server's NPUs: exact bytes from `rbln-stat -j`, the text table as fallback (both title spellings),
and output that cannot be true refused with the line or entry named."""

from __future__ import annotations

import json

import pytest
from fakes import fake_npu_tool  # the fake prints what these tests read back

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.npu_status import ReadForm
from rbln_artifact_studio.remote.devices import parse_device_json, parse_device_table, parse_tool_output

ATOM_AVAILABLE = 16_877_879_296  # DESIGN section 2: 16 GiB less the 288 MiB reserve
CR13_AVAILABLE = 150_323_855_360
SETUP = {
    "devices": [
        {
            "name": "RBLN-CA12",
            "used": 2_576_980_378,
            "total": ATOM_AVAILABLE,
            "contexts": [{"pid": 4242, "process": "vllm", "memalloc": 2_576_980_378}],
        },
        {"name": "RBLN-CR13", "used": 0, "total": CR13_AVAILABLE, "contexts": []},
    ]
}


def test_json_gives_exact_bytes_and_the_contexts() -> None:
    devices, version = parse_device_json(fake_npu_tool._json(SETUP))
    assert version == "1.3.73"
    assert [(d.index, d.name, d.used, d.total, d.free, d.exact) for d in devices] == [
        (0, "RBLN-CA12", 2_576_980_378, ATOM_AVAILABLE, ATOM_AVAILABLE - 2_576_980_378, True),
        (1, "RBLN-CR13", 0, CR13_AVAILABLE, CR13_AVAILABLE, True),
    ]
    [ctx] = devices[0].processes
    assert (ctx.npu, ctx.pid, ctx.name, ctx.memory, ctx.ctx_id) == (0, 4242, "vllm", 2_576_980_378, "0")


@pytest.mark.parametrize("spelling", ["Infomation", "Information"])
def test_the_text_table_in_both_spellings_rounds_to_a_tenth_of_a_gib(spelling: str) -> None:
    text = fake_npu_tool._text({**SETUP, "spelling": spelling})
    devices = parse_device_table(text)
    assert [d.total for d in devices] == [ATOM_AVAILABLE, CR13_AVAILABLE]  # 15.7 GiB read as the catalog's figure
    assert devices[0].used == int(2.4 * 2**30) and not devices[0].exact
    assert devices[0].processes[0].pid == 4242


def test_the_marker_line_picks_the_form() -> None:
    status = parse_tool_output("npu1", "#tool rbln-stat json\n" + fake_npu_tool._json(SETUP))
    assert (status.tool, status.form, status.devices[0].used) == ("rbln-stat", ReadForm.JSON, 2_576_980_378)
    status = parse_tool_output("npu1", "#tool rbln-smi text\n" + fake_npu_tool._text(SETUP))
    assert (status.tool, status.form) == ("rbln-smi", ReadForm.TEXT)


def _rows(text: str) -> list[str]:
    return text.splitlines()


def test_an_npu_listed_twice_in_the_table_names_both_lines() -> None:
    lines = _rows(fake_npu_tool._text(SETUP))
    row = next(i for i, line in enumerate(lines) if line.startswith("| 1 "))
    lines.insert(row + 1, lines[row].replace("0.0GiB /", "1.0GiB /"))
    with pytest.raises(StudioError, match=rf"line {row + 2}: NPU 1 is listed twice \(first on line {row + 1}\)"):
        parse_device_table("\n".join(lines), "rbln-smi", "npu1")


def test_used_above_total_is_refused_not_read_as_zero_free() -> None:
    text = fake_npu_tool._text(SETUP).replace("2.4GiB / 15.7GiB", "17.0GiB / 15.7GiB")
    with pytest.raises(StudioError, match=r"cannot be true \(line \d+: NPU 0 uses 17.0GiB of 15.7GiB\)"):
        parse_device_table(text, "rbln-smi", "npu1")
    data = json.loads(fake_npu_tool._json(SETUP))
    data["devices"][1]["memory"]["used"] = str(CR13_AVAILABLE + 1)
    with pytest.raises(StudioError, match=r"devices\[1\]: NPU 1 uses 150,323,855,361 bytes of 150,323,855,360"):
        parse_device_json(json.dumps(data))


def test_negative_sizes_duplicates_and_strangers_in_the_json_are_refused() -> None:
    data = json.loads(fake_npu_tool._json(SETUP))
    data["devices"][0]["memory"]["used"] = "-5"
    with pytest.raises(StudioError, match=r"devices\[0\].memory.used is negative"):
        parse_device_json(json.dumps(data))
    data = json.loads(fake_npu_tool._json(SETUP))
    data["devices"][1]["npu"] = 0
    with pytest.raises(StudioError, match=r"devices\[1\]: NPU 0 is listed twice"):
        parse_device_json(json.dumps(data))
    data = json.loads(fake_npu_tool._json(SETUP))
    data["contexts"][0]["npu"] = 7
    with pytest.raises(StudioError, match=r"contexts\[0\] is on NPU 7"):
        parse_device_json(json.dumps(data))


def test_a_negative_size_in_the_table_is_refused() -> None:
    text = fake_npu_tool._text(SETUP).replace("2.4GiB / 15.7GiB", "-2.4GiB / 15.7GiB")
    with pytest.raises(StudioError, match=r"line \d+: NPU 0's used memory is negative"):
        parse_device_table(text)


def test_garbage_is_an_error_naming_the_line() -> None:
    with pytest.raises(StudioError, match=r"line 3: not JSON"):
        parse_device_json('{\n"devices": [\n  {"npu": 0, "memory": {"used": "12')
    text = fake_npu_tool._text(SETUP)
    lines = _rows(text)
    row = next(i for i, line in enumerate(lines) if line.startswith("| 1 "))
    lines[row] = "| zz | garbage |"
    with pytest.raises(StudioError, match=rf"line {row + 1}: a device row of 2 columns"):
        parse_device_table("\n".join(lines))
    with pytest.raises(StudioError, match=r"listed no NPUs \(it printed: 'Segmentation fault'\)"):
        parse_tool_output("npu1", "#tool rbln-smi text\nSegmentation fault\n")


def test_a_total_no_npu_has_is_refused_with_where_it_was_printed() -> None:
    data = json.loads(fake_npu_tool._json(SETUP))
    data["devices"][1]["memory"]["total"] = str(10**31)  # would rank first in `place`
    with pytest.raises(
        StudioError, match=r"devices\[1\]: NPU 1's memory total 1e\+31 bytes is more than any Rebel100 NPU has"
    ):
        parse_device_json(json.dumps(data))
    lines = _rows(fake_npu_tool._text(SETUP))
    row = next(i for i, line in enumerate(lines) if line.startswith("| 0 "))
    lines[row] = lines[row].replace("2.4GiB / 15.7GiB", "2.4GiB / 900.0GiB")
    with pytest.raises(
        StudioError, match=rf"line {row + 1}: NPU 0's memory total 966,367,641,600 bytes is more than any ATOM NPU"
    ):
        parse_device_table("\n".join(lines), "rbln-smi", "npu1")


def test_a_context_larger_than_its_npu_or_than_its_used_memory_is_refused() -> None:
    data = json.loads(fake_npu_tool._json(SETUP))
    data["devices"][0]["memory"]["used"] = "100"
    data["contexts"][0]["memalloc"] = str(3 * ATOM_AVAILABLE)
    with pytest.raises(
        StudioError, match=r"contexts\[0\]: the context of process 4242 allocates .* more than its NPU 0"
    ):
        parse_device_json(json.dumps(data))
    data["contexts"][0]["memalloc"] = str(8 * 2**30)  # fits the NPU, yet the NPU says 100 B are used
    with pytest.raises(StudioError, match=r"contexts\[0\]: the contexts on NPU 0 allocate 8 GiB, while the NPU re"):
        parse_device_json(json.dumps(data))
    text = fake_npu_tool._text(SETUP).replace("2.4GiB / 15.7GiB", "0.0GiB / 15.7GiB")
    row = next(i for i, line in enumerate(_rows(text)) if "4242" in line)
    with pytest.raises(StudioError, match=rf"line {row + 1}: the contexts on NPU 0 allocate 2.4 GiB, while the NPU"):
        parse_device_table(text, "rbln-smi", "npu1")
