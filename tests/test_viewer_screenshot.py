"""The Inspect log viewer, in a real headless Chromium, leads with agreement and shows the dialog.

Runs two offline judges in judge mode, bundles the logs with ``inspect view bundle``,
serves the bundle on 127.0.0.1 and opens it in headless Chromium (driven over the
DevTools protocol on a pipe: no extra Python package). Three screenshots:

- the log list: each judge's headline metric is ``somers_d_all`` (agreement with the
  human ratings over every rated dialog, unscored ones counted against the judge: the
  task's ``headline_metric``), with the coverage and Spearman columns beside it, checked
  against the log headers;
- one judge-mode sample as it opens: the conversation (the sample's input) with its
  ``USER:``/``BOT:`` turns, each on a line of its own, in view without scrolling and no
  rubric text, then the judge's answer and the human rating (the sample's target);
- its Scoring tab: the probability of each level and the weighted score, rounded, in the
  explanation.

A response-mode sample opens on the conversation as chat turns and the reply of the model
under evaluation; a task of one's own puts the empathy metrics in its header.

Skipped where Chromium is not installed. The same code makes the docs' screenshots::

    inspect eval-set inspect_empathy/empathy -T dataset=tests/fixtures/viewer/dialogs.jsonl \\
        --model empathy_baseline/lexicon,empathy_baseline/length --log-dir /tmp/judges
    python tests/test_viewer_screenshot.py /tmp/judges docs/
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import functools
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, BinaryIO

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "viewer" / "dialogs.jsonl"
JUDGES = ["empathy_baseline/lexicon", "empathy_baseline/length"]
SAMPLE_ID = "v-01"
"""The sample shown: a four-turn dialog."""
HIDDEN = ["File Name", "Path", "Task Args", "Tags", "Completed"]
"""Log-list columns hidden to make the list readable at 1400 px."""


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


# --- a static file server that honours Range requests (the viewer reads .eval zips in parts)


class RangeRequestHandler(SimpleHTTPRequestHandler):
    """``http.server`` handler with single-range ``Range: bytes=a-b`` support."""

    _remaining: int | None = None

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def send_head(self) -> Any:
        path = self.translate_path(self.path)
        match = re.fullmatch(r"bytes=(\d*)-(\d*)", (self.headers.get("Range") or "").strip())
        if not match or not os.path.isfile(path) or match.group(0) == "bytes=-":
            return super().send_head()
        size = os.path.getsize(path)
        first, last = match.groups()
        if first == "":
            start, end = max(0, size - int(last)), size - 1
        else:
            start, end = int(first), min(size - 1, int(last)) if last else size - 1
        if start >= size or start > end:
            self.send_error(HTTPStatus.REQUESTED_RANGE_NOT_SATISFIABLE)
            return None
        handle = open(path, "rb")  # closed by the base class
        handle.seek(start)
        self.send_response(HTTPStatus.PARTIAL_CONTENT)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(end - start + 1))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        self._remaining = end - start + 1
        return handle

    def copyfile(self, source: BinaryIO, outputfile: BinaryIO) -> None:  # type: ignore[override]
        if self._remaining is None:
            super().copyfile(source, outputfile)
            return
        remaining, self._remaining = self._remaining, None
        while remaining > 0:
            chunk = source.read(min(65536, remaining))
            if not chunk:
                break
            outputfile.write(chunk)
            remaining -= len(chunk)


@contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 at a free port; yields the base URL."""
    handler = functools.partial(RangeRequestHandler, directory=str(directory))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


# --- headless Chromium over the DevTools protocol on a pipe (fds 3 and 4) ---------------------


