"""Read what the studio needs to open one artifact on the server, in one answer: listing, configs, graph headers.

Arguments: a JSON object of rules, the source of the studio's rebel helper, then one or more FOLDERs. Writes one
JSON line per folder, in order:
{"files": [[name, size]], "texts": {name: base64 of the zlib'd file}, "heads": {name: base64 of the zlib'd header},
"rebel": {"graphs": {name: tables}, "errors": {name: message}} or {"error": message}} or
{"error": message}. Names are relative to the folder: the compiled parts in its subfolders (a VLM's language_model/,
a pipeline's unet/: any subfolder with an rbln_config.json) are read too, as "part/name". Real compiler graphs are read with `rebel` in the Python of the server's optimum-rbln-cli
(the studio's rebel helper, run from memory); simulator graphs by their header only. Writes nothing.
"""

import base64
import json
import os
import shutil
import stat
import subprocess
import sys

from rbln_artifact_studio.core.portable.container import (
    MAGIC,
    MAX_SLOT_SIZE,
    PREAMBLE_SIZE,
    SLOT_MAGIC,
    declared_slot_size,
)
from rbln_artifact_studio.core.portable.deflate import deflate

RULES = json.loads(sys.argv[1])
PROBE = sys.argv[2]
FOLDERS = [
    os.path.expanduser(f) if f == "~" or f.startswith("~/") else f for f in sys.argv[3:]
]  # ~/x: below the login folder
CHILDREN = globals().setdefault("CHILDREN", [])  # the prelude's list: ended with this program
TEXTS = set(RULES["texts"])
TEXT_CONFIG = RULES["texts"][0]  # rbln_config.json: a subfolder holding one is a compiled part of the model

# Runs in the toolchain's Python: the studio's rebel helper (rebel_probe.py) without its file output.
RUNNER = """
import json, sys
ns = {"__name__": "rebel_probe"}
exec(sys.argv[1], ns)
try:
    import rebel
except Exception as exc:
    print(json.dumps({"error": "import rebel failed in %s: %s: %s" % (sys.executable, type(exc).__name__, exc)}))
    sys.exit(0)
graphs, errors = {}, {}
for name, path in json.loads(sys.argv[2]):
    try:
        graphs[name] = ns["read_graph"](rebel, path)
    except Exception as exc:
        errors[name] = "%s: %s: %s" % (path.rsplit("/", 1)[-1], type(exc).__name__, exc)
print(json.dumps({"graphs": graphs, "errors": errors}))
"""


def text(data):
    return data.decode("utf-8", "surrogateescape")


def internal(name):
    return name in RULES["skip_names"] or (name.startswith(".") and any(t in name for t in RULES["internal_tags"]))


def read_head(path):
    """The container's preamble and both header slots, or None for a file that is not a simulator container.

    A header slot after an overwritten preamble is sent too: the studio names that file damaged (damage.py)."""
    with open(path, "rb") as f:
        head = f.read(PREAMBLE_SIZE)
        if not head.startswith(MAGIC):
            slot = f.read(len(SLOT_MAGIC))
            return head + slot if len(head) == PREAMBLE_SIZE and slot == SLOT_MAGIC else None
        return head + f.read(2 * min(declared_slot_size(head), MAX_SLOT_SIZE))


def toolchain_python():
    """The Python optimum-rbln-cli runs in (its script's first line), where rebel is installed."""
    cli = shutil.which("optimum-rbln-cli")
    if cli is None:
        return None, "optimum-rbln-cli is not on the server's PATH"
    with open(cli, "rb") as f:
        first = f.readline().decode("utf-8", "replace").strip()
    if not first.startswith("#!"):
        return None, f"{cli} is not a script naming its Python"
    words = first[2:].split()
    if words and os.path.basename(words[0]) == "env":
        words = words[1:]
    return (words[0], None) if words else (None, f"{cli} names no Python")


def inspect_real(real):
    """Each real graph read by rebel, keyed by its name in the folder ("vision_tower/compiled_model.rbln"): a VLM's
    parts may name their graphs alike, and one part's unreadable graph leaves the others' tables known."""
    python, why = toolchain_python()
    if python is None:
        return {"error": f"The server cannot read real .rbln files: {why}."}
    argv = [python, "-c", RUNNER, PROBE, json.dumps(real)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    CHILDREN.append(proc)
    try:
        out, err = proc.communicate(timeout=RULES["rebel_timeout"])
    except subprocess.TimeoutExpired:
        proc.kill()
        return {"error": "rebel did not answer within {} s on the server.".format(RULES["rebel_timeout"])}
    lines = out.decode("utf-8", "replace").strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"error": "the rebel helper failed on the server: " + text(err.strip()[-500:])}
    result = json.loads(lines[-1])
    result["python"] = python
    return result


def main(folder):
    try:
        if not stat.S_ISDIR(os.stat(folder).st_mode):
            return {"error": f"{folder} is not a folder."}
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        return {"error": f"Cannot list {folder}: {exc.strerror or exc}."}
    files, texts, heads, errors, real = [], {}, {}, {}, []
    parts = []
    for entry in entries:
        if internal(entry.name) or entry.name.startswith("."):
            continue
        try:
            if entry.is_dir():
                if os.path.isfile(os.path.join(entry.path, TEXT_CONFIG)):
                    with os.scandir(entry.path) as it:
                        parts += [(text(os.fsencode(entry.name)) + "/", e) for e in sorted(it, key=lambda e: e.name)]
                continue
        except OSError:
            continue
    for prefix, entry in [("", e) for e in entries] + parts:
        if internal(entry.name):
            continue
        try:
            if not entry.is_file():
                continue
            size = entry.stat().st_size
        except OSError:
            continue
        name = prefix + text(os.fsencode(entry.name))
        files.append([name, size])
        try:
            if entry.name in TEXTS and size <= RULES["max_json_bytes"]:
                with open(entry.path, "rb") as f:
                    texts[name] = base64.b64encode(deflate(f.read())).decode("ascii")
            elif entry.name.endswith(".rbln"):
                head = read_head(entry.path)
                if head is None:
                    real.append([name, entry.path])
                else:
                    heads[name] = base64.b64encode(deflate(head)).decode("ascii")  # slots are mostly zeros
        except OSError as exc:
            errors[name] = exc.strerror or str(exc)
    out = {"files": files, "texts": texts, "heads": heads, "errors": errors}
    if real:
        out["rebel"] = inspect_real(real)
    return out


for folder in FOLDERS:
    sys.stdout.write(json.dumps(main(folder)) + "\n")
    sys.stdout.flush()
