"""A standalone repro for a collective's wrong result, lost signal or hang (docs/design.md, Repro protocol).

The script embeds the kernel, the serialised case (heap layout, inputs, the float64 reference with its bounds,
the flag arrays) and the source of oracle/collective_heap.py, so it fills, launches and judges the virtual ranks
exactly as the campaign did, with triton, torch and numpy alone. It launches in a child process and exits 0 when
every rank's heap is right, 1 when the bug is still there (wrong values, waits that gave up, a fault, or for a
hang: the launch did not finish), 125 when it cannot test (no GPU, no triton/torch, the kernel does not compile).
"""
from __future__ import annotations

import base64
import inspect
import pickle
import zlib

from gfxhound.protocol import EXIT_ABSENT, EXIT_CANNOT_TEST, EXIT_PRESENT

from .. import collective_heap
from ..judge import RUNTIME_FAULT_PATTERNS

_EXIT_CODES = {"exit_absent": EXIT_ABSENT, "exit_present": EXIT_PRESENT,
               "exit_cannot_test": EXIT_CANNOT_TEST}

TEMPLATE = '''#!/usr/bin/env python3
"""gfxhound repro {spec_hash}: {verdict} of the collective pattern {pattern} on {ranks} virtual ranks,
found on {backend} ({target}, {toolchain}).

{message}

Run:   python repro.py               exit 0 = every rank's heap right, 1 = still wrong (or the waits gave up, a
                                     fault, or the launch hangs), 125 = cannot test here
       python repro.py --interpret   under TRITON_INTERPRET=1 (only patterns whose waits the interpreter can run)
       python repro.py --show        print the child's output
Needs: triton, torch, numpy, and a GPU (torch's cuda device: NVIDIA, or AMD through ROCm).
"""
import base64
import os
import pickle
import re
import subprocess
import sys
import tempfile
import zlib

# the repro protocol (gfxhound/protocol.py): what this script's exit says
EXIT_ABSENT, EXIT_PRESENT, EXIT_CANNOT_TEST = {exit_absent}, {exit_present}, {exit_cannot_test}
CHILD_WRONG, CHILD_MEMORY_MODEL = 3, 4  # between this script and the child it spawns
VERDICT = {verdict!r}
OPTIONS = {options}
MAX_SPIN = {max_spin}
TIMEOUT_S = {timeout}
KERNEL = {kernel!r}
HEAP_SRC = {heap_src!r}  # gfxhound's oracle/collective_heap.py: fill, launch and judge the heaps
CASE = {case!r}
FAULT = re.compile({fault!r})


def child():
    import importlib.util
    import torch
    device = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
    if device == "cuda" and not torch.cuda.is_available():
        print("gfxhound-cannot-test: no GPU (try --interpret)", file=sys.stderr)
        sys.exit(EXIT_CANNOT_TEST)
    heap = {{}}
    exec(HEAP_SRC, heap)
    case = pickle.loads(zlib.decompress(base64.b64decode(CASE)))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.py")
        with open(path, "w") as f:
            f.write(KERNEL)
        spec = importlib.util.spec_from_file_location("gfxhound_repro_kernel", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        options = {{}}
        if device != "cpu":
            from triton.compiler.compiler import make_backend
            from triton.runtime import driver
            backend = make_backend(driver.active.get_current_target())
            known = set(getattr(type(backend.parse_options({{}})), "__dataclass_fields__", {{}}))
            options = {{k: v for k, v in OPTIONS.items() if k in known}}
            if "launch_cooperative_grid" in known:
                options["launch_cooperative_grid"] = True
        print("gfxhound-launching", flush=True)
        judgement = heap["run_virtual"](case, module.kernel, options, device, 4 if device == "cpu" else MAX_SPIN)
    for line in judgement.problems:
        print(line)
    print(f"gfxhound-result: {{judgement.mismatches + judgement.other}} wrong, {{judgement.gave_up}} gave up")
    sys.exit(0 if judgement.ok else CHILD_WRONG)


def main():
    if "--child" in sys.argv:
        try:
            import numpy  # noqa: F401
            import torch  # noqa: F401
            import triton  # noqa: F401
        except Exception as exc:  # noqa: BLE001
            print(f"gfxhound-cannot-test: {{exc}}", file=sys.stderr)
            sys.exit(EXIT_CANNOT_TEST)
        child()
        return 0
    env = dict(os.environ)
    if "--interpret" in sys.argv:
        env["TRITON_INTERPRET"] = "1"
    with tempfile.TemporaryDirectory(prefix="gfxhound-repro-") as cache:
        env["TRITON_CACHE_DIR"] = cache
        try:
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"], env=env,
                                  capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout or b""
            out = out.decode(errors="replace") if isinstance(out, bytes) else out
            if "gfxhound-launching" in out:
                print(f"bug present: the launch did not finish in {{TIMEOUT_S}} s")
                return EXIT_PRESENT
            print("cannot test: the kernel did not compile in time")
            return EXIT_CANNOT_TEST
    text = proc.stdout + proc.stderr
    after = text.split("gfxhound-launching", 1)[1] if "gfxhound-launching" in text else ""
    if "--show" in sys.argv:
        print(text)
    if proc.returncode == 0 and "gfxhound-result: 0 wrong, 0 gave up" in text:
        print("bug absent: every rank's heap is right")
        return EXIT_ABSENT
    if proc.returncode == CHILD_WRONG and "gfxhound-result:" in text:
        print("bug present: " + (after.strip().splitlines() or ["?"])[0][:300])
        return EXIT_PRESENT
    fault = FAULT.search(after) if proc.returncode != 0 else None
    if fault:
        line = next((l for l in after.splitlines() if FAULT.search(l)), fault.group(0))
        print("bug present: runtime fault: " + line.strip()[:300])
        return EXIT_PRESENT
    print("cannot test here: " + (text.strip().splitlines() or ["no output"])[-1][:300])
    return EXIT_CANNOT_TEST


if __name__ == "__main__":
    sys.exit(main())
'''

_HEAP_SRC = inspect.getsource(collective_heap)  # read once: the repro judges as this campaign does


def render_collective_repro(rendered, spec, case: dict, execution: dict, max_spin: int,
                            timeout_s: int = 300) -> str:
    data = base64.b64encode(zlib.compress(pickle.dumps(case, protocol=4), 9)).decode()
    message = "\n".join(line[:200] for line in execution.get("message", "").split("; ")[:6])
    options = {"num_warps": rendered.options["num_warps"], "num_stages": rendered.options["num_stages"]}
    return TEMPLATE.format(**_EXIT_CODES, spec_hash=execution["spec_hash"], verdict=execution["verdict"],
                           pattern=spec.collective["pattern"], ranks=spec.ranks, backend=execution["backend"],
                           target=execution["target"], toolchain=execution["toolchain"], message=message,
                           options=repr(options), max_spin=int(max_spin), timeout=int(timeout_s),
                           kernel=rendered.source, heap_src=_HEAP_SRC, case=data,
                           fault="|".join(RUNTIME_FAULT_PATTERNS))
