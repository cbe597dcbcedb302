"""`git gasp CMD --help` shows the manual (man, `man -l`, or the built-in renderer);
`-h` stays the short usage; `git gasp help [CMD] [--man-path]`."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from git_gasp.cli.help import manual_request, page_name, render
from tests.testing.paths import REPO_ROOT
from tests.testing.run import git_gasp_exe

MAN_DIR = REPO_ROOT / "man"


def _run(args: list[str], cwd: Path, *, path: str | None = None, **env: str):
    full = dict(os.environ, LC_ALL="C", MANWIDTH="80", MANPAGER="cat", PAGER="cat", **env)
    full.pop("MANPATH", None)
    if path is not None:
        full["PATH"] = path
    return subprocess.run(
        [*git_gasp_exe(), *args], capture_output=True, text=True, cwd=cwd, env=full,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize(
    "argv, page",
    [
        (["--help"], "git-gasp"),
        (["check", "--help"], "git-gasp-check"),
        (["check", "fixture", "--json", "--help"], "git-gasp-check"),
        (["memory", "add", "--help"], "git-gasp-memory"),
        (["kg", "--session-id", "s1", "search", "--help"], "git-gasp-kg"),
        (["help", "--help"], "git-gasp"),
        (["check", "-h"], None),  # -h: click's short usage, as in git
        (["check"], None),
        (["record", "goal", "--", "--help"], None),  # after --, an argument
        (["no-such-command", "--help"], None),  # click reports the unknown command
    ],
)
def test_manual_request(argv, page):
    assert manual_request(argv) == page


def test_page_name():
    assert page_name(None) == page_name("gasp") == page_name("help") == "git-gasp"
    assert page_name("check") == page_name("git-gasp-check") == "git-gasp-check"


# --- the renderer ----------------------------------------------------------------------


@pytest.mark.parametrize("page", sorted(p.name for p in MAN_DIR.glob("*.1")))
def test_every_page_renders_to_plain_text(page):
    source = (MAN_DIR / page).read_text()
    text = render(source, width=80)
    lines = text.splitlines()
    verbatim = source.replace("\\-", "-").replace("\\e", "\\")  # .nf lines stay as written
    assert lines[0] == lines[-1] and lines[0].endswith("(1)")
    for head in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS"):
        assert head in lines, head
    too_long = [ln for ln in lines if len(ln) > 80 and " " in ln.strip()]
    assert not [ln for ln in too_long if ln.strip() not in verbatim], "wrap at 80"
    leftovers = [ln for ln in lines if ln.lstrip().startswith(".") and ln.lstrip()[1:2].isupper()]
    assert not leftovers, leftovers
    assert "\\f" not in text and "\\-" not in text and "\\(" not in text


def test_render_layout():
    src = "\n".join(
        [
            '.\\" a comment',
            '.TH GIT\\-GASP\\-X 1 "2026-11-30" "git-gasp 0.1.0" "Git Manual"',
            ".SH NAME",
            "git\\-gasp\\-x \\- do x",
            ".SH OPTIONS",
            ".TP",
            '.BI \\-\\-from " ID"',
            "Where it came",
            "from (\\fIrepeatable\\fR), \\(lqquoted\\(rq.",
            ".PP",
            ".RS 4",
            ".nf",
            "$ git gasp x  \\-\\-from a",
            ".fi",
            ".RE",
            "Back.",
        ]
    )
    assert render(src).splitlines() == [
        "GIT-GASP-X(1)",
        "",
        "NAME",
        "       git-gasp-x - do x",
        "",
        "OPTIONS",
        "       --from ID",
        "              Where it came from (repeatable), \u201cquoted\u201d.",
        "",
        "           $ git gasp x  --from a",
        "       Back.",
        "",
        "GIT-GASP-X(1)",
    ]


# --- end to end, as the checkout's venv has it -------------------------------------------


def test_dash_h_is_the_short_usage(tmp_path):
    proc = _run(["check", "-h"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Usage: git gasp check")


@pytest.mark.skipif(shutil.which("man") is None, reason="man (man-db) is not installed")
def test_double_dash_help_opens_the_page_with_man(tmp_path):
    proc = _run(["memory", "add", "--help"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.lstrip().startswith("GIT-GASP-MEMORY(1)")
    assert "OPTIONS OF ADD" in proc.stdout


def test_without_man_the_page_is_rendered(tmp_path):
    """No `man` on PATH: the built-in renderer, plain on a pipe."""
    empty = tmp_path / "bin"
    empty.mkdir()
    proc = _run(["check", "--help"], tmp_path, path=str(empty))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == render((MAN_DIR / "git-gasp-check.1").read_text(), width=80)
    proc = _run(["help"], tmp_path, path=str(empty))
    assert proc.returncode == 0 and proc.stdout.startswith("GIT-GASP(1)"), proc.stderr


def test_help_command(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    proc = _run(["help", "lease"], tmp_path, path=str(empty))
    assert proc.returncode == 0 and proc.stdout.startswith("GIT-GASP-LEASE(1)"), proc.stderr
    proc = _run(["help", "nope"], tmp_path, path=str(empty))
    assert proc.returncode == 2 and "nope" in proc.stderr and not proc.stdout
    listed = _run(["-h"], tmp_path).stdout
    assert "  help " in listed


def test_man_path_in_an_editable_install_says_why_not(tmp_path):
    """The checkout's venv is editable: no man pages under its prefix."""
    proc = _run(["help", "--man-path"], tmp_path)
    if proc.returncode == 0:  # a regular install of the checkout
        assert Path(proc.stdout.strip(), "man1", "git-gasp.1").is_file()
    else:
        assert proc.returncode == 2 and "--help" in proc.stderr


def test_on_a_terminal_the_rendered_page_goes_through_the_pager(tmp_path):
    """A pseudo-terminal, no man: MANPAGER gets the page; on a pipe (above) it does not."""
    import pty

    empty = tmp_path / "bin"
    empty.mkdir()
    seen = tmp_path / "paged"
    env = dict(os.environ, PATH=str(empty), MANPAGER=f"/bin/cat > {seen}", MANWIDTH="80")
    env.pop("PAGER", None)
    primary, secondary = pty.openpty()
    proc = subprocess.run([*git_gasp_exe(), "journal", "--help"], cwd=tmp_path, env=env,
                          stdin=subprocess.DEVNULL, stdout=secondary, stderr=subprocess.PIPE)
    os.close(secondary)
    os.close(primary)
    assert proc.returncode == 0, proc.stderr
    assert seen.read_text() == render((MAN_DIR / "git-gasp-journal.1").read_text(), width=80)


@pytest.mark.slow  # over half a second: out of the fast loop
def test_minus_h_says_it_is_the_usage_and_help_the_manual(tmp_path):
    """As in git: -h prints the usage, --help opens the manual; the usage says so instead
    of click's "Show this message" for both."""
    from tests.testing.run import gasp

    for args in (("-h",), ("check", "-h"), ("memory", "add", "-h"), ("kg", "search", "-h")):
        proc = gasp(tmp_path, *args)
        text = proc.stdout.decode()
        assert proc.returncode == 0 and "Show this message" not in text, args
        assert "-h, --help" in text and "the manual page (--help)" in text, args
