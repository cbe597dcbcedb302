"""The merge driver under real git: merge, rebase, cherry-pick, stash pop, criss-cross, octopus.

Each repo starts from `git gasp init`, marks the append-only files `merge=gasp` and
registers the driver in its config the way `git gasp install-hooks` does.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.testing.events import create, goal_pair, line, ops
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow  # real merges, rebases and cherry-picks

LOG = "state/events.jsonl"
FACTS = "memory/facts.jsonl"
JOURNAL = "journal/JOURNAL.md"
DRIVER = (
    "git gasp merge-driver --ancestor %O --current %A --other %B --marker-size %L --path %P"
)
ATTRIBUTES = "state/events.jsonl merge=gasp\nfacts.jsonl merge=gasp\nJOURNAL.md merge=gasp\n"


def agent_repo(tmp: Path) -> Path:
    """A fresh `git gasp init` repo with the driver wired in, one goal in its log."""
    proc = gasp(tmp, "init", "agent")
    assert proc.returncode == 0, out(proc)
    repo = tmp / "agent"
    (repo / ".gitattributes").write_text(ATTRIBUTES)
    git(repo, "config", "merge.gasp.name", "git-gasp union merge for append-only files")
    git(repo, "config", "merge.gasp.driver", DRIVER)
    append(repo, LOG, goal_pair(1))
    commit(repo, "goal 1", ".gitattributes", LOG)
    return repo


def append(repo: Path, rel: str, data: bytes) -> None:
    with open(repo / rel, "ab") as fh:
        fh.write(data)


def commit(repo: Path, message: str, *paths: str, verify: bool = True) -> None:
    git(repo, "add", *(paths or (LOG,)))
    git(repo, "commit", "-q", "-m", message, *(() if verify else ("--no-verify",)))


def goal_titled(n: int, title: str) -> bytes:
    """goal_pair(n) with another title: the same ids with different bodies."""
    gid = f"goal_{n}"
    domain = line(f"event_g{n}", "goal.created", {"id": gid, "title": title, "status": "Open"})
    return domain + ops(
        f"event_g{n}o", f"event_g{n}", create(gid, "goal", title=title, status="Open")
    )


def add_goals(repo: Path, *numbers: int) -> None:
    """One commit per goal pair appended to the log."""
    for n in numbers:
        append(repo, LOG, goal_pair(n))
        commit(repo, f"goal {n}")


def log_ids(repo: Path) -> list[str]:
    data = (repo / LOG).read_bytes()
    assert data.endswith(b"\n")
    return [json.loads(raw)["id"] for raw in data.splitlines()]


def goal_ids(*numbers: int) -> list[str]:
    return [eid for n in numbers for eid in (f"event_g{n}", f"event_g{n}o")]


def assert_conformant(repo: Path) -> None:
    proc = gasp(repo, "check")
    assert proc.returncode == 0, out(proc)


def assert_each_once(repo: Path, *numbers: int) -> None:
    got = log_ids(repo)
    assert len(got) == len(set(got)), got
    assert sorted(got) == sorted(goal_ids(*numbers))


def branch(repo: Path, name: str, start: str = "main") -> None:
    git(repo, "checkout", "-q", "-b", name, start)


# --- the everyday case ---------------------------------------------------------------------


def test_two_branches_that_both_appended_merge_cleanly(tmp_path):
    repo = agent_repo(tmp_path)
    branch(repo, "topic")
    add_goals(repo, 2, 3)
    git(repo, "checkout", "-q", "main")
    add_goals(repo, 4)
    proc = subprocess_merge(repo, "topic")
    assert proc.returncode == 0, out(proc)
    assert log_ids(repo) == goal_ids(1, 4, 2, 3)  # ours, then theirs, each in order
    assert len(git(repo, "rev-parse", "HEAD^2").strip()) == 40
    assert_conformant(repo)


def subprocess_merge(repo: Path, *args: str) -> subprocess.CompletedProcess:
    """`git merge --no-edit ARGS`; never raises on exit code."""
    return subprocess.run(
        ["git", "merge", "--no-edit", *args], cwd=repo, capture_output=True
    )


def test_rebase_replays_appends_onto_the_other_branch(tmp_path):
    repo = agent_repo(tmp_path)
    branch(repo, "topic")
    add_goals(repo, 2, 3)
    git(repo, "checkout", "-q", "main")
    add_goals(repo, 4, 5)
    git(repo, "checkout", "-q", "topic")
    git(repo, "rebase", "-q", "main")
    assert log_ids(repo) == goal_ids(1, 4, 5, 2, 3)
    assert git(repo, "rev-list", "--count", "--merges", "HEAD").strip() == "0"
    assert_conformant(repo)


def test_cherry_pick_of_an_append(tmp_path):
    repo = agent_repo(tmp_path)
    branch(repo, "topic")
    add_goals(repo, 2, 3)
    git(repo, "checkout", "-q", "main")
    add_goals(repo, 4)
    git(repo, "cherry-pick", "topic")  # the commit appending goal 3 only
    assert log_ids(repo) == goal_ids(1, 4, 3)
    assert_conformant(repo)


def test_stash_pop_over_new_commits(tmp_path):
    repo = agent_repo(tmp_path)
    append(repo, LOG, goal_pair(2))
    git(repo, "stash", "-q")
    add_goals(repo, 3)
    git(repo, "stash", "pop", "-q")
    assert log_ids(repo) == goal_ids(1, 3, 2)
    assert git(repo, "stash", "list") == ""  # popped, not kept after a conflict
    commit(repo, "goal 2 from the stash")
    assert_conformant(repo)


def test_merge_of_facts_and_journal(tmp_path):
    repo = agent_repo(tmp_path)
    journal_base = (repo / JOURNAL).read_bytes()
    branch(repo, "topic")
    f1 = b'{"id":"fact_1","ts_ms":1,"text":"one","derived_from":[],"supersedes":null}\n'
    f2 = b'{"id":"fact_2","ts_ms":2,"text":"two","derived_from":[],"supersedes":null}\n'
    f3 = b'{"id":"fact_3","ts_ms":3,"text":"three","derived_from":[],"supersedes":null}\n'
    append(repo, FACTS, f1 + f2)
    append(repo, JOURNAL, b"\n## topic\n\nworked on the topic\n")
    commit(repo, "topic memory", FACTS, JOURNAL)
    git(repo, "checkout", "-q", "main")
    append(repo, FACTS, f1 + f3)  # the same fact on both branches (say, cherry-picked)
    append(repo, JOURNAL, b"\n## main\n\nworked on main\n")
    commit(repo, "main memory", FACTS, JOURNAL)
    proc = subprocess_merge(repo, "topic")
    assert proc.returncode == 0, out(proc)
    assert (repo / FACTS).read_bytes() == f1 + f3 + f2
    assert (repo / JOURNAL).read_bytes() == (
        journal_base + b"\n## main\n\nworked on main\n" + b"\n## topic\n\nworked on the topic\n"
    )
    assert_conformant(repo)


def test_agent_root_in_a_subdirectory(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    (project / "README").write_text("code\n")
    git(project, "add", "README")
    git(project, "commit", "-qm", "code")
    repo = agent_repo(project)
    assert repo == project / "agent"
    branch(repo, "topic")
    add_goals(repo, 2)
    git(repo, "checkout", "-q", "main")
    add_goals(repo, 3)
    proc = subprocess_merge(repo, "topic")
    assert proc.returncode == 0, out(proc)
    assert log_ids(repo) == goal_ids(1, 3, 2)
    assert_conformant(repo)


# --- criss-cross and octopus ---------------------------------------------------------------


def test_criss_cross_merge(tmp_path):
    """Two merge bases: git merges them into a virtual base with the driver first."""
    repo = agent_repo(tmp_path)
    branch(repo, "b")
    f1 = b'{"id":"fact_b","ts_ms":1,"text":"from b","derived_from":[],"supersedes":null}\n'
    append(repo, FACTS, f1)
    commit(repo, "b learns a fact", FACTS)
    git(repo, "checkout", "-q", "main")
    add_goals(repo, 2)
    a1, b1 = git(repo, "rev-parse", "main").strip(), git(repo, "rev-parse", "b").strip()
    assert subprocess_merge(repo, b1).returncode == 0  # main merges b's first commit
    git(repo, "checkout", "-q", "b")
    assert subprocess_merge(repo, a1).returncode == 0  # b merges main's first commit
    add_goals(repo, 3)
    git(repo, "checkout", "-q", "main")
    add_goals(repo, 4)
    bases = git(repo, "merge-base", "--all", "main", "b").split()
    assert sorted(bases) == sorted([a1, b1])
    proc = subprocess_merge(repo, "b")
    assert proc.returncode == 0, out(proc)
    assert_each_once(repo, 1, 2, 3, 4)
    assert log_ids(repo) == goal_ids(1, 2, 4, 3)
    assert (repo / FACTS).read_bytes() == f1
    assert_conformant(repo)


def test_criss_cross_merge_where_both_bases_appended_to_the_log(tmp_path):
    """Each merge base adds events, so the two sides hold them in opposite orders."""
    repo = agent_repo(tmp_path)
    branch(repo, "b")
    add_goals(repo, 2)
    git(repo, "checkout", "-q", "main")
    add_goals(repo, 3)
    a1, b1 = git(repo, "rev-parse", "main").strip(), git(repo, "rev-parse", "b").strip()
    assert subprocess_merge(repo, b1).returncode == 0  # main: 1 3 2
    git(repo, "checkout", "-q", "b")
    assert subprocess_merge(repo, a1).returncode == 0  # b: 1 2 3
    add_goals(repo, 4)
    git(repo, "checkout", "-q", "main")
    add_goals(repo, 5)
    proc = subprocess_merge(repo, "b")
    assert proc.returncode == 0, out(proc)
    assert log_ids(repo) == goal_ids(1, 3, 2, 5, 4)  # every event once, main's order first
    # b holds 2 before 3, main 3 before 2: check 4's merge rule asks that every line of
    # each other parent is kept, not its order, so the merge conforms.
    assert_conformant(repo)


def test_octopus_of_branches_appending_to_different_files(tmp_path):
    repo = agent_repo(tmp_path)
    for name, rel, data in (
        ("log", LOG, goal_pair(2)),
        ("facts", FACTS, b'{"id":"fact_1","ts_ms":1,"text":"t","derived_from":[],'
                         b'"supersedes":null}\n'),
        ("journal", JOURNAL, b"\n## octopus\n"),
    ):
        branch(repo, name)
        append(repo, rel, data)
        commit(repo, name, rel)
    git(repo, "checkout", "-q", "main")
    (repo / "notes.txt").write_text("main moved on too\n")
    commit(repo, "main's own change", "notes.txt")
    proc = subprocess_merge(repo, "log", "facts", "journal")
    assert proc.returncode == 0, out(proc)
    assert len(git(repo, "log", "-1", "--format=%P").split()) == 4
    assert log_ids(repo) == goal_ids(1, 2)
    assert_conformant(repo)


def test_octopus_where_every_branch_appended_to_the_log(tmp_path):
    """git's octopus strategy merges with `git merge-file`, never a merge driver, so it
    refuses (and changes nothing); merging the branches one at a time uses the driver."""
    repo = agent_repo(tmp_path)
    for n, name in ((2, "x"), (3, "y"), (4, "z")):
        branch(repo, name)
        add_goals(repo, n)
    git(repo, "checkout", "-q", "main")
    add_goals(repo, 5)
    head = git(repo, "rev-parse", "HEAD")
    proc = subprocess_merge(repo, "x", "y", "z")
    assert proc.returncode != 0 and b"Should not be doing an octopus" in proc.stdout + proc.stderr
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""
    for name in ("x", "y", "z"):
        proc = subprocess_merge(repo, name)
        assert proc.returncode == 0, out(proc)
    assert log_ids(repo) == goal_ids(1, 5, 2, 3, 4)
    assert_conformant(repo)


# --- conflicts and the off switch ----------------------------------------------------------


def test_same_id_with_two_bodies_conflicts_with_markers(tmp_path):
    repo = agent_repo(tmp_path)
    branch(repo, "topic")
    append(repo, LOG, goal_titled(7, "topic's goal"))
    commit(repo, "topic")
    git(repo, "checkout", "-q", "main")
    append(repo, LOG, goal_titled(7, "main's goal"))
    commit(repo, "main")
    proc = subprocess_merge(repo, "topic")
    assert proc.returncode == 1
    text = out(proc)
    assert "conflict: id event_g7 has two different bodies (ours line 3, theirs line 3)" in text
    assert "conflict: id event_g7o has two different bodies (ours line 4, theirs line 4)" in text
    assert "CONFLICT (content): Merge conflict in state/events.jsonl" in text
    data = (repo / LOG).read_bytes()
    assert data.startswith(goal_pair(1) + b"<<<<<<< ours\n")
    assert b"=======\n" in data and data.endswith(b">>>>>>> theirs\n")
    assert goal_titled(7, "main's goal") in data and goal_titled(7, "topic's goal") in data
    assert "UU state/events.jsonl" in git(repo, "status", "--porcelain")


def test_side_that_rewrote_a_base_line_conflicts(tmp_path):
    repo = agent_repo(tmp_path)
    branch(repo, "topic")
    original = (repo / LOG).read_bytes()
    (repo / LOG).write_bytes(original.replace(b'"title":"goal 1"', b'"title":"goal one"', 1))
    commit(repo, "rewrite history past the guard", verify=False)
    git(repo, "checkout", "-q", "main")
    add_goals(repo, 2)
    proc = subprocess_merge(repo, "topic")
    assert proc.returncode == 1
    assert "theirs rewrote the common base: base line 1 (id event_g1) was changed" in out(proc)
    data = (repo / LOG).read_bytes()
    assert data.startswith(b"<<<<<<< ours\n" + original)
    assert b'"title":"goal one"' in data


def test_off_switch_gives_git_text_merge(tmp_path, monkeypatch):
    repo = agent_repo(tmp_path)
    branch(repo, "topic")
    add_goals(repo, 2)
    git(repo, "checkout", "-q", "main")
    add_goals(repo, 3)
    monkeypatch.setenv("GASP_NO_MERGE_DRIVER", "1")
    proc = subprocess_merge(repo, "topic")
    assert proc.returncode == 1
    data = (repo / LOG).read_bytes()
    assert data == (goal_pair(1) + b"<<<<<<< ours\n" + goal_pair(3) + b"=======\n"
                    + goal_pair(2) + b">>>>>>> theirs\n")
    # Redo the file with the driver on: `git checkout -m` runs the driver again.
    monkeypatch.delenv("GASP_NO_MERGE_DRIVER")
    git(repo, "checkout", "-m", LOG)
    assert log_ids(repo) == goal_ids(1, 3, 2)


def test_unconfigured_clone_falls_back_silently_which_is_why_doctor_exists(tmp_path):
    """Without merge.gasp.driver git quietly uses its text merge: a conflict, not a loss."""
    repo = agent_repo(tmp_path)
    branch(repo, "topic")
    add_goals(repo, 2)
    git(repo, "checkout", "-q", "main")
    add_goals(repo, 3)
    git(repo, "config", "--unset", "merge.gasp.driver")
    proc = subprocess_merge(repo, "topic")  # the name alone: git refuses outright
    assert proc.returncode == 128 and b"lacks command line" in proc.stderr
    git(repo, "config", "--unset", "merge.gasp.name")
    proc = subprocess_merge(repo, "topic")
    assert proc.returncode == 1 and b"<<<<<<<" in (repo / LOG).read_bytes()


@pytest.mark.parametrize("size", ["3", "12"])
def test_marker_size_attribute_reaches_the_driver(tmp_path, size):
    repo = agent_repo(tmp_path)
    (repo / ".gitattributes").write_text(
        ATTRIBUTES.replace("state/events.jsonl merge=gasp",
                           f"state/events.jsonl merge=gasp conflict-marker-size={size}")
    )
    commit(repo, "marker size", ".gitattributes")
    branch(repo, "topic")
    append(repo, LOG, goal_titled(2, "one"))
    commit(repo, "topic")
    git(repo, "checkout", "-q", "main")
    append(repo, LOG, goal_titled(2, "two"))
    commit(repo, "main")
    assert subprocess_merge(repo, "topic").returncode == 1
    data = (repo / LOG).read_bytes()
    assert b"\n" + b"<" * int(size) + b" ours\n" in data
