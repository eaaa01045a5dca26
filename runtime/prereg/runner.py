"""Running blocks of work in this process, in local worker processes, or on a Dask cluster.

The blocks are diagnose's simulated studies (each seeded by its own position, see
:mod:`prereg.diagnose.model`) or score's partitions of an input file (see
:mod:`prereg.partitioned`): which process runs a block and in which order does not change a
single byte, since the results are put back in block order.  With ``workers > 1`` the blocks
run in a pool of that many local processes (the shared payload is sent to each process once);
with ``scheduler`` they run on the Dask distributed cluster at that address (the payload is
scattered to every worker once), which needs the optional extra
``prereg[distributed]``.  Progress goes to stderr (:class:`prereg.console.Progress`): a bar on
a terminal, a line every tenth of the work otherwise, nothing with ``--quiet``.
"""

from __future__ import annotations

import re
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


def most_workers() -> int:
    """The most worker processes a command starts here: four a CPU, at least eight (a
    --workers of a million forked as many processes as the command had tasks)."""
    import os

    return max(8, 4 * (os.cpu_count() or 1))


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

        try:
            for fut in as_completed(futures):
                results[futures[fut]] = fut.result()
                step()
        except BaseException:
            # an interrupt (or SIGTERM as one) or a failed block: the blocks not begun are
            # dropped, so the pool waits only for those running
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return results


# bounded waits on the network: reaching the scheduler, and any one block's result (a block is
# 250 simulated studies or a partition of a file: seconds of work, so minutes without one mean
# the cluster is gone)
CONNECT_SECONDS = 10.0
RESULT_SECONDS = 600.0

_ADDRESS = re.compile(
    r"(?:(?P<scheme>tcp|tls)://)?(?P<host>[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]+\])"
    r":(?P<port>[0-9]{1,5})"
)


def scheduler_address(address: str) -> tuple[str, int]:
    """The host and port of a Dask scheduler address (``[tcp://|tls://]HOST:PORT``); anything
    else is refused before a connection is tried."""
    m = _ADDRESS.fullmatch(address) if isinstance(address, str) else None
    if m is None or not 0 < int(m["port"]) < 65536:
        shown = address if len(address) <= 80 else address[:80] + "…"
        raise UserError(
            f"--scheduler: {shown!r} is not a scheduler address ([tcp://|tls://]HOST:PORT, the"
            " port 1 to 65535)"
        )
    return m["host"].strip("[]"), int(m["port"])


# a Dask message starts with its size (8 bytes, little-endian); a scheduler's handshake is a
# few hundred bytes, so a larger size means something else answered (b"HTTP/1.1" reads as
# 3.5e18 bytes, which the client then tries to allocate)
HANDSHAKE_MAX_BYTES = 1 << 20


def _probe(address: str, host: str, port: int, seconds: float, tls: bool = False) -> None:
    """Refuse, within ``seconds``, an address where nothing accepts a connection, or (plain TCP)
    where what answers does not send a whole Dask handshake: a scheduler writes its handshake
    (a message of its size, then its frames, holding a map) as soon as a connection is
    accepted, and the client waits for all of it with no timeout of its own."""
    import socket
    import struct
    import time

    def read(conn, n: int, deadline: float) -> bytes:
        got = b""
        while len(got) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            conn.settimeout(left)
            try:
                more = conn.recv(min(n - len(got), 1 << 16))
            except TimeoutError:
                break
            if not more:
                break
            got += more
        return got

    size = None
    try:
        with socket.create_connection((host, port), timeout=seconds) as conn:
            if tls:
                return
            deadline = time.monotonic() + seconds
            head = read(conn, 8, deadline)
            if len(head) == 8:
                (size,) = struct.unpack("<Q", head)
                if 0 < size <= HANDSHAKE_MAX_BYTES:
                    body = read(conn, size, deadline)
    except (OSError, UnicodeError) as exc:
        why = "no answer" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise UserError(
            f"--scheduler: cannot reach a Dask scheduler at {address} ({why} within {seconds:g} s)"
        ) from None
    if size is None:
        said = f"it sent {head!r} and stopped" if head else "it sent nothing"
        raise UserError(
            f"--scheduler: {address} accepted a connection but is not a Dask scheduler ({said}"
            f" within {seconds:g} s; a scheduler sends its handshake at once); nothing was run"
        )
    if not 0 < size <= HANDSHAKE_MAX_BYTES:
        raise UserError(
            f"--scheduler: {address} is not a Dask scheduler (it answered {head!r}, not a Dask"
            " handshake); nothing was run"
        )
    if len(body) < size:
        raise UserError(
            f"--scheduler: {address} is not a Dask scheduler (it sent {len(body)} of the {size}"
            f" bytes its handshake announced within {seconds:g} s); nothing was run"
        )
    if not _handshake(body):
        raise UserError(
            f"--scheduler: {address} is not a Dask scheduler (its {size} bytes are not a Dask"
            " handshake); nothing was run"
        )


