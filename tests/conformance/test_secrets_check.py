"""`check` reports a secret in a state file (issue 49): a note on check 6 naming the
file, the line, the detector and the fingerprint, never the secret; a failure under
`--strict`; an allowlisted fingerprint is not reported; the scan is cached per file
and resumes where the file grew."""

from __future__ import annotations

import json
from pathlib import Path

from git_gasp.conformance.runner import check_repo
from git_gasp.conformance.secrets_check import CACHE
from git_gasp.redact.scan import fingerprint
from tests.testing.events import goal_pair, line, ops
from tests.testing.planting import family_tokens
from tests.testing.run import gasp, git

TOKENS = family_tokens("check")
GH = TOKENS["github_token"]


def _leak(agent: Path) -> None:
    with open(agent / "state/events.jsonl", "ab") as fh:
        fh.write(goal_pair(1) + line("event_x", "goal.created",
                                     {"id": "goal_x", "title": f"use {GH}", "status": "Open"})
                 + ops("event_xo", "event_x", {"CreateNode": {"id": "goal_x", "kind": "goal",
                                                                "props": {"status": "Open"}}}))
    git(agent, "add", "-A")
    git(agent, "commit", "-q", "--no-verify", "-m", "leak")


def test_a_secret_is_a_note_and_a_failure_under_strict(agent: Path):
    _leak(agent)
    fp = fingerprint("github_token", GH)
    proc = gasp(agent, "check")
    text = proc.stdout.decode()
    assert proc.returncode == 0, text
    assert f"note: state/events.jsonl:3: github_token secret (fingerprint {fp})" in text, text
    assert GH not in text
    strict = gasp(agent, "check", "--strict", "--json")
    assert strict.returncode != 0
    six = json.loads(strict.stdout)["checks"][5]
    assert six["failures"][0]["path"] == "state/events.jsonl" and six["failures"][0]["line"] == 3
    (agent / ".agent/secrets-allow").write_text(f"{fp}  # a revoked example\n")
    assert gasp(agent, "check", "--strict").returncode == 0


def test_the_scan_is_cached_and_resumes_where_the_log_grew(agent: Path):
    _leak(agent)
    first = check_repo(agent).checks[5].all_notes()
    cache = json.loads((agent / ".git" / Path(*CACHE)).read_text())
    entry = cache["state/events.jsonl"]
    assert entry["length"] == (agent / "state/events.jsonl").stat().st_size
    with open(agent / "state/events.jsonl", "ab") as fh:
        fh.write(goal_pair(2))
    again = check_repo(agent).checks[5].all_notes()
    assert again == first and len(first) == 1
    (agent / "state/events.jsonl").write_bytes(goal_pair(1))  # rewritten: scanned afresh
    assert check_repo(agent).checks[5].soft == []


def test_an_unchanged_file_is_not_read_again(agent: Path, monkeypatch):
    from git_gasp.conformance import secrets_check

    _leak(agent)
    first = check_repo(agent).checks[5].all_notes()
    real = secrets_check.read_regular

    def refuse_the_log(root, rel):
        assert rel != "state/events.jsonl", "the unchanged log was read again"
        return real(root, rel)

    monkeypatch.setattr(secrets_check, "read_regular", refuse_the_log)
    assert check_repo(agent).checks[5].all_notes() == first
