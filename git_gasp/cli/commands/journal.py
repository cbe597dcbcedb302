"""`git gasp journal`: append finished runs to journal/JOURNAL.md."""

from __future__ import annotations

import click

from git_gasp.cli.options import CONTEXT, open_state, release_lease


@click.command("journal", context_settings=CONTEXT)
def journal() -> None:
    """Append finished runs not yet in journal/JOURNAL.md (never rewrites it)."""
    from git_gasp.runtime.journal import append_journal

    state = open_state()
    runs = append_journal(state)
    release_lease(state)
    click.echo(f"appended {len(runs)} run(s)" + (": " + ", ".join(runs) if runs else ""))
