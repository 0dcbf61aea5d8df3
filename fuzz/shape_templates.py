"""Template shapes: the kernel shapes that are whole kernel files (fuzz/templates/), drawn as launches of those
kernels through the `--kernel` machinery (fuzz/user_kernel.py).

Why through the user family: a template is a kernel file and a launch spec, exactly what a user hands to
`--kernel`; its launches are specs of the `user` family (the file, one concrete launch, the reference), so the
compile and run workers, verdicts, corpus, repro scripts and drafts handle them unchanged. What this module adds
is the name (`--shape moe`), the record's `template` field (a draft says the kernel is gfxhound's, not a user's)
and the check that the running Triton has what a template needs (`tl.make_tensor_descriptor`, public since 3.4,
was `tl._experimental_make_tensor_descriptor` before): a release without it never draws that template, instead of
failing every launch as a user error.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hypothesis import assume

from .launch_spec import LaunchSpecError

HERE = Path(__file__).parent / "templates"


@dataclass(frozen=True)
class Template:
    stem: str  # fuzz/templates/STEM.py and STEM.launch
    fn: str  # the @triton.jit function the launches call
    needs: str = ""  # a triton.language name the template uses that older releases lack ("" = every release)


# shape name -> template; the campaign's coverage counts `shape:NAME` as for the statement shapes
TEMPLATES = {
    "moe": Template("moe_gemm", "moe_gemm"),
    "persistent": Template("persistent_gemm", "persistent_gemm"),
    "paged": Template("paged_attention", "paged_attention"),
    "pointers": Template("pointer_flow", "pointer_flow"),
    "descriptor": Template("descriptor_gemm", "descriptor_gemm", needs="make_tensor_descriptor"),
}

_LOADED: dict = {}


def available(name: str) -> bool:
    """The running Triton has what the template uses."""
    import triton.language as tl
    needs = TEMPLATES[name].needs
    return not needs or hasattr(tl, needs)


def template_kernel(name: str) -> dict:
    """The template as a checked UserKernel's JSON form (loaded once per process), its file named by its place in
    gfxhound and its shape name recorded."""
    if name not in _LOADED:
        from .user_kernel import load
        t = TEMPLATES[name]
        path = HERE / f"{t.stem}.py"
        user = load(f"{path}::{t.fn}", "@" + str(HERE / f"{t.stem}.launch")).to_json()
        user["file"] = f"gfxhound/fuzz/templates/{t.stem}.py"
        user["template"] = name
        _LOADED[name] = user
    return _LOADED[name]


def draw_template(draw, caps, name: str):
    """One launch of the template: a spec of the user family, `meta["shape"]` naming the shape."""
    from .user_kernel import user_launch
    try:
        spec = user_launch(draw, caps, template_kernel(name))
    except LaunchSpecError:  # a draw the spec cannot evaluate at these sizes: skipped, as for a user's kernel
        assume(False)
    spec.meta["shape"] = name
    return spec
