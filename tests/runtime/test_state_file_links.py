"""State files the runtime replaces inside the agent repo are never written through a
symbolic link: the write is refused with one line and the link's target is untouched."""

from __future__ import annotations

from tests.runtime.helpers import one_error_line
from tests.testing.run import gasp, out


def test_a_snapshot_is_not_written_through_a_linked_snapshots_dir(agent, tmp_path):
    proc = gasp(agent, "record", "goal", "--title", "x")
    assert proc.returncode == 0, out(proc)
    outside = tmp_path / "outside"
    outside.mkdir()
    (agent / "snapshots").symlink_to(outside, target_is_directory=True)
    line = one_error_line(gasp(agent, "snapshot"))
    assert "link" in line, line
    assert list(outside.iterdir()) == []


def test_active_memory_is_not_written_through_a_link(agent, tmp_path):
    victim = tmp_path / "victim.md"
    victim.write_bytes(b"keep me\n")
    active = agent / "memory" / "active_memory.md"
    active.parent.mkdir(exist_ok=True)
    active.unlink(missing_ok=True)
    active.symlink_to(victim)
    line = one_error_line(gasp(agent, "memory", "synthesize"))
    assert "symbolic link" in line, line
    assert victim.read_bytes() == b"keep me\n"
    assert active.is_symlink()
