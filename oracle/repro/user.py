"""The execution repro of a user kernel's finding (`gfxhound fuzz --kernel`): the kernel's file as the campaign
read it, the one launch that went wrong, the data module (oracle/user_data.py) that builds its tensors from the
launch's seed and judges them, and the user's reference, which it calls as the campaign did.

Why the reference is called, not embedded as numbers: the user's reference is part of their file, the repro
already holds the file, and a maintainer reading the repro sees what "expected" means. It needs torch and numpy
(the reference needs torch anyway). Exit codes follow the repro protocol (0 absent, 1 present, 125 cannot test).
"""
from __future__ import annotations

import inspect
import pprint

from gfxhound.protocol import EXIT_ABSENT, EXIT_CANNOT_TEST, EXIT_PRESENT

from ..judge import RUNTIME_FAULT_PATTERNS
from .execute import _emulation

TEMPLATE = '''#!/usr/bin/env python3
"""gfxhound repro {spec_hash}: {verdict} of {fn} ({file}), one launch, on {backend_text}.

Found with {toolchain}. The campaign saw:
{message}

Launch: grid {grid}, {options}
Arguments: {summary}
Run:   python repro.py          exit 0 = bug absent, 1 = same bug present, 125 = cannot test here
       python repro.py --show   also print the child's output
Needs: triton, torch, numpy{needs_gpu}.
"""
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

EXIT_ABSENT, EXIT_PRESENT, EXIT_CANNOT_TEST = {exit_absent}, {exit_present}, {exit_cannot_test}
CHILD_WRONG = 3
VERDICT = {verdict!r}
BACKEND = {backend!r}  # interpret: Triton's interpreter on the CPU; device: the GPU
USER = {user}
OPTIONS = {options_dict}
ENV_KNOBS = {env}
TIMEOUT_S = {timeout}
FAULT = re.compile({fault!r})
SOURCE = {source}  # {file}, as the campaign read it
ARCH = {arch!r}
ARGS = {args}  # the launch's arguments as the compiler specialises them (emulate: compiled for ARCH here)
# the emulate backend's findings: gfxhound's CPU executor for AMD LLVM IR (module -> source, compressed) and the
# compile helpers that build the kernel for ARCH without a GPU; None for other findings
EMULATOR = {emulator!r}
COMPAT = {compat!r}


{emulated_fn}


def mode_of(torch):
    """interpret, emulate or gpu: what the finding's backend needs; an emulated finding runs on an AMD GPU when
    there is one, on the embedded executor otherwise (never on another vendor's GPU: that is another compiler)."""
    if BACKEND == "interpret":
        return "interpret"
    if EMULATOR is not None and not (torch.cuda.is_available() and getattr(torch.version, "hip", None)):
        return "emulate"
    return "gpu"


def child():
    # ---- gfxhound oracle/user_data.py (embedded): the launch's tensors from its seed, and the comparison ----
    exec(compile(DATA_SRC, "user_data", "exec"), globals())
    import torch
    import triton
    mode = mode_of(torch)
    device = "cuda" if mode == "gpu" else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        print("gfxhound-cannot-test: no GPU here", file=sys.stderr)
        sys.exit(EXIT_CANNOT_TEST)
    import atexit
    import shutil
    tmp = tempfile.mkdtemp(prefix="gfxhound-user-")
    atexit.register(shutil.rmtree, tmp, True)  # the kernel's source file goes when the script ends
    path = os.path.join(tmp, "user_kernel.py")
    with open(path, "w") as f:
        f.write(SOURCE)
    spec = importlib.util.spec_from_file_location("user_kernel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kernel = getattr(module, USER["fn"])
    while type(kernel).__name__ in ("Autotuner", "Heuristics"):
        kernel = kernel.fn
    launched = kernel
    if mode == "emulate":
        try:
            launched = emulated(kernel, ARGS)
        except Exception as exc:  # noqa: BLE001 - no compile or no executor here: cannot test
            print(f"gfxhound-cannot-test: emulation: {{type(exc).__name__}}: {{exc}}", file=sys.stderr)
            sys.exit(EXIT_CANNOT_TEST)
    expected = expected_outputs(USER, getattr(module, USER["reference"])) if USER["reference"] else None
    tensors = {{k: v.to(device) for k, v in make_tensors(USER).items()}}
    values = [tensors[a["name"]] if a["kind"] == "tensor" else a["value"] for a in USER["args"]]
    options = {{}}
    if device != "cpu":
        from triton.compiler.compiler import make_backend
        from triton.runtime import driver
        accepted = set(getattr(type(make_backend(driver.active.get_current_target()).parse_options({{}})),
                               "__dataclass_fields__", {{}}))
        options = {{k: v for k, v in OPTIONS.items() if k in accepted}}
    os.environ.update({{k: str(v) for k, v in ENV_KNOBS.items()}})
    set_device_allocator(device)
    print("gfxhound-launching", flush=True)
    try:
        launched[tuple(USER["grid"])](*values, **options)
    except Exception as exc:  # noqa: BLE001
        name = type(exc).__name__
        if mode == "emulate" and name in ("EmulatedFault", "EmulatedRace", "DeviceAssertion"):
            kind = {{"EmulatedFault": "Memory access fault", "EmulatedRace": "LDS race"}}.get(name, "device-side assert")
            print(f"{{kind}} (emulated): {{exc}}", flush=True)
            sys.exit(1)
        if mode == "emulate" and name == "NotModelled":
            print(f"gfxhound-cannot-test: the executor does not model {{exc}}", file=sys.stderr)
            sys.exit(EXIT_CANNOT_TEST)
        raise
    if device != "cpu":
        torch.cuda.synchronize()
    if expected is None:
        print("gfxhound-result: 0 wrong (no reference: the launch finished)")
        return
    got = [tensors[a["name"]].cpu() for a in outputs_of(USER)]
    wrong, compared, lines = compare(USER, expected, got)
    print("\\n".join(lines))
    print(f"gfxhound-result: {{wrong}} wrong of {{compared}}")
    sys.exit(CHILD_WRONG if wrong else 0)


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
    if BACKEND == "interpret":
        env["TRITON_INTERPRET"] = "1"
    with tempfile.TemporaryDirectory(prefix="gfxhound-repro-") as cache:
        env["TRITON_CACHE_DIR"] = cache
        try:
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"], env=env,
                                  capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            if VERDICT == "timeout":
                print("bug present: the kernel did not finish")
                return EXIT_PRESENT
            print("cannot test: the kernel did not finish in time")
            return EXIT_CANNOT_TEST
    text = proc.stdout + proc.stderr
    if "--show" in sys.argv:
        print(text)
    after = text.split("gfxhound-launching", 1)[1] if "gfxhound-launching" in text else ""
    if proc.returncode == 0 and "gfxhound-result: 0 wrong" in text:
        print("bug absent: every output element is within the tolerance")
        return EXIT_ABSENT
    if proc.returncode == CHILD_WRONG and "gfxhound-result:" in text and VERDICT in ("miscompile", "nondeterministic"):
        print("bug present: " + (after.strip().splitlines() or ["wrong values"])[0][:300])
        return EXIT_PRESENT
    if proc.returncode != 0 and after and FAULT.search(after) and VERDICT == "runtime_fault":
        print("bug present: runtime fault: " + FAULT.search(after).group(0))
        return EXIT_PRESENT
    print("cannot test here: " + (text.strip().splitlines() or ["no output"])[-1][:300])
    return EXIT_CANNOT_TEST


DATA_SRC = {data_src}

if __name__ == "__main__":
    sys.exit(main())
'''


