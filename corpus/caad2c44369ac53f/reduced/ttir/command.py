# compiles the reduced file as the interestingness test did: it fails with the finding's signature
import os
os.environ['AMDGCN_ANALYZE_SMALL_TENSOR_RANGE'] = '0'
os.environ['TRITON_HIP_USE_ASYNC_COPY'] = '0'
os.environ['TRITON_HIP_USE_BLOCK_PINGPONG'] = '1'
os.environ['TRITON_HIP_USE_IN_THREAD_TRANSPOSE'] = '0'
import triton
from triton.backends.compiler import GPUTarget
triton.compile('reduced.ttir', target=GPUTarget('hip', 'gfx942', 64), options={'num_stages': 1, 'kpack': 2, 'waves_per_eu': 2})
