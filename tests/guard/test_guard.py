"""The pre-commit guard, through real `git commit` in hermetic repos."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.testing.events import goal_pair, line, ops
from tests.testing.run import gasp, git, out

LOG = "state/events.jsonl"


def append(repo: Path, data: bytes, rel: str = LOG) -> None:
    with open(repo / rel, "ab") as f:
        f.write(data)


def commit(repo: Path, *paths: str, msg: str = "c") -> subprocess.CompletedProcess:
    git(repo, "add", "--", *(paths or (LOG,)))
    return subprocess.run(["git", "commit", "-q", "-m", msg], cwd=repo, capture_output=True)


def refused(proc: subprocess.CompletedProcess, *needles: str) -> str:
    text = out(proc)
    assert proc.returncode == 1, text
    assert "commit refused" in text and "fix (" in text, text
    for needle in needles:
        assert needle in text, text
    return text


def test_pure_append_is_allowed(agent):
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    append(agent, goal_pair(2))
    proc = commit(agent)
    assert proc.returncode == 0, out(proc)
    assert gasp(agent, "check").returncode == 0


def test_in_place_edit_is_refused_naming_file_line_and_rule(agent):
    append(agent, goal_pair(1) + goal_pair(2))
    assert commit(agent).returncode == 0
    log = agent / LOG
    log.write_bytes(log.read_bytes().replace(b"goal 2", b"goal X"))
    refused(commit(agent), f"{LOG}:3:", "one-parent rule", "modified in place")


def test_deletion_is_refused(agent):
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    git(agent, "rm", "-q", "--", LOG)
    refused(subprocess.run(["git", "commit", "-q", "-m", "rm"], cwd=agent, capture_output=True),
            LOG, "deleted", "git restore")


def test_truncation_of_facts_and_journal_is_refused(agent):
    append(agent, b"entry\n", "journal/JOURNAL.md")
    assert commit(agent, "journal/JOURNAL.md").returncode == 0
    (agent / "journal/JOURNAL.md").write_bytes(b"# Journal\n")
    refused(commit(agent, "journal/JOURNAL.md"), "journal/JOURNAL.md:2:")


def test_append_to_an_unterminated_last_line_is_refused(agent):
    append(agent, goal_pair(1)[:-1])  # committed without its final newline
    git(agent, "add", LOG)
    git(agent, "commit", "-q", "--no-verify", "-m", "torn")
    append(agent, b', "x"')
    refused(commit(agent), "unterminated last line 2 was extended")


def test_completing_an_unterminated_line_then_appending_is_allowed(agent):
    append(agent, goal_pair(1)[:-1])
    git(agent, "add", LOG)
    git(agent, "commit", "-q", "--no-verify", "-m", "torn")
    append(agent, b"\n" + goal_pair(2))
    proc = commit(agent)
    assert proc.returncode == 0, out(proc)


@pytest.mark.parametrize("bad, needle", [
    (b'{"id":"e1","kind":"x"}\n', "missing fields"),
    (b"not json\n", "invalid JSON"),
    (b'{"id":"e1"\n', "invalid JSON"),
    (line("e1", "goal.created", {"id": "g"}).replace(b"\n", b"\r\n"), "CRLF"),
    (line("e1", "note.created", {})[:-1], "no terminating newline"),
])
def test_a_malformed_appended_envelope_is_refused(agent, bad, needle):
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    append(agent, bad)
    refused(commit(agent), f"{LOG}:3:", "check 1, envelope", needle)


def test_broken_causation_is_refused(agent):
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    append(agent, line("e_note", "note.added", {}, "no_such_event"))
    refused(commit(agent), f"{LOG}:3:", "check 5, causation", "names no event in the log")


def test_a_reused_id_and_an_uncaused_non_root_are_refused(agent):
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    append(agent, line("event_g1", "note.created", {}) + line("e2", "note.added", {}))
    text = refused(commit(agent), "is used again (first on line 1)", "has no causation")
    assert f"{LOG}:3:" in text and f"{LOG}:4:" in text


def test_causation_naming_a_committed_event_is_allowed(agent):
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    append(agent, line("e_note", "note.added", {}, "event_g1"))
    proc = commit(agent)
    assert proc.returncode == 0, out(proc)


def test_a_missing_pair_is_refused(agent):
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    append(agent, line("event_g2", "goal.created", {"id": "goal_2", "title": "t",
                                                   "status": "Open"}))
    refused(commit(agent), f"{LOG}:3:", "check 7, pairing", "has no state.ops_applied pair")


def test_a_second_claim_on_a_committed_domain_event_is_refused(agent):
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    append(agent, ops("e_again", "event_g1", {"CreateNode": {
        "id": "goal_1", "kind": "goal", "props": {"title": "goal 1", "status": "Open"}}}))
    refused(commit(agent), f"{LOG}:3:", "is claimed by 2 ops events")


def test_ops_caused_by_ops_is_refused(agent):
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    append(agent, ops("e_o2", "event_g1o"))
    refused(commit(agent), "caused by another ops event")


def test_pair_appended_later_for_a_committed_domain_event_is_allowed(agent):
    domain = goal_pair(1).splitlines(keepends=True)
    append(agent, domain[0])
    git(agent, "add", LOG)
    git(agent, "commit", "-q", "--no-verify", "-m", "domain only")
    append(agent, domain[1])
    proc = commit(agent)
    assert proc.returncode == 0, out(proc)


def test_commit_with_paths_uses_gits_temporary_index(agent):
    """`git commit PATH` stages into a temporary index (GIT_INDEX_FILE) the hook must read."""
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    log = agent / LOG
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))  # not staged
    proc = subprocess.run(["git", "commit", "-q", "-m", "x", "--", LOG], cwd=agent,
                          capture_output=True)
    refused(proc, "modified in place")
    proc = subprocess.run(["git", "commit", "-q", "-a", "-m", "x"], cwd=agent,
                          capture_output=True)
    refused(proc, "modified in place")


@pytest.mark.slow
def test_agent_root_in_a_subdirectory(tmp_path):
    top = tmp_path / "mono"
    top.mkdir()
    git(top, "init", "-q")
    (top / "README").write_text("hi\n")
    git(top, "add", "README")
    git(top, "commit", "-q", "-m", "readme")
    assert gasp(top, "init", "agents/a1", "--agent-id", "a1").returncode == 0
    sub = top / "agents" / "a1"
    assert git(sub, "check-attr", "merge", "--", LOG).strip().endswith("merge: gasp")
    append(sub, goal_pair(1))
    assert commit(sub).returncode == 0
    log = sub / LOG
    log.write_bytes(b"")
    refused(commit(sub), f"agents/a1/{LOG}")
    git(sub, "reset", "-q", "--", LOG)
    (top / "JOURNAL.md").write_text("not an agent's\n")  # outside the agent root: free
    git(top, "add", "JOURNAL.md")
    git(top, "commit", "-q", "-m", "j")
    (top / "JOURNAL.md").write_text("rewritten\n")
    assert commit(top, "JOURNAL.md").returncode == 0


@pytest.mark.slow
def test_core_hooks_path_installs_there_and_guards(agent, tmp_path):
    hooks = tmp_path / "shared-hooks"
    git(agent, "config", "core.hooksPath", str(hooks))
    proc = gasp(agent, "install-hooks")
    assert proc.returncode == 0, out(proc)
    assert (hooks / "pre-commit").is_file()
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    log = agent / LOG
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))
    refused(commit(agent), "modified in place")


@pytest.mark.slow
def test_linked_worktree(agent, tmp_path):
    wt = tmp_path / "wt"
    git(agent, "worktree", "add", "-q", "-b", "side", str(wt))
    append(wt, goal_pair(1))
    proc = commit(wt)
    assert proc.returncode == 0, out(proc)
    log = wt / LOG
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))
    refused(commit(wt), "modified in place")
    assert git(agent, "rev-parse", "HEAD") != git(wt, "rev-parse", "HEAD")


def _diverged(agent: Path) -> tuple[bytes, bytes, bytes]:
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    base = (agent / LOG).read_bytes()
    git(agent, "checkout", "-q", "-b", "theirs")
    append(agent, goal_pair(2))
    assert commit(agent).returncode == 0
    git(agent, "checkout", "-q", "main")
    append(agent, goal_pair(3))
    assert commit(agent).returncode == 0
    # A text merge is all we want here (the driver is tested elsewhere).
    git(agent, "config", "--remove-section", "merge.gasp")
    git(agent, "merge", "--no-commit", "theirs", check=False)
    return base, goal_pair(3), goal_pair(2)


@pytest.mark.slow
def test_merge_commit_of_a_proper_union_is_allowed(agent):
    base, ours, theirs = _diverged(agent)
    (agent / LOG).write_bytes(base + ours + theirs)
    proc = commit(agent)
    assert proc.returncode == 0, out(proc)
    assert len(git(agent, "rev-parse", "HEAD^2").strip()) == 40
    assert gasp(agent, "check").returncode == 0


@pytest.mark.slow
def test_merge_commit_losing_the_other_parents_lines_is_refused(agent):
    base, ours, _theirs = _diverged(agent)
    (agent / LOG).write_bytes(base + ours)
    refused(commit(agent), "merge rule", "the merge loses lines of")


# ---- the committed log's index (CommittedLog) and its cache ------------------------------

def _reference(data: bytes) -> dict:
    """The facts as the guard first computed them: a plain lenient parse of every line."""
    import orjson

    from git_gasp.conformance.rules import created_node_ids, entity_id

    first, claims, entities, ops_only = {}, {}, {}, {}
    from git_gasp.protocol.envelope import split_lines

    for number, raw in enumerate(split_lines(data)[0], 1):
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if type(obj) is not dict or type(obj.get("id")) is not str:
            continue
        first.setdefault(obj["id"], number)
        kind = obj.get("kind")
        if kind == "state.ops_applied":
            cause = obj.get("causation_id")
            if cause is None:
                for node in created_node_ids(obj.get("payload")):
                    if type(node) is str:
                        ops_only.setdefault(node, number)
            elif type(cause) is str:
                claims.setdefault(cause, []).append(number)
        elif type(kind) is str:
            entity = entity_id(kind, obj.get("payload"))
            if entity is not None:
                entities.setdefault(entity, obj["id"])
    return {"first": first, "claims": claims, "entities": entities, "ops_only": ops_only}


def _facts(log, names) -> dict:
    return {
        "first": {n: log.first_line(n) for n in names if log.first_line(n) is not None},
        "claims": {n: log.claim_lines(n) for n in names if log.claim_lines(n)},
        "entities": {n: log.entity_creator(n) for n in names
                     if log.entity_creator(n) is not None},
        "ops_only": {n: log.ops_only_line(n) for n in names if log.ops_only_line(n) is not None},
    }


# Committed lines the index must read like a lenient parse: canonical and not.
ODD_LINES = [
    goal_pair(1),
    b'{ "kind" : "note.added", "id" : "spaced", "causation_id": "event_g1" }\n',
    b'{"id":"\\u0065scaped","kind":"goal.created","payload":{"id":"goal_e"}}\n',
    b'{"id":"dup","id":"dup_last","kind":"note.added"}\n',  # lenient: the last key wins
    b"not json at all\n",
    b'{"id":7,"kind":"goal.created","payload":{"id":"goal_int"}}\n',
    b'{"id":"listcause","kind":"state.ops_applied","causation_id":["x"],"payload":[]}\n',
    b'{"id":"crlf","kind":"note.added"}\r\n',
    b"\n",
    b'[1,\n',
    b'{"id":"multi"}]\n',
    ops("oo1", None, {"CreateNode": {"id": "node_a", "kind": "goal", "props": {}}},
        {"CreateNode": {"id": 5}}),
    goal_pair(1),  # every id again: first lines stay the earlier ones
    ops("claim2", "event_g1", {"CreateNode": {"id": "goal_1", "kind": "goal", "props": {}}}),
    b'{"id":"torn","kind":"note.added","causation_id":"spaced"}',  # no final newline
]
NAMES = ["event_g1", "event_g1o", "spaced", "escaped", "dup", "dup_last", "goal_e",
         "goal_int", "listcause", "x", "crlf", "multi", "oo1", "node_a", "goal_1",
         "claim2", "torn", "nothing", ""]


def test_old_log_index_matches_a_full_lenient_parse_built_at_once_or_grown():
    from git_gasp.guard.committed_log import CommittedLog

    data = b"".join(ODD_LINES)
    want = _reference(data)
    assert want["first"]["escaped"] == 4 and want["first"]["dup_last"] == 5
    assert _facts(CommittedLog.build(data), NAMES) == want
    grown = CommittedLog.empty(data)
    at = 0
    for piece in ODD_LINES:  # one line at a time, as commit after commit
        at += len(piece)
        grown = grown.extended(data, at)
        assert _facts(grown, NAMES) == _reference(data[:at])
    # the index of a prefix reads its lines out of a longer version of the file
    longer = data + b"\n" + line("later", "note.added", {}, "event_g1")
    assert _facts(CommittedLog.build(longer, len(data)), NAMES) == want
    assert _facts(CommittedLog.build(data).extended(longer), NAMES + ["later"]) == \
        _reference(longer)


def test_old_log_index_grown_from_parsed_events_matches_a_reparse(monkeypatch):
    """save_staged hands the appended lines' events over: no second parse, same index."""
    from git_gasp.guard import committed_log
    from git_gasp.protocol.envelope import parse_line, split_lines

    base = goal_pair(1) + ops("oo1", None, {"CreateNode": {"id": "node_a", "kind": "goal",
                                                          "props": {}}})
    tail = goal_pair(2) + line("event_g1", "note.added", {}) + line("later", "note.added", {},
                                                                   "event_g1")
    data = base + tail
    events = [parse_line(raw, n) for n, raw in enumerate(split_lines(tail)[0], 3)]
    old = committed_log.CommittedLog.build(data, len(base))
    parsed = []
    real = committed_log._parse
    monkeypatch.setattr(committed_log, "_parse", lambda raw: parsed.append(raw) or real(raw))
    grown = old.extended(data, events=events)
    appended = set(split_lines(tail)[0])
    assert not appended & set(parsed)  # (committed lines are read to confirm index hits)
    names = NAMES + ["event_g2", "event_g2o", "goal_2", "later", "node_a"]
    assert _facts(grown, names) == _reference(data)
    assert _facts(old.extended(data, events=events[:-1]), names) == _reference(data)  # reparsed
    assert appended <= set(parsed)


