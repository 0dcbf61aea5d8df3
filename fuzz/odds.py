"""The generator's odds: how often each choice is drawn, how many of a thing a kernel gets, how far back an operand
may reach. Policy as a table, like fuzz/floors.py: tuning the generator is an edit here, and review sees it as one.

What is here, and what is not: an entry decides *how often* or *how many*, never *what is valid*. Which dtypes a
slot takes, which values a constant may hold, which predicates exist are domains: they stay with the op or the
spec that defines them, and a choice among them is uniform. A domain that is drawn with weights (a value listed
more than once) has its weights here. Fair coins (`st.booleans()`) stay where they are drawn: Hypothesis draws a
boolean its own way, so moving one here as "1 in 2" would change every stream.

Four kinds of entry, each read one way (the helpers at the bottom):
- `(k, n)`: a chance of k in n, drawn as an integer in 0..n-1 below k (`chance`);
- `{choice: weight}`: a weighted menu, each choice repeated by its weight in table order (`menu`, `pick`);
- `(lo, hi)`: a count drawn uniformly from lo..hi inclusive;
- a bare number: a cap, a window or a scale.

Every value is the one the generator had as a literal before it moved here, so a seed's stream did not change
when they moved. Changing one changes the stream of every seed (stored specs are unaffected: a spec, not its seed,
is a finding's source of truth).
"""
from __future__ import annotations

from hypothesis import strategies as st

# ---- the kernel's frame (fuzz/strategies.py, kernel_specs) ------------------------------------------------------
GRID = {"MN": 2, "M": 1}  # launch grid axes: a 2-D grid twice as often as a 1-D one
BLOCK_SIZES = {16: 1, 32: 2, 64: 2, 128: 1}  # BLOCK_M/N/K, each axis drawn alone
TILE_ELEMENTS_MAX = 8192  # a 2-D tile (M*N, M*K or K*N) larger than this shrinks its blocks by TILE_SHRINK
TILE_SHRINK = {"K": 32, "N": 64}  # the largest BLOCK_K and BLOCK_N once a tile is over TILE_ELEMENTS_MAX
SIZE_MODES = {"exact": 1, "ragged": 2, "small": 1}  # a size along an axis: whole blocks, a ragged tail, or < 1 block
SIZE_EXACT_BLOCKS = (1, 3)  # whole blocks in an "exact" size (also a block-scaled kernel's whole-block K)
SIZE_RAGGED_BLOCKS = (0, 2)  # whole blocks before the tail of a "ragged" size (also a block-scaled kernel's K)
MX_KERNELS = (3, 10)  # a kernel is a block-scaled (tl.dot_scaled) product, where the target has one
MATMUL_KERNELS = (6, 10)  # a kernel that is not block-scaled is a tl.dot kernel (M x K and K x N inputs)
MATMUL_DTYPES = {"fp16": 2, "bf16": 2, "fp32": 1, "i8": 1, "fp64": 1,  # a tl.dot kernel's input dtype
                 "fp8e4nv": 1, "fp8e5": 1, "fp8e4b8": 1, "fp8e5b16": 1}
OPERAND_ORDER = {"row": 2, "col": 1}  # memory order of a matrix-product operand (tl.dot and tl.dot_scaled)
MX_OPS = {"dot_scaled": 3, "dot_scaled_lhs": 1, "dot_scaled_rhs": 1, "dot_scaled_none": 1}  # which sides are scaled
MX_OPERAND_DTYPES = {"e2m1x2": 2, "fp8e4nv": 2, "fp8e5": 2, "bf16": 1, "fp16": 1}  # a block-scaled operand's format
MX_SCALE_GROUP16 = (1, 3)  # a kernel scaled on both sides uses groups of 16 (else 32), where the target has them
MX_MN_BLOCK_MAX = 64  # the largest BLOCK_M and BLOCK_N of a block-scaled kernel
EXTRA_INPUTS_MAX = 3  # more input arguments besides the product's operands (at least 1 in a kernel with none)
BIAS_TILE = (1, 3)  # a tl.dot kernel gets an (M, N) tile read inside its K-loop (bias or mask, attention-like)
TWIN_BUFFER = (1, 3)  # a copy of one input argument, so kernels can choose between two pointers
HUGE_ARGUMENT = (1, 10)  # an input is a view into a > 2 GB allocation (no tt.pointer_range for it)
SCALARS = (0, 2)  # scalar (i32 or fp32) arguments
NUM_WARPS = {1: 1, 2: 1, 4: 2, 8: 2, 16: 1}  # the launch's num_warps
NUM_STAGES = {1: 1, 2: 2, 3: 1, 4: 1}  # the launch's num_stages
OPTION_KNOB = (1, 3)  # each AMD compile option the target accepts is set (else its default)
ENV_KNOB = (1, 4)  # each AMD environment knob is set (else unset)
PAIR = (3, 10)  # a kernel carries a metamorphic pair (fuzz/pairs.py)
KLOOP_FIRST_SKIPPED = (1, 3)  # a tl.dot kernel does not open with its K-loop template (it may still draw one)
TOP_STATEMENTS_MIN = 2  # the fewest top-level statements drawn (the most: the max_ops budget)

