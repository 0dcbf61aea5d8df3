#!/usr/bin/env python3
"""gfxhound conversion-table repro (triton-3.9.0, gfx90a): bf16 constant of -9.183549615799121e-41.

Found: stored 0x8000 (-0.0); a correct conversion stores 0x8001 (-9.183549615799121e-41).
Exit 1: the wrong code is stored (present); 0: the right one, or the conversion is refused with a diagnostic
(absent); 125: cannot test here. No GPU needed: the stored code is read from the compiled LLVM IR.
"""
import os
import re
import sys
import tempfile

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

"""The one code a compiled kernel stores, read from its LLVM IR: the value a constant (or a conversion of one)
folded to.

Why this works without a GPU: a kernel that stores `tl.full([64], V, dtype)` (or a conversion of such a
constant) has, after Triton's and LLVM's optimisation, a store whose value operand is a literal. The software
conversions Triton emits for the 8-bit floats are integer arithmetic that LLVM folds completely, so the literal is
exactly what the GPU would write. A hardware conversion instruction (`llvm.amdgcn.cvt.*`) does not fold: then the
operand is an SSA value and the answer is None (cannot test), never a guess.

Standard library only: a repro embeds this module's source and runs it under any Triton's Python.
"""

import re
import struct

_STORE = re.compile(r"^\s*(?:tail\s+)?(?:call void @llvm\.amdgcn\.raw\.ptr\.buffer\.store\.[\w.]+\((.*)\)"
                    r"|store (?:volatile )?(.*))", re.M)
_SCALAR = re.compile(r"^(i\d+|half|bfloat|float) (\S+?),")
_VECTOR = re.compile(r"^<(\d+) x (i\d+|half|bfloat|float)> (?:<([^>]*)>|splat \((?:i\d+|half|bfloat|float) ([^)]*)\))")
_ZERO = re.compile(r"^(<\d+ x (?:i\d+|half|bfloat|float)>|i\d+|half|bfloat|float) zeroinitializer,")


def _literal_bits(ty: str, text: str):
    """The bit pattern of one literal of an LLVM IR type, as (bits, width); None for a non-literal."""
    text = text.strip()
    if ty.startswith("i"):
        width = int(ty[1:])
        if not re.fullmatch(r"-?\d+", text):
            return None
        return int(text) & ((1 << width) - 1), width
    width = {"half": 16, "bfloat": 16, "float": 32}[ty]
    if re.fullmatch(r"0x[HR][0-9A-Fa-f]{4}", text):  # half and bfloat literals
        return int(text[3:], 16), 16
    if re.fullmatch(r"0x[0-9A-Fa-f]{16}", text):  # float literals are written as a double's bits
        value = struct.unpack("<d", bytes.fromhex(text[2:])[::-1])[0]
        return struct.unpack("<I", struct.pack("<f", value))[0], 32
    try:
        value = float(text)
    except ValueError:
        return None
    if width != 32:
        return None
    return struct.unpack("<I", struct.pack("<f", value))[0], 32


def _elements(operand: str):
    """The literal elements a store writes, each (bits, width); None when any is not a literal."""
    zero = _ZERO.match(operand)
    if zero:
        ty = zero.group(1)
        vec = re.match(r"<(\d+) x (\w+)>", ty)
        n, elem = (int(vec.group(1)), vec.group(2)) if vec else (1, ty)
        width = int(elem[1:]) if elem.startswith("i") else {"half": 16, "bfloat": 16, "float": 32}[elem]
        return [(0, width)] * n
    vec = _VECTOR.match(operand)
    if vec:
        n, ty = int(vec.group(1)), vec.group(2)
        if vec.group(4) is not None:
            items = [vec.group(4)] * n
        else:
            items = [part.strip().split(" ", 1)[1] if " " in part.strip() else part for part in vec.group(3).split(",")]
        out = [_literal_bits(ty, item) for item in items]
        return None if any(o is None for o in out) else out
    scalar = _SCALAR.match(operand)
    if scalar:
        bits = _literal_bits(scalar.group(1), scalar.group(2))
        return None if bits is None else [bits]
    return None


def stored_code(llir: str, bits: int):
    """The single `bits`-wide code every store of the kernel writes, or None: no store, a store of a computed value
    (the conversion did not fold), or stores of different codes."""
    codes = set()
    seen = False
    for match in _STORE.finditer(llir):
        operand = match.group(1) if match.group(1) is not None else match.group(2)
        elements = _elements(operand)
        if elements is None:
            return None
        seen = True
        for value, width in elements:
            if width % bits:
                return None
            for shift in range(0, width, bits):  # a wider literal packs several codes, lowest first
                codes.add((value >> shift) & ((1 << bits) - 1))
    return codes.pop() if seen and len(codes) == 1 else None

ARCH, WARP, BITS, EXPECTED = 'gfx90a', 64, 16, 0x8001
DIAGNOSTIC = 'Unsupported conversion from|not supported in this architecture|unsupported target'


@triton.jit
def probe(y_ptr):
    y = tl.full([64], -9.183549615799121e-41, tl.bfloat16)
    tl.store(y_ptr + tl.arange(0, 64), y)


def main():
    saved = os.dup(2)
    with tempfile.TemporaryFile() as err:
        os.dup2(err.fileno(), 2)
        try:
            kernel = triton.compile(triton.compiler.ASTSource(probe, signature={"y_ptr": '*bf16'}),
                                    target=GPUTarget("hip", ARCH, WARP))
            failure = None
        except Exception as exc:
            failure = f"{type(exc).__name__}: {exc}"
        finally:
            os.dup2(saved, 2)
        err.seek(0)
        text = (failure or "") + "\n" + err.read().decode(errors="replace")
    if failure is not None:
        refused = re.search(rf"(?:{DIAGNOSTIC})[^\n]*", text)
        if refused:
            print(f"absent: this Triton refuses the conversion: {refused[0].strip()}")
            return 0
        print(f"cannot test: the compile failed: {failure.strip().splitlines()[-1][:300]}")
        return 125
    code = stored_code(kernel.asm["llir"], BITS)
    if code is None:
        print("cannot test: the stored value is not a folded constant here (a hardware conversion?)")
        return 125
    print(f"stored 0x{code:x}, expected 0x{EXPECTED:x}: {'present' if code != EXPECTED else 'absent'}")
    return 1 if code != EXPECTED else 0


if __name__ == "__main__":
    sys.exit(main())
