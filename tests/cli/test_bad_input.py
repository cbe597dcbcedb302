"""Adversarial input: broken logs, hostile JSON, odd file shapes and a corrupt git store.

Every case must end in a check failure that says where (`--json` carries `line`,
`path` or `commit`) or in one `git gasp: error: …` line — never a traceback and
never a pass. `fold` (lenient) skips lines that do not parse, says so on stderr
with `note:` and succeeds: one bad line must not make a log unfoldable (DESIGN §8).
`fold --strict` and `snapshot` refuse such a log with one line naming file:line.
A log that cannot be read at all (a directory, a symlink) fails every command.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import pytest

from git_gasp.protocol.envelope import EnvelopeError, parse_line, parse_log
from git_gasp.protocol.jsonstrict import MAX_DEPTH, JsonError, loads_strict
from tests.testing.paths import FIXTURE
from tests.testing.run import commit_all, gasp, git, out

pytestmark = pytest.mark.slow  # a CLI run per hostile input

LOG = "state/events.jsonl"
GOOD = (FIXTURE / LOG).read_bytes()
LINES = GOOD.splitlines(keepends=True)  # ten canonical events, each ending in b"\n"


# --------------------------------------------------------------------------- helpers


def event_line(payload: bytes = b"{}", *, ts: bytes = b"1739000000600", eid: bytes = b"event_11",
               kind: bytes = b"run.note") -> bytes:
    """One envelope line (no newline) caused by the fixture's run.started event."""
    return (b'{"id":"' + eid + b'","schema_version":1,"ts_ms":' + ts
            + b',"actor":{"kind":"agent","id":"evolve"},"kind":"' + kind + b'","payload":'
            + payload + b',"causation_id":"event_03","correlation_id":"run_42"}')


def make_repo(tmp_path: Path, log: bytes | None) -> Path:
    """The fixture with `log` as its events file (None: leave the path alone), committed."""
    repo = tmp_path / "agent"
    shutil.copytree(FIXTURE, repo)
    if log is not None:
        (repo / LOG).write_bytes(log)
    git(repo, "init", "-q")
    commit_all(repo, "broken log")
    return repo


def no_traceback(proc: subprocess.CompletedProcess) -> str:
    text = out(proc)
    assert "Traceback" not in text, text
    assert "internal error" not in text, text
    return text


def check_json(repo: Path, *args: str) -> dict:
    """Run `git gasp check --json`; it must exit 1 (not conformant) with a JSON report."""
    proc = gasp(repo, "check", "--json", "--no-cache", *args)
    no_traceback(proc)
    assert proc.returncode == 1, out(proc)
    report = json.loads(proc.stdout)
    assert report["conformant"] is False
    return report


def failures(report: dict, number: int) -> list[dict]:
    (check,) = [c for c in report["checks"] if c["number"] == number]
    assert check["passed"] is (not check["failures"])
    return check["failures"]


def one_line_error(proc: subprocess.CompletedProcess, code: int = 1) -> str:
    """The command failed with exactly one `git gasp: error:` line and nothing else."""
    no_traceback(proc)
    assert proc.returncode == code, out(proc)
    assert proc.stdout == b"", out(proc)
    lines = proc.stderr.decode(errors="replace").splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("git gasp: error: "), lines
    return lines[0]


def assert_line_failure(repo: Path, line: int, needle: str) -> dict:
    """Check 1 fails at `line` of the log with a message containing `needle`."""
    report = check_json(repo)
    fails = failures(report, 1)
    hits = [f for f in fails if f.get("line") == line and f.get("path") == LOG]
    assert hits, fails
    assert any(needle.lower() in f["message"].lower() for f in hits), hits
    # The checks that need a valid log say they cannot be verified, and where.
    for number in (2, 3, 5, 7):
        dependent = failures(report, number)
        assert dependent and dependent[0]["path"] == LOG, (number, dependent)
        assert dependent[0]["line"] == min(f["line"] for f in fails if "line" in f)
    return report


# --------------------------------------------------------------------------- broken logs

