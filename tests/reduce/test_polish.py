"""Reduced IR made to read like a hand-written test case (reduce/polish.py), a step kept only where the property is."""
from pathlib import Path

from gfxhound.reduce.polish import constant_values_as_arguments, null_pointers_as_arguments, polish

IR = (Path(__file__).resolve().parents[1] / "data" / "llvm" / "buffer-inv-triton39.ll").read_text()


def test_null_pointers_and_constant_values_become_kernel_arguments():
    text = constant_values_as_arguments(null_pointers_as_arguments(IR))
    assert "define amdgpu_kernel void @kernel(ptr addrspace(1) %p0, ptr addrspace(1) %p1, i32 %v0, i32 %v1) {" in text
    assert "atomicrmw xchg ptr addrspace(1) %p0, i32 %v0 acq_rel" in text
    assert "atomicrmw or ptr addrspace(1) %p1, i32 %v1 acquire" in text and "null" not in text


def test_a_step_the_property_does_not_survive_is_not_taken():
    seen = []

    def keeps(text):
        seen.append(text)
        return "null" in text  # as if the defect needed the null pointer
    text, done = polish(IR, keeps)
    assert done == ["datalayout removed"] and "datalayout" not in text and "null" in text
    assert len(seen) == 2  # the third step changes nothing here (its atomics still take null pointers)


def test_a_define_line_the_rewrites_cannot_read_is_left_as_it_was():
    broken = "define amdgpu_kernel void @kernel(ptr addrspace(1 {\n  %1 = atomicrmw or ptr addrspace(1) null, i32 0 acquire\n}\n"
    text, done = polish(broken, lambda text: True)
    assert text == broken and done == []
