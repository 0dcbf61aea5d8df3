"""cast_fold reads the one code a kernel stores from the LLVM IR forms Triton's AMD output uses, and says None
(cannot test) for anything that is not a literal."""
from gfxhound.oracle.cast_fold import stored_code

BUFFER = "  tail call void @llvm.amdgcn.raw.ptr.buffer.store.i8(i8 {v}, ptr addrspace(8) %7, i32 %10, i32 0, i32 0)"
DECLARE = "declare void @llvm.amdgcn.raw.ptr.buffer.store.i8(i8, ptr addrspace(8) writeonly captures(none), i32)"


def test_buffer_store_of_a_byte():
    assert stored_code(BUFFER.format(v=60) + "\n" + DECLARE, 8) == 0x3C
    assert stored_code(BUFFER.format(v=-68), 8) == 0xBC  # LLVM prints i8 literals signed


def test_plain_vector_splat_and_zero_stores():
    assert stored_code("  store <4 x i8> <i8 64, i8 64, i8 64, i8 64>, ptr addrspace(1) %5, align 4", 8) == 0x40
    assert stored_code("  store <2 x i16> splat (i16 14086), ptr addrspace(1) %5, align 4", 16) == 0x3706
    assert stored_code("  store <4 x i8> zeroinitializer, ptr addrspace(1) %5, align 4", 8) == 0
    assert stored_code("  store i32 1010580540, ptr addrspace(1) %5, align 4", 8) == 0x3C  # four packed 0x3c


def test_float_literals():
    assert stored_code("  store half 0xH3C00, ptr addrspace(1) %5, align 2", 16) == 0x3C00
    assert stored_code("  store bfloat 0xR3706, ptr addrspace(1) %5, align 2", 16) == 0x3706
    assert stored_code("  store float 1.000000e+00, ptr addrspace(1) %5, align 4", 32) == 0x3F800000
    assert stored_code("  store float 0x3FB99999A0000000, ptr addrspace(1) %5, align 4", 32) == 0x3DCCCCCD  # 0.1f


def test_anything_not_a_single_literal_is_cannot_test():
    assert stored_code(BUFFER.format(v="%46"), 8) is None  # a computed value: the conversion did not fold
    assert stored_code(BUFFER.format(v=60) + "\n" + BUFFER.format(v=61), 8) is None  # two different codes
    assert stored_code("  store <4 x i8> <i8 64, i8 %x, i8 64, i8 64>, ptr addrspace(1) %5", 8) is None
    assert stored_code("define void @k() {\n  ret void\n}", 8) is None  # no store at all
    assert stored_code(DECLARE, 8) is None
