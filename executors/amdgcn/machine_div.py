"""V_DIV_SCALE_F32/F64 on the machine: the first step of the division sequence every IEEE float division compiles
to (div_scale, rcp, fma refinements, div_fmas, div_fixup).

Why by hand and not through pcode.py: the guide's pseudocode for it, as tabled, cannot run as written. It sets
`VCC = 0x1LL` (the whole register) inside per-lane code where the instruction writes one lane's bit of its SDST
("This opcode produces a VCC flag for post-scale of quotient"); it compares with a `DENORM` pseudo-constant where
the prose means "is a denormal"; and on the ordinary path it assigns no D0 at all. The machine runs the same
cascade of cases with three decisions (docs/amdgcn-pcode.md, decision 33): the VCC writes set this lane's bit;
`x == DENORM` is "x is a nonzero value below the smallest normal of the operation's precision" (the quotients
`1 / S1` and `S2 / S1` computed in f64 for f32, in f64 itself for f64); and D0 is S0 where no case assigns it.
`NAN` is the default quiet NaN. Everything else is the text's, case by case, in its order.
"""
from __future__ import annotations

import numpy as np

from gfxhound.executors.amdgcn.machine import NotModelled, _check_modifiers, _hazard, reader, writer

__all__ = ["DIV_STEPS"]

_SPEC = {"v_div_scale_f32": dict(bits=32, far=96, scale=64, tiny=23, ebits=8, mbits=23, smallest=2.0 ** -126),
         "v_div_scale_f64": dict(bits=64, far=768, scale=128, tiny=53, ebits=11, mbits=52, smallest=2.0 ** -1022)}


def _div_scale(ins):
    mn, spec = ins.mnemonic, _SPEC[ins.mnemonic]
    _check_modifiers(ins, ())
    if len(ins.operands) != 5 or any(getattr(o, "neg", False) or getattr(o, "abs", False) for o in ins.operands):
        raise NotModelled(mn, f"operands {ins.operands} (source modifiers are not modelled here)")
    d, sdst, s0, s1, s2 = ins.operands
    bits = spec["bits"]
    ft, ut = (np.float32, np.uint32) if bits == 32 else (np.float64, np.uint64)
    gets = [reader(o, bits, mn, _hazard(ins.index)) for o in (s0, s1, s2)]
    put_d, put_mask = writer(d, bits, mn), writer(sdst, 64, mn)

    def as_float(v):
        return np.broadcast_to(np.asarray(v, np.uint64), (64,)).astype(ut).view(ft).astype(np.float64)

    def exponent(x):
        return (x.astype(ft).view(ut).astype(np.int64) >> spec["mbits"]) & ((1 << spec["ebits"]) - 1)

    def denorm(x, smallest=spec["smallest"]):
        return (x != 0) & (np.abs(x) < smallest)

    def step(w):
        lanes = w.lanes()
        a, b, c = (as_float(g(w)) for g in gets)            # S0 quotient-or-operand, S1 denominator, S2 numerator
        with np.errstate(all="ignore"):
            recip, quot = 1.0 / b, c / b
        out, vcc = a.copy(), np.zeros(64, bool)
        undecided = np.ones(64, bool)

        def case(cond, set_vcc, value, only=None):
            nonlocal undecided
            hit = undecided & cond
            vcc[hit] |= set_vcc
            apply = hit if only is None else hit & only
            out[apply] = value[apply]
            undecided &= ~hit
        up, down = np.ldexp(a, spec["scale"]), np.ldexp(a, -spec["scale"])
        case((c == 0) | (b == 0), False, np.full(64, np.nan))
        case(exponent(c) - exponent(b) >= spec["far"], True, up, a == b)
        case(denorm(b), False, up)
        # the text compares the reciprocal with DENORM.f64 for both widths ("1.0 / 64'F(S1.f32) == DENORM.f64"):
        # an f32 denominator's reciprocal is never an f64 denormal, so these two cases are f64's alone
        case(denorm(recip, 2.0 ** -1022) & denorm(quot), True, up, a == b)
        case(denorm(recip, 2.0 ** -1022), False, down)
        case(denorm(quot), True, up, a == c)
        case(exponent(c) <= spec["tiny"], False, up)
        result = out.astype(ft).view(ut).astype(np.uint64)
        put_d(w, result, lanes)
        mask = int(np.bitwise_or.reduce(np.where(vcc & lanes, np.uint64(1) << np.arange(64, dtype=np.uint64),
                                                 np.uint64(0))))
        put_mask(w, mask)
        w.pc += 1
    step.decisions = (33,)
    step.outputs = 2
    return step


