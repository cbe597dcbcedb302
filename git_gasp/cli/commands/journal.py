"""`git gasp journal`: append finished runs to journal/JOURNAL.md."""

from __future__ import annotations

import click

from git_gasp.cli.options import CONTEXT, WaitCommand, open_state, release_lease, wait_option
from git_gasp.runtime.journal import append_journal


@click.command("journal", context_settings=CONTEXT, cls=WaitCommand)
@wait_option
def journal(wait: float | None) -> None:
    """Append finished runs not yet in journal/JOURNAL.md (never rewrites it)."""
    state = open_state(write=True, wait=wait)
    runs = append_journal(state)
    release_lease(state)
    click.echo(f"appended {len(runs)} run(s)" + (": " + ", ".join(runs) if runs else ""))
