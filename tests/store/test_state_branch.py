"""`git gasp init --branch`: the agent state on its own branch, beside a project with
its own history; every command run in the project finds it; the working branch gets
no commit and no file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.adapters.samples import CLAUDE_HOOKS, read_jsonl
from tests.testing.repos import make_project
from tests.testing.run import gasp, git, out

STATE_FILES = ("AGENT.md", "identity", "skills", "state", "memory", "journal", ".agent",
               "transcripts", ".gitattributes", ".gitignore")


@pytest.fixture
def project(tmp_path) -> Path:
    """An existing project, not made by git-gasp: two commits of its own."""
    return make_project(tmp_path / "app")


def _tree(repo: Path, rev: str = "HEAD") -> list[str]:
    return git(repo, "ls-tree", "-r", "--name-only", rev).split()


def _init(project: Path, *args: str) -> Path:
    proc = gasp(project, "init", "--branch", *args)
    assert proc.returncode == 0, out(proc)
    return Path(git(project, "rev-parse", "--path-format=absolute", "--git-common-dir").strip())


@pytest.mark.slow  # over half a second: out of the fast loop
def test_init_branch_leaves_the_working_branch_alone(project):
    head, files = git(project, "rev-parse", "HEAD"), _tree(project)
    common = _init(project)
    assert git(project, "rev-parse", "HEAD") == head
    assert git(project, "status", "--porcelain", "--ignored") == ""
    assert not any((project / name).exists() for name in STATE_FILES)
    assert _tree(project) == files
    # the state branch: an orphan, conformant from its first commit
    assert git(project, "rev-list", "--count", "gasp/state").strip() == "1"
    assert "AGENT.md" in _tree(project, "gasp/state")
    assert "app.py" not in _tree(project, "gasp/state")
    assert git(project, "merge-base", "HEAD", "gasp/state", check=False) == ""
    assert str(common / "gasp-state") in git(project, "worktree", "list")
    assert git(project, "config", "gasp.state").strip() == "gasp-state"
    check = gasp(project, "check")
    assert check.returncode == 0, out(check)
    assert "gasp-state: conformant" in check.stdout.decode()


@pytest.mark.slow  # over half a second: out of the fast loop
def test_every_command_in_the_project_reads_and_writes_the_state(project):
    _init(project)
    goal = gasp(project, "record", "goal", "--title", "ship it")
    assert goal.returncode == 0, out(goal)
    gid = goal.stdout.decode().strip()
    graph = json.loads(gasp(project, "fold", "--json").stdout)
    assert graph["nodes"][gid]["props"]["title"] == "ship it"
    assert "ship it" in gasp(project, "log").stdout.decode()
    assert gasp(project, "lineage", gid).returncode == 0
    assert git(project, "status", "--porcelain", "--ignored") == ""
    sub = project / "src"
    sub.mkdir()
    assert gasp(sub, "fold").returncode == 0  # from a subdirectory too


@pytest.mark.slow  # a whole Claude Code session replayed through the hooks
def test_a_claude_code_session_commits_to_the_state_branch_only(project):
    _init(project)
    head = git(project, "rev-parse", "HEAD")
    for row in read_jsonl(CLAUDE_HOOKS):
        row["cwd"] = str(project)
        proc = subprocess.run(["git", "gasp", "adapt", "hook"], cwd=project,
                              input=json.dumps(row).encode(), capture_output=True)
        assert proc.returncode == 0 and proc.stdout == b"", out(proc)
    assert git(project, "rev-parse", "HEAD") == head
    assert git(project, "status", "--porcelain") == ""
    assert not any((project / name).exists() for name in STATE_FILES)
    message = git(project, "log", "-1", "--format=%B", "gasp/state")
    assert "Run-Id: run_claude-code." in message, message
    check = gasp(project, "check")
    assert check.returncode == 0, out(check)
    graph = json.loads(gasp(project, "fold", "--json").stdout)
    assert sum(n["kind"] == "tool_call" for n in graph["nodes"].values()) == 6


@pytest.mark.slow  # over half a second: out of the fast loop
def test_sync_from_the_project_pushes_the_state_branch(project, tmp_path):
    _init(project)
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(project, "remote", "add", "origin", str(bare))
    for args in (("run", "start", "--task", "t"), ("record", "goal", "--title", "g"),
                 ("run", "finish", "--outcome", "promoted"), ("commit-run",)):
        proc = gasp(project, *args)
        assert proc.returncode == 0, (args, out(proc))
    assert git(project, "status", "--porcelain") == ""
    assert git(project, "rev-list", "--count", "gasp/state").strip() == "2"
    state = Path(git(project, "config", "--get", "gasp.state").strip())
    assert not state.is_absolute()
    proc = gasp(project, "sync")
    assert proc.returncode == 0, out(proc)
    assert "origin/gasp/state" in proc.stdout.decode()
    assert git(bare, "branch", "--list").split() == ["gasp/state"]
    assert git(bare, "rev-parse", "gasp/state") == git(project, "rev-parse", "gasp/state")


@pytest.mark.parametrize("case", ["twice", "branch-exists", "root-layout", "worktree-taken"])
def test_init_branch_refuses_in_one_line_and_changes_nothing(project, tmp_path, case):
    args: list[str] = []
    if case == "twice":
        _init(project)
    elif case == "branch-exists":
        git(project, "branch", "gasp/state")
    elif case == "root-layout":
        (project / "AGENT.md").write_text("---\nspec_version: 0.1.0\nagent_id: a\n"
                                          "identity_hash: null\nexecutor: x\n---\n")
        (project / "state").mkdir()
        (project / "state" / "events.jsonl").write_bytes(b"")
    else:
        (tmp_path / "taken").mkdir()
        args = ["--worktree", str(tmp_path / "taken")]
    config = (project / ".git" / "config").read_bytes()
    branches = git(project, "branch", "--list")
    worktrees = git(project, "worktree", "list")
    proc = gasp(project, "init", "--branch", *args)
    err = proc.stderr.decode()
    assert proc.returncode == 1, out(proc)
    assert err.startswith("git gasp: error: ") and len(err.strip().splitlines()) == 1, err
    assert "nothing was changed" in err
    assert (project / ".git" / "config").read_bytes() == config
    assert git(project, "branch", "--list") == branches
    assert git(project, "worktree", "list") == worktrees


@pytest.mark.slow  # over half a second: out of the fast loop
def test_a_worktree_picked_inside_the_project_stays_out_of_git_status(project):
    _init(project, "--worktree", str(project / ".agent-state"))
    assert (project / ".agent-state" / "AGENT.md").is_file()
    assert git(project, "status", "--porcelain") == ""
    assert gasp(project, "check").returncode == 0


def test_a_failure_half_way_takes_everything_back(project):
    config = (project / ".git" / "config").read_bytes()
    # An agent id init refuses: the worktree and branch exist by then, and must go.
    proc = gasp(project, "init", "--branch", "--agent-id", "bad id!")
    assert proc.returncode in (1, 2), out(proc)
    assert "Traceback" not in proc.stderr.decode()
    assert (project / ".git" / "config").read_bytes() == config
    assert "gasp/state" not in git(project, "branch", "--list")
    assert "gasp-state" not in git(project, "worktree", "list")
    assert not (project / ".git" / "gasp-state").exists()


@pytest.mark.slow  # over half a second: out of the fast loop
def test_restore_branch_brings_the_agent_up_without_the_project(project, tmp_path):
    _init(project)
    assert gasp(project, "record", "goal", "--title", "kept").returncode == 0
    state = project / ".git" / "gasp-state"
    git(state, "add", "-A")
    git(state, "commit", "-qm", "a goal", "--no-verify")
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(project, "push", "-q", str(bare), "HEAD:refs/heads/main", "gasp/state")
    dest = tmp_path / "restored"
    proc = gasp(tmp_path, "restore", str(bare), str(dest), "--branch", "gasp/state")
    assert proc.returncode == 0, out(proc)
    assert "open goals (1)" in proc.stdout.decode() and "kept" in proc.stdout.decode()
    assert git(dest, "symbolic-ref", "HEAD").strip() == "refs/heads/gasp/state"
    assert not (dest / "app.py").exists()
    assert git(dest, "rev-parse", "--verify", "-q", "origin/main", check=False) == ""
    assert gasp(dest, "check").returncode == 0


@pytest.mark.slow  # over half a second: out of the fast loop
@pytest.mark.parametrize("where", ["subfolder", "sibling"])
def test_init_of_a_folder_or_sibling_is_found_from_the_project(project, where):
    path = "agent-state" if where == "subfolder" else "../sibling-agent"
    proc = gasp(project, "init", path)
    assert proc.returncode == 0, out(proc)
    assert "gasp.state" in proc.stdout.decode()
    goal = gasp(project, "record", "goal", "--title", "found")
    assert goal.returncode == 0, out(goal)
    root = (project / path).resolve()
    assert b"found" in (root / "state" / "events.jsonl").read_bytes()
    status = json.loads(gasp(project, "status", "--json").stdout)
    assert Path(status["root"]).resolve() == root
    assert status["location"]["kind"] == "path"
    assert gasp(project, "check").returncode == 0


def test_the_cli_names_the_same_default_branch():
    from git_gasp.cli.commands import init
    from git_gasp.store import statebranch

    assert init.DEFAULT_BRANCH == statebranch.DEFAULT_BRANCH


@pytest.mark.slow  # over half a second: out of the fast loop
def test_prime_writes_the_projects_claude_md_not_the_state_branchs(project):
    _init(project)
    proc = gasp(project, "adapt", "claude-code", "prime")
    assert proc.returncode == 0, out(proc)
    assert "gasp" in (project / "CLAUDE.md").read_text()
    state = Path(git(project, "rev-parse", "--path-format=absolute", "--git-common-dir")
                 .strip()) / "gasp-state"
    assert not (state / "CLAUDE.md").exists()


@pytest.mark.slow  # over half a second: out of the fast loop
def test_a_projects_own_agent_md_does_not_hide_the_state_branch(project):
    """AGENT.md is also a name projects give their agent instructions."""
    (project / "AGENT.md").write_text("# How to work on this app\n")
    git(project, "add", "AGENT.md")
    git(project, "commit", "-qm", "agent instructions")
    _init(project)
    goal = gasp(project, "record", "goal", "--title", "on the branch")
    assert goal.returncode == 0, out(goal)
    assert (project / "AGENT.md").read_text() == "# How to work on this app\n"
    assert git(project, "status", "--porcelain") == ""
    assert gasp(project, "check").returncode == 0
