"""Block-scaled (MX) matrix products: the four `tl.dot_scaled` ops (scales on both sides, one side, or none).

Why a module of its own: MX operands are a world apart from `tl.dot`'s (raw FP4/E8M0 codes, packed K axes, scale
groups of 32 or 16), and the generator (MX_FORMATS, SCALED_ROLES), capability probing and coverage all read the
format table held here.
"""
from __future__ import annotations

from .axes import K_VIEWS, SCALE_AXES
from .opdef import OpDef, VType

OPS: list[OpDef] = []  # this class's ops, in the order the registry (fuzz/ops.py) lists them

# tl.dot_scaled's operand format follows from the operand's dtype; a side's E8M0 scales are a (rows, K / group)
# tile, along axis S (groups of 32) or T (groups of 16). Four ops: scales on both sides, on one, or on none.
MX_FORMATS = {"e2m1x2": "e2m1", "fp8e4nv": "e4m3", "fp8e5": "e5m2", "bf16": "bf16", "fp16": "fp16"}
SCALED_ROLES = {
    "dot_scaled": ("lhs", "lhs_scale", "rhs", "rhs_scale", "acc"),
    "dot_scaled_lhs": ("lhs", "lhs_scale", "rhs", "acc"),
    "dot_scaled_rhs": ("lhs", "rhs", "rhs_scale", "acc"),
    "dot_scaled_none": ("lhs", "rhs", "acc"),
}


def _mx_operand_axes(dtype, side):
    k = "H" if dtype == "e2m1x2" else "K"
    return "M" + k if side == "lhs" else k + "N"


def _scaled_accepts(roles):
    def accepts(slot, v, chosen):
        role = roles[slot]
        if v.kind != "t":
            return False
        if role in ("lhs", "rhs"):
            return v.dtype in MX_FORMATS and v.axes == _mx_operand_axes(v.dtype, role)
        if role in ("lhs_scale", "rhs_scale"):
            rows = "M" if role == "lhs_scale" else "N"
            group = [c.axes[1] for c, r in zip(chosen, roles) if r == "lhs_scale"]
            return v.dtype == "e8m0" and len(v.axes) == 2 and v.axes[0] == rows and v.axes[1] in SCALE_AXES and (
                not group or v.axes[1] == group[0])
        return v.dtype == "fp32" and v.axes == "MN"
    return accepts


def _scaled_operands(roles, values):
    return dict(zip(roles, values))


def _scaled_valid(roles):
    def valid(types, attrs, ctx):
        ops = _scaled_operands(roles, types)
        formats = [MX_FORMATS[ops[side].dtype] for side in ("lhs", "rhs")]
        if not all(ctx.caps.has("dot_scaled:" + f) for f in formats):
            return False
        groups = {ops[r].axes[1] for r in ("lhs_scale", "rhs_scale") if r in ops}
        group = K_VIEWS[groups.pop()] if groups else 32
        if groups or ctx.blocks["K"] % group or ctx.sizes["K"] % group or ctx.blocks["K"] < 32:
            return False
        if group == 16 and not ctx.caps.has("dot_scaled:group16"):
            return False
        return ctx.blocks["M"] >= 16 and ctx.blocks["N"] >= 16
    return valid


def _scaled_emit(roles):
    def emit(n, types, attrs, ctx):
        ops, kinds = _scaled_operands(roles, n), _scaled_operands(roles, types)
        parts = []
        for side in ("lhs", "rhs"):
            scale = ops.get(side + "_scale")
            parts += [str(ops[side]), str(scale) if scale is not None else "None",
                      f'"{MX_FORMATS[kinds[side].dtype]}"']
        return f"tl.dot_scaled({', '.join(parts)}, {ops['acc']})"
    return emit


def _scaled_ref(roles):
    def ref(k, x, t, a, n):
        ops, kinds = _scaled_operands(roles, x), _scaled_operands(roles, t)
        sides = []
        for side in ("lhs", "rhs"):
            scale = side + "_scale"
            sides.append((ops[side], MX_FORMATS[kinds[side].dtype], ops.get(scale),
                          K_VIEWS[kinds[scale].axes[1]] if scale in kinds else 32))
        return k.dot_scaled(sides[0], sides[1], ops["acc"])
    return ref


for _name, _roles in SCALED_ROLES.items():
    OPS.append(OpDef(_name, "dot", len(_roles), _scaled_accepts(_roles), lambda t, a, c: [VType("t", "fp32", "MN")],
                     _scaled_emit(_roles), valid=_scaled_valid(_roles), needs="op:dot_scaled",
                     ref=_scaled_ref(_roles)))