BROKEN_LOGS: dict[str, tuple[bytes, int, str]] = {
    # name: (log bytes, first bad line, words of the check-1 message)
    "invalid-utf8": (b"".join(LINES[:2]) + LINES[2].replace(b"fix retry", b"fix \xff\xferetry")
                     + b"".join(LINES[3:]), 3, "invalid UTF-8"),
    "overlong-utf8": (GOOD + event_line(b'{"s":"\xc0\xaf"}') + b"\n", 11, "invalid UTF-8"),
    "nested-100000": (GOOD + event_line(b"[" * 100_000 + b"]" * 100_000) + b"\n", 11,
                      "nested too deeply"),
    "nested-objects-100000": (GOOD + event_line(b'{"a":' * 100_000 + b"1" + b"}" * 100_000)
                              + b"\n", 11, "nested too deeply"),
    "nested-unclosed": (GOOD + b"[" * 100_000 + b"\n", 11, "nested too deeply"),
    "nan": (GOOD + event_line(b'{"score":NaN}') + b"\n", 11, "NaN"),
    "infinity": (GOOD + event_line(b"[Infinity]") + b"\n", 11, "Infinity"),
    "minus-infinity": (GOOD + event_line(b'{"x":{"y":-Infinity}}') + b"\n", 11, "Infinity"),
    "float-overflow": (GOOD + event_line(b"[1e400]") + b"\n", 11, "out of range"),
    "ts-beyond-64-bits": (GOOD + event_line(ts=b"99999999999999999999") + b"\n", 11,
                          "64 bits"),
    "ts-beyond-i64": (GOOD + event_line(ts=b"9223372036854775808") + b"\n", 11, "ts_ms"),
    "payload-int-beyond-64-bits": (
        GOOD + event_line(b'{"a":[1,{"b":[18446744073709551616]}]}') + b"\n", 11, "64 bits"),
    "payload-negative-beyond-64-bits": (
        GOOD + event_line(b'{"a":{"b":-9223372036854775809}}') + b"\n", 11, "64 bits"),
    "payload-int-5000-digits": (GOOD + event_line(b'{"n":' + b"7" * 5000 + b"}") + b"\n", 11,
                                "64 bits"),
    "ts-5000-digits": (GOOD + event_line(ts=b"9" * 5000) + b"\n", 11, "64 bits"),
    "bom-line-1": (b"\xef\xbb\xbf" + GOOD, 1, "byte order mark"),
    "crlf": (GOOD.replace(b"\n", b"\r\n"), 1, "CRLF"),
    "blank-line": (b"".join(LINES[:4]) + b"\n" + b"".join(LINES[4:]), 5, "blank line"),
    "whitespace-line": (b"".join(LINES[:4]) + b" \t \n" + b"".join(LINES[4:]), 5, "blank line"),
    "duplicate-top-level-key": (GOOD + event_line()[:-1] + b',"kind":"run.note"}\n', 11,
                                "duplicate key 'kind'"),
    "duplicate-key-in-payload": (GOOD + event_line(b'{"a":{"b":1,"b":1}}') + b"\n", 11,
                                 "duplicate key 'b'"),
    "duplicate-key-in-op": (
        GOOD + event_line(b'[{"CreateNode":{"id":"n","id":"n","kind":"goal","props":{}}}]',
                          kind=b"state.ops_applied") + b"\n", 11, "duplicate key 'id'"),
    "lone-surrogate": (GOOD + event_line(b'"\\udc00"') + b"\n", 11, "surrogate"),
    "raw-control-character": (GOOD + event_line(b'"a\x00b"') + b"\n", 11, "control character"),
    "trailing-garbage": (GOOD + event_line() + b" x\n", 11, "after the JSON value"),
    "not-an-object": (GOOD + b"[1,2,3]\n", 11, "expected a JSON object"),
    "unknown-field": (GOOD + event_line()[:-1] + b',"extra":1}\n', 11, "unknown field extra"),
    "truncated-line": (b"".join(LINES[:5]) + LINES[5][:40] + b"\n" + b"".join(LINES[6:]), 6,
                       "invalid JSON"),
    "unterminated-last-line": (GOOD[:-1], 10, "no terminating newline"),
    "torn-last-line": (GOOD + LINES[0][:30], 11, "unterminated string starting at column"),
}


