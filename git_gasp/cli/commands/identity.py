"""`git gasp identity hash|verify|amend`: the identity hash."""

from __future__ import annotations

from pathlib import Path

import click

from git_gasp.base.errors import UsageError
from git_gasp.cli.options import (
    CONTEXT,
    WaitGroup,
    agent_root,
    open_state,
    release_lease,
    wait_option,
)
from git_gasp.runtime.identity import (
    amend_identity,
    compute_identity_hash,
    declared_identity_hash,
    verify_identity,
)


@click.group(context_settings=CONTEXT, cls=WaitGroup)
def identity() -> None:
    """Compute, verify or amend the identity hash."""


@identity.command("hash", context_settings=CONTEXT)
def identity_hash() -> None:
    """Print the SHA-256 of identity/ (the spec recipe)."""
    root = agent_root()
    manifest, _ = declared_identity_hash(root)
    click.echo(compute_identity_hash(root, manifest.locations["identity"]))


@identity.command("verify", context_settings=CONTEXT)
def identity_verify() -> None:
    """Check identity/ against identity_hash in AGENT.md."""
    declared, _ = verify_identity(agent_root())
    click.echo(f"identity ok: {declared}")


@identity.command("amend", context_settings=CONTEXT)
@click.option("--approved-by", required=True, metavar="NAME", help="Who approved the change.")
@click.option("--reason", required=True, help="Why (one line).")
@click.option("--set", "sets", multiple=True, metavar="IDENTITY_FILE=SOURCE",
              help="Replace an identity file with SOURCE's content (repeatable); without it, "
                   "commit the edits already made in identity/.")
@wait_option
def identity_amend(approved_by: str, reason: str, sets: tuple[str, ...],
                   wait: float | None) -> None:
    """One commit: identity/ edits + the new hash in AGENT.md + the approving decision."""
    changes = {}
    for item in sets:
        target, sep, source = item.partition("=")
        if not sep:
            raise UsageError(f"--set {item}: expected IDENTITY_FILE=SOURCE")
        try:
            changes[target] = Path(source).read_bytes()
        except OSError as exc:
            raise UsageError(f"--set {item}: {exc.strerror}") from None
    state = open_state(write=True, wait=wait)
    commit, old, new = amend_identity(state, approved_by, reason, changes)
    release_lease(state)
    click.echo(f"{commit.decode()} identity {old[:12]}… -> {new[:12]}…")
