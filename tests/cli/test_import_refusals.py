"""Nothing is written on a refusal (#24 item 2): when `git gasp import otel` or a
transcript import refuses its input, with one `git gasp: error:` line and exit 1, the
work tree and every ref are byte for byte what they were."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from tests.adapters.samples import CLAUDE_TRANSCRIPT, CODEX_ROLLOUT
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow  # a git gasp process per input

SPAN = ('{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331",'
        '"name":"invoke_agent bot","startTimeUnixNano":"1","endTimeUnixNano":"2",'
        '"attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"invoke_agent"}}]}')
GOOD_OTLP = '{"resourceSpans":[{"scopeSpans":[{"spans":[' + SPAN + ']}]}]}'


def _state(repo: Path) -> dict:
    """Every file of the work tree (bytes, mode, link target) and every ref."""
    files = {}
    for dirpath, dirnames, names in os.walk(repo):
        dirnames[:] = [d for d in dirnames if not (dirpath == str(repo) and d == ".git")]
        for name in names + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            body = os.readlink(path) if os.path.islink(path) else Path(path).read_bytes()
            files[os.path.relpath(path, repo)] = (st.st_mode, body)
    refs = git(repo, "for-each-ref", "--format=%(refname) %(objectname)")
    return {"files": files, "refs": refs, "HEAD": git(repo, "symbolic-ref", "-q", "HEAD")}


def _truncated_gz(path: Path) -> bytes:
    return gzip.compress(path.read_bytes())[:200]


CASES = [
    ("otel", "bad.json", b'{"resourceSpans":[{"resource":[1]}]}'),
    ("otel", "bad.json", GOOD_OTLP.replace('"1"', '{"intValue": Infinity}').encode()),
    ("otel", "bad.jsonl", (GOOD_OTLP + "\n" + '{"resourceSpans":[{"scopeSpans":[{"scope":"x",'
                           '"spans":[]}]}]}' + "\n").encode()),  # a good line, then a bad
    ("otel", "bad.jsonl", (GOOD_OTLP + "\n{\n").encode()),
    ("claude-code", "session.jsonl.gz", _truncated_gz(CLAUDE_TRANSCRIPT)),
    ("claude-code", "session.jsonl.zst", b"\x28\xb5\x2f\xfd not zstd at all"),
    ("codex", "rollout.jsonl.gz", _truncated_gz(CODEX_ROLLOUT)),
    ("codex", "rollout.jsonl.zst", b"\x28\xb5\x2f\xfd not zstd at all"),
]


@pytest.mark.parametrize(("kind", "name", "data"), CASES,
                         ids=[f"{k}-{n}-{i}" for i, (k, n, _) in enumerate(CASES)])
def test_a_refused_import_writes_nothing(agent, tmp_path, kind, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    before = _state(agent)
    proc = gasp(agent, "import", kind, str(path))
    assert proc.returncode == 1, out(proc)
    lines = out(proc).strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("git gasp: error: "), out(proc)
    assert _state(agent) == before


@pytest.mark.parametrize(("kind", "sample"), [("claude-code", CLAUDE_TRANSCRIPT),
                                              ("codex", CODEX_ROLLOUT)])
def test_an_import_refused_while_a_run_is_open_writes_nothing(agent, tmp_path, kind, sample):
    """The open run keeps its lease between commands: the import is refused at once."""
    assert gasp(agent, "run", "start", "--task", "by hand").returncode == 0
    before = _state(agent)
    proc = gasp(agent, "import", kind, str(sample))
    assert proc.returncode == 1 and out(proc).startswith("git gasp: error: "), out(proc)
    assert _state(agent) == before


def test_a_cut_emoji_late_in_a_transcript_is_imported_not_half_written(agent, tmp_path):
    """Node's JSON.stringify writes a string cut mid-emoji as a lone surrogate escape:
    late in a transcript, it made the import refuse after it had appended the first
    events and written the archive (a half-written run, uncommitted)."""
    lines = CLAUDE_TRANSCRIPT.read_text().splitlines()
    last = max(i for i, line in enumerate(lines) if json.loads(line).get("type") == "assistant")
    lines[last] = lines[last].replace('"text":"', '"text":"\\ud83d cut ', 1)
    assert "\\ud83d cut" in lines[last]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n")
    proc = gasp(agent, "import", "claude-code", str(path))
    assert proc.returncode == 0, out(proc)
    assert git(agent, "status", "--porcelain") == ""
    assert gasp(agent, "check").returncode == 0
    assert "\ufffd cut" in (agent / "state" / "events.jsonl").read_bytes().decode("utf-8")