def test_old_log_index_survives_hash_collisions(monkeypatch):
    from git_gasp.conformance.saved import lineindex
    from git_gasp.guard import committed_log

    monkeypatch.setattr(lineindex.zlib, "crc32", lambda data: 0)  # every key collides
    data = b"".join(ODD_LINES)
    assert _facts(committed_log.CommittedLog.build(data), NAMES) == _reference(data)


def _cache_files(repo: Path) -> dict[str, Path]:
    """blob id -> the guard's cache file for it."""
    return {p.stem.rsplit("-", 1)[1]: p for p in (repo / ".git" / "gasp").glob("guard-*.facts")}


def _log_blob(repo: Path, rev: str = "HEAD") -> str:
    return git(repo, "rev-parse", f"{rev}:{LOG}").strip()


@pytest.mark.slow
def test_the_guard_caches_the_committed_logs_index_and_uses_it(agent):
    append(agent, goal_pair(1) + goal_pair(2))
    assert commit(agent).returncode == 0
    assert _log_blob(agent) in _cache_files(agent)  # indexed when the commit passed
    append(agent, line("event_g1", "note.created", {}))
    refused(commit(agent), f"{LOG}:5:", "is used again (first on line 1)")
    git(agent, "checkout", "HEAD", "--", LOG)
    append(agent, line("e_note", "note.added", {}, "event_g2"))
    proc = commit(agent)
    assert proc.returncode == 0, out(proc)


