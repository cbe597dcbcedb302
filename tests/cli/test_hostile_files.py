"""Files that are not what they claim to be, met through the installed `git gasp` as a
user or a cloned repository meets them: a committed ``.agent/lease`` that links to
/dev/zero, a FIFO at ``.agent/HEAD``, a queue entry that links to another payload, the
saved indexes, caches and locks under ``<gitdir>/gasp/`` replaced by links or FIFOs.
Each command finishes (a FIFO is never waited on, /dev/zero never read), with a
verdict or one error line, never exit 3 and never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.adapters.samples import CLAUDE_HOOKS, read_jsonl
from tests.testing.run import git, out

pytestmark = pytest.mark.slow  # a CLI run per hostile file

HANG = 120  # seconds: a guard against a hang, never a measure of speed


def run(repo: Path, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(["git", "gasp", *args], cwd=repo, input=input,
                              capture_output=True, timeout=HANG)
    except subprocess.TimeoutExpired:
        pytest.fail(f"git gasp {' '.join(args)} hung")
    text = out(proc)
    assert proc.returncode != 3 and "internal error" not in text, text
    assert "Traceback" not in text, text
    return proc


def gitdir(repo: Path) -> Path:
    return Path(git(repo, "rev-parse", "--absolute-git-dir").strip())


def _replace(path: Path, kind: str) -> None:
    path.unlink(missing_ok=True)
    if kind == "zero":
        path.symlink_to("/dev/zero")
    else:
        os.mkfifo(path)


def test_a_cloned_repository_with_a_committed_lease_link_to_dev_zero(agent, tmp_path):
    (agent / ".agent" / "lease").symlink_to("/dev/zero")
    git(agent, "add", "-f", ".agent/lease")
    git(agent, "commit", "-q", "--no-verify", "-m", "a lease for everyone")
    sha = git(agent, "rev-parse", "HEAD").strip()
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(agent), str(clone))
    assert (clone / ".agent" / "lease").is_symlink()
    proc = run(clone, "check")
    assert proc.returncode == 1, out(proc)
    assert f".agent/lease commit {sha[:12]}: .agent/lease is committed" in out(proc)
    for args in (("lease", "status"), ("doctor",), ("record", "goal", "--title", "t")):
        proc = run(clone, *args)
        assert proc.returncode in (1, 2) and ".agent/lease" in out(proc), (args, out(proc))
    row = dict(read_jsonl(CLAUDE_HOOKS)[0], cwd=str(clone))
    proc = run(clone, "adapt", "hook", input=json.dumps(row).encode())
    assert proc.returncode == 0, out(proc)  # the hook never fails the agent


@pytest.mark.parametrize("name", ["HEAD", "lease"])
def test_a_fifo_in_the_control_plane_hangs_nothing(agent, name):
    os.mkfifo(agent / ".agent" / name)
    for args in (("check",), ("fold",), ("run", "status"), ("lease", "status"), ("doctor",),
                 ("record", "goal", "--title", "t"), ("log",)):
        proc = run(agent, *args)
        if name == "lease" and args[0] in ("lease", "doctor", "record"):
            assert proc.returncode in (1, 2) and ".agent/lease" in out(proc), out(proc)
    row = dict(read_jsonl(CLAUDE_HOOKS)[0], cwd=str(agent))
    assert run(agent, "adapt", "hook", input=json.dumps(row).encode()).returncode == 0


def test_a_symlinked_queue_entry_is_set_aside_not_followed(agent, tmp_path):
    rows = read_jsonl(CLAUDE_HOOKS)
    planted = dict(rows[0], cwd=str(agent), session_id="planted-session-0000")
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"agent": "claude-code", "payload": planted}))
    queue = gitdir(agent) / "gasp" / "queue"
    queue.mkdir(parents=True)
    link = queue / "00000000000000000001-00000001-00000000.json"
    link.symlink_to(elsewhere)
    proc = run(agent, "adapt", "hook", input=json.dumps(dict(rows[0], cwd=str(agent))).encode())
    assert proc.returncode == 0, out(proc)
    log = (agent / "state" / "events.jsonl").read_bytes()
    assert b"planted-session" not in log  # the link's target was never recorded
    assert (queue / "failed" / link.name).is_symlink() and not link.exists()
    adapter_log = (gitdir(agent) / "gasp" / "adapter.log").read_text()
    assert f"{link.name}: not understood" in adapter_log and "symbolic link" in adapter_log
    proc = run(agent, "doctor")
    assert "queue" in out(proc), out(proc)
    assert elsewhere.read_text().startswith('{"agent"')  # untouched


@pytest.mark.parametrize("kind", ["zero", "fifo"])
def test_saved_indexes_caches_and_locks_replaced_by_links_or_fifos(agent, kind):
    for title in ("one", "two"):
        assert run(agent, "record", "goal", "--title", title).returncode == 0
        git(agent, "add", "-A")
        git(agent, "commit", "-q", "-m", title)  # the guard saves the log's index
    assert run(agent, "check").returncode == 0  # the caches and saved states
    saved = gitdir(agent) / "gasp"
    names = sorted(p.name for p in saved.iterdir() if p.is_file())
    for kind_of in ("check4-", "guard-", "logstate-", "proven-"):
        assert any(n.startswith(kind_of) for n in names), (kind_of, names)
    assert any(n.endswith(".checked") for n in names), names
    for name in names:
        _replace(saved / name, kind)
    proc = run(agent, "check")
    assert proc.returncode == 0, out(proc)  # nothing saved is trusted; all rechecked
    assert run(agent, "record", "goal", "--title", "three").returncode == 0
    git(agent, "add", "-A")
    proc = subprocess.run(["git", "commit", "-q", "-m", "three"], cwd=agent,
                          capture_output=True, timeout=HANG)  # the guard, through git
    assert proc.returncode == 0 or "git gasp: error" in out(proc), out(proc)
    assert "internal error" not in out(proc) and "Traceback" not in out(proc)
    for args in (("check",), ("doctor",), ("lease", "status")):
        run(agent, *args)


def test_a_symlinked_sync_lock_or_record_is_one_line(agent, tmp_path):
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(agent, "remote", "add", "origin", str(remote))
    git(agent, "push", "-q", "origin", "main")
    state = gitdir(agent) / "gasp"
    state.mkdir(exist_ok=True)
    (state / "sync.json").symlink_to("/dev/zero")
    proc = run(agent, "sync")
    assert proc.returncode == 0, out(proc)
    (state / "sync.lock").unlink()
    (state / "sync.lock").symlink_to(tmp_path / "elsewhere.lock")
    proc = run(agent, "sync")
    assert proc.returncode in (1, 5) and "sync.lock" in out(proc), out(proc)
    assert not (tmp_path / "elsewhere.lock").exists()
