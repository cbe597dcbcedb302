"""`redact.paths`: machine paths made local in what a session stores."""

from __future__ import annotations

from git_gasp.redact.paths import LocalPaths, project_top, transcript_ref


def test_local_paths():
    paths = LocalPaths("/home/dev/app", "/home/dev")
    assert paths.text("/home/dev/app/calc.py") == "calc.py"
    assert paths.text("cd /home/dev/app && ls") == "cd . && ls"
    assert paths.text("rootdir: /home/dev/app\n") == "rootdir: .\n"
    assert paths.text("/home/dev/app2/x") == "~/app2/x"  # another project under home
    assert paths.text("/home/devx/y") == "/home/devx/y"  # not a path under home
    assert paths.value({"a": ["/home/dev/.claude/x"]}) == {"a": ["~/.claude/x"]}
    assert LocalPaths("/home/dev/app", "/home/dev", absolute=True).text(
        "/home/dev/app/x") == "/home/dev/app/x"
    assert LocalPaths("/", "/").text("/etc/passwd") == "/etc/passwd"
    assert transcript_ref("/home/dev/t.jsonl", "transcripts/r.jsonl.gz") == (
        "transcripts/r.jsonl.gz")
    assert transcript_ref("/home/dev/t.jsonl", None).startswith("sha256:")


def test_the_project_top_is_the_work_tree_above(tmp_path):
    (tmp_path / "p" / ".git").mkdir(parents=True)
    (tmp_path / "p" / "src" / "deep").mkdir(parents=True)
    assert project_top(str(tmp_path / "p" / "src" / "deep")) == str(tmp_path / "p")
    assert project_top(str(tmp_path / "elsewhere")) == str(tmp_path / "elsewhere")
    assert project_top(None) is None and project_top("relative/dir") is None
