"""``score --workers`` and ``score --scheduler``: the observations and the manifest read in
partitions on local worker processes or on a Dask cluster give SCORE.json and SCORE.md byte for
byte as one process writes them, for any number of workers and any partition size; a file
with problems is refused with the same words; bad options are refused before any file is read.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from prereg import partitioned
from prereg.cli import main
from prereg.errors import UserError
from prereg.records import read_jsonl_columns
from tests.diagnose.helpers import AP, compile_example


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(project, items, observations): the answer-position example, its manifest and
    simulated observations (2,560 rows, retries among them)."""
    root = compile_example(tmp_path_factory.mktemp("ap"))
    items = root / "items.jsonl"
    obs = root / "obs.jsonl"
    assert main(["--project", str(root), AP, "items", "--out", str(items), "--quiet"]) == 0
    assert (
        main(
            [
                "--project",
                str(root),
                AP,
                "simulate",
                "--items",
                str(items),
                "--scenario",
                "position-bias",
                "--seed",
                "7",
                "--out",
                str(obs),
                "--quiet",
            ]
        )  # fmt: skip
        == 0
    )
    return root, items, obs


def score(study, out: Path, *extra: str, obs: Path | None = None) -> int:
    root, items, observations = study
    return main(
        ["--project", str(root), AP, "score", "--items", str(items), "--observations",
         str(obs or observations), "--out", str(out), "--quiet", *extra]
    )  # fmt: skip


@pytest.fixture(scope="module")
def one(study, tmp_path_factory) -> tuple[bytes, bytes]:
    out = tmp_path_factory.mktemp("one") / "SCORE.json"
    assert score(study, out) == 0
    return out.read_bytes(), out.with_suffix(".md").read_bytes()


def test_the_inputs_span_many_partitions(study):
    _root, items, obs = study
    parts, _sha, size = partitioned.plan(obs, 8192)
    assert size > 100_000 and len(parts) > 10
    # whole lines, end to end, each after the lines before it
    assert parts[0].offset == 0 and sum(p.length for p in parts) == size
    raw = obs.read_bytes()
    for p in parts:
        assert raw[p.offset + p.length - 1 : p.offset + p.length] == b"\n"
        assert raw[: p.offset].count(b"\n") == p.lines
    assert len(partitioned.plan(items, 8192)[0]) > 5


@pytest.mark.parametrize(
    "extra",
    [
        ("--workers", "2"),
        ("--workers", "2", "--partition-bytes", "8K"),
        ("--workers", "3", "--partition-bytes", "1000"),
        ("--partition-bytes", "1"),  # a line a partition, in this process
    ],
)
def test_worker_processes_write_the_same_bytes(study, one, tmp_path, extra):
    out = tmp_path / "SCORE.json"
    assert score(study, out, *extra) == 0
    assert (out.read_bytes(), out.with_suffix(".md").read_bytes()) == one


def test_a_dask_cluster_of_one_two_and_four_workers_writes_the_same_bytes(
    study, one, tmp_path, monkeypatch
):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,  # worker threads, spoken to over TCP as remote workers are
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster, distributed.Client(cluster) as client:  # fmt: skip
        for workers, size in ((1, "64K"), (2, "16K"), (4, "8K"), (4, "16M")):
            cluster.scale(workers)
            client.wait_for_workers(workers, timeout=60)
            assert len(client.scheduler_info()["workers"]) == workers
            out = tmp_path / f"S{workers}-{size}.json"
            address = cluster.scheduler_address
            assert score(study, out, "--scheduler", address, "--partition-bytes", size) == 0
            assert (out.read_bytes(), out.with_suffix(".md").read_bytes()) == one
        # the same inputs as Parquet files of several row groups, cut between them
        import pyarrow.json as pj
        import pyarrow.parquet as pq

        root, items, obs = study
        tables = []
        for path in (items, obs):
            tables.append(tmp_path / (path.stem + ".parquet"))
            pq.write_table(pj.read_json(path), tables[-1], row_group_size=256)
        parquet = (root, *tables)
        want = tmp_path / "P1.json"
        assert score(parquet, want) == 0
        from tests.engines.factorial.test_score_bucketed import Spy

        spy = Spy(monkeypatch)
        for workers, size in ((2, "8K"), (4, "16M")):
            cluster.scale(workers)
            client.wait_for_workers(workers, timeout=60)
            out = tmp_path / f"P{workers}-{size}.json"
            address = cluster.scheduler_address
            assert score(parquet, out, "--scheduler", address, "--partition-bytes", size) == 0
            assert out.read_bytes() == want.read_bytes()
            assert out.with_suffix(".md").read_bytes() == want.with_suffix(".md").read_bytes()
        assert spy.reduced == 2  # on the cluster, in buckets


