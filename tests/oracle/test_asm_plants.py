"""Assembly plants (oracle/asm_plants*.py): the edits, the ISA's observability on the executed path, and their
detection by the cross-check of `gfxhound emulate` -- real llc-22 code of tests/amdgcn/data's kernels, real runs
on both executors."""
import shutil
from pathlib import Path

import pytest

from gfxhound.executors.amdgcn import codegen
from gfxhound.executors.amdgcn.asm import parse_program
from gfxhound.oracle.asm_plants import PLANTS, apply, sites
from gfxhound.oracle.asm_plants_detect import detection, measure, summarise, table

DATA = Path(__file__).parents[1] / "amdgcn" / "data"
LLC = codegen.find_llc() if Path(codegen.DEFAULT_LLC).exists() or shutil.which("llc-22") else None
needs_llc = pytest.mark.skipif(LLC is None, reason="no llc-22 (Debian's llvm-22)")

# the launches of tests/amdgcn/test_emulate_cli.py and test_machine.py
FIXTURES = {
    "add_i32": "a: u32[N]; b: u32[N]; c: u32[N] out; n: N; N: 300; grid: cdiv(N, 256); block: 256",
    "loop": "in: fp32[192]; out: fp32[64] out; n: 3; grid: 1; block: 64",
    "i64_ops": "in: i64[64]; out: i64[64] out; d: 12345; grid: 1; block: 64",
    "lds_barrier": "in: fp32[256]; out: fp32[256] out; grid: 1; block: 256",
    "grid_2d": "out: u32[1536] out; width: 32; grid: 2,3; block: 16,16",
}

# an SDWA sext, a v_pk_add_f16 (gfx942) and two v_bitop3_b32 (gfx950): sites the fixtures lack
EXTRA = """target triple = "amdgcn-amd-amdhsa"
define amdgpu_kernel void @extra(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %idx = zext i32 %t to i64
  %p = getelementptr i32, ptr addrspace(1) %in, i64 %idx
  %x = load i32, ptr addrspace(1) %p
  %b1 = lshr i32 %x, 8
  %b1b = trunc i32 %b1 to i8
  %s = sext i8 %b1b to i32
  %h = bitcast i32 %x to <2 x half>
  %hh = fadd <2 x half> %h, %h
  %hb = bitcast <2 x half> %hh to i32
  %y = xor i32 %x, %s
  %z = and i32 %y, %hb
  %n = xor i32 %z, %t
  %w = or i32 %n, %x
  %po = getelementptr i32, ptr addrspace(1) %out, i64 %idx
  store i32 %w, ptr addrspace(1) %po
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
"""
EXTRA_LAUNCH = "in: u32[64]; out: u32[64] out; grid: 1; block: 64"


def _text(body: str) -> str:
    return f"\t.text\n\t.type k,@function\nk:\n{body}\ts_endpgm\n.Lfunc_end0:\n\t.size k, .Lfunc_end0-k\n"


# ---- the edits ------------------------------------------------------------------------------------------------
def test_each_edit_on_one_statement():
    text = _text("\tv_sub_u32_e32 v5, v7, v10\n\tv_lshlrev_b32_e32 v0, 2, v2\n\tv_lshlrev_b64 v[0:1], 2, v[0:1]\n"
                 "\tv_sub_u32_e32 v1, 0x1234, v2\n"
                 "\tv_xor_b32_sdwa v4, v2, sext(v2) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD "
                 "src1_sel:BYTE_1\n\tv_pk_add_f16 v3, v2, v2\n\tv_bitop3_b32 v3, v2, v4, v3 bitop3:0x48\n"
                 "\tv_addc_co_u32_e32 v4, vcc, v3, v13, vcc\n\ts_addc_u32 s13, 0, s13\n\tv_bfe_i32 v3, v2, 8, 8\n")
    after = {p: [(s.line, s.after) for s in sites(text, p)] for p in PLANTS}
    assert after["swap-vop-operands"] == [(4, "v_sub_u32_e32 v5, v10, v7"), (5, "v_lshlrev_b32_e64 v0, v2, 2"),
                                          (13, "v_bfe_i32 v3, 8, v2, 8")]
    # v_lshlrev_b64's 32-bit amount and 64-bit value do not swap; a literal cannot go to VOP3 on gfx9
    assert after["sdwa-sel"] == [(8, "v_xor_b32_sdwa v4, v2, sext(v2) dst_sel:DWORD dst_unused:UNUSED_PAD "
                                     "src0_sel:DWORD src1_sel:BYTE_0")]
    assert after["zext-for-sext"] == [(8, "v_xor_b32_sdwa v4, v2, v2 dst_sel:DWORD dst_unused:UNUSED_PAD "
                                          "src0_sel:DWORD src1_sel:BYTE_1"), (13, "v_bfe_u32 v3, v2, 8, 8")]
    assert after["op-sel-hi"] == [(9, "v_pk_add_f16 v3, v2, v2 op_sel_hi:[0,1]")]
    assert after["bitop3-table"] == [(10, "v_bitop3_b32 v3, v2, v4, v3 bitop3:73")]
    assert after["dropped-carry"] == [(11, "v_add_co_u32_e32 v4, vcc, v3, v13"), (12, "s_add_u32 s13, 0, s13")]
    assert after["drop-hazard-nop"] == after["drop-waitcnt"] == after["drop-exec-restore"] == []


