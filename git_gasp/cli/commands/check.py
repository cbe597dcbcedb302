"""`git gasp check`: the seven conformance checks of GASP Part VI."""

from __future__ import annotations

import click

from git_gasp.cli.commands.check_run import run_check


@click.command()
@click.argument("path", required=False, type=click.Path(file_okay=True, dir_okay=True))
@click.option("--fixture", is_flag=True, help="Also require the four Part VI fixture facts.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
@click.option("--no-cache", is_flag=True,
              help="Ignore the caches of verified commits and log states (and write none).")
@click.option("--strict", is_flag=True,
              help="Fail on what the reference checker only notes (an op naming a missing "
                   "node, a snapshot directory without graph.json).")
def check(path: str | None, fixture: bool, as_json: bool, no_cache: bool, strict: bool) -> int:
    """Check that the agent repo at PATH (default: here) conforms to GASP.

    Exit status: 0 conformant, 1 not conformant, 2 usage error.
    """
    return run_check(path, fixture=fixture, as_json=as_json, no_cache=no_cache,
                     strict=strict)
