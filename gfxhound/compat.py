"""Compile a Triton kernel for an AMD target exactly as the runtime would, on any Triton 3.x.

Why self-contained (standard library + triton only, no gfxhound imports): repro scripts embed a copy, and they are
what bisection runs on releases from 3.0 to today. Three things vary across releases and live only here:
- the ``ASTSource`` calling convention (changed at 3.3),
- argument specialisation (``tt.divisibility``; ``tt.pointer_range`` on HIP since 3.4; ints equal to 1 become
  constexprs), which we take from the backend's own hooks so a compile-only campaign sees the runtime's code paths
  (with the release's own knob defaults: buffer ops default off in 3.4/3.5, on from 3.6; and where a release's
  ``is_within_2gb`` imports torch first, 3.4-3.7, a stand-in module lets it run without torch),
- the backend's stage table, which we wrap to print ``##gfxhound-stage <name>`` on fd 2 before each stage, so a
  process killed by LLVM still says where it died.
"""
import contextlib
import os
import re
import subprocess
import sys
import types

from gfxhound.llc_text import LLC_ENDED, LLC_STAGE, STAGE_MARK, classify_llc  # noqa: F401 - re-exported
WAVE64_PREFIXES = ("gfx90", "gfx94", "gfx95")


def triton_version():
    import triton
    return triton.__version__


def version_tuple(text):
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def warp_size(arch):
    return 64 if arch.startswith(WAVE64_PREFIXES) else 32


def hip_backend_class():
    from triton.backends.amd.compiler import HIPBackend
    return HIPBackend


def backend_class(name="hip"):
    """The compiler backend whose specialisation hooks and stages we use: 'hip' (AMD) or 'cuda'."""
    if name == "cuda":
        from triton.backends.nvidia.compiler import CUDABackend
        return CUDABackend
    return hip_backend_class()


class StubTensor:
    """Stands for a device tensor during specialisation: 256-byte aligned, ``nbytes`` long."""

    def __init__(self, nbytes):
        self.nbytes = nbytes

    def data_ptr(self):
        return 0x7F0000000000

    def ptr_range(self):
        return self.nbytes


MAX_INT_32 = 2**31 - 1
# How pointer specialisation was decided in this process (specialisation_report() tells the toolchain record):
# "hooks" (the backend's own), "hooks+stand-in" (the same with a torch stand-in) or "fallback: <why>".
_HOW = {"method": None}
_ABSENT = object()


def _backend_spec(backend, arg, kind):
    if kind == "ptr" and hasattr(backend, "get_tensor_specialization"):
        return backend.get_tensor_specialization(arg, align=True)
    if kind == "int" and hasattr(backend, "get_int_specialization"):
        return backend.get_int_specialization(arg, align=True)
    if hasattr(backend, "get_arg_specialization"):
        return backend.get_arg_specialization(arg, "tensor" if kind == "ptr" else "int", align=True)
    return None


@contextlib.contextmanager
def torch_stand_in():
    """Put a stand-in ``torch`` module in ``sys.modules`` for the duration (only where torch is not there).

    Triton 3.4-3.7's ``HIPBackend.is_within_2gb`` runs ``import torch`` before it looks at the argument; the
    argument we pass (a StubTensor) answers through ``ptr_range()``, which the release checks first, so the stand-in
    is never used beyond that import and the release's own rule and knob default decide.
    """
    before = sys.modules.get("torch", _ABSENT)
    if before is not _ABSENT and before is not None:  # the real torch (None: an import blocked on purpose)
        yield
        return
    stand_in = types.ModuleType("torch")
    stand_in.Tensor = type("Tensor", (), {})  # nothing is an instance: a StubTensor is judged by ptr_range()
    stand_in.__gfxhound_stand_in__ = True
    sys.modules["torch"] = stand_in
    try:
        yield
    finally:
        if sys.modules.get("torch") is stand_in:
            if before is _ABSENT:
                del sys.modules["torch"]
            else:
                sys.modules["torch"] = before


def _torch_missing(exc):
    return (getattr(exc, "name", None) or "").split(".")[0] == "torch"


def _spec_string(backend, value, kind):
    """The backend's specialisation letters for one argument ('D' divisible by 16, 'S' within 2 GB, ...)."""
    arg = StubTensor(value) if kind == "ptr" else value
    if _HOW["method"] != "hooks+stand-in":
        try:
            desc = _backend_spec(backend, arg, kind)
            if desc is not None:
                _HOW["method"] = _HOW["method"] or "hooks"
                return desc
            _HOW["method"] = "rule (no backend hooks before 3.2; no tt.pointer_range before 3.4)"
            return "D" if (kind == "int" and value % 16 == 0) or kind == "ptr" else ""
        except ImportError as exc:
            if not _torch_missing(exc):
                raise
    try:
        with torch_stand_in():
            desc = _backend_spec(backend, arg, kind)
        if not (_HOW["method"] or "").startswith("fallback"):  # a fallback once in this process is what to report
            _HOW["method"] = "hooks+stand-in"
        return desc
    except Exception as exc:  # noqa: BLE001 - a release whose rule we cannot run: decide as documented, say so
        _HOW["method"] = f"fallback: {type(exc).__name__}: {str(exc)[:120]}"
        return _fallback_spec(value, kind)


