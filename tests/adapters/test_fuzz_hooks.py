"""Hook payloads from outside: whatever bytes an agent (or anyone who can run the hook)
sends, the hook exits 0 and prints nothing (README: "A hook always exits 0 within its
budget"), the drain records the payload or sets it aside as not understood, never
failing on it (an internal error, logged as "recording it failed"), and the repository
stays conformant (`git gasp check` exits 0) with `git gasp doctor` exiting 0 or 1.

The inputs: arbitrary bytes, arbitrary JSON, and the real Claude Code and Codex payloads
(`tests/adapters/data/`) with hostile atoms in any of their fields, at any depth: numbers
past Python's digit limit, beyond 64 bits or a double's range, NaN and infinities,
nesting past any stack and past the log's 127 levels, wrong types, over-long strings and
keys, lone surrogates, invalid UTF-8, an exit code of 5,000 digits.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_gasp.adapters.agent_hook_queue import entry_payload
from git_gasp.adapters.live import run_hook
from git_gasp.adapters.payloads import parse_hook_payload, trim_payload
from git_gasp.adapters.session_writer import run_id_for
from git_gasp.base.errors import GaspError
from git_gasp.base.ids import valid_id
from git_gasp.protocol.jsonstrict import dumps_canonical
from git_gasp.redact.redactor import Redactor
from tests.adapters.samples import CLAUDE_HOOKS, CODEX_HOOKS, read_jsonl
from tests.testing.repos import copy_repo
from tests.testing.run import drained, gasp, git, out

pytestmark = pytest.mark.slow  # hypothesis, and a repository per example

REAL = [("claude-code", r) for r in read_jsonl(CLAUDE_HOOKS)] + [
    ("codex", r) for r in read_jsonl(CODEX_HOOKS)]
HOLE = "\x00HOLE\x00"
ATOMS = [
    b"9" * 5000, b"-" + b"9" * 400, b"18446744073709551616", b"-9223372036854775809",
    b"1e999", b"-1e400", b"1.7976931348623157e308", b"NaN", b"Infinity", b"-Infinity",
    b"-0", b"0", b"-1", b"1.5", b"null", b"true", b"false", b"[]", b"{}", b'""', b'"x"',
    b"[" * 3000 + b"]" * 3000, b"[" * 200 + b"]" * 200, b'{"a":' * 150 + b"1" + b"}" * 150,
    b"[" + b"1," * 5000 + b"1]", b'{"k": 1, "k": [2]}', b'{"' + b"k" * 20000 + b'": 1}',
    b'"' + b"a " * 60000 + b'"', b'"\\ud83d"', b'"\\udc00\\ud800x"', b'"\xff\xfe\x80"',
    b'"\xed\xa0\xbd"', b'"\\u0000\\u001b[2J\\u2028"', b'"\\\\ud83d"', b'"/"',
    b'"/nonexistent/.claude/projects/p/s.jsonl"', b'"Exit code ' + b"9" * 5000 + b'"',
    b'"Exit code 1\\nboom"', b'{"exit_code": 1e999}', b'{"exitCode": 99999999999999999999999}',
    b'{"exit_code": true, "interrupted": "yes", "is_error": 1}', b'{"stdout": 5, "stderr": []}',
    b'[{"type": "text", "text": 7}, null]', b'"SessionEnd"', b'"PostToolUseFailure"',
    b'"PostToolUse"', b'"Stop"', b'"SessionStart"', b'"Notification"',
]
atoms = st.sampled_from(ATOMS)
FAST = settings(max_examples=300, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
REPOS = settings(max_examples=80, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                        HealthCheck.function_scoped_fixture])


def _paths(value, at=()) -> list[tuple]:
    """Every place in a JSON value (the keys and indexes down to it)."""
    found = [at] if at else []
    if isinstance(value, dict):
        for k, v in value.items():
            found += _paths(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += _paths(v, (*at, i))
    return found


@st.composite
def mutated(draw, repo: str | None = None) -> tuple[str, bytes]:
    """(agent, bytes): a real payload (each event as likely) with 1-3 of its fields (or
    new ones) replaced by hostile atoms, written as its agent's JSON."""
    agent = draw(st.sampled_from(["claude-code", "codex"]))
    rows = [r for a, r in REAL if a == agent]
    event = draw(st.sampled_from(sorted({r["hook_event_name"] for r in rows})))
    row = draw(st.sampled_from([r for r in rows if r["hook_event_name"] == event]))
    row = json.loads(json.dumps(dict(row, cwd=repo) if repo else row))
    holes = []
    for _ in range(draw(st.integers(1, 3))):
        places = _paths(row) + [("new-key",), ("tool_response", "exit_code")]
        place = draw(st.sampled_from(places))
        parent = row
        try:
            for key in place[:-1]:
                parent = parent[key]
            parent[place[-1]] = f"{HOLE}{len(holes)}"
        except (KeyError, IndexError, TypeError):
            continue
        holes.append(draw(atoms))
    data = json.dumps(row).encode()
    for n, atom in enumerate(holes):
        data = data.replace(json.dumps(f"{HOLE}{n}").encode(), atom)
    return agent, data


def _json_values() -> st.SearchStrategy:
    scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30)
    return st.recursive(scalars, lambda c: st.lists(c, max_size=4)
                        | st.dictionaries(st.text(max_size=10), c, max_size=4), max_leaves=20)


