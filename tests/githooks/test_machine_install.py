"""`git gasp install`: the merge driver once per machine, in the global git config.

After it, a fresh clone (no per-repository step) merges concurrent log appends under
a plain `git pull`; `--uninstall` removes exactly what it defined; a driver that is
not git-gasp's is left alone unless `--force`; where the driver is missing, `record`
and `check` say so in one line with the command to run.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.testing.run import gasp, git

NOTE = "fix: git gasp install (once per machine)"


def _global(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "config", "--global", *args], capture_output=True)


def _origin(tmp_path: Path) -> Path:
    """A bare remote holding a fresh agent repository (`git gasp init`, pushed)."""
    work = tmp_path / "seed"
    assert gasp(tmp_path, "init", str(work)).returncode == 0
    bare = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    return bare


def _record(clone: Path, summary: str) -> subprocess.CompletedProcess:
    proc = gasp(clone, "record", "observation", "--summary", summary)
    assert proc.returncode == 0, proc.stderr
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", summary, "--no-verify")
    return proc


@pytest.mark.slow  # over half a second: out of the fast loop
def test_after_install_a_fresh_clone_merges_concurrent_appends_under_a_plain_pull(tmp_path):
    proc = gasp(tmp_path, "install")
    assert proc.returncode == 0, proc.stderr
    assert "global git config" in proc.stdout.decode()
    driver = _global("--get", "merge.gasp.driver").stdout.decode().strip()
    assert driver.endswith("merge-driver --ancestor %O --current %A --other %B "
                           "--marker-size %L --path %P"), driver
    bare = _origin(tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    for clone in (a, b):
        git(tmp_path, "clone", "-q", str(bare), str(clone))
        local = subprocess.run(["git", "config", "--local", "--get", "merge.gasp.driver"],
                               cwd=clone, capture_output=True)
        assert local.returncode != 0  # nothing per repository
    first = _record(a, "from a")
    assert NOTE not in first.stderr.decode()  # the driver is defined: no note
    git(a, "push", "-q", "origin", "HEAD")
    _record(b, "from b")
    pull = subprocess.run(["git", "pull", "-q", "--no-rebase", "--no-edit"], cwd=b,
                          capture_output=True)
    assert pull.returncode == 0, pull.stderr
    log = (b / "state" / "events.jsonl").read_bytes()
    assert b"<<<<<<<" not in log and b">>>>>>>" not in log
    assert b"from a" in log and b"from b" in log
    check = gasp(b, "check")
    assert check.returncode == 0, check.stdout.decode() + check.stderr.decode()


@pytest.mark.slow  # over half a second: out of the fast loop
def test_without_the_driver_record_and_check_say_so_in_one_line(tmp_path):
    bare = _origin(tmp_path)
    clone = tmp_path / "c"
    git(tmp_path, "clone", "-q", str(bare), str(clone))
    rec = _record(clone, "no driver")
    notes = [line for line in rec.stderr.decode().splitlines() if NOTE in line]
    assert len(notes) == 1, rec.stderr
    check = gasp(clone, "check")
    assert sum(NOTE in line for line in check.stderr.decode().splitlines()) == 1, check.stderr
    assert gasp(tmp_path, "install").returncode == 0
    assert NOTE not in gasp(clone, "check").stderr.decode()


def test_uninstall_removes_exactly_what_install_defined(tmp_path):
    gitconfig = Path(os.environ["HOME"]) / ".gitconfig"
    before = gitconfig.read_bytes()
    assert gasp(tmp_path, "install").returncode == 0
    again = gasp(tmp_path, "install")
    assert again.returncode == 0 and "already" in again.stdout.decode()
    proc = gasp(tmp_path, "install", "--uninstall")
    assert proc.returncode == 0, proc.stderr
    assert gitconfig.read_bytes() == before
    assert "nothing to remove" in gasp(tmp_path, "install", "--uninstall").stdout.decode()


def test_a_foreign_merge_gasp_driver_is_left_alone_unless_forced(tmp_path):
    _global("merge.gasp.driver", "my-own-merge %A %O %B")
    proc = gasp(tmp_path, "install")
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "--force" in err and len(err.strip().splitlines()) == 1, err
    assert _global("--get", "merge.gasp.driver").stdout.decode().strip() == \
        "my-own-merge %A %O %B"
    refused = gasp(tmp_path, "install", "--uninstall")
    assert refused.returncode == 1
    assert _global("--get", "merge.gasp.driver").stdout.decode().strip() == \
        "my-own-merge %A %O %B"
    assert gasp(tmp_path, "install", "--force").returncode == 0
    assert "merge-driver" in _global("--get", "merge.gasp.driver").stdout.decode()


def _gitconfig() -> Path:
    return Path(os.environ["HOME"]) / ".gitconfig"


def test_a_foreign_driver_in_an_included_file_is_refused_and_kept(tmp_path):
    """git reads `[include]`d files; `--global --get` did not, so install replaced the
    driver an included file defines without --force."""
    included = Path(os.environ["HOME"]) / "team.gitconfig"
    included.write_text('[merge "gasp"]\n\tdriver = team-merge %O %A %B\n')
    _global("include.path", str(included))
    before = _gitconfig().read_bytes()
    proc = gasp(tmp_path, "install")
    err = proc.stderr.decode()
    assert proc.returncode == 1 and err.count("\n") == 1, err
    assert "team.gitconfig" in err and "team-merge" in err and "--force" in err
    assert _gitconfig().read_bytes() == before
    assert included.read_text() == '[merge "gasp"]\n\tdriver = team-merge %O %A %B\n'


def test_a_foreign_value_beside_ours_is_refused_and_uninstall_keeps_it(tmp_path):
    """A key set twice: install refuses while any value is foreign; uninstall removes
    the exact value git-gasp wrote and nothing else (not `--unset-all` of the key)."""
    assert gasp(tmp_path, "install").returncode == 0
    ours = _global("--get", "merge.gasp.driver").stdout.decode().strip()
    _global("--add", "merge.gasp.driver", "someone-elses %A")
    assert gasp(tmp_path, "install").returncode == 1
    proc = gasp(tmp_path, "install", "--uninstall")
    assert proc.returncode == 0, proc.stderr
    assert "someone-elses" in proc.stdout.decode()  # said what it left
    left = _global("--get-all", "merge.gasp.driver").stdout.decode().splitlines()
    assert left == ["someone-elses %A"] and ours not in left


def test_force_replaces_every_value_of_the_global_file(tmp_path):
    _global("--add", "merge.gasp.driver", "one %A")
    _global("--add", "merge.gasp.driver", "two %A")
    proc = gasp(tmp_path, "install", "--force")
    assert proc.returncode == 0, proc.stderr
    (value,) = _global("--get-all", "merge.gasp.driver").stdout.decode().splitlines()
    assert value.endswith("merge-driver --ancestor %O --current %A --other %B "
                          "--marker-size %L --path %P")
