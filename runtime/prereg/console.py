"""How a command speaks: human lines on stdout, or with ``--json`` one JSON document; progress
on stderr when it is a terminal.

Every study command gets ``--json`` and ``--quiet`` from the CLI, which hands the handler a
:class:`Console` as ``args.console`` (:func:`console_of` gives a plain one to a handler called
without the CLI).  A handler writes its human lines with :meth:`Console.line` and, once, its
machine-readable summary with :meth:`Console.summary`; with ``--json`` the lines are not
printed and the CLI prints the summary when the command ends, as one JSON object with
``study``, ``command`` and ``exitCode`` beside the command's own keys (camelCase, as every
output of prereg).  A command that states no summary still prints those three, and what a
handler prints to stdout by itself goes to stderr under ``--json``.  Adding
``--json`` to a new command is one ``console_of(args).summary({...})`` call.

:class:`Progress` reports work that takes longer than about a second, on a terminal only: a
bar drawn by rich when it is installed, else a plain one redrawn in place; nothing in a pipe
or a file, with ``--quiet`` or ``--json``, or before the first second has passed.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping
from typing import Any, TextIO

#: Seconds of work before progress is first shown (``PREREG_PROGRESS_DELAY`` overrides it).
DELAY = 1.0


def progress_delay() -> float:
    import math
    import os

    text = os.environ.get("PREREG_PROGRESS_DELAY")
    if text is None:
        return DELAY
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (math.isfinite(value) and value >= 0):
        from prereg.errors import UserError

        raise UserError(
            f"environment: PREREG_PROGRESS_DELAY is {text!r}; it is the seconds of work before"
            " progress is shown, a number of at least 0"
        )
    return value


class Console:
    def __init__(
        self,
        *,
        json_mode: bool = False,
        quiet: bool = False,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
    ):
        self.json_mode = json_mode
        self.quiet = quiet
        self._stdout = stdout
        self._stderr = stderr
        self._summary: dict[str, Any] | None = None

    @property
    def stdout(self) -> TextIO:
        return self._stdout or sys.stdout

    @property
    def stderr(self) -> TextIO:
        return self._stderr or sys.stderr

    def line(self, text: str = "") -> None:
        """A human line on stdout, flushed at once (so a slow command streams); none in JSON."""
        if not self.json_mode:
            self.stdout.write(text + "\n")
            self.stdout.flush()

    def summary(self, doc: Mapping[str, Any]) -> None:
        """The command's machine-readable summary (printed by :meth:`finish` with --json)."""
        self._summary = {**(self._summary or {}), **doc}

    def progress(self, what: str, total: int, unit: str = "") -> Progress:
        """Progress on stderr when it is a terminal; none with ``--quiet`` or ``--json``."""
        enabled = not (self.quiet or self.json_mode)
        return Progress(what, total, unit=unit, enabled=enabled, stream=self.stderr)

    def finish(self, code: int, **context: Any) -> None:
        """With --json, print ``context``, the summary and ``exitCode`` as one JSON object."""
        if self.json_mode:
            doc = {**context, **(self._summary or {}), "exitCode": int(code)}
            self.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
            self.stdout.flush()
            JSON_ANSWERS[0] += 1


# how many JSON answers this process printed (the CLI answers once more when a command was
# refused before it printed its own)
JSON_ANSWERS = [0]


def console_of(args: Any) -> Console:
    """The console the CLI gave a handler, or a plain one (text, progress on)."""
    found = getattr(args, "console", None)
    if isinstance(found, Console):
        return found
    return Console()


class Progress:
    """Progress of ``total`` units of work, shown on a terminal only (``stream``, stderr): a bar
    drawn by rich when it is installed (the ``progress`` extra; imported when a bar is first
    drawn, so a command's start-up never pays for it), else a plain bar redrawn in place.
    Nothing is shown when the stream is not a terminal (a pipe, a file, CI's log), when it is
    disabled (``--quiet``, ``--json``) or before ``delay`` seconds of work have passed."""

    def __init__(
        self,
        what: str,
        total: int,
        *,
        unit: str = "",
        enabled: bool = True,
        stream: TextIO | None = None,
        delay: float | None = None,
        clock=time.monotonic,
    ):
        self.what, self.total, self.unit = what, int(total), unit
        self.done = 0
        self.label = ""
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = enabled and self.total > 0 and self.tty
        self.clock = clock
        self.started = clock()
        self.delay = progress_delay() if delay is None else delay
        self.shown = False
        self.last_draw = 0.0
        self.ended = False
        self._rich: tuple | None = None  # (rich Progress, task id) once rich draws the bar

    def step(self, n: int = 1, label: str | None = None) -> None:
        self.update(self.done + n, label=label)

    def update(self, done: int, total: int | None = None, label: str | None = None) -> None:
        if total is not None and total != self.total:
            self.total = int(total)
        self.done = min(int(done), self.total) if self.total else int(done)
        if label is not None:
            self.label = label
        if not self.enabled or self.total <= 0 or self.ended:
            return
        now = self.clock()
        elapsed = now - self.started
        finished = self.done >= self.total
        if elapsed < self.delay and not (finished and self.shown):
            return
        self.ended = finished
        if finished or now - self.last_draw >= 0.1 or not self.shown:
            self._draw(elapsed)
            self.shown, self.last_draw = True, now

    def _draw(self, elapsed: float) -> None:
        units = f" {self.unit}" if self.unit else ""
        tail = f" {self.label}" if self.label else ""
        if not self.shown:
            self._rich = _rich_bar(self.stream, self.what, self.total)
        if self._rich is not None:
            bar, task = self._rich
            bar.update(task, total=self.total, completed=self.done, extra=f"{units}{tail}")
            if bar.live.is_started:
                bar.refresh()
            else:
                bar.start()  # drawn once, as it stands now
            return
        width = 30
        filled = int(width * self.done / self.total)
        self.stream.write(
            f"\r\x1b[K{self.what} [{'#' * filled}{'.' * (width - filled)}]"
            f" {self.done}/{self.total}{units}{tail} ({elapsed:.0f} s)"
        )
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line (nothing was drawn: nothing to end)."""
        if not self.shown:
            return
        self.shown = False
        if self._rich is not None:
            self._rich[0].stop()
            self._rich = None
        else:
            self.stream.write("\n")
            self.stream.flush()


def _rich_bar(stream: TextIO, what: str, total: int) -> tuple | None:
    """A rich progress bar on ``stream`` with one task (not started), or None without rich. It
    refreshes only when :class:`Progress` draws (no thread of its own), and leaves
    ``sys.stdout`` and ``sys.stderr`` as they are."""
    try:
        from rich.console import Console as RichConsole
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.progress import Progress as RichProgress
    except ImportError:
        return None
    bar = RichProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[extra]}"),
        TimeElapsedColumn(),
        console=RichConsole(file=stream, force_terminal=True),
        auto_refresh=False,
        # stdout stays the command's own (a pipe may take it while stderr is a terminal)
        redirect_stdout=False,
        redirect_stderr=False,
    )
    return bar, bar.add_task(what, total=total, extra="")
