"""Answer "since when?": release, commit and LLVM bisection over one predicate (issue #5).

Installed, this directory is ``gfxhound.bisect``. When a checkout's root is on ``sys.path`` (``python -m pytest``
run from it), Python finds this directory as the top-level ``bisect`` first and would shadow the standard library
that ``random``, ``email`` and triton need; in that case this module *becomes* the standard library's bisect.
"""
if __name__ == "bisect":
    import importlib.util as _util
    import os as _os
    import sysconfig as _sysconfig

    _spec = _util.spec_from_file_location("bisect", _os.path.join(_sysconfig.get_paths()["stdlib"], "bisect.py"))
    _std = _util.module_from_spec(_spec)
    _spec.loader.exec_module(_std)
    globals().update({k: v for k, v in vars(_std).items() if not k.startswith("__")})
    __all__ = [k for k in vars(_std) if not k.startswith("_")]
else:
    # the modules other packages may import (tests/ground/test_layering.py checks it)
    __all__ = ["core", "releases", "run"]
