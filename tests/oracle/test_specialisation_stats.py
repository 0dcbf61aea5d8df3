"""The campaign can see whether it exercises buffer ops: the compile worker reports, per kernel, its pointer
arguments, those that got tt.pointer_range and whether its AMDGCN has buffer instructions (real compiles), and
oracle/specialisation_stats.py turns the coverage table into shares of arguments and of compiled kernels."""
from collections import Counter

from gfxhound.fuzz.features import Features
from gfxhound.oracle.specialisation_stats import specialisation_shares, summary_line
from test_compile_backend import compile_spec, matmul


def _details(result):
    return {d for d in Features.from_json(result["features"]).details
            if d.startswith(("ptr_args=", "pointer_range_args=", "amdgcn:"))}


def test_the_worker_reports_pointer_range_and_buffer_ops_of_real_compiles(tmp_path, worker_env, monkeypatch):
    monkeypatch.delenv("AMDGCN_USE_BUFFER_OPS", raising=False)
    on, _ = compile_spec(tmp_path / "on", matmul(huge_b=True, env={"AMDGCN_USE_BUFFER_OPS": "1"}), "gfx942",
                         worker_env, monkeypatch)
    assert on["status"] == "ok" and "buffer_ops" not in on
    # in_0 and out_0 under 2 GB get tt.pointer_range, in_1 (a view into a 4 GB allocation) does not
    assert _details(on) == {"ptr_args=3", "pointer_range_args=2", "amdgcn:buffer_ops"}
    off, _ = compile_spec(tmp_path / "off", matmul(env={"AMDGCN_USE_BUFFER_OPS": "0"}), "gfx942", worker_env,
                          monkeypatch)
    assert _details(off) == {"ptr_args=3", "pointer_range_args=0", "amdgcn:no_buffer_ops"}
    # unset: Triton 3.9's own default (on)
    default, _ = compile_spec(tmp_path / "default", matmul(), "gfx942", worker_env, monkeypatch)
    assert _details(default) == {"ptr_args=3", "pointer_range_args=3", "amdgcn:buffer_ops"}


def test_a_kernel_that_does_not_compile_reports_its_pointers_but_no_amdgcn(tmp_path, worker_env, monkeypatch):
    spec = matmul()
    spec.launch.num_warps = 3  # not a power of 2: the backend rejects it
    result, _ = compile_spec(tmp_path, spec, "gfx942", worker_env, monkeypatch)
    assert result["status"] == "exception"
    assert _details(result) == {"ptr_args=3", "pointer_range_args=3"}


def _coverage(kernels):
    """A campaign's coverage table (campaign.features_of: every detail becomes detail:...) from worker details."""
    counts = Counter()
    for details in kernels:
        counts.update(f"detail:{d}" for d in details)
    return {k: {"kernels": v, "share": round(v / len(kernels), 4)} for k, v in counts.items()}


def test_shares_are_of_pointer_arguments_and_of_compiled_kernels():
    coverage = _coverage([{"ptr_args=3", "pointer_range_args=3", "amdgcn:buffer_ops"},
                          {"ptr_args=4", "pointer_range_args=1", "amdgcn:no_buffer_ops"},
                          {"ptr_args=1", "pointer_range_args=0"}])  # did not compile
    shares = specialisation_shares(coverage, {"pointer_range_on_4kb": True, "exact": True})
    assert (shares["pointer_args"], shares["pointer_range_args"], shares["pointer_range_share"]) == (8, 4, 0.5)
    assert (shares["kernels_compiled"], shares["buffer_op_kernels"], shares["buffer_op_share"]) == (2, 1, 0.5)
    assert shares["notices"] == []
    assert summary_line(shares) == ("tt.pointer_range on 50.0% of pointer arguments (4/8; release default on); "
                                    "buffer ops in 50.0% of compiled kernels (1/2)")
    # the same numbers from the campaign's own Counter (Stats.coverage: bare counts)
    bare = Counter({k: v["kernels"] for k, v in coverage.items()})
    assert specialisation_shares(bare)["pointer_range_share"] == 0.5


def test_a_release_that_adds_pointer_range_by_default_but_rarely_got_it_says_so():
    """Issue 17: Triton 3.7 without torch got tt.pointer_range only where a kernel drew the knob (1 in 8)."""
    coverage = _coverage([{"ptr_args=3", "pointer_range_args=0", "amdgcn:no_buffer_ops"}] * 7
                         + [{"ptr_args=3", "pointer_range_args=3", "amdgcn:buffer_ops"}])
    shares = specialisation_shares(coverage, {"pointer_range_on_4kb": True})
    assert shares["pointer_range_share"] == 0.125 and len(shares["notices"]) == 1
    assert "under-exercised" in shares["notices"][0]
    # 3.4 and 3.5 default off: the same share is what their users' launches get
    assert specialisation_shares(coverage, {"pointer_range_on_4kb": False})["notices"] == []
    # a fallback's notice (gfxhound/compat.py could not run the release's rule) is passed on, once
    fallback = {"pointer_range_on_4kb": True, "exact": False, "notice": "triton X's own pointer specialisation ..."}
    assert specialisation_shares(_coverage([{"ptr_args=1", "pointer_range_args=1"}]), fallback)["notices"] == [
        fallback["notice"]]
    empty = specialisation_shares({})
    assert empty["pointer_range_share"] is None and empty["buffer_op_share"] is None
    assert "n/a" in summary_line(empty)


def test_the_toolchain_record_says_how_specialisation_is_decided(monkeypatch):
    monkeypatch.delenv("AMDGCN_USE_BUFFER_OPS", raising=False)
    from gfxhound.toolchain import describe
    record = describe()["specialisation"]
    assert record["method"] == "hooks" and record["exact"] and record["torch"]
    assert record["pointer_range_on_4kb"] is True and record["buffer_ops_knob"] is True and "notice" not in record


def test_an_issue_drafts_snippet_specialises_under_the_kernels_own_knobs(monkeypatch):
    """The snippet names the attributes it compiles with: they must be the ones the kernel's AMDGCN_USE_BUFFER_OPS
    gives (Triton 3.9 defaults on; a kernel that drew it off has no tt.pointer_range)."""
    monkeypatch.delenv("AMDGCN_USE_BUFFER_OPS", raising=False)
    from gfxhound.report.drafts import triton_snippet
    args = [{"name": "x", "kind": "ptr", "type": "*fp32", "value": 4096}]
    kernel = "@triton.jit\ndef kernel(x):\n    pass\n"
    off = triton_snippet(kernel, {"ARCH": "gfx942", "ARGS": args, "ENV_KNOBS": {"AMDGCN_USE_BUFFER_OPS": "0"}})
    assert "os.environ['AMDGCN_USE_BUFFER_OPS'] = '0'" in off and "tt.pointer_range" not in off
    default = triton_snippet(kernel, {"ARCH": "gfx942", "ARGS": args})
    assert "['tt.pointer_range', 32]" in default
