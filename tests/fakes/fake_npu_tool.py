#!/usr/bin/env python3
"""A fake `rbln-stat` / `rbln-smi` for a fleet of servers behind one sshd: prints the JSON of `-j` (Backend.AI's
form) or the text table, as the server it plays is set up to.

Which server: the port the ssh session came in on (SSH_CONNECTION's fourth field), so each alias of the test
sshd is its own server; its setup is FAKE_NPU_FLEET/<port>.json:
{"form": "json" | "text" | "garbage" | "hang", "delay": seconds, "spelling": "Infomation" | "Information",
 "garbage": text printed as is, "devices": [{"name", "used", "total", "contexts": [{"pid", "process", "memalloc"}]}]}
with sizes in bytes. A "text" server refuses -j as a driver without JSON does; a "hang" server writes its pid to
<port>.hung and sleeps (the test ends it).
"""

import json
import os
import sys
import time


def _gib(n: int) -> str:
    return f"{n / 2**30:.1f}GiB"


def _text(setup: dict) -> str:
    spelling = setup.get("spelling", "Infomation")
    rule = "+" + "-" * 103 + "+"
    out = [rule, "|" + f"Device {spelling} KMD ver: 1.3.73".center(103) + "|", rule]
    out.append("| NPU |    Name   | Device |   PCI BUS ID | Temp |  Power | Perf |   Memory(used/total)  |  Util  |")
    out.append("+=====+===========+========+==============+======+========+======+=======================+========+")
    for i, d in enumerate(setup["devices"]):
        memory = f"{_gib(d['used'])} / {_gib(d['total'])}"
        out.append(
            f"| {i:<3} | {d['name']:<9} | rbln{i:<2} | 0000:{0x51 + i:02x}:00.0 | 38C  | 43.9W  | P2   "
            f"| {memory:<21} | 0.0    |"
        )
    out += [rule, "|" + f"Context {spelling}".center(103) + "|", rule]
    out.append("| NPU | Process             |   PID  | CTX   | Priority | Memalloc   |")
    for i, d in enumerate(setup["devices"]):
        for ctx, c in enumerate(d.get("contexts", [])):
            out.append(
                f"| {i:<3} | {c['process']:<19} | {c['pid']:>6} | {ctx:<5} | 0        | {_gib(c['memalloc']):<10} |"
            )
    out.append(rule)
    return "\n".join(out)


def _json(setup: dict) -> str:
    devices, contexts = [], []
    for i, d in enumerate(setup["devices"]):
        devices.append(
            {
                "npu": i,
                "name": d["name"],
                "device": f"rbln{i}",
                "uuid": f"0000-{i}",
                "group_id": "0",
                "sid": None,
                "pci": {
                    "bus_id": f"0000:{0x51 + i:02x}:00.0",
                    "numa_node": 0,
                    "link_speed": "16GT/s",
                    "link_width": "16",
                },
                "temperature": "38C",
                "memory": {"used": str(d["used"]), "total": str(d["total"])},
                "util": "0.0",
            }
        )
        for ctx, c in enumerate(d.get("contexts", [])):
            contexts.append(
                {
                    "ctx_id": str(ctx),
                    "npu": i,
                    "process": c["process"],
                    "pid": str(c["pid"]),
                    "priority": "0",
                    "ptid": str(c["pid"]),
                    "memalloc": str(c["memalloc"]),
                    "status": "running",
                }
            )
    return json.dumps({"KMD_version": "1.3.73", "devices": devices, "contexts": contexts}, indent=2)


def main() -> int:
    port = os.environ.get("SSH_CONNECTION", "").split()[3:4] or ["default"]
    folder = os.environ["FAKE_NPU_FLEET"]
    with open(os.path.join(folder, f"{port[0]}.json"), encoding="utf-8") as f:
        setup = json.load(f)
    form = setup.get("form", "json")
    if form == "hang":
        with open(os.path.join(folder, f"{port[0]}.hung"), "w") as f:
            f.write(str(os.getpid()))
        time.sleep(600)
        return 1
    time.sleep(float(setup.get("delay", 0)))
    wants_json = "-j" in sys.argv[1:]
    if form == "garbage":
        print(setup.get("garbage", "Segmentation fault (core dumped) ###"))
        return 0
    if wants_json and form != "json":
        print("rbln-stat: invalid option -- 'j'", file=sys.stderr)
        return 2
    print(_json(setup) if wants_json else _text(setup))
    return 0


if __name__ == "__main__":
    sys.exit(main())
