# compiles the reduced file as the interestingness test did: it fails with the finding's signature
import os
os.environ['AMDGCN_SCALARIZE_PACKED_FOPS'] = '1'
os.environ['AMDGCN_USE_BUFFER_OPS'] = '0'
os.environ['TRITON_HIP_USE_ASYNC_COPY'] = '1'
import triton
from triton.backends.compiler import GPUTarget
triton.compile('reduced.ttgir', target=GPUTarget('hip', 'gfx1201', 32), options={'num_stages': 3, 'schedule_hint': 'none', 'waves_per_eu': 4})
