"""`kg view`: one offline HTML file, user text escaped, checked in headless Chromium."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from git_gasp.view.kg_page import render, script_json
from tests.kg.helpers import kg
from tests.testing.chromium import body_attrs as _body_attrs
from tests.testing.chromium import console as _console
from tests.testing.chromium import dump_dom as _chromium
from tests.testing.chromium import needs_chromium
from tests.testing.run import git

pytestmark = pytest.mark.slow  # keeps the fast loop under a minute

PAYLOAD_DOC = """
entities:
  - id: evil
    label: "Evil </script><script>document.body.setAttribute('data-pwned','label')</script>"
    type: concept
    aliases: ["<img src=x onerror=\\"document.body.setAttribute('data-pwned','alias')\\">"]
    body: |
      <img src=x onerror="document.title='PWNED';document.body.setAttribute('data-pwned','img')">
      </script><script>document.body.setAttribute('data-pwned','script')</script>
      <b>bold?</b> <!-- comment --> &amp; end
  - {id: good, label: Good, type: domain, body: "fine\\u2028line\\u2029sep"}
relations:
  - from: evil
    type: depends-on
    to: good
    body: "<svg onload=\\"document.body.setAttribute('data-pwned','svg')\\"></svg>"
"""


def test_script_json_cannot_close_the_script_element():
    data = {"t": "</script><script>alert(1)</script><!-- \u2028\u2029 & >"}
    text = script_json(data)
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == data


def test_page_is_self_contained_and_offline():
    page = render({"branch": "main</title>", "repo": "r", "nodes": [], "edges": []})
    assert "main&lt;/title&gt;" in page
    assert not re.search(r"https?://", page)
    assert "<link" not in page and not re.search(r"<script[^>]+src=", page)
    assert page.count("</script>") == 2  # the data block and our code, nothing else


def test_view_escapes_every_payload(graph, tmp_path):
    cwd, _ = graph
    kg(cwd, "save", "-", "--session-id", "s1", input=PAYLOAD_DOC)
    out = tmp_path / "v.html"
    proc = kg(cwd, "view", "--output", str(out), "--no-open", "--session-id", "s1")
    assert "2 entities, 1 relations" in proc.stdout.decode()
    page = out.read_text()
    assert page.count("</script>") == 2 and page.count("<script") == 2
    assert "<img" not in page and "<svg" not in page and "<b>" not in page


@needs_chromium
def test_view_renders_in_chromium_and_payload_does_not_run(graph, tmp_path):
    cwd, _ = graph
    kg(cwd, "save", "-", "--session-id", "s1", input=PAYLOAD_DOC)
    page = tmp_path / "view.html"
    kg(cwd, "view", "--output", str(page), "--no-open", "--session-id", "s1")
    dom, stderr = _chromium(page.as_uri() + "#node=evil", tmp_path)
    attrs = _body_attrs(dom)
    assert attrs.get("data-rendered") == "2" and attrs.get("data-edges") == "1"
    assert "data-pwned" not in attrs and "data-errors" not in attrs
    assert "PWNED" not in re.search(r"<title>(.*?)</title>", dom, re.S).group(1)
    assert _console(stderr, page) == []
    # the selected node's panel shows the payload as text
    panel = re.search(r'<aside id="panel">(.*?)</aside>', dom, re.S).group(1)
    assert "&lt;img src=x onerror=" in panel
    assert "&lt;/script&gt;&lt;script&gt;" in panel
    assert "&lt;b&gt;bold?&lt;/b&gt;" in panel
    assert "&lt;svg onload=" in panel  # the relation insight
    assert "<img" not in panel and "<svg" not in panel and "<b>" not in panel


def _big_graph(root: Path, n: int) -> None:
    ent = root / "entities"
    types = ["domain", "concept", "technology", "framework", "person", "insight"]
    rels = ["depends-on", "enables", "part-of"]
    for i in range(n):
        d = ent / f"e-{i}"
        d.mkdir(parents=True)
        (d / "entity.md").write_text(
            f"---\nid: e-{i}\nlabel: Entity {i}\ntype: {types[i % 6]}\naliases: []\n"
            f"created_at: 2026-01-01\nupdated_at: 2026-01-01\nsources: []\n---\n\nBody {i}.\n"
        )
        for k, r in enumerate(rels):
            t = (i * 7 + k * 13 + 1) % n
            (d / r).mkdir(exist_ok=True)
            (d / r / f"e-{t}.md").write_text(
                f"---\nfrom: e-{i}\nto: e-{t}\ntype: {r}\ncreated_at: 2026-01-01\n"
                f"updated_at: 2026-01-01\nvalid_until: null\nsources: []\n---\n\nWhy {i}.\n"
            )


@needs_chromium
def test_view_handles_5000_entities(tmp_path, home):
    repo = tmp_path / "big"
    repo.mkdir()
    git(repo, "init", "-q")
    _big_graph(repo, 5000)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "big graph")
    page = tmp_path / "big.html"
    proc = kg(tmp_path, "view", "--worktree", str(repo), "--output", str(page), "--no-open")
    assert "5000 entities, 15000 relations" in proc.stdout.decode()
    dom, stderr = _chromium(page.as_uri() + "#node=e-42", tmp_path, budget_ms=20000)
    attrs = _body_attrs(dom)
    assert attrs.get("data-rendered") == "5000" and attrs.get("data-edges") == "15000"
    assert "data-errors" not in attrs
    assert _console(stderr, page) == []
    assert "Entity 42" in re.search(r'<aside id="panel">(.*?)</aside>', dom, re.S).group(1)


def test_view_without_a_display_does_not_launch_a_console_browser(graph, monkeypatch):
    cwd, _ = graph
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    proc = kg(cwd, "view", "--session-id", "s1")
    text = proc.stdout.decode()
    assert "open the file yourself" in text
    path = Path(text.split("wrote ", 1)[1].split(" (", 1)[0])
    assert path.name == "memory-main.html" and path.is_file()
