"""`git gasp view` for people, in headless Chromium at 1280, 1400 and 1920 px: nothing is
clipped (every lineage column, the header, the timeline and the detail panel fit), the
timeline labels its time axis (with the date) and its runs (person · agent), the detail
panel shows fields, not JSON; screenshots at 1280 and 1920 px are written."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from tests.adapters.test_live import CLAUDE_HOOKS, payloads, replay
from tests.testing.chromium import body_attrs, dump_dom, element, needs_chromium, screenshot
from tests.testing.run import gasp, out
from tests.view.history import record

pytestmark = [pytest.mark.slow, needs_chromium]  # headless Chromium: seconds per page

WIDTHS = (1280, 1400, 1920)


def _page(repo: Path, tmp: Path) -> Path:
    page = tmp / "view.html"
    proc = gasp(repo, "view", "-o", str(page), "--no-open")
    assert proc.returncode == 0, out(proc)
    return page


def _at(page: Path, tmp: Path, width: int, fragment: str = "") -> tuple[str, dict[str, str]]:
    dom, _stderr = dump_dom(page.as_uri() + fragment, tmp, 8000, f"--window-size={width},900")
    attrs = body_attrs(dom)
    assert attrs.get("data-rendered") == "1" and "data-errors" not in attrs, dom[-1500:]
    return dom, attrs


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def _fields_not_json(detail: str) -> None:
    assert "<pre" not in detail and '{"' not in detail and "&quot;:" not in detail, detail


def test_a_replayed_session_reads_at_every_width(agent, tmp_path):
    replay(agent, payloads(CLAUDE_HOOKS, agent))
    page = _page(agent, tmp_path)
    for width in WIDTHS:
        dom, attrs = _at(page, tmp_path, width)
        assert attrs["data-clipped"] == "", (width, attrs["data-clipped"])
        lanes = attrs["data-lanes"].split(" | ")
        assert len(lanes) == 1 and lanes[0].endswith(" · claude-code"), lanes
        axis = attrs["data-axis"].split(" | ")
        clock = r"\d\d:\d\d(:\d\d(\.\d{3})?)?"  # milliseconds when a replay spans a second
        assert len(axis) >= 3 and re.fullmatch(r"\d{4}-\d\d-\d\d " + clock, axis[0]), axis
        assert all(re.fullmatch(clock, t) for t in axis[1:]), axis
        detail = element(dom, "aside", "detail")
        assert "lifted by" in detail and "first-prompt-goal" in detail  # the goal's metadata
        _fields_not_json(detail)
    for width in (1280, 1920):
        shot = tmp_path / f"session-{width}.png"
        screenshot(page.as_uri(), shot, tmp_path, f"{width},900")
        assert _png_size(shot) == (width, 900)


def test_seven_lineage_columns_fit_from_1280_px(agent, tmp_path):
    hist = record(agent)
    page = _page(agent, tmp_path)
    for width in WIDTHS:
        dom, attrs = _at(page, tmp_path, width, f"#node={hist.goal}")
        assert attrs["data-clipped"] == "", (width, attrs["data-clipped"])
        lineage = element(dom, "section", "lineage")
        for column in ("Goal (1)", "Tasks (1)", "Runs (1)", "Patches (1)", "Evals (1)",
                       "Decisions (1)", "Failures, observations (2)"):
            assert column in lineage, (width, column)
        _fields_not_json(element(dom, "aside", "detail"))
        dom, attrs = _at(page, tmp_path, width, f"#run={hist.run}")
        run = element(dom, "aside", "detail")
        assert "claude-test" in run and "person" in run and "agent" in run
        _fields_not_json(run)
    for width in (1280, 1920):
        shot = tmp_path / f"history-{width}.png"
        screenshot(page.as_uri() + f"#node={hist.decision}", shot, tmp_path, f"{width},900")
        assert _png_size(shot) == (width, 900)
