"""The log search engine (`protocol.logsearch`): planted words found on the right line
and run, ranking, each filter, the chunking seams, and what the prefilter must not miss."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from git_gasp.base.errors import UsageError
from git_gasp.protocol import logsearch
from git_gasp.protocol.logsearch import search_log
from tests.testing.events import create, line, ops

FIXTURE = Path(__file__).resolve().parents[2] / "fixture" / "state" / "events.jsonl"


def found(data, query, **kw) -> list[tuple[str, int, str | None]]:
    return [(h.event.id, h.line, h.run) for h in search_log(data, query, **kw)]


def test_fixture_terms_found_with_their_run_and_line():
    data = FIXTURE.read_bytes()
    assert found(data, "persist retry") == [("event_04", 4, "run_42")]
    assert found(data, "Reliable") == [("event_01", 1, None)]  # a goal: no run
    # only in the ops event's props: the ops event is the hit
    assert found(data, "abc1234") == [("event_05", 5, "run_42")]
    # both the patch.proposed and its ops event say "counter": one hit, the domain event
    assert found(data, "COUNTER") == [("event_04", 4, "run_42")]
    assert found(data, "no such words") == []


def test_ranking_phrase_then_one_string_then_spread_then_newest():
    data = b"".join([
        line("event_1", "observation.created", {"id": "observation_1",
                                                "summary": "timeout in retry"}),
        line("event_2", "observation.created", {"id": "observation_2", "summary": "retry",
                                                "source": "timeout"}),
        line("event_3", "observation.created", {"id": "observation_3",
                                                "summary": "the retry timeout"}),
        line("event_4", "observation.created", {"id": "observation_4",
                                                "summary": "retry timeout again"}),
    ])
    hits = search_log(data, "retry timeout")
    assert [(h.event.id, h.score) for h in hits] == [
        ("event_4", 3), ("event_3", 3), ("event_1", 2), ("event_2", 1)]
    assert hits[0].text == "retry timeout again" and hits[0].nodes == ("observation_4",)
    assert hits[0].kind == "observation"


def test_filters_narrow():
    data = b"".join([
        line("event_r1", "run.started", {"run_id": "run_a", "task": "t",
                                         "metadata": {"person": "Ada <ada@x>",
                                                      "source": {"agent": "claude-code"}}},
             corr="run_a", ts=1000),
        line("event_r2", "run.started", {"run_id": "run_b", "task": "t",
                                         "metadata": {"person": "Bob", "agent": "codex"}},
             corr="run_b", ts=2000),
        line("event_1", "patch.proposed", {"id": "patch_1", "title": "flaky fix"},
             corr="run_a", ts=1500),
        line("event_2", "eval.finished", {"id": "eval_2", "command": "flaky test"},
             corr="run_b", ts=2500),
        line("event_3", "model.called", {"call_id": "c", "input_summary": "flaky"},
             corr="run_b", ts=2600),
    ])
    every = [h[0] for h in found(data, "flaky")]
    assert every == ["event_3", "event_2", "event_1"]
    assert [h[0] for h in found(data, "flaky", kinds={"patch"})] == ["event_1"]
    assert [h[0] for h in found(data, "flaky", kinds={"model_call", "eval"})] == \
        ["event_3", "event_2"]
    assert [h[0] for h in found(data, "flaky", run="run_a")] == ["event_1"]
    assert [h[0] for h in found(data, "flaky", run="run_b")] == ["event_3", "event_2"]
    assert [h[0] for h in found(data, "flaky", agent="CLAUDE")] == ["event_1"]
    assert [h[0] for h in found(data, "flaky", person="bob")] == ["event_3", "event_2"]
    assert found(data, "flaky", person="bob", agent="claude") == []
    assert [h[0] for h in found(data, "flaky", since_ms=2500)] == ["event_3", "event_2"]
    with pytest.raises(UsageError, match="no run 'run_z'"):
        search_log(data, "flaky", run="run_z")
    with pytest.raises(UsageError, match="ambiguous"):
        search_log(data, "flaky", run="run_")
    with pytest.raises(UsageError, match="unknown node kind 'nope'"):
        search_log(data, "flaky", kinds={"nope"}, known_kinds={"patch"})
    for bad in ("", "   ", None):
        with pytest.raises(UsageError, match="at least one word"):
            search_log(data, bad)


def test_case_escapes_non_ascii_and_bad_lines():
    data = b"".join([
        line("event_1", "observation.created", {"id": "observation_1",
                                                "summary": "Caf\u00c9 CR\u00c8ME \u2713"}),
        b"not json at all, but it says creme\n",
        line("event_2", "observation.created", {"id": "observation_2",
                                                "summary": "tab\there \"quoted\" line\nnext"}),
    ])
    assert found(data, "café") == [("event_1", 1, None)]
    assert found(data, "crème") == [("event_1", 1, None)]
    assert found(data, "✓") == [("event_1", 1, None)]  # no anchor: every line parsed
    assert found(data, '"quoted"') == [("event_2", 3, None)]
    assert found(data, "line next") == [("event_2", 3, None)]  # a spread match, not a phrase
    assert found(data, "creme") == []  # the bad line is skipped


def test_chunk_seams_and_long_lines_keep_line_numbers(monkeypatch):
    monkeypatch.setattr(logsearch, "CHUNK", 300)
    rng = random.Random(7)
    lines, planted = [], {}
    for n in range(1, 401):
        word = "zqx" if rng.random() < 0.05 else "plain"
        pad = "y" * rng.choice((10, 50, 400, 900))  # some lines longer than a chunk
        lines.append(line(f"event_{n}", "observation.created",
                          {"id": f"observation_{n}", "summary": f"{pad} {word} {pad}"}))
        if word == "zqx":
            planted[f"event_{n}"] = n
    data = b"".join(lines)
    got = {h.event.id: h.line for h in search_log(data, "ZQX")}
    assert got == planted and planted
    unterminated = data + line("event_x", "observation.created",
                               {"id": "observation_x", "summary": "zqx"}).rstrip(b"\n")
    assert search_log(unterminated, "zqx")[0].line == 401


def test_ops_event_names_the_nodes_of_a_domain_event_that_names_none():
    data = line("event_1", "model.called", {"call_id": "c1", "model": "sonnet",
                                            "input_summary": "zqx"}, corr="run_a") + \
        ops("event_2", "event_1", create("model_call_1", "model_call", input_summary="zqx"))
    (hit,) = search_log(data, "zqx")
    assert hit.event.id == "event_1" and hit.nodes == ("model_call_1",)
    assert hit.kind == "model_call" and hit.run == "run_a"


def test_a_limit_gives_the_same_first_hits_and_parses_only_the_newest(monkeypatch):
    rng = random.Random(48)
    words = "alpha beta gamma delta".split()
    data = b"".join(
        line(f"event_{n}", "observation.created" if n % 3 else "patch.proposed",
             {"id": f"{'observation' if n % 3 else 'patch'}_{n}",
              "summary": " ".join(rng.choice(words) for _ in range(4))})
        for n in range(1, 601))
    parsed = []
    real = logsearch.parse_line
    monkeypatch.setattr(logsearch, "parse_line",
                        lambda raw, n=0: parsed.append(n) or real(raw, n))
    for query in ("alpha", "beta gamma", "delta alpha beta", "gamma gamma"):
        every = [h.event.id for h in search_log(data, query)]
        for limit in (1, 5, 40):
            parsed.clear()
            first = [h.event.id for h in search_log(data, query, limit=limit)]
            assert first[:limit] == every[:limit], (query, limit)
        assert every
    parsed.clear()
    search_log(data, "alpha", limit=3)
    assert len(parsed) < 20  # the newest lines only, not all 600
    parsed.clear()
    search_log(data, "alpha beta", limit=2)  # the lines holding the phrase, newest first
    assert len(parsed) < 40
    by_kind = search_log(data, "alpha", limit=2, keep=lambda h: h.kind == "patch")
    assert [h.kind for h in by_kind[:2]] == ["patch", "patch"]


def test_read_from_the_end_when_size_and_lines_are_known(monkeypatch):
    monkeypatch.setattr(logsearch, "CHUNK", 700)
    rng = random.Random(9)
    data = b"".join(
        line(f"event_{n}", "observation.created",
             {"id": f"observation_{n}",
              "summary": " ".join(rng.choice(("zqx", "plain", "y" * 900)) for _ in range(3))})
        for n in range(1, 301))
    known = (len(data), data.count(b"\n"))
    for query in ("zqx", "plain zqx", "zqx plain"):
        every = [(h.event.id, h.line) for h in search_log(data, query)]
        assert every and [(h.event.id, h.line) for h in search_log(
            data, query, known=known)] == every
        for limit in (1, 7):
            assert [(h.event.id, h.line) for h in search_log(
                data, query, known=known, limit=limit)][:limit] == every[:limit]
    tail = line("event_late", "observation.created", {"id": "observation_late",
                                                      "summary": "zqx"})
    assert "event_late" not in {h.event.id for h in search_log(data + tail, "zqx",
                                                                known=known)}
