"""The element types the generator knows, with the facts every stage needs about each."""
from dataclasses import dataclass


@dataclass(frozen=True)
class DType:
    name: str  # our name, also Triton's signature spelling
    tl: str  # Triton language spelling
    torch: str  # torch spelling (the oracle's)
    bits: int
    kind: str  # "float" | "fp8" (storage-only floats) | "int" | "bool" | "mx" (raw MX codes: packed FP4, E8M0)
    sig: str = ""  # Triton's signature spelling when it differs from the name

    @property
    def signature(self) -> str:
        return self.sig or self.name


DTYPES = {d.name: d for d in [
    DType("fp32", "tl.float32", "float32", 32, "float"),
    DType("fp16", "tl.float16", "float16", 16, "float"),
    DType("bf16", "tl.bfloat16", "bfloat16", 16, "float"),
    DType("i8", "tl.int8", "int8", 8, "int"),
    DType("i32", "tl.int32", "int32", 32, "int"),
    DType("i1", "tl.int1", "bool", 1, "bool"),
    DType("fp64", "tl.float64", "float64", 64, "float"),
    DType("i64", "tl.int64", "int64", 64, "int"),
    # 8-bit floats: OCP E4M3FN / E5M2 and AMD's fnuz flavours (no -0, no inf, NaN is 0x80, exponent bias + 1)
    DType("fp8e4nv", "tl.float8e4nv", "float8_e4m3fn", 8, "fp8"),
    DType("fp8e5", "tl.float8e5", "float8_e5m2", 8, "fp8"),
    DType("fp8e4b8", "tl.float8e4b8", "float8_e4m3fnuz", 8, "fp8"),
    DType("fp8e5b16", "tl.float8e5b16", "float8_e5m2fnuz", 8, "fp8"),
    # block-scaled (MX) operands of tl.dot_scaled, held as raw bytes: two FP4 (E2M1) codes a byte, low nibble
    # first; E8M0 scales, one byte per 32 (or 16) elements along K
    DType("e2m1x2", "tl.uint8", "uint8", 8, "mx", sig="u8"),
    DType("e8m0", "tl.uint8", "uint8", 8, "mx", sig="u8"),
]}
FP8 = ("fp8e4nv", "fp8e5", "fp8e4b8", "fp8e5b16")
FP8_OCP, FP8_FNUZ = FP8[:2], FP8[2:]
MX_CODES = ("e2m1x2", "e8m0")
MEMORY_DTYPES = ("fp32", "fp16", "bf16", "i8", "i32", "fp64", "i64")  # what kernels load and store
COMMON_DTYPES = ("fp32", "fp16", "bf16", "i8", "i32")  # drawn more often than the 64-bit ones
FLOATS = tuple(n for n, d in DTYPES.items() if d.kind == "float")  # arithmetic floats (fp8 is storage only)
INTS = tuple(n for n, d in DTYPES.items() if d.kind == "int")
NUMERIC = FLOATS + INTS
INT_RANGE = {"i8": (-128, 127), "i32": (-2147483520, 2147483520), "i64": (-2147483520, 2147483520)}  # float bounds exactly representable in fp32


def tl(name: str) -> str:
    return DTYPES[name].tl


def is_float(name: str) -> bool:
    """Holds a real value (the oracle keeps it in float64): arithmetic floats and the 8-bit floats."""
    return DTYPES[name].kind in ("float", "fp8")


def is_fp8(name: str) -> bool:
    return DTYPES[name].kind == "fp8"


def fp8_family(name: str) -> str:
    return "ocp" if name in FP8_OCP else "fnuz"


def signature(name: str) -> str:
    return DTYPES[name].signature


def is_int(name: str) -> bool:
    return DTYPES[name].kind == "int"


def nbytes(name: str) -> int:
    return max(1, DTYPES[name].bits // 8)


def usable(names, caps) -> list:
    """The dtypes of `names` this campaign may generate (an execution backend can exclude some)."""
    return [n for n in names if caps.allows_dtype(n) and (not is_fp8(n) or caps.has("fp8:" + n))]
