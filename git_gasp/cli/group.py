"""The click group of `git-gasp`: subcommands (`cli.table.COMMANDS`) load lazily."""

from __future__ import annotations

import difflib
import importlib
import sys
from typing import NoReturn

import click

from git_gasp import __version__
from git_gasp.cli.completion import COMPLETE_VAR
from git_gasp.cli.handler import exit_for_error
from git_gasp.cli.help import help_command, manual_request, run_manual
from git_gasp.cli.table import COMMANDS, VERSION_PROG

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}


class LazyGroup(click.Group):
    """A group that imports a subcommand's module only when it is invoked."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(super().list_commands(ctx)))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        module_name, attr = target.split(":")
        return _say_what_help_does(getattr(importlib.import_module(module_name), attr), ctx)

    def get_help_option(self, ctx: click.Context) -> click.Option | None:
        option = super().get_help_option(ctx)
        if option is not None:
            option.help = HELP_TEXT
        return option

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple:
        """click's, with git's "did you mean" for a mistyped command name."""
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            close = similar(name, self.list_commands(ctx))
            if close:
                ctx.fail(f"No such command {name!r}. Did you mean "
                         + " or ".join(repr(c) for c in close) + "?")
        return super().resolve_command(ctx, args)


def similar(name: str, commands: list[str]) -> list[str]:
    """The commands `name` is likeliest a typo of: difflib's close ones, ranked as git
    ranks its own ("stauts" is "status", one swap, before "stats", one letter less)."""
    close = difflib.get_close_matches(name, commands, n=5, cutoff=0.6)
    if not close:
        return []
    cost = {c: _typo_distance(name, c) for c in close}
    best = min(cost.values())
    return sorted(c for c in close if cost[c] == best)


def _typo_distance(a: str, b: str) -> int:
    """git's weighted Levenshtein distance from typed `a` to command `b` (help.c): a
    swap of two neighbours costs 0, a substitution 2, an insertion 1, a deletion 3."""
    swap, sub, ins, dele = 0, 2, 1, 3
    prev2: list[int] = []
    prev = [j * ins for j in range(len(b) + 1)]
    for i in range(1, len(a) + 1):
        row = [i * dele] + [0] * len(b)
        for j in range(1, len(b) + 1):
            row[j] = prev[j - 1] + (sub if a[i - 1] != b[j - 1] else 0)
            if i > 1 and j > 1 and a[i - 2] == b[j - 1] and a[i - 1] == b[j - 2]:
                row[j] = min(row[j], prev2[j - 2] + swap)
            row[j] = min(row[j], prev[j] + dele, row[j - 1] + ins)
        prev2, prev = prev, row
    return prev[len(b)]


HELP_TEXT = "Show the usage (-h) or the manual page (--help) and exit."


def _say_what_help_does(cmd: click.Command, ctx: click.Context) -> click.Command:
    """`cmd` (and its subcommands) with -h/--help saying what each does: as in git,
    -h is this usage and --help the manual (`cli.help`), not click's "this message"."""
    option = cmd.get_help_option(ctx)
    if option is not None:
        option.help = HELP_TEXT
    for sub in getattr(cmd, "commands", {}).values():
        _say_what_help_does(sub, ctx)
    return cmd


@click.group(cls=LazyGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "--version", prog_name=VERSION_PROG)
@click.pass_context
def cli(ctx: click.Context) -> None:
    """git-gasp: keep an AI agent's durable state in git (GASP).

    Run `git gasp COMMAND -h` for a command's options, `git gasp COMMAND --help` for
    its manual, `git help gasp` for the manual of git gasp.
    """
    if ctx.invoked_subcommand not in KEEP_QUEUE:
        record_queued()


# Commands that leave the agent hooks' queue as it is: the hook itself (`adapt hook`;
# `adapt` installs too), git's hooks on a commit, `doctor` (it reports the queue), `mcp`
# (it records the queue before each answer, not before it starts) and
# the help; every other command records it first (`record_queued`).
KEEP_QUEUE = frozenset({None, "adapt", "hook", "doctor", "help", "completion", "mcp"})


def record_queued() -> None:
    """Record what the agent hooks queued in this directory's git dir before the command
    reads the state (waiting for a drainer at work), so that it sees every event."""
    import os

    from git_gasp.adapters.agent_hook.queue_files import lock_held, queued
    from git_gasp.base.gitdir import find_git_dir

    try:
        here = os.getcwd()
    except OSError:
        return
    gitdir = find_git_dir(here)
    qgdir = os.path.join(gitdir, "gasp") if gitdir is not None else None
    if qgdir is None or not (queued(qgdir) or lock_held(qgdir)):
        return  # the common case: nothing queued, no drainer at work, nothing more imported
    from git_gasp.adapters.live import LOCK_WAIT_S, drain_pending

    drain_pending(here, lock_wait_s=LOCK_WAIT_S)


cli.add_command(help_command)


def _sentence(message: str) -> str:
    """click's "Missing option '--from'." as the tool writes errors: one line, lower case
    first, no final period."""
    text = " ".join(message.split()).replace(". Did you mean", "; did you mean")
    if text[:1].isupper() and not text[1:2].isupper():
        text = text[0].lower() + text[1:]
    return text[:-1] if text.endswith(".") else text


def _command_words(argv: list[str]) -> list[str]:
    """The subcommand names `argv` starts with (for an error raised before click made
    the subcommand's context)."""
    words: list[str] = []
    command: click.Command | None = cli
    for arg in argv:
        if not isinstance(command, click.Group) or arg.startswith("-"):
            break
        command = command.get_command(click.Context(command), arg)
        if command is None:
            break
        words.append(arg)
    return words


def usage_line(exc: click.UsageError, argv: list[str] | None = None) -> str:
    """A click usage error as one line `git gasp: error: CMD: what (see 'git gasp CMD -h')`."""
    if exc.ctx is not None and exc.ctx.parent is not None:
        words = exc.ctx.command_path.split()[2:]  # "git gasp" is the group's prog_name
    else:
        words = _command_words(sys.argv[1:] if argv is None else argv)
    command = " ".join(words)
    hint = f"git gasp {command} -h" if command else "git gasp -h"
    where = f"{command}: " if command else ""
    return f"git gasp: error: {where}{_sentence(exc.format_message())} (see '{hint}')"


def _error(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


# click >= 8.2 raises this UsageError for a group run without a subcommand (8.1 prints
# the help and exits itself)
_NO_ARGS_IS_HELP: type[click.ClickException] = getattr(
    click.exceptions, "NoArgsIsHelpError", type("_NeverRaised", (click.ClickException,), {}))


def run_click(argv: list[str] | None = None) -> NoReturn:
    """Parse `argv` with click and run the command, errors through the one handler."""
    page = manual_request(sys.argv[1:] if argv is None else argv)  # `--help`: the manual
    if page is not None:
        run_manual(page)
    try:
        rv = cli.main(args=argv, prog_name="git gasp", standalone_mode=False,
                      complete_var=COMPLETE_VAR)
    except click.exceptions.Abort:
        click.echo("git gasp: aborted", err=True)
        sys.exit(130)
    except _NO_ARGS_IS_HELP as exc:  # a bare `git gasp` or `git gasp lease`: the help
        exc.show()
        sys.exit(exc.exit_code)
    except click.UsageError as exc:  # missing/unknown option, bad value, extra argument
        _error(usage_line(exc, argv))
        sys.exit(2)
    except click.ClickException as exc:
        _error(f"git gasp: error: {_sentence(exc.format_message())}")
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - the one handler decides
        exit_for_error(exc)
    sys.exit(rv if isinstance(rv, int) else 0)