@pytest.mark.slow
def test_non_canonical_committed_lines_are_read_without_a_cache(agent):
    odd = (b'{ "kind" : "note.created", "id" : "spaced", "causation_id": null, '
           b'"schema_version": 1, "ts_ms": 1, "actor": {"kind": "agent", "id": "a"}, '
           b'"correlation_id": null, "payload": {} }\n')
    append(agent, b"not json\n" + odd)
    git(agent, "add", LOG)
    git(agent, "commit", "-q", "--no-verify", "-m", "odd lines")  # no index cached for it
    assert _log_blob(agent) not in _cache_files(agent)
    append(agent, line("e1", "note.added", {}, "spaced"))
    proc = commit(agent)
    assert proc.returncode == 0, out(proc)
    append(agent, line("spaced", "note.created", {}))
    refused(commit(agent), f"{LOG}:4:", "is used again (first on line 2)")


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["garbage", "truncated", "flipped", "other blob",
                                    "other rules", "empty"])
def test_a_corrupt_or_stale_cache_is_ignored_and_rewritten(agent, damage):
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    first_blob = _log_blob(agent)
    append(agent, goal_pair(2))
    assert commit(agent).returncode == 0
    files = _cache_files(agent)
    path = files[_log_blob(agent)]
    data = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"\x00garbage\n" * 50)
    elif damage == "truncated":
        path.write_bytes(data[:-9])
    elif damage == "flipped":  # one bit of the keys: the checksum catches it
        path.write_bytes(data[:-20] + bytes([data[-20] ^ 1]) + data[-19:])
    elif damage == "other blob":  # the index of the older log, under this blob's name
        path.write_bytes(files[first_blob].read_bytes())
    elif damage == "other rules":
        path.write_bytes(data.replace(data.split(b" ")[2], b"000000000000", 1))
    else:
        path.write_bytes(b"")
    append(agent, line("event_g2o", "note.created", {}))
    refused(commit(agent), f"{LOG}:5:", "is used again (first on line 4)")
    git(agent, "checkout", "HEAD", "--", LOG)
    append(agent, ops("e_again", "event_g2", {"CreateNode": {
        "id": "goal_2", "kind": "goal", "props": {"title": "goal 2", "status": "Open"}}}))
    refused(commit(agent), f"{LOG}:5:", "is claimed by 2 ops events")
    git(agent, "checkout", "HEAD", "--", LOG)
    append(agent, line("e_note", "note.added", {}, "event_g2"))
    proc = commit(agent)
    assert proc.returncode == 0, out(proc)
    assert _log_blob(agent, "HEAD~1") in _cache_files(agent)


