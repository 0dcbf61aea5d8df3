"""The sentences a Triton draft says of where its kernel came from and how it was reduced and found.

Why apart from drafts.py: each is a rule about what upstream may read (upstream_lint.py, docs/upstream-style.md
"What upstream sees"): that gfxhound, a fuzzer, found the bug and reduced it, yes; its commands, ids and paths
(a template's file under gfxhound/fuzz/templates/), no. Kept together they can be read against that rule.
"""
from __future__ import annotations

import ast
import re

NO_UB = ("The kernel has no undefined behaviour: the generator never emits integer division by zero or "
         "`INT_MIN / -1`, shifts by the bit width or more, out-of-range float-to-int casts, unmasked out-of-bounds "
         "accesses or data races, and the oracle checked every unmasked address against the buffer bounds before "
         "judging the result. The reference is PyTorch on the CPU with an error bound per operation (exact for "
         "integer ops); FMA contraction and reassociation are allowed by that bound.")
NOT_REDUCED = ("**Not reduced:** the reproducer is the fuzzer's generated kernel as it was found; reduce it before "
               "filing.")
USER_NOT_REDUCED = ("**Not reduced:** the reproducer is the kernel as its author wrote it, at the one launch that "
                    "went wrong (gfxhound reduces generated kernels, not a user's).")
STAGE_NAMES = {"ttir": "Triton IR", "ttgir": "TritonGPU IR", "llir": "the lowering to LLVM", "amdgcn":
               "AMDGCN code generation", "hsaco": "linking", "llc-verify": "LLVM code generation (llc)",
               "run": "execution"}


def kernel_name(user: dict) -> str:
    """How a draft names a user's kernel: its function and file; a template's by its function only (its file is
    gfxhound's, a path upstream has no use for)."""
    if user.get("template"):
        return f"`{user['fn']}` (one of gfxhound's kernel templates, modelled on the kernels people ship)"
    return f"`{user['fn']}` ({user['file']})"


def user_note(user, ran=True) -> str:
    """What a draft of a user kernel's finding can and cannot vouch for (fuzz/user_kernel.py)."""
    tolerance = user.get("tolerance") or "the output dtype's default"
    if user.get("template") and not ran:  # a compile crash: nothing ran, no data or memory behaviour involved
        return (f"The kernel is {kernel_name(user)}, compiled at one launch drawn from the template's launch spec. "
                "Only compiling is involved: no GPU, no input data.")
    if user.get("template"):  # gfxhound's own kernel template (fuzz/shape_templates.py): written to be defined
        return (f"The kernel is {kernel_name(user)}, at one launch gfxhound drew from the template's launch spec "
                "(the reproducer holds the kernel and the launch). It is written free of undefined behaviour: every "
                "edge masked, index tensors inside their ranges, programs sharing an output only through atomics."
                + (f" The reference is the template's float64 PyTorch function `{user['reference']}`, compared "
                   f"element by element with tolerance {tolerance} (rtol, atol)." if ran and user.get("reference")
                   else ""))
    if not ran:
        return (f"The kernel is not generated: it is {kernel_name(user)}, compiled at one launch that gfxhound drew "
                "from its author's launch spec (the reproducer holds the file and the launch).")
    said = (f"The kernel is not generated: it is {kernel_name(user)}, run at one launch that gfxhound drew from its "
            "author's launch spec (the reproducer holds the file and the launch). That it is free of undefined "
            "behaviour (out-of-bounds addresses, races between programs) is its author's statement, not checked by "
            "gfxhound.")
    if not user.get("reference"):
        return said
    return (f"{said} The reference is the author's function `{user['reference']}` from the same file, compared "
            f"element by element with tolerance {tolerance} (rtol, atol).")


def how_reduced(reduced, user=None, source_record=None) -> str:
    """What the draft may say of the reproducer's size: only what the reduction record shows."""
    if user and source_record:
        return (f"gfxhound's reducer shrank the kernel file from {source_record.get('lines_before')} to "
                f"{source_record.get('lines_after')} lines, statement by statement, checking after each step that "
                "the failure stays the same.")
    if user:
        return USER_NOT_REDUCED
    record = reduced.record if reduced.repro.exists() else {}
    if record.get("body_lines_before") and record.get("body_lines_after"):
        return (f"gfxhound's reducer shrank the generated kernel's body from {record['body_lines_before']} to "
                f"{record['body_lines_after']} lines, checking after each step that the failure stays the same.")
    return NOT_REDUCED


def found_by(emulated: bool, reduced_text: str, by_hand: bool) -> str:
    """The `## How this was found` paragraph: gfxhound found it (LLVM asks fuzzer reports to say so), how it was
    reduced; never a command or an id."""
    text = ("Found by gfxhound, a fuzzer of Triton's AMD backend"
            + (", running the kernel's LLVM IR on its CPU executor for AMD LLVM IR (no AMD GPU). " if emulated
               else ". "))
    if not (by_hand and reduced_text == NOT_REDUCED):
        text += f"{reduced_text} "
    if by_hand:
        text += ("The reproducer above was then minimised by hand." if reduced_text != NOT_REDUCED else
                 "The reproducer above was minimised by hand from the fuzzer's kernel.")
    return text.strip()


def by_hand_wrong_result(minimal, title, summary, ub):
    """Title and summary of a wrong result whose reproducer is a hand-minimised script, from the script's docstring:
    its first line ("Hand-minimised repro: <what it shows>") is the title, its next paragraph (what to expect and
    what happens instead) the summary. No generator boilerplate about undefined behaviour: the kernel is a person's,
    short enough to read."""
    doc = ast.get_docstring(ast.parse(minimal.read_text())) or ""
    paragraphs = [p.replace("\n", " ").strip() for p in doc.split("\n\n") if p.strip()]
    if not paragraphs:
        return title, summary, ub
    shows = re.sub(r"^Hand-minimised repro(?: of [^:]+)?:\s*", "", paragraphs[0]).rstrip(".")
    if not shows or len(paragraphs) < 2:
        return title, summary, ub
    return f"[AMD] {shows[0].upper() + shows[1:] if shows[0].isalpha() else shows}", paragraphs[1], ""
