"""No secret from a session reaches the repo, whatever field it is in (#24, item 1).

Every string field of the real Claude Code and Codex samples (transcripts and hook
payloads) gets a GitHub token and an AWS key planted (``tests/testing/planting.py``
finds the fields by walking the samples, so a new field is covered without naming it),
then the installed `git gasp` imports or hooks them as a user's agent would, with the
boundary commits the tool makes; no planted secret may be anywhere in the repo: any
commit, any object (archives opened), any work-tree file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_gasp.adapters.claude_code import parse_transcript
from git_gasp.adapters.codex import parse_rollout
from git_gasp.adapters.lifting import command_of, is_commit_command, is_test_command, lift
from git_gasp.adapters.payloads import parse_hook_payload
from git_gasp.base.errors import GaspError
from tests.adapters.samples import CLAUDE_HOOKS, CLAUDE_TRANSCRIPT, CODEX_HOOKS, CODEX_ROLLOUT
from tests.testing.planting import copies, jsonl, leaks, plant, read_jsonl, secrets_for
from tests.testing.repos import copy_repo
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow  # every session field planted, through the CLI

PARSERS = {"claude-code": parse_transcript, "codex": parse_rollout}


def transcript_meaning(agent: str):
    """What a transcript means: the kinds of its records and of what is lifted from them."""
    def signature(rows: list) -> tuple:
        t = PARSERS[agent](jsonl(rows))
        return [r.kind for r in t.records], [i.kind for i in lift(t.records)]
    return signature


def hooks_meaning(agent: str):
    """What a session's hook payloads mean: each one's event, session and tool, and what
    the lifting rules see in its command."""
    def signature(rows: list) -> list:
        sig = []
        for row in rows:
            try:
                h = parse_hook_payload(row, agent)
            except GaspError:
                sig.append(None)
                continue
            cmd = command_of(h.tool_input)
            sig.append((h.event, h.session_id == rows[0].get("session_id"), h.tool_name,
                        cmd is not None and is_test_command(cmd),
                        cmd is not None and is_commit_command(cmd)))
        return sig
    return signature


def _secrets(tag: str, group: set[str]) -> dict:
    return {f: secrets_for(tag, f) for f in group}


def _assert_clean(repo: Path, planted: dict) -> None:
    assert planted, "nothing was planted"
    found = leaks(repo, planted)
    assert not found, "planted secrets reached the repo:\n" + "\n".join(found[:20])


@pytest.mark.parametrize(("agent", "sample"), [("claude-code", CLAUDE_TRANSCRIPT),
                                               ("codex", CODEX_ROLLOUT)])
def test_a_secret_in_any_transcript_field_reaches_no_commit(agent, sample, agent_template,
                                                             tmp_path):
    rows = read_jsonl(sample)
    groups = copies(rows, transcript_meaning(agent))
    assert len(groups) > 1 and sum(map(len, groups)) > 50  # the walk found the fields
    for n, group in enumerate(groups):
        repo = copy_repo(agent_template, tmp_path / f"repo{n}")
        tag = f"{agent}-{n}"
        path = tmp_path / f"session{n}.jsonl"
        path.write_bytes(jsonl(plant(rows, group, tag)))
        proc = gasp(repo, "import", agent, str(path))
        assert proc.returncode in (0, 1), out(proc)  # never an internal error
        _assert_clean(repo, _secrets(tag, group))
    # the copy with most fields planted was imported and committed, not skipped
    assert "committed" in out(proc) or git(repo, "log", "--format=%s").count("\n") > 1


@pytest.mark.parametrize(("agent", "sample"), [("claude-code", CLAUDE_HOOKS),
                                               ("codex", CODEX_HOOKS)])
def test_a_secret_in_any_hook_payload_field_reaches_no_commit(agent, sample, agent_template,
                                                               tmp_path):
    rows = read_jsonl(sample)
    groups = copies(rows, hooks_meaning(agent))
    assert len(groups) > 1 and sum(map(len, groups)) > 10
    for n, group in enumerate(groups):
        repo = copy_repo(agent_template, tmp_path / f"repo{n}")
        tag = f"{agent}-hooks-{n}"
        for payload in plant(rows, group, tag):
            proc = gasp(repo, "adapt", "hook", "--agent", agent,
                        input=json.dumps(payload).encode())
            assert proc.returncode == 0, out(proc)
        proc = gasp(repo, "adapt", agent, "reconcile")  # closes a run a planted event left open
        assert proc.returncode in (0, 1), out(proc)
        _assert_clean(repo, _secrets(tag, group))
    assert "run.finished" in (repo / "state" / "events.jsonl").read_text()


@pytest.mark.parametrize(("agent", "hooks", "transcript"), [
    ("claude-code", CLAUDE_HOOKS, CLAUDE_TRANSCRIPT), ("codex", CODEX_HOOKS, CODEX_ROLLOUT)])
def test_a_redacted_id_still_names_one_run_from_hooks_and_transcript(agent, hooks, transcript,
                                                                      agent_template, tmp_path):
    """A session id and tool call ids holding a secret, in the hook payloads and the
    transcript alike: the hooks record the session (Codex's exit codes still found in the
    rollout by call id), and importing the transcript afterwards adds nothing."""
    repo = copy_repo(agent_template, tmp_path / "repo")
    rows = read_jsonl(hooks)
    ids = {rows[0]["session_id"]} | {r["tool_use_id"] for r in rows if r.get("tool_use_id")}
    planted = {i: f"{i} {secrets_for(agent, i)[0]}" for i in ids}

    def swap(data: bytes) -> bytes:
        for old, new in planted.items():
            data = data.replace(json.dumps(old).encode(), json.dumps(new).encode())
        return data

    session = tmp_path / ".session" / ("rollout-x.jsonl" if agent == "codex" else "s.jsonl")
    session.parent.mkdir()
    session.write_bytes(swap(transcript.read_bytes()))
    for row in rows:
        row.update(cwd=str(repo), transcript_path=str(session))
        proc = gasp(repo, "adapt", "hook", "--agent", agent, input=swap(json.dumps(row).encode()))
        assert proc.returncode == 0, out(proc)
    log = (repo / "state" / "events.jsonl").read_bytes()
    assert b"run.finished" in log
    evals = [json.loads(line)["payload"]["status"] for line in log.splitlines()
             if b'"eval.finished"' in line]
    assert evals == ["Failed", "Failed" if agent == "codex" else "Passed"]
    again = gasp(repo, "import", agent, str(session))
    assert again.returncode == 0 and "already imported" in out(again), out(again)
    assert (repo / "state" / "events.jsonl").read_bytes() == log
    _assert_clean(repo, {i: secrets_for(agent, i) for i in ids})