@pytest.mark.slow
def test_a_cached_older_version_of_the_log_is_grown_not_reread(agent, monkeypatch):
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    append(agent, goal_pair(2))
    git(agent, "add", LOG)
    git(agent, "commit", "-q", "--no-verify", "-m", "unguarded")
    assert _log_blob(agent) not in _cache_files(agent)
    append(agent, line("event_g1o", "note.created", {}) + line("e3", "note.added", {}, "event_g2"))
    refused(commit(agent), f"{LOG}:5:", "is used again (first on line 2)")
    assert _log_blob(agent) in _cache_files(agent)  # grown from the older one's index


@pytest.mark.slow
def test_the_guard_reads_no_committed_log_blob_when_its_index_is_cached(agent, monkeypatch):
    from git_gasp.guard import commit_guard as guard

    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    head_blob = _log_blob(agent).encode()
    append(agent, goal_pair(2))
    git(agent, "add", LOG)
    read = []
    real = guard._Guard.blob

    def spy(self, sha, *args, **kw):
        read.append(sha)
        return real(self, sha, *args, **kw)

    monkeypatch.setattr(guard._Guard, "blob", spy)
    monkeypatch.chdir(agent)
    assert guard.run_guard(agent) == []
    assert head_blob not in read
    read.clear()
    assert guard.run_guard(agent, cache=False) == []
    assert head_blob in read


