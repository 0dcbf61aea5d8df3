"""gfxhound fuzz: a campaign, its progress lines and its summary."""
from __future__ import annotations

import json
import os
import shutil
import signal
import sys
from pathlib import Path

from .common import KNOWN_ARCHS, UserError, cache_dir, check_llc, default_lld, need_module, need_triton, positive
from .options import known_corpora, known_option


def add_fuzz(sub):
    fuzz = sub.add_parser("fuzz", help="run a fuzz campaign",
                          description="Generate random valid Triton kernels, compile them for AMD targets (and run them with --backend interpret|emulate|device), judge each, and record every distinct bug once in the corpus. Exit 0 when the campaign ran (1 with --fail-on-new when a new finding appeared; 130 after Ctrl-C, 143 after SIGTERM, with the summary written).")
    fuzz.add_argument("--target", default="gfx942", help="comma-separated AMD archs, e.g. gfx942,gfx950")
    fuzz.add_argument("--backend", default="compile", choices=["compile", "interpret", "device", "emulate"],
                      help="compile: compile only (crashes, verifier, static checks); interpret: run on Triton's CPU "
                           "interpreter; emulate: run the AMD LLVM IR on gfxhound's CPU executor; device: the local GPU")
    fuzz.add_argument("--machine-code", choices=["on", "off"], default="on",
                      help="--backend emulate on gfx942/gfx950: also run Triton's machine code on gfxhound's AMDGCN "
                           "executor and judge it against torch too, so a wrong result names its layer (triton: the "
                           "IR is wrong; llvm: the IR is right, its machine code is not); off: the IR executor only")
    from gfxhound.oracle.planted import PLANTS
    fuzz.add_argument("--plant", choices=sorted(PLANTS), default=None,
                      help="run a planted bug's kernel family instead of the generator (mutation testing of the "
                           "oracle); nothing is recorded in the corpus")
    fuzz.add_argument("--family", default="kernels", choices=["kernels", "collectives"],
                      help="what to generate: single-rank kernels, or multi-rank communication patterns")
    fuzz.add_argument("--shape", default="",
                      help="only these kernel shapes (comma-separated: attention, epilogue, moe, persistent, paged, "
                           "pointers, descriptor); default: random kernels, 30%% of them shapes")
    fuzz.add_argument("--kernel", default="", metavar="FILE.py::FN",
                      help="fuzz your own @triton.jit kernel's launches (sizes, constexprs, warps, stages, AMD knobs) "
                           "as --launch describes them")
    fuzz.add_argument("--launch", default="", metavar="SPEC",
                      help="--kernel: the arguments ('x: fp16[M, K]; M: 1..300; BLOCK_M: 16|32; grid: cdiv(M, "
                           "BLOCK_M); reference: ref'), or @FILE holding those lines (docs/user-kernels.md)")
    fuzz.add_argument("--patterns", default="", help="collectives: comma-separated pattern names (default: all)")
    fuzz.add_argument("--controls", type=float, default=0.0,
                      help="collectives: share of negative controls (barrier or ordering removed: sensitivity "
                           "checks of the oracle, counted apart, never findings)")
    fuzz.add_argument("--budget", default="2m", help="duration (10m, 90s, 2h) or kernel count (5000)")
    fuzz.add_argument("--workers", type=positive(int, 1), default=os.cpu_count() or 1,
                      help="compile (and CPU run) worker processes; with several --target archs (compile, emulate) "
                           "they are split between the targets, at least one each: a worker compiles for one "
                           "target only")
    fuzz.add_argument("--gpu-workers", type=positive(int, 1), default=1,
                      help="--backend device: launch workers per GPU (a launch is milliseconds amid CPU work)")
    fuzz.add_argument("--seed", type=int, default=0, help="the generator's seed: the same seed draws the same kernels")
    fuzz.add_argument("--shard", default="0/1", help="I/N: this machine's share of a campaign over N machines "
                      "(disjoint seeds; merge the corpora afterwards with 'gfxhound corpus merge')")
    fuzz.add_argument("--corpus", default="corpus", help="where findings are recorded (created when missing)")
    known_option(fuzz)
    fuzz.add_argument("--timeout", type=positive(float), default=60.0,
                      help="the most seconds a compile may take; a first run gets 10x the running median (at least "
                           "10 s), and a kernel past that runs once more before it is a timeout")
    fuzz.add_argument("--grace", type=positive(float, 0), default=30.0,
                      help="seconds kernels still in flight get after the budget or a first Ctrl-C; then the "
                           "workers are stopped and the summary written (a second Ctrl-C, or SIGTERM, stops at once)")
    fuzz.add_argument("--verbose", action="store_true",
                      help="show the workers' own output on the console (by default it goes to each finding's "
                           "record, or is counted in the summary)")
    fuzz.add_argument("--max-ops", type=positive(int, 1), default=24, help="the most ops a random kernel has")
    fuzz.add_argument("--llc", default="off",
                      help="also run `llc -verify-machineinstrs` on every kernel's LLVM IR: off, auto (Debian's "
                           "llc-22), or a path; an llc that cannot parse the IR is skipped, never a finding")
    fuzz.add_argument("--json", action="store_true", help="print the summary as JSON on stdout (docs/schemas/fuzz-summary.json)")
    fuzz.add_argument("--fail-on-new", dest="fail_on_new", action="store_true",
                      help="exit 1 when the campaign found a finding the corpus did not have (for CI)")
    fuzz.add_argument("--quiet", action="store_true", help="no progress lines (the summary is still printed)")
    fuzz.set_defaults(func=cmd_fuzz)


