"""Before a `--kernel` campaign: draw launches from the spec and compile the kernel once at the spec's defaults, in a
child process (a compiler crash must not take the CLI down with it).

Why the two outcomes differ: a kernel Triton's front end rejects (a `CompilationError`: a type error, an unknown
name, a bad constexpr) is the user's to fix, and is said in one line; anything later (a pass that fails, LLVM
aborting) is what the campaign is for, so the campaign goes on and records it as a finding.

Run as `python -m gfxhound.fuzz.user_preflight USER_JSON ARCH`; prints one JSON line.
"""
from __future__ import annotations

import json
import sys


def preflight(user: dict, arch: str) -> dict:
    from gfxhound import compat

    from .capabilities import introspect
    from .launch_spec import LaunchSpecError
    from .user_kernel import UserKernelError, check_draws, default_launch, import_file, unwrap
    from .user_render import render_user
    caps = introspect(arch)
    try:
        good, errors = check_draws(caps, user)
        spec = default_launch(caps, user)
    except (UserKernelError, LaunchSpecError) as exc:
        return {"ok": False, "error": str(exc)}
    rendered = render_user(spec)
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/kernel.py"
        with open(path, "w") as f:
            f.write(rendered.source)
        kernel = unwrap(getattr(import_file(path, "preflight"), user["fn"]))
        try:
            compat.compile_for_amd(kernel, rendered.args, arch, rendered.options, rendered.env)
        except Exception as exc:  # noqa: BLE001
            from triton.compiler.errors import CompilationError
            if isinstance(exc, CompilationError):
                detail = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]  # the message, after the source
                return {"ok": False, "error": f"{user['fn']} does not compile at the launch spec's defaults "
                                              f"({_defaults(spec)}): {detail[:300]}"}
            return {"ok": True, "drawn": good, "default_compile": f"failed past the front end: {type(exc).__name__}"}
    return {"ok": True, "drawn": good, "draw_errors": errors, "default_compile": "ok"}


def _defaults(spec):
    shown = [f"{a['name']}={a['value']}" for a in spec.user["args"] if a["kind"] != "tensor"]
    shown += [f"{a['name']}={a['dtype']}{a['shape']}" for a in spec.user["args"] if a["kind"] == "tensor"]
    return ", ".join(shown)[:200]


def main():
    user = json.loads(open(sys.argv[1]).read())
    print(json.dumps(preflight(user, sys.argv[2])))


if __name__ == "__main__":
    main()
