"""Many servers at once: every server a row in the order asked, at most N at once, a hung one named with its limit,
a failing one with its reason, and a cancel that waits for none."""

from __future__ import annotations

import threading

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.remote.fleet import fan_out


def test_rows_in_order_with_failures_and_a_hang_named() -> None:
    never = threading.Event()  # the hung server's answer: it never comes

    def work(host: str, cancel: CancelToken, limit: float) -> str:
        if host == "hung":
            while not cancel.cancelled:  # a transport call bounded by its cancel token
                never.wait(0.01)
            raise StudioError("stopped")
        if host == "bad":
            raise StudioError("bad printed something that cannot be true (line 3: NPU 1 is listed twice).")
        if host == "bug":
            raise KeyError("npu")
        return f"{host} ok"

    results = fan_out(["a", "hung", "bad", "bug", "b"], work, timeout=0.2)
    assert [(r.host, r.value) for r in results] == [
        ("a", "a ok"),
        ("hung", None),
        ("bad", None),
        ("bug", None),
        ("b", "b ok"),
    ]
    errors = {r.host: r.error for r in results}
    assert errors["hung"] == "hung did not answer within 0.2 s."
    assert errors["bad"] is not None and "line 3" in errors["bad"]
    assert errors["bug"] == "internal error: KeyError: 'npu'"
    assert errors["a"] is None


def test_parallelism_is_bounded_and_duplicates_are_read_once() -> None:
    lock, running, peak, calls = threading.Lock(), [0], [0], []
    release = threading.Event()

    def work(host: str, cancel: CancelToken, limit: float) -> str:
        with lock:
            calls.append(host)
            running[0] += 1
            peak[0] = max(peak[0], running[0])
            if peak[0] == 3:
                release.set()
        release.wait(5)
        with lock:
            running[0] -= 1
        return host

    hosts = [f"npu{i}" for i in range(8)]
    results = fan_out([*hosts, "npu0"], work, timeout=30, parallel=3)
    assert [r.value for r in results] == hosts and peak[0] == 3 and sorted(calls) == sorted(hosts)


def test_a_cancel_stops_every_server_and_waits_for_none() -> None:
    cancel, stuck = CancelToken(), threading.Event()
    seen: list[CancelToken] = []

    def work(host: str, token: CancelToken, limit: float) -> str:
        seen.append(token)
        cancel.cancel()  # the user gives up while the server is being read
        stuck.wait(60)  # a call that does not look at its token
        return host

    results = fan_out(["stuck"], work, timeout=3600, cancel=cancel)
    stuck.set()
    assert results[0].error == "Cancelled." and all(t.cancelled for t in seen)