@pytest.mark.parametrize("name", sorted(BROKEN_LOGS))
def test_broken_log_fails_check_1_at_its_line(tmp_path, name):
    log, line, needle = BROKEN_LOGS[name]
    repo = make_repo(tmp_path, log)
    assert_line_failure(repo, line, needle)
    # The text report names the place too, as path:line.
    proc = gasp(repo, "check", "--no-cache")
    assert proc.returncode == 1
    assert f"{LOG}:{line}: " in no_traceback(proc)


@pytest.mark.parametrize("name", sorted(BROKEN_LOGS))
def test_broken_log_fold_skips_with_a_note_strict_fold_and_snapshot_refuse(tmp_path, name):
    log, line, needle = BROKEN_LOGS[name]
    repo = make_repo(tmp_path, log)

    lenient = gasp(repo, "fold", "--json")
    no_traceback(lenient)
    assert lenient.returncode == 0, out(lenient)
    notes = lenient.stderr.decode(errors="replace").splitlines()
    assert notes and all(n.startswith("note: ") for n in notes), notes
    assert f"line {line}" in notes[0]
    graph = json.loads(lenient.stdout)
    assert set(graph) == {"nodes", "relations", "version"}

    err = one_line_error(gasp(repo, "fold", "--strict"))
    assert f"{LOG}:{line}: " in err
    assert needle.lower() in err.lower()

    err = one_line_error(gasp(repo, "snapshot"))
    assert f"{LOG}:{line}: " in err
    assert not (repo / "snapshots").exists()


def test_random_bytes_as_the_log(tmp_path):
    rng = random.Random(20260101)
    log = rng.randbytes(64 * 1024)
    repo = make_repo(tmp_path, log)
    report = check_json(repo)
    fails = failures(report, 1)
    bad_lines = parse_log(log).errors
    assert bad_lines, "64 KiB of random bytes cannot be a valid log"
    assert [f["line"] for f in fails] == [e.line for e in bad_lines]
    assert all(f["path"] == LOG for f in fails)
    for number in (2, 3, 5, 7):
        assert failures(report, number)[0]["line"] == bad_lines[0].line

    lenient = gasp(repo, "fold")
    assert lenient.returncode == 0, no_traceback(lenient)
    assert lenient.stderr.decode(errors="replace").startswith("note: ")
    # issue 10: never "(empty log)" for a non-empty log
    assert "(no valid event)" in lenient.stdout.decode()
    one_line_error(gasp(repo, "fold", "--strict"))
    one_line_error(gasp(repo, "snapshot"))


def test_random_binary_without_newlines_never_passes(tmp_path):
    log = bytes(range(256)).replace(b"\n", b"") * 64
    repo = make_repo(tmp_path, log)
    fails = failures(check_json(repo), 1)
    assert {f["line"] for f in fails} == {1}
    assert any("no terminating newline" in f["message"] for f in fails)


# --------------------------------------------------------------------------- a 50 MB line

_PEAK_RSS = """
import resource, subprocess, sys
proc = subprocess.run(sys.argv[1:], capture_output=True, timeout=600)
sys.stdout.buffer.write(b"%d\\n%d\\n" % (proc.returncode,
                        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.stdout.buffer.write(proc.stdout + proc.stderr)
"""


def run_measured(repo: Path, *args: str) -> tuple[int, int, str]:
    """Run `git gasp ARGS` in `repo`; return (exit code, peak RSS in KiB, output)."""
    proc = subprocess.run([sys.executable, "-c", _PEAK_RSS, "git", "gasp", *args], cwd=repo,
                          capture_output=True, check=True)
    code, rss, text = proc.stdout.split(b"\n", 2)
    return int(code), int(rss), text.decode(errors="replace")


