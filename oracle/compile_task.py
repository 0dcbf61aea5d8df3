"""The task a compile worker runs: render, import, compile for an AMD target, report what happened.

Runs inside a pool worker (oracle/pool.py). Native diagnostics go to fd 2, which is pointed at a per-task file so
that they survive the process being killed by LLVM (abort) or by the pool (timeout). Every stage's output is
written to the task directory as it is produced, so a crash still leaves the IR of the stages before it.
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
import time
import traceback
from pathlib import Path

from gfxhound import compat
from gfxhound.spec import KernelSpec
from gfxhound.fuzz.capabilities import Capabilities
from gfxhound.fuzz.render import render

from .ttgir_features import features as ttgir_features

IR_SUFFIX = {"ttir": "ttir", "ttgir": "ttgir", "llir": "llir", "amdgcn": "amdgcn"}
APPLIED = ("num_warps", "num_stages", "waves_per_eu", "matrix_instr_nonkdim", "kpack", "schedule_hint",
           "enable_fp_fusion", "default_dot_input_precision")


def load_kernel(source: str, path: Path, kernel_name: str):
    path.write_text(source)
    name = f"gfxhound_kernel_{path.parent.name}_{os.getpid()}"
    module_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    module_spec.loader.exec_module(module)
    return getattr(module, kernel_name)


def _ir_saver(ir_dir: Path):
    def save(stage, output):
        suffix = IR_SUFFIX.get(stage)
        if suffix is not None:
            (ir_dir / f"kernel.{suffix}").write_text(str(output))
    return save


class _Fd2Redirect:
    """Point fd 2 (and with `stdout=True` fd 1 too) at a file for the duration: native code writes there, not to
    sys.stderr, and a GPU's device-side printf and assertion messages go to fd 1."""

    def __init__(self, path, stdout=False):
        self.path = path
        self.fds = (1, 2) if stdout else (2,)

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self.saved = [os.dup(fd) for fd in self.fds]
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        for target in self.fds:
            os.dup2(fd, target)
        os.close(fd)
        return self

    def __exit__(self, *exc):
        sys.stdout.flush()
        sys.stderr.flush()
        for target, saved in zip(self.fds, self.saved):
            os.dup2(saved, target)
            os.close(saved)


def run_compile(task: dict) -> dict:
    """Compile one spec. Returns {'status': 'ok'|'exception'|'harness', ...}; never raises for compiler errors."""
    try:
        return _run_compile(task)
    finally:
        if task.get("empty_cache") and os.environ.get("TRITON_CACHE_DIR"):
            _empty(Path(os.environ["TRITON_CACHE_DIR"]))


def _empty(directory: Path):
    """Every campaign kernel is new, so Triton's cache only grows (~300 KB a kernel): empty it after each one."""
    if directory.is_dir():
        for child in directory.iterdir():
            shutil.rmtree(child, ignore_errors=True) if child.is_dir() else child.unlink(missing_ok=True)


def _run_compile(task: dict) -> dict:
    task_dir = Path(task["task_dir"])
    ir_dir = task_dir / "ir"
    ir_dir.mkdir(parents=True, exist_ok=True)
    try:
        spec = KernelSpec.from_json(task["spec"])
        caps = Capabilities.from_json(task["caps"])
        rendered = render(spec, caps)
        kernel = load_kernel(rendered.source, task_dir / "kernel.py", rendered.kernel_name)
        compat.install_stage_markers(_ir_saver(ir_dir))
    except Exception:  # noqa: BLE001 - a harness failure must never look like a compiler bug
        return {"status": "harness", "text": traceback.format_exc()}
    result = _run_compiler(task, kernel, rendered, ir_dir)
    rendered.features.details |= pointer_details(rendered)
    if "buffer_ops" in result:
        rendered.features.details.add("amdgcn:buffer_ops" if result.pop("buffer_ops") else "amdgcn:no_buffer_ops")
    ttgir = ir_dir / "kernel.ttgir"
    if ttgir.exists():  # what the compiler made of the kernel (oracle/ttgir_features.py), as coverage
        rendered.features.details |= {"ttgir:" + f for f in ttgir_features(ttgir.read_text())}
    result["features"] = rendered.features.to_json()  # coverage, so the campaign need not render again
    if result["status"] == "ok" and spec.pair:
        result["pair"] = run_pair(task, spec, caps, ir_dir)
    return result


# an instruction that addresses memory through a buffer resource (buffer_inv, buffer_wbl2, buffer_gl*_inv are cache
# maintenance, not buffer ops)
BUFFER_OP = re.compile(r"^\s*buffer_(?:load|store|atomic)\w*\s", re.M)


def pointer_details(rendered) -> set:
    """Coverage details of the runtime's pointer specialisation, as the compile saw it: how many pointer arguments
    the kernel has and how many got ``tt.pointer_range`` (what lets the backend use buffer ops). Counts, so that the
    campaign's coverage table can be summed into a share of arguments (oracle/specialisation_stats.py)."""
    try:
        with compat.environment(rendered.env):
            _signature, _constexprs, attrs = compat.specialise(rendered.args)
    except Exception:  # noqa: BLE001 - the compile itself met the same failure and reported it
        return set()
    pointers = [a["name"] for a in rendered.args if a["kind"] == "ptr"]
    ranged = sum(["tt.pointer_range", 32] in attrs.get(name, []) for name in pointers)
    return {f"ptr_args={len(pointers)}", f"pointer_range_args={ranged}"}


PAIR_MARK = "pair-started"  # a task directory holding this file died or timed out in its pair's compile


