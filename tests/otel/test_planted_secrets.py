"""No secret from a trace reaches the repo, whatever field it is in (#24, item 1).

Every string field of every OTLP sample (one request per line, and a ``.json`` file
holding one) gets a GitHub token and an AWS key planted, each attribute a field of its
own (``tests/testing/planting.py`` walks the samples: a new attribute is covered without
naming it); the installed `git gasp import otel` records them with its boundary
commits, and no planted secret may be anywhere in the repo afterwards. A planted field
that makes the file unreadable (an id that is no longer hex) must be refused with one
error line, exit status 1, nothing written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_gasp.base.errors import FormatError
from git_gasp.otel.importer import group_runs
from git_gasp.otel.otlp import read_spans
from tests.testing.planting import copies, jsonl, leaks, plant, read_jsonl, secrets_for
from tests.testing.repos import copy_repo
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow  # every trace field planted, through the CLI

DATA = Path(__file__).parent / "data"
SAMPLES = ["otel-foreign.jsonl", "otel-golden.jsonl", "otel-langchain-openinference.jsonl",
           "otel-openai-agents-openinference.jsonl", "otel-openai-agents-openllmetry.jsonl"]


def _encode(rows: list, suffix: str) -> bytes:
    return json.dumps(rows[0], indent=1).encode() if suffix == ".json" else jsonl(rows)


def meaning(suffix: str):
    """What a trace file means: its runs (agent span or not, the roles of their calls)
    and the spans no run takes, or that it is refused."""
    def signature(rows: list):
        try:
            spans = read_spans(_encode(rows, suffix), "t" + suffix)
        except FormatError:
            return "refused"
        runs, unused = group_runs(spans)
        return [(r.root is not None, [role for role, _ in r.calls]) for r in runs], unused
    return signature


CASES = [(name, ".jsonl") for name in SAMPLES] + [("otel-foreign.jsonl", ".json")]


@pytest.mark.parametrize(("sample", "suffix"), CASES)
def test_a_secret_in_any_span_field_reaches_no_commit(sample, suffix, agent_template,
                                                      tmp_path):
    rows = read_jsonl(DATA / sample)
    if suffix == ".json":
        rows = rows[:1]
    groups = copies(rows, meaning(suffix))
    assert len(groups) > 1 and sum(map(len, groups)) > 10  # the walk found the fields
    imported = 0
    for n, group in enumerate(groups):
        repo = copy_repo(agent_template, tmp_path / f"repo{n}")
        tag = f"{sample}-{suffix}-{n}"
        planted = plant(rows, group, tag)
        path = tmp_path / f"trace{n}{suffix}"
        path.write_bytes(_encode(planted, suffix))
        head = git(repo, "rev-parse", "HEAD")
        proc = gasp(repo, "import", "otel", str(path))
        sig = meaning(suffix)(planted)
        if sig == "refused":
            assert proc.returncode == 1, out(proc)
            assert out(proc).startswith("git gasp: error: ") and out(proc).count("\n") == 1
            assert git(repo, "rev-parse", "HEAD") == head
            assert git(repo, "status", "--porcelain") == ""
        else:
            assert proc.returncode == 0, out(proc)
            if sig[0]:  # it holds runs: each was recorded and committed
                assert git(repo, "rev-parse", "HEAD") != head, out(proc)
                imported += 1
        found = leaks(repo, {f: secrets_for(tag, f) for f in group})
        assert not found, "planted secrets reached the repo:\n" + "\n".join(found[:20])
    assert imported >= 1  # the copy with most fields planted, at least, holds runs
