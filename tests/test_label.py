"""The labelling page's library side, without a browser: the query session (the loop one
answer at a time, with undo), the answers file, the HTTP API and the ``label`` command's
errors. The page itself is driven in a real browser in ``test_label_browser.py``."""

from __future__ import annotations

import signal
import subprocess
import sys

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from spectralink import CCSKL, Constraints
from spectralink.active import PairSelector, QuerySession, learn, query_loop
from spectralink.cli import main
from spectralink.constraints import read_constraints_csv
from spectralink.label import (
    TOKEN_HEADER,
    AnswerLog,
    ItemView,
    LabelSession,
    create_app,
    parse_image_shape,
)

flask = pytest.importorskip("flask", reason="the [label] extra (Flask) is not installed")


@pytest.fixture
def blobs():
    X, y = make_blobs(n_samples=150, centers=4, cluster_std=1.5, random_state=0)
    return X, y


def _drive(session: QuerySession, y, n: int) -> list:
    for _ in range(n):
        p = session.pending()
        if p is None:
            break
        session.answer(bool(y[p[0]] == y[p[1]]))
    return list(session.report.asked)


# ---------------------------------------------------------------------- the session
@pytest.mark.parametrize("guided", [False, True])
def test_session_asks_what_learn_asks(blobs, guided):
    # the same pairs in the same order as learn (the partition guiding the strategy is
    # refitted at the same points), and the same clustering at the end
    X, y = blobs
    est = CCSKL(4, random_state=0)
    result = learn(est, X, y, 23, batch_size=5, strategy="spectral", random_state=3)
    selector = PairSelector(4, strategy="spectral", random_state=3).fit(X)
    guide = CCSKL(4, random_state=0) if guided else None
    session = QuerySession(selector, X, 23, estimator=guide, batch_size=5)
    asked = _drive(session, y, 100)
    if guided:
        assert asked == result.report.asked
        final = CCSKL(4, random_state=0).fit(X, constraints=session.constraints)
        np.testing.assert_array_equal(final.labels_, result.estimator.labels_)
    else:  # query_loop without an estimator: the selector's own partition guides
        sel = PairSelector(4, strategy="spectral", random_state=3).fit(X)
        _, report = query_loop(sel, X, y, 23, batch_size=5)
        assert asked == report.asked
    assert session.pending() is None and session.report.stopped == "done"
    assert len(asked) == 23


def test_undo_within_and_across_batches_replays_the_same_loop(blobs):
    # taking answers back (across the end of a batch, whose refit and next draw are undone
    # with it) and giving them again leads to exactly the loop without the detour
    X, y = blobs

    def session():
        sel = PairSelector(4, strategy="spectral", random_state=1).fit(X)
        return QuerySession(sel, X, 20, estimator=CCSKL(4, random_state=0), batch_size=5)

    straight = _drive(session(), y, 20)
    s = session()
    _drive(s, y, 7)
    taken = [s.undo() for _ in range(4)]  # 7 -> 3: back across the end of batch 1
    assert taken == [straight[t] for t in (6, 5, 4, 3)]
    assert s.pending() == straight[3] and s.n_asked == 3
    p = s.pending()
    s.answer(not bool(y[p[0]] == y[p[1]]))  # a wrong answer, then taken back
    assert s.undo() == p
    assert _drive(s, y, 17) == straight
    assert s.undo() is not None and s.n_asked == 19


def test_refits_fitted_ahead_are_the_refits_of_the_loop(blobs):
    # the refit an answer would start, fitted before the answer comes (for both answers),
    # is taken by the loop when that answer comes: the same pairs as without it
    X, y = blobs

    def session():
        sel = PairSelector(4, strategy="spectral", random_state=4).fit(X)
        return QuerySession(sel, X, 18, estimator=CCSKL(4, random_state=0), batch_size=4)

    straight = _drive(session(), y, 18)
    s = session()
    taken = 0
    while (p := s.pending()) is not None:
        jobs = {a: s.fit_ahead(a) for a in (True, False)}
        assert (jobs[True] is not None) == s.closes_with_refit()
        for job in jobs.values():
            if job is not None:
                job.run(X)
        same = bool(y[p[0]] == y[p[1]])
        before = s.guide
        s.answer(same)
        taken += jobs[same] is not None and s.guide is not before
    assert s.report.asked == straight
    assert taken == 4  # after batches 1-4; none after the last (the budget is spent)


def test_undo_with_nothing_to_take_back(blobs):
    X, _ = blobs
    s = QuerySession(PairSelector(4, random_state=0).fit(X), X, 5, batch_size=5)
    assert s.undo() is None and s.n_asked == 0


