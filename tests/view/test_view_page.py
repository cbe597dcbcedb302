"""`git gasp view` rendered in real headless Chromium: the titles and a goal's lineage
appear, search and filters find what they should, hostile titles never run and show as
text, and nothing is fetched from the network."""

from __future__ import annotations

import html
import http.server
import re
import threading
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.testing.chromium import body_attrs, console, dump_dom, element, needs_chromium
from tests.testing.run import gasp, out
from tests.view.history import HOSTILE_IMG, HOSTILE_SCRIPT, record, write_many_runs

pytestmark = [pytest.mark.slow, needs_chromium]  # headless Chromium: seconds per page

SVG_NS = "http://www.w3.org/2000/svg"  # a namespace name in the script, never fetched


class _Counter(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.hits.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server():
    """A local HTTP server that counts what it is asked for (nothing, it should be)."""
    _Counter.hits = []
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Counter)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv.server_address[1], _Counter.hits
    srv.shutdown()
    srv.server_close()
    thread.join()


@pytest.fixture
def written(agent, tmp_path, server):
    """The agent's history recorded and its page written with `git gasp view -o`."""
    port, _hits = server
    hist = record(agent, port)
    page = tmp_path / "view.html"
    proc = gasp(agent, "view", "-o", str(page), "--no-open")
    assert proc.returncode == 0, out(proc)
    return hist, page


def _render(page: Path, tmp: Path, fragment: str = "") -> tuple[str, dict[str, str]]:
    dom, stderr = dump_dom(page.as_uri() + fragment, tmp)
    attrs = body_attrs(dom)
    assert attrs.get("data-rendered") == "1", dom[-2000:]
    assert "data-errors" not in attrs and "data-pwned" not in attrs
    assert console(stderr, page) == []
    return dom, attrs


def test_titles_and_the_lineage_of_a_goal_appear(written, tmp_path):
    hist, page = written
    dom, attrs = _render(page, tmp_path, f"#node={hist.goal}")
    assert attrs["data-selected"] == hist.goal
    lineage = element(dom, "section", "lineage")
    assert "Lineage of goal: Make retry reliable" in lineage
    for text in ("Persist the retry counter", "fix retry skill", "persist retry counter",
                 "commit abc1234def", "pytest tests/test_retry.py", "Passed",
                 "eval passed; promote", "retry loses its counter",
                 "counter resets after a timeout"):
        assert text in lineage, text
    # goal, task, run, patch, eval, decision + the failure and observation explaining it
    assert attrs["data-lineage"] == "8"
    for column in ("Goal (1)", "Tasks (1)", "Runs (1)", "Patches (1)", "Evals (1)",
                   "Decisions (1)", "Failures, observations (2)"):
        assert column in lineage, column
    assert "<path " in lineage  # the relations drawn between the cards
    detail = element(dom, "aside", "detail")
    assert "retries drop state after timeout" in detail  # the goal's fields
    assert "goal.created" in detail  # and its events


def test_a_run_shows_its_model_tokens_and_tool_calls(written, tmp_path):
    hist, page = written
    dom, attrs = _render(page, tmp_path, f"#node={hist.run}")
    assert attrs["data-runs"] == "2"
    detail = element(dom, "aside", "detail")
    for text in ("claude-test", "input_tokens 1200, output_tokens 340", "1 (1 failed)",
                 "pytest ×1", "success", "fix retry skill"):
        assert text in detail, text
    assert "Lineage of goal: Make retry reliable" in element(dom, "section", "lineage")