def run_pair(task, spec, caps, ir_dir: Path) -> dict:
    """Compile the spec's metamorphic pair (fuzz/pairs.py) after the spec itself compiled. Its diagnostics go to
    the task's stderr file as the first compile's did (that one succeeded: nothing is lost), so a pair that
    kills the worker leaves its text where the pool looks; PAIR_MARK says whose text it is."""
    from gfxhound.fuzz.pairs import variant
    kind = spec.pair.get("kind")
    mutation = None
    if kind == "layout":
        try:  # our mutator, not the compiler: its failure is the harness's (`unresolved`), never a finding
            mutation = _mutated_layouts(task, spec, ir_dir)
        except Exception:  # noqa: BLE001
            return {"kind": kind, "status": "harness", "text": traceback.format_exc()}
        if not mutation.changes:
            return {"kind": kind, "status": "nothing", "changes": []}
    (Path(task["task_dir"]) / PAIR_MARK).write_text(kind or "")
    start = time.perf_counter()
    with _Fd2Redirect(task["stderr_path"], stdout=True):
        try:
            if kind == "layout":
                _compile_layout_pair(task, spec, mutation, ir_dir)
                out = {"kind": kind, "status": "ok", "changes": list(mutation.changes)}
            else:
                second, arch = variant(spec, task["arch"])
                rendered = render(second, caps)
                kernel = load_kernel(rendered.source, Path(task["task_dir"]) / "kernel_pair.py", rendered.kernel_name)
                compat.compile_for_amd(kernel, rendered.args, arch, rendered.options, rendered.env)
                out = {"kind": kind, "status": "ok"}
        except BaseException:  # noqa: BLE001 - every compiler failure is data
            text = traceback.format_exc()
            os.write(2, text.encode(errors="replace"))
            out = {"kind": kind, "status": "exception"}
            if kind == "layout":
                from gfxhound.fuzz.layouts import is_rejection
                out["rejected"] = is_rejection(Path(task["stderr_path"]).read_text(errors="replace"))
    out["duration"] = time.perf_counter() - start
    (Path(task["task_dir"]) / PAIR_MARK).unlink()
    return out


def _mutated_layouts(task, spec, ir_dir):
    """The layout encodings of the TTGIR the first compile dumped, mutated as the pair's seed says."""
    from gfxhound.fuzz.layouts import mutate
    return mutate((ir_dir / "kernel.ttgir").read_text(), int(spec.pair["seed"]), compat.warp_size(task["arch"]),
                  spec.launch.num_warps)


def _compile_layout_pair(task, spec, mutation, ir_dir):
    """Compile the mutated TTGIR for the same target, with the spec's options and knobs."""
    from gfxhound.fuzz.render import launch_options
    options = {k: v for k, v in launch_options(spec).items() if k != "num_stages"}
    compat.compile_ttgir_for_amd(mutation.text, ir_dir / "kernel.mutated.ttgir", task["arch"], options,
                                 spec.launch.env)


def _memory_model(task, compiled, result):
    """The static memory-model check (oracle/memory_model.py) of a kernel with atomics or fences: a missing
    wait, writeback or invalidate is a miscompile found without running anything."""
    from .memory_model import check
    asm = getattr(compiled, "asm", {}) or {}
    if "amdgcn" not in asm:
        return
    text = asm["amdgcn"]
    if not any(mark in text for mark in ("_atomic_", "buffer_inv", "buffer_wbl2", "buffer_wbinvl1", "buffer_gl")):
        result["checks"]["memory_model"] = "none"  # no atomic, no cache maintenance: nothing to check (fast path)
        return
    report = check(text, task["arch"], asm.get("llir"))
    if report.unsupported:
        result["checks"]["memory_model"] = "unsupported" if report.atomics or report.fences else "none"
        return
    if not (report.atomics or report.fences):
        result["checks"]["memory_model"] = "none"
        return
    result["checks"]["memory_model"] = "violated" if report.violations else "ok"
    if report.violations:
        result.update(status="memory_model", messages=[v.message() for v in report.violations],
                      text="\n".join(f"line {v.line}: {v.instruction}: {v.message()}" for v in report.violations))


def _run_compiler(task, kernel, rendered, ir_dir):
    start = time.perf_counter()
    with _Fd2Redirect(task["stderr_path"], stdout=True):
        try:
            compiled = compat.compile_for_amd(kernel, rendered.args, task["arch"], rendered.options, rendered.env)
        except BaseException:  # noqa: BLE001 - every compiler failure is data
            text = traceback.format_exc()
            duration = time.perf_counter() - start
            os.write(2, text.encode(errors="replace"))
            return {"status": "exception", "duration": duration}
    duration = time.perf_counter() - start
    result = {"status": "ok", "duration": duration, "resources": compat.resources(compiled),
              "applied": compat.applied_options(compiled, APPLIED), "checks": {}}
    asm = getattr(compiled, "asm", {}) or {}
    if "amdgcn" in asm:
        result["buffer_ops"] = bool(BUFFER_OP.search(asm["amdgcn"]))
    _memory_model(task, compiled, result)
    llc = task.get("llc")
    if result["status"] == "ok" and llc and (ir_dir / "kernel.llir").exists():
        fusion = bool(getattr(compiled.metadata, "enable_fp_fusion", True))
        status, text = compat.llc_verify(llc, task["arch"], ir_dir / "kernel.llir", task.get("llc_timeout", 120),
                                         fusion)
        result["checks"]["llc"] = status
        if status in ("failed", "timeout"):
            result.update(status="llc_" + status, text=text)
    return result
