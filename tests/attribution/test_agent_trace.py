"""`git gasp export agent-trace` / `import agent-trace`: every exported record validates
against Agent Trace's own JSON Schema (vendored in data/, see data/README.md) with
jsonschema; the ranges are the lines each pinned commit added; the same log exports the
same bytes; import is idempotent, goes through the write gate, skips what it cannot
use with one line each, and an export imported into a fresh repository round-trips."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from git_gasp.attribution.agent_trace import build_records, dumps
from git_gasp.attribution.diffranges import parse_diffs
from git_gasp.attribution.trace_import import Imported, import_records, observation_id
from git_gasp.runtime import AgentState
from tests.testing.blame_history import build, write
from tests.testing.run import commit_all, gasp, git, out

SCHEMA = json.loads((Path(__file__).parent / "data" / "agent-trace-record.schema.json")
                    .read_text())
VALIDATOR = jsonschema.Draft202012Validator(
    SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def valid(record: dict) -> None:
    errors = sorted(VALIDATOR.iter_errors(record), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]
    for f in record["files"]:  # "format": "uri" is only checked with rfc3987 installed
        for conv in f["conversations"]:
            for rel in conv.get("related", ()):
                assert ":" in rel["url"] and rel["url"].split(":")[0].isalpha()


def test_the_validator_is_the_real_one():
    VALIDATOR.check_schema(SCHEMA)
    assert SCHEMA["$id"] == "https://agent-trace.dev/schemas/v1/trace-record.json"
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate({"version": "0.1.0", "id": "x", "timestamp": "now", "files": []})


@pytest.fixture
def history(agent):
    return build(agent)


def _records(repo: Path, **kw) -> list[dict]:
    return build_records(AgentState.open(repo, "reader"), str(repo), **kw)


def test_one_valid_record_per_pinned_patch_with_the_lines_its_commit_added(history):
    h = history
    (record,) = _records(h.repo)
    valid(record)
    assert record["vcs"] == {"type": "git", "revision": h.agent}
    (file,) = record["files"]
    assert file["path"] == "app.py"  # as the commit names it (before the rename)
    (conv,) = file["conversations"]
    assert conv["ranges"] == [{"start_line": 4, "end_line": 6}]
    assert conv["contributor"] == {"type": "ai", "model_id": "anthropic/claude-opus-4-5"}
    assert conv["related"] == [{"type": "run", "url": f"gasp:run/{h.run}"}]
    assert record["metadata"]["dev.git-gasp"] == {
        "agent_id": "tester", "patch": h.patch, "goal": h.goal, "run": h.run,
        "eval": h.eval, "decision": h.decision, "status": "Promoted"}


def test_the_same_log_exports_the_same_bytes(history):
    h = history
    first = gasp(h.repo, "export", "agent-trace")
    assert first.returncode == 0, out(first)
    assert first.stdout == dumps(_records(h.repo))
    again = gasp(h.repo, "export", "agent-trace", "-o", ".agent-trace/traces.jsonl")
    assert again.returncode == 0, out(again)
    assert (h.repo / ".agent-trace" / "traces.jsonl").read_bytes() == first.stdout
    assert b"wrote 1 record(s)" in again.stderr
    for line in first.stdout.splitlines():
        valid(json.loads(line))


def test_since_keeps_the_commits_made_after_rev(history):
    h = history
    assert [r["vcs"]["revision"] for r in _records(h.repo, since=h.human)] == [h.agent]
    assert _records(h.repo, since=h.agent) == []
    proc = gasp(h.repo, "export", "agent-trace", "--since", "no-such-rev")
    assert proc.returncode == 1 and len(proc.stderr.splitlines()) == 1, out(proc)
    assert b"no-such-rev" in proc.stderr and b"Traceback" not in proc.stderr
    proc = gasp(h.repo, "export", "agent-trace", "--all")
    assert proc.returncode == 2 and b"takes no RUN" in proc.stderr


def test_many_patches_files_and_odd_paths_all_validate(agent):
    with AgentState.open(agent, "agent-under-test") as st:
        goal = st.record_goal("many files")
    pins = []
    for n in range(3):
        write(agent, f"dir {n}/ünï\tcode.py", b"".join(b"line %d\n" % i for i in range(n + 2)))
        write(agent, "shared.txt", b"x\n" * (n + 1))
        write(agent, "blob.bin", bytes(range(256)) * (n + 1))
        pins.append(commit_all(agent, f"step {n}"))
    with AgentState.open(agent, "agent-under-test") as st:
        for n, sha in enumerate(pins):
            st.propose_patch(f"step {n}", advances=goal, commit=sha[: 8 + n])
    records = _records(agent)
    assert [r["vcs"]["revision"] for r in records] == pins
    for r in records:
        valid(r)
        paths = [f["path"] for f in r["files"]]
        assert "blob.bin" not in paths  # binary: no lines
        assert any(p.endswith("ünï\tcode.py") for p in paths)
        assert "contributor" in r["files"][0]["conversations"][0]
    shared = [f for f in records[2]["files"] if f["path"] == "shared.txt"][0]
    assert shared["conversations"][0]["ranges"] == [{"start_line": 3, "end_line": 3}]
    assert len({r["id"] for r in records}) == 3


def test_diff_ranges_never_read_a_hunks_lines_as_headers():
    sha = "a" * 40
    data = (f"{sha}\ndiff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,3 @@\n-old\n-+++ b/y\n"
            "+++ b/z\n+@@ -9 +9 @@\n+new\n@@ -10,0 +12 @@\n+tail\n").encode()
    assert parse_diffs(data) == {sha: {b"x": [(1, 3), (12, 12)]}}


FOREIGN = {
    "version": "1.0", "id": "550e8400-e29b-41d4-a716-446655440000",
    "timestamp": "2026-01-23T14:30:00Z", "tool": {"name": "cursor", "version": "2.4.0"},
    "files": [{"path": "notes.md", "conversations": [{
        "url": "https://api.cursor.com/v1/conversations/12345",
        "contributor": {"type": "ai", "model_id": "openai/gpt-4o"},
        "ranges": [{"start_line": 2, "end_line": 3}]}]}],
}


def _foreign(repo: Path) -> tuple[str, bytes]:
    write(repo, "notes.md", b"human\ncursor one\ncursor two\nhuman again\n")
    sha = commit_all(repo, "notes from cursor")
    rec = dict(FOREIGN, vcs={"type": "git", "revision": sha})
    lines = [json.dumps(rec), "", "{not json", json.dumps({"id": "no-vcs", "files": []}),
             json.dumps(dict(rec, id="elsewhere", vcs={"type": "git", "revision": "f" * 40}))]
    return sha, ("\n".join(lines) + "\n").encode()


def test_a_file_of_something_else_is_skipped_without_a_flood(agent, tmp_path):
    """Thirty lines that are no Agent Trace records: ten are named, the rest counted,
    and nothing is written."""
    from git_gasp.cli.commands.import_ import SKIPS_SHOWN

    path = tmp_path / "passwd"
    path.write_bytes(b"".join(b"user%d:x:1000:1000::/home:/bin/sh\n" % i for i in range(30)))
    size = (agent / "state" / "events.jsonl").stat().st_size
    proc = gasp(agent, "import", "agent-trace", str(path))
    assert proc.returncode == 0, out(proc)
    err = proc.stderr.decode().splitlines()
    assert len([e for e in err if ": skipped: " in e]) == SKIPS_SHOWN
    assert f"{path}: {30 - SKIPS_SHOWN} more line(s) skipped" in err
    assert b"0 record(s) imported, 0 already, 30 skipped" in proc.stdout
    assert (agent / "state" / "events.jsonl").stat().st_size == size


@pytest.mark.slow  # over half a second: out of the fast loop
def test_import_adds_observations_on_the_commits_once(agent, tmp_path):
    sha, data = _foreign(agent)
    path = tmp_path / "traces.jsonl"
    path.write_bytes(data)
    proc = gasp(agent, "import", "agent-trace", str(path))
    assert proc.returncode == 0, out(proc)
    err = proc.stderr.decode().splitlines()
    assert [e.split(": skipped: ")[0] for e in err] == [f"{path}:3", f"{path}:4", f"{path}:5"]
    assert "not in this repository" in err[2]
    assert git(agent, "log", "-1", "--format=%s").startswith("import agent-trace: 1")
    size = (agent / "state" / "events.jsonl").stat().st_size
    again = gasp(agent, "import", "agent-trace", str(path), "--json")
    assert again.returncode == 0, out(again)
    assert json.loads(again.stdout)["files"][0]["status"] == "already"
    assert (agent / "state" / "events.jsonl").stat().st_size == size  # nothing added
    state = AgentState.open(agent, "reader")
    oid = observation_id(FOREIGN["id"], sha)
    node = state.graph.node(oid)
    kept = node["props"]["metadata"]["agent_trace"]
    assert node["props"]["source"] == "agent-trace" and kept["commit"] == sha
    assert kept["files"][0]["conversations"][0]["ranges"] == [[2, 3]]
    assert Imported(state.graph).who(sha, b"notes.md", 2)["model"] == "openai/gpt-4o"
    blame = gasp(agent, "blame", "notes.md").stdout.decode().splitlines()
    assert ["trace:openai/gpt-4o" in line for line in blame] == [False, True, True, False]
    check = gasp(agent, "check")
    assert check.returncode == 0, out(check)


def test_import_takes_the_lease_first(agent, tmp_path):
    from git_gasp.store.lease import Lease

    _sha, data = _foreign(agent)
    path = tmp_path / "traces.jsonl"
    path.write_bytes(data)
    Lease(agent, "someone-else").ensure()
    proc = gasp(agent, "import", "agent-trace", str(path))
    assert proc.returncode != 0 and b"lease" in proc.stderr, out(proc)
    assert b"Traceback" not in proc.stderr


def test_import_refuses_a_file_it_cannot_read(agent, tmp_path):
    proc = gasp(agent, "import", "agent-trace", str(tmp_path / "missing.jsonl"))
    assert proc.returncode == 1 and b"cannot read" in proc.stderr
    proc = gasp(agent, "import", "agent-trace")
    assert proc.returncode == 2 and b"name the Agent Trace files" in proc.stderr


def test_records_read_back_in_process(agent):
    sha, data = _foreign(agent)
    with AgentState.open(agent, "writer") as st:
        first = import_records(st, str(agent), data)
        second = import_records(st, str(agent), data)
    assert len(first.added) == 1 and not second.added and len(second.already) == 1
    assert [n for n, _r in first.skipped] == [3, 4, 5]


@pytest.mark.slow
def test_export_then_import_into_a_fresh_repository_round_trips(tmp_path):
    """The state beside the project (`init --branch`): export from one clone, import into
    a fresh state of another clone of the same project; blame there tells the same."""
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    write(project, "app.py", b"one\ntwo\n")
    commit_all(project, "human")
    assert gasp(project, "init", "--branch", "--agent-id", "tester").returncode == 0
    run = gasp(project, "run", "start", "--task", "extend").stdout.decode().strip()
    gasp(project, "record", "model-call", "--model", "claude-opus-4-5", "--provider",
         "anthropic", "--input", "extend", "--output", "ok")
    write(project, "app.py", b"one\ntwo\nthree\nfour\n")
    sha = commit_all(project, "agent: extend")
    patch = gasp(project, "record", "patch", "--title", "extend", "--commit", sha)
    assert patch.returncode == 0, out(patch)
    gasp(project, "run", "finish", "--outcome", "completed")
    exported = gasp(project, "export", "agent-trace")
    assert exported.returncode == 0, out(exported)
    (record,) = [json.loads(line) for line in exported.stdout.splitlines()]
    valid(record)
    assert git(project, "status", "--porcelain") == ""  # the working branch: untouched
    fresh = tmp_path / "fresh"
    # a clone of the working branch alone: no remote state to join, a fresh one is made
    git(tmp_path, "clone", "-q", "--single-branch", str(project), str(fresh))
    assert gasp(fresh, "init", "--branch", "--agent-id", "other").returncode == 0
    traces = tmp_path / "traces.jsonl"
    traces.write_bytes(exported.stdout)
    proc = gasp(fresh, "import", "agent-trace", str(traces))
    assert proc.returncode == 0, out(proc)
    assert gasp(fresh, "import", "agent-trace", str(traces)).stdout.count(b"1 already") == 1
    lines = [json.loads(line) for line in
             gasp(fresh, "blame", "--json", "app.py").stdout.splitlines()]
    assert [(o["commit"] == sha, o["patch"]) for o in lines] == [
        (False, None), (False, None), (True, None), (True, None)]
    ai = lines[2]["ai"]
    assert ai["source"] == "agent-trace" and ai["model"] == "anthropic/claude-opus-4-5"
    assert ai["record"] == record["id"]
    kept = AgentState.open(_state_root(fresh), "reader").graph.node(ai["observation"])
    gasp_ids = kept["props"]["metadata"]["agent_trace"]["gasp"]
    assert gasp_ids["patch"] == record["metadata"]["dev.git-gasp"]["patch"]
    assert gasp_ids["run"] == run
    # the record read back is the record written: ranges, contributor, related, commit
    conv = kept["props"]["metadata"]["agent_trace"]["files"][0]["conversations"][0]
    exported_conv = record["files"][0]["conversations"][0]
    assert conv["ranges"] == [[r["start_line"], r["end_line"]] for r in exported_conv["ranges"]]
    assert conv["contributor"] == exported_conv["contributor"]
    assert conv["related"] == exported_conv["related"]


def _state_root(project: Path) -> Path:
    from git_gasp.store.location import require_root

    return Path(require_root(project))


@pytest.mark.parametrize(("ts_ms", "stamp"), [
    (2**63 - 1, "9999-12-31T23:59:59.999Z"), (-(2**63), "0001-01-01T00:00:00.000Z"),
    (253_402_300_799_999, "9999-12-31T23:59:59.999Z"), (-1, "1969-12-31T23:59:59.999Z")])
@pytest.mark.slow  # over half a second: out of the fast loop
def test_export_of_a_patch_at_an_extreme_but_conformant_time(agent, ts_ms, stamp):
    """A `patch.proposed` whose ts_ms is any int64 (check 1 takes it) exports a valid
    record: the nearest time RFC 3339 can say, the event's own ts_ms kept beside it
    when that is not it ("year out of range" was an internal error, exit 3)."""
    write(agent, "code.py", b"x = 1\n")
    sha = commit_all(agent, "code")
    goal = gasp(agent, "record", "goal", "--title", "g").stdout.decode().strip()
    proc = gasp(agent, "record", "patch", "--title", "extreme", "--commit", sha,
                "--advances", goal)
    assert proc.returncode == 0, out(proc)
    log = agent / "state/events.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    lines[-2:] = [re.sub(rb'"ts_ms":-?\d+', b'"ts_ms":%d' % ts_ms, x) for x in lines[-2:]]
    log.write_bytes(b"".join(lines))
    assert gasp(agent, "check").returncode == 0, out(gasp(agent, "check"))
    proc = gasp(agent, "export", "agent-trace")
    assert proc.returncode == 0, out(proc)
    (record,) = [json.loads(x) for x in proc.stdout.splitlines()]
    valid(record)
    assert record["timestamp"] == stamp
    kept = record["metadata"]["dev.git-gasp"].get("ts_ms")
    assert kept == (None if -62_135_596_800_000 <= ts_ms <= 253_402_300_799_999 else ts_ms)
