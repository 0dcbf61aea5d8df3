"""After the suite: report and kill every process it left behind; exit 1 if there was any.

Why: a fresh-clone `make test` once left a `cvise --n 2` worker running for 29 minutes after the suite ended
(gfxhound/procgroup.py now kills a reduction's whole process tree; this checks that nothing else leaks either).
.ci/run exports a marker, GFXHOUND_SUITE_RUN=<random>, before `make test`; pytest, its xdist workers and everything
they start inherit it, whatever session or process group they move to. A process that still carries the marker
once the suite is over is a leftover. Its parents (the CI script that runs this) carry it too and are not.

    python3 tests/leftovers.py [MARKER] [--settle S]    # MARKER defaults to $GFXHOUND_SUITE_RUN

Standard library only: it runs with the system Python, whatever state the suite left the venv in. Linux (/proc).
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import time

VARIABLE = "GFXHOUND_SUITE_RUN"
SETTLE_S = 5.0  # a process that is exiting as the suite ends (an xdist worker shutting down) is given this long


def carriers(marker: str) -> dict:
    """{pid: (age in seconds, command line)} of every live process whose environment holds the marker, except
    this process and its ancestors."""
    entry = f"{VARIABLE}={marker}".encode()
    skip = _ancestors()
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in skip:
            continue
        pid = int(name)
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if entry not in f.read().split(b"\0"):
                    continue
            state, age = _state_and_age(pid)
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                command = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if state not in "ZX":  # a zombie has already ended (only its parent's wait is missing)
            found[pid] = (age, command)
    return found


def _ancestors() -> set:
    pids, pid = set(), os.getpid()
    while pid > 1:
        pids.add(pid)
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                raw = f.read().decode(errors="replace")
        except OSError:
            break
        pid = int(raw[raw.rfind(")") + 2:].split()[1])
    return pids


def _state_and_age(pid: int):
    with open(f"/proc/{pid}/stat", "rb") as f:
        raw = f.read().decode(errors="replace")
    fields = raw[raw.rfind(")") + 2:].split()
    with open("/proc/uptime") as f:
        uptime = float(f.read().split()[0])
    return fields[0], uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK")


def kill(pids):
    """Stopped first (a pool cannot restart the workers killed next), then killed."""
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass


def main(argv) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("marker", nargs="?", default=os.environ.get(VARIABLE, ""),
                        help=f"the suite's marker (default: ${VARIABLE})")
    parser.add_argument("--settle", type=float, default=SETTLE_S, help="seconds a process may take to exit")
    args = parser.parse_args(argv[1:])
    marker = args.marker
    if not marker:
        print(f"leftovers: no marker (pass one, or set {VARIABLE})", file=sys.stderr)
        return 2
    deadline = time.monotonic() + args.settle
    found = carriers(marker)
    while found and time.monotonic() < deadline:
        time.sleep(0.2)
        found = carriers(marker)
    if not found:
        print(f"leftovers: no process outlived the suite ({VARIABLE}={marker})")
        return 0
    print(f"leftovers: {len(found)} process(es) outlived the suite ({VARIABLE}={marker}); killing them:")
    for pid, (age, command) in sorted(found.items()):
        print(f"  pid {pid}, running {age:.0f} s: {command[:300]}")
    kill(found)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