# ---- merges that complete without a conflict: the pre-merge-commit hook ------------

def _two_branches(agent: Path) -> None:
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    git(agent, "checkout", "-q", "-b", "theirs")
    append(agent, goal_pair(2))
    assert commit(agent).returncode == 0
    git(agent, "checkout", "-q", "main")
    append(agent, goal_pair(3))
    assert commit(agent).returncode == 0


@pytest.mark.slow
def test_a_clean_merge_dropping_the_other_parents_lines_is_refused(agent):
    _two_branches(agent)
    head = git(agent, "rev-parse", "HEAD")
    git(agent, "config", "merge.gasp.driver", "true")  # "merges" by keeping ours only
    proc = subprocess.run(["git", "merge", "--no-edit", "theirs"], cwd=agent,
                          capture_output=True)
    text = out(proc)
    assert proc.returncode != 0, text
    assert "pre-merge-commit: merge commit refused" in text, text
    assert f"{LOG}:3: [append-only, merge rule] the merge loses lines of" in text, text
    assert "git merge --abort" in text and "fix (" in text
    assert git(agent, "rev-parse", "HEAD") == head  # no merge commit was made
    # Git keeps the merge going; completing it by hand meets the pre-commit guard.
    refused(subprocess.run(["git", "commit", "-q", "--no-edit"], cwd=agent,
                           capture_output=True), "merge rule")


@pytest.mark.slow
def test_a_clean_union_merge_with_the_driver_goes_through(agent):
    _two_branches(agent)
    proc = subprocess.run(["git", "merge", "--no-edit", "theirs"], cwd=agent,
                          capture_output=True)
    assert proc.returncode == 0, out(proc)
    assert git(agent, "rev-parse", "HEAD^2").strip() == git(agent, "rev-parse", "theirs").strip()
    data = (agent / LOG).read_bytes()
    for n in (1, 2, 3):
        assert data.count(goal_pair(n)) == 1
    assert gasp(agent, "check").returncode == 0


