"""`git gasp install-hooks`, `git gasp hook pre-commit` and `git gasp doctor`."""

from __future__ import annotations

import click


def _root(path: str | None):
    from git_gasp.conformance.runner import resolve_agent_root

    return resolve_agent_root(path)


@click.command("install-hooks")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--uninstall", is_flag=True,
              help="Remove the hook (restoring the one it replaced) and the driver config.")
@click.option("--force", is_flag=True,
              help="Install even when a hook manager (husky, lefthook, pre-commit) owns "
                   "the hooks; its hook is kept as pre-commit.legacy and still runs.")
def install_hooks(path: str | None, uninstall: bool, force: bool) -> int:
    """Install the pre-commit guard and the merge driver for the agent at PATH."""
    from git_gasp.githooks.install import install
    from git_gasp.githooks.install import uninstall as remove

    root = _root(path)
    outcome = remove(root) if uninstall else install(root, force=force)
    for message in outcome.messages:
        click.echo(message)
    return 0


@click.command("hook")
@click.argument("name", type=click.Choice(["pre-commit", "pre-merge-commit"]))
def hook(name: str) -> int:
    """Run a git hook (git runs this; so may you, to test what is staged).

    pre-commit guards every commit; pre-merge-commit guards the commit of a merge that
    went through without conflicts (git runs no pre-commit hook for it)."""
    from git_gasp.cli.commands.hook_run import run_hook

    run_hook(name)


@click.command("doctor")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True,
              help="Print the findings as a JSON list of {level, what, fix, topic, ...}.")
def doctor(path: str | None, as_json: bool) -> int:
    """Check that hooks, merge driver, lease, log, hook queue and ignores are set up in
    this clone."""
    from git_gasp.githooks.doctor import diagnose, exit_status, report

    root = _root(path)
    findings = diagnose(root)
    if as_json:
        import json

        click.echo(json.dumps([f.to_json() for f in findings], indent=2))
        return exit_status(findings)
    text, status = report(findings, path or str(root))
    click.echo(text)
    return status
