"""The fleet reader's merge rules on readings as the readers return them: a node is one node whatever sources see
it (its NPUs' uuids, else its machine name), an HA pair's figures at the higher of the two, a server judged at the
higher of its tool's figure now and Prometheus' peak."""

from __future__ import annotations

from dataclasses import replace

from rbln_artifact_studio.core.fleet.npu_status import Device, DeviceStatus, ReadForm
from rbln_artifact_studio.places.fleet_sources import NodeReading, Source, SourceKind, one_per_node, to_place

GIB = 1 << 30
TOTAL = 140 * GIB
A = Source(SourceKind.PROMETHEUS, "http://prometheus-a:9090")
B = Source(SourceKind.PROMETHEUS, "http://prometheus-b:9090")
SSH = Source(SourceKind.SERVER, "ops@node-1:2222")


def _scraped(source: Source, node: str, used: int, peak: int | None, uuid: str = "") -> NodeReading:
    device = Device(0, "RBLN-CR13", "rbln0", used, TOTAL, "", (), exact=True, peak=peak, uuid=uuid)
    status = DeviceStatus(node, "rbln-metrics-exporter", (device,), ReadForm.PROMETHEUS, source=source.name)
    return NodeReading(source, node, status if peak is None else replace(status, window="1h"))


def _tool(used: int) -> NodeReading:
    device = Device(0, "RBLN-CR13", "rbln0", used, TOTAL, "", ())
    return NodeReading(SSH, SSH.name, DeviceStatus(SSH.name, "rbln-smi", (device,)))


def test_an_ha_pair_is_one_node_at_the_higher_figures() -> None:
    [node] = one_per_node(
        [_scraped(A, "node-1", 10 * GIB, 20 * GIB, "u0"), _scraped(B, "node-1", 12 * GIB, 30 * GIB, "u0")]
    )
    assert node.status is not None and node.also == (B,)
    [device] = node.status.devices
    assert (device.used, device.peak) == (12 * GIB, 30 * GIB)
    [judged], _ = to_place([node])
    assert judged.devices[0].free == TOTAL - 30 * GIB


def test_two_clusters_node_of_one_name_stay_two_nodes() -> None:
    """Same hostname, other uuids: two machines (two clusters each naming a node node-1)."""
    nodes = one_per_node([_scraped(A, "node-1", GIB, None, "u0"), _scraped(B, "node-1", GIB, None, "other")])
    assert [n.source for n in nodes] == [A, B]


def test_a_server_is_judged_at_the_higher_of_its_figure_now_and_the_peak() -> None:
    [high_peak] = one_per_node([_tool(5 * GIB), _scraped(A, "node-1", GIB, 100 * GIB)])
    [low_peak] = one_per_node([_tool(50 * GIB), _scraped(A, "node-1", GIB, 20 * GIB)])
    assert high_peak.source == SSH and high_peak.also == (A,)
    assert high_peak.status is not None and high_peak.status.devices[0].used == 5 * GIB  # the tool's figure now
    statuses, _ = to_place([high_peak, low_peak])
    assert [s.devices[0].used for s in statuses] == [100 * GIB, 50 * GIB]


def test_a_server_by_its_address_is_the_prometheus_node_of_its_uuids() -> None:
    """ssh://10.0.0.5 (rbln-stat -j gives uuids) is the node Prometheus calls node-1: their uuids say so."""
    server = Source(SourceKind.SERVER, "10.0.0.5")
    device = Device(0, "RBLN-CR13", "rbln0", 5 * GIB, TOTAL, "", (), exact=True, uuid="u0")
    tool = NodeReading(server, "10.0.0.5", DeviceStatus("10.0.0.5", "rbln-stat", (device,), ReadForm.JSON))
    [node] = one_per_node([tool, _scraped(A, "node-1", GIB, 60 * GIB, "u0")])
    assert (node.node, node.also) == ("10.0.0.5", (A,))
    [judged], _ = to_place([node])
    assert judged.devices[0].used == 60 * GIB
