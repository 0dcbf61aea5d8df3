"""Every tolerance bound rejects a perturbed result and accepts the reference (docs/design.md, Tolerance model).

Each case builds tracked operands, runs the oracle's op, and checks that a result moved just past its bound is
flagged while the reference itself passes; exact results must reject the neighbouring representable value.
"""
import math

import pytest

torch = pytest.importorskip("torch")

from gfxhound.oracle.arith import Arith  # noqa: E402
from gfxhound.oracle.numeric import TV, UNIT, exact  # noqa: E402
from gfxhound.oracle.tolerance import CUDA, HIP, INTERPRET  # noqa: E402

F64 = torch.float64


def tv(values, dtype="fp32", e=None):
    v = torch.tensor(values, dtype=F64).to(getattr(torch, {"fp32": "float32", "fp16": "float16",
                                                           "fp64": "float64"}[dtype])).to(F64)
    t = exact(v, dtype)
    if e is not None:
        t.e = torch.full_like(t.v, e)
    return t


def accepts(out: TV, actual):
    actual = torch.as_tensor(actual, dtype=F64)
    return bool(((actual - out.v).abs() <= out.e * (1 + 1e-12)).all())


def past_bound(out: TV, dtype="fp32"):
    """The closest representable value of `dtype` beyond the bound, on the upper side."""
    step = torch.maximum(out.e * 1.001, out.v.abs() * UNIT[dtype] * 2 + 1e-300)
    target = out.v + step
    if dtype == "fp32":  # round up to the next fp32 at or past the target
        t32 = target.to(torch.float32)
        t32 = torch.where(t32.to(F64) < target, torch.nextafter(t32, torch.full_like(t32, math.inf)), t32)
        return t32.to(F64)
    return target


CASES = [
    ("add exact", lambda a: a.binary("add", tv([1.5, -2.0]), tv([0.25, 8.0]))),
    ("add inexact", lambda a: a.binary("add", tv([1.1, -2.3]), tv([0.7, 8.9]))),
    ("mul", lambda a: a.binary("mul", tv([1.1, -2.3]), tv([0.7, 8.9]))),
    ("sub with error", lambda a: a.binary("sub", tv([1.0, 2.0], e=1e-6), tv([0.5, 8.0], e=1e-6))),
    ("truediv", lambda a: a.binary("truediv", tv([1.0, 7.0]), tv([3.0, -9.0]))),
    ("fma", lambda a: a.fma(tv([1.1, 3.0]), tv([0.9, -0.5]), tv([0.3, 1.5]))),
    ("exp", lambda a: a.math("exp", tv([0.5, -3.0, 10.0]))),
    ("exp2", lambda a: a.math("exp2", tv([0.5, -3.25]))),
    ("log", lambda a: a.math("log", tv([0.5, 3.0, 100.0]))),
    ("log2", lambda a: a.math("log2", tv([0.75, 3.0]))),
    ("sqrt", lambda a: a.math("sqrt", tv([2.0, 3.0]))),
    ("rsqrt", lambda a: a.math("rsqrt", tv([2.0, 3.0]))),
    ("sin", lambda a: a.math("sin", tv([0.5, 2.5]))),
    ("cos", lambda a: a.math("cos", tv([0.5, 2.5]))),
    ("erf", lambda a: a.math("erf", tv([0.5, -1.5]))),
    ("sigmoid", lambda a: a.math("sigmoid", tv([0.5, -1.5]))),
    ("cast fp32->fp16", lambda a: a.cast(tv([1.0001, 3.3]), "fp16")),
    ("cast rtz", lambda a: a.cast(tv([1.0001, 3.3]), "fp16", "rtz")),
    ("sum", lambda a: a.reduce("sum", tv([[0.1, 0.2, 0.3], [1.5, -2.25, 1e-3]]), 1, "fp32")),
    ("sum fp16", lambda a: a.reduce("sum", tv([[0.1, 0.2, 0.3], [1.5, -2.25, 1e-3]], "fp16"), 1, "fp32")),
    ("cumsum", lambda a: a.scan(tv([[0.1, 0.2, 0.3]]), 1, "cumsum", "fp32")),
    ("cumprod", lambda a: a.scan(tv([[1.1, 0.7, 1.3]]), 1, "cumprod", "fp32")),
    ("dot", lambda a: a.dot(tv([[0.1, 0.2], [0.3, -0.4]]), tv([[1.1, 0.5], [0.25, 0.7]]), None, "fp32", "ieee")),
    ("dot default tf32", lambda a: a.dot(tv([[0.1, 0.2], [0.3, -0.4]]), tv([[1.1, 0.5], [0.25, 0.7]]), None, "fp32")),
    ("dot tf32x3", lambda a: a.dot(tv([[0.1, 0.2], [0.3, -0.4]]), tv([[1.1, 0.5], [0.25, 0.7]]), None, "fp32",
                                   "tf32x3")),
    ("dot tf32", lambda a: a.dot(tv([[0.1, 0.2], [0.3, -0.4]]), tv([[1.1, 0.5], [0.25, 0.7]]), None, "fp32",
                                 "tf32")),
    ("dot exact", lambda a: a.dot(tv([[1.0, 2.0], [3.0, -4.0]]), tv([[0.5, 0.5], [0.25, 1.0]]), None, "fp32",
                                  "ieee")),
]