def test_search_finds_prefixes_short_ids_and_titles(written, agent, tmp_path):
    hist, page = written
    log = gasp(agent, "log").stdout.decode()
    short = re.search(r"\s(patch_\.\.\.\w+)\s+persist retry counter", log).group(1)
    after_kind = hist.patch.partition("_")[2][:-2]  # a prefix of the part after the kind
    for query, found in ((short, 1), (hist.patch[:-2], 1), (hist.patch, 1), (after_kind, 1),
                         ("…" + short.partition("...")[2], 1),
                         ("RETRY COUNTER", 2), ("no such thing anywhere", 0)):
        dom, attrs = _render(page, tmp_path, "#q=" + quote(query))
        assert attrs["data-matches"] == str(found), query
        if found == 1:
            assert "persist retry counter" in element(dom, "div", "list")
    # a kind and a status narrow the list
    _dom, attrs = _render(page, tmp_path, "#kind=patch&status=Promoted")
    assert attrs["data-matches"] == "1"
    _dom, attrs = _render(page, tmp_path, "#kind=run")
    assert attrs["data-matches"] == "4"  # the two run nodes, and the two timeline runs
    # a run found by the short id log prints
    run_short = re.search(r"\s(run_\.\.\.\w+)\s+fix retry skill", log).group(1)
    _dom, attrs = _render(page, tmp_path, "#q=" + run_short)
    assert attrs["data-matches"] == "2"  # its node and its timeline entry


def test_hostile_titles_never_run_and_show_as_text(written, tmp_path, server):
    hist, page = written
    _port, hits = server
    dom, attrs = _render(page, tmp_path, f"#node={hist.evil_goal}")
    assert "PWNED" not in re.search(r"<title>(.*?)</title>", dom, re.S).group(1)
    detail = element(dom, "aside", "detail")
    lineage = element(dom, "section", "lineage")
    assert html.escape(HOSTILE_IMG, quote=False) in detail
    assert html.escape(HOSTILE_SCRIPT, quote=False) in detail
    assert "&lt;/script&gt;&lt;script&gt;" in lineage  # the patch's title, as text
    assert "&lt;b&gt;bold?&lt;/b&gt; &amp;amp;" in lineage
    for markup in ("<img", "<b>", "<link", "<script"):
        assert markup not in detail and markup not in lineage, markup
    # the run whose task and error are markup, shown as text too
    dom, _attrs = _render(page, tmp_path, f"#node={hist.second_run}")
    assert html.escape(HOSTILE_IMG, quote=False) in element(dom, "aside", "detail")
    assert hits == []  # nothing parsed as markup, nothing fetched


def test_the_page_is_one_offline_file(written):
    _hist, page = written
    text = page.read_text("utf-8")
    data = re.search(r'<script id="view-data" type="application/json">(.*?)</script>',
                     text, re.S).group(1)
    rest = text.replace(data, "").replace(SVG_NS, "")
    assert not re.search(r"https?:|//[a-z0-9]", rest, re.I), "a URL outside the data"
    assert "<link" not in rest and not re.search(r"<(script|img|iframe)[^>]+src=", rest)
    assert text.count("<script") == 2 and text.count("</script>") == 2
    assert "<img" not in data and "</script" not in data  # planted in titles, escaped
    csp = html.unescape(re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"',
                                  text).group(1))
    assert "default-src 'none'" in csp and "'unsafe-inline'" not in csp
    assert "connect-src" not in csp  # default-src 'none' covers fetch, XHR and sockets


def test_an_empty_log_renders(agent, tmp_path):
    (agent / "state" / "events.jsonl").write_bytes(b"")
    page = tmp_path / "empty.html"
    proc = gasp(agent, "view", "-o", str(page), "--no-open")
    assert proc.returncode == 0, out(proc)
    dom, attrs = _render(page, tmp_path)
    assert attrs["data-nodes"] == "0" and attrs["data-runs"] == "0"
    assert "nothing matches" in element(dom, "div", "list")


def test_a_big_log_renders_without_building_every_row(agent, tmp_path):
    """Thousands of runs and their tool calls: the page comes up with the raw layer
    counted per run and only the visible list rows in the DOM."""
    n_runs = write_many_runs(agent, 1000)
    page = tmp_path / "big.html"
    proc = gasp(agent, "view", "-o", str(page), "--no-open")
    assert proc.returncode == 0, out(proc)
    dom, attrs = _render(page, tmp_path)
    assert attrs["data-runs"] == str(n_runs)
    assert attrs["data-nodes"] == str(3 * n_runs + n_runs // 10)  # runs, patches, evals, goals
    rows = element(dom, "div", "list").count('class="row')
    assert 0 < rows < 100  # a virtual list: the visible rows, not every node