def _summary(user) -> str:
    from gfxhound.fuzz.render import row_major_strides
    parts = []
    for a in user["args"]:
        if a["kind"] == "tensor":
            parts.append(f"{a['name']}: {a['dtype']}{a['shape']}" + ("" if a["role"] == "in" else f" {a['role']}")
                         + ("" if a["strides"] == row_major_strides(a["shape"]) else f" strides {a['strides']}"))
        else:
            parts.append(f"{a['name']}={a['value']!r}")
    return ", ".join(parts)


def render_user_repro(rendered, spec, execution: dict, timeout_s: int = 300) -> str:
    from .. import user_data
    user = {k: v for k, v in spec.user.items() if k not in ("source", "launch")}
    message = "\n".join("    " + line[:200] for line in execution.get("message", "").splitlines()[:6])
    device = execution["backend"] == "device"
    return TEMPLATE.format(
        exit_absent=EXIT_ABSENT, exit_present=EXIT_PRESENT, exit_cannot_test=EXIT_CANNOT_TEST,
        spec_hash=execution["spec_hash"], verdict=execution["verdict"], fn=spec.user["fn"], file=spec.user["file"],
        backend=execution["backend"], backend_text=f"a GPU ({execution['target']})" if device
        else f"gfxhound's CPU executor ({execution['target']})" if execution["backend"] == "emulate"
        else "Triton's interpreter", toolchain=execution["toolchain"], message=message or "    (no message)",
        grid=tuple(spec.user["grid"]), options=", ".join(f"{k}={v}" for k, v in rendered.options.items()),
        summary=_summary(spec.user), needs_gpu=" and a GPU" if device else "", user=pprint.pformat(user, width=110),
        options_dict=repr(dict(rendered.options)), env=repr(dict(rendered.env)), timeout=int(timeout_s),
        fault="|".join(RUNTIME_FAULT_PATTERNS), source=repr(spec.user["source"]),
        data_src=repr(inspect.getsource(user_data)), args=pprint.pformat(list(rendered.args), width=110),
        **_emulation(execution))
