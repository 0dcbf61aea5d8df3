"""Integer edge cases of the IR executor's arithmetic (oracle/emulate/ops.py), expected values by hand from
LangRef: "sdiv ... rounded towards zero", "srem ... the result has the sign of the dividend"."""
from __future__ import annotations

import numpy as np

from gfxhound.oracle.emulate.ops import _tdiv

INT64_MIN = -2 ** 63


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def test_sdiv_rounds_toward_zero_at_int64_min():
    """np.abs(INT64_MIN) wraps to INT64_MIN; the quotient must not depend on it (it did: sdiv i64 INT64_MIN,
    4294967295 gave 2147483649 instead of -2147483648, found by the generated-kernel campaign)."""
    pairs = [(INT64_MIN, 4294967295), (INT64_MIN, -7), (INT64_MIN, 7), (INT64_MIN, 2), (INT64_MIN + 1, -1),
             (-7, 2), (7, -2), (-7, -2), (7, 2), (0, -5), (2 ** 63 - 1, -3), (-1, 2 ** 63 - 1)]
    a = np.array([p[0] for p in pairs], np.int64)
    b = np.array([p[1] for p in pairs], np.int64)
    got = _tdiv(a, b)
    assert [int(x) for x in got] == [_trunc_div(x, y) for x, y in pairs]
    rem = a - got * b
    assert [int(x) for x in rem] == [x - _trunc_div(x, y) * y for x, y in pairs]
