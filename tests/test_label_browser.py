"""The labelling page in a real browser: Chromium from the system's packages, driven by
Playwright, against ``spectralink label`` running as a separate process.

A scripted person answers from the true labels of the digits (shown as 8x8 images) by
clicking the page's buttons and pressing its keys. Checked: every answer is in the file
after its click, undo takes the last one back (file and question), a server killed with
SIGKILL loses no answer and a restart resumes at the same question, and the person is
asked exactly the pairs ``learn`` asks with the same strategy, budget and seed, ending at
the same clustering. On USPS the time from a click to the next question drawn is measured
while the preview refits in the background, and printed (``benchmarks/bench_label.py``
reports it; no timing is asserted here).

Continuous integration installs Chromium and requires these tests to run (``.ci/run``,
``SPECTRALINK_REQUIRE_BROWSER=1``); elsewhere they skip when Chromium or Playwright is
missing.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_digits

pytestmark = pytest.mark.slow

#: Chromium's flags for a headless run as root on a machine without a network
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _need(what: str) -> None:
    if os.environ.get("SPECTRALINK_REQUIRE_BROWSER"):
        pytest.fail(f"{what} is missing, and SPECTRALINK_REQUIRE_BROWSER is set")
    pytest.skip(f"{what} is missing")


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _need("Playwright (pip install playwright)")
    exe = os.environ.get("SPECTRALINK_CHROMIUM") or next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None
    )
    if exe is None:
        _need("Chromium (Debian: apt-get install chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def digits(tmp_path):
    """The 1,797 digits as a CSV with an ID column, and their labels."""
    d = load_digits()
    path = tmp_path / "digits.csv"
    header = "id," + ",".join(f"p{t}" for t in range(64))
    rows = [f"d{t:04d}," + ",".join(str(int(v)) for v in row) for t, row in enumerate(d.data)]
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path, d.data, d.target


def _terminal_sigint() -> None:
    """Ctrl-C as in a terminal: a runner that starts the tests in the background (a
    non-interactive shell's ``cmd &``) leaves SIGINT ignored, children inherit that, and
    Python then never turns it into ``KeyboardInterrupt``."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Server:
    """``spectralink label`` in its own process; ``url`` read from its first line. Its
    output is read on to the end (a full pipe would stall it) and kept for the report of
    a stop that does not end it."""

    def __init__(self, *args: object) -> None:
        cmd = [
            sys.executable, "-X", "faulthandler", "-m", "spectralink", "label",
            *map(str, args), "--no-browser",
        ]  # fmt: skip
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True, preexec_fn=_terminal_sigint,
        )  # fmt: skip
        self.lines = []
        for line in self.proc.stdout:
            self.lines.append(line)
            if "answering on " in line:
                self.url = line.split("answering on ")[1].strip()
                self._reader = threading.Thread(target=self._read_on, daemon=True)
                self._reader.start()
                return
        raise AssertionError("the server did not start:\n" + "".join(self.lines))

    def _read_on(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line)

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        """Ctrl-C; when the command has not ended 30 s later, its threads' stacks (SIGABRT,
        written by ``faulthandler``) are the failure's message."""
        if self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGINT)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGABRT)
            self.proc.wait(10)
            self._reader.join(10)
            raise AssertionError(
                "spectralink label did not end within 30 s of Ctrl-C; its output:\n"
                + "".join(self.lines)
            ) from None
        self._reader.join(10)


@pytest.fixture
def servers():
    started: list[Server] = []

    def start(*args):
        started.append(Server(*args))
        return started[-1]

    yield start
    for s in started:
        if s.proc.poll() is None:
            s.kill()


def _pending(page) -> tuple[int, int] | None:
    text = page.get_attribute("#items", "data-pair")
    return None if not text else tuple(int(v) for v in text.split(","))


def _answer(page, y, n_before: int, *, key: bool = False) -> tuple[int, int, bool]:
    i, j = _pending(page)
    same = bool(y[i] == y[j])
    if key:
        page.keyboard.press("y" if same else "n")
    else:
        page.click("#same" if same else "#different")
    page.wait_for_function(f"document.body.dataset.answered === '{n_before + 1}'")
    return i, j, same


def _rows(path: Path) -> list[list[str]]:
    return [r.split(",") for r in path.read_text().splitlines()[1:]] if path.exists() else []


def _open(browser, url: str):
    page = browser.new_page(viewport={"width": 1100, "height": 700})
    page.goto(url)
    page.wait_for_selector("#items canvas.pixels, #items .text, #items table")
    return page