# ---- statements (fuzz/statements.py, Generator) -----------------------------------------------------------------
OP_WEIGHT_SCALE = 4  # an op's integer draw weight is max(1, int(OP_WEIGHTS[op] * OP_WEIGHT_SCALE))
OP_TRIES = 4  # draws of an op and its operands before a random statement gives up
OPERAND_WINDOW = 5  # an operand is one of the 6 most recent values its slot accepts
STATEMENT_KINDS = {"op": 15, "if": 2, "for": 3}  # what a statement below DEPTH_MAX is
DEPTH_MAX = 3  # nesting depth from which statements are only ops (no more loops, branches or elif chains)
EARLY_RETURN = (1, 12)  # a statement in a branch (outside any loop) is an early `if cond: return`
KLOOP_FOR = (1, 3)  # a drawn `for` is a K-loop template (tiles loaded and fed to tl.dot) rather than a plain loop
LOOP_TRIPS = {("cdiv", "K"): 2, ("const", 2): 1, ("const", 3): 1, ("static", 2): 1}  # a loop's trip count
LOOP_STAGES = (1, 4)  # a non-static loop names its own num_stages (tl.range), where Triton has it
LOOP_CARRIED_MAX = 2  # values a loop carries besides a K-loop's accumulator (a plain loop carries at least 1)
CARRY_WINDOW = 5  # a carried value is one of the 6 most recent carriable values
LOOP_BODY = (1, 5)  # statements drawn into a loop body (besides a K-loop template's own)
YIELD_WINDOW = 3  # what a loop or branch yields is one of the 4 most recent values of its type
KLOOP_EXTRA_LOADS = (0, 2)  # more loads per K-loop iteration (the pipeliner's hard cases)
MX_BODY_EXTRA_OP = (1, 3)  # a block-scaled K-loop draws a random statement between its loads and its product
COND_WINDOW = 2  # a branch condition is one of the 3 most recent scalar i1 values
IF_PTR_SELECT = (1, 3)  # a branch yields a pointer (where two buffers of one type exist)
IF_TENSOR_YIELDS_MAX = 2  # tensors a branch yields (at least 1 when it yields no pointer)
BRANCH_BODY = (0, 3)  # statements drawn into each side of a branch
OUTPUTS_MAX = 6  # output arguments a kernel may have (a value no existing output fits is then left unstored)
EPILOGUE_STORES_MAX = 4  # unconsumed values the epilogue stores (the most recent ones)
EPILOGUE_ATOMIC = (1, 4)  # the epilogue writes a value that spans the grid with an atomic rather than a store
EPILOGUE_ATOMIC_KINDS = {"add": 2, "xchg": 1, "max": 1}  # the epilogue's atomic (those the target has)

# reach (issue #38, fuzz/reach.py): what the backend's lowering patterns meet only if a kernel asks for it directly
DOT_RESULT_OPS = (1, 3)  # a K-loop's result goes straight into a reduction, scan, transpose... (no store between)
# what is applied to the dot result (reduce_then: a reduction, then an op on its slice; histogram: one of an argmax's
# slice; gather: the result gathered by indices cast from it)
DOT_RESULT_MENU = {"sum": 2, "max": 1, "argmax": 1, "scan": 3, "reduce_then": 3, "trans": 1, "reshape": 1,
                   "join": 1, "histogram": 2, "gather": 1}
