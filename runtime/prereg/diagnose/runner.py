"""Running blocks of work in this process, in local worker processes, or on a Dask cluster.

Every block is seeded by its own position (see :mod:`.model`), so which process runs it and in
which order does not change a single byte: the results are put back in block order.  With
``workers > 1`` the blocks run in a pool of that many local processes (the plan is sent to
each process once); with ``scheduler`` they run on the Dask distributed cluster at that
address (the plan is scattered to every worker once), which needs the optional extra
``prereg[distributed]``.  Progress goes to stderr: a bar on a terminal, a line every tenth of
the work otherwise.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from prereg.errors import UserError

T = TypeVar("T")

_STATE: dict[str, Any] = {}


def _init(payload) -> None:
    _STATE["payload"] = payload


def _call(fn, task):
    return fn(_STATE["payload"], task)


class Progress:
    """Progress of ``total`` tasks on stderr (quiet when ``total`` is 0 or ``enabled`` is off)."""

    def __init__(self, what: str, total: int, enabled: bool = True, stream=None):
        self.what, self.total, self.done = what, total, 0
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.next_line = 0
        self.started = time.perf_counter()

    def step(self) -> None:
        self.done += 1
        if not self.enabled:
            return
        if self.tty:
            width = 30
            filled = int(width * self.done / self.total)
            self.stream.write(
                f"\r{self.what} [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total}"
            )
            if self.done == self.total:
                self.stream.write("\n")
            self.stream.flush()
            return
        share = self.done * 10 // self.total
        if share >= self.next_line or self.done == self.total:
            seconds = time.perf_counter() - self.started
            self.stream.write(f"{self.what}: {self.done}/{self.total} blocks ({seconds:.1f} s)\n")
            self.stream.flush()
            self.next_line = share + 1


def run(
    fn: Callable[[Any, T], Any],
    payload: Any,
    tasks: Sequence[T],
    *,
    workers: int = 1,
    scheduler: str | None = None,
    progress: Progress | None = None,
) -> list:
    """``[fn(payload, task) for task in tasks]``, in task order, computed where asked."""
    if workers < 1:
        raise UserError(f"--workers: must be at least 1 (got {workers})")
    step = progress.step if progress is not None else (lambda: None)
    if scheduler is not None:
        return _on_dask(fn, payload, tasks, scheduler, step)
    if workers == 1 or len(tasks) <= 1:
        out = []
        for t in tasks:
            out.append(fn(payload, t))
            step()
        return out
    from concurrent.futures import ProcessPoolExecutor

    results: list = [None] * len(tasks)
    with ProcessPoolExecutor(
        max_workers=min(workers, len(tasks)), initializer=_init, initargs=(payload,)
    ) as pool:
        futures = {pool.submit(_call, fn, t): i for i, t in enumerate(tasks)}
        from concurrent.futures import as_completed

        for fut in as_completed(futures):
            results[futures[fut]] = fut.result()
            step()
    return results


def _on_dask(fn, payload, tasks, address: str, step) -> list:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise UserError(
            "--scheduler: running on a Dask cluster needs the optional extra"
            " prereg[distributed] (pip install 'prereg[distributed]')"
        ) from None
    try:
        client = Client(address, timeout="20s", set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise UserError(
            f"--scheduler: cannot reach a Dask scheduler at {address} ({exc})"
        ) from None
    try:
        shared = client.scatter(payload, broadcast=True, hash=False)
        futures = [client.submit(fn, shared, t, pure=False) for t in tasks]
        index = {f.key: i for i, f in enumerate(futures)}
        results: list = [None] * len(tasks)
        for fut in as_completed(futures, loop=client.loop):
            results[index[fut.key]] = fut.result()
            step()
        return results
    finally:
        client.close()
