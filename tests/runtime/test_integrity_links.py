"""No write goes through a link committed in a cloned repo (issue 10, defect 2): the
journal, facts, active memory, snapshots, commit-run, install-hooks and init refuse a
state file that is a link (or lies under one) with one line, and the link's target —
here a file in $HOME — is left as it was."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.runtime.helpers import one_error_line
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow

KEEP = b"# the user's own file\nexport KEEP=1\n"


def home_file(name: str = ".bashrc") -> Path:
    path = Path(os.environ["HOME"]) / name
    path.write_bytes(KEEP)
    return path


def clone_with_link(repo: Path, dest: Path, rel: str, target: Path) -> Path:
    """Commit `rel` as a link to `target` in `repo` (past any hook), clone it to `dest`."""
    link = repo / rel
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(target)
    git(repo, "add", "-f", rel)
    git(repo, "commit", "-q", "--no-verify", "-m", f"{rel} as a link")
    git(dest.parent, "clone", "-q", str(repo), str(dest))
    assert (dest / rel).is_symlink()
    return dest


def ok(repo: Path, *args: str) -> str:
    proc = gasp(repo, *args)
    assert proc.returncode == 0, out(proc)
    return out(proc)


def finished_run(repo: Path) -> None:
    ok(repo, "run", "start", "--task", "t")
    ok(repo, "run", "finish", "--outcome", "success")


def first_event_id(repo: Path) -> str:
    return json.loads((repo / "state/events.jsonl").read_bytes().splitlines()[0])["id"]


def refused(proc, target: Path) -> str:
    line = one_error_line(proc)
    assert "link" in line, line
    assert target.read_bytes() == KEEP
    return line


def test_journal_append_refuses_a_linked_journal(agent, tmp_path):
    target = home_file()
    clone = clone_with_link(agent, tmp_path / "clone", "journal/JOURNAL.md", target)
    finished_run(clone)
    refused(gasp(clone, "journal"), target)


def test_commit_run_refuses_a_linked_journal(agent, tmp_path):
    target = home_file()
    clone = clone_with_link(agent, tmp_path / "clone", "journal/JOURNAL.md", target)
    finished_run(clone)
    head = git(clone, "rev-parse", "HEAD")
    refused(gasp(clone, "commit-run"), target)
    assert git(clone, "rev-parse", "HEAD") == head


def test_commit_run_refuses_to_commit_a_link_out_of_the_work_tree(agent, tmp_path):
    target = home_file()
    clone = clone_with_link(agent, tmp_path / "clone", "journal/JOURNAL.md", target)
    finished_run(clone)
    head = git(clone, "rev-parse", "HEAD")
    line = refused(gasp(clone, "commit-run", "--no-journal"), target)
    assert "outside the work tree" in line, line
    assert git(clone, "rev-parse", "HEAD") == head


def test_memory_add_refuses_linked_facts(agent, tmp_path):
    ok(agent, "record", "goal", "--title", "g")
    git(agent, "add", "state/events.jsonl")
    git(agent, "commit", "-q", "-m", "goal")
    target = home_file()
    clone = clone_with_link(agent, tmp_path / "clone", "memory/facts.jsonl", target)
    refused(gasp(clone, "memory", "add", "a fact", "--from", first_event_id(clone)), target)


def test_memory_add_refuses_a_linked_memory_dir(agent, tmp_path):
    ok(agent, "record", "goal", "--title", "g")
    git(agent, "add", "state/events.jsonl")
    git(agent, "commit", "-q", "-m", "goal")
    outside = Path(os.environ["HOME"]) / "mem"
    outside.mkdir()
    (outside / "facts.jsonl").write_bytes(b"")
    git(agent, "rm", "-rq", "--ignore-unmatch", "memory")
    clone = clone_with_link(agent, tmp_path / "clone", "memory", outside)
    line = one_error_line(gasp(clone, "memory", "add", "a fact", "--from",
                               first_event_id(clone)))
    assert "link" in line, line
    assert (outside / "facts.jsonl").read_bytes() == b""


def test_memory_synthesize_refuses_linked_active_memory(agent, tmp_path):
    target = home_file()
    clone = clone_with_link(agent, tmp_path / "clone", "memory/active_memory.md", target)
    refused(gasp(clone, "memory", "synthesize"), target)


def test_snapshot_refuses_a_linked_snapshots_dir(agent, tmp_path):
    ok(agent, "record", "goal", "--title", "g")
    git(agent, "add", "state/events.jsonl")
    git(agent, "commit", "-q", "-m", "goal")
    outside = Path(os.environ["HOME"]) / "snaps"
    outside.mkdir()
    git(agent, "rm", "-rq", "--ignore-unmatch", "snapshots")
    clone = clone_with_link(agent, tmp_path / "clone", "snapshots", outside)
    line = one_error_line(gasp(clone, "snapshot"))
    assert "link" in line, line
    assert list(outside.iterdir()) == []


def test_install_hooks_refuses_a_linked_gitattributes(agent, tmp_path):
    target = home_file()
    clone = clone_with_link(agent, tmp_path / "clone", ".gitattributes", target)
    refused(gasp(clone, "install-hooks"), target)


def test_install_hooks_refuses_a_linked_hooks_dir_in_the_work_tree(agent, tmp_path):
    outside = Path(os.environ["HOME"]) / "hooks"
    outside.mkdir()
    clone = clone_with_link(agent, tmp_path / "clone", ".githooks", outside)
    git(clone, "config", "core.hooksPath", ".githooks")
    line = one_error_line(gasp(clone, "install-hooks"))
    assert "link" in line, line
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("rel", [".gitignore", ".gitattributes"])
def test_init_refuses_a_linked_dotfile(tmp_path, rel):
    target = home_file()
    plain = tmp_path / "plain"
    plain.mkdir()
    git(plain, "init", "-q")
    (plain / "README").write_text("x\n")
    git(plain, "add", "README")
    git(plain, "commit", "-q", "-m", "readme")
    clone = clone_with_link(plain, tmp_path / "clone", rel, target)
    refused(gasp(clone, "init"), target)
    assert not (clone / "AGENT.md").exists()
    assert git(clone, "status", "--porcelain") == ""
