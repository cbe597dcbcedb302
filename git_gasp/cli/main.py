"""The `git-gasp` entry point: a click group whose subcommands load lazily.

Only click is imported at start-up; each command's module (and dulwich, yaml,
the protocol layers) is imported when that command runs.
"""

from __future__ import annotations

import importlib
import os
import sys

import click

from git_gasp import __version__

# command name -> "module:attribute"; modules are imported on first use.
COMMANDS: dict[str, str] = {
    "check": "git_gasp.cli.commands.check:check",
    "fold": "git_gasp.cli.commands.fold:fold",
    "snapshot": "git_gasp.cli.commands.snapshot:snapshot",
    "init": "git_gasp.cli.commands.init:init",
    "kg": "git_gasp.cli.commands.kg:kg",
    "import": "git_gasp.cli.commands.import_:import_",
    "adapt": "git_gasp.cli.commands.adapt:adapt",
    "install-hooks": "git_gasp.cli.commands.hooks:install_hooks",
    "hook": "git_gasp.cli.commands.hooks:hook",
    "doctor": "git_gasp.cli.commands.hooks:doctor",
    "merge-driver": "git_gasp.cli.commands.merge_driver:merge_driver",
    "run": "git_gasp.cli.commands.run:run",
    "record": "git_gasp.cli.commands.record:record",
    "commit-run": "git_gasp.cli.commands.commit_run:commit_run",
    "log": "git_gasp.cli.commands.log:log",
    "lineage": "git_gasp.cli.commands.queries:lineage",
    "diff": "git_gasp.cli.commands.queries:diff",
    "fork": "git_gasp.cli.commands.fork:fork",
    "restore": "git_gasp.cli.commands.restore:restore",
    "memory": "git_gasp.cli.commands.memory:memory",
    "journal": "git_gasp.cli.commands.journal:journal",
    "identity": "git_gasp.cli.commands.identity:identity",
    "lease": "git_gasp.cli.commands.lease:lease",
}

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


def main(argv: list[str] | None = None) -> None:
    """Run the CLI, turning known errors into one line and an exit code."""
    from git_gasp.base.errors import GaspError

    try:
        rv = cli.main(args=argv, prog_name="git gasp", standalone_mode=False)
    except GaspError as exc:
        click.echo(f"git gasp: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("git gasp: aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("git gasp: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except Exception as exc:  # noqa: BLE001 - last line of defence: one line, never a traceback
        if os.environ.get("GASP_DEBUG"):
            raise
        click.echo(
            f"git gasp: internal error: {type(exc).__name__}: {exc} (set GASP_DEBUG=1 for details)",
            err=True,
        )
        sys.exit(3)
    sys.exit(rv if isinstance(rv, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