def _shaped(repo: str | None = None) -> st.SearchStrategy:
    """Arbitrary JSON, sometimes an object with a hook payload's keys."""
    keys = st.fixed_dictionaries({
        "session_id": st.sampled_from(["s-fuzz", "", 7]) | _json_values(),
        "hook_event_name": st.sampled_from(["SessionStart", "UserPromptSubmit", "PreToolUse",
                                            "PostToolUse", "PostToolUseFailure", "Stop",
                                            "SessionEnd"]) | _json_values(),
        **({"cwd": st.just(repo)} if repo else {}),
    }, optional={k: _json_values() for k in (
        "transcript_path", "prompt", "tool_name", "tool_input", "tool_use_id", "tool_response",
        "error", "last_assistant_message", "source", "reason", "model", "turn_id")})
    return (keys | _json_values()).map(lambda v: json.dumps(v).encode())


def _reads_or_refuses(name: str, data: bytes) -> None:
    """The drain's reading of one entry: a GaspError, or a payload the log can hold."""
    try:
        agent, payload = entry_payload(name, data)
        clean = Redactor().value(trim_payload(payload))
        parse_hook_payload(clean, agent)
    except GaspError:
        return
    except Exception as exc:  # noqa: BLE001 - the point of the test
        pytest.fail(f"reading the entry raised {type(exc).__name__}: {str(exc)[:200]}")
    dumps_canonical(clean)  # valid text, finite numbers, 64-bit integers, not too deep


@FAST
@given(st.binary(max_size=400) | _shaped() | mutated().map(lambda m: m[1]),
       st.sampled_from(["claude-code", "codex", "detect"]))
def test_the_drain_reads_any_entry_or_refuses_it(data, tag):
    _reads_or_refuses(f"00000000000000000001-00000001-00000000.{tag}.payload", data)


def _places() -> list[tuple[str, dict, tuple]]:
    """(agent, payload, place) for every field, at any depth, of one real payload of each
    of the agents' events, and a field it lacks."""
    firsts = {(a, r["hook_event_name"]): r for a, r in reversed(REAL)}
    return [(a, r, p) for (a, _), r in sorted(firsts.items())
            for p in [*_paths(r), ("tool_response", "exit_code"), ("new-key",)]]


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_every_atom_in_every_field_reads_or_refuses(agent):
    """Not left to chance: each hostile atom in each field of each event's payload (an
    exit code of 5,000 digits in a failure's `error` made int() raise)."""
    for who, row, place in _places():
        if who != agent:
            continue
        for atom in ATOMS:
            doc = json.loads(json.dumps(row))
            parent = doc
            try:
                for key in place[:-1]:
                    parent = parent[key]
                parent[place[-1]] = HOLE
            except (KeyError, IndexError, TypeError):
                continue  # a field the payload lacks the parent of
            data = json.dumps(doc).encode().replace(json.dumps(HOLE).encode(), atom)
            _reads_or_refuses(f"00000000000000000001-00000001-00000000.{agent}.payload", data)


def _log(repo: Path) -> str:
    path = Path(git(repo, "rev-parse", "--absolute-git-dir").strip()) / "gasp" / "adapter.log"
    return path.read_text(errors="replace") if path.exists() else ""


def _still_sound(repo: Path) -> None:
    """Recorded or set aside, never failed on; the repository conformant; doctor's verdict
    an exit status it documents."""
    log = _log(repo)
    assert "recording it failed" not in log and " error: " not in log, log[-3000:]
    qdir = Path(git(repo, "rev-parse", "--absolute-git-dir").strip()) / "gasp" / "queue"
    assert not list(qdir.glob("*.payload")), "an entry stayed queued: " + log[-2000:]
    check = gasp(repo, "check")
    assert check.returncode == 0, out(check)
    doctor = gasp(repo, "doctor")
    assert doctor.returncode in (0, 1) and "Traceback" not in out(doctor), out(doctor)


@REPOS
@given(st.data())
def test_the_drain_records_or_sets_aside_every_payload(agent_template, tmp_path_factory, data):
    """In one session of a real agent: its start, a hostile payload, its end."""
    repo = copy_repo(agent_template, tmp_path_factory.mktemp("fuzz") / "agent")
    agent, hostile = data.draw(mutated(str(repo)) | _shaped(str(repo)).map(
        lambda b: ("claude-code", b)))
    rows = [r for a, r in REAL if a == agent]
    sid = next(r["session_id"] for r in rows)
    start = next(r for r in rows if r["hook_event_name"] == "SessionStart")
    end = next(r for r in rows if r["hook_event_name"] == "SessionEnd")
    for payload in (json.dumps(dict(start, cwd=str(repo))).encode(), hostile,
                    json.dumps(dict(end, cwd=str(repo), session_id=sid)).encode()):
        what = run_hook(payload, agent=agent, repo=str(repo), budget_s=60)
        assert not what.startswith("error"), (what, _log(repo)[-2000:])
    _still_sound(repo)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300) | _shaped() | mutated().map(lambda m: m[1]),
       st.sampled_from(["claude-code", "codex"]))
def test_the_installed_hook_exits_0_on_any_input(agent_template, tmp_path_factory, data, agent):
    """`git gasp adapt hook --agent A` as the agent runs it, in the repo, payload on stdin."""
    repo = copy_repo(agent_template, tmp_path_factory.mktemp("fuzz") / "agent")
    env = dict(os.environ, GASP_HOOK_BUDGET="60")
    proc = subprocess.run(["git", "gasp", "adapt", "hook", "--agent", agent], cwd=repo,
                          input=data, capture_output=True, env=env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b""), out(proc)
    drained(repo, env)  # the hook only queues: what its drainer records
    _still_sound(repo)


@FAST
@given(st.text(min_size=1, max_size=300), st.sampled_from(["claude-code", "codex"]))
def test_any_session_id_makes_a_usable_run_id(session_id, agent):
    """A session id "ª" made ``run_claude-code.ª``, which the runtime refuses as an id."""
    assert valid_id(run_id_for(agent, session_id))
