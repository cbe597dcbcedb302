"""The view's data and page, in process: the raw layer counted per run (never copied),
every domain node kept, short ids as `log` prints them, scopes, and a page whose only
scripts are its own (the CSP allows exactly those by hash)."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re

from git_gasp.protocol.envelope import parse_log
from git_gasp.protocol.fold import fold
from git_gasp.protocol.idmatch import abbreviations
from git_gasp.view import data, page, rowtext
from git_gasp.view.runs import CALLS_KEPT, tokens_of
from tests.testing.paths import FIXTURE
from tests.view.history import HOSTILE_SCRIPT, write_many_runs


def _build(log: bytes, **scope):
    events = parse_log(log).events
    graph = fold(events).graph
    return data.build(graph, events, agent="tester", log="state/events.jsonl", **scope), \
        graph, events


def _many(tmp_path, n_runs: int) -> bytes:
    (tmp_path / "state").mkdir(exist_ok=True)
    write_many_runs(tmp_path, n_runs)
    return (tmp_path / "state" / "events.jsonl").read_bytes()


def test_the_fixture_runs_counted_from_events_alone():
    built, graph, events = _build((FIXTURE / "state" / "events.jsonl").read_bytes())
    assert {n["id"] for n in built["nodes"]} == set(graph.nodes)
    (run,) = built["runs"]
    assert run["id"] == "run_42" and run["node"] == -1  # no run node: its events tell
    assert run["tools"] == {"cargo test": 1} and run["n"]["tool_calls"] == 1
    assert built["nodes"][run["goal"]]["id"] == "goal_retry"  # started by goal.created
    patch = next(n for n in built["nodes"] if n["id"] == "patch_9")
    assert patch["s"] == "Promoted" and patch["p"]["references_commit"] == "abc1234"
    kinds = [built["rows"][k][3] for k in patch["e"]]
    assert kinds[:2] == ["patch.proposed", "state.ops_applied"] and "decision.created" in kinds
    assert built["raw_events"] == 1 and len(built["rows"]) == len(events) - 1


def test_the_raw_layer_is_counted_not_copied(tmp_path):
    built, graph, events = _build(_many(tmp_path, 50))
    raw = {nid for nid, n in graph.nodes.items() if n["kind"] in ("model_call", "tool_call")}
    assert len(raw) == 100
    kept = {n["id"] for n in built["nodes"]}
    assert kept == set(graph.nodes) - raw  # every domain node, no call node
    assert not any(r[3].startswith(("model.", "tool.")) for r in built["rows"])
    assert built["raw_events"] == 8 * 50  # called, finished and their ops, per call
    assert built["dropped_relations"] == 100
    first = built["runs"][0]
    assert first["models"] == {"m1": 1} and first["tokens"] == {"input_tokens": 10}
    assert first["n"]["tool_calls"] == 1 and first["n"]["tool_failed"] == 1  # run 0: r%3==0
    assert [c[:3] for c in first["calls"]] == [["model", "m1", "succeeded"],
                                                ["tool", "pytest", "failed"]]
    assert first["status"] == "finished" and first["outcome"] == "success"
    assert first["dur"] == first["end"] - first["start"] > 0


def test_a_run_lists_its_first_calls_and_counts_them_all():
    from tests.testing.events import line

    lines = [line("event_s", "run.started", {"run_id": "run_1", "task": "t"}, None, "run_1")]
    for i in range(CALLS_KEPT + 25):
        lines.append(line(f"event_c{i}", "tool.called",
                          {"id": f"tool_{i}", "run_id": "run_1", "tool": "sh"}, None, "run_1"))
        lines.append(line(f"event_f{i}", "tool.finished",
                          {"id": f"tool_{i}", "run_id": "run_1", "success": i % 2 == 0,
                           "duration_ms": 5}, None, "run_1"))
    built, _graph, _events = _build(b"".join(lines))
    (run,) = built["runs"]
    assert run["n"]["tool_calls"] == CALLS_KEPT + 25 and run["tools"] == {"sh": CALLS_KEPT + 25}
    assert run["n"]["tool_failed"] == (CALLS_KEPT + 25) // 2
    assert len(run["calls"]) == CALLS_KEPT and run["calls"][1][2:4] == ["failed", 5]


def test_tokens_are_read_where_runtimes_record_them():
    assert tokens_of({"usage": {"input_tokens": 3, "output_tokens": 4}}) == {
        "input_tokens": 3, "output_tokens": 4}
    assert tokens_of({"metadata": {"usage": {"cache_read_input_tokens": 9}}}) == {
        "cache_read_input_tokens": 9}
    assert tokens_of({"metadata": {"input_tokens": 1}}) == {"input_tokens": 1}
    assert tokens_of({"input_tokens": 2, "x": "y"}) == {"input_tokens": 2}
    assert tokens_of({"usage": {"input_tokens": "3"}}) is None and tokens_of([1]) is None


def test_short_ids_are_those_log_prints(tmp_path):
    built, graph, events = _build(_many(tmp_path, 30))
    node_short = abbreviations([*graph.nodes, *(r["id"] for r in built["runs"])])
    event_short = abbreviations(e.id for e in events)

    def shown(full: str, tail: int) -> str:
        if not tail:
            return full
        kind, sep, _rest = full.partition("_")
        return f"{kind}{sep}...{full[-tail:]}"

    for n in built["nodes"]:
        assert shown(n["id"], n["t"]) == node_short[n["id"]]
    for r in built["rows"]:
        assert shown(r[0], r[1]) == event_short[r[0]]


def test_a_scope_keeps_its_events_runs_and_the_nodes_they_touched(tmp_path):
    log = _many(tmp_path, 30)
    events = parse_log(log).events
    built, graph, _ = _build(log, run="run_000012")
    assert [r["id"] for r in built["runs"]] == ["run_000012"]
    ids = {n["id"] for n in built["nodes"]}
    assert {"run_000012", "patch_000012", "eval_000012", "goal_000010"} <= ids
    assert "patch_000013" not in ids and "run_000011" not in ids
    assert all(r[0].endswith(("12", "12o")) for r in built["rows"])
    start = next(i for i, e in enumerate(events) if e.id == "event_rs20")
    built, _graph, _ = _build(log, since_index=start)
    assert [r["id"] for r in built["runs"]] == [f"run_{i:06d}" for i in range(20, 30)]
    ts = events[start].ts_ms
    by_time, _graph, _ = _build(log, since_ms=ts)
    assert by_time["runs"] == built["runs"] and by_time["rows"] == built["rows"]


def test_long_props_are_trimmed_and_marked():
    from tests.testing.events import create, line, ops

    big = "x" * (data.MAX_PROPS_BYTES + 10)  # past what is kept whole
    log = line("event_1", "goal.created", {"id": "goal_1", "title": big}) + ops(
        "event_2", "event_1", create("goal_1", "goal", title=big, tags=list(range(500))))
    built, _graph, _events = _build(log)
    props = built["nodes"][0]["p"]
    assert props["title"].startswith("x" * data.MAX_STRING) and "characters)" in props["title"]
    assert len(props["tags"]) == data.MAX_ITEMS + 1
    assert all(len(r[5]) <= rowtext.DOMAIN_CHARS for r in built["rows"])
    assert built["rows"][0][5].startswith("title: xxx") and built["rows"][0][5].endswith("…")


def test_an_event_row_is_a_line_of_fields_never_raw_json():
    from tests.testing.events import create, line, ops, relate

    log = line("event_1", "goal.created", {
        "id": "goal_1", "title": "Fix add", "status": "Open",
        "metadata": {"lifted_by": "first-prompt-goal"}, "tags": ["a", "b"]}) + ops(
        "event_2", "event_1", create("goal_1", "goal", title="Fix add"),
        relate("run_1", "serves", "goal_1"))
    built, _graph, _events = _build(log)
    texts = [r[5] for r in built["rows"]]
    assert texts == ["title: Fix add · status: Open · tags: 2 items",
                     "CreateNode goal_1 (goal); CreateRelation run_1 serves goal_1"]
    assert not any("{" in t for t in texts)


def test_the_page_runs_only_its_own_script_and_style():
    built, _graph, _events = _build((FIXTURE / "state" / "events.jsonl").read_bytes())
    built["nodes"][0]["l"] = HOSTILE_SCRIPT + "__SCRIPT__ __DATA__ \u2028"
    text = page.render(built).decode("utf-8")
    assert text.count("<script") == 2 and text.count("</script>") == 2
    assert text.count(page.asset("page.js")) == 1  # a slot inside the data is not filled
    csp = html.unescape(re.search(r'Content-Security-Policy" content="([^"]*)"', text).group(1))
    script = re.search(r"<script>(.*?)</script>", text, re.S).group(1)
    style = re.search(r"<style>(.*?)</style>", text, re.S).group(1)
    for block, directive in ((script, "script-src"), (style, "style-src")):
        digest = base64.b64encode(hashlib.sha256(block.encode()).digest()).decode()
        assert f"{directive} 'sha256-{digest}';" in csp
    blob = re.search(r'type="application/json">(.*?)</script>', text, re.S).group(1)
    assert json.loads(blob)["nodes"][0]["l"] == built["nodes"][0]["l"]
    assert "<" not in blob and "\u2028" not in blob


def test_the_agent_id_is_text_in_the_title_too():
    built, _graph, _events = _build((FIXTURE / "state" / "events.jsonl").read_bytes())
    built["agent"] = "</title><script>document.title='PWNED'</script>"
    text = page.render(built).decode("utf-8")
    title = re.search(r"<title>(.*?)</title>", text, re.S).group(1)
    assert title.startswith("git gasp view: &lt;/title&gt;&lt;script&gt;")
    assert text.count("<script") == 2 and text.count("</title>") == 1