def test_a_50_mb_line_parses_and_stays_within_memory(tmp_path):
    big = event_line(b'{"blob":"' + b"x" * 50_000_000 + b'"}')
    repo = make_repo(tmp_path, GOOD + big + b"\n")
    code, rss, text = run_measured(repo, "check", "--no-cache")
    assert "Traceback" not in text
    assert code == 0, text  # a long line is not a bad line
    assert text.rstrip().endswith(": conformant")
    assert rss < 1_200_000, f"peak RSS {rss} KiB for a 50 MB log"

    code, rss, text = run_measured(repo, "fold", "--json")
    assert code == 0, text[-2000:]
    assert rss < 1_200_000, f"peak RSS {rss} KiB for a 50 MB log"
    assert json.loads(text)["nodes"]["patch_9"]["props"]["status"] == "Promoted"


def test_a_50_mb_line_that_is_cut_off_fails_cleanly(tmp_path):
    big = event_line(b'{"blob":"' + b"x" * 50_000_000 + b'"}')[:-100]
    repo = make_repo(tmp_path, GOOD + big + b"\n")
    code, rss, text = run_measured(repo, "check", "--no-cache", "--json")
    assert code == 1, text[-2000:]
    assert rss < 1_200_000, f"peak RSS {rss} KiB for a 50 MB log"
    report = json.loads(text)
    fails = failures(report, 1)
    assert [(f["path"], f["line"]) for f in fails] == [(LOG, 11)]
    assert len(fails[0]["message"]) < 300, "the message must not quote the whole line"


# --------------------------------------------------------------------------- file shapes


def test_log_is_a_directory(tmp_path):
    repo = make_repo(tmp_path, None)
    (repo / LOG).unlink()
    (repo / LOG).mkdir()
    (repo / LOG / "keep").write_text("x\n")
    commit_all(repo, "log becomes a directory")
    report = check_json(repo)
    (fail,) = failures(report, 1)
    assert fail == {"message": f"{LOG} is a directory, not a file", "path": LOG}
    for number in (2, 3, 5, 6, 7):
        assert any(f.get("path") == LOG for f in failures(report, number)), number
    # Deleting the committed log (it is now a tree) violates append-only in git.
    assert failures(report, 4)
    for args in (("fold",), ("fold", "--strict"), ("snapshot",)):
        assert "is a directory" in one_line_error(gasp(repo, *args))


def test_log_is_a_symlink_to_a_file_outside_the_repo(tmp_path):
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_bytes(GOOD)
    repo = make_repo(tmp_path, None)
    (repo / LOG).unlink()
    (repo / LOG).symlink_to(outside)
    report = check_json(repo)
    (fail,) = failures(report, 1)
    assert fail["path"] == LOG and "line" not in fail
    assert "symlink" in fail["message"] and "outside the repo" in fail["message"]
    for args in (("fold",), ("fold", "--json"), ("fold", "--strict"), ("snapshot",)):
        err = one_line_error(gasp(repo, *args))
        assert "symlink" in err
    assert outside.read_bytes() == GOOD, "nothing may be written through the link"


def test_log_is_a_fifo_is_refused_without_blocking(tmp_path):
    repo = make_repo(tmp_path, None)
    fifo = repo / LOG
    fifo.unlink()
    os.mkfifo(fifo)
    blocked = threading.Event()
    done = threading.Event()

    def release_readers() -> None:
        # A reader blocked in open() is released with EOF; note that it happened.
        while not done.wait(0.05):
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # ENXIO: nobody is reading
                continue
            blocked.set()
            os.close(fd)

    helper = threading.Thread(target=release_readers, daemon=True)
    helper.start()
    try:
        report = check_json(repo)
        fold_err = one_line_error(gasp(repo, "fold"))
    finally:
        done.set()
        helper.join()
    (fail,) = failures(report, 1)
    assert fail == {"message": f"{LOG} is not a regular file", "path": LOG}
    assert "not a regular file" in fold_err
    assert any(f.get("path") == LOG for f in failures(report, 4))
    assert not blocked.is_set(), "git gasp opened the FIFO and waited for a writer"