@pytest.mark.parametrize("table", [INTERPRET, CUDA, HIP], ids=lambda t: t.name)
@pytest.mark.parametrize("name, make", CASES, ids=[c[0] for c in CASES])
def test_bound_accepts_the_reference_and_rejects_a_result_past_it(table, name, make):
    out = make(Arith(table))
    assert not bool(out.bad.any()), f"{name}: nothing here should be undetermined"
    assert accepts(out, out.v)
    assert not accepts(out, past_bound(out))
    if "with error" not in name:  # and it is not a free pass: a few dozen ulps of the result at most
        unit = UNIT["fp16"] if ("fp16" in name or "rtz" in name) else 2.0 ** -11 if "tf32" in name else UNIT["fp32"]
        if name == "dot default tf32" and table is INTERPRET:
            unit = UNIT["fp32"]  # the interpreter computes full fp32
        ulp = out.v.abs() * 2 * unit + 1e-30
        assert bool((out.e <= 64 * ulp).all()), f"{name}: bound {out.e.tolist()} for {out.v.tolist()}"


def test_fp64_fma_is_never_claimed_exact():
    """float64 cannot hold the product of two fp64 values: found by an interpret campaign (seed 7)."""
    a = tv([1.1, 3.7], "fp64")
    out = Arith(INTERPRET).fma(a, a, tv([0.3, -13.69], "fp64"))
    assert bool((out.e > 0).all())
    assert accepts(out, out.v + out.v.abs() * 2 ** -52)


def test_exact_results_are_bit_exact():
    a = Arith(CUDA)
    out = a.binary("add", tv([1.5, 1024.0]), tv([0.25, 3.0]))
    assert bool((out.e == 0).all())
    assert not accepts(out, out.v + 2 ** -20 * out.v)
    total = a.reduce("sum", tv([[1.0, 2.0, 3.5, -0.25]]), 1, "fp32")
    assert float(total.e[0]) == 0.0 and float(total.v[0]) == 6.25


def test_log_near_one_has_an_absolute_bound_on_gpus_only():
    near = tv([1.0001])
    assert float(Arith(CUDA).math("log", near).e[0]) >= 2.0 ** -22
    assert float(Arith(INTERPRET).math("log", near).e[0]) < 2.0 ** -30


def test_exp_bound_grows_with_the_argument_on_nvidia():
    a = Arith(CUDA)
    small, large = a.math("exp", tv([1.0])), a.math("exp", tv([60.0]))
    rel_small = float(small.e[0] / small.v[0])
    rel_large = float(large.e[0] / large.v[0])
    assert rel_large > 10 * rel_small
    assert rel_large < 200 * UNIT["fp32"]  # but stays a few hundred ulps, not a free pass


