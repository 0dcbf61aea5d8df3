"""Runs inside one Triton release's venv (tests/ground/test_specialisation_parity.py): for each case (a generated kernel,
its arguments, its environment knobs) it prints what gfxhound's compat.specialise gives and, with --torch, what
the release's own runtime computes for a real launch of the kernel with CPU torch tensors.

The runtime side is the release's `kernel[grid](*args)` itself: a stub driver answers the three questions run()
asks before it compiles (target, device, stream) and the release's `jit_cache_hook` receives the signature,
constexprs and attributes run() derived from the tensors, then stops the compile. Nothing of gfxhound is used there.

usage: python specialisation_probe.py CASES.json COMPAT.py RELEASE [--torch DIR]
(DIR: a folder holding torch and its dependencies, appended to sys.path after this venv's own packages)
"""
import importlib.util
import json
import os
import sys

CASES, COMPAT, RELEASE = sys.argv[1:4]
TORCH_DIR = sys.argv[sys.argv.index("--torch") + 1] if "--torch" in sys.argv else None
KNOBS = ("AMDGCN_USE_BUFFER_OPS", "AMDGCN_USE_BUFFER_ATOMICS", "AMDGCN_ANALYZE_SMALL_TENSOR_RANGE")


def fail(message):
    print(f"probe: {message}", file=sys.stderr)
    sys.exit(3)


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def named(kernel, by_path):
    """{(idx,): value} as the runtime keys them -> {argument name: value}."""
    return {kernel.arg_names[path[0]]: value for path, value in by_path.items()}


def clean(attrs):
    return {name: [list(a) for a in found] for name, found in attrs.items() if found}


def main():
    import triton
    if triton.__version__ != RELEASE or not os.path.realpath(triton.__file__).startswith(os.path.realpath(sys.prefix)):
        fail(f"wrong triton: {triton.__version__} from {triton.__file__}, wanted {RELEASE} from {sys.prefix}")
    torch = None
    if TORCH_DIR:
        sys.path.append(TORCH_DIR)
        import torch
        if not os.path.abspath(torch.__file__).startswith(os.path.abspath(TORCH_DIR)):  # (its links, unresolved)
            fail(f"torch from {torch.__file__}, not {TORCH_DIR}")
        if hasattr(torch.empty(1), "ptr_range"):
            fail("a torch tensor with ptr_range: the runtime would not read the storage size")
    elif importlib.util.find_spec("torch") is not None:
        fail("this venv has torch: the without-torch run needs a venv without it")
    compat = load(COMPAT, "gfxhound_compat_embedded")
    runtime = Runtime(torch) if torch else None
    kernels, out = {}, []
    for case in json.loads(open(CASES).read()):
        if case["file"] not in kernels:
            kernels[case["file"]] = getattr(load(case["file"], f"k_{len(kernels)}"), case["kernel"])
        kernel = kernels[case["file"]]
        for knob in KNOBS:
            os.environ.pop(knob, None)
        os.environ.update(case["env"])
        signature, constexprs, attrs = compat.specialise(case["args"])
        row = {"ours": {"signature": signature, "constexprs": constexprs, "attrs": clean(attrs)}}
        if runtime:
            row["runtime"] = runtime.launch(kernel, case)
        out.append(row)
    print(json.dumps({"triton": triton.__version__, "torch": torch.__version__ if torch else None,
                      "report": compat.specialisation_report(), "cases": out}))


class Runtime:
    """The release's own launch path, stopped just before it compiles."""

    def __init__(self, torch):
        from triton import knobs
        from triton.backends.compiler import GPUTarget
        from triton.runtime.driver import driver
        self.torch, self.seen = torch, []

        class StubDriver:  # run() asks these before its compile; nothing launches
            def get_current_target(self):
                return GPUTarget("hip", "gfx942", 64)

            def get_current_device(self):
                return 0

            def get_current_stream(self, device=None):
                return 0

        driver.set_active(StubDriver())

        def hook(*args, **kwargs):
            self.seen.append(kwargs["compile"])
            return True  # "handled": run() returns before compiling

        knobs.runtime.jit_cache_hook = hook

    def launch(self, kernel, case):
        torch = self.torch
        values, constexprs = [], {}
        for arg in case["args"]:
            if arg["kind"] == "ptr":
                dtype = getattr(torch, arg["torch_dtype"])
                values.append(torch.empty(max(1, arg["value"] // dtype.itemsize), dtype=dtype))
            elif arg["kind"] == "constexpr":
                constexprs[arg["name"]] = arg["value"]
            else:
                values.append(arg["value"])
        self.seen.clear()
        kernel[(1, 1, 1)](*values, **constexprs, num_warps=4, num_stages=2)
        assert len(self.seen) == 1, "the jit_cache_hook was not called once"
        seen = self.seen[0]
        attrs = seen["configs"][0]
        return {"signature": dict(seen["signature"]), "constexprs": named(kernel, seen["constants"]),
                "attrs": clean(named(kernel, attrs))}


if __name__ == "__main__":
    main()
