"""Running blocks of work in this process, in local worker processes, or on a Dask cluster.

Every block is seeded by its own position (see :mod:`.model`), so which process runs it and in
which order does not change a single byte: the results are put back in block order.  With
``workers > 1`` the blocks run in a pool of that many local processes (the plan is sent to
each process once); with ``scheduler`` they run on the Dask distributed cluster at that
address (the plan is scattered to every worker once), which needs the optional extra
``prereg[distributed]``.  Progress goes to stderr (:class:`prereg.console.Progress`): a bar on
a terminal, a line every tenth of the work otherwise, nothing with ``--quiet``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from prereg.console import Progress
from prereg.errors import UserError

T = TypeVar("T")

_STATE: dict[str, Any] = {}


def _init(payload) -> None:
    _STATE["payload"] = payload


def _call(fn, task):
    return fn(_STATE["payload"], task)


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
