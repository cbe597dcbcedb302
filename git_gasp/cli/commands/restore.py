"""`git gasp restore`: clone an agent repo and bring the agent up."""

from __future__ import annotations

import json

import click

from git_gasp.cli.ids import EventId
from git_gasp.cli.options import CONTEXT
from git_gasp.githooks.install import install_for_init
from git_gasp.runtime.queries import label
from git_gasp.runtime.restore import restore as do_restore


@click.command("restore", context_settings=CONTEXT)
@click.argument("url")
@click.argument("directory", required=False, type=click.Path())
@click.option("--at", metavar="EVENT_ID", type=EventId(),
              help="Fold only through this event.")
@click.option("--model", help="Bind this model in .agent/config.toml.")
@click.option("--full", is_flag=True, help="A full clone (transcripts/ included).")
@click.option("--branch", metavar="NAME",
              help="The agent kept on this branch of a project's repository (git gasp init "
                   "--branch; e.g. gasp/state): only that branch is cloned.")
@click.option("--json", "as_json", is_flag=True, help="Print where it stands as one JSON object.")
def restore(url: str, directory: str | None, at: str | None, model: str | None,
            full: bool, branch: str | None, as_json: bool) -> None:
    """Clone URL and bring the agent up; print where it stands."""
    rep = do_restore(url, directory, at=at, model=model, partial=not full,
                     install_hooks=install_for_init, branch=branch)
    if as_json:
        click.echo(_json(rep))
        return
    for note in rep.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(f"restored {rep.agent_id} into {rep.root}")
    click.echo(f"identity: {len(rep.identity_files)} file(s), hash {rep.identity_hash[:12]}… "
               "verified")
    click.echo(f"skills: {', '.join(rep.skills) if rep.skills else 'none'}")
    where = f"through {rep.last_event_id}" if rep.last_event_id else "(empty log)"
    click.echo(f"log: folded {where}" + (f", seeded from {rep.seeded_from}"
                                         if rep.seeded_from else ""))
    click.echo(f"model: {rep.model or '(unbound)'}")
    click.echo(f"open goals ({len(rep.open_goals)}):" if rep.open_goals else "open goals: none")
    for g in rep.open_goals:
        click.echo(f"  {g['id']}  [{g['props'].get('status', '?')}]  {label(g)}")
    if rep.run:
        click.echo(f"unfinished run: {rep.run['run_id']}  {rep.run.get('task') or ''}")
    else:
        click.echo("unfinished run: none")
    click.echo("last decisions:" if rep.decisions else "last decisions: none")
    for d in rep.decisions:
        click.echo(f"  {d['id']}  [{d['props'].get('status', '?')}]  {label(d)}")


def _json(rep) -> str:
    def brief(node: dict) -> dict:
        return {"id": node["id"], "status": node["props"].get("status"), "label": label(node)}

    return json.dumps({
        "agent_id": rep.agent_id, "root": str(rep.root),
        "identity": {"files": len(rep.identity_files), "hash": rep.identity_hash},
        "skills": list(rep.skills), "last_event_id": rep.last_event_id,
        "seeded_from": rep.seeded_from, "model": rep.model,
        "open_goals": [brief(g) for g in rep.open_goals],
        "unfinished_run": ({"id": rep.run["run_id"], "task": rep.run.get("task")}
                           if rep.run else None),
        "decisions": [brief(d) for d in rep.decisions], "notes": list(rep.notes),
    }, ensure_ascii=False, sort_keys=True)