def observation_schema(study) -> Path:
    from prereg.compiler.project import Project
    from prereg.engines.factorial.commands import _contract, _record_class
    from prereg.study import study_context

    module, ctx = study_context(Project(study[0]), AP)
    return _record_class(module, _contract(ctx.config, "observation")).SCHEMA


def _refusal(fn) -> tuple[str, list[str]]:
    with pytest.raises(UserError) as exc:
        fn()
    return exc.value.message, exc.value.problems


def test_problems_in_several_partitions_are_refused_in_the_same_words(study, tmp_path, capsys):
    _root, _items, obs = study
    lines = obs.read_bytes().splitlines(keepends=True)
    bad = tmp_path / "obs.jsonl"
    for at in (3, 700, 701, 1500, len(lines) - 1):
        lines[at] = b'{"itemId": 1}\n' if at % 2 else b"not json\n"
    bad.write_bytes(b"".join(lines))
    schema = observation_schema(study)
    for cap in (50, 2):
        whole = _refusal(lambda cap=cap: read_jsonl_columns(bad, schema, max_problems=cap))
        assert f"{bad}: " in whole[0] and whole[1][0].startswith(f"{bad}:4: ")
        for size in (1, 4096, 1 << 20):
            got = _refusal(
                lambda s=size, c=cap: partitioned.read_jsonl_columns(
                    bad, schema, size=s, max_problems=c
                )
            )
            assert got == whole
    # the command refuses alike and writes nothing
    out = tmp_path / "S.json"
    assert score(study, out, obs=bad) == 2
    err_one = capsys.readouterr().err
    assert score(study, out, "--workers", "2", "--partition-bytes", "4K", obs=bad) == 2
    assert capsys.readouterr().err == err_one and ":701: " in err_one
    assert not out.exists() and not out.with_suffix(".md").exists()


def test_a_file_that_changed_after_the_plan_is_refused(study, tmp_path):
    _root, _items, obs = study
    copy = tmp_path / "obs.jsonl"
    copy.write_bytes(obs.read_bytes())
    parts, _sha, _size = partitioned.plan(copy, 8192)
    raw = bytearray(copy.read_bytes())
    raw[parts[2].offset + 5] ^= 1  # one bit of the third partition
    copy.write_bytes(bytes(raw))
    payload = (str(observation_schema(study)), 50)
    _cols, _shown, _count, error = partitioned.read_part(payload, parts[2])
    assert isinstance(error, UserError)
    assert "changed while it was read" in error.message and str(copy) in error.message
    cols, shown, count, error = partitioned.read_part(payload, parts[1])  # untouched
    assert error is None and (shown, count) == ([], 0) and sum(c[2] for c in cols) > 0


@pytest.mark.parametrize(
    "extra, words",
    [
        (("--workers", "0"), "--workers: must be at least 1"),
        (("--partition-bytes", "0"), "--partition-bytes: '0' is not a size"),
        (("--partition-bytes", "12 parsecs"), "--partition-bytes: '12 parsecs' is not a size"),
        (("--partition-bytes", "2G"), "--partition-bytes: '2G' is more than 1G"),
        (("--partition-bytes", "9" * 30 + "G"), "is more than 1G"),  # was an OverflowError
        (("--scheduler", "not an address"), "--scheduler: 'not an address' is not a scheduler"),
        (("--scheduler", "127.0.0.1:1"), "--scheduler: cannot reach a Dask scheduler"),
    ],
)
def test_bad_options_are_refused_and_nothing_is_written(study, tmp_path, capsys, extra, words):
    out = tmp_path / "S.json"
    assert score(study, out, *extra) == 2
    assert words in capsys.readouterr().err
    assert not out.exists() and not out.with_suffix(".md").exists()


@pytest.mark.parametrize(
    "text, size", [("1", 1), ("64K", 65536), ("3 MiB", 3 << 20), ("1G", 1 << 30)]
)
def test_partition_sizes(text, size):
    assert partitioned.partition_bytes(text) == size
