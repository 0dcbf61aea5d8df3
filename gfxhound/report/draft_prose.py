"""The sentences a Triton draft says of where its kernel came from and how it was reduced and found.

Why apart from drafts.py: each is a rule about what upstream may read (upstream_lint.py, docs/upstream-style.md
"What upstream sees"): that gfxhound, a fuzzer, found the bug and reduced it, yes, said once where the draft says
how it was found; its commands, ids, paths and its kernel templates (a template's name is the fuzzer's), no. Kept
together they can be read against that rule.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

NO_UB = ("The kernel has no undefined behaviour: the generator never emits integer division by zero or "
         "`INT_MIN / -1`, shifts by the bit width or more, out-of-range float-to-int casts, unmasked out-of-bounds "
         "accesses or data races, and the oracle checked every unmasked address against the buffer bounds before "
         "judging the result. The reference is PyTorch on the CPU with an error bound per operation (exact for "
         "integer ops); FMA contraction and reassociation are allowed by that bound.")
NOT_REDUCED = ("**Not reduced:** the reproducer is the fuzzer's generated kernel as it was found; reduce it before "
               "filing.")
USER_NOT_REDUCED = ("**Not reduced:** the reproducer is the kernel as its author wrote it, at the one launch that "
                    "went wrong (the fuzzer reduces generated kernels, not a user's).")
STAGE_NAMES = {"ttir": "Triton IR", "ttgir": "TritonGPU IR", "llir": "the lowering to LLVM", "amdgcn":
               "AMDGCN code generation", "hsaco": "linking", "llc-verify": "LLVM code generation (llc)",
               "run": "execution"}


def kernel_name(user: dict) -> str:
    """How a draft names a user's kernel: its function and file; a template's by its function only (its file and
    that it is a template are the fuzzer's, nothing upstream has a use for)."""
    if user.get("template"):
        return f"`{user['fn']}`"
    return f"`{user['fn']}` ({user['file']})"


def user_note(user, ran=True) -> str:
    """What a draft of a user kernel's finding can and cannot vouch for (fuzz/user_kernel.py); "" when there is
    nothing to say (a template's kernel that only compiles: the reproducer is the whole story)."""
    tolerance = user.get("tolerance") or "the output dtype's default"
    if user.get("template") and not ran:  # a compile crash: nothing ran, no data or memory behaviour involved
        return ""
    if user.get("template"):  # the fuzzer's own kernel template (fuzz/shape_templates.py): written to be defined
        return ("The kernel is written free of undefined behaviour: every edge masked, index tensors inside their "
                "ranges, programs sharing an output only through atomics."
                + (f" The reference is a float64 PyTorch function of the same computation, compared element by "
                   f"element with tolerance {tolerance} (rtol, atol)." if ran and user.get("reference") else ""))
    if not ran:
        return (f"The kernel is not generated: it is {kernel_name(user)}, compiled at one launch drawn from its "
                "author's launch spec (the reproducer holds the file and the launch).")
    said = (f"The kernel is not generated: it is {kernel_name(user)}, run at one launch drawn from its author's "
            "launch spec (the reproducer holds the file and the launch). That it is free of undefined behaviour "
            "(out-of-bounds addresses, races between programs) is its author's statement, not checked by the "
            "fuzzer.")
    if not user.get("reference"):
        return said
    return (f"{said} The reference is the author's function `{user['reference']}` from the same file, compared "
            f"element by element with tolerance {tolerance} (rtol, atol).")


def how_reduced(reduced, user=None, source_record=None) -> str:
    """What the draft may say of the reproducer's size: only what the reduction record shows."""
    if user and source_record:
        return (f"Its reducer shrank the kernel file from {source_record.get('lines_before')} to "
                f"{source_record.get('lines_after')} lines, statement by statement, checking after each step that "
                "the failure stays the same.")
    if user:
        return USER_NOT_REDUCED
    record = reduced.record if reduced.repro.exists() else {}
    if record.get("body_lines_before") and record.get("body_lines_after"):
        return (f"Its reducer shrank the generated kernel's body from {record['body_lines_before']} to "
                f"{record['body_lines_after']} lines, checking after each step that the failure stays the same.")
    return NOT_REDUCED


def found_by(emulated: bool, reduced_text: str, by_hand: bool) -> str:
    """The `## How this was found` paragraph: gfxhound found it (LLVM asks fuzzer reports to say so; the one place
    a draft names it), how it was reduced; never a command or an id."""
    text = ("Found by gfxhound, a fuzzer of Triton's AMD backend"
            + (", running the kernel's LLVM IR on its CPU executor for AMD LLVM IR (no AMD GPU). " if emulated
               else ". "))
    if not (by_hand and reduced_text == NOT_REDUCED):
        text += f"{reduced_text} "
    if by_hand:
        text += ("The reproducer above was then minimised by hand." if reduced_text != NOT_REDUCED else
                 "The reproducer above was minimised by hand from the fuzzer's kernel.")
    return text.strip()


@dataclass
class ByHand:
    """What a hand-minimised script's docstring says for the draft, and the script as pasted without it."""
    title: str
    summary: str
    expected: str  # "" when the docstring has no "Expected:" paragraph
    code: str


def by_hand(code: str) -> "ByHand | None":
    """Title, summary and expected result of a hand-minimised script, from its docstring: the first paragraph
    ("Hand-minimised repro: <what it shows>", "[AMD]" unless it opens with a tag of its own) is the title, the
    next (what happens instead of what) the summary, a paragraph starting "Expected:" the expected result. Those
    paragraphs leave the pasted script's docstring, which keeps what the script does and what its exits mean: the
    issue says the rest once (a cold review found the Summary repeated word for word in the reproducer). None when
    the docstring does not have that shape."""
    tree = ast.parse(code)
    doc = tree.body[0] if tree.body and isinstance(tree.body[0], ast.Expr) and \
        isinstance(getattr(tree.body[0], "value", None), ast.Constant) and isinstance(tree.body[0].value.value, str) \
        else None
    if doc is None:
        return None
    lines = code.splitlines()
    raw = "\n".join(lines[doc.lineno - 1:doc.end_lineno])
    quote = re.match(r'\s*[rRuU]?("""|\'\'\')', raw)
    if not quote or not raw.rstrip().endswith(quote.group(1)):
        return None
    inner = raw.strip()[len(quote.group(0).strip()):-3].strip("\n")
    paragraphs = [p for p in re.split(r"\n\s*\n", inner) if p.strip()]
    flat = [" ".join(p.split()) for p in paragraphs]
    if len(flat) < 2 or not flat[0].startswith("Hand-minimised repro"):
        return None
    shows = re.sub(r"^Hand-minimised repro(?: of [^:]+)?:\s*", "", flat[0]).rstrip(".")
    if not shows:
        return None
    expected = next((p for p in flat[2:] if p.startswith("Expected:")), "")
    kept = [p for p, f in zip(paragraphs[2:], flat[2:]) if f != expected]
    docstring = ([f'"""{kept[0].lstrip()}', *kept[1:]] if kept else [])
    one_line = len(kept) == 1 and "\n" not in kept[0].strip() and len(kept[0].strip()) <= 110
    text = (f'"""{kept[0].strip()}"""' if one_line else "\n\n".join(docstring) + '\n"""') if kept else ""
    rest = lines[doc.end_lineno:]
    while not kept and rest and not rest[0].strip():  # no docstring left: no blank lines where it was
        rest = rest[1:]
    pasted = "\n".join(lines[:doc.lineno - 1] + ([text] if text else []) + rest) + "\n"
    tagged = re.match(r"(\[[A-Z]+\])\s*(.*)", shows)  # a title that names its component itself ([FRONTEND])
    tag, shows = (tagged.group(1), tagged.group(2)) if tagged else ("[AMD]", shows)
    title = f"{tag} {shows[0].upper() + shows[1:] if shows[0].isalpha() else shows}"
    return ByHand(title, flat[1], expected, pasted)

