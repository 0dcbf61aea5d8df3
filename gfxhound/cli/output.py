"""Output for people and for logs, through rich: a table is a boxed table on a terminal and plain aligned columns
elsewhere (a CI log, a pipe), and nothing a user copies back into a command (a finding id) or reads for the cause
(a first error line) is ever cut. Progress is a live bar on a terminal and a line every tenth of the way in a log
(a carriage-return counter becomes `150/1144 probes300/1144 probes` there)."""
from __future__ import annotations

import sys
import time

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

# a log has no width: lines are as long as what they hold
_LOG_WIDTH = 100_000


def is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def console(stream=None) -> Console:
    """A rich console on `stream` (stdout by default): colours and the terminal's width on a terminal; on a log,
    no colour codes and no width to wrap at."""
    stream = stream or sys.stdout
    if is_terminal(stream):
        return Console(file=stream, highlight=False)
    return Console(file=stream, width=_LOG_WIDTH, no_color=True, highlight=False, soft_wrap=True,
                   force_terminal=False)


def table(columns, rows, title: str = "", keep=(), stream=None) -> None:
    """Print rows (lists of strings) under `columns`. Columns named in `keep` (ids, counts) are never wrapped or
    cut; on a narrow terminal the others fold onto more lines instead of losing characters."""
    out = console(stream)
    tty = out.width != _LOG_WIDTH
    grid = Table(title=escape(title) if title else None, box=box.SIMPLE_HEAD if tty else None, show_edge=tty, pad_edge=False,
                 title_justify="left", expand=False)
    for name in columns:
        longest = max([len(name)] + [len(str(r[columns.index(name)])) for r in rows])
        if name in keep:
            grid.add_column(name, no_wrap=True, min_width=longest, overflow="ignore")
        else:
            grid.add_column(name, overflow="fold")
    for row in rows:
        grid.add_row(*(Text(str(c)) for c in row))  # a message's [brackets] are text, not markup
    if tty:
        out.print(grid)
        return
    with out.capture() as captured:
        out.print(grid)
    for line in captured.get().splitlines():  # a log: no trailing padding
        print(line.rstrip(), file=out.file)


def progress(label: str, stream=None):
    """A callback (done, total) for long loops: a live bar on a terminal, a plain line per tenth in a log."""
    stream = stream or sys.stderr
    if is_terminal(stream):
        from rich.progress import Progress
        bar = Progress(console=Console(file=stream), transient=True)
        task = {"id": None}

        def show(done, total):
            if task["id"] is None:
                bar.start()
                task["id"] = bar.add_task(label, total=total)
            bar.update(task["id"], completed=done)
            if done >= total:
                bar.stop()
        return show
    state = {"shown": -1, "started": time.time()}

    def log(done, total):
        tenth = 10 * done // max(total, 1)
        if tenth > state["shown"] or done >= total:
            if done >= total and state["shown"] == 10:
                return
            state["shown"] = tenth
            print(f"{label}: {done}/{total} ({time.time() - state['started']:.0f} s)", file=stream, flush=True)
    return log
