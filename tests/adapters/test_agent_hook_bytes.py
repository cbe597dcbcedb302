"""The agent hook queues the bytes the agent sent, whatever their encoding, and reads them
as valid text only when it drains the queue; what it cannot understand is set aside and
reported by `git gasp doctor`, never dropped (#31 item 4).

Each test runs the installed ``git gasp adapt hook --agent A`` as Claude Code and Codex
call it: the payload on stdin, the repo as the working directory."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
from pathlib import Path

import pytest

from git_gasp.adapters.session_writer import run_id_for
from git_gasp.base.fileops import try_lock
from git_gasp.store.lease import Lease
from tests.adapters.samples import CLAUDE_HOOKS, CLAUDE_TRANSCRIPT, CODEX_HOOKS, read_jsonl
from tests.testing.run import drained, gasp, git, out

pytestmark = pytest.mark.slow  # a git gasp process per payload

SAMPLES = {"claude-code": CLAUDE_HOOKS, "codex": CODEX_HOOKS}
CUT = "cut mid-emoji \ud83d"  # what Node's JSON.stringify makes of "…😀" sliced in two
QUICK = {"GASP_HOOK_BUDGET": "1"}  # a hook that cannot drain gives up at once


def _gasp_dir(repo: Path) -> Path:
    return Path(git(repo, "rev-parse", "--absolute-git-dir").strip()) / "gasp"


def _hook(repo: Path, agent: str, data: bytes, env: dict | None = None) -> None:
    """One hook as the agent runs it (it always exits 0 and says nothing), then what its
    drainer records."""
    env = dict(os.environ, **(env or {}))
    proc = subprocess.run(["git", "gasp", "adapt", "hook", "--agent", agent], cwd=repo,
                          input=data, capture_output=True, env=env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b""), out(proc)
    drained(repo, env)


def _rows(repo: Path, agent: str, sid: str, **extra) -> dict[str, dict]:
    """The agent's real payloads by event (the last of each), in this repo and session."""
    rows = {r["hook_event_name"]: dict(r, cwd=str(repo), session_id=sid, **extra)
            for r in read_jsonl(SAMPLES[agent])}
    return rows


def _node_js(payload: dict) -> bytes:
    """`payload` as Node writes it: a lone surrogate as its ``\\udXXX`` escape."""
    return json.dumps(payload).encode()


def _queue(repo: Path) -> list[Path]:
    return sorted((_gasp_dir(repo) / "queue").glob("*.payload"))


def _set_aside(repo: Path) -> list[Path]:
    return sorted((_gasp_dir(repo) / "queue" / "failed").glob("*.payload"))


def _run(repo: Path, agent: str, sid: str) -> dict:
    proc = gasp(repo, "fold", "--json")
    assert proc.returncode == 0, out(proc)
    return json.loads(proc.stdout)["nodes"][run_id_for(agent, sid)]


def _conformant_utf8(repo: Path) -> str:
    check = gasp(repo, "check")
    assert check.returncode == 0, out(check)
    return (repo / "state" / "events.jsonl").read_bytes().decode("utf-8")  # strict


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_a_session_end_with_a_lone_surrogate_is_recorded_and_closes_the_run(agent, tmp_path):
    assert gasp(tmp_path, "init", "bot").returncode == 0
    repo = tmp_path / "bot"
    extra = {}
    if agent == "claude-code":  # the transcript holds the same cut string
        transcript = tmp_path / "session.jsonl"
        lines = CLAUDE_TRANSCRIPT.read_text().splitlines()
        cut = json.loads(lines[-1])
        cut["message"] = {"role": "assistant", "content": [{"type": "text", "text": CUT}]}
        transcript.write_text("\n".join([*lines, json.dumps(cut)]) + "\n")
        extra["transcript_path"] = str(transcript)
    rows = _rows(repo, agent, "s-cut", **extra)
    _hook(repo, agent, _node_js(rows["SessionStart"]))
    _hook(repo, agent, _node_js(dict(rows["Stop"], last_assistant_message=CUT)))
    end = _node_js(dict(rows["SessionEnd"], reason=CUT))
    assert b"\\ud83d" in end
    _hook(repo, agent, end)
    run = _run(repo, agent, "s-cut")
    assert run["props"]["status"] == "finished", run
    assert git(repo, "log", "-1", "--format=%s").startswith(f"run {run_id_for(agent, 's-cut')}")
    assert "cut mid-emoji \ufffd" in _conformant_utf8(repo)
    assert not _queue(repo) and not _set_aside(repo)
    for archive in (repo / "transcripts").glob("*.jsonl.gz"):
        assert "cut mid-emoji \ufffd" in gzip.decompress(archive.read_bytes()).decode("utf-8")


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_invalid_utf8_is_queued_unchanged_and_recorded_with_replacement(agent, tmp_path):
    assert gasp(tmp_path, "init", "bot").returncode == 0
    repo = tmp_path / "bot"
    rows = _rows(repo, agent, "s-bytes")
    _hook(repo, agent, _node_js(rows["SessionStart"]))
    prompt = dict(rows["UserPromptSubmit"], prompt="@PROMPT@")
    # a BOM, invalid UTF-8 (a stray continuation byte, a cut sequence), CRLF
    data = b"\xef\xbb\xbf" + _node_js(prompt).replace(
        b"@PROMPT@", b"write \x80 the \xe2\x82 docs") + b"\r\n"
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    with try_lock(_gasp_dir(repo) / "hook.lock", 5) as got:  # another hook is draining
        assert got
        _hook(repo, agent, data, env=QUICK)
        [entry] = _queue(repo)
        assert entry.read_bytes() == data  # the agent's bytes, not a re-encoding
        assert entry.name.endswith(f".{agent}.payload")
    _hook(repo, agent, _node_js(dict(rows["Stop"], last_assistant_message="done")))
    assert not _queue(repo) and not _set_aside(repo)
    log = _conformant_utf8(repo)
    assert "write \ufffd the \ufffd docs" in log
    assert _run(repo, agent, "s-bytes")["props"]["goal_id"]