KEEP_OPS = {"histogram": (2, 3), "gather": (2, 3)}  # a random op's result is added into an output at once (a user)
COND_REGIONS = (1, 3)  # a drawn `if` is two ifs on one runtime condition around a loop (AMD's if-combining pairs them)
COND_RETEST = (1, 2)  # the condition is tested again inside a then-branch it guards (a nested if)
DEGENERATE_BLOCK = (1, 3)  # a kernel without tl.dot has one axis with a tiny block (1 or 2 elements): [32, 1] tiles
DEGENERATE_BLOCKS = {1: 3, 2: 1}  # that block

# ---- op attributes (fuzz/ops_*.py, draw_attrs) ------------------------------------------------------------------
CAST_COMMON_COPIES = 3  # the common dtypes (fuzz/dtypes.py COMMON_DTYPES) stand this often in a cast's target menu
CAST_FP8_COPIES = 2  # the fp8 dtypes stand this often in the target menu of a cast from fp32/fp16/bf16
FULL_COMMON_COPIES = 3  # the common dtypes stand this often in tl.full's dtype menu
DOT_FP16_OUT = (1, 5)  # an fp16 tl.dot without an accumulator returns fp16 (else fp32)
SCAN_KINDS = {"cumsum": 2, "cumprod": 1}  # a scan's operation
LOAD_MASKED = {True: 3, False: 1}  # a load asks for a mask (one is kept anyway where lanes could leave bounds)
LOAD_CACHE = {"": 3, ".ca": 1, ".cg": 1, ".cv": 1}  # a load's cache modifier ("": none)
LOAD_VOLATILE = (1, 10)  # a load is volatile
STORE_CACHE = {"": 3, ".wb": 1, ".cg": 1, ".cs": 1, ".wt": 1}  # a store's cache modifier ("": none)

# how often the random statement draws each op, against the others (0: never; the epilogue writes outputs itself).
# Every op of the registry (fuzz/ops.py) has an entry: the generator looks each one up.
OP_WEIGHTS = {
    # elementwise, math, compare, select (fuzz/ops_elementwise.py)
    "add": 1.5, "sub": 1.5, "mul": 1.5, "maximum": 1.5, "minimum": 1.5, "truediv": 1.0, "floordiv": 1.0, "mod": 1.0,
    "and": 1.0, "or": 1.0, "xor": 1.0, "shl": 1.0, "shr": 1.0, "fma": 1.0,
    "exp": 1.0, "exp2": 1.0, "log": 1.0, "log2": 1.0, "sqrt": 1.0, "rsqrt": 1.0, "sin": 1.0, "cos": 1.0,
    "sigmoid": 1.0, "floor": 1.0, "ceil": 1.0, "erf": 1.0, "abs": 1.0, "neg": 1.0, "not": 1.0,
    "cmp": 1.0, "cmpc": 1.5, "where": 1.5,
    "cast": 1.5, "bitcast": 0.5,  # fuzz/ops_cast.py
    "full": 0.7, "arange": 0.5,  # fuzz/ops_constant.py
    "sum": 1.0, "max": 1.0, "min": 1.0, "argmax": 1.0, "argmin": 1.0, "scan": 1.5,  # fuzz/ops_reduce.py
    "dot": 2.0, "dot_acc": 2.0,  # fuzz/ops_dot.py
    "dot_scaled": 0.5, "dot_scaled_lhs": 0.5, "dot_scaled_rhs": 0.5, "dot_scaled_none": 0.5,  # fuzz/ops_dot_scaled.py
    "trans": 1.0, "permute": 3.0, "reshape": 1.0, "expand": 1.5, "join": 1.0, "split": 3.0,  # fuzz/ops_shape.py
    "ptr_select": 0.8,  # fuzz/ops_pointer.py
    "device_assert": 0.4,  # fuzz/ops_debug.py
    "load": 2.5, "store": 0.0, "atomic": 0.0,  # fuzz/ops_memory.py
    "histogram": 0.7, "gather": 1.0,  # fuzz/ops_index.py (reach: issue #38)
}

