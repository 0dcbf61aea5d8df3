"""gfxhound.executors.amdgcn.asm_yaml and asm_directives: the metadata YAML subset LLVM writes, the descriptor blocks and
the expression evaluator; the real metadata of an llc-22 kernel reads the same as its descriptor says."""
from pathlib import Path

import pytest

from gfxhound.executors.amdgcn import asm_yaml, codegen
from gfxhound.executors.amdgcn.asm import AsmError
from gfxhound.executors.amdgcn.asm_directives import kernel_descriptors, metadata, set_symbols, value

DATA = Path(__file__).parent / "data"

DOC = """---
amdhsa.kernels:
  - .args:
      - .name:           'a:b'
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .offset:         8
        .size:           4
        .value_kind:     by_value
    .reqd_workgroup_size: [ 256, 1, 1 ]
    .uses_dynamic_stack: false
    .name:           k
    .flags: 0x10
amdhsa.printf:
  - "1:1:4:%d\\n"
amdhsa.version:
  - 1
  - 2
...
"""


def test_the_subset_llvm_writes():
    doc = asm_yaml.load(DOC)
    kernel, = doc["amdhsa.kernels"]
    assert kernel[".args"] == [{".name": "a:b", ".offset": 0, ".size": 8, ".value_kind": "global_buffer"},
                               {".offset": 8, ".size": 4, ".value_kind": "by_value"}]
    assert kernel[".reqd_workgroup_size"] == [256, 1, 1] and kernel[".uses_dynamic_stack"] is False
    assert kernel[".flags"] == 16 and kernel[".name"] == "k"
    assert doc["amdhsa.printf"] == ["1:1:4:%d\n"] and doc["amdhsa.version"] == [1, 2]


@pytest.mark.parametrize("text, message", [
    ("a: &anchor 1\n", "does not know"),
    ("a: |\n  block\n", "does not know"),
    ("a: 1\n    b: 2\n", "unexpected indentation"),
    ("a: 1\na: 2\n", "key a twice"),
    ("a: 'open\n", "unterminated"),
])
def test_what_it_does_not_know_is_an_error(text, message):
    with pytest.raises(asm_yaml.YamlError, match=message):
        asm_yaml.load(text)


def test_real_metadata_and_descriptor_agree():
    text = codegen.from_ll(DATA / "lds_barrier.ll", "gfx942", 2).text
    kernel, = metadata(text)["amdhsa.kernels"]
    descriptor = kernel_descriptors(text)["lds_barrier"]
    assert kernel[".group_segment_fixed_size"] == int(descriptor["group_segment_fixed_size"]) == 1024
    assert kernel[".kernarg_segment_size"] == int(descriptor["kernarg_size"])
    assert [a[".name"] for a in kernel[".args"][:2]] == ["in", "out"] and kernel[".wavefront_size"] == 64
    assert set_symbols(text)["lds_barrier.num_vgpr"] == descriptor["next_free_vgpr"]


def test_expressions():
    symbols = {"k.num_vgpr": "5", "k.num_agpr": "k.num_vgpr * 2", "loop": "loop + 1"}
    assert value("max(k.num_vgpr + 2, 1, 0)", symbols) == 7
    assert value("k.num_agpr - (3 - 1)", symbols) == 8 and value("0x10", {}) == 16 and value("-4", {}) == -4
    assert value("totalnumvgprs(k.num_agpr, k.num_vgpr)", symbols) is None  # an unknown function
    assert value("loop", symbols) is None and value("unknown", symbols) is None and value("1 ?", {}) is None


def test_descriptor_block_errors():
    with pytest.raises(AsmError, match="has no .end_amdhsa_kernel"):
        kernel_descriptors(".amdhsa_kernel k\n\t.amdhsa_next_free_vgpr 1\n")
    with pytest.raises(AsmError, match="line 2: not a kernel descriptor directive"):
        kernel_descriptors(".amdhsa_kernel k\n\tnext_free_vgpr 1\n.end_amdhsa_kernel\n")
