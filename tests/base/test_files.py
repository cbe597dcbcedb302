"""Writing through `atomic_write` and `write_output` (git_gasp.base.files): modes, links,
roots, devices."""

from __future__ import annotations

import errno
import os
import stat
import threading

import pytest

from git_gasp.base.fileops import UnsafePath
from git_gasp.base.files import atomic_write


def test_replaces_the_content_and_keeps_the_mode(tmp_path):
    target = tmp_path / "f"
    target.write_bytes(b"old")
    target.chmod(0o640)
    atomic_write(target, b"new", root=tmp_path)
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert os.listdir(tmp_path) == ["f"]


def test_a_new_file_gets_the_mode_asked_for(tmp_path):
    atomic_write(tmp_path / "x", b"1", mode=0o600)
    assert stat.S_IMODE((tmp_path / "x").stat().st_mode) == 0o600


def test_refuses_a_link_at_the_target(tmp_path):
    outside = tmp_path / "outside"
    outside.write_bytes(b"secret")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "JOURNAL.md").symlink_to(outside)
    with pytest.raises(UnsafePath, match="symbolic link"):
        atomic_write(repo / "JOURNAL.md", b"x", root=repo)
    assert outside.read_bytes() == b"secret"
    assert (repo / "JOURNAL.md").is_symlink()


def test_refuses_a_link_in_a_parent_directory_inside_the_root(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "journal").symlink_to(elsewhere)
    with pytest.raises(UnsafePath, match="under a link"):
        atomic_write(repo / "journal" / "JOURNAL.md", b"x", root=repo)
    assert list(elsewhere.iterdir()) == []


def test_refuses_a_path_outside_the_root(tmp_path):
    with pytest.raises(UnsafePath, match="outside"):
        atomic_write(tmp_path / "repo" / ".." / "x", b"x", root=tmp_path / "repo")


def test_a_link_is_followed_only_into_the_places_the_caller_allows(tmp_path):
    home = tmp_path / "home"
    (home / "dotfiles").mkdir(parents=True)
    real = home / "dotfiles" / "settings.json"
    real.write_bytes(b"{}")
    repo = tmp_path / "repo"
    repo.mkdir()
    link = repo / "settings.json"
    link.symlink_to(real)
    written = atomic_write(link, b"{\"a\":1}", root=repo, link_targets_within=[repo, home])
    assert written == real and real.read_bytes() == b"{\"a\":1}" and link.is_symlink()
    with pytest.raises(UnsafePath):
        atomic_write(link, b"x", root=repo, link_targets_within=[repo])


# --- write_output: the file a user named with -o ------------------------------------


def test_write_output_writes_through_a_fifo_and_never_replaces_it(tmp_path):
    """A FIFO named as output is written to, as `>` would; it stays a FIFO."""
    from git_gasp.base.files import write_output

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_output(fifo, b"page\n")
    reader.join(10)
    assert got == [b"page\n"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_write_output_on_a_full_device_is_an_error_and_leaves_it_a_device():
    """/dev/full: ENOSPC, as a shell's > gets it; the device node is never replaced."""
    from git_gasp.base.files import write_output

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    with pytest.raises(OSError) as err:
        write_output("/dev/full", b"x" * 10)
    assert err.value.errno == errno.ENOSPC
    assert stat.S_ISCHR(os.lstat("/dev/full").st_mode)
    write_output("/dev/null", b"gone")  # a character device takes the bytes
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


def test_write_output_refuses_a_directory_and_replaces_a_regular_file(tmp_path):
    from git_gasp.base.fileops import UnsafePath
    from git_gasp.base.files import write_output

    with pytest.raises(UnsafePath, match="a directory; refusing"):
        write_output(tmp_path, b"x")
    out = tmp_path / "page.html"
    out.write_bytes(b"old")
    assert write_output(out, b"new") == out and out.read_bytes() == b"new"
    assert write_output(str(tmp_path / "new.html"), b"n") == tmp_path / "new.html"


def test_write_output_under_a_root_never_writes_through_a_link(tmp_path):
    """With `root` (a default path in the git dir), a link there to a device is refused
    as atomic_write refuses it, not followed to the device."""
    from git_gasp.base.fileops import UnsafePath
    from git_gasp.base.files import write_output

    link = tmp_path / "view.html"
    link.symlink_to("/dev/null")
    with pytest.raises(UnsafePath):
        write_output(link, b"page", root=tmp_path)
    assert link.is_symlink()
    write_output(link, b"page")  # named by the user, no root: its target takes it
