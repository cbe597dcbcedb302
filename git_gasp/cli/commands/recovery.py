"""`git gasp recovery list|show|apply|drop`: the refs a sync that gave up pushed."""

from __future__ import annotations

import json
from pathlib import Path

import click

from git_gasp.cli.options import CONTEXT, WaitCommand, wait_option
from git_gasp.protocol.summary import printable
from git_gasp.store.location import require_root
from git_gasp.sync.recovery_ops import apply, date_of, drop, list_refs, show

_REMOTE = click.option("--remote", metavar="REMOTE", default=None,
                       help="The remote to look on (default: the branch's upstream remote, "
                            "else origin).")
_JSON = click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")


def _start():
    return Path(require_root(Path.cwd()))  # the state's branch, wherever it is


@click.group(context_settings=CONTEXT)
def recovery() -> None:
    """List, show, apply or drop the recovery refs (refs/gasp/recovery/<agent>/<run>) a
    git gasp sync that gave up pushed to the remote."""


@recovery.command("list")
@_REMOTE
@_JSON
def list_cmd(remote: str | None, as_json: bool) -> int:
    """The recovery refs on the remote and in this clone: where each is, its commit, when,
    and how many of its commits the current branch does not have."""
    listing = list_refs(_start(), remote)
    if as_json:
        click.echo(json.dumps({"remote": listing.remote, "branch": listing.branch,
                               "remote_error": listing.remote_error,
                               "refs": [r.to_json() for r in listing.refs]}, indent=2))
        return 0
    if listing.remote_error:
        click.echo(f"git gasp: warning: cannot list {listing.remote}: "
                   f"{listing.remote_error}; showing this clone's refs only", err=True)
    if not listing.refs:
        click.echo(f"no recovery refs (here or on {listing.remote})")
        return 0
    width = max(len(r.short) for r in listing.refs)
    on = listing.branch or "HEAD"
    for r in listing.refs:
        where = ", ".join(w for w, yes in ((listing.remote, r.remote), ("here", r.local)) if yes)
        if r.remote and r.local and r.local_sha != r.sha:
            where = f"{listing.remote}, here (older)"
        if r.ahead is None:
            what = "not fetched: git gasp recovery show fetches it"
        else:
            what = f"{date_of(r.time)}  {r.ahead} commit(s) not on {on}  " \
                   f"{printable(r.subject or '')}"
        click.echo(f"{r.short:<{width}}  {r.sha[:12]}  {where:<14}  {what}".rstrip())
    return 0


@recovery.command("show")
@click.argument("name")
@_REMOTE
@_JSON
def show_cmd(name: str, remote: str | None, as_json: bool) -> int:
    """The commits recovery ref NAME holds that the current branch does not, and the log
    lines they add (fetched from the remote when this clone lacks it)."""
    shown = show(_start(), name, remote)
    if as_json:
        click.echo(json.dumps({"ref": shown.ref.to_json(), "log": shown.log_rel,
                               "commits": [{"commit": c, "time": t, "subject": s}
                                           for c, t, s in shown.commits],
                               "events": [{"id": e["id"], "kind": e["kind"]}
                                          for e in shown.events]}, indent=2))
        return 0
    click.echo(f"{shown.ref.name} at {shown.ref.sha[:12]}: {len(shown.commits)} commit(s) "
               f"and {len(shown.events)} line(s) of {shown.log_rel} not on this branch")
    for cid, when, subject in shown.commits:
        click.echo(f"  {cid[:12]}  {date_of(when)}  {printable(subject)}")
    if shown.events:
        click.echo(f"lines it adds to {shown.log_rel}:")
        for e in shown.events[:20]:
            click.echo(f"  {printable(e['kind'] or '?')}  {printable(e['id'] or '(no id)')}")
        if len(shown.events) > 20:
            click.echo(f"  ... and {len(shown.events) - 20} more")
    if shown.commits:
        click.echo(f"git gasp recovery apply {shown.ref.short} merges them into this branch")
    return 0


@recovery.command("apply", cls=WaitCommand)
@click.argument("name")
@_REMOTE
@wait_option
@_JSON
def apply_cmd(name: str, remote: str | None, wait: float | None, as_json: bool) -> int:
    """Merge recovery ref NAME into the current branch through the union merge driver,
    validated as a sync's merge is (the guard's rules on its commits, then a cached
    check); nothing is pushed: git gasp sync pushes the result. A conflict is left in
    progress for git to finish (or git gasp sync --abort).

    \b
    Exit status: 0 applied, or already on the branch; 1 refused (its history breaks
    the rules, or the result is not conformant: the branch did not move) or stopped
    on a conflict; 5 cannot start (dirty tree, detached HEAD, merge in progress,
    lease held).
    """
    start = _start()
    out = apply(start, name, remote, wait)
    for note in out.cleaned:
        click.echo(f"git gasp recovery: {note}", err=True)
    if as_json:
        click.echo(json.dumps(out.to_json(), indent=2))
    short = (out.ref or name).removeprefix("refs/gasp/recovery/")
    if out.status == "applied":
        if not as_json:
            click.echo(f"applied {short} ({(out.commit or '')[:12]}): the branch is at "
                       f"{(out.head or '')[:12]}; git gasp sync pushes it, then git gasp "
                       f"recovery drop {short} removes the ref")
    elif out.status == "already":
        if not as_json:
            click.echo(f"{out.reason}: nothing to apply (git gasp recovery drop {short} "
                       "removes the ref)")
    else:
        click.echo(f"git gasp: error: {out.reason}", err=True)
    return out.exit_code


@recovery.command("drop")
@click.argument("name")
@_REMOTE
@click.option("--local", "local_only", is_flag=True,
              help="Delete only this clone's copy of the ref, not the remote's.")
@click.option("--force", is_flag=True,
              help="Drop it even though it holds commits the current branch does not have.")
def drop_cmd(name: str, remote: str | None, local_only: bool, force: bool) -> int:
    """Delete recovery ref NAME on the remote and in this clone; refused while it holds
    commits the current branch does not have (apply it first, or --force)."""
    for line in drop(_start(), name, remote, force=force, local_only=local_only):
        click.echo(line)
    return 0
