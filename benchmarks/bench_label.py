"""How fast the labelling page answers a click, measured in a real browser.

``spectralink label`` runs as its own process; headless Chromium (the system's, driven by
Playwright) answers from the true labels by clicking. For each click the page records the
time from the click to the next question drawn (``document.body.dataset.lastMs``); the
script also asks the server, before each click, whether the preview was refitting at that
moment. Two settings on USPS (9,298 16x16 images): the default (the strategy reads NCut of
the selector's graph, the preview CCSKL refits in the background), and ``--method ccskl``
(the strategy reads CCSKL's partition, refitted after every batch of 10 as ``learn`` does;
the server starts that refit, for both answers, when the last question of a batch is drawn,
and the click that ends the batch waits for what is left of it: ``--think`` seconds between
a question drawn and its click play a person looking at the pair); ``--settings auto`` adds
``--method auto``, whose strategy reads Auto's choice (searched at checkpoints). With
``--screenshots DIR`` it writes the documentation's pictures of the page instead (digits
as images, a table of texts).

    python -m benchmarks.bench_label --clicks 40
    python -m benchmarks.bench_label --clicks 40 --think 2
    python -m benchmarks.bench_label --clicks 40 --settings auto
    python -m benchmarks.bench_label --screenshots docs/_static

Results: ``docs/results/label.md``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from spectralink.datasets import load

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TOKEN_JS = "new URLSearchParams(location.search).get('token')"
FITTING_JS = (
    f"fetch('api/preview', {{headers: {{'X-Spectralink-Token': {TOKEN_JS}}}}})"
    ".then(r => r.json()).then(p => p.fitting)"
)


#: how long a command may take to exit after Ctrl-C before the run counts as hung
STOP_WAIT = 30


def start(args: list) -> tuple[subprocess.Popen, str]:
    cmd = [sys.executable, "-m", "spectralink", "label", *map(str, args), "--no-browser"]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True, preexec_fn=_terminal_sigint,
    )  # fmt: skip
    for line in proc.stdout:
        if "answering on " in line:
            # keep draining what the command prints: a pipe nobody reads fills up and
            # blocks the command at its next line (at the latest when it exits)
            threading.Thread(target=proc.stdout.read, daemon=True).start()
            return proc, line.split("answering on ")[1].strip()
    raise SystemExit("the server did not start")


def stop(proc: subprocess.Popen) -> None:
    """Ctrl-C, as a user would; print how long the command took to exit."""
    t0 = time.perf_counter()
    os.killpg(proc.pid, signal.SIGINT)
    proc.wait(STOP_WAIT)
    print(f"the command exited {time.perf_counter() - t0:.1f} s after Ctrl-C", file=sys.stderr)


def _terminal_sigint() -> None:
    """Ctrl-C as in a terminal: started in the background (a non-interactive shell's
    ``cmd &``, as continuous integration runs this), this process ignores SIGINT, the
    command would inherit that and never see the Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def pending(page) -> tuple[int, int] | None:
    text = page.get_attribute("#items", "data-pair")
    return None if not text else tuple(int(v) for v in text.split(","))


def click_through(page, y, clicks: int, think: float = 0.0) -> tuple[list[float], list[bool]]:
    times, fitting = [], []
    for t in range(clicks):
        i, j = pending(page)
        time.sleep(think)  # a person looking at the pair
        fitting.append(bool(page.evaluate(FITTING_JS)))
        page.click("#same" if y[i] == y[j] else "#different")
        page.wait_for_function(f"document.body.dataset.answered === '{t + 1}'", timeout=120_000)
        times.append(float(page.get_attribute("body", "data-last-ms")))
    return times, fitting


SETTINGS = {"default": [], "ccskl": ["-m", "ccskl"], "auto": ["-m", "auto"]}