def test_log_missing(tmp_path):
    repo = make_repo(tmp_path, None)
    (repo / LOG).unlink()
    report = check_json(repo)
    (fail,) = failures(report, 1)
    assert fail == {"message": f"{LOG} is missing", "path": LOG}
    assert any("deleted" in f["message"] or "missing" in f["message"]
               for f in failures(report, 4)), failures(report, 4)
    assert "is missing" in one_line_error(gasp(repo, "fold"))
    assert "is missing" in one_line_error(gasp(repo, "snapshot"))


def test_agent_md_missing(tmp_path):
    repo = make_repo(tmp_path, None)
    (repo / "AGENT.md").unlink()
    commit_all(repo, "drop the manifest")
    report = check_json(repo)
    (fail,) = failures(report, 6)
    assert fail["path"] == "AGENT.md" and "missing" in fail["message"]
    assert all(c["passed"] for c in report["checks"] if c["number"] != 6), report
    # The log is still there: folding it does not need the manifest.
    proc = gasp(repo, "fold", "--strict", "--json", str(repo))
    assert proc.returncode == 0, no_traceback(proc)
    assert "goal_retry" in json.loads(proc.stdout)["nodes"]


@pytest.mark.parametrize("manifest", [
    b"# evolve\n\nno manifest block here\n",
    b"---\nspec_version: 1\nagent_id: evolve\n",  # front matter that never closes
    b"```yaml\nspec_version: [1\nagent_id: evolve\n```\n",  # YAML syntax error
    b"```yaml\n- just\n- a list\n```\n",
    b"```yaml\nspec_version: 1\n```\n",  # agent_id missing
    b"```yaml\nspec_version: 1\nagent_id: evolve\n```\n\xff\xfe\n",  # not UTF-8
    b"```yaml\nspec_version: 1\nagent_id: evolve\nlocations:\n  log: ../../etc/passwd\n```\n",
    b"```yaml\nspec_version: 1\nagent_id: !!python/object/apply:os.system [echo]\n```\n",
    b"```yaml\na: &a [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n```\n",
], ids=["no-block", "unclosed", "yaml-error", "not-a-mapping", "no-agent-id", "not-utf8",
        "escaping-location", "python-tag", "recursive-alias"])
def test_agent_md_unparseable(tmp_path, manifest):
    repo = make_repo(tmp_path, None)
    (repo / "AGENT.md").write_bytes(manifest)
    commit_all(repo, "break the manifest")
    report = check_json(repo)
    fails = failures(report, 6)
    assert any(f.get("path") == "AGENT.md" for f in fails), fails
    assert all(len(f["message"].splitlines()) == 1 for f in fails)


def test_agent_md_is_a_symlink(tmp_path):
    repo = make_repo(tmp_path, None)
    (tmp_path / "AGENT.md").write_bytes((repo / "AGENT.md").read_bytes())
    (repo / "AGENT.md").unlink()
    (repo / "AGENT.md").symlink_to(tmp_path / "AGENT.md")
    fails = failures(check_json(repo), 6)
    assert any(f.get("path") == "AGENT.md" and "symlink" in f["message"] for f in fails)


# --------------------------------------------------------------------------- git store


def _blob_id(repo: Path, rev: str) -> str:
    return git(repo, "rev-parse", f"{rev}:{LOG}").strip()


def _corrupt_loose(repo: Path, oid: str, data: bytes) -> None:
    path = repo / ".git" / "objects" / oid[:2] / oid[2:]
    assert path.is_file(), "the blob must be a loose object for this test"
    path.chmod(0o644)
    path.write_bytes(data)


def _two_commits(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path, b"".join(LINES[:5]))
    (repo / LOG).write_bytes(GOOD)
    commit_all(repo, "append five events")
    return repo


