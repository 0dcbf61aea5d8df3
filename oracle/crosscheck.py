"""Two executors that share no semantics judge each other: an LLVM IR module run on the IR executor
(executors/llvm_ir: LLVM IR's own semantics) and the machine code llc makes of it at each -O level, run on the
machine-code executor (executors/amdgcn: the ISA's pseudocode). ``gfxhound emulate`` (cli/emulate.py) is its
command line.

``compare(ll, mcpu, opts, launch)`` runs the module once on the IR executor and each level's assembly (plus
Triton's own code generator's, and any ``extra`` Assembly: a ``.s`` a maintainer attached, a planted mutation) on
the machine, on the same inputs, and votes per buffer (``judge``; ``compare_assembly`` does the same for a
kernel given as assembly or a code object, with no IR to run): the runs whose bytes agree form groups; a group
strictly larger than every other is the majority and the rest disagree with it. No run is right by assumption (not O0, not the IR executor); a tie is unresolved.
A run that meets a construct its executor does not model (``NotModelled``) is unresolved and names the construct:
the whole comparison then cannot judge (exit 125 of the repro protocol), whatever the others say. So is a race
the IR executor finds in the IR itself (the kernel is ill-defined), and a run past either executor's step limit.
A fault (an access outside every buffer, a trap) is an outcome like bytes: faults group with faults, wherever
they happen. A workgroup of several waves runs on the machine in two wave orders; outputs that change with the
order (a barrier or a wait the code generator lost) are a fault of that run.

The launch (``Launch``) comes from a ``--launch`` spec (fuzz/launch_spec.py's grammar, plus ``block:`` and the
unsigned dtypes u8/u16/u32/u64 and i16): integer inputs are drawn from a seed with boundary patterns (0, 1, all
ones, the sign bit alone, the largest signed value) mixed in; float inputs are normal values with 0, -0, 1, -1
mixed in; outputs start zero-filled.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

import numpy as np

# LaunchError, ir_params, kernel_names: also the CLI's and the tests' names for them
from gfxhound.oracle.crosscheck_launch import (Launch, LaunchError, ir_params, kernel_names, make_launch,  # noqa: F401
                                               metadata_params)

FORMAT = "gfxhound.emulate/1"
IR_LABEL = "IR"

# --- the runs --------------------------------------------------------------------------------------------------
@dataclass
class Run:
    """One executor's outcome: ``outputs`` name -> array, or ``fault`` (a memory fault, a trap: an outcome the
    others are compared with), or ``unresolved`` (the construct not modelled)."""
    label: str
    outputs: dict = field(default_factory=dict)
    fault: str = ""
    unresolved: str = ""
    detail: str = ""


def _lds_adapted(text: str):
    """The IR executor models Triton's one LDS array, @global_smem at LDS address 0; a hand-written module with
    one LDS global gets it renamed so (llc also puts a lone LDS global at 0). Its size: 64 KiB (the group
    segment's bound on gfx9), as the executor does not read a global's type."""
    found = re.findall(r"^@([\w.$]+)\s*=\s*[^\n]*addrspace\(3\)\s+global", text, re.M)
    if len(found) == 1 and found[0] != "global_smem":
        text = re.sub(rf"@{re.escape(found[0])}\b", "@global_smem", text)
    return text, (65536 if found else 0)


def run_ir(text: str, name: str, arch: str, launch: Launch, schedule: str = "forward") -> Run:
    """The module on the IR executor: waves of 64, one-dimensional workgroups (its workitem ids y and z are 0)."""
    from gfxhound.executors.llvm_ir import core, ir
    from gfxhound.executors.llvm_ir.errors import NotModelled
    from gfxhound.executors.llvm_ir.intrinsics import DeviceAssertion
    from gfxhound.executors.llvm_ir.launch import implicit_args_block, scalar_argument
    from gfxhound.executors.llvm_ir.memory import EmulatedFault, EmulatedRace, GlobalMemory
    run = Run(IR_LABEL)
    threads = launch.block[0] * launch.block[1] * launch.block[2]
    if launch.block[1] != 1 or launch.block[2] != 1:
        run.unresolved = f"a {launch.block[0]}x{launch.block[1]}x{launch.block[2]} workgroup (the IR executor " \
                         "runs one-dimensional workgroups)"
        return run
    if threads % 64:
        run.unresolved = f"a workgroup of {threads} work-items (the IR executor runs whole waves of 64)"
        return run
    try:
        text, lds = _lds_adapted(text)
        try:
            module = ir.parse(text)
        except NotModelled:
            raise
        except Exception as exc:  # noqa: BLE001 - a module its reader does not take: cannot judge, say why
            run.unresolved = f"the IR executor cannot read the module ({type(exc).__name__}: {str(exc)[:200]})"
            return run
        kernel = core.Kernel(module, name, arch, 64)
        heap, mapped, args = GlobalMemory(), [], {}
        for (ty, pname), key, value in zip(kernel.params, launch.names, launch.args):
            if isinstance(value, np.ndarray):
                raw = np.ascontiguousarray(value).view(np.uint8).reshape(-1).copy()
                mapped.append((key, raw, heap.map(raw), value))
                args[pname] = np.array(mapped[-1][2], np.uint64)
            else:
                args[pname] = scalar_argument(ty, value)
        args["__implicitarg"] = np.array(heap.map(implicit_args_block(launch.grid, threads)), np.uint64)
        heap.seal()
        core.run_grid(kernel, args, launch.grid, threads // 64, lds, heap, schedule=schedule)
        for key, raw, address, value in mapped:
            run.outputs[key] = heap.read_back(address, raw.size).copy().view(value.dtype).reshape(value.shape)
    except NotModelled as exc:
        run.unresolved = str(exc)
    except EmulatedRace as exc:  # the kernel itself is ill-defined: no output to hold the others to
        run.unresolved = f"a race between waves in the IR ({exc})"
    except (EmulatedFault, DeviceAssertion) as exc:
        run.fault = f"{type(exc).__name__}: {exc}"
    except core.ExecutorError as exc:
        run.unresolved = f"executor error: {exc}"
    return run


OTHER_ORDER = {"forward": "reverse", "reverse": "forward", "alternate": "reverse"}


def run_machine(label: str, assembly, name: str, launch: Launch, schedule: str = "forward") -> Run:
    """The assembly on the machine-code executor. A workgroup of several waves runs twice, in `schedule`'s wave
    order and in another: outputs that change with the order are a race in the machine code (a barrier or a wait
    lost), an outcome of its own (``fault``) that disagrees with every race-free run."""
    from gfxhound.executors.amdgcn.machine import MachineFault, StepLimit
    from gfxhound.executors.amdgcn.run import NotModelled, launch as run_launch
    run = Run(label)
    threads = launch.block[0] * launch.block[1] * launch.block[2]
    # a second wave order where waves can race; and a kernel that preloads kernargs runs from both entries (firmware
    # that preloads starts 256 bytes in, other firmware at the compatibility prologue): they must agree
    preloads = re.search(r"\.amdhsa_user_sgpr_kernarg_preload_length\s+[1-9]", getattr(assembly, "text", "") or "")
    orders = [(schedule, False)] + ([(OTHER_ORDER[schedule], False)] if threads > 64 else []) + \
        ([(schedule, True)] if preloads else [])
    try:
        seen = []
        for order, preload in orders:
            try:
                result = run_launch(assembly, None, [a.copy() if isinstance(a, np.ndarray) else a
                                                     for a in launch.args],
                                    launch.grid, launch.block, kernel=name, schedule=order, preload_entry=preload)
            except (ValueError, TypeError) as exc:  # the launch does not fit the kernel (launch() checks it)
                raise LaunchError(f"{label}: {exc}") from None
            except (NotModelled, MachineFault):
                raise
            except Exception as exc:  # noqa: BLE001 - the executor's own failure: cannot judge, say where
                run.unresolved = f"machine executor error: {type(exc).__name__}: {str(exc)[:200]}"
                return run
            seen.append({pname: result.outputs[i] for i, pname in enumerate(launch.names) if i in result.outputs})
            if result.hazards and not run.detail:
                run.detail = f"{len(result.hazards)} read(s) of a register whose load was not waited for"
            if result.wait_hazards and "wait states" not in run.detail:
                rule, producer, consumer = result.wait_hazards[0][4:7]
                lines = [ins.line for ins in _instructions(assembly, name, producer, consumer)]
                run.detail = (run.detail + "; " if run.detail else "") + \
                    f"{len(result.wait_hazards)} pair(s) run with fewer wait states than the guide requires " \
                    f"(rule {rule}: line {lines[0]} -> line {lines[1]})"
        run.outputs = seen[0]
        for (order, preload), other in zip(orders[1:], seen[1:]):
            key = next((k for k, first in seen[0].items() if not _same(first, other[k])), None)
            if key is not None:
                i = int(np.flatnonzero(~_elementwise_same(seen[0][key].reshape(-1), other[key].reshape(-1)))[0])
                a, b = _plain(seen[0][key].reshape(-1)[i]), _plain(other[key].reshape(-1)[i])
                run.fault = (f"the preloaded entry and the compatibility prologue disagree: {key}[{i}] is {a} from "
                             f"the prologue, {b} from the preloaded entry" if preload else
                             f"a race between waves: {key}[{i}] is {a} in {orders[0][0]} wave order, {b} in {order}")
                break
    except NotModelled as exc:
        run.unresolved = str(exc)
    except StepLimit as exc:  # a long loop or a hang: the IR executor's block limit is unresolved too
        run.unresolved = f"step limit: {exc}"
    except MachineFault as exc:
        run.fault = f"MachineFault: {exc}"
    return run


def _instructions(assembly, name, *indices):
    """The Instruction records at `indices` of kernel `name` (an image index past the kernel: a callee's)."""
    from gfxhound.executors.amdgcn.asm import parse_program
    from gfxhound.executors.amdgcn.machine_calls import link
    program = parse_program(getattr(assembly, "text", assembly))
    image, _ = link(program.function(name), program)
    return [image[i] for i in indices]


# --- the vote --------------------------------------------------------------------------------------------------
def _same(a, b) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind == "f":  # bit-exact, except that any NaN equals any NaN
        nan = np.isnan(a) & np.isnan(b)
        return bool(np.all(nan | (a.view(f"u{a.itemsize}") == b.view(f"u{b.itemsize}"))))
    return bool(np.array_equal(a, b))


def _outcome(run: Run, name: str):
    return ("fault", run.fault) if run.fault else ("bytes", run.outputs.get(name))


def _groups(runs, name) -> list:
    """[[label, ...], ...]: runs whose outcome for buffer `name` is the same, largest group first."""
    groups = []
    for run in runs:
        kind, value = _outcome(run, name)
        for g in groups:
            k2, v2 = g[0]
            if kind == k2 and (kind == "fault" or _same(value, v2)):  # a fault is one outcome, wherever it is
                g[1].append(run.label)
                break
        else:
            groups.append([(kind, value), [run.label]])
    groups.sort(key=lambda g: -len(g[1]))
    return [g[1] for g in groups]


def vote(runs: list, roles: dict) -> dict:
    """The verdict: ``status`` agree | disagree | unresolved, ``rows`` per buffer, ``unresolved`` the constructs."""
    judged = [r for r in runs if not r.unresolved]
    unresolved = [{"run": r.label, "construct": r.unresolved} for r in runs if r.unresolved]
    names = list(roles)
    rows, status = [], "agree"
    for name in names:
        # an input's row counts only runs that finished (a fault is already shown on each output)
        voters = [r for r in judged if not r.fault] if roles[name] == "in" else judged
        groups = _groups(voters, name) if voters else []
        row = {"buffer": name, "role": roles[name], "groups": groups}
        if len(groups) <= 1:
            row["verdict"] = "agree"
        elif len(groups[0]) > len(groups[1]):
            row["verdict"] = "disagree"
            row["majority"] = groups[0]
            row["minority"] = [label for g in groups[1:] for label in g]
            row["first_difference"] = _first_difference(voters, name, groups[0][0], row["minority"])
        else:
            row["verdict"] = "tie"
        if row["verdict"] == "agree" and roles[name] == "in":
            continue  # an input every run left alone: nothing to show
        rows.append(row)
    verdicts = {r["verdict"] for r in rows}
    if unresolved or "tie" in verdicts:
        status = "unresolved"
    elif "disagree" in verdicts:
        status = "disagree"
    return {"status": status, "rows": rows, "unresolved": unresolved}


def _first_difference(runs, name, reference, others) -> dict:
    by = {r.label: r for r in runs}
    ref = by[reference]
    for label in others:
        run = by[label]
        if ref.fault or run.fault:
            return {"run": label, "what": run.fault or "no fault", "majority": ref.fault or "no fault"}
        a, b = ref.outputs[name].reshape(-1), run.outputs[name].reshape(-1)
        if a.shape != b.shape:
            return {"run": label, "what": f"shape {b.shape} vs {a.shape}"}
        differ = np.flatnonzero(~_elementwise_same(a, b))
        if differ.size:
            i = int(differ[0])
            return {"run": label, "index": i, "count": int(differ.size), "value": _plain(b[i]),
                    "majority": _plain(a[i])}
    return {}


def _elementwise_same(a, b):
    if a.dtype.kind == "f":
        return (np.isnan(a) & np.isnan(b)) | (a.view(f"u{a.itemsize}") == b.view(f"u{b.itemsize}"))
    return a == b


def _plain(x):
    """A numpy element as JSON can hold it: NaN and the infinities as their names (JSON has no such numbers)."""
    x = x.item() if hasattr(x, "item") else x
    return str(x) if isinstance(x, float) and x != x or x in (float("inf"), float("-inf")) else x


def codegen_of(assembly) -> str:
    """What made a machine run's code, as the report names it: "llc -O2", "triton-3.9.0" (the release the
    interpreter imported), or the file as given (a .s, a code object)."""
    if assembly.source == "llc":
        return f"llc -{assembly.opt}"
    if assembly.source == "triton":
        return f"triton-{triton_version(assembly)}"
    return assembly.path or assembly.source


def triton_version(assembly) -> str:
    words = assembly.tool.split()  # "triton 3.9.0 (pinned AMD code generator ...)"
    return words[1] if len(words) > 1 and words[0] == "triton" else "unknown"


def group_values(row: dict, runs: list, count: int = 8) -> list:
    """The first `count` elements of buffer row["buffer"] per group of the row (a fault: its text), so a report
    shows the outputs themselves, not only which runs share them (with one run there is nothing else to show)."""
    by = {r.label: r for r in runs}
    out = []
    for group in row["groups"]:
        run = by[group[0]]
        if run.fault:
            out.append(run.fault)
        else:
            flat = run.outputs[row["buffer"]].reshape(-1)
            out.append([_plain(x) for x in flat[:count]])
    return out


@dataclass
class Comparison:
    kernel: str
    mcpu: str
    launch: Launch
    runs: list
    verdict: dict
    assemblies: dict = field(default_factory=dict)  # label -> Assembly
    seeds_run: int = 1
    # seconds: "compile" label -> the code generator's time, "ir" the IR executor's run, "machine" label -> the
    # machine's runs (the last seed's); a campaign reports execution against compile time (oracle/ir_campaign.py)
    timings: dict = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return {"agree": 0, "disagree": 1}.get(self.verdict["status"], 125)

    def to_json(self) -> dict:
        return {"format": FORMAT, "status": self.verdict["status"], "exit": self.exit_code, "kernel": self.kernel,
                "mcpu": self.mcpu, "seed": self.launch.seed, "seeds_run": self.seeds_run,
                "grid": list(self.launch.grid),
                "block": list(self.launch.block), "scalars": self.launch.values,
                "runs": [self._run_json(r) for r in self.runs],
                "buffers": [dict(row, values=group_values(row, self.runs, 16)) for row in self.verdict["rows"]],
                "unresolved": self.verdict["unresolved"], **({"timings": self.timings} if self.timings else {})}

    def _run_json(self, r: Run) -> dict:
        asm = self.assemblies.get(r.label)
        return {"label": r.label, "executor": "machine" if asm is not None else "ir",
                "status": "unresolved" if r.unresolved else "fault" if r.fault else "ran",
                **({"unresolved": r.unresolved} if r.unresolved else {}),
                **({"fault": r.fault} if r.fault else {}), **({"note": r.detail} if r.detail else {}),
                **({"codegen": codegen_of(asm), "command": list(asm.command), "tool": asm.tool}
                   if asm is not None else {})}


def compare(ll, mcpu: str, opts, launch_text: str, llc: str | None = None, kernel: str | None = None,
            seed: int = 0, block=None, extra: dict | None = None, schedule: str = "forward",
            seeds: int = 1, tritons=()) -> Comparison:
    """Run `ll` (a path) on the IR executor and at each llc level in `opts` on the machine (plus one run of the
    Triton code generator each interpreter in ``tritons`` imports, labelled "triton-<its version>", and ``extra``:
    label -> Assembly), and vote; with ``seeds`` > 1, inputs from seeds `seed`, `seed` + 1, ... until one does
    not agree (that one is returned; else the last). Raises LaunchError / CodegenError for what the user must
    fix."""
    from pathlib import Path

    from gfxhound.executors.amdgcn.codegen import from_ll, from_ll_triton
    text = Path(ll).read_text(errors="replace")
    names = kernel_names(text)
    if kernel is None:
        if len(names) != 1:
            raise LaunchError(f"the module has {len(names)} kernels ({', '.join(names) or 'none'}); name one with "
                              "--kernel")
        kernel = names[0]
    elif kernel not in names:
        raise LaunchError(f"no kernel @{kernel} in the module (it has {', '.join(names) or 'none'})")
    params = ir_params(text, kernel)
    make_launch(launch_text, params, seed, block)  # a bad spec stops before anything compiles
    timings, assemblies = {"compile": {}, "ir": 0.0, "machine": {}}, {}
    for o in opts:
        label, started = f"O{str(o).lstrip('Oo')}", time.perf_counter()
        assemblies[label] = from_ll(ll, mcpu, o, llc)
        timings["compile"][label] = time.perf_counter() - started
    for python in tritons:
        started = time.perf_counter()
        asm = from_ll_triton(ll, mcpu, python)
        label = unique_label(f"triton-{triton_version(asm)}", assemblies, python)
        assemblies[label] = asm
        timings["compile"][label] = time.perf_counter() - started
    for label, asm in (extra or {}).items():
        assemblies[unique_label(label, assemblies, asm.path)] = asm
    return judge(text, kernel, mcpu, launch_text, params, assemblies, seed, block, schedule, seeds, timings)


def compare_assembly(assemblies: dict, launch_text: str, kernel: str | None = None, seed: int = 0, block=None,
                     schedule: str = "forward", seeds: int = 1) -> Comparison:
    """Machine code with no IR (a .s, a code object): each of `assemblies` (label -> Assembly; the first's kernel
    metadata names the arguments) on the machine, and the vote. One run agrees with itself when it ran (exit 0),
    is unresolved (125) when it met what the executor does not model; two that differ tie (125)."""
    label, first = next(iter(assemblies.items()))
    kernel, params = metadata_params(first, kernel, label)
    make_launch(launch_text, params, seed, block)  # a bad spec stops here, one line
    return judge(None, kernel, first.mcpu, launch_text, params, assemblies, seed, block, schedule, seeds)


def unique_label(label: str, taken, other: str) -> str:
    """`label`, or where a run already has it (two interpreters of one Triton release, two files of one name)
    `label` (`other`), so every run keeps a name of its own."""
    return label if label not in taken else f"{label} ({other})"


def judge(text, kernel: str, mcpu: str, launch_text: str, params: list, assemblies: dict, seed: int = 0,
          block=None, schedule: str = "forward", seeds: int = 1, timings: dict | None = None) -> Comparison:
    """The runs and the vote, seed after seed: `text` (LLVM IR, or None where the kernel came as machine code and
    there is no IR to run) on the IR executor, each of `assemblies` (label -> Assembly) on the machine."""
    timings = timings if timings is not None else {"compile": {}, "ir": 0.0, "machine": {}}
    for k in range(max(1, seeds)):
        launch = make_launch(launch_text, params, seed + k, block)
        started = time.perf_counter()
        runs = [run_ir(text, kernel, mcpu, launch, schedule)] if text is not None else []
        timings["ir"] = time.perf_counter() - started
        for label, asm in assemblies.items():
            started = time.perf_counter()
            runs.append(run_machine(label, asm, kernel, launch, schedule))
            timings["machine"][label] = time.perf_counter() - started
        result = Comparison(kernel, mcpu, launch, runs, vote(runs, launch.roles), assemblies, k + 1, timings)
        if result.verdict["status"] != "agree":
            break
    return result
