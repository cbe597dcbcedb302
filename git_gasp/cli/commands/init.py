"""`git gasp init`: create a conformant agent repo (Part I layout) with a first commit."""

from __future__ import annotations

import click


@click.command()
@click.argument("path", required=False, type=click.Path())
@click.option("--agent-id", metavar="ID", help="The agent's id (default: the directory name).")
def init(path: str | None, agent_id: str | None) -> int:
    """Create the GASP layout at PATH (default: here) and commit it."""
    from pathlib import Path

    from git_gasp.githooks.install import install_for_init
    from git_gasp.store.layout import init_agent

    root = Path(path or ".")
    agent, commit = init_agent(root, agent_id, install_hooks=install_for_init)
    click.echo(f"initialised agent {agent} in {root} (commit {commit.decode()[:12]})")
    click.echo("next: write who the agent is in identity/IDENTITY.md, then run "
               "`git gasp identity amend --approved-by NAME --reason TEXT` (one commit: "
               "the edit, the new identity_hash in AGENT.md, the approving decision)")
    return 0