# ---- kernel shapes (fuzz/shapes.py, shape_attention.py, shape_epilogue.py) ---------------------------------------
SHAPE_KERNELS = (3, 10)  # a kernel (without --shape) is a kernel shape rather than a random composition
# which shape: the statement shapes, and the kernel templates (fuzz/shape_templates.py)
SHAPES = {"attention": 2, "epilogue": 2, "moe": 1, "persistent": 1, "paged": 1, "pointers": 1, "descriptor": 1}
SHAPE_EXTRA_STATEMENTS = 3  # random statements drawn after a shape's own (0..this many)
ATTENTION_DTYPES = {"fp16": 3, "bf16": 3, "fp8e4nv": 1, "fp8e5": 1, "fp8e4b8": 1, "fp8e5b16": 1}  # q, k, v
ATTENTION_HEAD_BLOCKS = {16: 1, 32: 1, 64: 2, 128: 2}  # BLOCK_N: the head dimension's block
ATTENTION_KV_BLOCKS = {16: 1, 32: 2, 64: 2}  # BLOCK_K: keys per loop iteration
ATTENTION_M_BLOCKS = {16: 1, 32: 2, 64: 2, 128: 1}  # BLOCK_M: queries per program (shrunk to the tile cap)
ATTENTION_KV_BLOCKS_MAX = 4  # whole key blocks before the sequence's ragged tail
ATTENTION_HEAD_EXACT = (3, 4)  # the head dimension fills its block (else a padded head: masked tail)
ATTENTION_BIAS = (1, 3)  # an additive (M, K) bias or mask tile read in the loop
ATTENTION_SCALED = (3, 4)  # qk is multiplied by sm_scale
ATTENTION_LSE = (1, 2)  # the log-sum-exp is stored too
ATTENTION_WARPS = {2: 1, 4: 2, 8: 2}  # attention kernels' num_warps
EPILOGUE_DTYPES = {"fp16": 3, "bf16": 3, "fp32": 1, "i8": 1, "fp8e4nv": 1, "fp8e5": 1, "fp8e4b8": 1, "fp8e5b16": 1}
EPILOGUE_STEPS = {"bias": 2, "activation": 2, "softmax": 2, "reduce": 2, "scan": 2, "residual": 1, "downcast": 1}
EPILOGUE_STEPS_MAX = 4  # epilogue steps after the K-loop (at least 1)
EPILOGUE_ENDINGS = {"store": 2, "second_dot": 1}  # store the result, or feed it to a second dot (a fused MLP)
EPILOGUE_LOOP_EXTRA = (1, 4)  # the K-loop draws a random statement besides its loads and its dot

# ---- metamorphic pairs (fuzz/pairs.py) --------------------------------------------------------------------------
PAIR_KINDS = {"stages": 1, "warps": 1, "knobs": 1, "target": 1, "layout": 2}  # a pair's kind (those the backend checks)

# ---- collectives (fuzz/collective/spec.py) ----------------------------------------------------------------------
COLLECTIVE_PROGRAMS_MAX = 4  # programs per rank (fewer where all ranks together would pass MAX_PROGRAMS)
COLLECTIVE_FULL_BLOCKS = (0, 3)  # whole blocks in the message a rank contributes, before its tail
COLLECTIVE_LOAD_CACHE = {"": 2, ".cg": 1, ".cv": 1}  # the cache modifier of remote loads ("": none)
COLLECTIVE_STORE_CACHE = {"": 2, ".wt": 1, ".cs": 1}  # the cache modifier of remote stores ("": none)
COLLECTIVE_LATE_ODD_RANKS = {False: 2, True: 1}  # odd ranks start late (SKEW relaxed polls first)
COLLECTIVE_NUM_WARPS = {1: 1, 2: 1, 4: 2, 8: 1}  # a collective kernel's num_warps
GEMM_M_TILES_MAX = 3  # a fused GEMM's M is at most this many BM tiles
GEMM_N_TILES_MAX = 2  # a fused GEMM's N is at most this many BN tiles


def chance(draw, odds) -> bool:
    """True k times in n, for an entry (k, n)."""
    k, n = odds
    return draw(st.integers(0, n - 1)) < k


def menu(weights) -> list:
    """A weighted menu as the list st.sampled_from draws from: each choice repeated by its weight, in table order."""
    return [choice for choice, weight in weights.items() for _ in range(weight)]


def pick(draw, weights):
    """One choice of a weighted menu, by one integer drawn over the total weight (choices in table order)."""
    choices = menu(weights)
    return choices[draw(st.integers(0, len(choices) - 1))]
