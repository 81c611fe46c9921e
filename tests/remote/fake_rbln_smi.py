#!/usr/bin/env python3
"""A fake `rbln-smi` (or `rbln-stat`): prints the documented Device and Context Information tables.

The devices come from the JSON file named by FAKE_RBLN_SMI_DEVICES: a list of
{"name", "used", "total", "processes": [{"pid", "name", "memory"}]} with sizes as rbln-smi prints them
("2.4GiB"). FAKE_RBLN_SMI_FAIL=message makes it fail the way a missing driver does.
"""

import json
import os
import sys


def main() -> int:
    if os.environ.get("FAKE_RBLN_SMI_FAIL"):
        print(os.environ["FAKE_RBLN_SMI_FAIL"], file=sys.stderr)
        return 1
    with open(os.environ["FAKE_RBLN_SMI_DEVICES"], encoding="utf-8") as f:
        devices = json.load(f)
    line = "+" + "-" * 103 + "+"
    print(line)
    print("|" + "Device Information KMD ver: 1.3.73".center(103) + "|")
    print("+-----+-----------+--------+--------------+------+--------+------+-----------------------+--------+")
    print("| NPU |    Name   | Device |   PCI BUS ID | Temp |  Power | Perf |   Memory(used/total)  |  Util  |")
    print("+=====+===========+========+==============+======+========+======+=======================+========+")
    for i, d in enumerate(devices):
        memory = f"{d['used']} / {d['total']}"
        print(
            f"| {i:<3} | {d['name']:<9} | rbln{i:<2} | 0000:{0x51 + i:02x}:00.0 | 38C  | 43.9W  | P2   "
            f"| {memory:<21} | {d.get('util', '0.0'):<6} |"
        )
    print("+-----+-----------+--------+--------------+------+--------+------+-----------------------+--------+")
    print(line)
    print("|" + "Context Information".center(103) + "|")
    print("+-----+---------------------+--------+-------+----------+------------+")
    print("| NPU | Process             |   PID  | CTX   | Priority | Memalloc   |")
    print("+=====+=====================+========+=======+==========+============+")
    for i, d in enumerate(devices):
        for ctx, p in enumerate(d.get("processes", [])):
            print(f"| {i:<3} | {p['name']:<19} | {p['pid']:>6} | {ctx:<5} | 0        | {p['memory']:<10} |")
    print("+-----+---------------------+--------+-------+----------+------------+")
    return 0


if __name__ == "__main__":
    sys.exit(main())
