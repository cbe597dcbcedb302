"""Man pages against the click definitions: OPTIONS sections name exactly the real options.

Each command NAME has its page man/git-gasp-NAME.1 (the group, `git gasp` itself, has
git-gasp.1). Options are documented in the tag lines (the line after `.TP`) of the
page's option sections: `OPTIONS OF SUB` (SUB the subcommand's path under NAME, upper
case, e.g. `OPTIONS OF CLAUDE-CODE INSTALL`) for what only that subcommand takes,
`OPTIONS` for the rest (options several subcommands share, the group's own, -h/--help).
Every click option of a command appears in its own section or in OPTIONS; every option
an `OPTIONS OF SUB` names exists on SUB, and every option OPTIONS names on some command
of the page.
"""

from __future__ import annotations

import importlib
import re

import click
import pytest

from git_gasp.cli.group import cli
from git_gasp.cli.help import help_command
from git_gasp.cli.table import COMMANDS
from tests.testing.paths import REPO_ROOT

MAN_DIR = REPO_ROOT / "man"
HELP = {"-h", "--help"}
# an option in a tag line: roff-escaped `\-\-name` or `\-x`
_OPTION = re.compile(r"(?<![\w\\-])\\-(?:\\-[A-Za-z0-9][A-Za-z0-9\\-]*|[A-Za-z])(?![A-Za-z0-9])")


def _command(name: str) -> click.Command:
    module_name, attr = COMMANDS[name].split(":")
    return getattr(importlib.import_module(module_name), attr)


def _commands(cmd: click.Command, path: tuple[str, ...] = ()):
    """(path, command) for `cmd` and every subcommand below it."""
    yield path, cmd
    if isinstance(cmd, click.Group):
        for sub_name, sub in sorted(cmd.commands.items()):
            yield from _commands(sub, (*path, sub_name))


def _options(cmd: click.Command) -> set[str]:
    return {
        opt
        for p in cmd.params
        if p.param_type_name == "option"
        for opt in (*p.opts, *p.secondary_opts)
    } - HELP


def option_sections(text: str) -> dict[str, set[str]]:
    """Section title -> the options named in its `.TP` tag lines, for OPTIONS sections."""
    sections: dict[str, set[str]] = {}
    current: set[str] | None = None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(".SH"):
            title = line[3:].strip().strip('"').replace("\\-", "-")
            current = sections.setdefault(title, set()) if title.startswith("OPTIONS") else None
        elif line.startswith(".TP") and current is not None and i + 1 < len(lines):
            tag = lines[i + 1]
            current.update(m.group(0).replace("\\-", "-") for m in _OPTION.finditer(tag))
    return sections


PAGES = [("git-gasp.1", None), *((f"git-gasp-{name}.1", name) for name in sorted(COMMANDS))]


def _root(name: str | None) -> click.Command:
    if name is None:  # the group's own options and `help`; the others have their own pages
        return click.Group("git-gasp", params=cli.params, commands={"help": help_command})
    return _command(name)


@pytest.mark.parametrize("page, name", PAGES, ids=[p for p, _ in PAGES])
def test_options_sections_match_click(page, name):
    sections = option_sections((MAN_DIR / page).read_text())
    assert "OPTIONS" in sections, f"man/{page} has no OPTIONS section"
    assert HELP <= sections["OPTIONS"], f"man/{page}: OPTIONS does not name -h, --help"
    general = sections["OPTIONS"] - HELP
    problems, every = [], set()
    for path, cmd in _commands(_root(name)):
        options = _options(cmd)
        every |= options
        title = "OPTIONS OF " + " ".join(path).upper()
        own = sections.get(title, set()) if path else set()
        if missing := options - own - general:
            where = f"{title} or OPTIONS" if path else "OPTIONS"
            who = " ".join(path) or name or "git gasp"
            problems.append(f"{who}: {sorted(missing)} not in {where}")
        if extra := own - HELP - options:
            problems.append(f"{title}: no such option: {sorted(extra)}")
    for title in sections:
        if title != "OPTIONS" and not any(
            title == "OPTIONS OF " + " ".join(path).upper() for path, _ in _commands(_root(name))
        ):
            problems.append(f"section {title!r} names no subcommand")
    if extra := general - every:
        problems.append(f"OPTIONS: no such option: {sorted(extra)}")
    assert not problems, f"man/{page}:\n  " + "\n  ".join(problems)


def test_option_sections_parser():
    text = "\n".join(
        [
            ".SH OPTIONS OF ADD",
            ".TP",
            '.BI "\\-\\-from" " ID"',
            "An id \\-\\-not\\-this.",
            ".SH OPTIONS",
            ".TP",
            '.BR \\-h ", " \\-\\-help',
            ".TP",
            ".BR \\-o \", \" \\-\\-output\\-file \" FILE\"",
            ".SH EXAMPLES",
            ".TP",
            ".B \\-\\-ignored",
        ]
    )
    assert option_sections(text) == {
        "OPTIONS OF ADD": {"--from"},
        "OPTIONS": {"-h", "--help", "-o", "--output-file"},
    }