def _high_fd(fd: int) -> int:
    """A copy of ``fd`` numbered 10 or above (close-on-exec); closes the original."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class Browser:
    """A headless Chromium page driven with ``--remote-debugging-pipe``."""

    def __init__(self, binary: str, width: int, height: int) -> None:
        to_chrome_r, self._write = os.pipe()
        self._read, from_chrome_w = os.pipe()
        # the ends Chromium gets go above fd 9, so that moving them to 3 and 4 cannot collide
        to_chrome_r, from_chrome_w = (_high_fd(fd) for fd in (to_chrome_r, from_chrome_w))
        self._profile = tempfile.mkdtemp(prefix="chromium-profile-")

        args = [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={self._profile}",
            f"--window-size={width},{height}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        # Chromium reads commands from fd 3 and writes replies to fd 4: a small Python
        # trampoline moves our pipe ends there and then becomes Chromium
        trampoline = (
            "import os, sys\n"
            f"os.dup2({to_chrome_r}, 3); os.dup2({from_chrome_w}, 4)\n"
            f"os.close({to_chrome_r}); os.close({from_chrome_w})\n"
            "os.execv(sys.argv[1], sys.argv[1:])"
        )
        self.process = subprocess.Popen(
            [sys.executable, "-c", trampoline, *args],
            pass_fds=(to_chrome_r, from_chrome_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._id = 0
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        attached = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})
        self._session = attached["sessionId"]
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            page=True,
        )
        self.call("Page.enable", page=True)

    def call(
        self, method: str, params: dict[str, Any] | None = None, page: bool = False
    ) -> dict[str, Any]:
        """Send one DevTools command and wait (at most 60 s) for its reply."""
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if page:
            message["sessionId"] = self._session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + 60
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self._id:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error']}")
                    return reply.get("result", {})
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"chromium did not answer {method}")
            ready, _, _ = select.select([self._read], [], [], left)
            if ready:
                chunk = os.read(self._read, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe")
                self._buffer += chunk

    def evaluate(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            page=True,
        )
        return result.get("result", {}).get("value")

    def text(self) -> str:
        return self.evaluate("document.body ? document.body.innerText : ''") or ""

    def wait_for_text(self, wanted: list[Wanted], seconds: float) -> bool:
        """Poll until the page shows everything in ``wanted`` and is not syncing."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            text = self.text()
            if not missing_from(text, wanted) and "Syncing data" not in text:
                return True
            time.sleep(0.5)
        return False

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", {"format": "png"}, page=True)["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._write)
        os.close(self._read)
        shutil.rmtree(self._profile, ignore_errors=True)


SHOW_COLUMNS = ["coverage", "spearman"]
"""Metric columns added beside the headline (SCORE): coverage, and Spearman on the scored."""

SHOW_COLUMNS_JS = """
(async () => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const button = [...document.querySelectorAll('button')]
    .find((b) => b.textContent.trim() === 'Columns');
  if (!button) return 'no Columns button';
  button.click();
  await sleep(600);
  const show = new Set(%(show)s), hide = new Set(%(hide)s), changed = [];
  for (const label of document.querySelectorAll('label')) {
    const box = label.querySelector('input[type=checkbox]');
    const name = label.textContent.trim();
    if (box && ((show.has(name) && !box.checked) || (hide.has(name) && box.checked))) {
      label.click();
      changed.push(name);
      await sleep(100);
    }
  }
  button.click();
  await sleep(600);
  return changed.join(',');
})()
"""


Wanted = str | tuple[str, ...]
"""A text the page must show: a string anywhere, or one of a few renderings of a number
as a whole line (a table cell)."""


def number_texts(value: float) -> tuple[str, ...]:
    """How the viewer may render a metric: ``0.455``, ``0.25``, ``0.0`` for 0."""
    fixed = f"{value:.3f}"
    trimmed = fixed.rstrip("0")
    return (fixed, trimmed + "0" if trimmed.endswith(".") else trimmed)


def missing_from(text: str, wanted: list[Wanted]) -> list[Wanted]:
    lines = {line.strip() for line in text.splitlines()}
    return [
        w
        for w in wanted
        if (isinstance(w, str) and w not in text)
        or (isinstance(w, tuple) and not lines.intersection(w))
    ]


@dataclass
class JudgeLog:
    """What a judge-mode log's header says: file, judge, headline and mean."""

    file: str
    model: str
    headline: str
    headline_value: float
    spearman: float
    coverage: float
    mean: float