def _div_fmas(ins):
    """V_DIV_FMAS: fma(S0, S1, S2), scaled where VCC's lane bit is set. The tabled text scales by 2^32 (f32) or
    2^64 (f64); that cannot undo V_DIV_SCALE, whose own text scales an operand by 2^64 (2^128): the guide
    contradicts itself. Decision 34: where VCC is set the result is scaled by 2^64 (2^128) when the exponent of
    S2 (the quotient estimate) is above the bias, else by 2^-64 (2^-128), the factor that undoes DIV_SCALE's
    (a numerator scaled up gives an estimate below 2, a denominator scaled up one at or above 2). The fma rounds
    once, then the scaling rounds once (as `2.0F ** n * fma(...)` is written)."""
    mn = ins.mnemonic
    bits = 32 if mn.endswith("f32") else 64
    _check_modifiers(ins, ())
    if len(ins.operands) != 4 or any(getattr(o, "neg", False) or getattr(o, "abs", False) for o in ins.operands):
        raise NotModelled(mn, f"operands {ins.operands} (source modifiers are not modelled here)")
    d, s0, s1, s2 = ins.operands
    ft, ut = (np.float32, np.uint32) if bits == 32 else (np.float64, np.uint64)
    bias, scale = (127, 64) if bits == 32 else (1023, 128)
    gets = [reader(o, bits, mn, _hazard(ins.index)) for o in (s0, s1, s2)]
    put = writer(d, bits, mn)
    from gfxhound.executors.amdgcn.pcode import compile_op
    fma = compile_op("v_fma_f32" if bits == 32 else "v_fma_f64")

    def step(w):
        lanes = w.lanes()
        raw = [np.broadcast_to(np.asarray(g(w), np.uint64), (64,)) for g in gets]
        fused = np.asarray(fma.run({"S0": raw[0], "S1": raw[1], "S2": raw[2]}, exec_mask=w.exec)["D0"], np.uint64)
        c = raw[2].astype(ut).view(ft)
        expo = (raw[2].astype(np.int64) >> (23 if bits == 32 else 52)) & (0xFF if bits == 32 else 0x7FF)
        set_ = ((np.uint64(w.vcc) >> np.arange(64, dtype=np.uint64)) & np.uint64(1)) == 1
        factor = np.where(expo > bias, scale, -scale)
        with np.errstate(all="ignore"):
            scaled = np.ldexp(fused.astype(ut).view(ft), factor).astype(ft).view(ut).astype(np.uint64)
        for lane in np.flatnonzero(set_ & lanes):
            exact = _scaled_fma([raw[k][lane] for k in range(3)], ft, ut, int(factor[lane]))
            if exact is not None:
                scaled[lane] = exact
        put(w, np.where(set_, scaled, fused), lanes)
        w.pc += 1
    step.decisions = (34,)
    step.outputs = 1
    return step


def _scaled_fma(bits, ft, ut, factor):
    """2^factor * (S0 * S1 + S2) rounded once to `ft` (nearest, ties to even), from the operands' raw bits; None
    where an operand is not finite or the sum is an exact zero (the fma's own result, scaled, then stands)."""
    from fractions import Fraction
    a, b, c = (float(np.asarray(x, np.uint64).astype(ut).view(ft)) for x in bits)
    if not all(np.isfinite(v) for v in (a, b, c)):
        return None
    exact = (Fraction(a) * Fraction(b) + Fraction(c)) * Fraction(2) ** factor
    if ft is np.float64:
        value = float(exact) if abs(exact) < Fraction(2) ** 1024 else float("inf") * (1 if exact > 0 else -1)
        return np.uint64(np.float64(value).view(np.uint64))
    if exact == 0:  # an exact zero: the fma's own signed zero, which scaling keeps
        return None
    size = abs(exact)
    e = size.numerator.bit_length() - size.denominator.bit_length()
    if Fraction(2) ** e > size:
        e -= 1
    quantum = Fraction(2) ** (max(e, -126) - 23)
    q = size / quantum
    n = q.numerator // q.denominator
    rest = q - n
    n += 1 if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2) else 0
    value = float(n * quantum) if n * quantum < Fraction(2) ** 128 else float("inf")
    return np.uint64(np.float32(-value if exact < 0 else value).view(np.uint32))


DIV_STEPS = {**{name: _div_scale for name in _SPEC}, "v_div_fmas_f32": _div_fmas, "v_div_fmas_f64": _div_fmas}
