"""On a GPU: the compile backend specialises arguments exactly as Triton's runtime does.

Each generated kernel is launched through the real runtime (kernel[grid](...)) and also compiled the way
campaigns compile (compat.compile_for_target with stub arguments); their TTIR must be identical, locations aside.
On NVIDIA this checks the generic specialisation (divisibility, integers equal to 1 as constexprs); the HIP-only
`tt.pointer_range` is covered by tests/oracle/test_compile_backend.py on the CPU.
"""
import itertools
import re
from collections import Counter

import pytest

pytestmark = pytest.mark.gpu

KERNELS = 60


def _strip_locations(ttir):
    text = re.sub(r"loc\([^()]*(\([^()]*\))?[^()]*\)", "", ttir)
    return "\n".join(line.rstrip() for line in text.splitlines() if not line.startswith("#loc"))


def _cuda_caps():
    from gfxhound.fuzz.capabilities import Capabilities, assume_all
    caps = assume_all("cuda").to_json()
    caps.update(knobs={}, env_knobs={})  # AMD options mean nothing to the CUDA backend
    caps["features"] = [f for f in caps["features"] if not f.startswith(("atomic:xchg:fp16", "atomic:xchg:bf16",
                                                                        "atomic:max:fp16", "atomic:max:bf16",
                                                                        "math:"))  # fp32-only math
                        and f not in ("fp8:fp8e4b8", "fp8:fp8e5b16")]  # the fnuz fp8 types are AMD's
    return Capabilities.from_json(caps)


def test_compile_only_ttir_equals_the_runtime_ttir(tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a GPU")
    from triton.backends.compiler import GPUTarget

    from gfxhound import compat
    from gfxhound.fuzz.generate import spec_stream
    from gfxhound.fuzz.render import render
    from gfxhound.oracle.compile_task import load_kernel

    caps = _cuda_caps()
    major, minor = torch.cuda.get_device_capability()
    target = GPUTarget("cuda", major * 10 + minor, 32)
    from gfxhound.oracle.numeric import TORCH
    # every dtype the generator knows (fp8 too), and Triton's names of the raw ones (MX scales are *u8)
    torch_dtypes = {**TORCH, "u8": torch.uint8, "i16": torch.int16, "u16": torch.uint16, "u32": torch.uint32,
                    "u64": torch.uint64}
    compared, rejected, reasons = 0, 0, Counter()
    # kernel shapes include tensor descriptors made on the device (the descriptor template): the runtime asks for
    # their global scratch through triton.set_allocator, as a user's program must set it
    from gfxhound.oracle.user_data import set_device_allocator
    set_device_allocator("cuda")
    for i, spec in enumerate(itertools.islice(spec_stream(caps, seed=77), KERNELS)):
        for arg in spec.inputs:
            arg.pop("huge", None)  # a real > 2 GB buffer per kernel is not worth it here
        rendered = render(spec, caps)
        (tmp_path / f"k{i}").mkdir()
        kernel = load_kernel(rendered.source, tmp_path / f"k{i}" / "kernel.py", rendered.kernel_name)
        ours_error = launch_error = ""
        try:
            ours = compat.compile_for_target(kernel, rendered.args, target, rendered.options)
        except Exception as exc:  # noqa: BLE001 - a kernel this backend rejects: the runtime must reject it too
            ours = None
            ours_error = f"{type(exc).__name__}: {str(exc).strip()[-300:]}"
            reasons[str(exc).strip().splitlines()[-1][:100]] += 1
        values, constexprs = [], {}
        for arg in rendered.args:
            if arg["kind"] == "ptr":
                dtype = torch_dtypes[arg["type"][1:]]
                size = max(1, arg["value"] // torch.empty((), dtype=dtype).element_size())
                values.append(torch.zeros(size, dtype=dtype, device="cuda"))
            elif arg["kind"] == "constexpr":
                constexprs[arg["name"]] = arg["value"]
            else:
                values.append(arg["value"])
        try:
            launched = kernel[rendered.grid](*values, **constexprs, num_warps=rendered.options["num_warps"],
                                            num_stages=rendered.options["num_stages"])
            torch.cuda.synchronize()
        except Exception as exc:  # noqa: BLE001
            launched = None
            launch_error = f"{type(exc).__name__}: {str(exc).strip()[-300:]}"
        assert (ours is None) == (launched is None), (f"kernel {i}: only one side compiled (compile-only: "
                                                      f"{ours_error or 'ok'}; launch: {launch_error or 'ok'})\n"
                                                      f"{rendered.source[-2000:]}")
        if ours is None:
            rejected += 1
            continue
        assert _strip_locations(ours.asm["ttir"]) == _strip_locations(launched.asm["ttir"]), rendered.source
        compared += 1
    print(f"runtime parity: {compared} kernels identical, {rejected} rejected by both, of {KERNELS}")
    print("rejected because:", dict(reasons))
    assert compared >= KERNELS * 0.75  # the rest are rejected by both (int8 dots need K >= 32 on sm_90, ...)