def test_exec_restores_are_joins_and_saved_copies_only():
    text = _text("\ts_mov_b64 s[6:7], exec\n\ts_mov_b64 exec, -1\n\ts_mov_b64 exec, s[6:7]\n"
                 "\ts_and_b64 s[0:1], s[0:1], s[2:3]\n\ts_mov_b64 exec, s[0:1]\n"
                 "\ts_and_saveexec_b64 s[8:9], vcc\n\ts_or_b64 exec, exec, s[8:9]\n")
    assert [s.line for s in sites(text, "drop-exec-restore")] == [6, 10]   # not the entry into the region (line 8)


def test_waits_dropped_or_relaxed_and_applied_line_exactly():
    text = _text("\ts_waitcnt vmcnt(0) lgkmcnt(0)\n\ts_waitcnt expcnt(0)\n\ts_nop 1\n")
    (site,) = sites(text, "drop-waitcnt")
    assert site.seed == "waitcnt" and site.after == ""
    (relaxed,) = sites(text, "drop-waitcnt", relax=True)
    assert relaxed.after == "s_waitcnt vmcnt(1) lgkmcnt(1)"
    planted = apply(text, site)
    assert len(planted.split("\n")) == len(text.split("\n"))
    assert planted.split("\n")[3] == "\t; gfxhound plant drop-waitcnt: removed s_waitcnt vmcnt(0) lgkmcnt(0)"
    assert [i.mnemonic for i in parse_program(planted).functions[0].instructions] == ["s_waitcnt", "s_nop",
                                                                                      "s_endpgm"]
    (nop,) = sites(text, "drop-hazard-nop")
    with pytest.raises(ValueError):
        apply(text, nop.__class__(**{**nop.__dict__, "line": 4}))


# ---- detection on the fixtures --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fixture_records():
    return {name: measure([(DATA / f"{name}.ll", spec)]) for name, spec in FIXTURES.items()}


@needs_llc
def test_every_plant_with_an_observable_site_is_flagged(fixture_records):
    every = [r for records in fixture_records.values() for r in records]
    summary = summarise(every)
    print(table(summary))
    for name, records in fixture_records.items():
        for plant, row in summarise(records).items():
            if plant == "drop-hazard-nop":
                continue
            for rec in records:
                if rec.plant == plant and rec.observable and not rec.unresolved and not rec.flagged:
                    # a miss must be an edit that changes no output on these inputs (no output oracle can see it)
                    assert rec.masked, f"{name}: {rec.level} line {rec.line}: {rec.before} not flagged"
    for plant in ("drop-waitcnt", "swap-vop-operands", "zext-for-sext", "dropped-carry", "drop-exec-restore"):
        assert summary[plant]["observable"] and summary[plant]["flagged"], plant
        assert summary[plant]["flagged_unobservable"] == 0, plant
    # add_i32 sign-extends a non-negative index: zero-extending it changes no value on the path (def-use reaches
    # the store's address, but the edit is equivalent on these inputs), so it is missed -- and said so
    zext = [r for r in fixture_records["add_i32"] if r.plant == "zext-for-sext"]
    assert zext and all(r.observable and r.changed is False and r.masked and not r.flagged for r in zext)
    # every site ran on the machine; nothing of these kernels is left unmodelled
    assert all(summary[p]["unresolved"] == 0 for p in summary if p != "drop-hazard-nop")


@needs_llc
def test_hazard_nops_are_judged_by_the_machines_wait_state_rows(fixture_records):
    """A dropped s_nop is observable when the original run, replayed without it, breaks a wait-state row the
    machine checks; each such site is flagged by the planted run's own hazard report, and no other is."""
    nops = [r for records in fixture_records.values() for r in records if r.plant == "drop-hazard-nop"]
    assert nops and all(r.observable is not None and r.why for r in nops)
    assert all(r.flagged for r in nops if r.observable and not r.unresolved)
    assert not any(r.flagged for r in nops if not r.observable)


