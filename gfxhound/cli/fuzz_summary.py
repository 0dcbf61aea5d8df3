"""A campaign's summary as people read it, on stdout (the progress lines are stderr's): the verdict counts, the
findings with their full ids (what `gfxhound corpus show` takes) and the line that says what broke, then what the
campaign wants the user to know. Through output.table: a table on a terminal, plain columns in a CI log."""
from __future__ import annotations

from rich.markup import escape

from gfxhound.families import groups, headline

from .output import console, table


def print_summary(summary: dict, stream=None) -> None:
    out = console(stream)
    stopped = {"interrupt": "stopped by Ctrl-C", "terminate": "stopped by SIGTERM"}.get(summary.get("stopped_by"),
                                                                                      "interrupted")
    out.print(f"[bold]gfxhound fuzz[/]: {summary['kernels']} kernels in {summary['duration_s']} s "
              f"({summary['kernels_per_s']}/s) with {summary['toolchain']} on {', '.join(summary['targets'])}"
              + (f"  [yellow]({stopped})[/]" if summary["interrupted"] else "")
              + (f"  [yellow]({summary['unfinished']} kernels still running when the campaign stopped; "
                 "not judged)[/]" if summary.get("unfinished") else ""))
    table(["verdict", "kernels"], [[v, str(n)] for v, n in sorted(summary["verdicts"].items())],
          keep=("verdict", "kernels"), stream=stream)
    spec = summary.get("specialisation") or {}
    if spec.get("pointer_args"):  # compile backend only
        from gfxhound.oracle.specialisation_stats import summary_line
        out.print(escape(summary_line(spec)))
    if summary["findings"]:
        bugs, apart = [], []
        for group in groups(summary["findings"]):
            many = len(group["members"]) > 1
            for f in group["members"]:
                label = ("forced: " if group["forced"] else "") + (f"family {group['family'][:8]}: " if many else "")
                (apart if group.get("apart") else bugs).append([f["id"], f["verdict"], f["stage"] or "-", f["target"],
                                                                status_cell(f), label + f["first_error_line"]])
        columns = ["id", "verdict", "stage", "target", "status", "first error line"]
        table(columns, bugs, title=f"findings: {headline(summary['findings'])}", keep=("id", "verdict"),
              stream=stream)
        if apart:  # counted apart from crashes: the front end accepted what a pass refuses in a diagnostic
            table(columns, apart, title="unsupported (a pass refused the kernel with a diagnostic of its own)",
                  keep=("id", "verdict"), stream=stream)
    for miss in summary.get("coverage_floors", {}).get("missed", []):
        out.print(f"[yellow]coverage below its floor[/]: {miss['floor']} in {miss['share']:.1%} of kernels "
                  f"(floor {miss['least']})")
    ex = summary.get("execution") or {}
    if ex.get("machine_code_runs"):  # --backend emulate's third judge (oracle/emulate_machine.py)
        stops = ", ".join(f"{n} x {escape(k)}" for k, n in list(ex.get("machine_code_unresolved", {}).items())[:3])
        out.print(f"machine code: {ex['machine_code_judged']} of {summary['kernels']} kernels judged by torch, the IR "
                  f"executor and the machine code ({ex['machine_code_share']:.1%}); {ex.get('machine_code_hazards', 0)} "
                  "with a hazard" + (f"; the machine could not judge: {stops}" if stops else ""))
    if summary.get("reach"):  # the reach matrix (fuzz/reach.py): the share, then every unreached cell and why
        from gfxhound.fuzz.reach import text
        out.print(escape(text(summary["reach"], refused=False)))
    _blowups(out, summary.get("timeouts") or {})
    stray = summary.get("worker_output") or {}
    if stray.get("lines"):
        out.print(f"[dim]the workers printed {stray['lines']} lines outside any kernel's record, kept in "
                  f"{stray.get('kept_in')} (--verbose shows them); the last: {escape(stray['last'][-1])}[/]")
    if summary["user_errors"]:
        out.print("[bold]user errors[/] (legitimate rejections; the generator should avoid them):")
        for message, count in summary["user_errors"].items():
            out.print(f"  {count} x {escape(message)}")


def status_cell(finding: dict) -> str:
    """What the corpus knows of a finding, with its upstream link: 'new', 'known upstream: owner/repo#N (pr,
    reported) https://...', 'drafted, not yet reported', 'fixed in triton-3.9.0 https://...'."""
    status = finding.get("status") or {"text": "new" if finding.get("new") else "seen before", "link": None}
    return status["text"] + (f" {status['link']}" if status.get("link") else "")


def _blowups(out, blowups: dict) -> None:
    if not blowups.get("suspected"):
        return
    medians = ", ".join(f"{arch} {m} s" for arch, m in blowups.get("median_s", {}).items())
    waiting = blowups["suspected"] - blowups.get("confirmed", 0) - blowups.get("cleared", 0)
    out.print(f"compile-time blow-ups: {blowups['suspected']} kernels ran past {blowups['factor']:.0f}x "
              f"the median compile ({medians}; at least {blowups['floor_s']:.0f} s): "
              f"{blowups.get('confirmed', 0)} ran out again (timeout findings), {blowups.get('cleared', 0)} "
              f"finished on their second run" + (f", {waiting} still waiting for it when the campaign "
                                                 "stopped" if waiting else ""))
