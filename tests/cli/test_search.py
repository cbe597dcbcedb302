"""`git gasp search`: planted words found with their run and line (the shipped fixture
and a generated log), each filter narrowing, the short ids `log` prints, bad input as
one line, and exit 1 when nothing matches."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from git_gasp.runtime.state import AgentState
from tests.testing.events import line
from tests.testing.json_shapes import keys_ok
from tests.testing.run import gasp, out

pytestmark = pytest.mark.slow  # the CLI end to end, many times


def hits(repo: Path, *args: str) -> list[list[str]]:
    """The text lines of a search that found something, split into their columns."""
    proc = gasp(repo, "search", *args)
    assert proc.returncode == 0, out(proc)
    assert not proc.stderr
    return [x.split(None, 4) for x in proc.stdout.decode().splitlines()]


def test_fixture_terms_with_run_and_line(fixture_repo):
    found = hits(fixture_repo, "persist", "retry")
    assert [(h[1], h[2], h[3], h[4]) for h in found] == \
        [("4", "patch.proposed", "run_42", "persist retry counter")]
    assert hits(fixture_repo, "abc1234")[0][1:4] == ["5", "state.ops_applied", "run_42"]
    every = hits(fixture_repo, "RETRY")
    assert [h[1] for h in every] == ["7", "6", "4", "3", "1"]  # all alike: newest first
    assert every[-1][3] == "-"  # the goal belongs to no run
    data = json.loads(gasp(fixture_repo, "search", "retry", "--json").stdout)
    keys_ok("git gasp search QUERY --json", data)
    assert {frozenset(r) for r in data["results"]} == {frozenset(
        {"id", "line", "kind", "ts_ms", "run", "nodes", "node_kind", "score", "text"})}
    assert [(r["id"], r["line"], r["run"]) for r in data["results"]][:2] == \
        [("event_07", 7, "run_42"), ("event_06", 6, "run_42")]
    assert data["results"][2]["nodes"] == ["patch_9"]


def test_no_hits_exits_1_and_bad_input_is_one_line(fixture_repo):
    none = gasp(fixture_repo, "search", "nothing-like-this")
    assert none.returncode == 1 and none.stdout == b"" and none.stderr == b""
    empty = gasp(fixture_repo, "search", "nothing-like-this", "--json")
    assert empty.returncode == 1 and json.loads(empty.stdout)["results"] == []
    for args, said in (
            (["retry", "--since", "next blue moon"], "--since next blue moon: neither a date"),
            (["retry", "--kind", "nope"], "unknown node kind 'nope'"),
            (["retry", "--run", "run_nope"], "no run 'run_nope'"),
            (["retry", "-n", "0"], "-n"),
            ([], "missing argument")):
        proc = gasp(fixture_repo, "search", *args)
        err = proc.stderr.decode()
        assert proc.returncode == 2, (args, out(proc))
        assert err.startswith("git gasp: error: ") and said in err, err
        assert err.count("\n") == 1 and "Traceback" not in err


def _history(repo: Path) -> dict[str, str]:
    """Two runs by two people and agents, each planting its own words."""
    with AgentState.open(repo, "w") as st:
        goal = st.record_goal("Make the cache durable")
        run_a = st.start_run("first try", goal=goal,
                             metadata={"person": "Ada <ada@example.com>",
                                       "source": {"agent": "claude-code"}})
        patch = st.propose_patch("fsync the zqxcache index", advances=goal)
        st.record_observation("zqxcache lost an entry\x1b[31m after a crash\nsecond line")
        st.finish_run("tried")
        run_b = st.start_run("second try", goal=goal,
                             metadata={"person": "Bob", "agent": "codex"})
        ev = st.record_eval("pytest -k zqxcache", "Passed", validates=patch)
        st.finish_run("done")
    return {"goal": goal, "a": run_a, "b": run_b, "patch": patch, "eval": ev}


def test_filters_narrow_and_ids_are_logs(agent):
    ids = _history(agent)
    every = hits(agent, "zqxcache")
    assert [h[2] for h in every] == ["eval.finished", "observation.created",
                                     "patch.proposed"]
    assert [h[3] for h in every] == [ids["b"], ids["a"], ids["a"]]
    # the observation's escape and line break are shown escaped, on one line
    assert "\x1b" not in every[1][4] and "\\x1b[31m" in every[1][4] and "⏎" in every[1][4]
    # each short id is the one `log` prints for that event, on the line it says
    log = gasp(agent, "log", "--format", "%h %l").stdout.decode().split("\n")
    shown = dict(x.split() for x in log if x)
    assert {h[0]: h[1] for h in every} == {h[0]: shown[h[0]] for h in every}
    assert [h[2] for h in hits(agent, "zqxcache", "--kind", "patch")] == ["patch.proposed"]
    assert [h[2] for h in hits(agent, "zqxcache", "--kind", "eval", "--kind", "patch")] == \
        ["eval.finished", "patch.proposed"]
    assert {h[3] for h in hits(agent, "zqxcache", "--run", ids["a"][:-4])} == {ids["a"]}
    assert {h[3] for h in hits(agent, "zqxcache", "--agent", "CODEX")} == {ids["b"]}
    assert {h[3] for h in hits(agent, "zqxcache", "--person", "ada@")} == {ids["a"]}
    assert gasp(agent, "search", "zqxcache", "--person", "ada", "--agent",
                "codex").returncode == 1
    assert len(hits(agent, "zqxcache", "-n", "2")) == 2
    assert len(hits(agent, "zqxcache", "--since", "2000-01-01")) == 3
    assert gasp(agent, "search", "zqxcache", "--since", "@4102444800").returncode == 1
    assert gasp(agent, "search", "zqxcache", "--since", str(2**40 * 1000)).returncode == 1


def test_generated_log_planted_terms_on_their_lines(agent):
    log = agent / "state" / "events.jsonl"
    before = log.read_bytes().count(b"\n")
    rng = random.Random(48)
    words = "retry timeout cache lease fold graph merge eval patch".split()
    planted: dict[str, tuple[int, str]] = {}
    lines = []
    for n in range(1, 3001):
        run = f"run_{rng.randrange(40):04d}"
        text = " ".join(rng.choice(words) for _ in range(rng.randrange(3, 60)))
        if n % 397 == 0:
            term = f"Planted{n}X"
            text = f"{text} {term} {text}"
            planted[term.lower()] = (before + n, run)
        lines.append(line(f"event_gen{n:05d}", "observation.created",
                          {"id": f"observation_gen{n:05d}", "summary": text},
                          corr=run, ts=1_739_000_000_000 + n))
    with open(log, "ab") as fh:
        fh.write(b"".join(lines))
    assert planted
    for term, (number, run) in planted.items():
        (hit,) = hits(agent, term.upper())
        assert (int(hit[1]), hit[3]) == (number, run), term
    assert len(hits(agent, "planted")) == len(planted)


def test_recorded_live_sessions_terms_on_their_runs(agent):
    """The real Claude Code and Codex sessions of ../shared/samples, imported: a term
    both prompts hold is found on both runs, a term of one agent's tools on its run
    alone, and every hit's line of the log is its event's."""
    from git_gasp.adapters.session_writer import run_id_for
    from tests.adapters.samples import CLAUDE_TRANSCRIPT, CODEX_ROLLOUT

    for kind, path in (("claude-code", CLAUDE_TRANSCRIPT), ("codex", CODEX_ROLLOUT)):
        proc = gasp(agent, "import", kind, str(path))
        assert proc.returncode == 0, out(proc)
    claude = run_id_for("claude-code", "6f48f32c-63b8-44c3-9f60-37aed18fbcf2")
    codex = run_id_for("codex", "01a227f0-ba53-7d60-9f50-1d95813560bb")

    def found(*args: str) -> list[dict]:
        proc = gasp(agent, "search", *args, "--json")
        assert proc.returncode == 0, out(proc)
        return json.loads(proc.stdout)["results"]

    log = (agent / "state/events.jsonl").read_bytes().splitlines()
    both = found("fix the add function")
    assert {h["run"] for h in both} == {claude, codex, None}
    assert {h["kind"] for h in both if h["run"] is None} == {"goal.created"}  # no run's
    for hit in both:
        assert json.loads(log[hit["line"] - 1])["id"] == hit["id"]
    assert {h["run"] for h in found("fix the add function", "--agent", "codex")} == {codex}
    assert {h["run"] for h in found("exec_command")} == {codex}