@needs_llc
def test_exec_restore_observable_only_where_exec_differs_and_is_read(fixture_records):
    restores = {(r.level, r.line): r for r in fixture_records["add_i32"] if r.plant == "drop-exec-restore"}
    observable = [k for k, r in restores.items() if r.observable]
    assert len(restores) == 4 and len(observable) == 1
    assert restores[observable[0]].flagged
    # loop's block is one full wave: EXEC is all ones before and after each restore, so nothing differs
    assert all(not r.observable for r in fixture_records["loop"] if r.plant == "drop-exec-restore")


@needs_llc
def test_grid_2d_is_judged_by_the_levels_without_the_ir(fixture_records):
    recs = [r for r in fixture_records["grid_2d"] if r.plant == "swap-vop-operands"]
    assert recs and all(r.flagged for r in recs)
    assert recs[0].judges.startswith("O0, O2 (IR left out:")


@needs_llc
def test_a_site_that_never_runs_is_not_observable():
    records = detection(DATA / "loop.ll", "in: fp32[64]; out: fp32[64] out; n: 0; grid: 1; block: 64",
                        "gfx942", "drop-waitcnt", opts=(2,))
    body = [r for r in records if "vmcnt" in r.before]
    assert body and all(r.observable is False and r.why == "not executed" for r in body)
    assert summarise(records)["drop-waitcnt"]["observable"] == len(records) - len(body)


@needs_llc
@pytest.mark.parametrize("mcpu, plant", [("gfx942", "sdwa-sel"), ("gfx942", "op-sel-hi"),
                                         ("gfx942", "zext-for-sext"), ("gfx950", "bitop3-table")])
def test_sdwa_op_sel_and_bitop3_sites(tmp_path, mcpu, plant):
    (tmp_path / "extra.ll").write_text(EXTRA)
    records = detection(tmp_path / "extra.ll", EXTRA_LAUNCH, mcpu, plant)
    assert records and all(r.observable for r in records)
    # flagged where the machine models the construct; unresolved (never flagged) where it does not yet
    assert all(r.flagged or (r.unresolved and not r.flagged) for r in records), [(r.before, r.unresolved)
                                                                                 for r in records]


@needs_llc
def test_a_dot_s_alone_is_judged_by_its_own_unplanted_run(tmp_path):
    path = tmp_path / "add.s"
    path.write_text(codegen.from_ll(DATA / "add_i32.ll", "gfx942", 2).text)
    records = detection(path, FIXTURES["add_i32"], "gfx942", "swap-vop-operands")
    assert [r.level for r in records] == ["add.s"] * len(records) and records
    assert any(r.flagged for r in records) and records[0].judges == "add.s"


@needs_llc
def test_the_command_reads_a_directory_with_launch_sidecars(tmp_path, capsys):
    from gfxhound.cli.common import Parser
    from gfxhound.cli.plants import add_plants
    shutil.copy(DATA / "loop.ll", tmp_path / "loop.ll")
    (tmp_path / "loop.launch").write_text(FIXTURES["loop"])
    shutil.copy(DATA / "add_i32.ll", tmp_path / "nolaunch.ll")
    parser = Parser(prog="gfxhound")
    add_plants(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["plants", str(tmp_path), "--plant", "drop-waitcnt,drop-hazard-nop", "--opt", "2",
                              "--min-rate", "0.95"])
    assert args.func(args) == 0
    out, err = capsys.readouterr()
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[2:4]}
    assert rows["drop-waitcnt"][:4] == ["2", "2", "2", "100%"]
    assert rows["drop-hazard-nop"][:4] == ["0", "0", "0", "n/a"]
    assert "  drop-waitcnt" in out and out.splitlines()[4].startswith("per kernel")
    assert "nolaunch.ll: no .launch sidecar" in err


@needs_llc
def test_a_relaxed_wait_is_a_hazard_where_a_load_it_retired_is_read():
    records = detection(DATA / "add_i32.ll", FIXTURES["add_i32"], "gfx942", "drop-waitcnt", opts=(2,), relax=True)
    vm = next(r for r in records if "vmcnt(0)" in r.before)
    # vmcnt(1) retires only the older of the two loads: the add reads the other before it returned
    assert vm.after == "s_waitcnt vmcnt(1)" and vm.observable and vm.flagged and vm.how == "hazard"


