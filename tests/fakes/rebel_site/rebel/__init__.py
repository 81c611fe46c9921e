"""A fake `rebel` (rebel-compiler) for tests: the compiled-model methods optimum-rbln and the studio call.

Written from the published interface: `RBLNCompiledModel(path)`, `get_alloc_per_chiplet_by_key()`
(key -> [node][chiplet] bytes, the KV cache under "DramTensor"), `exp_get_dram_tensor_sizes()`
(KV tensor -> [node][chiplet] bytes, unaligned, at the current block count), `exp_rescale_buffer_size()`
and `save()`. A fake .rbln file is opaque to the studio: a magic line, a JSON header, then filler bytes.

Knobs (environment): FAKE_REBEL_HANG=1 makes loading hang; FAKE_REBEL_FAIL=text makes loading raise.
"""

from __future__ import annotations

import json
import os
import time

__version__ = "0.9.2+fake"

MAGIC = b"FAKE-REBEL-COMPILED-MODEL\n"
KV_KEY = "DramTensor"
ALIGN = 2 * 1024 * 1024


def align_2mib(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def kv_grid(sizes: dict) -> list:
    """DramTensor allocation: every KV tensor's size aligned to 2 MiB, summed per (node, chiplet)."""
    grids = list(sizes.values())
    if not grids:
        return []
    return [[sum(align_2mib(g[n][c]) for g in grids) for c in range(len(grids[0][n]))] for n in range(len(grids[0]))]


class RBLNCompiledModel:
    """One compiled graph, read from a fake .rbln file."""

    def __init__(self, path: object) -> None:
        if os.environ.get("FAKE_REBEL_HANG"):
            while True:
                time.sleep(3600)
        if os.environ.get("FAKE_REBEL_FAIL"):
            raise RuntimeError(os.environ["FAKE_REBEL_FAIL"])
        with open(str(path), "rb") as f:
            data = f.read()
        if not data.startswith(MAGIC):
            raise RuntimeError(f"{path} is not a compiled model (bad magic)")
        header, _, self.payload = data[len(MAGIC) :].partition(b"\n")
        self.header = json.loads(header)

    @classmethod
    def create(cls, header: dict, payload: bytes) -> RBLNCompiledModel:
        model = cls.__new__(cls)
        model.header, model.payload = header, payload
        return model

    def get_alloc_per_chiplet_by_key(self) -> dict:
        alloc = {key: [list(row) for row in grid] for key, grid in self.header["alloc"].items()}
        alloc[KV_KEY] = kv_grid(self.header["dram_tensors"])
        return alloc

    def exp_get_dram_tensor_sizes(self) -> dict:
        return {name: [list(row) for row in grid] for name, grid in self.header["dram_tensors"].items()}

    def exp_rescale_buffer_size(self, targets: dict) -> None:
        """{tensor: (target, current)}: resize each named KV buffer to exactly per-block x target bytes."""
        sizes = self.header["dram_tensors"]
        for name, (target, current) in targets.items():
            if name in sizes:
                sizes[name] = [[v // current * target for v in row] for row in sizes[name]]

    def save(self, path: object) -> None:
        tmp = f"{path}.saving"
        with open(tmp, "wb") as f:
            f.write(MAGIC + json.dumps(self.header).encode() + b"\n" + self.payload)
        os.replace(tmp, str(path))
