"""Where a release's is_within_2gb imports torch before it looks at the argument (Triton 3.4-3.7), gfxhound runs
that release's own rule with a stand-in torch module; where even that cannot run, it decides from the release's
knob and says so in the toolchain record. (Each real release: tests/ground/test_specialisation_parity.py, slow.)"""
import sys

import pytest

from gfxhound import compat


class Like37:
    """HIPBackend.get_tensor_specialization and is_within_2gb of Triton 3.4-3.7, as their source has them."""

    @staticmethod
    def get_tensor_specialization(arg, **kwargs):
        import torch
        ret = "D" if arg.data_ptr() % 16 == 0 else ""
        if hasattr(arg, "ptr_range"):
            return ret + ("S" if arg.ptr_range() <= 2**31 - 1 else "")
        return ret + ("S" if isinstance(arg, torch.Tensor) else "")


class NeedsRealTorch(Like37):
    """A release that would use torch itself before looking at the argument: nothing we can run without torch."""

    @staticmethod
    def get_tensor_specialization(arg, **kwargs):
        import torch
        torch.empty(1)
        return "DS"


@pytest.fixture
def no_torch(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now raises ImportError(name="torch")
    monkeypatch.setitem(compat._HOW, "method", None)
    monkeypatch.delenv("AMDGCN_USE_BUFFER_OPS", raising=False)


def test_the_releases_own_rule_runs_without_torch(no_torch):
    assert compat._spec_string(Like37, 4096, "ptr") == "DS"
    assert compat._spec_string(Like37, 1 << 32, "ptr") == "D"  # a > 2 GB buffer: no tt.pointer_range
    assert compat._HOW["method"] == "hooks+stand-in"
    assert sys.modules["torch"] is None  # the stand-in is gone again


def test_a_rule_that_cannot_run_falls_back_on_the_knob_and_says_so(no_torch, monkeypatch):
    assert compat._spec_string(NeedsRealTorch, 4096, "ptr") == "DS"  # Triton 3.9's knob defaults on
    monkeypatch.setenv("AMDGCN_USE_BUFFER_OPS", "0")
    assert compat._spec_string(NeedsRealTorch, 4096, "ptr") == "D"
    monkeypatch.delenv("AMDGCN_USE_BUFFER_OPS")
    report = compat.specialisation_report()
    assert not report["exact"] and report["method"].startswith("fallback: AttributeError")
    assert "may differ from a real launch" in report["notice"] and compat.triton_version() in report["notice"]