@pytest.mark.slow
def test_merged_parents_come_from_gits_environment_during_pre_merge_commit(monkeypatch):
    """git runs pre-merge-commit before writing MERGE_HEAD; it names every merged head
    (all of an octopus) in GITHEAD_<id> variables."""
    from git_gasp.guard.staged import merge_heads_from_env

    a, b = "a" * 40, "B" * 40
    monkeypatch.setenv(f"GITHEAD_{b}", "third")
    monkeypatch.setenv(f"GITHEAD_{a}", "theirs")
    monkeypatch.setenv("GITHEAD_nothex", "x")
    assert merge_heads_from_env() == [a.encode(), b.lower().encode()]


@pytest.mark.slow
def test_the_pre_merge_commit_hook_by_hand_outside_a_merge_checks_like_pre_commit(agent):
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    log = agent / LOG
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))
    git(agent, "add", LOG)
    proc = gasp(agent, "hook", "pre-merge-commit")
    assert proc.returncode == 1 and "modified in place" in out(proc), out(proc)


# ---- a manifest-relocated log ---------------------------------------------------

MOVED = "data/log.jsonl"


def _relocate(agent: Path) -> None:
    """Move the log to data/log.jsonl by `locations: {log: …}`, committed unguarded."""
    manifest = (agent / "AGENT.md").read_text()
    (agent / "AGENT.md").write_text(manifest.replace(
        "executor: .agent/config.toml", "executor: .agent/config.toml\n"
        "locations:\n  log: data/log.jsonl"))
    (agent / "data").mkdir()
    git(agent, "mv", LOG, MOVED)
    git(agent, "add", "AGENT.md")
    git(agent, "commit", "-q", "--no-verify", "-m", "move the log")
    append(agent, goal_pair(1), MOVED)
    proc = commit(agent, MOVED)
    assert proc.returncode == 0, out(proc)


@pytest.mark.slow
def test_a_relocated_log_is_guarded(agent):
    _relocate(agent)
    log = agent / MOVED
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))
    refused(commit(agent, MOVED), f"{MOVED}:", "modified in place")


@pytest.mark.slow
def test_removing_the_manifest_with_its_relocated_log_is_refused(agent):
    """HEAD's manifest declares the log: unstaging AGENT.md must not unguard it."""
    _relocate(agent)
    git(agent, "rm", "-q", "--", "AGENT.md", MOVED)
    proc = subprocess.run(["git", "commit", "-q", "-m", "rm"], cwd=agent, capture_output=True)
    refused(proc, MOVED, "deleted")


def test_dropping_the_location_while_rewriting_the_log_is_refused(agent):
    _relocate(agent)
    manifest = (agent / "AGENT.md").read_text()
    (agent / "AGENT.md").write_text(manifest.replace("locations:\n  log: data/log.jsonl\n", ""))
    log = agent / MOVED
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))
    refused(commit(agent, "AGENT.md", MOVED), f"{MOVED}:", "modified in place")


@pytest.mark.slow
def test_a_log_relocated_by_a_merged_parent_is_guarded(agent):
    """The other parent moved the log; the merge result must keep its lines."""
    git(agent, "checkout", "-q", "-b", "theirs")
    _relocate(agent)
    git(agent, "checkout", "-q", "main")
    (agent / "notes.txt").write_text("ours\n")
    git(agent, "add", "notes.txt")
    git(agent, "commit", "-q", "-m", "ours")
    git(agent, "merge", "-q", "--no-commit", "theirs", check=False)
    git(agent, "checkout", "-q", "main", "--", "AGENT.md", LOG)  # ours: no locations
    (agent / MOVED).write_bytes(b"")
    proc = commit(agent, "AGENT.md", LOG, MOVED)
    refused(proc, MOVED, "merge rule")


def test_an_unterminated_complete_event_is_told_to_get_its_newline_not_removed(agent):
    append(agent, goal_pair(1)[:-1])  # the ops line complete but without its newline
    git(agent, "add", LOG)
    proc = gasp(agent, "hook", "pre-commit")
    assert proc.returncode != 0
    text = out(proc)
    assert "complete event with no terminating newline" in text
    assert "append the newline" in text and "remove" not in text