def judge_logs(log_dir: Path) -> list[JudgeLog]:
    """Each log's file, model, resolved headline metric, Spearman and mean score."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    found: list[JudgeLog] = []
    for info in list_eval_logs(str(log_dir)):
        log = read_eval_log(info.name, header_only=True)
        assert log.results is not None and log.results.headline is not None
        metrics = log.results.scores[0].metrics
        found.append(
            JudgeLog(
                Path(info.name).name,
                log.eval.model,
                str(log.results.headline.metric),
                metrics[str(log.results.headline.metric)].value,
                metrics["spearman"].value,
                metrics["coverage"].value,
                metrics["mean"].value,
            )
        )
    return sorted(found, key=lambda j: j.model)


def bundle(log_dir: Path, out: Path) -> None:
    """``inspect view bundle --log-dir LOG_DIR --output-dir OUT``."""
    inspect = Path(sys.executable).with_name("inspect")
    command = str(inspect) if inspect.exists() else shutil.which("inspect")
    assert command, "the inspect CLI is not installed"
    subprocess.run(
        [command, "view", "bundle", "--log-dir", str(log_dir), "--output-dir", str(out)],
        check=True,
        capture_output=True,
        timeout=300,
    )


def show_log_list(browser: Browser, url: str, logs: list[JudgeLog]) -> str:
    """The log list, with the Spearman and QWK columns beside the SCORE (headline) column."""
    models = [j.model for j in logs]
    wanted: list[Wanted] = ["SCORE", "COVERAGE", "SPEARMAN", *models]
    wanted += [number_texts(j.headline_value) for j in logs]
    wanted += [number_texts(j.spearman) for j in logs]
    browser.call("Page.navigate", {"url": url}, page=True)
    # first load: the viewer syncs every log into its local cache
    browser.wait_for_text(models, 90)
    for _ in range(4):
        browser.call("Page.reload", page=True)
        browser.wait_for_text(models, 60)
        browser.evaluate(
            SHOW_COLUMNS_JS % {"show": json.dumps(SHOW_COLUMNS), "hide": json.dumps(HIDDEN)}
        )
        if browser.wait_for_text(wanted, 20):
            break
    text = browser.text()
    missing = missing_from(text, wanted)
    assert not missing, f"log list does not show {missing}:\n{text[:2000]}"
    return text


FIRST_SEEN_JS = """
(() => {
  // where a line of text first appears on the page as loaded, unscrolled
  const wanted = %s;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    if (node.textContent.trim() === wanted) {
      const box = node.parentElement.getBoundingClientRect();
      return {top: box.top, bottom: box.bottom, height: window.innerHeight};
    }
  }
  return null;
})()
"""


def show_sample(
    browser: Browser, url: str, log: JudgeLog, sample_id: str, dialog_lines: list[str]
) -> str:
    """One sample's Messages tab as it opens: the conversation, one turn a line, in view
    without scrolling or expanding anything, then the judge's answer; no rubric text."""
    target = f"{url}#/logs/{log.file}/samples/sample/{sample_id}/1/messages"
    browser.call("Page.navigate", {"url": target}, page=True)
    wanted: list[Wanted] = ["ASSISTANT", "TARGET", "ANSWER"]
    wanted += [(line,) for line in dialog_lines]  # each turn a line of its own
    shown = browser.wait_for_text(wanted, 60)
    time.sleep(2)  # let the message list settle
    text = browser.text()
    missing = missing_from(text, wanted)
    assert shown and not missing, f"sample view does not show {missing}:\n{text[:3000]}"
    for line in (dialog_lines[0], dialog_lines[-1]):
        box = browser.evaluate(FIRST_SEEN_JS % json.dumps(line))
        assert box is not None, f"no line {line!r} on the page"
        assert 0 <= box["top"] and box["bottom"] <= box["height"], (
            f"{line!r} is not in view as the sample opens: {box}"
        )
    assert "Evaluation Form" not in text and "Dialog:" not in text  # the rubric stays out
    return text


def show_scoring(browser: Browser, url: str, log: JudgeLog, sample_id: str) -> str:
    """One sample's Scoring tab: the judge's answer, each level's probability and the
    weighted score rounded for reading, in the explanation."""
    target = f"{url}#/logs/{log.file}/samples/sample/{sample_id}/1/scoring"
    browser.call("Page.navigate", {"url": target}, page=True)
    wanted: list[Wanted] = ["EXPLANATION", "logprobs: "]
    shown = browser.wait_for_text(wanted, 60)
    text = browser.text()
    assert shown, f"scoring tab does not show {missing_from(text, wanted)}:\n{text[:3000]}"
    return text


