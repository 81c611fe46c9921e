"""A server's NPUs and what their processes serve, in one round trip: the NPU tool, each context's process, the
artifact folders those name.

Every step here was its own ssh session before, each paying the server's login shell and a Python start; on a
fleet those costs add up on every server at once, so they are paid once. The client still decides everything
(it parses the tool's output, picks each process's artifact): what is read here is a superset it chooses from.

Arguments: the sh script that runs the NPU tool (remote/devices.py SCRIPT), the config file name an artifact
folder holds, the source of processes.py, the source of snapshot.py, then snapshot.py's rules and rebel helper.
Writes, as JSON lines:
{"tool": its stdout, "status": its exit status, "stderr": its error output}; when it succeeded,
{"processes": [processes.py's record for each context's pid found in the output]}; when those name folders,
{"folders": [each folder, once]}, then snapshot.py's line for each folder, in that order. Writes nothing on disk.
"""

import io
import json
import subprocess
import sys

SCRIPT, CONFIG, PROCESSES, SNAPSHOT, RULES, PROBE = sys.argv[1:7]
CHILDREN = globals().setdefault("CHILDREN", [])  # the prelude's list: ended with this program


def emit(record):
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def run_tool():
    proc = subprocess.Popen(
        ["sh", "-c", SCRIPT], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    CHILDREN.append(proc)
    out, err = proc.communicate()
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def table_pids(body):
    """The PID column of the tool's context table (the client parses the table itself; this only finds pids)."""
    pids, column = [], None
    for line in body.splitlines():
        line = line.strip()
        if not (line.startswith("|") and line.endswith("|")):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] == "NPU":
            column = cells.index("PID") if "PID" in cells else None
        elif column is not None and column < len(cells) and cells[column].isdigit():
            pids.append(int(cells[column]))
    return pids


def json_pids(body):
    try:
        contexts = json.loads(body).get("contexts") or []
    except (ValueError, AttributeError):
        return []
    pids = []
    for ctx in contexts if isinstance(contexts, list) else []:
        pid = ctx.get("pid") if isinstance(ctx, dict) else None
        if isinstance(pid, int) or (isinstance(pid, str) and pid.strip().isdigit()):
            pids.append(int(pid))
    return pids


def context_pids(out):
    first, _, body = out.partition("\n")
    found = json_pids(body) if first.startswith("#tool") and first.endswith(" json") else table_pids(body)
    return sorted(set(found))


def run_program(source, args, namespace):
    """A program of on_server/ run in this Python, as its own `__main__`, with its own argv."""
    saved = sys.argv
    sys.argv = ["rbln-studio", *args]
    try:
        exec(compile(source, "<rbln-studio>", "exec"), dict(namespace, __name__="__main__"))
    finally:
        sys.argv = saved


def processes(pids):
    """processes.py's records, read back from what it writes."""
    saved, sys.stdout = sys.stdout, io.StringIO()
    try:
        run_program(PROCESSES, [CONFIG] + [str(p) for p in pids], {})
        written = sys.stdout.getvalue()
    finally:
        sys.stdout = saved
    return [json.loads(line) for line in written.splitlines() if line.strip()]


def main():
    status, out, err = run_tool()
    emit({"tool": out, "status": status, "stderr": err[-4000:]})
    if status != 0:
        return
    pids = context_pids(out)
    records = processes(pids) if pids else []
    emit({"processes": records})
    folders = sorted({f for r in records for f in (r.get("folders") or {}).values()})
    if folders:
        emit({"folders": folders})
        run_program(SNAPSHOT, [RULES, PROBE, *folders], {"CHILDREN": CHILDREN})  # its lines go straight out


main()
