"""The click group of `git-gasp`: subcommands (`cli.main.COMMANDS`) load lazily."""

from __future__ import annotations

import importlib
import sys
from typing import NoReturn

import click

from git_gasp import __version__
from git_gasp.cli.completion import COMPLETE_VAR
from git_gasp.cli.main import COMMANDS, exit_for_error

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
        return getattr(importlib.import_module(module_name), attr)


@click.group(cls=LazyGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "--version", prog_name="git-gasp")
def cli() -> None:
    """git-gasp: keep an AI agent's durable state in git (GASP).

    Run `git gasp COMMAND -h` for a command's options, `git help gasp` for the manual.
    """


def run_click(argv: list[str] | None = None) -> NoReturn:
    """Parse `argv` with click and run the command, errors through the one handler."""
    try:
        rv = cli.main(args=argv, prog_name="git gasp", standalone_mode=False,
                      complete_var=COMPLETE_VAR)
    except click.exceptions.Abort:
        click.echo("git gasp: aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 - the one handler decides
        exit_for_error(exc)
    sys.exit(rv if isinstance(rv, int) else 0)
