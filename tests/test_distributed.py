"""spectralink on a Dask cluster: a Parquet table read in partitions, pairs named by ID,
every method by its route (landmark methods on every row, the others on a sample), the
labels written as a Parquet folder whole or not at all, and the command line on a
``LocalCluster`` (worker processes) and on a scheduler started as its own process.

The data are well-separated blobs, so each assertion on a partition (identical to the
in-core one, or error 0) holds whatever the floating-point rounding of the machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest

from _cli_helpers import assert_one_line_error, run
from spectralink import SCACS, Constraints, get_method
from spectralink.catalog import describe
from spectralink.metrics import adjusted_rand_score, clustering_error
from spectralink.registry import table

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")
pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")

from spectralink.distributed import (  # noqa: E402
    RowPairs,
    connect,
    fit_at_scale,
    gather_rows,
    parse_address,
    read_dask_table,
    read_row_pairs,
    route_of,
    sample_rows,
    write_labels,
)

N, D, FILES = 2400, 4, 4


def _blobs(k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=10, size=(k, D))
    y = np.repeat(np.arange(k), N // k)
    rng.shuffle(y)
    return (centers[y] + rng.normal(size=(N, D))).astype(np.float32), y


def _write_table(folder, X: np.ndarray, y: np.ndarray, n_pairs: int = 60, seed: int = 1):
    """4 Parquet files with an ``id`` column, the pairs by ID, the classes by ID."""
    folder.mkdir()
    ids = np.array([f"p{t:05d}" for t in range(len(X))])
    for f, part in enumerate(np.array_split(np.arange(len(X)), FILES)):
        frame = pd.DataFrame(X[part], columns=[f"x{j}" for j in range(X.shape[1])])
        frame.insert(0, "id", ids[part])
        frame.to_parquet(folder / f"part.{f}.parquet", index=False)
    rng = np.random.default_rng(seed)
    ij = rng.choice(len(X), size=(n_pairs, 2), replace=False)
    kind = np.where(y[ij[:, 0]] == y[ij[:, 1]], "ml", "cl")
    pairs = folder.parent / f"{folder.name}_pairs.csv"
    pd.DataFrame({"i": ids[ij[:, 0]], "j": ids[ij[:, 1]], "kind": kind}).to_csv(pairs, index=False)
    truth = folder.parent / f"{folder.name}_truth.csv"
    pd.DataFrame({"id": ids, "label": y}).to_csv(truth, index=False)
    return ids, ij, kind, pairs, truth


@pytest.fixture(scope="module")
def client():
    with connect("local:2", memory_limit="1GB") as c:
        yield c


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    """Two blobs (every method, SCLC and COSC's binary case included, can take k=2)."""
    X, y = _blobs(2)
    folder = tmp_path_factory.mktemp("two") / "table"
    ids, ij, kind, pairs, truth = _write_table(folder, X, y)
    return {"X": X, "y": y, "ids": ids, "ij": ij, "kind": kind, "folder": folder,
            "pairs": pairs, "truth": truth}  # fmt: skip


@pytest.fixture(scope="module")
def four(tmp_path_factory):
    X, y = _blobs(4, seed=3)
    folder = tmp_path_factory.mktemp("four") / "table"
    ids, ij, kind, pairs, truth = _write_table(folder, X, y, n_pairs=80)
    return {"X": X, "y": y, "ids": ids, "ij": ij, "kind": kind, "folder": folder,
            "pairs": pairs, "truth": truth}  # fmt: skip


def _labels_by_id(path) -> pd.Series:
    return pd.read_parquet(path).set_index("id")["label"]


# ------------------------------------------------------------------ pure pieces
def test_parse_address():
    assert parse_address("local") == ("local", None)
    assert parse_address("local:3") == ("local", 3)
    assert parse_address("tcp://10.0.0.1:8786") == ("address", None)
    with pytest.raises(ValueError, match="at least one worker"):
        parse_address("local:0")


def test_sample_rows_constrained_first_then_distinct_uniform_draw():
    constrained = np.array([7, 3, 90])
    rows = sample_rows(100, constrained, 50, random_state=0)
    np.testing.assert_array_equal(rows[:3], constrained)
    assert len(np.unique(rows)) == 53 and rows.max() < 100
    np.testing.assert_array_equal(rows, sample_rows(100, constrained, 50, random_state=0))
    # asking for more than are left takes every row once
    every = sample_rows(100, constrained, 10**6, random_state=0)
    np.testing.assert_array_equal(np.sort(every), np.arange(100))


def test_gather_rows_keeps_the_order_asked(client):
    import dask.array as da

    X = np.arange(200.0).reshape(100, 2)
    rows = np.array([99, 0, 42, 41, 7])
    np.testing.assert_array_equal(gather_rows(da.from_array(X, chunks=(13, 2)), rows), X[rows])


def test_row_pairs_by_id_and_on_all_rows(client, four):
    tab = read_dask_table(four["folder"], id_column="id")
    assert tab.n_rows == N and tab.n_partitions == FILES
    assert tab.features == ["x0", "x1", "x2", "x3"]
    pairs = read_row_pairs(tab, [four["pairs"]])
    whole = pairs.on_all(N)
    ij, ml = four["ij"], four["kind"] == "ml"
    expected = Constraints(ij[ml], ij[~ml], n_samples=N)
    assert {tuple(p) for p in whole.must_link} == {tuple(sorted(p)) for p in expected.must_link}
    assert {tuple(p) for p in whole.cannot_link} == {tuple(sorted(p)) for p in expected.cannot_link}
    np.testing.assert_array_equal(pairs.rows, np.unique(ij))


def test_an_id_no_row_has_is_named(client, four, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("i,j,kind\np00001,nobody,ml\n")
    tab = read_dask_table(four["folder"], id_column="id")
    with pytest.raises(ValueError, match="no row has the ID 'nobody'"):
        read_row_pairs(tab, [bad])


def test_an_id_named_twice_in_the_table_is_an_error(client, tmp_path):
    folder = tmp_path / "dup"
    folder.mkdir()
    for f in range(2):
        pd.DataFrame({"id": ["a", "b"], "x": [0.0 + f, 1.0]}).to_parquet(folder / f"{f}.parquet")
    pairs = tmp_path / "p.csv"
    pairs.write_text("a,b,ml\n")
    tab = read_dask_table(folder, id_column="id")
    with pytest.raises(ValueError, match="'a' names more than one row"):
        read_row_pairs(tab, [pairs])


# ------------------------------------------------------------------ every method's route
@pytest.mark.parametrize("name", [m for m in table() if m != "auto"])
def test_every_method_by_its_route_labels_every_row(client, two, name, tmp_path):
    tab = read_dask_table(two["folder"], id_column="id")
    pairs = read_row_pairs(tab, [two["pairs"]])
    est = get_method(name)(n_clusters=2, random_state=0)
    fitted = fit_at_scale(est, tab.features_array(), pairs, sample_size=400, random_state=0)
    assert route_of(est) == ("whole" if describe(name).dask else "sample")
    write_labels(tab, fitted, tmp_path / "labels")
    got = _labels_by_id(tmp_path / "labels")
    assert len(got) == N and set(got.index) == set(two["ids"])
    assert clustering_error(two["y"], got.loc[two["ids"]].to_numpy()) <= 0.05


def test_scacs_whole_route_gives_the_in_core_labels(client, four, tmp_path):
    tab = read_dask_table(four["folder"], id_column="id")
    pairs = read_row_pairs(tab, [four["pairs"]])
    est = SCACS(4, n_landmarks=100, random_state=0)
    fitted = fit_at_scale(est, tab.features_array(block_rows=500), pairs)
    write_labels(tab, fitted, tmp_path / "labels")
    in_core = SCACS(4, n_landmarks=100, random_state=0).fit(four["X"], constraints=pairs.on_all(N))
    got = _labels_by_id(tmp_path / "labels").loc[four["ids"]].to_numpy()
    assert adjusted_rand_score(in_core.labels_, got) == 1.0
    assert "labels_" not in vars(fitted.model_)  # nothing per row goes to the workers


def test_sampled_fit_describes_what_was_sampled(client, four):
    tab = read_dask_table(four["folder"], id_column="id")
    pairs = read_row_pairs(tab, [four["pairs"]])
    est = get_method("ccskl")(n_clusters=4, random_state=0)
    fitted = fit_at_scale(est, tab.features_array(), pairs, sample_size=300, random_state=0)
    n_named = len(pairs.rows)
    assert len(fitted.sample_rows_) == n_named + 300
    assert f"{n_named + 300:,} of {N:,} rows ({n_named:,} named by pairs" in fitted.describe()


def test_no_pairs_fit_by_sample(client, four, tmp_path):
    tab = read_dask_table(four["folder"])
    est = get_method("ncut")(n_clusters=4, random_state=0)
    fitted = fit_at_scale(est, tab.features_array(), None, sample_size=300, random_state=0)
    write_labels(tab, fitted, tmp_path / "labels")
    out = pd.read_parquet(tmp_path / "labels")
    assert list(out.columns) == ["row", "label"]
    np.testing.assert_array_equal(np.sort(out["row"]), np.arange(N))


def test_row_pairs_without_ids_are_row_positions(client, four, tmp_path):
    tab = read_dask_table(four["folder"])
    f = tmp_path / "p.csv"
    f.write_text("i,j,kind\n5,2000,cl\n5,6,ml\n")
    pairs = read_row_pairs(tab, [f])
    assert isinstance(pairs, RowPairs)
    np.testing.assert_array_equal(pairs.rows, [5, 6, 2000])
    assert len(pairs.on_all(N).cannot_link) == 1


# ------------------------------------------------------------------ the command line
def _cli(capsys, client, data, method, out, *extra):
    return run(
        capsys, "cluster", data["folder"], "--dask", client.scheduler.address, "-k", "4",
        "--method", method, "--id-column", "id", "-c", data["pairs"], "-y", data["truth"],
        "-o", out, "--no-progress", *extra,
    )  # fmt: skip


@pytest.mark.parametrize("method", ["scacs", "ccskl", "auto"])
def test_cli_writes_a_label_for_every_id_and_scores_them(capsys, client, four, tmp_path, method):
    code, out, err = _cli(capsys, client, four, method, tmp_path / "labels", "--sample-size", 500)
    assert code == 0, err
    got = _labels_by_id(tmp_path / "labels")
    assert set(got.index) == set(four["ids"]) and len(got) == N
    error = clustering_error(four["y"], got.loc[four["ids"]].to_numpy())
    assert error <= 0.05
    assert f"error      {error:.4f}" in out
    assert ("route: whole" if method == "scacs" else "route: sample") in out
    assert len(list((tmp_path / "labels").glob("*.parquet"))) == FILES


def test_cli_reads_a_csv_in_row_blocks(capsys, client, four, tmp_path):
    table = tmp_path / "table.csv"
    pd.read_parquet(four["folder"]).to_csv(table, index=False)
    code, _, err = run(
        capsys, "cluster", table, "--dask", client.scheduler.address, "-k", "4", "--method",
        "ccskl", "--id-column", "id", "-c", four["pairs"], "-o", tmp_path / "labels",
        "--sample-size", 500,
    )  # fmt: skip
    assert code == 0, err
    got = _labels_by_id(tmp_path / "labels")
    assert clustering_error(four["y"], got.loc[four["ids"]].to_numpy()) <= 0.05


def test_cli_failure_leaves_no_labels_and_keeps_the_old_ones(capsys, client, tmp_path):
    X, y = _blobs(2)
    X[-1, 0] = np.nan  # in the last partition: found only when labelling it
    folder = tmp_path / "table"
    _, _, _, pairs, _ = _write_table(folder, X, y)
    out = tmp_path / "labels"
    out.mkdir()
    (out / "old.parquet").write_bytes(b"earlier labels")
    code, _, err = run(
        capsys, "cluster", folder, "--dask", client.scheduler.address, "-k", "2",
        "--method", "ccskl", "--id-column", "id", "-c", pairs, "-o", out, "--scale", "none",
    )  # fmt: skip
    assert_one_line_error(code, err, "NaN")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labels", "table", "table_pairs.csv",
                                                          "table_truth.csv"]  # fmt: skip
    assert (out / "old.parquet").read_bytes() == b"earlier labels"


@pytest.mark.parametrize(
    "extra, needle",
    [
        (("--plot", "x.png"), "--plot needs the whole table"),
        (("--missing", "impute"), "--missing"),
        (("--scale", "robust"), "quantiles"),
    ],
)
def test_cli_options_that_need_memory_are_refused(capsys, client, four, tmp_path, extra, needle):
    code, _, err = _cli(capsys, client, four, "ncut", tmp_path / "labels", *extra)
    assert_one_line_error(code, err, needle)
    assert not (tmp_path / "labels").exists()


@pytest.fixture
def own_scheduler(tmp_path):
    """A scheduler and two workers (no nanny: a killed worker stays dead), each its own
    process; yields ``(address, worker processes)``."""
    import json

    scheduler_file = tmp_path / "scheduler.json"
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_scheduler",
                "--no-dashboard",
                "--port",
                "0",
                "--scheduler-file",
                str(scheduler_file),
            ],
            **quiet,
        )  # fmt: skip
    ]
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        address = json.loads(scheduler_file.read_text())["address"]
        workers = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "distributed.cli.dask_worker",
                    address,
                    "--nthreads",
                    "1",
                    "--no-dashboard",
                    "--no-nanny",
                ],
                **quiet,
            )  # fmt: skip
            for _ in range(2)
        ]
        procs += workers
        from distributed import Client

        with Client(address, timeout=60) as c:
            c.wait_for_workers(2, timeout=60)
        yield address, workers
    finally:
        for p in reversed(procs):
            p.kill()
            p.wait(timeout=30)