# ---------------------------------------------------------------------- the answers file
def test_answer_log_round_trip_and_cluster_reads_it(tmp_path):
    ids = [f"r{t}" for t in range(6)]
    log = AnswerLog(tmp_path / "a.csv", 6, ids)
    assert log.read() == []
    for rec in [(0, 1, True), (2, 3, False), (4, 5, None), (1, 2, False)]:
        log.append(*rec)
    assert log.read() == [(0, 1, True), (2, 3, False), (4, 5, None), (1, 2, False)]
    assert (tmp_path / "a.csv").read_text().splitlines()[:3] == ["i,j,kind", "r0,r1,ml", "r2,r3,cl"]
    assert log.drop_last() == (1, 2, False)
    assert log.read()[-1] == (4, 5, None)
    cons = read_constraints_csv(tmp_path / "a.csv", 6, skip_unanswered=True, ids=ids)
    assert cons.n_must_link == 1 and cons.n_cannot_link == 1 and cons.n_unanswered == 1


def test_answer_log_names_a_bad_line(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("i,j,kind\n0,1,ml\n0,9,maybe\n")
    with pytest.raises(ValueError, match=r"a\.csv:3: expected 'i,j,kind'"):
        AnswerLog(path, 5).read()
    path.write_text("i,j,kind\n0,7,ml\n")
    with pytest.raises(ValueError, match=r"a\.csv:2: row 7 is out of range"):
        AnswerLog(path, 5).read()


def test_item_views(blobs):
    X = np.arange(12.0).reshape(3, 4)
    pix = ItemView(X, image_shape=(2, 2)).pair(0, 1)
    assert pix["kind"] == "pixels" and pix["items"][1]["pixels"]["values"] == [4, 5, 6, 7]
    vals = ItemView(np.array([[0.0, 5.0, 1.0], [0.0, 1.0, 1.2]]), names=["a", "b", "c"])
    table = vals.pair(0, 1)["values"]
    assert [r["name"] for r in table] == ["a", "b", "c"]
    assert [r["differs"] for r in table] == [False, True, True]  # the 3 most, a equal
    with pytest.raises(ValueError, match="holds 9 pixels, but the rows have 4"):
        ItemView(X, image_shape=(3, 3))
    assert parse_image_shape("16x16") == (16, 16)
    with pytest.raises(ValueError, match="must look like HxW"):
        parse_image_shape("16")


# ---------------------------------------------------------------------- the HTTP API
def _app(
    tmp_path, X, *, known=None, n_queries=None, paths=None, estimator=None, processes=False,
    ids=None,
):  # fmt: skip
    sel = PairSelector(4, random_state=0).fit(X)
    log = AnswerLog(tmp_path / "answers.csv", len(X), ids)
    session = LabelSession(
        X, sel, log, ItemView(X, image_paths=paths, ids=ids), constraints=known,
        n_queries=n_queries,
        estimator=estimator, preview=CCSKL(4, random_state=0), batch_size=5,
        processes=processes,
    )  # fmt: skip
    app = create_app(session, "secret", port=5555)
    return session, app.test_client()


H = {TOKEN_HEADER: "secret"}
HOST = {"base_url": "http://127.0.0.1:5555"}


def test_api_needs_the_token_and_our_host(tmp_path, blobs):
    X, _ = blobs
    _, client = _app(tmp_path, X)
    assert client.get("/api/state", **HOST).status_code == 403
    assert client.get("/api/state", headers={TOKEN_HEADER: "wrong"}, **HOST).status_code == 403
    assert client.get("/api/state", headers=H, base_url="http://evil.example").status_code == 403
    assert client.get("/api/state", headers=H, **HOST).status_code == 200
    page = client.get("/?token=secret", **HOST)
    assert page.status_code == 200 and b"spectralink label" in page.data
    assert client.get("/", **HOST).status_code == 403


def test_api_answers_are_on_disk_at_once_and_undo(tmp_path, blobs):
    X, y = blobs
    session, client = _app(tmp_path, X)
    path = tmp_path / "answers.csv"
    for t in range(7):
        state = client.get("/api/state", headers=H, **HOST).get_json()
        i, j = (it["index"] for it in state["pending"]["items"])
        kind = "skip" if t == 2 else ("same" if y[i] == y[j] else "different")
        r = client.post("/api/answer", json={"pair": [i, j], "answer": kind}, headers=H, **HOST)
        assert r.status_code == 200 and r.get_json()["n_answered"] == t + 1
        rows = path.read_text().splitlines()
        assert len(rows) == t + 2 and rows[-1].startswith(f"{i},{j},")
    assert rows[3].endswith(",")  # the skip: an empty kind
    last = rows[-1].split(",")[:2]
    r = client.post("/api/undo", headers=H, **HOST).get_json()
    assert r["undone"] == last and r["n_answered"] == 6
    assert r["undone_index"] == [int(v) for v in last]
    assert len(path.read_text().splitlines()) == 7
    assert [it["index"] for it in r["pending"]["items"]] == [int(v) for v in last]


def test_undo_names_the_rows_by_their_ids(tmp_path, blobs):
    X, _ = blobs
    ids = [f"row-{t}" for t in range(len(X))]
    session, client = _app(tmp_path, X, ids=ids)
    state = client.get("/api/state", headers=H, **HOST).get_json()
    i, j = (it["index"] for it in state["pending"]["items"])
    client.post("/api/answer", json={"pair": [i, j], "answer": "same"}, headers=H, **HOST)
    r = client.post("/api/undo", headers=H, **HOST).get_json()
    assert r["undone"] == [ids[i], ids[j]] and r["undone_index"] == [i, j]


def test_api_refuses_a_stale_or_malformed_answer(tmp_path, blobs):
    X, _ = blobs
    _, client = _app(tmp_path, X)
    state = client.get("/api/state", headers=H, **HOST).get_json()
    i, j = (it["index"] for it in state["pending"]["items"])
    other = [i, (j + 1) % len(X) if (j + 1) % len(X) != i else (j + 2) % len(X)]
    r = client.post("/api/answer", json={"pair": other, "answer": "same"}, headers=H, **HOST)
    assert r.status_code == 409 and "not the pending question" in r.get_json()["error"]
    for body in ({"pair": [i, j], "answer": "maybe"}, {"pair": [i, 10**6], "answer": "same"}, {}):
        assert client.post("/api/answer", json=body, headers=H, **HOST).status_code == 400
    assert not (tmp_path / "answers.csv").exists()


def test_api_serves_only_the_image_column(tmp_path, blobs):
    X, _ = blobs
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 16
    paths = []
    for t in range(len(X)):
        paths.append(tmp_path / f"img{t}.png")
        if t < 2:
            paths[-1].write_bytes(png)
    (tmp_path / "secret.txt").write_text("not an image")
    _, client = _app(tmp_path, X, paths=paths)
    assert client.get("/api/image/1", headers=H, **HOST).data == png
    assert client.get("/api/image/1?token=secret", **HOST).status_code == 200
    assert client.get("/api/image/5", headers=H, **HOST).status_code == 404  # no such file
    assert client.get(f"/api/image/{len(X)}", headers=H, **HOST).status_code == 404
    assert client.get("/api/image/-1", headers=H, **HOST).status_code == 404
    assert client.get("/secret.txt", headers=H, **HOST).status_code == 404


@pytest.mark.parametrize("processes", [False, True])
def test_resume_asks_the_next_question_of_the_same_loop(tmp_path, blobs, processes):
    # the refits ahead run in a worker process or a thread; the loop is the same
    X, y = blobs
    session, client = _app(tmp_path, X, estimator=CCSKL(4, random_state=0), processes=processes)
    for _ in range(8):
        p = session.state()["pending"]["items"]
        i, j = p[0]["index"], p[1]["index"]
        session.answer((i, j), bool(y[i] == y[j]))
    expected = session.state()["pending"]
    session.close()
    straight = _drive(
        QuerySession(
            PairSelector(4, random_state=0).fit(X), X, None, estimator=CCSKL(4, random_state=0),
            batch_size=5,
        ),
        y, 8,
    )  # fmt: skip
    assert [tuple(r[:2]) for r in AnswerLog(tmp_path / "answers.csv", len(X)).read()] == straight
    again, _ = _app(tmp_path, X, estimator=CCSKL(4, random_state=0))
    state = again.state()
    assert state["pending"] == expected and state["n_answered"] == 8
    assert "resumed after 8 answer(s)" in state["notes"][0]
    assert state["can_undo"]


def test_answers_of_another_loop_become_known_pairs(tmp_path, blobs):
    X, y = blobs
    log = tmp_path / "answers.csv"
    log.write_text("i,j,kind\n0,1,cl\n2,3,ml\n")
    session, _ = _app(tmp_path, X)
    state = session.state()
    assert "were not asked in this order" in state["notes"][0]
    assert state["n_before"] == 2 and state["n_answered"] == 0 and not state["can_undo"]
    assert len(session.constraints()) == 2
    assert session.undo() is None and len(log.read_text().splitlines()) == 3


def test_preview_is_refitted_on_the_answers(tmp_path, blobs):
    X, y = blobs
    session, client = _app(tmp_path, X, processes=True)
    for _ in range(3):
        p = session.state()["pending"]["items"]
        session.answer((p[0]["index"], p[1]["index"]), None if _ == 1 else True)
    session.refit_preview()
    pv = client.get("/api/preview", headers=H, **HOST).get_json()
    layout = client.get("/api/layout", headers=H, **HOST).get_json()
    assert pv["version"] == 1 and pv["n_answers"] == 2 and len(pv["pairs"]) == 2
    assert len(pv["labels"]) == len(layout["xy"]) == len(X)
    assert set(pv["labels"]) <= set(range(4))
    session.close()


# ---------------------------------------------------------------------- the command
def test_label_without_flask_names_the_extra(monkeypatch, tmp_path, capsys, blobs):
    X, _ = blobs
    np.save(tmp_path / "X.npy", X)
    monkeypatch.setitem(sys.modules, "flask", None)
    code = main(["label", str(tmp_path / "X.npy"), "-k", "4", "-o", str(tmp_path / "a.csv")])
    err = capsys.readouterr().err
    assert code == 1 and 'pip install "spectralink[label]"' in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--image-shape", "3x3"], "holds 9 pixels, but the rows have 2 values"),
        (["--n-pairs", "0"], "--n-pairs must be >= 1"),
        (["--port", "70000"], "--port must be in 0-65535"),
        (["--text-column", "notes"], "needs a text table"),
        (["-m", "ccskl", "-k", "auto"], "needs --method auto or no method"),
    ],
)
def test_label_refuses_bad_options(tmp_path, capsys, blobs, extra, message):
    X, _ = blobs
    np.save(tmp_path / "X.npy", X)
    code = main(["label", str(tmp_path / "X.npy"), "-o", str(tmp_path / "a.csv"), *extra])
    assert code in (1, 2) and message in capsys.readouterr().err
    assert not (tmp_path / "a.csv").exists()


