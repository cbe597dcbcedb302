"""The `git-gasp` entry point: the one error handler, the fast paths, and the command
table of the click group (`cli.group`) whose subcommands load lazily.

Nothing heavy is imported at start-up, not even click: what git runs on every commit,
``git gasp hook NAME``, a plain ``git gasp check [PATH] [FLAGS]`` and ``--version`` run
without it
(`hook_main`, `check_main`), with the same output, exit codes and one-line errors as
through click, which parses everything else (`click_main`); each command's module (and
the object readers, yaml, the protocol layers) is imported when that command runs.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

HOOK_NAMES = ("pre-commit", "pre-merge-commit")
VERSION_PROG = "git-gasp"  # the name `--version` prints (the click group's prog_name)


def hook_name(argv: list[str]) -> str | None:
    """The hook `argv` runs when it is exactly ``hook NAME``, else None (click parses it)."""
    if len(argv) == 2 and argv[0] == "hook" and argv[1] in HOOK_NAMES:
        return argv[1]
    return None


def _error(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def exit_for_error(exc: BaseException) -> NoReturn:
    """The one error handler's end: a known error as one line and its exit code."""
    from git_gasp.base.errors import GaspError

    if isinstance(exc, GaspError):
        _error(f"git gasp: error: {exc}")
        sys.exit(exc.exit_code)
    if isinstance(exc, KeyboardInterrupt):
        _error("git gasp: interrupted")
        sys.exit(130)
    if isinstance(exc, BrokenPipeError):  # the reader left (`| head`): no second error at exit
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
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
        exit_for_error(exc)


# command name -> "module:attribute"; modules are imported on first use.
COMMANDS: dict[str, str] = {
    "check": "git_gasp.cli.commands.check:check",
    "fold": "git_gasp.cli.commands.fold:fold",
    "snapshot": "git_gasp.cli.commands.snapshot:snapshot",
    "init": "git_gasp.cli.commands.init:init",
    "kg": "git_gasp.cli.commands.kg:kg",
    "import": "git_gasp.cli.commands.import_:import_",
    "export": "git_gasp.cli.commands.export:export",
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
    "sync": "git_gasp.cli.commands.sync:sync",
    "completion": "git_gasp.cli.commands.completion:completion",
}


def check_main(kw: dict) -> NoReturn:
    """Run `git gasp check` without click (`kw`: `check_run.fast_args`)."""
    try:
        from git_gasp.cli.commands.check_run import run_check

        code = run_check(**kw)
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException as exc:  # noqa: BLE001 - the one handler decides
        exit_for_error(exc)
    os._exit(code)  # nothing left to tear down: skip freeing the log's objects one by one


def main(argv: list[str] | None = None) -> NoReturn:
    """Run the CLI, turning known errors into one line and an exit code."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:  # click's own text (a test compares them), without click
        from git_gasp import __version__

        sys.stdout.write(f"{VERSION_PROG}, version {__version__}\n")
        sys.stdout.flush()
        sys.exit(0)
    name = hook_name(args)
    if name is not None:
        hook_main(name)
    if args[:1] == ["check"]:
        from git_gasp.cli.commands.check_run import fast_args

        kw = fast_args(args)
        if kw is not None:
            check_main(kw)
    click_main(args)


def click_main(argv: list[str] | None = None) -> NoReturn:
    """`main` through click for every command (the fast paths too: the path `main` skips)."""
    from git_gasp.cli.group import run_click

    run_click(argv)


if __name__ == "__main__":  # pragma: no cover
    main()
