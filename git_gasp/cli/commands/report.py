"""`git gasp report BASE..HEAD [--format markdown|text|json]`: a pull request's account
(its runs, goals, evals failing first, decisions, AI share of the changed lines) that
fits a PR comment or `$GITHUB_STEP_SUMMARY`."""

from __future__ import annotations

import json
import os

import click

from git_gasp.cli.commands.stats import open_fold
from git_gasp.cli.options import CONTEXT
from git_gasp.cli.shortids import abbreviate_some
from git_gasp.protocol.summary import printable
from git_gasp.stats import report_render
from git_gasp.stats.report import build
from git_gasp.stats.scope import resolve


@click.command("report", context_settings=CONTEXT)
@click.argument("revs", metavar="BASE..HEAD")
@click.option("--format", "fmt", type=click.Choice(["markdown", "text", "json"]),
              default="markdown", show_default=True,
              help="Markdown for a pull request or step summary, text, or one JSON object.")
def report(revs: str, fmt: str) -> None:
    """Report on the commits of BASE..HEAD: the agent runs whose patches explain them
    (agent, model, goal, outcome, commits, lines), the evals of their patches (failing
    first), the decisions on them, and how many of the lines the range changed agents
    wrote. No links: it fits a pull request comment or $GITHUB_STEP_SUMMARY."""
    top, graph, events = open_fold(os.getcwd())
    result = build(top, graph, events, resolve(top, revs, range_only=True))
    if fmt == "json":
        click.echo(json.dumps(result, ensure_ascii=False, sort_keys=True))
        return
    wanted = {i for x in (*result["runs"], *result["evals"], *result["decisions"])
              for i in x.values() if isinstance(i, str) and graph.has_node(i)}
    table = abbreviate_some(graph.node_ids(), wanted)
    short = lambda i: table.get(i, i)  # noqa: E731
    render = report_render.markdown if fmt == "markdown" else report_render.text
    click.echo("\n".join(printable(line) for line in render(result, short)))
