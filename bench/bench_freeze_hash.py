"""Benchmark: streaming SHA-256 of a bound file, the freeze's code path against OpenSSL.

Creates a 1 GiB file in a temporary folder, hashes it with
``prereg.engines.clusterpower.freeze.hash_beneath`` (the no-symlink open plus chunked hashing
the freeze uses) and with ``openssl dgst -sha256`` (this machine's coreutils ``sha256sum``
runs without SHA instructions, about 150 MiB/s, and would flatter any ratio), three runs each
after one warm-up read (so both read from the page cache), and prints the median throughputs
and their ratio.  The peak resident memory shows that hashing is bounded.  The whole
freeze-manifest command is timed against openssl in bench/workloads.py.  The file is deleted
afterwards.

    python bench/bench_freeze_hash.py [--size-mib 1024] [--runs 3] [--chunks]

``--chunks`` also prints the median throughput of a few chunk sizes.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time

from prereg.engines.clusterpower.freeze import HASH_CHUNK, hash_beneath


def make_file(path: str, size_mib: int) -> None:
    block = os.urandom(16 << 20)
    with open(path, "wb") as fh:
        remaining = size_mib << 20
        while remaining:
            n = min(remaining, len(block))
            fh.write(block[:n])
            remaining -= n


def timed(fn, runs: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--chunks", action="store_true", help="also compare chunk sizes")
    a = ap.parse_args()
    tool = shutil.which("openssl")
    if tool is None:
        raise SystemExit("openssl not found")
    with tempfile.TemporaryDirectory(prefix="bench-freeze-hash-") as tmp:
        name = "bound.bin"
        path = os.path.join(tmp, name)
        make_file(path, a.size_mib)
        hash_beneath(tmp, name)  # warm-up: bring the file into the page cache
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        ours_s, (ours_hex, size) = timed(lambda: hash_beneath(tmp, name), a.runs)
        rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

        def openssl() -> str:
            out = subprocess.run(
                [tool, "dgst", "-sha256", "-r", path], check=True, capture_output=True, text=True
            )
            return out.stdout.split()[0]

        theirs_s, theirs_hex = timed(openssl, a.runs)
        assert ours_hex == theirs_hex, (ours_hex, theirs_hex)
        mib = size / (1 << 20)
        print(f"file: {mib:.0f} MiB; median of {a.runs} runs each; digests agree")
        print(f"prereg hash_beneath (chunk {HASH_CHUNK >> 10} KiB): {mib / ours_s:8.1f} MiB/s")
        print(f"openssl dgst -sha256:               {mib / theirs_s:8.1f} MiB/s")
        print(f"ratio of throughputs ours / openssl: {theirs_s / ours_s:.2f}")
        print(f"peak RSS before/after hashing: {rss0 / 1024:.0f} / {rss1 / 1024:.0f} MiB")
        if a.chunks:
            for chunk in (64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20):
                s, _ = timed(lambda chunk=chunk: hash_beneath(tmp, name, chunk=chunk), a.runs)
                print(f"  chunk {chunk >> 10:6d} KiB: {mib / s:8.1f} MiB/s")
    # the temporary folder and the file are gone here


if __name__ == "__main__":
    main()
