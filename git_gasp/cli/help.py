"""The manual in any install: `git gasp [CMD] --help` and `git gasp help [CMD]`.

A command's page is ``git-gasp-CMD`` (``git-gasp`` for the tool). It is shown by
``man -l`` on the copy shipped inside the package (``git_gasp.man``, built from the
top-level ``man/``, so editable, pipx and uv tool installs carry it too: the page of
this very version, whatever MANPATH holds); by ``man CMD`` if the package lacks it;
else, with no working ``man``, rendered to plain text here from a small roff subset,
through ``MANPAGER``/``PAGER`` on a terminal.

As in git, ``-h`` is the short usage (click's) and ``--help`` the manual.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path
from typing import NoReturn

import click

from git_gasp.base.errors import UsageError
from git_gasp.cli.handler import exit_for_error

_PACKAGE = "git_gasp.man"


def manual_request(argv: list[str]) -> str | None:
    """The page `argv` asks for with ``--help`` (before any ``--``), else None (also for
    a command with no page: click then reports the unknown command).

    Every page belongs to a top-level command (a subcommand's options are in its
    command's page), so the first word that is not an option names it.
    """
    words = argv[: argv.index("--")] if "--" in argv else argv
    if "--help" not in words:
        return None
    command = next((w for w in words if not w.startswith("-")), None)
    name = page_name(command)
    return name if packaged_page(name) is not None else None


def page_name(command: str | None) -> str:
    """``git-gasp-COMMAND``, or ``git-gasp`` for None and ``help`` (a full page name is kept)."""
    if not command or command in ("gasp", "git-gasp", "help"):
        return "git-gasp"
    if command.startswith("git-gasp-"):
        return command
    return f"git-gasp-{command}"


def _man_dir() -> Traversable:
    """The package's copy of the pages, else the checkout's man/ (a source tree on sys.path)."""
    try:
        return resources.files(_PACKAGE)
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[2] / "man"


def packaged_page(name: str) -> Traversable | None:
    """The shipped source of page `name`, or None when this install has no such page."""
    page = _man_dir().joinpath(f"{name}.1")
    return page if page.is_file() else None


def installed_man_dir() -> Path | None:
    """The MANPATH entry of a regular install (``<prefix>/share/man``), if it placed the pages."""
    share = Path(sys.prefix) / "share" / "man"
    return share if (share / "man1" / "git-gasp.1").is_file() else None


def _run(argv: list[str], **kw) -> int | None:
    """The exit status of `argv`, or None when it cannot run."""
    try:
        return subprocess.run(argv, **kw).returncode
    except OSError:
        return None


def show_manual(name: str) -> int:
    """Show page `name` (see the module docstring); the exit status to end with."""
    page = packaged_page(name)
    man = shutil.which("man")
    if man is not None:
        if page is not None:  # the copy of this very version, wherever MANPATH points
            with resources.as_file(page) as path:
                if _run([man, "-l", str(path)]) == 0:
                    return 0
        elif _run([man, name]) == 0:
            return 0
    if page is None:
        raise UsageError(f"no manual page {name} in this install")
    _page(render(page.read_text(encoding="utf-8"), width=_width()))
    return 0


def run_manual(name: str) -> NoReturn:
    """`show_manual` as the whole run: its exit status, errors through the one handler."""
    try:
        code = show_manual(name)
    except BaseException as exc:  # noqa: BLE001 - the one handler decides
        exit_for_error(exc)
    sys.exit(code)


def _width() -> int:
    try:
        width = int(os.environ.get("MANWIDTH", ""))
    except ValueError:
        width = shutil.get_terminal_size((80, 24)).columns if sys.stdout.isatty() else 80
    return max(40, min(width, 100))


def _page(text: str) -> None:
    """`text` through the manual pager on a terminal (MANPAGER, PAGER, else less as git
    runs it: LESS=FRX), plain on a pipe or when no pager runs."""
    if sys.stdout.isatty():
        pager = os.environ.get("MANPAGER") or os.environ.get("PAGER")
        if pager is None and shutil.which("less"):
            pager = "less"
        if pager and pager != "cat" and _through(pager, text):
            return
    sys.stdout.write(text)
    sys.stdout.flush()


def _through(pager: str, text: str) -> bool:
    """Whether the shell command `pager` ran and was given `text`."""
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    try:
        proc = subprocess.Popen(pager, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:
        return False
    try:
        assert proc.stdin is not None
        proc.stdin.write(text.encode())
        proc.stdin.close()
    except BrokenPipeError:  # the reader quit early
        pass
    return proc.wait() != 127  # 127: the shell found no such command


# --- a roff (man macros) subset to plain text ------------------------------------------

_GLYPHS = {
    "dq": '"', "lq": "\u201c", "rq": "\u201d", "oq": "\u2018", "cq": "\u2019",
    "aq": "'", "em": "\u2014", "en": "\u2013", "bu": "\u2022", "hy": "-", "mi": "-",
    "ti": "~", "ha": "^", "rs": "\\", "co": "\u00a9", "->": "\u2192", "<-": "\u2190",
}
_ESCAPE = re.compile(
    r"\\(\((..)|\[([^\]]*)\]"  # \(xx \[name]: a glyph
    r"|f(?:\((..)|\[[^\]]*\]|.)"  # \fB \f(CW \f[I]: a font
    r"|[-e\\&~ 0|^c]"  # \- \e \\ \& and the spaces
    r"|\*(?:\(..|\[[^\]]*\]|.))"  # \*x: a string
)
_NBSP = "\u00a0"  # an unbreakable space while wrapping, a space when written


def _unescape(text: str) -> str:
    def sub(m: re.Match) -> str:
        whole = m.group(1)
        if m.group(2) is not None or m.group(3) is not None:
            name = m.group(2) or m.group(3)
            return _GLYPHS.get(name, "?")
        if whole.startswith(("f", "*")) or whole in ("&", "|", "^", "c"):
            return ""
        if whole in ("~", " ", "0"):
            return _NBSP
        return {"-": "-", "e": "\\", "\\": "\\"}.get(whole, "")

    return _ESCAPE.sub(sub, text)


def _args(line: str) -> list[str]:
    """A macro line's arguments, roff-quoted (``"a b"``; ``""`` is a quote inside one)."""
    args, i, n = [], 0, len(line)
    while i < n:
        if line[i] in " \t":
            i += 1
            continue
        if line[i] == '"':
            i += 1
            arg = []
            while i < n:
                if line[i] == '"':
                    if line[i + 1 : i + 2] == '"':
                        arg.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                arg.append(line[i])
                i += 1
            args.append("".join(arg))
        else:
            j = i
            while j < n and line[j] not in " \t":
                j += 1
            args.append(line[i:j])
            i = j
    return args


_FONT_PAIRS = {"BR", "RB", "BI", "IB", "IR", "RI"}


class _Renderer:
    def __init__(self, width: int) -> None:
        self.width = width
        self.out: list[str] = []
        self.words: list[str] = []
        self.indent = 7  # body text, as man(1) lays it out
        self.base = 7  # .RS moves it
        self.stack: list[int] = []
        self.tag: str | None = None  # a .TP tag waiting for its body
        self.want_tag = False
        self.fill = True
        self.title = ""
        self.heading = -1  # the index in `out` of the last section heading

    def blank(self) -> None:
        if self.out and self.out[-1] != "" and len(self.out) - 1 != self.heading:
            self.out.append("")

    def flush(self) -> None:
        if self.tag is not None:
            tag, self.tag = self.tag, None
            self.out.append(" " * (self.base) + tag.replace(_NBSP, " "))
        if not self.words:
            return
        text = " ".join(self.words)
        self.words = []
        lines = textwrap.wrap(
            text, self.width - self.indent, break_on_hyphens=False, break_long_words=False
        ) or [""]
        self.out.extend(" " * self.indent + ln.replace(_NBSP, " ") for ln in lines)

    def text(self, line: str) -> None:
        text = _unescape(line)
        if self.want_tag:
            self.want_tag = False
            self.tag = text.strip()
            return
        if not self.fill:
            self.flush()
            self.out.append((" " * self.indent + text.replace(_NBSP, " ")).rstrip())
            return
        if not text.strip():
            self.flush()
            self.blank()
            return
        self.words.extend(text.split())

    def paragraph(self, indent: int) -> None:
        self.flush()
        self.blank()
        self.indent = indent

    def macro(self, name: str, rest: str) -> None:
        args = _args(rest)
        if name == "TH":
            self.title = f"{_unescape(args[0]) if args else ''}({args[1] if len(args) > 1 else ''})"
            self.out.append(self.title)
        elif name in ("SH", "SS"):
            self.flush()
            self.stack.clear()
            self.base = 7
            self.blank()
            head = _unescape(" ".join(args))
            self.out.append((" " * (0 if name == "SH" else 3)) + head.replace(_NBSP, " "))
            self.heading = len(self.out) - 1
            self.indent = 7
            return
        elif name in ("PP", "P", "LP"):
            self.paragraph(self.base)
        elif name == "TP":
            self.paragraph(self.base + 7)
            self.want_tag = True
        elif name == "IP":
            self.paragraph(self.base + 7)
            if args and args[0]:
                self.tag = _unescape(args[0])
        elif name == "RS":
            self.flush()
            self.stack.append(self.base)
            self.base = self.indent + (int(args[0]) if args and args[0].isdigit() else 7)
            self.indent = self.base
        elif name == "RE":
            self.flush()
            self.base = self.stack.pop() if self.stack else 7
            self.indent = self.base
        elif name in ("nf", "EX"):
            self.flush()
            self.fill = False
        elif name in ("fi", "EE"):
            self.flush()
            self.fill = True
        elif name == "br":
            self.flush()
        elif name == "sp":
            self.flush()
            self.out.append("")
        elif name in ("B", "I", "SM", "SB"):
            if args:
                self.text(" ".join(a.replace(" ", "\\ ") for a in args))
        elif name in _FONT_PAIRS:
            self.text("".join(a.replace(" ", "\\ ") for a in args))
        # anything else (.ad, .na, .hy, .ft, .ne, .so…) changes nothing in plain text

    def done(self) -> str:
        self.flush()
        while self.out and self.out[-1] == "":
            self.out.pop()
        if self.title:
            self.out.extend(["", self.title])
        return "\n".join(self.out) + "\n"


def render(source: str, width: int = 80) -> str:
    """Plain text of a man page written in the man macros (the subset man/ uses)."""
    r = _Renderer(width)
    for line in source.splitlines():
        if line.startswith((".\\\"", "'\\\"", '.\\"')) or line in (".", "'"):
            continue
        if line.startswith((".", "'")):
            name, _, rest = line[1:].strip().partition(" ")
            r.macro(name, rest)
        else:
            r.text(line)
    return r.done()


# --- `git gasp help` -------------------------------------------------------------------


@click.command("help", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("command", required=False)
@click.option("--man-path", is_flag=True,
              help="Print the directory to add to MANPATH so `git help gasp` finds the pages.")
def help_command(command: str | None, man_path: bool) -> int:
    """Show the manual page of COMMAND (default: git-gasp itself)."""
    if man_path:
        where = installed_man_dir()
        if where is None:
            raise UsageError(
                "this install placed no man pages under its prefix (an editable install?); "
                "`git gasp COMMAND --help` shows them")
        click.echo(str(where))
        return 0
    name = page_name(command)
    if packaged_page(name) is None:
        raise UsageError(f"no manual page for {command!r}; see `git gasp help`")
    return show_manual(name)
