# compiles the reduced file as the interestingness test did: it fails with the finding's signature
import os
import triton
from triton.backends.compiler import GPUTarget
triton.compile('reduced.ttir', target=GPUTarget('hip', 'gfx950', 64), options={'num_stages': 3, 'matrix_instr_nonkdim': 4, 'waves_per_eu': 4})