def _handshake(body: bytes) -> bool:
    """Whether ``body`` is a whole Dask message holding a map (a scheduler's handshake: its
    compression, Python version and pickle protocol), read without unpickling anything."""
    try:
        from distributed.protocol.core import loads
        from distributed.protocol.utils import unpack_frames

        frames, missing = unpack_frames(body, partial=True)
        if missing or not frames:
            return False
        return isinstance(loads(frames, deserialize=False), dict)
    except ImportError:
        return True  # the client's import is refused with its own words
    except Exception:  # noqa: BLE001 (whatever fails to decode is no handshake)
        return False


def _tls_settings(address: str) -> None:
    """Refuse a tls:// address when Dask's configuration holds no TLS settings for a client
    (the client would fail with a TypeError, and its half-built client print a traceback
    after 40 s)."""
    from distributed.security import Security

    try:
        context = Security().get_connection_args("client").get("ssl_context")
    except Exception as exc:  # noqa: BLE001 (a broken TLS configuration is the user's)
        raise UserError(
            f"--scheduler: {address}: Dask's TLS settings cannot be read ({type(exc).__name__}:"
            f" {str(exc)[:200]}); nothing was run"
        ) from None
    if context is None:
        raise UserError(
            f"--scheduler: {address} is a tls:// address, and Dask's configuration holds no TLS"
            " settings for a client (distributed.comm.tls.ca-file, .client.cert and"
            " .client.key, or their DASK_DISTRIBUTED__COMM__TLS__* variables); nothing was run"
        )


def _on_dask(fn, payload, tasks, address: str, step) -> list:
    host, port = scheduler_address(address)
    try:
        import dask
        from distributed import Client, as_completed
    except ImportError:
        raise UserError(
            "--scheduler: running on a Dask cluster needs the optional extra"
            " prereg[distributed] (pip install 'prereg[distributed]')"
        ) from None
    tls = address.startswith("tls://")
    if tls:
        _tls_settings(address)
    _probe(address, host, port, CONNECT_SECONDS, tls=tls)
    timeouts = {
        "distributed.comm.timeouts.connect": f"{CONNECT_SECONDS:g}s",
        "distributed.comm.timeouts.tcp": f"{RESULT_SECONDS:g}s",
    }
    with dask.config.set(timeouts):
        client = _client(Client, address)
        try:
            shared = client.scatter(payload, broadcast=True, hash=False)
            futures = [client.submit(fn, shared, t, pure=False) for t in tasks]
            index = {f.key: i for i, f in enumerate(futures)}
            results: list = [None] * len(tasks)
            done = as_completed(futures, loop=client.loop)
            left = len(futures)
            while left:
                try:
                    batch = done.next_batch(block=False) or [_next(done, RESULT_SECONDS)]
                except TimeoutError:
                    raise UserError(
                        f"--scheduler: no result from the cluster at {address} for"
                        f" {RESULT_SECONDS:g} s ({len(tasks) - left} of {len(tasks)} blocks done);"
                        " nothing was written"
                    ) from None
                for fut in batch:
                    results[index[fut.key]] = fut.result()
                    step()
                    left -= 1
            return results
        except (OSError, TimeoutError) as exc:
            raise UserError(
                f"--scheduler: the cluster at {address} stopped answering ({exc}); nothing was"
                " written"
            ) from None
        finally:
            client.close(timeout=CONNECT_SECONDS)


def _client(Client, address: str):
    """A client of the scheduler at ``address``, connected within a bounded time: parts of the
    client's start (a reply it waits for after the handshake) have no timeout of their own, so
    a server that answers the handshake and then stays silent held the command forever."""
    import threading

    box: list = []
    ready = threading.Event()
    seconds = 3 * CONNECT_SECONDS

    def start() -> None:
        try:
            box.append(Client(address, timeout=f"{2 * CONNECT_SECONDS:g}s", set_as_default=False))
        except BaseException as exc:  # noqa: BLE001 (handed to the caller)
            box.append(exc)
        ready.set()

    threading.Thread(target=start, daemon=True).start()
    if not ready.wait(seconds):
        raise UserError(
            f"--scheduler: {address} did not complete a Dask client's connection within"
            f" {seconds:g} s (it answered the handshake, then nothing); nothing was run"
        )
    if isinstance(box[0], BaseException):
        exc = box[0]
        why = str(exc)[:200] or f"no reply within {2 * CONNECT_SECONDS:g} s"
        raise UserError(
            f"--scheduler: cannot reach a Dask scheduler at {address} ({type(exc).__name__}: {why})"
        ) from None
    return box[0]


def _next(done, seconds: float):
    """The next finished future of ``done`` (an ``as_completed``) within ``seconds``."""
    import threading

    box: list = []
    ready = threading.Event()

    def wait() -> None:
        try:
            box.append(next(done))
        except BaseException as exc:  # noqa: BLE001 (handed to the caller)
            box.append(exc)
        ready.set()

    threading.Thread(target=wait, daemon=True).start()
    if not ready.wait(seconds):
        raise TimeoutError
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]
