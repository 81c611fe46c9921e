"""One location model: every form a user types parsed once, shown one way, and one dispatch by the kind of place."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import (
    BucketPrefix,
    LocalFolder,
    ServerFolder,
    host_of,
    is_local,
    parse_beside,
    parse_host,
    parse_location,
    same_place,
    server_url,
)
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.core.status import Status
from rbln_artifact_studio.core.storage.jsonfile import read_block_count
from rbln_artifact_studio.places import dispatch, local, ssh
from rbln_artifact_studio.places.kind import Capabilities, ScanOptions

APP = Path(__file__).resolve().parents[1] / "app" / "rbln_artifact_studio"

TYPED = [
    ("/srv/artifacts", LocalFolder(Path("/srv/artifacts"))),
    ("fleet/qwen3", LocalFolder(Path("fleet/qwen3"))),
    ("ssh://npu1/srv/a", ServerFolder("npu1", "/srv/a")),
    ("ssh://ops@10.0.0.5:2222/srv/a", ServerFolder("ops@10.0.0.5:2222", "/srv/a")),
    ("ssh://[fe80::1]:2222/srv/a", ServerFolder("[fe80::1]:2222", "/srv/a")),
    ("ssh://npu1/srv/my models", ServerFolder("npu1", "/srv/my models")),  # taken byte for byte
    ("ssh://npu1/~/artifacts", ServerFolder("npu1", "~/artifacts")),  # below the login folder
    ("s3://models/fleet", BucketPrefix("models", "fleet")),
    ("s3://models/fleet/a/", BucketPrefix("models", "fleet/a")),
    ("s3://models", BucketPrefix("models", "")),
    ("s3://lab@models/fleet", BucketPrefix("models", "fleet", "lab")),  # a profile of ~/.aws/config: its store
    ("s3+http://127.0.0.1:8333/models/fleet", BucketPrefix("models", "fleet", "", "http://127.0.0.1:8333")),
    ("s3+https://lab@s3.lab:9000/models", BucketPrefix("models", "", "lab", "https://s3.lab:9000")),
]


@pytest.mark.parametrize(("text", "expected"), TYPED)
def test_every_form_a_user_types_is_parsed_to_its_kind(text: str, expected: object) -> None:
    assert parse_location(text) == expected


@pytest.mark.parametrize(("text", "_expected"), TYPED)
def test_what_str_shows_parses_back_to_the_same_location(text: str, _expected: object) -> None:
    location = parse_location(text)
    assert parse_location(str(location)) == location
    assert parse_location(location) is location  # a Location is taken as it is


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("ssh://npu1", "names no folder; write ssh://npu1/PATH"),
        ("ssh:///srv/a", "is not a server name"),
        ("ssh://-oProxyCommand=x/srv/a", "is not a server name"),
        ("ssh://npu 1/srv/a", "is not a server name"),
        ("s3://Models/fleet", "is not a bucket name"),
        ("s3://ab/fleet", "is not a bucket name"),
        ("s3://models/../other", "a prefix of . or .. names no folder"),
        ("s3://@models/fleet", "names a profile of ~/.aws/config before @"),
        ("s3://AKIA:secret@models/fleet", "never keys"),
        ("s3+http:///models", "names no store"),
        ("s3://a@", "s3://a@ names no bucket; write s3://a@BUCKET/PREFIX"),
        ("s3://a@/fleet", "s3://a@/fleet names no bucket; write s3://a@BUCKET/PREFIX"),
        ("s3://", "s3:// names no bucket; write s3://BUCKET/PREFIX"),
        ("s3+http://a@127.0.0.1:8333", "names no bucket; write s3+http://a@127.0.0.1:8333/BUCKET/PREFIX"),
    ],
)
def test_a_malformed_location_is_refused_with_an_example(text: str, words: str) -> None:
    with pytest.raises(StudioError, match=re.escape(words)):
        parse_location(text)


def test_a_location_never_echoes_keys_typed_into_it() -> None:
    with pytest.raises(StudioError) as err:
        parse_location("s3://AKIAEXAMPLE:wJalrXUtnFEMI@models/fleet")
    assert "AKIAEXAMPLE" not in str(err.value) and "wJalrXUtnFEMI" not in str(err.value)


def test_one_bucket_of_two_stores_is_two_places_and_each_keeps_its_store() -> None:
    lab, prod = BucketPrefix("models", "fleet", "lab"), BucketPrefix("models", "fleet", "prod")
    assert lab != prod and lab != BucketPrefix("models", "fleet") and len({lab, prod, lab}) == 2
    assert lab.child("a") == BucketPrefix("models", "fleet/a", "lab") and lab.child("a").parent == lab
    assert lab.at("other") == BucketPrefix("models", "other", "lab")
    assert parse_beside("copy", lab) == BucketPrefix("models", "copy", "lab")  # a plain path: the source's store
    assert parse_beside("s3://prod@models/copy", lab) == BucketPrefix("models", "copy", "prod")
    here = BucketPrefix("models", "fleet", "", "http://127.0.0.1:8333")
    assert parse_beside("copy", here) == BucketPrefix("models", "copy", "", "http://127.0.0.1:8333")
    assert host_of(lab) == "s3://lab@models" and host_of(str(here)) == "s3+http://127.0.0.1:8333/models"
    for place in (lab, here):  # a bucket's Host cell is how the location the CLI prints starts
        assert str(place).startswith(host_of(place) + "/")
    assert not is_local("s3+http://127.0.0.1:8333/models")


def test_kinds_never_compare_equal_to_one_another() -> None:
    assert ServerFolder("models", "fleet") != BucketPrefix("models", "fleet")
    assert len({ServerFolder("h", "/a"), BucketPrefix("h", "/a"), ServerFolder("h", "/a")}) == 2
    assert LocalFolder(Path("/a")) != (Path("/a"),)


def test_a_copy_typed_as_a_plain_path_goes_beside_its_source() -> None:
    on_server = ServerFolder("npu1", "/srv/a")
    assert parse_beside("/srv/copy", on_server) == ServerFolder("npu1", "/srv/copy")
    assert parse_beside("ssh://npu2/srv/copy", on_server) == ServerFolder("npu2", "/srv/copy")
    assert parse_beside("copy", BucketPrefix("models", "fleet/a")) == BucketPrefix("models", "copy")
    assert parse_beside("/tmp/copy", LocalFolder(Path("/tmp/a"))) == LocalFolder(Path("/tmp/copy"))


def test_hosts_and_what_the_host_column_shows() -> None:
    assert parse_host("ssh://npu1") == parse_host("ssh://npu1/") == parse_host("npu1") == "npu1"
    assert parse_host(server_url("ops@npu1:2222")) == "ops@npu1:2222"
    assert host_of("ssh://npu1/srv/a") == host_of(ServerFolder("npu1", "/srv/a")) == "npu1"
    assert host_of("/srv/a") == "" and host_of("s3://models/x") == "s3://models"


def test_same_place_follows_links_of_local_folders(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert same_place(LocalFolder(tmp_path / "link"), LocalFolder(tmp_path / "real"))
    assert not same_place(ServerFolder("a", str(tmp_path / "real")), LocalFolder(tmp_path / "real"))


def test_dispatch_finds_each_kind_by_the_type_of_its_location() -> None:
    assert dispatch.kind_of(LocalFolder(Path("/a"))) is local.KIND
    assert dispatch.kind_of(ServerFolder("npu1", "/a")) is ssh.KIND
    assert set(dispatch.KIND_MODULES) == {LocalFolder, ServerFolder, BucketPrefix}  # every member of Location


def test_a_local_artifact_is_read_scanned_and_opened_through_the_dispatch(cr13_artifact: Path) -> None:
    where = parse_location(str(cr13_artifact))
    assert dispatch.read_block_count(where) == 21
    artifact = dispatch.open_artifact(where)
    assert artifact.where == where and str(artifact.where) == str(cr13_artifact)
    rows = list(dispatch.scan(parse_location(str(cr13_artifact.parent)), ScanOptions(use_cache=False)))
    assert [(r.path, r.status.value, r.kvcache_num_blocks) for r in rows] == [(str(cr13_artifact), "ok", 21)]
    assert rows[0].where == where


def test_scanning_a_local_folder_that_is_not_there_says_so(tmp_path: Path) -> None:
    with pytest.raises(StudioError, match="is not a folder; give a folder that holds compiled artifacts"):
        dispatch.scan(LocalFolder(tmp_path / "nowhere"))


def test_a_copy_into_another_kind_of_place_is_refused_and_nothing_changes(cr13_artifact: Path) -> None:
    order = ResizeRequest(ServerFolder("npu1", "/srv/a"), 12, output=LocalFolder(cr13_artifact.parent / "copy"))
    with pytest.raises(StudioError, match=r"may go to a folder on a server or a prefix in a bucket; .*Nothing was"):
        dispatch.resize(order)  # refused before connecting: no server by that name exists
    assert not (cr13_artifact.parent / "copy").exists()


def test_each_kind_says_where_its_copies_may_go_as_the_crossings_make_them() -> None:
    """What a dialog offers (capabilities) and what resize does (CROSSINGS) never disagree."""
    kinds = list(dispatch.KIND_MODULES)
    for source in kinds:
        caps = dispatch.capabilities(source)
        assert source in caps.copies_to, source  # a copy in its own kind of place
        for output in kinds:
            if output is not source:
                assert (output in caps.copies_to) == ((source, output) in dispatch.CROSSINGS), (source, output)
    assert dispatch.capabilities(LocalFolder).on_this_computer
    assert not dispatch.capabilities(ServerFolder).on_this_computer
    assert not dispatch.capabilities(BucketPrefix).copies_beside  # a bucket's copy defaults to a folder here


class _RecordingKind:
    """A kind of place for the dispatch tests: it records the orders it is given (this module is its module)."""

    capabilities = Capabilities("a recording", False, True, True, False, False, frozenset({BucketPrefix}), False)

    def __init__(self) -> None:
        self.orders: list[ResizeRequest] = []

    def resize(self, request: ResizeRequest, report: object, toolchain: object = None) -> str:
        self.orders.append(request)
        return "made"


KIND = _RecordingKind()


def record_crossing(request: ResizeRequest, report: object, toolchain: object = None) -> str:
    """A crossing for the dispatch tests: the recording kind takes the order."""
    return KIND.resize(request, report, toolchain)


def test_a_copy_across_kinds_goes_to_the_function_its_crossing_names(
    cr13_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(dispatch.KIND_MODULES, BucketPrefix, __name__)  # a kind is one module with a KIND
    monkeypatch.setitem(dispatch.CROSSINGS, (LocalFolder, BucketPrefix), (__name__, "record_crossing"))
    monkeypatch.delitem(dispatch.CROSSINGS, (BucketPrefix, LocalFolder), raising=False)  # the way back: unlisted here
    order = ResizeRequest(LocalFolder(cr13_artifact), 12, output=BucketPrefix("models", "copy"))
    made: object = dispatch.resize(order)
    assert made == "made" and len(KIND.orders) == 1 and KIND.orders[0] is order  # the request itself, unchanged
    back = ResizeRequest(BucketPrefix("models", "a"), 12, output=LocalFolder(cr13_artifact.parent / "copy"))
    with pytest.raises(StudioError, match="Nothing was changed"):
        dispatch.resize(back)  # the pair back is not listed: refused, whichever kinds exist
    assert KIND.orders == [order] and read_block_count(cr13_artifact) == 21


def test_an_in_place_resize_where_no_lock_guards_it_is_refused_before_the_kind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(dispatch.KIND_MODULES, BucketPrefix, __name__)  # the recording kind: in place, no locks
    before = list(KIND.orders)
    with pytest.raises(StudioError, match="no lock keeps two resizes of one artifact apart"):
        dispatch.resize(ResizeRequest(BucketPrefix("models", "a"), 12))
    assert KIND.orders == before  # the kind was never asked


def test_a_server_copy_onto_another_server_is_refused_before_connecting() -> None:
    order = ResizeRequest(ServerFolder("npu1", "/srv/a"), 12, output=ServerFolder("npu2", "/srv/copy"))
    with pytest.raises(StudioError, match="A resize on npu1 writes its copy there too"):
        dispatch.resize(order)  # no server by that name exists: the refusal comes first


def test_a_local_resize_into_a_copy_goes_through_the_dispatch(cr13_artifact: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy-12"
    result = dispatch.resize(ResizeRequest(LocalFolder(cr13_artifact), 12, output=LocalFolder(copy)))
    assert result.where == LocalFolder(copy) and result.summary().endswith(f"artifact at {copy}")
    assert read_block_count(copy) == 12 and read_block_count(cr13_artifact) == 21


def test_a_bucket_has_a_clear_error_until_its_kind_is_built() -> None:
    if "rbln_artifact_studio.places.bucket" in dispatch.KIND_MODULES.values():
        try:
            import rbln_artifact_studio.places.bucket  # noqa: F401
        except ModuleNotFoundError:
            with pytest.raises(StudioError, match="cannot reach this kind of place"):
                dispatch.read_block_count(BucketPrefix("models", "a"))
            return
    pytest.skip("the bucket kind is built")


def _scheme_lines(scheme: str) -> list[str]:
    found = []
    for path in sorted(APP.rglob("*.py")):
        relative = path.relative_to(APP).as_posix()
        if relative in ("core/location.py", "core/schemes.py") or relative.startswith("remote/on_server/"):
            continue  # the modules that know the schemes; the server's programs are checked on their own
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if scheme in line:
                found.append(f"{relative}:{number}: {line.strip()}")
    return found


@pytest.mark.parametrize("scheme", ["ssh://", "s3://"])
def test_only_the_location_modules_write_a_scheme(scheme: str) -> None:
    assert _scheme_lines(scheme) == []


def test_a_folder_made_here_is_received_whole_into_a_new_local_folder(cr13_artifact: Path, tmp_path: Path) -> None:
    """What a compile delivers: published by one rename, nothing staged left, an output that exists refused."""
    from fakes.helpers import leftovers

    from rbln_artifact_studio.places.kind import Report

    output = LocalFolder(tmp_path / "out" / "qwen")
    kind = dispatch.kind_of(output)
    kind.check_output(output, Report())
    sent = kind.receive(cr13_artifact, output, Report())
    assert read_block_count(output.path) == 21 and sent > 0 and leftovers(output.path.parent) == []
    with pytest.raises(StudioError, match="exists and is not empty"):
        kind.check_output(output, Report())


class _ReadOnlyKind:
    """A kind the studio only reads (a folder served over HTTP, say): its capabilities say so and why."""

    capabilities = Capabilities(
        "a folder served over HTTP", False, False, False, False, False, frozenset(), False, "it offers no way to write."
    )


def test_an_output_in_a_read_only_kind_is_refused_with_its_reason_before_any_work(
    cr13_artifact: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rbln_artifact_studio.backends.choice import BackendChoice
    from rbln_artifact_studio.core.simulator.compiler import CompileRequest
    from rbln_artifact_studio.places.delivery import compile_to
    from rbln_artifact_studio.places.kind import Report

    monkeypatch.setattr(sys.modules[__name__], "KIND", _ReadOnlyKind())  # this module is the kind's module
    monkeypatch.setitem(dispatch.KIND_MODULES, BucketPrefix, __name__)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setattr("tempfile.tempdir", None)
    output = BucketPrefix("models", "new")
    said = "which the studio only reads: it offers no way to write. Nothing was changed."
    with pytest.raises(StudioError, match=said):
        compile_to(CompileRequest("Qwen/Qwen3-8B"), output, BackendChoice.SIM, Report())
    with pytest.raises(StudioError, match=said):
        dispatch.resize(ResizeRequest(LocalFolder(cr13_artifact), 12, output=output))
    assert dispatch.copy_refusal(LocalFolder(cr13_artifact), output) is not None
    assert not (tmp_path / "tmp").exists() and read_block_count(cr13_artifact) == 21


def test_a_row_parses_its_place_once_and_shows_and_stores_only_its_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    """A row's `where` is its path parsed once (the table asks it for every row, again on every refresh), and the
    parsed place never leaks into what the row stores or shows: its JSON stays the fields it always had."""
    from rbln_artifact_studio.core.fleet import summary as summary_module
    from rbln_artifact_studio.core.fleet.columns import row_host

    row = summary_module.ArtifactSummary("s3://models/fleet/a", "a", Status.OK)
    before = row.to_json()
    parsed: list[str] = []
    real = summary_module.parse_location

    def counted(text: str) -> object:
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(summary_module, "parse_location", counted)
    assert row.where == BucketPrefix("models", "fleet/a") and row.where is row.where
    assert row_host(row) == "s3://models" and row_host(row) == "s3://models"
    assert parsed == ["s3://models/fleet/a"]
    assert row.to_json() == before and list(before) == list(summary_module.ROW_FIELDS)
    assert summary_module.ArtifactSummary.validated(row.to_json()) == row