def test_nothing_is_lost_while_the_lease_is_held(tmp_path):
    """A SessionEnd with a lone surrogate queued while another writer holds the lease is
    recorded, closing the run, by the next hook once the lease is free."""
    assert gasp(tmp_path, "init", "bot").returncode == 0
    repo = tmp_path / "bot"
    rows = _rows(repo, "claude-code", "s-lease")
    _hook(repo, "claude-code", _node_js(rows["SessionStart"]))
    lease = Lease(repo, "someone-else@host")
    lease.ensure()
    end = _node_js(dict(rows["SessionEnd"], reason=CUT))
    _hook(repo, "claude-code", end, env=QUICK)
    [entry] = _queue(repo)
    assert entry.read_bytes() == end
    assert _run(repo, "claude-code", "s-lease")["props"]["status"] != "finished"
    lease.release()
    _hook(repo, "claude-code", _node_js(rows["SessionStart"] | {"session_id": "s-next"}))
    assert not _queue(repo) and not _set_aside(repo)
    assert _run(repo, "claude-code", "s-lease")["props"]["status"] == "finished"
    _conformant_utf8(repo)


def test_a_payload_the_hook_cannot_understand_is_set_aside_and_doctor_names_it(tmp_path):
    assert gasp(tmp_path, "init", "bot").returncode == 0
    repo = tmp_path / "bot"
    row = _rows(repo, "claude-code", "s-bad")["SessionStart"]
    bad = {
        b"\x00\xffgarbage{": "not JSON",
        b"[1, 2]": "not a JSON object",
        json.dumps(dict(row, hook_event_name="Notification")).encode(): "'Notification' is "
        "not one git-gasp records",
        json.dumps(dict(row, session_id=7)).encode(): "no session_id",
    }
    for data in bad:
        _hook(repo, "claude-code", data)
    aside = _set_aside(repo)
    assert len(aside) == len(bad) and not _queue(repo)
    assert b"\x00\xffgarbage{" in [p.read_bytes() for p in aside]  # kept as it came
    proc = gasp(repo, "doctor", "--json")
    assert proc.returncode == 0, out(proc)  # warnings: nothing is broken
    found = [f for f in json.loads(proc.stdout) if f["topic"] == "queue"]
    assert sorted(f["path"] for f in found) == [str(p) for p in aside]
    for f in found:
        assert f["level"] == "warn" and f["path"] in f["what"] and "move it back" in f["fix"]
    for why in bad.values():
        assert sum(why in f["what"] for f in found) == 1, (why, found)
    text = out(gasp(repo, "doctor"))
    assert f"warn  agent hook event set aside: {aside[0]}: not understood: " in text
    assert gasp(repo, "check").returncode == 0


def test_an_entry_an_older_git_gasp_queued_is_drained(tmp_path):
    assert gasp(tmp_path, "init", "bot").returncode == 0
    repo = tmp_path / "bot"
    rows = _rows(repo, "codex", "s-old")
    qdir = _gasp_dir(repo) / "queue"
    qdir.mkdir(parents=True)
    old = {"agent": "codex", "payload": rows["SessionStart"]}
    (qdir / "00000000000000000001-00000042-abcd1234.json").write_text(json.dumps(old))
    _hook(repo, "codex", _node_js(rows["UserPromptSubmit"]))
    assert not list(qdir.glob("*.json")) and not _set_aside(repo)
    assert _run(repo, "codex", "s-old")["props"]["goal_id"]


def test_a_transcript_path_too_long_for_the_file_system_still_closes_the_run(agent):
    """Found by the fuzz harness: `Path.is_file` raises ENAMETOOLONG (Python 3.11), so
    the SessionEnd failed and the run stayed open."""
    sid = "6f48f32c-63b8-44c3-9f60-37aed18fbcf2"
    rows = _rows(agent, "claude-code", sid)
    _hook(agent, "claude-code", _node_js(rows["SessionStart"]))
    end = dict(rows["SessionEnd"], transcript_path=" ".join(["a"] * 20000))
    _hook(agent, "claude-code", _node_js(end))
    assert _run(agent, "claude-code", sid)["props"]["status"] == "finished"
    assert "recording it failed" not in (_gasp_dir(agent) / "adapter.log").read_text()
    _conformant_utf8(agent)
