# Compiles for gfx90a as the Triton runtime would; no GPU needed.
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def kernel(out_0, sa_0):
    v_1 = tl.minimum(tl.maximum(sa_0, -57344.0), 57344.0).to(tl.float8e5b16, fp_downcast_rounding="rtz")
    v_6 = v_1.to(tl.float32)
    tl.atomic_max(out_0 + 0, v_6, sem="acq_rel", scope="gpu")


src = ASTSource(
    kernel,
    signature={'out_0': '*fp32', 'sa_0': 'fp32'},
    constexprs={},
)
triton.compile(src, target=GPUTarget("hip", 'gfx90a', 64))
