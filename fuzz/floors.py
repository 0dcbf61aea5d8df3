"""Coverage floors: the least share of a campaign's kernels that must exercise each part of the space, so breadth
cannot quietly shrink when the generator changes (issue #7). Each floor is about half the share measured over 300
compile-campaign kernels for gfx942 (Triton 3.9.0, seed 11); a campaign under a floor says so in its summary.

A floor names one coverage feature, or several whose values exclude each other in one kernel (one `num_stages` per
kernel), whose shares then add up. A floor an execution backend cannot reach (bf16 under the interpreter, see
oracle/limitations.py) names the exclusion that voids it. The floors of issue #7 (block-scaled formats, both fp8
families, pipelined K-loops, mutated layouts) are its acceptance share, 5%.
"""
from __future__ import annotations

MIN_KERNELS = 200  # fewer kernels: shares are too noisy to judge
USER_ERROR_CEILING = 0.02

def _on_mma(pattern):
    """One feature per matrix-core layout kind (CDNA's MFMA, RDNA's WMMA, NVIDIA's MMA): a kernel has one."""
    return tuple(pattern.format(kind) for kind in ("mfma", "wmma", "mma"))


SHARE_REDUCE, SHARE_BROADCAST, SHARE_OPERAND = 0.12, 0.12, 0.06  # half of 27%, 25%, 9% + 11% (docs/shapes.md)


FLOORS = {
    "K-loop dot": (("control:kloop_dot",), 0.20),
    "dot accumulating": (("op:dot_acc",), 0.20),
    "pipelined (num_stages >= 2)": (("knob:num_stages=2", "knob:num_stages=3", "knob:num_stages=4"), 0.30),
    "num_stages=1": (("knob:num_stages=1",), 0.08),
    "num_warps=16": (("knob:num_warps=16",), 0.06),
    "kpack=2": (("knob:kpack=2",), 0.06),
    "fp16 dot": (("detail:dot:fp16",), 0.04),  # 0.06 before block-scaled products took 30% of the kernels
    "fp16 values": (("dtype:fp16",), 0.15),
    "bf16 values": (("dtype:bf16",), 0.15, "exclude:dtype:bf16"),
    "int8 values": (("dtype:i8",), 0.10),  # 0.12 before kernel templates took ~17% of the kernels (0.11-0.15 now)
    "atomics": (("op:atomic",), 0.40),
    "scan": (("op:scan",), 0.10),
    "transpose": (("op:trans",), 0.08),
    "masked loads": (("control:load_masked",), 0.35),
    "branch in a loop": (("control:if_in_loop",), 0.12),
    "nested loops": (("control:nested_for",), 0.20),
    "pipelined K-loop (num_stages >= 2)": (("control:kloop_pipelined",), 0.05),
    "dot_scaled e2m1": (("detail:dot_scaled:e2m1",), 0.05),
    "dot_scaled e4m3": (("detail:dot_scaled:e4m3",), 0.05),
    "dot_scaled e5m2": (("detail:dot_scaled:e5m2",), 0.05),
    "fp8 OCP (e4m3fn, e5m2)": (("detail:fp8:ocp",), 0.05),
    "fp8 fnuz (e4m3fnuz, e5m2fnuz)": (("detail:fp8:fnuz",), 0.05),
    "metamorphic pairs": (("pair:stages", "pair:warps", "pair:knobs", "pair:target", "pair:layout"), 0.15,
                          "exclude:pair:stages"),
    "TTGIR-mutated layouts": (("pair:layout",), 0.05, "exclude:pair:layout"),
    # the kernel templates (fuzz/shape_templates.py): about half their measured share of a default campaign (17%)
    "kernel templates": (tuple(f"shape:{name}" for name in ("moe", "persistent", "paged", "pointers", "descriptor")),
                         0.08),
    # reach (issue #38, docs/reach.md): about half the share measured over 300 generator kernels for gfx942 (seeds 1
    # and 2: 4.7-7.0%, 7.3-10.3%, 3.0%); a scan of a dot result reaches the scan's lowering through a conversion to
    # a blocked layout (Triton 3.9.0 lowers scans on blocked layouts only: fuzz/reach_cells.py)
    "scan of a dot result": (("detail:dot_result:scan",), 0.02),
    "condition reused around a loop": (("control:cond_reused_across_loop",), 0.035),
    "size-1 dimension in a value": (("detail:size1:tile",), 0.015),
    # what the compiler made of the kernels (oracle/ttgir_features.py; compile backend only), about half the share
    # measured over ~200 compile-campaign kernels for gfx942 with kernel shapes (Triton 3.9.0, seed 77)
    "reduction of a dot result (TTGIR)": (_on_mma("detail:ttgir:tt.reduce:float@{}"), SHARE_REDUCE, "exclude:ttgir"),
    "dot-result slice broadcast back (TTGIR)": (_on_mma("detail:ttgir:tt.expand_dims:float@slice({})"),
                                                SHARE_BROADCAST, "exclude:ttgir"),
    "dot result through LDS or into a dot operand (TTGIR)": (_on_mma("detail:ttgir:ttg.local_alloc:{}->shared") + _on_mma(
        "detail:ttgir:ttg.convert_layout:{0}->dot_op({0})"), SHARE_OPERAND, "exclude:ttgir"),
    # what only the kernel templates reach, about half the share measured over 172 such kernels (Triton 3.9.0,
    # gfx942, seed 77: 2.3%, 2.9%, 2.9%): a template dropped from the mix, or no longer compiled to it, shows here
    "while loop (TTGIR)": (("detail:ttgir:scf.while",), 0.01, "exclude:ttgir"),
    "persistent loop over tl.num_programs (TTGIR)": (("detail:ttgir:tt.get_num_programs",), 0.01, "exclude:ttgir"),
    "scf.if yielding a pointer (TTGIR)": (("detail:ttgir:scf.if:ptr",), 0.01, "exclude:ttgir"),
}


def check(coverage: dict, kernels: int, user_error_share: float, excluded=()) -> dict:
    """{judged, missed: [{floor, features, share, least}]} from a campaign summary's coverage table; `excluded`:
    the execution backend's exclusions (floors they void are not judged)."""
    if kernels < MIN_KERNELS:
        return {"judged": False, "missed": [], "why": f"{kernels} kernels: floors are judged from {MIN_KERNELS}"}
    missed = []
    for name, (features, least, *voided_by) in FLOORS.items():
        if set(voided_by) & set(excluded):
            continue
        share = sum(coverage.get(f, {}).get("kernels", 0) for f in features) / kernels
        if share < least:
            missed.append({"floor": name, "features": list(features), "share": round(share, 4), "least": least})
    if user_error_share >= USER_ERROR_CEILING:
        missed.append({"floor": "user errors", "features": ["verdict:user_error"], "share": user_error_share,
                       "least": f"< {USER_ERROR_CEILING}"})
    return {"judged": True, "missed": missed}