def test_observe_follows_the_chain_to_a_store_and_stops_at_a_full_redefinition():
    from gfxhound.oracle.asm_plants_flow import M64, effects, observe
    fn = parse_program(_text("\tv_sub_u32_e32 v1, v0, v2\n\tv_mov_b32_e32 v1, v3\n\tv_add_u32_e32 v6, v1, v7\n"
                             "\tglobal_store_dword v[4:5], v6, off\n")).functions[0]
    fx = [effects(i) for i in fn.instructions]
    assert fx[0].defs == (("v", 1),) and fx[0].uses == (("v", 0), ("v", 2))
    assert fx[3].kind == "vstore" and set(fx[3].uses) == {("v", 4), ("v", 5), ("v", 6)}

    def log(exec1):
        return [(0, 0, 0, M64, M64), (0, 0, 1, exec1, exec1), (0, 0, 2, M64, M64), (0, 0, 3, M64, M64)]
    assert observe(log(M64), fx, 0, "defs") == (False, "no chain to a store")   # v1 redefined in every lane
    # redefined in the low 32 lanes only: the high lanes still carry the site's value through v6 to the store
    assert observe(log((1 << 32) - 1), fx, 0, "defs") == (True, "store at instruction 3")
    assert observe(log(M64), fx, 1, "defs") == (True, "store at instruction 3")
    # a site that ran with no active lane did not execute
    assert observe([(0, 0, 0, 0, 0), (0, 0, 1, 0, 0), (0, 0, 3, 0, 0)], fx, 0, "defs") == (False, "not executed")


# ---- the input search (oracle/asm_plants_seeds.py) ------------------------------------------------------------
@needs_llc
def test_the_unplanted_runs_are_made_once_per_seed_and_llc_once(monkeypatch):
    """A missed site is judged again on seeds 1 and 2: the unplanted runs of each (kernel, seed) are made once
    for both plants and every site, and a later seed runs the first seed's llc code (compare gets no level)."""
    from gfxhound.oracle import asm_plants_detect, crosscheck
    calls, real = [], crosscheck.compare

    def counting(ll, mcpu, opts, *rest, **kw):
        calls.append((rest[3], tuple(opts)))   # (seed, the levels llc compiles)
        return real(ll, mcpu, opts, *rest, **kw)
    monkeypatch.setattr(crosscheck, "compare", counting)
    asm_plants_detect._baseline.cache_clear()
    records = measure([(DATA / "add_i32.ll", FIXTURES["add_i32"])], ["zext-for-sext", "swap-vop-operands"],
                      opts=(2,), seeds=3)
    assert calls == [(0, (2,)), (1, ()), (2, ())]
    # add_i32 sign-extends a non-negative index: no seed changes the value at the site, so the pre-filter skips
    # the planted runs of seeds 1 and 2 (they would repeat the original) and the miss stays masked
    (zext,) = [r for r in records if r.plant == "zext-for-sext"]
    assert (zext.flagged, zext.seed, zext.seeds_tried, zext.seeds_skipped, zext.masked) == (False, None, 3, 2, True)
    assert all(r.seed == 0 and r.seeds_tried == 1 for r in records if r.flagged)
    # without the pre-filter the planted runs are made, with the same outcome
    again = detection(DATA / "add_i32.ll", FIXTURES["add_i32"], "gfx942", "zext-for-sext", opts=(2,), seeds=3,
                      prefilter=False)
    assert [(r.flagged, r.seeds_tried, r.seeds_skipped, r.masked) for r in again] == [(False, 3, 0, True)]
    assert len(calls) == 3   # still cached


@needs_llc
@pytest.mark.parametrize("prefilter", [True, False])
def test_a_site_missed_on_the_first_seed_is_flagged_on_a_later_one(prefilter):
    """i64_ops's `ashr i64 %x, 7` as a logical shift differs only for a negative x. With x drawn from -1..500 the
    first negative value comes with seed 3 (seeds 0, 1, 2 draw none): the site is missed on seed 0 and flagged on
    seed 3, whose record says so; seeds 1 and 2 write the same value at the site (the pre-filter makes no planted
    run for them) -- and without the pre-filter the same seed flags it."""
    spec = "in: i64[64] values -1..500; out: i64[64] out; d: 12345; grid: 1; block: 64"
    (first,) = detection(DATA / "i64_ops.ll", spec, "gfx942", "zext-for-sext", opts=(2,))
    assert first.observable and not first.flagged and first.masked and first.changed is False
    assert (first.seed, first.seeds_tried) == (None, 1)
    (rec,) = detection(DATA / "i64_ops.ll", spec, "gfx942", "zext-for-sext", opts=(2,), seeds=8, prefilter=prefilter)
    assert rec.before.startswith("v_ashrrev_i64") and rec.observable
    assert (rec.flagged, rec.how, rec.seed, rec.seeds_tried, rec.masked) == (True, "outvoted", 3, 4, False)
    assert rec.seeds_skipped == (2 if prefilter else 0)
    assert rec.changed is False   # on the first seed's path (what `changed` says, with or without the pre-filter)
    row = summarise([rec])["zext-for-sext"]
    assert (row["flagged"], row["flagged_later"]) == (1, 1) and "later-seed" in table(summarise([rec]))
