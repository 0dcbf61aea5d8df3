"""Data-dependent indexing: `tl.histogram` (counts of a 1-D integer tensor's values) and `tl.gather` (elements of a
tensor picked along one axis by an index tensor).

Why a module of its own: both ops read their operand's *values* as positions, which no other op does; each has the
same undefined-behaviour rule (a position outside the range reads or counts nothing defined), so each is emitted
with its operand folded into range by construction: the low bits of the value, `& (BLOCK - 1)` (blocks are powers
of two, so this is a modulo that two's complement makes non-negative for signed values too). Their lowerings
(lib/Conversion/TritonGPUToLLVM/HistogramOpToLLVM.cpp, GatherOpToLLVM.cpp) are cells of the reach matrix
(fuzz/reach_cells.py) no other op reaches.

The references use the kit's tracked values (oracle/numeric.py's TV: value, error bound, undetermined lanes) through
tensor methods only, so the registry stays free of torch imports: a histogram's bins are exact counts (every bin is
undetermined once any counted lane is), a gather copies value, bound and undetermined flag of the element it picks
(undetermined too where its index is).
"""
from __future__ import annotations

from hypothesis import strategies as st

from . import dtypes as D
from .opdef import OpDef, VType, is_t

OPS: list[OpDef] = []  # this class's ops, in the order the registry (fuzz/ops.py) lists them
BIN_AXES = "MNK"  # a histogram's bins span one block: num_bins is a power of two and the result a tile axis


def _tv(like, v, e, bad, dtype):
    return type(like)(v, e, bad, dtype)


# --- tl.histogram ---------------------------------------------------------------------------------------------------
def _hist_attrs(draw, types, caps):
    attrs = {"bins": draw(st.sampled_from(BIN_AXES))}
    if caps.has("histogram:mask") and draw(st.booleans()):
        attrs["masked"] = True  # Triton >= 3.4: counts only lanes whose bit `num_bins` is clear
    return attrs


def _hist_emit(n, types, attrs, ctx):
    nb = ctx.block(attrs["bins"])
    x = f"{n[0]}.to(tl.int32)"  # tl.histogram takes 32-bit integers only (semantic.py, histogram)
    mask = f", mask=({x} & {nb}) == 0" if attrs.get("masked") else ""
    return f"tl.histogram({x} & ({nb} - 1), {nb}{mask})"


def _hist_ref(k, x, types, attrs, node):
    """Counts per bin, bins 0..num_bins-1, of the value's low bits (the same bits after the cast to int32)."""
    (nb,) = k.shape(attrs["bins"])
    src = x[0]
    low = src.v & (nb - 1)
    keep = (src.v & nb) == 0 if attrs.get("masked") else src.bad.new_ones(low.shape)
    counts = ((low.unsqueeze(-1) == k.arange(nb).v) & keep.unsqueeze(-1)).sum(0)
    return _tv(src, counts, src.e.new_zeros(nb), src.bad.new_full((nb,), bool(src.bad.any())), "i32")


OPS.append(OpDef("histogram", "histogram", 1,
                 lambda s, v, c: is_t(v, D.INTS) and len(v.axes) == 1 and v.axes != "2",
                 lambda t, a, c: [VType("t", "i32", a["bins"])], _hist_emit, draw_attrs=_hist_attrs,
                 valid=lambda t, a, c: a["bins"] in BIN_AXES and len(t[0].axes) == 1,
                 needs="op:histogram", ub_guard="values folded into [0, num_bins) by & (num_bins - 1)",
                 ref=_hist_ref))


# --- tl.gather ------------------------------------------------------------------------------------------------------
def _differ(a, b):
    return [i for i, (x, y) in enumerate(zip(a, b)) if x != y]


def _gather_accepts(slot, v, chosen):
    if slot == 0:
        return is_t(v, D.NUMERIC) and 1 <= len(v.axes) <= 2
    src = chosen[0]
    return is_t(v, D.INTS) and len(v.axes) == len(src.axes) and len(_differ(src.axes, v.axes)) <= 1


def _gather_attrs(draw, types, caps):
    diff = _differ(types[0].axes, types[1].axes)
    return {"axis": diff[0] if diff else draw(st.integers(0, len(types[0].axes) - 1))}


def _gather_valid(types, attrs, ctx):
    src, idx = types[0].axes, types[1].axes
    return len(src) == len(idx) and attrs["axis"] < len(src) and set(_differ(src, idx)) <= {attrs["axis"]}


def _gather_emit(n, types, attrs, ctx):
    span = ctx.block(types[0].axes[attrs["axis"]])
    return f"tl.gather({n[0]}, {n[1]}.to(tl.int32) & ({span} - 1), {attrs['axis']})"


def _gather_ref(k, x, types, attrs, node):
    """out[..., i, ...] = src[..., index[..., i, ...] mod span, ...] along the gather axis (torch.gather)."""
    src, idx = x
    axis = attrs["axis"]
    span = k.shape(types[0].axes)[axis]
    pos = idx.v & (span - 1)
    return _tv(src, src.v.gather(axis, pos), src.e.gather(axis, pos), src.bad.gather(axis, pos) | idx.bad, src.dtype)


OPS.append(OpDef("gather", "gather", 2, _gather_accepts,
                 lambda t, a, c: [VType("t", t[0].dtype, t[1].axes)], _gather_emit, draw_attrs=_gather_attrs,
                 valid=_gather_valid, needs="op:gather",
                 ub_guard="indices folded into [0, span of the gather axis) by & (span - 1)", ref=_gather_ref))
