"""Generate: random valid Triton kernels (KernelSpecs) from Hypothesis strategies, and their Triton source."""

# the modules other packages may import (tests/ground/test_layering.py checks it)
__all__ = ["axes", "capabilities", "collective", "dtypes", "features", "floors", "forced", "generate", "layouts",
           "ir_kernels", "frame", "ops", "ops_cast", "pairs", "program", "render", "scope", "shape_templates", "shapes",
           "launch_spec", "user_kernel", "reach"]
