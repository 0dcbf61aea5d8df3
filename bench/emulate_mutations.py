"""The emulate backend's validation figures over generated kernels: planted lowering bugs caught, and speed.

For each kernel of the default generator stream (gfx942): compile once; run the executor on the unedited IR (the
kernel counts only if that passes: a kernel that is already wrong or unresolved validates nothing); then, for each
planted bug of oracle/emulate/mutations.py that applies to the IR (its construct is there), run the edited IR and
judge it with the campaign's oracle. A mutation is observable when it changes an output bit (or faults or races): one
that changes nothing (a swapped MFMA feeding a transpose-invariant sum, a barrier a single wave never needed) cannot
be caught by any oracle. Prints, per mutation, the kernels it applied to and was observable in, and the share of the
observable ones flagged (a wrong result beyond the tolerance, a fault or a race), and the median ratio of emulation
time to compile time on the kernels that ran.

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
    from gfxhound import compat
    from gfxhound.fuzz.capabilities import Capabilities
    from gfxhound.oracle.compile_task import _Fd2Redirect, load_kernel
    from gfxhound.oracle.emulate.errors import NotModelled
    from gfxhound.oracle.emulate.intrinsics import DeviceAssertion
    from gfxhound.oracle.emulate.memory import EmulatedFault, EmulatedRace
    from gfxhound.oracle.emulate.mutations import MUTATIONS
    from gfxhound.oracle.emulate_task import emulated_kernel
    from gfxhound.oracle.evaluate import UndefinedBehaviour
    import torch

    from gfxhound.oracle.compare import compare
    from gfxhound.oracle.inputs import make_inputs
    from gfxhound.oracle.run_task import _run_once, _setup, reference

    def _bits(t):
        return t.contiguous().view(torch.uint8) if t.dtype != torch.bool else t
    work = Path(tempfile.mkdtemp(prefix="bench-mut-"))
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
                # observable: the edited kernel's outputs differ bit for bit from the unedited one's (or it
                # faulted or raced); a mutation that changes no output bit cannot be caught by any oracle
                same = outputs is not None and all(torch.equal(_bits(outputs[k]), _bits(base_outputs[k]))
                                                   for k in base_outputs)
                out[name] = got if not same else "unobservable"
    return out


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
    from gfxhound.oracle.emulate.mutations import MUTATIONS
    print(f"{'mutation':15} {'applies':>8} {'observable':>11} {'flagged':>8} {'missed':>7} {'other':>6} {'rate':>7}")
    for name in MUTATIONS:
        got = [r[name] for r in results if name in r]
        flagged, missed, unseen = got.count("flagged"), got.count("pass"), got.count("unobservable")
        rate = flagged / (flagged + missed) if flagged + missed else float("nan")
        print(f"{name:15} {len(got):8} {flagged + missed:11} {flagged:8} {missed:7} "
              f"{len(got) - flagged - missed - unseen:6} {rate:7.1%}")
    times = [r["times"] for r in results if "times" in r]
    if times:
        ratios = sorted(e / c for c, e in times)
        print(f"emulation / compile time, median over {len(times)} kernels: {statistics.median(ratios):.2f} "
              f"(p90 {ratios[int(0.9 * (len(ratios) - 1))]:.2f}); median compile {statistics.median(c for c, _ in times):.2f} s, "
              f"median emulation {statistics.median(e for _, e in times):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