def _device_target():
    """The local GPU's own arch becomes the compile target of a device campaign."""
    need_module("torch", "--backend device needs torch with GPU support")
    import torch
    if not torch.cuda.is_available():
        raise UserError("--backend device found no GPU (torch.cuda.is_available() is False); "
                        "use --backend interpret on a CPU-only machine")
    props = torch.cuda.get_device_properties(0)
    if getattr(torch.version, "hip", None):
        return props.gcnArchName.split(":")[0]
    major, minor = torch.cuda.get_device_capability(0)
    return f"cuda:{major * 10 + minor}"


def cmd_fuzz(args):
    import time
    clock_start = time.time()  # a time budget is the whole command's

    from gfxhound.campaign import Campaign, CampaignConfig, parse_budget, summary_json

    targets = [t.strip() for t in args.target.split(",") if t.strip()]
    if not targets:
        raise UserError(f"--target {args.target!r}: name at least one arch, e.g. gfx942 (choose from "
                        f"{', '.join(KNOWN_ARCHS)})")
    for t in targets:
        if t not in KNOWN_ARCHS:
            raise UserError(f"unknown target {t!r}; choose from {', '.join(KNOWN_ARCHS)}")
    if args.backend != "compile" and args.llc != "off":
        raise UserError("--llc checks compiled code: use it with --backend compile")
    seconds, kernels = parse_budget(args.budget)
    known = known_corpora(args.known, args.corpus)  # checked before the campaign, used for the summary's statuses
    lld = default_lld()
    env = {"TRITON_DEFAULT_FP_FUSION": os.environ.get("TRITON_DEFAULT_FP_FUSION", "1"),
           "PYTHONWARNINGS": "ignore"}
    if lld:
        env["TRITON_HIP_LLD_PATH"] = lld
    llc = None
    if args.llc == "auto":
        llc = next((p for p in ("/usr/lib/llvm-22/bin/llc", shutil.which("llc")) if p and Path(p).exists()), None)
        if llc is None:
            raise UserError("--llc auto found no llc; install Debian's llvm-22 or give --llc PATH")
    elif args.llc != "off":
        llc = check_llc(args.llc)
    need_triton()  # once, here: a worker that cannot import Triton would die without a word
    if args.backend in ("interpret", "emulate"):
        need_module("numpy", f"--backend {args.backend} needs numpy: pip install numpy")
        need_module("torch", f"--backend {args.backend} needs torch: pip install torch==2.13.0 (a CPU build)")
    elif args.backend == "device":
        targets = [_device_target()]
    collective = {}
    if args.family == "collectives":
        need_module("numpy", "--family collectives needs numpy (its patterns compute expected values with it): "
                     "pip install numpy")
        from gfxhound.fuzz.collective import PATTERNS
        if args.patterns:
            names = [p.strip() for p in args.patterns.split(",") if p.strip()]
            unknown = [p for p in names if p not in PATTERNS]
            if unknown:
                raise UserError(f"unknown pattern {unknown[0]!r}; choose from {', '.join(sorted(PATTERNS))}")
            collective["patterns"] = names
        if not 0 <= args.controls <= 1:
            raise UserError("--controls is a share of kernels: a number from 0 to 1")
        collective["controls"] = args.controls
        if args.plant:
            raise UserError("--plant brings its own kernels (the collective ones too): leave out --family")
    elif args.patterns or args.controls:
        raise UserError("--patterns and --controls need --family collectives")
    shapes = tuple(n.strip() for n in args.shape.split(",") if n.strip())
    if shapes:
        from gfxhound.fuzz.shapes import SHAPES
        unknown = [n for n in shapes if n not in SHAPES]
        if unknown:
            raise UserError(f"unknown shape {unknown[0]!r}; choose from {', '.join(sorted(SHAPES))}")
        if args.family != "kernels" or args.plant:
            raise UserError("--shape draws single-rank kernels: leave out --family and --plant")
        from gfxhound.fuzz.shape_templates import TEMPLATES, available
        missing = [n for n in shapes if n in TEMPLATES and not available(n)]
        if missing:
            import triton
            raise UserError(f"--shape {missing[0]} needs tl.{TEMPLATES[missing[0]].needs}, which Triton "
                            f"{triton.__version__} lacks; leave it out for this release")
    user = _user_kernel(args, targets, env) if args.kernel or args.launch else None
    if args.plant and args.backend == "compile":
        raise UserError("--plant needs a backend that runs kernels: --backend interpret or device")
    if args.plant and args.backend == "interpret":
        from gfxhound.oracle.planted import PLANTS
        if PLANTS[args.plant].family == "collective":
            raise UserError(f"planted bug {args.plant} needs a GPU (--backend device): its pattern waits on other "
                            "programs, which the sequential interpreter cannot run")
        if not PLANTS[args.plant].pattern:
            raise UserError(f"planted bug {args.plant} needs a GPU (--backend device): the interpreter runs each "
                            "program as one thread, so it has no barrier to miss")
    config = CampaignConfig(plant=args.plant, backend=args.backend, llc=llc, targets=targets, corpus=args.corpus,
                            seconds=seconds, kernels=kernels, workers=args.workers, gpu_workers=args.gpu_workers,
                            seed=_shard_seed(args.seed, args.shard), timeout=args.timeout, max_ops=args.max_ops,
                            worker_env=env, caps_cache=cache_dir(), lld=lld or "/usr/lib/llvm-22/bin/ld.lld",
                            family="user" if user else args.family, collective=collective, shapes=shapes,
                            user=user, grace=args.grace, machine_code=args.machine_code == "on",
                            verbose=args.verbose,
                            timeout_floor=min(10.0, args.timeout), clock_start=clock_start)
    from .output import console as console_on
    console = console_on(sys.stderr)  # progress on stderr; the summary on stdout
    campaign = Campaign(config, on_progress=_progress_printer(console, config) if not args.quiet else None)
    from gfxhound.fuzz.generate import NothingDrawn
    with _stop_on_signals(campaign):
        try:
            stats = campaign.run()
        except NothingDrawn as exc:
            raise UserError(f"{exc}: check that the launch spec evaluates for this target and backend "
                            "(--kernel: a grid, a size or a dtype it cannot have)") from None
    summary = summary_json(stats, config, campaign.toolchain, known)
    summary["toolchain_detail"] = campaign.toolchain_detail
    summary["worker_output"] = campaign.worker_output
    if config.backend == "compile":  # how many pointers got tt.pointer_range, how many kernels took buffer ops
        from gfxhound.oracle.specialisation_stats import specialisation_shares
        summary["specialisation"] = specialisation_shares(summary["coverage"],
                                                          campaign.toolchain_detail.get("specialisation"))
        for notice in summary["specialisation"]["notices"]:  # once per campaign, --json too
            print(f"gfxhound: notice: {notice}", file=sys.stderr)
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        from .fuzz_summary import print_summary
        print_summary(summary)
    return exit_code(summary, fail_on_new=args.fail_on_new)


