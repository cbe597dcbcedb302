"""`git gasp check`: the seven conformance checks of GASP Part VI."""

from __future__ import annotations

import json

import click


@click.command()
@click.argument("path", required=False, type=click.Path(file_okay=True, dir_okay=True))
@click.option("--fixture", is_flag=True, help="Also require the four Part VI fixture facts.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
@click.option("--no-cache", is_flag=True, help="Ignore the cache of verified commits.")
@click.option("--strict", is_flag=True,
              help="Fail on what the reference checker only notes (an op naming a missing "
                   "node, a snapshot directory without graph.json).")
def check(path: str | None, fixture: bool, as_json: bool, no_cache: bool, strict: bool) -> int:
    """Check that the agent repo at PATH (default: here) conforms to GASP.

    Exit status: 0 conformant, 1 not conformant, 2 usage error.
    """
    from git_gasp.base.errors import GaspError
    from git_gasp.conformance.runner import check_repo, resolve_agent_root
    from git_gasp.store.attributes import lineendings_error

    root = resolve_agent_root(path)
    converted = lineendings_error(root)
    if converted:  # one line with the fix instead of seven checks failing on every line
        raise GaspError(converted)
    _driver_note(root)
    report = check_repo(root, fixture=fixture, use_cache=not no_cache, label=path or str(root),
                        strict=strict)
    if as_json:
        click.echo(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    else:
        click.echo(report.to_text())
    return 0 if report.conformant else 1


def _driver_note(root) -> None:
    """Warn (stderr) when .gitattributes names the gasp merge driver but this clone lacks it."""
    from git_gasp.store.attributes import missing_driver_note

    note = missing_driver_note(root)
    if note:
        click.echo(f"git gasp: {note}", err=True)