def buffer_ops_knob():
    """The installed release's own ``AMDGCN_USE_BUFFER_OPS`` setting (its default where the variable is unset),
    or None for a Triton without ``triton.knobs`` (before 3.4)."""
    try:
        from triton import knobs
        return bool(knobs.amd.use_buffer_ops)
    except (ImportError, AttributeError):
        return None


def _fallback_spec(value, kind):
    """The 3.4-3.9 rule, written out: only where the release's own hook cannot run at all."""
    if kind == "int":
        return "D" if value % 16 == 0 else ""
    return "D" + ("S" if buffer_ops_knob() and value <= MAX_INT_32 else "")


def specialisation_report(backend_name="hip"):
    """How this process decides argument specialisation, for the toolchain record: the method, whether it is the
    release's own rule (``exact``), whether a 4 KB pointer gets ``tt.pointer_range`` as things stand (the knob's
    default unless AMDGCN_USE_BUFFER_OPS is set), and a one-line notice when it is not exact."""
    import importlib.util
    probe = [{"name": "p", "kind": "ptr", "type": "*fp32", "value": 4096}]
    _signature, _constexprs, attrs = specialise(probe, backend_name)
    method = _HOW["method"] or "hooks"
    report = {"method": method, "exact": not method.startswith("fallback"),
              "torch": importlib.util.find_spec("torch") is not None,
              "buffer_ops_knob": buffer_ops_knob(), "buffer_ops_env": os.environ.get("AMDGCN_USE_BUFFER_OPS"),
              "pointer_range_on_4kb": ["tt.pointer_range", 32] in attrs.get("p", [])}
    if not report["exact"]:
        report["notice"] = (f"triton {triton_version()}'s own pointer specialisation cannot run here "
                            f"({method[len('fallback: '):]}); tt.pointer_range follows its AMDGCN_USE_BUFFER_OPS "
                            f"knob ({report['buffer_ops_knob']}) and may differ from a real launch")
    return report


def specialise(args, backend_name="hip"):
    """Runtime-equivalent (signature, constexprs, attrs) keyed by argument name.

    ``args`` is a list of dicts: {name, kind: ptr|int|float|constexpr, type, value, nospec?}. For ``ptr`` the value
    is the buffer's size in bytes; ``nospec`` marks a parameter the kernel does not specialise on.
    """
    backend = backend_class(backend_name)
    signature, constexprs, attrs = {}, {}, {}
    for arg in args:
        name, kind, value = arg["name"], arg["kind"], arg.get("value")
        if arg.get("nospec"):  # a parameter in the kernel's do_not_specialize list: plain type, no attributes
            signature[name] = arg["type"]
            continue
        if kind == "constexpr" or (kind == "int" and value == 1):
            signature[name] = "constexpr"
            constexprs[name] = value
            continue
        signature[name] = arg["type"]
        if kind in ("ptr", "int"):
            desc = _spec_string(backend, value, kind)
            found = backend.parse_attr(desc) if hasattr(backend, "parse_attr") else []
            if found:
                attrs[name] = [list(a) for a in found]
    return signature, constexprs, attrs


def make_source(fn, signature, constexprs, attrs):
    """An ``ASTSource`` in whichever calling convention the installed Triton speaks."""
    from triton.compiler import ASTSource
    names = list(fn.arg_names)
    if version_tuple(triton_version()) >= (3, 3):
        index_attrs = {(names.index(n),): v for n, v in attrs.items()}
        return ASTSource(fn, signature=dict(signature), constexprs=dict(constexprs), attrs=index_attrs)
    from triton.compiler.compiler import AttrsDescriptor
    sig = {n: t for n, t in signature.items() if t != "constexpr"}
    divisible = [names.index(n) for n, v in attrs.items() if ["tt.divisibility", 16] in v]
    if version_tuple(triton_version()) >= (3, 2):
        desc = AttrsDescriptor.from_dict({"arg_properties": {"tt.divisibility": divisible}, "cls": "AttrsDescriptor"})
    else:
        desc = AttrsDescriptor(divisible_by_16=tuple(divisible), equal_to_1=())
    return ASTSource(fn, signature={names.index(n): t for n, t in sig.items()},
                     constants={names.index(n): v for n, v in constexprs.items()}, attrs=desc)


