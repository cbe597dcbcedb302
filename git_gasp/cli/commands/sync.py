"""`git gasp sync`: fetch, integrate through the merge driver, validate, push; retry
with backoff; a recovery ref when it gives up."""

from __future__ import annotations

import json
from pathlib import Path

import click

from git_gasp.cli.notes import driver_note
from git_gasp.cli.options import WaitCommand, wait_option
from git_gasp.store.location import require_root
from git_gasp.sync.sync import Options
from git_gasp.sync.sync import sync as run_sync


@click.command("sync", cls=WaitCommand)
@click.argument("remote", required=False)
@click.argument("branch", required=False)
@click.option("--rebase", is_flag=True,
              help="Replay the local commits onto the remote branch instead of merging it "
                   "(the driver still resolves the append-only files).")
@click.option("--attempts", type=click.IntRange(min=1), default=None, metavar="N",
              help="Give up after N fetch-integrate-validate-push attempts (default: retry "
                   "until --max-wait is spent).")
@click.option("--max-wait", "max_wait", type=click.FloatRange(min=0), default=120.0,
              show_default=True, metavar="SECONDS",
              help="The budget of all waits between attempts together (each is jittered "
                   "and at most 8 s); 0 never waits: it retries at once up to --attempts, "
                   "or makes one attempt without it.")
@click.option("--abort", is_flag=True,
              help="Abort the merge or rebase a conflicted sync left in progress.")
@click.option("--since", metavar="REV", default=None,
              help="Validate as `git gasp check --since REV` (history reachable from REV "
                   "predates the rules).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              metavar="SECONDS", help="Stop a fetch or push that takes longer (counts as a "
                                      "failed attempt).")
@wait_option
@click.option("--json", "as_json", is_flag=True, help="Print what happened as one JSON object.")
@click.option("-q", "--quiet", is_flag=True,
              help="Print nothing when it synced (a failure still prints its one line).")
def sync(remote: str | None, branch: str | None, rebase: bool, attempts: int | None,
         max_wait: float, abort: bool, since: str | None, timeout: float | None,
         wait: float | None, as_json: bool, quiet: bool) -> int:
    """Sync this branch with REMOTE's BRANCH (default: its upstream, else origin and the
    same name): fetch, merge (or --rebase) through the union merge driver, validate with
    the guard's rules and a cached check, push without force; retry a rejected push with
    jittered backoff until the wait budget is spent; when it gives up, push the local
    work to refs/gasp/recovery/<agent>/<run-or-time>. A fast-forward to the remote is
    validated first. A conflict stops at once: nothing is pushed, the merge (or
    rebase) is left for git to finish, or --abort.

    \b
    Exit status: 0 synced or nothing to do; 1 refused (not conformant, or the
    remote's hook refused it; nothing pushed) or stopped on a conflict; 4 gave
    up, the local work is on the recovery ref; 5 cannot start (dirty tree,
    detached HEAD, merge or rebase in progress, lease held); 6 gave up and the
    recovery ref could not be pushed.
    """
    start = Path(require_root(Path.cwd()))  # the state's branch, wherever it is
    outcome = run_sync(start, Options(remote, branch, rebase, attempts, max_wait, since,
                                      timeout, wait, abort=abort))
    for note in outcome.cleaned if not quiet else ():
        click.echo(f"git gasp sync: {note}", err=True)
    if as_json:
        click.echo(json.dumps(outcome.to_json(), indent=2))
    if outcome.exit_code == 0:
        if not as_json and not quiet:
            click.echo(outcome.line())
    else:
        click.echo(f"git gasp: error: {outcome.line()}", err=True)
    if outcome.exit_code in (0, 1, 4) and not quiet:  # it ran: plain pulls need the driver
        driver_note(start)
    return outcome.exit_code