def test_cli_on_a_scheduler_started_as_its_own_process(capsys, four, tmp_path, own_scheduler):
    """The address a user gives: the command connects and leaves the cluster running."""
    address, workers = own_scheduler
    code, out, err = run(
        capsys, "cluster", four["folder"], "--dask", address, "-k", "4", "--method", "scacs",
        "--id-column", "id", "-c", four["pairs"], "-o", tmp_path / "labels",
    )  # fmt: skip
    assert code == 0, err
    assert "2 worker(s)" in err
    assert len(_labels_by_id(tmp_path / "labels")) == N
    assert all(w.poll() is None for w in workers)


def test_a_worker_killed_mid_run_completes_or_fails_in_one_line(tmp_path, own_scheduler):
    """Either outcome is allowed (Dask reruns a lost worker's tasks on the other one, or
    gives up); a partial labels folder is not. When the kill lands depends on the machine's
    speed, so the test checks that property, not which outcome."""
    address, workers = own_scheduler
    X, y = _blobs(4)
    X = np.tile(X, (40, 1))  # 96,000 rows: a few seconds of work
    folder = tmp_path / "big"
    _, _, _, pairs, _ = _write_table(folder, X, np.tile(y, 40))
    out = tmp_path / "labels"
    cmd = [sys.executable, "-m", "spectralink", "cluster", str(folder), "--dask", address,
           "-k", "4", "--method", "scacs", "--id-column", "id", "-c", str(pairs),
           "-o", str(out)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if "worker(s) at" in line:
            break
    time.sleep(1.0)
    workers[0].kill()
    stdout, rest = proc.communicate(timeout=600)
    err = "".join(seen) + rest
    if proc.returncode == 0:
        assert len(_labels_by_id(out)) == len(X), err
    else:
        errors = [ln for ln in err.splitlines() if not ln.startswith("spectralink: note:")]
        assert len(errors) == 1 and errors[0].startswith("spectralink: error:"), err
        assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_cli_says_when_no_scheduler_answers(capsys, four, tmp_path):
    code, _, err = run(
        capsys, "cluster", four["folder"], "--dask", "tcp://127.0.0.1:1", "-k", "4",
        "-o", tmp_path / "labels",
    )  # fmt: skip
    assert_one_line_error(code, err, "no Dask scheduler answered")
