"""The planted memory-model violation: a compiled kernel's assembly with one required wait taken out.

Why a module of its own: it is mutation testing of the check (oracle/memory_model.py), not part of it. The edited
text is compiled back in through Triton's kernel override (tests/test_memory_model.py, docs/memory-model.md §7), so
the check is shown to fire on a real hsaco that lacks the wait, and it never runs inside a campaign or a repro.
"""
from .memory_model_amdgcn import is_inv, parse_functions, waitcnt_bounds, window_back, window_fwd


def remove_fence_wait(amdgcn):
    """The planted violation: the same assembly with the s_waitcnt that a fence/acquire/release sequence needs
    deleted (the first one found); returns (new_text, 1-based line removed). Raises ValueError if there is none.

    Candidates: the ``s_waitcnt`` that zeroes vmcnt between the last memory op and an invalidate, or between a
    ``buffer_wbl2`` and the next memory op."""
    found = []
    for ins_list, _ in parse_functions(amdgcn):
        for i, ins in enumerate(ins_list):
            if is_inv(ins) and not (i and is_inv(ins_list[i - 1])):
                window = window_back(ins_list, i)
            elif ins.mnem == "buffer_wbl2":
                window = window_fwd(ins_list, i)
            else:
                continue
            for j in window:
                cand = ins_list[j]
                if cand.mnem == "s_waitcnt" and waitcnt_bounds(cand)[0] == 0:
                    found.append(cand.line)
                    break
    if not found:
        raise ValueError("no s_waitcnt vmcnt(0) of an acquire/release/fence sequence in this assembly")
    line = min(found)
    lines = amdgcn.split("\n")
    del lines[line - 1]
    return "\n".join(lines), line