@pytest.mark.parametrize("rev", ["HEAD", "HEAD~1"])
@pytest.mark.parametrize("garbage", [
    b"this is not zlib at all",
    zlib.compress(b"blob 5\x00abc"),  # wrong length in the header
    zlib.compress(b"tree 3\x00abc"),  # the wrong type under the blob's id
    b"",
], ids=["not-zlib", "bad-length", "wrong-type", "empty"])
def test_corrupt_log_blob_fails_check_4_closed(tmp_path, rev, garbage):
    repo = _two_commits(tmp_path)
    _corrupt_loose(repo, _blob_id(repo, rev), garbage)
    report = check_json(repo)
    fails = failures(report, 4)
    head = git(repo, "rev-parse", "HEAD").strip()
    # The walk names the commit whose comparison could not be made, and the file.
    assert any(f.get("commit") == head and f.get("path") == LOG for f in fails), fails
    # The working-tree checks do not depend on the store.
    assert failures(report, 1) == []


def test_corrupt_commit_object_fails_check_4_closed(tmp_path):
    repo = _two_commits(tmp_path)
    head = git(repo, "rev-parse", "HEAD~1").strip()
    _corrupt_loose(repo, head, b"\x00garbage")
    fails = failures(check_json(repo), 4)
    assert fails
    assert any(f.get("commit", "").startswith(head[:12]) or head[:12] in f["message"]
               for f in fails), fails


def test_missing_log_blob_fails_check_4_closed(tmp_path):
    repo = _two_commits(tmp_path)
    oid = _blob_id(repo, "HEAD~1")
    (repo / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    fails = failures(check_json(repo), 4)
    assert fails


def test_check_outside_a_git_repository(tmp_path):
    plain = tmp_path / "plain"
    shutil.copytree(FIXTURE, plain)
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(tmp_path)}
    proc = subprocess.run(["git", "gasp", "check", "--json", "--no-cache"], cwd=plain, env=env,
                          capture_output=True)
    no_traceback(proc)
    assert proc.returncode == 1, out(proc)
    report = json.loads(proc.stdout)
    (fail,) = failures(report, 4)
    assert "not inside a git work tree" in fail["message"]
    assert all(c["passed"] for c in report["checks"] if c["number"] != 4), report
    # Text mode says it in one line per failure as well.
    proc = subprocess.run(["git", "gasp", "check", "--no-cache"], cwd=plain, env=env,
                          capture_output=True)
    assert proc.returncode == 1
    assert "FAIL 4 append-only in git" in no_traceback(proc)


def test_check_a_path_that_does_not_exist(tmp_path):
    err = one_line_error(gasp(tmp_path, "check", "/no/such/path"), code=2)
    assert "/no/such/path" in err
    err = one_line_error(gasp(tmp_path, "check", "--json", "/no/such/path"), code=2)
    assert "/no/such/path" in err


def test_check_a_path_that_is_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    err = one_line_error(gasp(tmp_path, "check", str(tmp_path / "f")), code=2)
    assert "not a directory" in err


@pytest.mark.parametrize("command", ["fold", "snapshot"])
def test_fold_and_snapshot_of_a_path_that_does_not_exist(tmp_path, command):
    assert "/no/such/path" in one_line_error(gasp(tmp_path, command, "/no/such/path"), code=2)


def test_fold_at_an_unknown_event(fixture_repo):
    err = one_line_error(gasp(fixture_repo, "fold", "--at", "no_such_event"), code=2)
    assert "no_such_event" in err


# --------------------------------------------------------------------------- library level


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 300, 990, 1100, 100_000])
def test_nesting_limit_is_the_same_at_any_stack_depth(depth):
    """Acceptance must not depend on how deep the caller's stack happens to be."""
    raw = event_line(b"[" * depth + b"]" * depth)

    def at_stack_depth(n: int) -> str:
        if n:
            return at_stack_depth(n - 1)
        try:
            parse_line(raw)
        except EnvelopeError as exc:
            return str(exc)
        return "accepted"

    answers = {at_stack_depth(n) for n in (0, 100, 400)}
    assert len(answers) == 1, answers
    assert "nested too deeply" in answers.pop()