def test_known_pairs_are_never_asked(tmp_path, blobs):
    X, y = blobs
    known = Constraints.from_labels(y, 30, random_state=0)
    session, _ = _app(tmp_path, X, known=known, n_queries=15)
    asked = set()
    while (p := session.state()["pending"]) is not None:
        i, j = p["items"][0]["index"], p["items"][1]["index"]
        asked.add((min(i, j), max(i, j)))
        session.answer((i, j), bool(y[i] == y[j]))
    assert len(asked) == 15
    assert not asked & {tuple(sorted(p)) for p in known.pairs.tolist()}
    assert session.state()["stopped"] == "done"


# ---------------------------------------------------------------------- the fitter
@pytest.mark.parametrize("processes", [False, True])
def test_fitter_fits_in_order_and_shutdown_resolves_every_future(blobs, processes):
    from concurrent.futures import wait

    from spectralink.label._fitter import Fitter

    X, y = blobs
    cons = Constraints.from_labels(y, 20, random_state=0)
    fitter = Fitter(X, processes=processes).start()
    first = [fitter.submit(CCSKL(4, random_state=s), cons) for s in range(2)]
    for s, future in enumerate(first):  # the same fit as in this process
        here = CCSKL(4, random_state=s).fit(X, constraints=cons).labels_
        np.testing.assert_array_equal(future.result(timeout=120).labels_, here)
    # shut down with fits queued and one running: each ends (a result, cancelled, or
    # failed), so nothing waiting on one of them waits for ever
    late = [fitter.submit(CCSKL(4, random_state=s), cons) for s in range(4)]
    fitter.shutdown()
    done, pending = wait(late, timeout=120)
    assert not pending
    for future in late:
        if not future.cancelled() and future.exception() is not None:
            assert isinstance(future.exception(), RuntimeError)
    with pytest.raises(RuntimeError, match="shut down"):
        fitter.submit(CCSKL(4), cons)


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="no pthread_kill")
def test_ctrl_c_taken_by_another_thread_still_ends_the_command(tmp_path, blobs):
    # The kernel hands a process's SIGINT to any of its threads; when it is not the main
    # thread, Python raises KeyboardInterrupt only when the main thread next wakes. The
    # script sends SIGINT to one of its own threads once the server is up.
    X, _ = blobs
    np.save(tmp_path / "X.npy", X)
    script = tmp_path / "ctrl_c.py"
    script.write_text(
        "import signal, sys, threading, time\n"
        "from spectralink.cli import main\n"
        "def poke():\n"
        "    while not any(t.name == 'spectralink-label' for t in threading.enumerate()):\n"
        "        time.sleep(0.05)\n"
        "    time.sleep(0.5)\n"
        "    signal.pthread_kill(threading.get_ident(), signal.SIGINT)\n"
        "if __name__ == '__main__':\n"
        "    threading.Thread(target=poke, daemon=True).start()\n"
        f"    sys.exit(main(['label', {str(tmp_path / 'X.npy')!r}, '-k', '4', '-o', "
        f"{str(tmp_path / 'a.csv')!r}, '--no-browser']))\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "stopped; 0 answer(s)" in done.stdout


def test_the_map_spreads_a_component_the_embedding_collapses():
    # two components: the embedding is constant on each, so each would be one dot
    from sklearn.datasets import make_blobs
    from sklearn.decomposition import PCA

    from spectralink.label._layout import SPREAD_RADIUS, map_layout

    X, y = make_blobs([123, 77], centers=[[0, 0, 0], [50, 50, 50]], random_state=0)
    F = np.stack([y == 0, y == 1], axis=1).astype(float)
    xy = map_layout(F, X)
    assert xy.shape == (200, 2) and xy.min() >= 0 and xy.max() <= 1
    big = np.unique(np.round(xy[y == 0], 3), axis=0)
    assert len(big) > 100  # the 123 points are drawn apart, not as one dot
    # the components stay apart: each within its own disc
    centre = xy[y == 0].mean(axis=0)
    assert np.linalg.norm(xy[y == 1] - centre, axis=1).min() > 2 * SPREAD_RADIUS
    # an embedding that already spreads the points is drawn as it is
    G = X + np.random.RandomState(0).normal(size=X.shape)
    lone = PCA(2, random_state=0).fit_transform(G)
    lone = (lone - lone.min(axis=0)) / (lone.max(axis=0) - lone.min(axis=0))
    np.testing.assert_allclose(map_layout(G, X), lone)


def test_a_searching_preview_shows_the_guides_partition_without_a_fit(tmp_path, blobs):
    # with --method auto the preview is the partition Auto's checkpoints give the loop: a
    # search per answer would hold the worker the next click's refit waits for
    from spectralink import Auto

    X, y = blobs
    sel = PairSelector(4, random_state=0).fit(X)
    auto = Auto(4, methods=["ccsr"], sigmas=None, random_state=0, verbose=0)
    session = LabelSession(
        X, sel, AnswerLog(tmp_path / "answers.csv", len(X)), ItemView(X), estimator=auto,
        preview=auto, batch_size=5, processes=False,
    )  # fmt: skip
    submitted = []
    real_submit = session.fitter.submit
    session.fitter.submit = lambda est, cons: submitted.append(est) or real_submit(est, cons)
    for _ in range(5):  # one batch: the guide is refitted at its end
        i, j = session.session.pending()
        session.answer((i, j), bool(y[i] == y[j]))
    before = len(submitted)
    session.refit_preview()
    assert len(submitted) == before  # the preview fitted nothing
    np.testing.assert_array_equal(session.preview_state()["labels"], session.session.guide.labels_)
    session.close()


def test_a_search_runs_beside_the_clicks_and_is_adopted(tmp_path, blobs, monkeypatch):
    # the clicks refit Auto's choice only; the search due at a checkpoint runs in a second
    # worker (the preview thread's work) and the loop's guide adopts it when it ends
    import spectralink.active._guide as guide_module
    from spectralink import Auto

    monkeypatch.setattr(guide_module, "SEARCH_MIN_PAIRS", 10)
    X, y = blobs
    sel = PairSelector(4, random_state=0).fit(X)
    auto = Auto(4, methods=["ccsr"], sigmas=None, cv=3, random_state=0, verbose=0)
    session = LabelSession(
        X, sel, AnswerLog(tmp_path / "answers.csv", len(X)), ItemView(X), estimator=auto,
        preview=auto, batch_size=5, processes=False,
    )  # fmt: skip
    for _ in range(10):  # two batches: the search is due at the end of the second
        i, j = session.session.pending()
        session.answer((i, j), bool(y[i] == y[j]))
    guide = session.session.guide
    assert guide.defer and guide.searches == 0 and guide.search_due == 10
    session.refit_preview()  # the search, in the second worker
    guide = session.session.guide
    assert guide.searches == 1 and guide.searched_on == 10 and guide.search_due is None
    assert guide.estimator.search_ is not None
    i, j = session.session.pending()
    session.answer((i, j), bool(y[i] == y[j]))  # the next clicks refit the searched choice
    assert session.session.guide.searched_on == 10
    session.close()
