"""`git gasp stats [REV | A..B] [--since DATE] [--by WHAT] [--json | --format FMT]`: how
many lines at REV agent runs wrote and how many people did, by agent, model, person and
goal (blame's one engine, summed), and what the agents did (sessions, calls, tokens,
evals, patches)."""

from __future__ import annotations

import json
import os

import click

from git_gasp.base import git
from git_gasp.base.git import work_tree_top
from git_gasp.cli.dates import date_ms
from git_gasp.cli.options import CONTEXT
from git_gasp.protocol.summary import printable
from git_gasp.stats.compute import compute
from git_gasp.stats.lines import BY
from git_gasp.stats.render import markdown, text
from git_gasp.stats.scope import resolve
from git_gasp.store.location import require_root
from git_gasp.store.logview import fold_agent


def open_fold(cwd: str):
    """The work tree's top, the fold's graph and the log's events (notes on stderr)."""
    root = require_root(cwd)  # outside an agent's state: the one line every command gives
    top = str(work_tree_top(cwd))
    folded = fold_agent(root, use_snapshots=False)  # every event: one parse
    for note in folded.notes:
        click.echo(printable(f"note: {note}"), err=True)
    if shallow(top):
        click.echo("note: a shallow clone: git blame gives the lines of commits beyond its "
                   "depth to the oldest commit it has, so they count as that commit's "
                   "(`git fetch --unshallow` for exact numbers)", err=True)
    return top, folded.result.graph, folded.repo.parsed.events


def shallow(top: str) -> bool:
    """Whether the repository at `top` is a shallow clone (git's own answer)."""
    proc = git.run(top, "rev-parse", "--is-shallow-repository", check=False)
    return proc.returncode == 0 and proc.stdout.strip() == b"true"



@click.command("stats", context_settings=CONTEXT)
@click.argument("rev", required=False, metavar="[REV | A..B]")
@click.option("--since", "since", metavar="DATE",
              help="Count what changed since DATE: the tip's commits since then and the "
                   "runs started since then.")
@click.option("--by", "by", type=click.Choice(BY), multiple=True,
              help="Show only this breakdown (agent, model, person, goal; repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print the stats as one JSON object.")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown"]), default="text",
              show_default=True, help="Text for a terminal, Markdown for a pull request.")
def stats(rev: str | None, since: str | None, by: tuple[str, ...], as_json: bool,
          fmt: str) -> None:
    """Count the lines of the tree at REV (default HEAD) that agent runs wrote and those
    people wrote, by agent, model, person and goal: the sum of `git gasp blame` over every
    file. With a range A..B or --since DATE, also the lines at the tip its commits wrote
    and only the runs that made them (or started since DATE). Then the sessions, tool and
    model calls, tokens, evals (and their pass rate) and patches of the agent's log."""
    when = None if since is None else date_ms("--since", since)
    cwd = os.getcwd()
    top, graph, events = open_fold(cwd)
    scope = resolve(top, rev, when)
    result = compute(top, graph, events, scope)
    if as_json:
        click.echo(json.dumps(result, ensure_ascii=False, sort_keys=True))
        return
    shown = by or BY
    lines = markdown(result, shown) if fmt == "markdown" else text(result, shown)
    click.echo("\n".join(printable(line) for line in lines))