@contextlib.contextmanager
def viewing(
    log_dir: Path, width: int = 1400, height: int = 900, chromium: str | None = None
) -> Iterator[tuple[Browser, str]]:
    """The logs of ``log_dir`` bundled, served on 127.0.0.1 and open in headless Chromium
    (``chromium``, else the one found): the browser and the site's URL."""
    binary = chromium or CHROMIUM
    assert binary is not None
    with tempfile.TemporaryDirectory(prefix="viewer-bundle-") as folder:
        site = Path(folder) / "site"
        bundle(log_dir, site)
        with serve(site) as url:
            browser = Browser(binary, width, height)
            try:
                yield browser, url
            finally:
                browser.close()


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's header."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def screenshot_viewer(
    log_dir: Path,
    out_dir: Path,
    chromium: str,
    sample_id: str = SAMPLE_ID,
    width: int = 1400,
    height: int = 900,
) -> dict[str, str]:
    """Bundle and serve the logs; screenshot the log list and one sample of the first log.

    Writes ``viewer.png`` (log list) and ``viewer_sample.png`` into ``out_dir``; returns
    the text each page showed. Raises AssertionError when a page misses what it must show.
    """
    from inspect_ai.log import read_eval_log

    logs = judge_logs(log_dir)
    first = read_eval_log(str(log_dir / logs[0].file))
    [sample] = [s for s in first.samples or [] if s.id == sample_id]
    assert isinstance(sample.input, str) and sample.input.startswith("USER: ")
    dialog = sample.input  # the conversation, as USER:/BOT: lines
    out_dir.mkdir(parents=True, exist_ok=True)
    texts: dict[str, str] = {}
    with viewing(log_dir, width, height, chromium) as (browser, url):
        texts["list"] = show_log_list(browser, url, logs)
        browser.screenshot(out_dir / "viewer.png")
        texts["sample"] = show_sample(browser, url, logs[0], sample_id, dialog.splitlines())
        browser.screenshot(out_dir / "viewer_sample.png")
        texts["scoring"] = show_scoring(browser, url, logs[0], sample_id)
        browser.screenshot(out_dir / "viewer_scoring.png")
        browser.call("Page.navigate", {"url": f"{url}#/samples"}, page=True)
        browser.wait_for_text([dialog.splitlines()[0][:40]], 60)
        texts["samples"] = browser.text()
    return texts