def test_decisions_on_uncertain_operands_are_undetermined():
    a = Arith(CUDA)
    x = tv([0.5, 3.0], e=1e-3)
    assert a.compare("<", x, tv([0.5005, 1.0])).bad.tolist() == [True, False]
    assert a.math("floor", tv([2.9995, 2.5], e=1e-3)).bad.tolist() == [True, False]
    assert a.cast(tv([2.9995, 2.5], e=1e-3), "i32").bad.tolist() == [True, False]
    nan = a.binary("maximum", tv([float("nan"), 1.0]), tv([1.0, 2.0]))
    assert nan.bad.tolist() == [True, False]  # NaN in min/max: the backend decides


def test_integer_semantics_are_c_like():
    a = Arith(INTERPRET)
    x = exact(torch.tensor([-7, 7, -128, 127]), "i8")
    y = exact(torch.tensor([1, 1, 0, 0]), "i8")  # divisors become (y & 7) + 1 = 2, 2, 1, 1
    assert a.binary("floordiv", x, y).v.tolist() == [-3, 3, -128, 127]
    assert a.binary("mod", x, y).v.tolist() == [-1, 1, 0, 0]
    assert a.binary("add", x, exact(torch.tensor([0, 0, -1, 1]), "i8")).v.tolist() == [-7, 7, 127, -128]
    assert a.binary("shr", x, exact(torch.tensor([1, 1, 1, 1]), "i8")).v.tolist() == [-4, 3, -64, 63]
    sat = a.cast(tv([300.0, -1e10, float("nan"), -2.7]), "i8")
    assert sat.v.tolist() == [127, -128, 0, -2]


def test_argmax_ties_go_to_the_lowest_index_and_near_ties_are_undetermined():
    a = Arith(CUDA)
    tie = a.reduce("argmax", tv([[1.0, 3.0, 3.0, 2.0]]), 1, "i32")
    assert tie.v.tolist() == [1] and not bool(tie.bad.any())
    near = a.reduce("argmax", tv([[1.0, 3.0, 3.0000001, 2.0]], e=1e-6), 1, "i32")
    assert near.bad.tolist() == [True]


def test_free_order_sums_that_may_overflow_are_undetermined():
    a = Arith(CUDA)
    big = a.reduce("sum", tv([[60000.0, 60000.0, -60000.0]], "fp16"), 1, "fp32")
    assert big.bad.tolist() == [True]


def test_review_findings_stay_fixed():
    """False alarms a review demonstrated (each would have been a false miscompile)."""
    a = Arith(CUDA)
    # 1. a product that does not fit fp32 is not exact: a contraction into an fma rounds once
    x, y = tv([0.1]), tv([0.3])
    assert float(a.binary("mul", x, y).e[0]) > 0
    assert float(a.binary("mul", tv([1.5]), tv([0.25])).e[0]) == 0
    # 2/3. division by a zero whose sign free-order sums or max/min leave open is undetermined
    zero = a.reduce("sum", tv([[-0.0, -0.0]]), 1, "fp32")
    assert a.binary("truediv", tv([1.0]), zero).bad.tolist() == [True]
    # 4. atomic adds are exact only if every contribution is dyadic enough, not because the sum is an integer
    from gfxhound.oracle.evaluate import OutBuf, _finalise_atomic, _lane_scale
    buf = OutBuf("fp32", "atomic", 1)
    for value in (float(torch.tensor(0.3, dtype=torch.float32)), 1.0, -float(torch.tensor(0.3, dtype=torch.float32))):
        buf.v[0] += value
        buf.mags[0] += abs(value)
        buf.scale[0] = torch.maximum(buf.scale[0], _lane_scale(torch.tensor([value], dtype=F64))[0])
        buf.count[0] += 1
        buf.written[0] = True
    buf.kinds[0] = 1
    _finalise_atomic(buf, "out_0")
    assert float(buf.e[0]) > 0
    # 5. i64 beyond 2^53 converts inexactly in a float64 reference
    big = exact(torch.tensor([2 ** 53 + 2 ** 29 + 1]), "i64")
    assert float(a.cast(big, "fp32").e[0]) > 0
    # 6. split-precision dots are never claimed exact
    d = a.dot(tv([[1.0, 2.0]]), tv([[0.5], [0.25]]), None, "fp32", "bf16x3")
    assert float(d.e[0, 0]) > 0
    # 11. IEEE special values on exact operands are determined
    assert a.math("log", tv([0.0, -1.0])).bad.tolist() == [False, False]
    assert a.math("rsqrt", tv([0.0])).bad.tolist() == [True]  # ±inf by the zero's sign