def measure(browser, clicks: int, think: float, settings: list[str]) -> None:
    X, y = load("usps")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "usps.npy"
        np.save(data, X)
        print(f"a question drawn, then {think:g} s, then the click")
        print("| setting | clicks | median (ms) | 90th pct (ms) | max (ms) | refit running |")
        print("|---|---|---|---|---|---|")
        for setting in settings:
            extra = SETTINGS[setting]
            name = "default" if not extra else f"--method {setting}"
            out = Path(tmp) / f"answers_{setting}.csv"
            proc, url = start([data, "-k", 10, "--image-shape", "16x16", "-o", out, *extra])
            page = browser.new_page()
            page.goto(url)
            page.wait_for_selector("#items canvas.pixels")
            times, fitting = click_through(page, y, clicks, think)
            page.close()
            stop(proc)
            rows = [(name, times, fitting)]
            if extra:  # the click that ends a batch may wait for the strategy's refit
                first = [t for k, t in enumerate(times) if (k + 1) % 10 == 0]
                within = [t for k, t in enumerate(times) if (k + 1) % 10 != 0]
                rows += [(f"{name}, within a batch", within, None)]
                rows += [(f"{name}, end of a batch (refit)", first, None)]
            for label, ts, fit in rows:
                running = "" if fit is None else f"before {sum(fit)} of {len(fit)} clicks"
                print(
                    f"| {label} | {len(ts)} | {np.median(ts):.0f} | "
                    f"{np.percentile(ts, 90):.0f} | {max(ts):.0f} | {running} |",
                    flush=True,
                )


def tickets(path: Path, n: int = 240, seed: int = 0) -> None:
    """A small table of support tickets: an ID, the text, and 8 numeric features (the
    text's TF-IDF reduced by truncated SVD), for the text screenshot."""
    import csv

    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    topics = {
        "printer": ["printer", "paper jam", "toner", "prints blank pages", "tray", "spooler"],
        "password": ["password", "locked out", "reset link", "two-factor code", "login", "SSO"],
        "invoice": ["invoice", "charged twice", "refund", "VAT number", "billing address"],
        "delivery": ["parcel", "tracking number", "courier", "arrived damaged", "late delivery"],
    }
    openers = ["Hi,", "Hello team,", "Urgent:", "Good morning,", "Quick question:"]
    rng = np.random.RandomState(seed)
    texts = []
    for t in range(n):
        words = topics[list(topics)[t % len(topics)]]
        picked = rng.choice(words, 3, replace=False)
        texts.append(
            f"{rng.choice(openers)} my {picked[0]} problem again: {picked[1]}, and now "
            f"{picked[2]}. Can someone help? (ticket {1000 + t})"
        )
    tfidf = TfidfVectorizer().fit_transform(texts)
    F = TruncatedSVD(8, random_state=seed).fit_transform(tfidf)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["ticket", "text", *(f"svd{c}" for c in range(F.shape[1]))])
        for t in range(n):
            w.writerow([f"T{1000 + t}", texts[t], *(f"{v:.5f}" for v in F[t])])


def screenshots(browser, folder: Path) -> None:
    from sklearn.datasets import load_digits

    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        d = load_digits()
        data = Path(tmp) / "digits.npz"
        np.savez(data, X=d.data, y=d.target)
        table = Path(tmp) / "tickets.csv"
        tickets(table)
        topic = np.arange(240) % 4
        for name, args, y in (
            ("label_digits.png", [data, "-k", 10, "--image-shape", "8x8"], d.target),
            (
                "label_text.png",
                [table, "-k", 4, "--text-column", "text", "--id-column", "ticket"],
                topic,
            ),
        ):
            proc, url = start([*args, "-o", Path(tmp) / f"{name}.csv"])
            page = browser.new_page(viewport={"width": 1100, "height": 560})
            page.goto(url)
            page.wait_for_selector("#items .item")
            click_through(page, y, 12)
            time.sleep(3)  # the preview's refit on the 12 answers
            page.evaluate("refreshPreview()")
            time.sleep(0.5)
            page.screenshot(path=str(folder / name))
            page.close()
            stop(proc)
            print(f"wrote {folder / name}")


def main() -> None:
    from playwright.sync_api import sync_playwright

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clicks", type=int, default=40)
    p.add_argument(
        "--think", type=float, default=0.0, help="seconds between a question drawn and its click"
    )
    p.add_argument("--screenshots", metavar="DIR", help="write the documentation's pictures")
    p.add_argument("--settings", default="default,ccskl", help=f"of {', '.join(SETTINGS)}")
    args = p.parse_args()
    exe = os.environ.get("SPECTRALINK_CHROMIUM") or shutil.which("chromium")
    print(f"load average before: {os.getloadavg()}", flush=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=ARGS)
        if args.screenshots:
            screenshots(browser, Path(args.screenshots))
        else:
            measure(browser, args.clicks, args.think, args.settings.split(","))
        browser.close()
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
