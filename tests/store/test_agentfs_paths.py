"""store.agentfs over str roots: the refusals and names a Path root gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_gasp.store.agentfs import (
    AgentFileError,
    file_paths,
    list_files,
    read_regular,
    regular_file,
)


def _tree(root: Path) -> None:
    (root / "identity" / "sub").mkdir(parents=True)
    (root / "identity" / "a.md").write_bytes(b"a")
    (root / "identity" / "sub" / "b.md").write_bytes(b"b")
    (root / "state").mkdir()
    (root / "state" / "events.jsonl").write_bytes(b"{}\n")
    (root / "linked").symlink_to("state")
    (root / "log-link").symlink_to("state/events.jsonl")


@pytest.mark.parametrize("rel", ["state/events.jsonl", "state//events.jsonl/",
                                 "./state/events.jsonl", "linked/events.jsonl", "log-link",
                                 "state", "missing", "/etc/hostname"])
def test_a_str_root_reads_and_refuses_as_a_path_root(tmp_path, rel):
    _tree(tmp_path)
    answers = []
    for root in (tmp_path, str(tmp_path), f"{tmp_path}/"):
        try:
            answers.append((read_regular(root, rel), regular_file(root, rel).st_size))
        except AgentFileError as exc:
            answers.append(str(exc))
    assert answers[0] == answers[1] == answers[2]


def test_file_paths_are_list_files_as_strs(tmp_path):
    _tree(tmp_path)
    paths = file_paths(str(tmp_path), "identity")
    assert [rel for rel, _ in paths] == [b"identity/a.md", b"identity/sub/b.md"]
    assert [(rel, Path(p)) for rel, p in paths] == list_files(tmp_path, "identity")
    assert all(isinstance(p, str) for _, p in paths)
    with pytest.raises(AgentFileError, match="linked/ is a symlink"):
        file_paths(str(tmp_path), "linked")