def install_stage_markers(on_output=None):
    """Wrap every stage the HIP backend registers: print a marker on fd 2 first, hand the output to on_output."""
    backend = hip_backend_class()
    original = backend.add_stages
    if getattr(original, "_gfxhound_marked", False):
        backend.add_stages._gfxhound_on_output[0] = on_output
        return
    holder = [on_output]

    def add_stages(self, stages, options, *rest):
        original(self, stages, options, *rest)
        for name, fn in list(stages.items()):
            stages[name] = _marked(name, fn, holder)

    add_stages._gfxhound_marked = True
    add_stages._gfxhound_on_output = holder
    backend.add_stages = add_stages


def _marked(name, fn, holder):
    def run(src, metadata):
        os.write(2, f"{STAGE_MARK} {name}\n".encode())
        out = fn(src, metadata)
        if holder[0] is not None:
            holder[0](name, out)
        return out
    return run


def compile_for_amd(fn, args, arch, options, env_knobs=None):
    """Compile ``fn`` for ``arch`` with runtime-equivalent specialisation; returns the CompiledKernel."""
    from triton.backends.compiler import GPUTarget
    return compile_for_target(fn, args, GPUTarget("hip", arch, warp_size(arch)), options, env_knobs)


def compile_for_target(fn, args, target, options, env_knobs=None):
    """Compile ``fn`` for a ``GPUTarget`` with runtime-equivalent specialisation (no GPU needed)."""
    import triton
    with environment(env_knobs or {}):
        signature, constexprs, attrs = specialise(args, target.backend)
        src = make_source(fn, signature, constexprs, attrs)
        return triton.compile(src, target=target, options=dict(options))


def compile_ttgir_for_amd(text, path, arch, options, env_knobs=None):
    """Compile TTGIR text (written to ``path``, a ``.ttgir`` file) for ``arch``: the path a layout-mutated kernel
    takes, in campaigns and in its repro."""
    import triton
    from triton.backends.compiler import GPUTarget
    with open(path, "w") as f:
        f.write(text)
    with environment(env_knobs or {}):
        return triton.compile(str(path), target=GPUTarget("hip", arch, warp_size(arch)), options=dict(options))


@contextlib.contextmanager
def environment(values):
    """Set environment variables (knobs Triton reads from the environment) for the duration, then restore them."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update({k: str(v) for k, v in values.items()})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


_RESOURCE_KEYS = ("vgpr_count", "agpr_count", "sgpr_count", "vgpr_spill_count", "sgpr_spill_count",
                  "private_segment_fixed_size")


def resources(compiled):
    """Static resource figures of an AMD kernel: registers, spills, scratch, LDS, occupancy."""
    text = compiled.asm.get("amdgcn", "") if hasattr(compiled, "asm") else ""
    out = {}
    for key in _RESOURCE_KEYS:
        m = re.search(r"\.%s:\s+(\d+)" % key, text)
        if m:
            out[key] = int(m.group(1))
    m = re.search(r";\s*Occupancy:\s*(\d+)", text)
    if m:
        out["occupancy"] = int(m.group(1))
    out["lds"] = int(getattr(compiled.metadata, "shared", 0) or 0)
    return out


def applied_options(compiled, names):
    """The options the compiler really used (releases silently drop ones they do not know)."""
    meta = compiled.metadata
    return {n: getattr(meta, n) for n in names if hasattr(meta, n)}




def llc_command(llc, arch, llir_path, fp_contract=True):
    """The llc command line Triton's own code generation corresponds to: -O3, fp contraction when fusion is on,
    and the machine verifier."""
    cmd = [str(llc), "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={arch}", "-O3", "-verify-machineinstrs",
           "-filetype=null"]
    if fp_contract:
        cmd.append("-fp-contract=fast")
    cmd.append(str(llir_path))
    return cmd


def llc_verify(llc, arch, llir_path, timeout=120, fp_contract=True):
    """Run LLVM's ``llc`` with the machine verifier on Triton's LLVM IR, with the flags Triton's own code
    generation uses (-O3, fp contraction when fusion is on). Returns (status, text):
    'ok' | 'unparsable' | 'unsupported' (cannot test with this llc) | 'failed' | 'timeout'.
    """
    try:
        proc = subprocess.run(llc_command(llc, arch, llir_path, fp_contract), capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", f"{STAGE_MARK} {LLC_STAGE}\nllc did not finish in {timeout} s"
    except OSError as exc:
        return "unsupported", f"llc cannot run: {exc}"
    return classify_llc(proc.returncode, proc.stderr or "")