CHROMIUM = find_chromium()


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
def test_viewer_leads_with_spearman_and_shows_the_dialog(tmp_path: Path) -> None:
    from inspect_ai import eval_set

    from inspect_empathy.tasks import empathy

    log_dir = tmp_path / "judges"
    success, _ = eval_set(
        empathy(dataset=str(FIXTURE)),
        log_dir=str(log_dir),
        model=JUDGES,
        log_format="eval",
        display="none",
    )
    assert success
    logs = judge_logs(log_dir)
    assert [j.model for j in logs] == sorted(JUDGES)
    assert all(j.headline == "somers_d_all" for j in logs)
    assert CHROMIUM is not None
    texts = screenshot_viewer(log_dir, tmp_path / "shots", CHROMIUM)
    # the SCORE column holds the headline (somers_d_all), not the mean score
    for j in logs:
        assert not set(number_texts(j.mean)) & {x.strip() for x in texts["list"].splitlines()}
    sample = texts["sample"]
    assert "USER: I didn't get the job I interviewed for last week." in sample.splitlines()
    assert any(line.startswith("BOT: Being that close") for line in sample.splitlines())
    # the cross-log Samples view: each row's input is its conversation, not the rubric
    assert "USER: I didn't get the job I interviewed for last week." in texts["samples"]
    assert "You will be given one dialog" not in texts["samples"]
    # the Scoring tab: the probability of each level and the weighted score, rounded
    [explained] = [x for x in texts["scoring"].splitlines() if x.startswith("logprobs: ")]
    assert re.fullmatch(r"logprobs: \d\.\d{3} × \d( \+ \d\.\d{3} × \d)* = \d\.\d{3}", explained)
    for name in ("viewer.png", "viewer_sample.png", "viewer_scoring.png"):
        data = (tmp_path / "shots" / name).read_bytes()
        assert png_size(data) == (1400, 900)
        assert len(data) > 20_000  # a rendered page, not a blank one


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
def test_own_task_with_another_scorer_leads_with_the_empathy_metrics(tmp_path: Path) -> None:
    """A task of one's own with ``includes()`` beside ``empathy_scorer()``: the header shows
    the other scorer alone unless the task's ``headline_metric`` names empathy_scorer (the
    README's snippet); with it the header row is empathy_scorer's mean, stderr, coverage."""
    from inspect_ai import Task, eval
    from inspect_ai.log import HeadlineMetric
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate

    from inspect_empathy import empathy_scorer
    from inspect_empathy.dataset._dataset import load_dialogs

    task = Task(
        dataset=load_dialogs(str(FIXTURE), cut_reply=True),
        solver=generate(),
        scorer=[includes(), empathy_scorer(model=JUDGES[0])],
        headline_metric=HeadlineMetric(scorer="empathy_scorer", metric="mean"),
    )
    [log] = eval(task, model=JUDGES[1], log_dir=str(tmp_path / "own"), display="none")
    assert log.status == "success" and log.results is not None
    mean = log.results.scores[1].metrics["mean"].value
    with viewing(tmp_path / "own") as (browser, url):
        browser.call("Page.navigate", {"url": f"{url}#/logs/{Path(log.location).name}"}, page=True)
        wanted: list[Wanted] = ["empathy_scorer", "coverage", f"{mean:.3f}"]
        shown = browser.wait_for_text(wanted, 60)
        text = browser.text()
        browser.screenshot(tmp_path / "own.png")
    assert shown, f"header does not show {missing_from(text, wanted)}:\n{text[:1500]}"
    assert "accuracy" not in text  # the other scorer is behind "All scoring..."


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
def test_response_mode_sample_opens_on_the_conversation_and_the_reply(tmp_path: Path) -> None:
    """A response-mode sample: the conversation up to the reply as chat turns, then the
    reply of the model under evaluation, in view as the sample opens; its Scoring tab gives
    the grader's weighted score with each level's probability."""
    from inspect_ai import eval

    from inspect_empathy.tasks import empathy_response

    [log] = eval(
        empathy_response(dataset=str(FIXTURE)), model=JUDGES[1],
        model_roles={"grader": JUDGES[0]}, log_dir=str(tmp_path / "response"), display="none",
    )  # fmt: skip
    assert log.status == "success" and log.samples is not None
    [sample] = [s for s in log.samples if s.id == SAMPLE_ID]
    first, reply = sample.messages[0].text, sample.output.completion
    assert sample.messages[-1].role == "assistant" and sample.messages[-1].text == reply
    with viewing(tmp_path / "response") as (browser, url):
        base = f"{url}#/logs/{Path(log.location).name}/samples/sample/{SAMPLE_ID}/1"
        browser.call("Page.navigate", {"url": f"{base}/messages"}, page=True)
        wanted: list[Wanted] = ["USER", "ASSISTANT", (first,), (reply.splitlines()[0],)]
        shown = browser.wait_for_text(wanted, 60)
        time.sleep(2)
        text = browser.text()
        seen = [browser.evaluate(FIRST_SEEN_JS % json.dumps(t)) for t in (first,)]
        browser.screenshot(tmp_path / "response_sample.png")
        browser.call("Page.navigate", {"url": f"{base}/scoring"}, page=True)
        scored = browser.wait_for_text(["EXPLANATION", "logprobs: "], 60)
        scoring = browser.text()
    assert shown, f"sample view does not show {missing_from(text, wanted)}:\n{text[:3000]}"
    assert all(box is not None and box["bottom"] <= box["height"] for box in seen), seen
    assert "Evaluation Form" not in text
    assert scored, scoring[:3000]
    data = (tmp_path / "response_sample.png").read_bytes()
    assert png_size(data) == (1400, 900) and len(data) > 20_000


if __name__ == "__main__":
    if len(sys.argv) != 3 or CHROMIUM is None:
        sys.exit("usage (needs chromium): python tests/test_viewer_screenshot.py LOG_DIR OUT_DIR")
    screenshot_viewer(Path(sys.argv[1]), Path(sys.argv[2]), CHROMIUM)
    print(f"wrote viewer.png, viewer_sample.png and viewer_scoring.png in {sys.argv[2]}")