def test_answers_undo_kill_and_resume(browser, servers, digits, tmp_path):
    path, _, y = digits
    out = tmp_path / "answers.csv"
    args = (path, "-k", 10, "--image-shape", "8x8", "--id-column", "id", "-o", out)
    server = servers(*args)
    page = _open(browser, server.url)
    assert page.locator("#items canvas.pixels").count() == 2  # the digits as images
    given = []
    for t in range(12):
        i, j, same = _answer(page, y, t, key=t % 2 == 1)
        given.append((i, j, same))
        rows = _rows(out)  # on disk when the page shows the next question
        assert len(rows) == t + 1
        assert rows[-1] == [f"d{i:04d}", f"d{j:04d}", "ml" if same else "cl"]
    # undo: the last answer leaves the file and its pair is asked again
    page.keyboard.press("u")
    page.wait_for_function("document.body.dataset.answered === '11'")
    assert len(_rows(out)) == 11 and _pending(page) == given[-1][:2]
    page.click("#undo")
    page.wait_for_function("document.body.dataset.answered === '10'")
    assert _pending(page) == given[-2][:2]
    for t in (10, 11):
        assert _answer(page, y, t) == given[t]
    page.click("#skip")
    page.wait_for_function("document.body.dataset.answered === '13'")
    assert _rows(out)[-1][2:] == [""]
    after = _pending(page)
    # SIGKILL: nothing is lost, and a restart asks the same next question
    server.kill()
    assert len(_rows(out)) == 13
    server = servers(*args)
    page = _open(browser, server.url)
    assert page.get_attribute("body", "data-answered") == "13"
    assert _pending(page) == after
    assert "resumed after 13 answer(s)" in page.inner_text("#notes")
    _answer(page, y, 13)
    assert len(_rows(out)) == 14
    server.stop()
    assert server.proc.returncode == 0  # Ctrl-C ends a session normally


def test_scripted_person_reaches_what_learn_reaches(browser, servers, digits, tmp_path):
    from spectralink import CCSKL
    from spectralink.active import learn
    from spectralink.constraints import read_constraints_csv

    path, X, y = digits
    out = tmp_path / "answers.csv"
    server = servers(
        path, "-k", 10, "--image-shape", "8x8", "--scale", "none", "--header", "yes",
        "--drop", "id", "-m", "ccskl", "-s", "auto", "-n", 30, "--batch-size", 10,
        "--random-state", 0, "-o", out,
    )  # fmt: skip
    page = _open(browser, server.url)
    for t in range(30):
        _answer(page, y, t)
    assert _pending(page) is None
    assert "budget is spent" in page.inner_text("#prompt")
    result = learn(CCSKL(10, random_state=0), X, y, 30, batch_size=10, strategy="auto",
                   random_state=0)  # fmt: skip
    asked = [(int(i), int(j)) for i, j, _ in _rows(out)]
    assert asked == [tuple(p) for p in result.report.asked]
    cons = read_constraints_csv(out, len(y))
    labels = CCSKL(10, random_state=0).fit(X.astype(float), constraints=cons).labels_
    np.testing.assert_array_equal(labels, result.estimator.labels_)
    page.wait_for_function("Number(document.body.dataset.previewVersion || 0) >= 1")


def test_usps_clicks_while_the_preview_refits(browser, servers, tmp_path):
    from spectralink.datasets import load

    try:
        X, y = load("usps")
    except Exception as exc:  # the data directory is not set up
        pytest.skip(f"USPS is not available: {exc}")
    data = tmp_path / "usps.npy"
    np.save(data, X)
    out = tmp_path / "answers.csv"
    server = servers(data, "-k", 10, "--image-shape", "16x16", "-o", out)
    page = _open(browser, server.url)
    times, refitting = [], 0
    for t in range(20):
        refitting += page.evaluate("fetch('api/preview', {headers: {'X-Spectralink-Token': "
                                   "new URLSearchParams(location.search).get('token')}})"
                                   ".then(r => r.json()).then(p => p.fitting)")  # fmt: skip
        _answer(page, y, t)
        times.append(float(page.get_attribute("body", "data-last-ms")))
    assert len(_rows(out)) == 20
    print(
        f"\nUSPS, click to next question drawn: median {np.median(times):.0f} ms, "
        f"max {max(times):.0f} ms over 20 clicks; a refit was running before {refitting}"
    )
    time.sleep(0.1)
