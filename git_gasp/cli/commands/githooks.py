"""`git gasp install-hooks`, `git gasp hook pre-commit` and `git gasp doctor`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from git_gasp.base.errors import GaspError, UsageError
from git_gasp.base.git import work_tree_top
from git_gasp.cli.commands.githook_run import pre_receive, run_hook
from git_gasp.doctor.agent_hooks import findings as agent_hook_findings
from git_gasp.doctor.clone import diagnose, exit_status, report
from git_gasp.doctor.mcp_entries import findings
from git_gasp.githooks.install import install
from git_gasp.githooks.install import uninstall as remove
from git_gasp.githooks.server import install_server, uninstall_server
from git_gasp.store.location import NotAnAgentRepository, resolve_agent_root


def _root(path: str | None):
    """The agent root, else the directory itself: hooks and their diagnosis belong to
    any git work tree (a project guarded before it holds an agent), so these two
    commands work where no AGENT.md is; but not in a clone whose remote holds the
    state (their fixes would put state files on the working branch): join it first."""
    try:
        return resolve_agent_root(path)
    except NotAnAgentRepository as exc:
        if exc.remote is not None:
            raise  # a clone of a project whose state is on a branch: join it first
        return Path(path if path is not None else ".").resolve()


@click.command("install-hooks")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--uninstall", is_flag=True,
              help="Remove the hook (restoring the one it replaced) and the driver config.")
@click.option("--force", is_flag=True,
              help="Install even when a hook manager (husky, lefthook, pre-commit) owns "
                   "the hooks; its hook is kept as pre-commit.legacy and still runs.")
@click.option("--server", is_flag=True,
              help="In a bare repository (the remote agents push to): install the "
                   "pre-receive hook that refuses pushes rewriting or dropping log lines.")
@click.option("--check", is_flag=True,
              help="With --server: the hook also runs checks 1, 5 and 7 on the log lines "
                   "each push appends.")
def install_hooks(path: str | None, uninstall: bool, force: bool, server: bool,
                  check: bool) -> int:
    """Install the pre-commit guard and the merge driver for the agent at PATH (with
    --server: the pre-receive hook of the bare repository at PATH)."""
    if check and not server:
        raise UsageError("--check goes with --server (the pre-receive hook's checks)")
    if server:
        where = Path(path or ".")
        outcome = uninstall_server(where) if uninstall else install_server(where, check=check)
        for message in outcome.messages:
            click.echo(message)
        return 0
    root = _root(path)
    outcome = remove(root) if uninstall else install(root, force=force)
    for message in outcome.messages:
        click.echo(message)
    return 0


@click.command("hook")
@click.argument("name", type=click.Choice(["pre-commit", "pre-merge-commit", "pre-receive"]))
@click.option("--check", is_flag=True,
              help="pre-receive only: also run checks 1, 5 and 7 on the appended log lines.")
def hook(name: str, check: bool) -> int:
    """Run a git hook (git runs this; so may you, to test what is staged).

    pre-commit guards every commit; pre-merge-commit guards the commit of a merge that
    went through without conflicts (git runs no pre-commit hook for it); pre-receive
    (in a bare repository, OLD NEW REF lines on stdin) refuses a push whose new commits
    rewrite or drop log lines, or that deletes or rewinds a protected branch (--check:
    or whose appended log lines fail checks 1, 5 or 7)."""
    if check and name != "pre-receive":
        raise UsageError("--check goes with pre-receive (the server's checks)")
    if name == "pre-receive":
        return pre_receive(check)
    run_hook(name)


@click.command("doctor")
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True,
              help="Print the findings as a JSON list of {level, what, fix, topic, ...}.")
def doctor(path: str | None, as_json: bool) -> int:
    """Check that hooks, merge driver, lease, log, hook queue and ignores are set up in
    this clone."""
    root = _root(path)
    findings = diagnose(root, project=Path(path or ".").resolve()) + _mcp_findings(root)
    if as_json:
        click.echo(json.dumps([f.to_json() for f in findings], indent=2))
        return exit_status(findings)
    text, status = report(findings, path or str(root))
    click.echo(text)
    return status


def _mcp_findings(root) -> list:
    """The MCP entries and the agents' hook settings of the agent's repository and of the
    project here (when the state lives beside it): a malformed file, an entry that would
    not start or not record."""
    places = [Path(root)]
    for start in (Path(root), Path(os.getcwd())):
        try:
            places.append(Path(work_tree_top(start)))
        except GaspError:
            pass
    return findings(places) + agent_hook_findings(places)
