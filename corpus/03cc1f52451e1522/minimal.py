#!/usr/bin/env python3
"""Hand-minimised repro of finding 03cc1f52451e1522: a loop-carried variable assigned from another loop-carried
variable that held the same value before the loop is not carried (Triton's frontend, so every backend).

    c_old = c_new = flag          # two names, one value
    for k in range(0, 2):
        c_old = c_new             # must read the previous iteration's c_new
        c_new = ~flag
    # expected: c_old == c_new == ~flag; Triton 3.5.1-3.9.0 give c_old == flag

On a GPU (CUDA or ROCm) the kernel runs; without one it is compiled for gfx942 and the TTIR is read: the two
stores must store the same value. Exit 0 = correct, 1 = bug present, 125 = cannot test.
"""
import os
import re
import sys

try:
    import triton
    import triton.language as tl
except ImportError as exc:
    print(f"cannot test: {exc}")
    sys.exit(125)


@triton.jit
def swap_store(out, flag_in):
    flag = tl.load(flag_in) == 1  # False at run time; unknown to the compiler
    not_flag = ~flag
    c_old = flag
    c_new = flag
    for k in range(0, 2):
        c_old = c_new
        c_new = not_flag
    tl.store(out + 0, c_old.to(tl.int32))
    tl.store(out + 1, c_new.to(tl.int32))


def on_gpu():
    import torch
    out = torch.zeros(2, dtype=torch.int32, device="cuda")
    swap_store[(1,)](out, torch.zeros(1, dtype=torch.int32, device="cuda"))
    got = out.tolist()
    print(f"out = {got}, expected [1, 1]")
    return 0 if got == [1, 1] else 1


def statically():
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    signature = {"out": "*i32", "flag_in": "*i32"}
    try:
        src = ASTSource(swap_store, signature, {})
    except TypeError:  # releases before 3.2 took constants positionally and no attrs
        src = ASTSource(swap_store, signature)
    try:
        ttir = triton.compile(src, target=GPUTarget("hip", "gfx942", 64)).asm["ttir"]
    except Exception as exc:  # noqa: BLE001 - a release that cannot compile this here cannot test it
        print(f"cannot test: {type(exc).__name__}: {str(exc)[:200]}")
        return 125
    ttir = re.sub(r" loc\([^)]*\)", "", ttir)
    stored = re.findall(r"tt\.store %[\w.]+, (%[\w.#]+)", ttir)
    if len(stored) != 2:
        print(f"cannot test: expected two stores in the TTIR, found {len(stored)}")
        return 125
    # trace each stored value back through the i1 -> i32 extension
    source = [re.search(re.escape(v) + r" = arith\.extui (%[\w.#]+)", ttir) for v in stored]
    values = [m.group(1) if m else v for m, v in zip(source, stored)]
    print(f"TTIR stores {values[0]} and {values[1]} (when correct: one value, or two results of one loop "
          "that carries both)")
    loop = [re.fullmatch(r"(%\w+)#\d+", v) for v in values]
    same_loop = all(loop) and loop[0].group(1) == loop[1].group(1)
    return 0 if values[0] == values[1] or same_loop else 1


def main():
    try:
        import torch
        gpu = torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1"
    except ImportError:
        gpu = False
    code = on_gpu() if gpu else statically()
    print({0: "bug absent", 1: "bug present"}.get(code, "cannot test"), f"(triton {triton.__version__})")
    return code


if __name__ == "__main__":
    sys.exit(main())
