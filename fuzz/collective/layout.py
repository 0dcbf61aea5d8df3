"""Where each region sits in a rank's heap: the renderer bakes the offsets into the kernel, the launcher fills and
reads the regions, the oracle checks them. One function computes it, so the three cannot disagree."""
from __future__ import annotations

from dataclasses import dataclass

ALIGN = 256  # every region starts on a 256-byte boundary (vector loads, and what symmetric-memory allocators give)
CANARY_BYTES = 256  # after every region: written with CANARY_BYTE, must read back unchanged
CANARY_BYTE = 0xA5
REGIONS = ("IN", "OUT", "SCR", "AUX", "FLAGS", "ERR")
FLAG_DTYPE = "i32"  # FLAGS, AUX and ERR hold int32


@dataclass(frozen=True)
class Region:
    name: str
    offset: int  # bytes from the heap base
    count: int  # elements
    dtype: str  # gfxhound dtype name (fuzz/dtypes.py)
    itemsize: int

    @property
    def nbytes(self) -> int:
        return self.count * self.itemsize

    @property
    def canary(self) -> tuple:
        """(offset, length) of the canary that follows the region."""
        return self.offset + _round_up(max(self.nbytes, 1)), CANARY_BYTES


@dataclass(frozen=True)
class Layout:
    regions: dict  # name -> Region
    nbytes: int  # the whole heap, canaries included

    def __getitem__(self, name) -> Region:
        return self.regions[name]


def _round_up(value, to=ALIGN):
    return -(-value // to) * to


def plan(counts: dict, dtypes: dict, itemsizes: dict) -> Layout:
    """counts/dtypes/itemsizes: per region name. A region of 0 elements still gets its canary."""
    offset, regions = 0, {}
    for name in REGIONS:
        count = counts.get(name, 0)
        region = Region(name, offset, count, dtypes[name], itemsizes[name])
        regions[name] = region
        offset = region.canary[0] + CANARY_BYTES
    return Layout(regions, offset)
