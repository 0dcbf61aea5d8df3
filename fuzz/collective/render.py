"""Collective spec -> Triton source and launch description (the same `Rendered` record single-rank kernels use,
so the compile workers, the repro writer and the memory-model check need no second path)."""
from __future__ import annotations

from collections import Counter

from ..features import Features
from ..rendered import HEADER, Rendered, launch_options
from .emit import Emitter, helpers
from .patterns import PATTERNS
from .spec import check, layout_of

MAX_SPIN = 1 << 20  # polls before a wait gives up and counts into ERR (about a second of polling on a GPU)
NOSPEC = ("rank_base", "n", "epoch", "max_spin")  # launch-varying integers: one compiled kernel for every launch


def kernel_args(spec, rank_base=0, epoch=1, max_spin=MAX_SPIN):
    c = spec.collective
    return [{"name": "bases", "kind": "ptr", "type": "*i64", "value": 8 * spec.ranks},
            {"name": "rank_base", "kind": "int", "type": "i32", "value": rank_base, "nospec": True},
            {"name": "n", "kind": "int", "type": "i32", "value": c["n"], "nospec": True},
            {"name": "epoch", "kind": "int", "type": "i32", "value": epoch, "nospec": True},
            {"name": "max_spin", "kind": "int", "type": "i32", "value": max_spin, "nospec": True},
            {"name": "R", "kind": "constexpr", "type": "constexpr", "value": spec.ranks},
            {"name": "BLOCK", "kind": "constexpr", "type": "constexpr", "value": c["block"]},
            {"name": "NPROG", "kind": "constexpr", "type": "constexpr", "value": c["programs"]}]


def features(spec) -> Features:
    c = spec.collective
    details = {f"sem:{c['sem'][0]}/{c['sem'][1]}", f"scope:{c['scope']}", f"poll:{c['poll']}",
               f"flags:{c['flags']}", f"signal:{c['signal']}", f"pointers:{c['pointers']}", f"ranks:{spec.ranks}",
               f"barrier:{bool(c['barrier'])}", f"order:{c.get('order', 'up')}",
               f"skew:{bool(c.get('skew'))}"}
    details |= {f"load_cache:{c['load_cache'] or 'none'}", f"store_cache:{c['store_cache'] or 'none'}"}
    details |= {f"{k}:{v}" for k, v in c["extra"].items() if k == "mode"}
    control = {f"negative:{c['control']}"} if c["control"] else set()
    return Features(Counter({f"collective:{c['pattern']}": 1}), {c["dtype"]}, control, details)


def render_collective(spec, caps=None, kernel_name="kernel") -> Rendered:
    check(spec)
    c, R = spec.collective, spec.ranks
    pattern = PATTERNS[c["pattern"]]
    layout = layout_of(spec)
    e = Emitter(c, layout, pattern.flag_arrays(c, R))
    e.line("pid = tl.program_id(0)")
    e.line("rank = rank_base + tl.program_id(1)")
    e.line(f"err = {e.ptr('ERR', 'rank', 'i32')}")
    if c.get("skew"):  # odd ranks arrive late (a busy peer): the waits must hold them up, or the readers race
        # each poll's result decides the next iteration, so the polls are serial (one round trip each)
        e.line("if rank % 2 == 1:")
        with e.indented():
            e.line("_v = 0")
            e.line("_i = 0")
            e.line(f"while (_v == 0) & (_i < {int(c['skew'])}):")
            with e.indented():
                e.line('_v = tl.atomic_add(err, 0, sem="relaxed", scope="gpu")')
                e.line("_i += 1")
    pattern.emit(e, c, R)
    args = kernel_args(spec)
    params = ", ".join(a["name"] + (": tl.constexpr" if a["kind"] == "constexpr" else "") for a in args)
    source = (HEADER + helpers(c) + "\n\n" + f"@triton.jit(do_not_specialize={list(NOSPEC)!r})\n"
              + f"def {kernel_name}({params}):\n" + "\n".join(e.lines) + "\n")
    return Rendered(source, kernel_name, args, launch_options(spec), dict(spec.launch.env),
                    (c["programs"], R, 1), features(spec), len(e.lines))