def exit_code(summary, fail_on_new: bool) -> int:
    """What CI reads: 130 after Ctrl-C and 143 after SIGTERM (128 + the signal, as a shell reports them; the
    summary was written all the same), else 1 when --fail-on-new and a finding is new to the corpus, else 0."""
    stopped = summary.get("stopped_by")
    if stopped in STOP_EXITS:
        return STOP_EXITS[stopped]
    if fail_on_new and any(f.get("new") for f in summary.get("findings", [])):
        return 1
    return 0


STOP_EXITS = {"interrupt": 130, "terminate": 143}


def _user_kernel(args, targets, env):
    """--kernel and --launch, checked: the kernel imports, the spec fits its parameters and draws, and the kernel
    compiles at the spec's defaults (fuzz/user_preflight.py); the UserKernel's JSON for the campaign."""
    import subprocess
    import tempfile

    from gfxhound.fuzz.user_kernel import UserKernelError, load
    if not args.kernel or not args.launch:
        raise UserError("--kernel FILE.py::FN and --launch SPEC go together (docs/user-kernels.md)")
    if args.family != "kernels" or args.shape or args.plant:
        raise UserError("--kernel fuzzes your kernel's launches: leave out --family, --shape and --plant")
    try:
        user = load(args.kernel, args.launch).to_json()
    except UserKernelError as exc:
        raise UserError(str(exc)) from None
    arch = targets[0] if targets[0] in KNOWN_ARCHS else "gfx942"
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(user, f)
    try:
        proc = subprocess.run([sys.executable, "-m", "gfxhound.fuzz.user_preflight", f.name, arch],
                              capture_output=True, text=True, timeout=max(120.0, 2 * args.timeout),
                              env={**os.environ, **env})
        lines = proc.stdout.strip().splitlines()
        if proc.returncode == 0 and lines:
            result = json.loads(lines[-1])
        elif proc.returncode < 0:  # the compiler killed the preflight (an abort): a finding for the campaign
            result = {"ok": True}
        else:  # the preflight itself failed on the spec: say where, in one line
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            result = {"ok": False, "error": f"the launch spec cannot be used with {args.kernel}: {last[:300]}"}
    except subprocess.TimeoutExpired:
        result = {"ok": True}  # a compile that does not finish is for the campaign to record
    finally:
        os.unlink(f.name)
    if not result["ok"]:
        raise UserError(result["error"])
    return user


