"""The emulate backend's validation figures over generated kernels: planted lowering bugs caught, and speed.

For each kernel of the default generator stream (gfx942): compile once; run the executor on the unedited IR (the
kernel counts only if that passes: a kernel that is already wrong or unresolved validates nothing); then, for each
planted bug of executors/llvm_ir/mutations.py that applies to the IR (its construct is there), run the edited IR and
judge it with the campaign's oracle. A mutation is observable when it changes an element the oracle determines (or
faults or races). Two kinds of kernel are counted apart: one where it changes no output bit (a swapped MFMA feeding
a transpose-invariant sum, a barrier a single wave never needed), which no oracle can catch, and one where it changes
only undetermined elements (the order-dependent result of mixed atomics on one address, or of racing stores: the
program itself leaves them open, so no value is wrong there). Prints, per mutation, those counts, the observable
kernels and the share of them flagged (a wrong result beyond the tolerance, a fault or a race), and the median
ratio of emulation time to compile time on the kernels that ran.

Run: `python -P bench/emulate_mutations.py [--kernels 300] [--seed 5] [--workers 2]` (about 2 s a kernel a worker).
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

ENV = {"TRITON_DEFAULT_FP_FUSION": "1", "PYTHONWARNINGS": "ignore", "TRITON_HIP_LLD_PATH": "/usr/lib/llvm-22/bin/ld.lld"}


def one_kernel(spec_json, caps_json, arch):
    """Base run and every applicable mutation of one kernel; returns {"base": verdict, "times": ..., name: verdict}."""
    os.environ.update(ENV)
    with tempfile.TemporaryDirectory(prefix="bench-mut-") as work:
        return _one_kernel(spec_json, caps_json, arch, Path(work))


def _one_kernel(spec_json, caps_json, arch, work):
    from gfxhound import compat
    from gfxhound.fuzz.capabilities import Capabilities
    from gfxhound.oracle.compile_task import _Fd2Redirect, load_kernel
    from gfxhound.executors.llvm_ir.errors import NotModelled
    from gfxhound.executors.llvm_ir.intrinsics import DeviceAssertion
    from gfxhound.executors.llvm_ir.memory import EmulatedFault, EmulatedRace
    from gfxhound.executors.llvm_ir.mutations import MUTATIONS
    from gfxhound.oracle.emulate_task import emulated_kernel
    from gfxhound.oracle.evaluate import UndefinedBehaviour
    from gfxhound.oracle.compare import compare
    from gfxhound.oracle.inputs import make_inputs
    from gfxhound.oracle.run_task import _run_once, _setup, reference
    import torch
    task = {"spec": spec_json, "caps": caps_json, "arch": arch, "task_dir": str(work), "backend": "emulate",
            "stderr_path": str(work / "stderr"), "reruns": 0}
    spec, caps, rendered = _setup(task)
    if spec.family != "kernels":
        return {"base": "other family"}
    try:
        expected = reference(spec, Capabilities.from_json(caps_json), "device", "hip")
    except UndefinedBehaviour:
        return {"base": "ub"}
    kernel = load_kernel(rendered.source, work / "kernel.py", rendered.kernel_name)
    out = {}
    with _Fd2Redirect(task["stderr_path"], stdout=True):
        start = time.perf_counter()
        try:
            compiled = compat.compile_for_amd(kernel, rendered.args, arch, rendered.options, rendered.env)
        except Exception:  # noqa: BLE001
            return {"base": "ice"}
        compile_s = time.perf_counter() - start
        original = compiled.asm["llir"]

        inputs = make_inputs(spec)

        def verdict(text):
            """(verdict, outputs): 'pass', 'flagged' (a wrong result, fault or race), 'unresolved: ...' or 'crash'."""
            compiled.asm["llir"] = text
            try:
                emulated = emulated_kernel(rendered, arch, compiled)
                outputs, problems = _run_once(spec, rendered, emulated, inputs, {}, "cpu")
                result = compare(expected, outputs, problems)
            except NotModelled as exc:
                return "unresolved: " + str(exc)[:80], None, None
            except (EmulatedFault, EmulatedRace, DeviceAssertion):
                return "flagged", None, None
            except Exception:  # noqa: BLE001 - an executor crash is counted, not hidden
                return "crash: " + traceback.format_exc().strip().splitlines()[-1][:120], None, None
            return ("pass" if result.ok else "flagged"), outputs, emulated

        base, base_outputs, emulated = verdict(original)
        out["base"] = base
        if base == "pass":
            out["times"] = [compile_s, emulated.prepare_s + emulated.last_run_s]
            for name, mutation in MUTATIONS.items():
                if not mutation.applies(original):
                    continue
                got, outputs, _ = verdict(mutation.edit(original))
                # observable: the edited kernel changes an element the oracle determines (or it faulted or raced).
                # A mutation that changes no output bit cannot be caught by any oracle; one that changes only
                # undetermined elements (the order-dependent result of mixed atomics or of racing stores, which
                # the program itself leaves open) cannot be caught by a value oracle either: counted apart.
                changed = {} if outputs is None else {k: _changed(outputs[k], base_outputs[k]) for k in base_outputs}
                determined = {k: c & ~expected.outputs[k].bad.reshape(c.shape) for k, c in changed.items()}
                if outputs is not None and not any(c.any() for c in changed.values()):
                    out[name] = "unobservable"
                elif outputs is not None and not any(c.any() for c in determined.values()):
                    out[name] = "undetermined only"
                else:
                    out[name] = got
                if out[name] == "pass":  # a miss: keep what a reader needs to see why
                    out.setdefault("misses", {})[name] = {k: int(c.sum()) for k, c in determined.items()}
                    out["spec"] = spec_json
    return out


def _changed(a, b):
    """Elements whose bits differ (NaN payloads aside)."""
    import torch
    if a.dtype.is_floating_point:
        return ~((a == b) | (torch.isnan(a) & torch.isnan(b))).flatten()
    return (a != b).flatten()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=300)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--target", default="gfx942")
    parser.add_argument("--json", help="write the per-kernel results here")
    args = parser.parse_args()
    os.environ.update(ENV)
    from gfxhound.fuzz.capabilities import introspect
    from gfxhound.fuzz.generate import spec_stream
    caps = introspect(args.target)
    specs = []
    for spec in spec_stream(caps, args.seed, 24, "kernels"):
        if spec.family == "kernels":
            specs.append(spec.to_json())
        if len(specs) == args.kernels:
            break
    results = []
    with ProcessPoolExecutor(args.workers) as pool:
        futures = [pool.submit(one_kernel, s, caps.to_json(), args.target) for s in specs]
        for future in as_completed(futures):
            try:
                results.append(future.result(timeout=600))
            except Exception as exc:  # noqa: BLE001
                results.append({"base": f"worker: {exc}"})
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    bases = [r["base"] for r in results]
    print(f"{len(results)} kernels; unedited run: " + ", ".join(f"{b} {bases.count(b)}" for b in sorted(set(bases))
                                                                  if not b.startswith("unresolved")) +
          f", unresolved {sum(b.startswith('unresolved') for b in bases)}")
    from gfxhound.executors.llvm_ir.mutations import MUTATIONS
    print(f"{'mutation':15} {'applies':>8} {'no change':>9} {'undet.':>7} {'observable':>11} {'flagged':>8} "
          f"{'missed':>7} {'other':>6} {'rate':>7}")
    for name in MUTATIONS:
        got = [r[name] for r in results if name in r]
        flagged, missed = got.count("flagged"), got.count("pass")
        unseen, undetermined = got.count("unobservable"), got.count("undetermined only")
        rate = flagged / (flagged + missed) if flagged + missed else float("nan")
        print(f"{name:15} {len(got):8} {unseen:9} {undetermined:7} {flagged + missed:11} {flagged:8} {missed:7} "
              f"{len(got) - flagged - missed - unseen - undetermined:6} {rate:7.1%}")
    times = [r["times"] for r in results if "times" in r]
    if times:
        ratios = sorted(e / c for c, e in times)
        print(f"emulation / compile time, median over {len(times)} kernels: {statistics.median(ratios):.2f} "
              f"(p90 {ratios[int(0.9 * (len(ratios) - 1))]:.2f}); median compile {statistics.median(c for c, _ in times):.2f} s, "
              f"median emulation {statistics.median(e for _, e in times):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