def _truncating_dot(a, b, bits):
    """a @ b accumulated left to right in an accumulator that keeps `bits` significand bits and truncates."""
    out = torch.zeros(a.shape[0], b.shape[1], dtype=F64)
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            acc = 0.0
            for k in range(a.shape[1]):
                acc += float(a[i, k] * b[k, j])
                if acc:
                    exp = math.floor(math.log2(abs(acc))) - (bits - 1)
                    acc = math.trunc(acc / 2.0 ** exp) * 2.0 ** exp
            out[i, j] = acc
    return out


def test_fp8_dots_on_nvidia_allow_hoppers_narrow_accumulator_and_no_more():
    """An H100 campaign: fp8 tl.dot results off by up to 2^-13 of the sum of magnitudes (the fp8 MMA keeps about 14
    bits while accumulating). The cuda table accepts a 14-bit truncating accumulation, AMD's does not; both
    reject a result past the bound."""
    gen = torch.Generator().manual_seed(3)
    a = (torch.randint(-64, 65, (4, 64), generator=gen).to(F64) / 8).to(torch.float8_e4m3fn).to(F64)
    b = (torch.randint(-64, 65, (64, 4), generator=gen).to(F64) / 8).to(torch.float8_e4m3fn).to(F64)
    narrow = _truncating_dot(a, b, 14)
    assert not torch.equal(narrow, a @ b)  # the case is not trivially exact
    for table, ok in ((CUDA, True), (HIP, False)):
        out = Arith(table).dot(exact(a, "fp8e4nv"), exact(b, "fp8e4nv"), None, "fp32")
        assert accepts(out, narrow) == ok, table.name
        assert not accepts(out, past_bound(out)), table.name


def test_a_dot_result_plus_a_value_may_be_accumulated_by_the_matrix_unit():
    """Triton folds `dot(a, b) + c` into `dot(a, b, c)`: an H100 then returned the exact-looking fp32 sum one ulp
    off (an attention kernel's `qk + bias`). The add of a dot result gets the accumulation's bound; an add of
    other exact values stays correctly rounded."""
    q = torch.tensor([[1.5, -0.75, 0.3125]], dtype=F64)
    k = torch.tensor([[2.0], [1.25], [-0.5]], dtype=F64)
    bias = tv([1.7832031])  # an fp32 value the sum cannot hold exactly
    arith = Arith(CUDA)
    qk = arith.dot(exact(q, "fp16"), exact(k, "fp16"), None, "fp32")
    assert bool((qk.e == 0).all())  # the products and their sum are exact
    s = arith.binary("add", qk, tv([[1.7832031]]))
    assert bool((s.e > 0).all()) and accepts(s, torch.nextafter(s.v.float(), torch.tensor(-1e9)).double())
    assert not accepts(s, s.v + 64 * s.e.max() + 1e-3)
    plain = arith.binary("add", tv([2.21875]), bias)
    assert bool((plain.e == 0).all())  # no dot: the add rounds once, exactly as the reference
    with_acc = arith.dot(exact(q, "fp16"), exact(k, "fp16"), tv([[0.5]]), "fp32")
    assert with_acc.fold is None  # an accumulator already there: no `+ c` to fold
