"""The element types the generator knows, with the facts every stage needs about each."""
from dataclasses import dataclass


@dataclass(frozen=True)
class DType:
    name: str  # our name, also Triton's signature spelling
    tl: str  # Triton language spelling
    torch: str  # torch spelling (the oracle's)
    bits: int
    kind: str  # "float" | "int" | "bool"


DTYPES = {d.name: d for d in [
    DType("fp32", "tl.float32", "float32", 32, "float"),
    DType("fp16", "tl.float16", "float16", 16, "float"),
    DType("bf16", "tl.bfloat16", "bfloat16", 16, "float"),
    DType("i8", "tl.int8", "int8", 8, "int"),
    DType("i32", "tl.int32", "int32", 32, "int"),
    DType("i1", "tl.int1", "bool", 1, "bool"),
    DType("fp64", "tl.float64", "float64", 64, "float"),
    DType("i64", "tl.int64", "int64", 64, "int"),
]}
MEMORY_DTYPES = ("fp32", "fp16", "bf16", "i8", "i32", "fp64", "i64")  # what kernels load and store
COMMON_DTYPES = ("fp32", "fp16", "bf16", "i8", "i32")  # drawn more often than the 64-bit ones
FLOATS = tuple(n for n, d in DTYPES.items() if d.kind == "float")
INTS = tuple(n for n, d in DTYPES.items() if d.kind == "int")
NUMERIC = FLOATS + INTS
INT_RANGE = {"i8": (-128, 127), "i32": (-2147483520, 2147483520), "i64": (-2147483520, 2147483520)}  # float bounds exactly representable in fp32


def tl(name: str) -> str:
    return DTYPES[name].tl


def is_float(name: str) -> bool:
    return DTYPES[name].kind == "float"


def is_int(name: str) -> bool:
    return DTYPES[name].kind == "int"


def nbytes(name: str) -> int:
    return max(1, DTYPES[name].bits // 8)


def usable(names, caps) -> list:
    """The dtypes of `names` this campaign may generate (an execution backend can exclude some)."""
    return [n for n in names if caps.allows_dtype(n)]
