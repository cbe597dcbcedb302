"""The `git-gasp` entry point: a click group whose subcommands load lazily.

Only click is imported at start-up; each command's module (and dulwich, yaml,
the protocol layers) is imported when that command runs. What git runs on every
commit, ``git gasp hook NAME``, does not even wait for click: `main` (and
``python -m git_gasp.cli.main``, as the installed hook runs it) dispatches it first
(`hook_main`), with the same output, exit codes and one-line errors.
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn

HOOK_NAMES = ("pre-commit", "pre-merge-commit")


def hook_name(argv: list[str]) -> str | None:
    """The hook `argv` runs when it is exactly ``hook NAME``, else None (click parses it)."""
    if len(argv) == 2 and argv[0] == "hook" and argv[1] in HOOK_NAMES:
        return argv[1]
    return None


def _error(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def _exit_for(exc: BaseException) -> NoReturn:
    """The one error handler's end: a known error as one line and its exit code."""
    from git_gasp.base.errors import GaspError

    if isinstance(exc, GaspError):
        _error(f"git gasp: error: {exc}")
        sys.exit(exc.exit_code)
    if isinstance(exc, KeyboardInterrupt):
        _error("git gasp: interrupted")
        sys.exit(130)
    if isinstance(exc, BrokenPipeError):
        sys.exit(0)
    if not isinstance(exc, Exception) or os.environ.get("GASP_DEBUG"):
        raise exc
    # last line of defence: one line, never a traceback
    _error(f"git gasp: internal error: {type(exc).__name__}: {exc} (set GASP_DEBUG=1 for details)")
    sys.exit(3)


def hook_main(name: str) -> NoReturn:
    """Run hook `name` without click (what `git gasp hook NAME` runs)."""
    import gc

    gc.disable()  # a short run that exits at once: no collection pauses while it loads
    try:
        from git_gasp.cli.commands.hook_run import run_hook

        run_hook(name)
    except BaseException as exc:  # noqa: BLE001 - the one handler decides
        _exit_for(exc)


if __name__ == "__main__" and hook_name(sys.argv[1:]):  # the git hook: before click loads
    hook_main(sys.argv[2])

import importlib  # noqa: E402

import click  # noqa: E402

from git_gasp import __version__  # noqa: E402

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


def main(argv: list[str] | None = None) -> NoReturn:
    """Run the CLI, turning known errors into one line and an exit code."""
    args = sys.argv[1:] if argv is None else argv
    name = hook_name(args)
    if name is not None:
        hook_main(name)
    click_main(args)


def click_main(argv: list[str] | None = None) -> NoReturn:
    """`main` through click for every command (the hook too: the path `main` skips)."""
    try:
        rv = cli.main(args=argv, prog_name="git gasp", standalone_mode=False)
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
        _exit_for(exc)
    sys.exit(rv if isinstance(rv, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
