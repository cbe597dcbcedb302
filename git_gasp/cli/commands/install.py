"""`git gasp install`: set this machine up once (the merge driver in the global git
config), as `git lfs install` does."""

from __future__ import annotations

import click

from git_gasp.githooks import machine


@click.command("install")
@click.option("--uninstall", is_flag=True,
              help="Remove the merge driver from the global git config (only git-gasp's).")
@click.option("--force", is_flag=True,
              help="Replace a merge.gasp driver in the global config that is not git-gasp's.")
def install(uninstall: bool, force: bool) -> int:
    """Define the union merge driver in your global git config, once per machine, so
    every clone merges the append-only files under a plain `git pull`."""
    for message in machine.uninstall() if uninstall else machine.install(force=force):
        click.echo(message)
    return 0
