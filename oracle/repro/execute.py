"""A standalone repro for a wrong result (docs/design.md, Repro protocol): kernel, inputs and the oracle's expected
outputs with their bounds, in one script that needs only triton and torch.

It launches in a child process (a GPU fault or a signal never escapes), on the GPU when there is one and under
the interpreter otherwise (`--interpret` forces it), and exits 0 when every determined element is within its
bound, 1 when the kernel is still wrong, 125 when it cannot test (no triton or torch, the kernel does not compile
or launch here). A finding of the emulate backend embeds gfxhound's executor (executors/llvm_ir/, as a package) and
runs the kernel compiled for its AMD target on it, unless the machine has an AMD GPU (`--emulate`, `--gpu` choose).
"""
from __future__ import annotations

import base64
import io
import re
import zlib

import torch

from gfxhound.protocol import EXIT_ABSENT, EXIT_CANNOT_TEST, EXIT_PRESENT

from ..judge import RUNTIME_FAULT_PATTERNS

_EXIT_CODES = {"exit_absent": EXIT_ABSENT, "exit_present": EXIT_PRESENT,
               "exit_cannot_test": EXIT_CANNOT_TEST}

TEMPLATE = '''#!/usr/bin/env python3
"""gfxhound repro {spec_hash}: {verdict} of a kernel found on {backend} ({target}, {toolchain}).

{message}

Run:   python repro.py               exit 0 = results correct, 1 = still wrong (or a fault once launched),
                                     125 = cannot test here
       python repro.py --interpret   run under TRITON_INTERPRET=1 on the CPU{emulate_usage}
       python repro.py --show        print the child's output
Needs: triton and torch. The expected values come from gfxhound's torch reference with per-element bounds
(docs/tolerance.md); elements the reference cannot determine are not compared.
"""
import base64
import io
import os
import re
import subprocess
import sys
import tempfile
import zlib

# the repro protocol (gfxhound/protocol.py): what this script's exit says
EXIT_ABSENT, EXIT_PRESENT, EXIT_CANNOT_TEST = {exit_absent}, {exit_present}, {exit_cannot_test}
CHILD_WRONG, CHILD_MEMORY_MODEL = 3, 4  # between this script and the child it spawns
GRID = {grid}
OPTIONS = {options}
ENV_KNOBS = {env}
ARGS = {args}
TIMEOUT_S = {timeout}
DATA = {data!r}
GUARD = 256
KERNEL = {kernel!r}
FAULT = re.compile({fault!r})
ARCH = {arch!r}
# the emulate backend's findings: gfxhound's CPU executor for AMD LLVM IR (module -> source, compressed) and the
# compile helpers (gfxhound/compat.py) that build the kernel for ARCH without a GPU; None for other findings
EMULATOR = {emulator!r}
COMPAT = {compat!r}
# a finding in the machine code LLVM made of the kernel (the IR executor agreed with torch): the embedded executor
# runs the LLVM IR only, so without an AMD GPU this script cannot show it
MACHINE_CODE = {machine_code!r}
# a hazard: right values from code that skips a wait the hardware needs; right values here do not show it absent
HAZARD = {hazard!r}


{emulated_fn}


def mode_of(torch):
    """interpret, emulate or gpu: what the parent asked, else a GPU (an AMD one for an emulated finding)."""
    asked = os.environ.get("GFXHOUND_REPRO_MODE", "")
    if asked:
        return asked
    if os.environ.get("TRITON_INTERPRET") == "1":
        return "interpret"
    if EMULATOR is not None and not (torch.cuda.is_available() and getattr(torch.version, "hip", None)):
        return "emulate"
    return "gpu"


def child():
    import importlib.util
    import torch
    mode = mode_of(torch)
    device = "cuda" if mode == "gpu" else "cpu"
    data = torch.load(io.BytesIO(zlib.decompress(base64.b64decode(DATA))), weights_only=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.py")
        with open(path, "w") as f:
            f.write(KERNEL)
        spec = importlib.util.spec_from_file_location("gfxhound_repro_kernel", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        kernel = module.kernel
        if mode == "emulate" and MACHINE_CODE:
            print("gfxhound-cannot-test: the finding is in LLVM's machine code for " + ARCH + " and the embedded "
                  "executor runs the LLVM IR only: run it on an AMD GPU (--gpu), or with gfxhound's machine-code "
                  "executor (gfxhound emulate on the kernel's .llir)", file=sys.stderr)
            sys.exit(EXIT_CANNOT_TEST)
        if mode == "emulate":
            try:
                kernel = emulated(kernel, [a for a in ARGS if a["kind"] != "constexpr"])
            except Exception as exc:  # noqa: BLE001 - no compile or no executor here: cannot test
                print(f"gfxhound-cannot-test: emulation: {{type(exc).__name__}}: {{exc}}", file=sys.stderr)
                sys.exit(EXIT_CANNOT_TEST)
        values, constexprs, buffers = [], {{}}, {{}}
        for arg in ARGS:
            name = arg["name"]
            if arg["kind"] == "ptr":
                body = data["buffers"][name]
                size = body.element_size()
                after = GUARD // size + data["reach"][name]
                whole = torch.full(((GUARD // size + after + body.numel()) * size,), 0xA5, dtype=torch.uint8)
                whole = whole.view(body.dtype)
                whole[GUARD // size:GUARD // size + body.numel()].copy_(body)
                initial = whole.clone()
                whole = whole.to(device)
                buffers[name] = (whole, initial, body.numel())
                values.append(whole[GUARD // size:GUARD // size + body.numel()])
            elif arg["kind"] == "constexpr":
                constexprs[name] = arg["value"]
            else:
                values.append(float(arg["value"]) if arg["kind"] == "float" else int(arg["value"]))
        options = {{}}
        if device != "cpu":  # the options this backend knows (AMD knobs mean nothing to CUDA)
            from triton.compiler.compiler import make_backend
            from triton.runtime import driver
            backend = make_backend(driver.active.get_current_target())
            known = set(getattr(type(backend.parse_options({{}})), "__dataclass_fields__", {{}}))
            options = {{k: v for k, v in OPTIONS.items() if k in known}}
        os.environ.update(ENV_KNOBS)
        print("gfxhound-launching", flush=True)  # what fails after this line and looks like a fault is one
        try:
            kernel[GRID](*values, **constexprs, **options)
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
    wrong = 0
    for name, (whole, initial, n) in buffers.items():
        whole = whole.cpu()
        g = GUARD // whole.element_size()
        if not torch.equal(whole[:g].view(torch.uint8), initial[:g].view(torch.uint8)) or not torch.equal(
                whole[g + n:].view(torch.uint8), initial[g + n:].view(torch.uint8)):
            print(f"{{name}}: a guard region was overwritten")
            wrong += 1
        if name.startswith("in_"):
            continue
        got, exp = whole[g:g + n], data["expected"][name]
        is_float = got.is_floating_point()
        got = got.to(torch.float64) if is_float else got.to(torch.int64)
        care, written = ~exp["bad"], exp["written"]
        if is_float:
            ref, e = exp["v"], exp["e"]
            close = (got - ref).abs() <= e * (1 + 1e-12)
            same = torch.where(torch.isnan(ref), torch.isnan(got),
                               torch.where(torch.isinf(ref), got == ref, ~torch.isnan(got) & close))
            stray = ~written & ~torch.isnan(got) if exp["mode"] == "store" else ~written & (got != 0)
        else:
            same = got == exp["v"]
            stray = ~written & (got != exp["fill"])
        bad = (care & written & ~same) | stray
        count = int(bad.sum())
        if count:
            i = int(torch.nonzero(bad).flatten()[0])
            print(f"{{name}}: {{count}} of {{n}} elements wrong; first [{{i}}] expected {{exp['v'][i].item()}} "
                  f"+- {{exp['e'][i].item()}}, got {{got[i].item()}}")
            wrong += count
    print(f"gfxhound-result: {{wrong}} wrong")
    sys.exit(CHILD_WRONG if wrong else 0)


def main():
    if "--child" in sys.argv:
        try:
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
        env["GFXHOUND_REPRO_MODE"] = "interpret"
    for flag in ("--emulate", "--gpu"):
        if flag in sys.argv:
            env["GFXHOUND_REPRO_MODE"] = flag[2:]
    with tempfile.TemporaryDirectory(prefix="gfxhound-repro-") as cache:
        env["TRITON_CACHE_DIR"] = cache
        try:
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"], env=env,
                                  capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            print("cannot test: the kernel did not finish in time")
            return EXIT_CANNOT_TEST
    text = proc.stdout + proc.stderr
    after = text.split("gfxhound-launching", 1)[1] if "gfxhound-launching" in text else ""
    if "--show" in sys.argv:
        print(text)
    if proc.returncode == 0 and "gfxhound-result: 0 wrong" in text and HAZARD:
        print("cannot test: the values are right, as they were when the hazard was found; it is in the timing of "
              "LLVM's code (gfxhound emulate on the kernel's LLVM IR names the pair)")
        return EXIT_CANNOT_TEST
    if proc.returncode == 0 and "gfxhound-result: 0 wrong" in text:
        print("bug absent: every determined element is within its bound")
        return EXIT_ABSENT
    if proc.returncode == CHILD_WRONG and "gfxhound-result:" in text:
        print("bug present: " + (after or text).split("gfxhound-result:")[0].strip().splitlines()[0][:300])
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


def render_exec_repro(rendered, spec, inputs: dict, expected, execution: dict, timeout_s: int = 300) -> str:
    from ..execute import fill_value, reach
    from gfxhound.fuzz.render import input_strides, memory_shape, row_major_strides

    buffers, reaches = {}, {}
    for i, arg in enumerate(spec.inputs):
        buffers[f"in_{i}"] = inputs[f"in_{i}"]
        reaches[f"in_{i}"] = reach(spec, arg["axes"], input_strides(arg, spec.sizes))
    exp = {}
    for i, arg in enumerate(spec.outputs):
        name = f"out_{i}"
        buf = expected.outputs[name]
        fill = 0 if arg["mode"] == "atomic" else fill_value(arg["dtype"])
        buffers[name] = torch.full((buf.numel,), fill, dtype=inputs_dtype(arg["dtype"]))
        strides = row_major_strides(memory_shape(arg["axes"], spec.sizes)) if arg["axes"] else []
        reaches[name] = reach(spec, arg["axes"], strides)
        exp[name] = {"v": buf.v, "e": buf.e, "bad": buf.bad, "written": buf.written, "mode": buf.mode,
                     "fill": int(fill) if not isinstance(fill, float) else 0}
    blob = io.BytesIO()
    torch.save({"buffers": buffers, "expected": exp, "reach": {k: max(0, v - buffers[k].numel())
                                                                for k, v in reaches.items()}}, blob)
    data = base64.b64encode(zlib.compress(blob.getvalue(), 9)).decode()
    message = "\n".join(line[:200] for line in execution.get("message", "").splitlines()[:6])
    disagree = disagreements(execution.get("message", ""), exp)
    if disagree:  # a harness bug (the data differ from those judged): say so where the reader looks first
        message += ("\n\nWARNING: the embedded expected values disagree with this message: "
                    + "; ".join(disagree[:5]))
    return TEMPLATE.format(**_EXIT_CODES, spec_hash=execution["spec_hash"], verdict=execution["verdict"],
                           backend=execution["backend"], target=execution["target"],
                           toolchain=execution["toolchain"], message=message, grid=tuple(rendered.grid),
                           options=repr(dict(rendered.options)),
                           env=repr({k: str(v) for k, v in rendered.env.items()}), args=repr(rendered.args),
                           timeout=int(timeout_s), data=data, kernel=rendered.source,
                           fault="|".join(RUNTIME_FAULT_PATTERNS), hazard=execution["verdict"] == "hazard",
                           **_emulation(execution))


# one function in both repro templates (this one and oracle/repro/user.py's), inserted as text: format() does not
# read the braces of a value it inserts
EMULATED_FN = '''def emulated(kernel, launch_args):
    """The kernel compiled for ARCH and wrapped to launch on the embedded executor; `launch_args`: the arguments
    the launch passes, in order (the constexprs among them are not the compiled kernel's parameters)."""
    import atexit
    import base64
    import json
    import shutil
    import zlib
    root = tempfile.mkdtemp(prefix="gfxhound-emulator-")
    atexit.register(shutil.rmtree, root, True)  # the unpacked executor goes when the script ends
    os.makedirs(os.path.join(root, "gfxhound_emulate"))
    for name, text in json.loads(zlib.decompress(base64.b64decode(EMULATOR))).items():
        with open(os.path.join(root, "gfxhound_emulate", name + ".py"), "w") as f:
            f.write(text)
    open(os.path.join(root, "gfxhound_emulate", "__init__.py"), "w").close()
    sys.path.insert(0, root)
    from gfxhound_emulate.launch import EmulatedKernel
    helpers = {"__name__": "gfxhound_compat"}
    exec(COMPAT, helpers)
    compiled = helpers["compile_for_amd"](kernel, ARGS, ARCH, OPTIONS, ENV_KNOBS)
    with helpers["environment"](ENV_KNOBS):
        signature = helpers["specialise"](ARGS)[0]
    return EmulatedKernel(compiled, ARCH, [i for i, a in enumerate(launch_args) if signature[a["name"]] != "constexpr"])'''


def _emulation(execution: dict) -> dict:
    """The template's emulation fields: the executor and compile helpers for an emulate finding, else None."""
    from gfxhound.signature_machine import MACHINE_CODE_STAGE
    machine_code = execution.get("stage") == MACHINE_CODE_STAGE
    if execution.get("backend") != "emulate":
        return {"arch": execution.get("target"), "emulator": None, "compat": None, "emulate_usage": "",
                "emulated_fn": EMULATED_FN, "machine_code": machine_code}
    import json

    from gfxhound.embedded import SOURCES

    from gfxhound.executors.llvm_ir import package_sources
    blob = base64.b64encode(zlib.compress(json.dumps(package_sources()).encode(), 9)).decode()
    usage = ("\n       python repro.py --emulate     run gfxhound's CPU executor on the AMD LLVM IR (the default "
             "without an AMD GPU)\n       python repro.py --gpu         launch on this machine's GPU")
    return {"arch": execution["target"], "emulator": blob, "compat": SOURCES["llc_text"] + "\n" + SOURCES["compat"],
            "emulate_usage": usage, "emulated_fn": EMULATED_FN, "machine_code": machine_code}


QUOTED = re.compile(r"\[(\d+)\] expected ([^\s,;]+)")


def quoted_expectations(message: str) -> list:
    """(output name, index, value as printed) for every element a finding's message (oracle/compare.py) quotes as
    `[i] expected X`."""
    quoted = []
    for line in message.splitlines():
        name = line.split(" ", 1)[0]
        if name.startswith("out_"):
            quoted += [(name, int(i), x) for i, x in QUOTED.findall(line)]
    return quoted


def disagreements(message: str, expected: dict) -> list:
    """The elements the message quotes whose embedded expected data (name -> {"v", "bad", "written"}) are not
    that determined value: empty when the repro holds exactly what the finding was judged with."""
    from ..compare import _fmt
    found = []
    for name, i, shown in quoted_expectations(message):
        exp = expected.get(name)
        if exp is None or i >= exp["v"].numel():
            found.append(f"{name}[{i}] is not embedded")
        elif bool(exp["bad"][i]) or not bool(exp["written"][i]):
            found.append(f"{name}[{i}] expected {shown}, embedded as undetermined or never written")
        elif _fmt(exp["v"][i].item()) != shown:
            found.append(f"{name}[{i}] expected {shown}, embedded {_fmt(exp['v'][i].item())}")
    return found


def inputs_dtype(name):
    from ..numeric import TORCH
    return TORCH[name]