class _stop_on_signals:
    """Ctrl-C and SIGTERM (what CI sends when it cancels a job) end a campaign the same way: the first stops new
    kernels and gives those in flight the grace, a second stops at once; either way the summary, the corpus and
    the JSON are written. Only the CLI handles signals: a campaign used as a library stops on KeyboardInterrupt."""

    NAMES = {signal.SIGINT: ("Ctrl-C", "interrupt"), signal.SIGTERM: ("SIGTERM", "terminate")}
    # SIGTERM comes from a CI runner cancelling the job: it reaches the workers too (they die of it) and SIGKILL
    # follows within seconds, so nothing is waited for; the summary is written at once. Ctrl-C's workers ignore
    # it and finish their kernels within the grace.
    GRACE = {signal.SIGINT: None, signal.SIGTERM: 0.0}

    def __init__(self, campaign):
        self.campaign = campaign

    def __enter__(self):
        self.saved = {sig: signal.signal(sig, self.handle) for sig in self.NAMES}

    def __exit__(self, *exc):
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)

    def handle(self, signum, frame):
        shown, reason = self.NAMES[signum]
        if not self.campaign.request_stop(reason, self.GRACE[signum]):
            self.campaign.stats.stopped_by = self.campaign.stats.stopped_by or reason  # the exit says which signal
            raise KeyboardInterrupt
        if signum == signal.SIGTERM:
            sys.stderr.write("gfxhound: SIGTERM: stopping now; the summary and the corpus are written\n")
            return
        pending, grace = self.campaign.pending(), self.campaign.config.grace
        sys.stderr.write(f"gfxhound: {shown}: no new kernels; the {pending} in flight get up to {grace:.0f} s, "
                         f"then the summary is written ({shown} again stops now)\n")


def _progress_printer(console, config):
    import time
    state = {"last": 0.0}

    def show(stats):
        now = time.time()
        if now - state["last"] < 2.0:
            return
        state["last"] = now
        verdicts = " ".join(f"{k}={v}" for k, v in sorted(stats.verdicts.items()))
        console.print(f"[dim]{now - stats.started:6.0f}s[/] kernels={stats.kernels} "
                      f"({stats.rate():.1f}/s) {verdicts} new_signatures={stats.new_signatures}", highlight=False)
    return show


def _shard_seed(seed: int, shard: str) -> int:
    """Shard I of N runs seed * N + I: the N shards of one seed never share a generator stream."""
    try:
        index, count = (int(x) for x in shard.split("/"))
        assert 0 <= index < count
    except (ValueError, AssertionError):
        raise UserError(f"--shard {shard!r}: give I/N with 0 <= I < N, e.g. 0/4") from None
    return seed * count + index