def test_nesting_at_the_limit_is_accepted_and_folds():
    from git_gasp.protocol.fold import fold

    def ops_line(levels: int) -> bytes:
        # envelope, payload list, op, op body: props starts at level 5
        props = b'{"a":' * levels + b"1" + b"}" * levels
        return event_line(b'[{"CreateNode":{"id":"n","kind":"goal","props":' + props
                          + b'}},{"UpdateNode":{"id":"n","props":' + props + b"}}]",
                          kind=b"state.ops_applied")

    event = parse_line(ops_line(MAX_DEPTH - 4), 1)
    result = fold([event], strict=True)
    assert result.graph.version == 2
    with pytest.raises(EnvelopeError, match="nested too deeply"):
        parse_line(ops_line(MAX_DEPTH - 3), 1)


def test_huge_integer_literals_are_envelope_errors_not_crashes():
    for digits in (21, 4300, 4301, 100_000):
        raw = event_line(b"[" + b"1" * digits + b"]")
        with pytest.raises(EnvelopeError, match="64 bits"):
            parse_line(raw)
        with pytest.raises(JsonError):
            loads_strict(b"1" * digits)
    parsed = parse_log(event_line(ts=b"-" + b"9" * 5000) + b"\n")
    assert parsed.events == [] and parsed.errors[0].line == 1


# --------------------------------------------------------------------------- odd but valid JSON


@pytest.mark.parametrize("bad_id", [b'["x"]', b'{"a":1}'])
def test_ops_only_create_node_with_a_non_string_id(tmp_path, bad_id):
    ops = b'[{"CreateNode":{"id":' + bad_id + b',"kind":"goal","props":{}}}]'
    line = event_line(ops, kind=b"state.ops_applied").replace(b'"causation_id":"event_03"',
                                                               b'"causation_id":null')
    repo = make_repo(tmp_path, GOOD + line + b"\n")
    report = check_json(repo)
    (fail,) = failures(report, 2)
    assert (fail["path"], fail["line"]) == (LOG, 11)
    assert "CreateNode.id must be a string" in fail["message"]


def test_fold_seeded_from_a_tampered_snapshot_does_not_crash(tmp_path):
    repo = make_repo(tmp_path, None)
    assert gasp(repo, "snapshot").returncode == 0
    path = repo / "snapshots" / "event_10" / "graph.json"
    doc = json.loads(path.read_bytes())
    doc["graph"]["nodes"]["patch_9"]["kind"] = ["patch"]
    path.write_text(json.dumps(doc))
    # check 2 compares the snapshot with the fold of its prefix and names the file.
    assert any(f.get("path") == "snapshots/event_10/graph.json"
               for f in failures(check_json(repo), 2))
    proc = gasp(repo, "fold")
    assert proc.returncode == 0, no_traceback(proc)
    assert "snapshots/event_10/graph.json" in out(proc)  # passed over, with a note


@pytest.mark.parametrize("eid", [b"../../outside", b"a/b", b".", b"..", b"-rf", b"caf\xc3\xa9"])
def test_snapshot_refuses_an_event_id_that_is_not_a_safe_directory_name(tmp_path, eid):
    line = event_line(b"[]", eid=eid, kind=b"state.ops_applied").replace(
        b'"causation_id":"event_03"', b'"causation_id":null')
    repo = make_repo(tmp_path, GOOD + line + b"\n")
    err = one_line_error(gasp(repo, "snapshot"))
    assert "cannot name a snapshot directory" in err
    assert not (repo / "snapshots").exists()
    assert not (tmp_path / "outside").exists()


def test_snapshot_of_malformed_graph_json_fails_check_2_with_its_path(tmp_path):
    repo = make_repo(tmp_path, None)
    snap = repo / "snapshots" / "event_10"
    snap.mkdir(parents=True)
    (snap / "graph.json").write_bytes(b'{"graph":' * 50_000)
    fails = failures(check_json(repo), 2)
    assert [f["path"] for f in fails] == ["snapshots/event_10/graph.json"]
    assert "snapshot unreadable" in fails[0]["message"]
    # fold passes over the unreadable snapshot with a note and folds the log.
    proc = gasp(repo, "fold", "--json")
    assert proc.returncode == 0, no_traceback(proc)
    assert "snapshots/event_10/graph.json ignored" in proc.stderr.decode()
    assert json.loads(proc.stdout)["version"] > 0
