"""`git gasp kg …`: the Perstate knowledge graph as commands.

Thin: parse flags, call `git_gasp.kg.*`, print. Heavy imports happen inside
each command so `git gasp --version` stays fast.
"""

from __future__ import annotations

import contextlib
import re
import sys
from pathlib import Path
from typing import Any

import click
import orjson

from git_gasp.base.errors import GaspError, UsageError
from git_gasp.base.progress import on_terminal
from git_gasp.cli.browser import open_page
from git_gasp.kg import branches, index, prune, skills
from git_gasp.kg import config as cfgmod
from git_gasp.kg import save as savemod
from git_gasp.kg import search as s
from git_gasp.kg.config import state_home
from git_gasp.kg.info import info, status
from git_gasp.kg.init import run_init
from git_gasp.kg.workspace import repo_name, resolve, touch
from git_gasp.view import kg_page

_session = click.option(
    "--session-id", "session_id", metavar="ID", envvar="PERSTATE_SESSION_ID",
    help="The agent session (bound to a branch in config.yml). Env: PERSTATE_SESSION_ID.",
)
_worktree = click.option(
    "--worktree", metavar="PATH", help="Act on this checkout directly (no session, no sync).",
)
_json = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
_uncommitted = click.option(
    "--uncommitted", is_flag=True,
    help="Include uncommitted edits in the worktree (runs `git status`; slower on big graphs).",
)


def _dump(obj: Any) -> None:
    click.echo(orjson.dumps(obj, option=orjson.OPT_INDENT_2).decode())


def _print_status(st: dict[str, Any]) -> None:
    click.echo(f"state home:     {st['state_home']}")
    if not st["configured"] and st["default_repo"] is None:
        click.echo("config:         missing (not initialised)")
    else:
        click.echo(f"config:         {st['config']}")
        click.echo(f"default repo:   {st['default_repo'] or '(not set)'}")
        click.echo(f"default branch: {st['default_branch'] or '(not set)'}")
    if st["session_id"]:
        click.echo(f"session:        {st['session_id']} -> "
                   f"{st['bound_branch'] or 'unbound'}")
    else:
        click.echo("session:        (pass --session-id ID to see its binding)")
    if st.get("worktree"):
        click.echo(f"worktree:       {st['worktree']}")
    if st.get("next"):
        click.echo(f"next:           {st['next']}")


@click.group("kg", invoke_without_command=True)
@_session
@_json
@click.pass_context
def kg(ctx: click.Context, session_id: str | None, as_json: bool) -> None:
    """Perstate knowledge graph: entities and relations as Markdown files in git.

    Without a subcommand: the same as `kg status`.
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(status_cmd, session_id=session_id, as_json=as_json)


@kg.command("status")
@_session
@_json
def status_cmd(session_id: str | None, as_json: bool) -> None:
    """Config completeness and session binding (no side effects)."""
    st = status(session_id)
    _dump(st) if as_json else _print_status(st)


@kg.command("init")
@click.option("--repo", metavar="URL|PATH", help="Remote URL (SSH recommended) or local path.")
@click.option("--branch", metavar="B", help="Branch for this identity (default: main).")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@_session
def init_cmd(repo: str | None, branch: str | None, yes: bool, session_id: str | None) -> None:
    """Clone the graph repo under the state home, create the worktree and structure."""
    cfg = cfgmod.load()
    repo = repo or cfg.default_repo or None
    branch = branch or cfg.default_branch or "main"
    if not repo:
        raise UsageError("the first init needs --repo URL|PATH")
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError("pass --yes to initialise without a prompt")
        click.echo(f"repo:   {repo}\nbranch: {branch}")
        if not click.confirm("Initialise the knowledge graph with these settings?"):
            raise click.exceptions.Abort()
    ws, notes = run_init(repo, branch, session_id)
    for n in notes:
        click.echo(n)
    click.echo(f"initialised: {ws.repo} ({ws.branch})\nworktree:    {ws.path}")


@kg.command("save")
@click.argument("source", default="-", metavar="[FILE|-]")
@click.option("--no-push", is_flag=True, help="Commit locally only.")
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@_session
@_worktree
@_json
def save_cmd(source: str, no_push: bool, dry_run: bool, session_id: str | None,
             worktree: str | None, as_json: bool) -> None:
    """Create, merge, supersede or delete entities and relations from a YAML/JSON document."""
    if source == "-":
        if sys.stdin.isatty():
            raise UsageError("give a FILE, or pipe the document on stdin")
        text = sys.stdin.read()
    else:
        try:
            with open(source, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise UsageError(f"cannot read {source}: {exc.strerror}") from None
    doc = savemod.load_document(text)
    ws = resolve(session_id, worktree, write=True, sync=False)
    res = savemod.save(ws, doc, push=not no_push, dry_run=dry_run)
    touch(ws)
    if as_json:
        _dump({"commit": res.commit or None, "pushed": res.pushed, "summary": res.summary,
               "counts": res.counts, "files": res.files, "notes": res.notes,
               "dry_run": dry_run})
        return
    for n in res.notes:
        click.echo(f"note: {n}")
    if not res.files:
        click.echo("nothing to save: the graph already holds all of this")
        return
    for f in res.files:
        click.echo(f"  {f}")
    if dry_run:
        click.echo(f"dry run: would commit `perstate: {res.summary}`")
    elif res.pushed:
        extra = f" after {res.attempts} attempts" if res.attempts > 1 else ""
        click.echo(f"saved {res.commit[:12]} perstate: {res.summary} (pushed{extra})")
    else:
        click.echo(f"saved {res.commit[:12]} perstate: {res.summary} (not pushed)")


@kg.command("search")
@click.argument("query", required=False)
@click.option("--hop", type=int, default=0, show_default=True, help="Follow relations N hops.")
@click.option("--rel", metavar="TYPE", help="Only this relation type (hits and hops).")
@click.option("--reverse", "reverse_id", metavar="ID", help="Relations pointing at ID.")
@click.option("--valid-only", is_flag=True, help="Skip superseded entities and relations.")
@click.option("--since", metavar="DATE", help="Only items updated on/after YYYY-MM-DD.")
@click.option("--type", "etype", metavar="T", help="Only entities of type T.")
@click.option("--limit", type=int, default=20, show_default=True)
@click.option("--fixed-strings", "-F", "literal", is_flag=True, help="QUERY is plain text.")
@_uncommitted
@_session
@_worktree
@_json
def search_cmd(query: str | None, hop: int, rel: str | None, reverse_id: str | None,
               valid_only: bool, since: str | None, etype: str | None, limit: int,
               literal: bool, uncommitted: bool, session_id: str | None, worktree: str | None,
               as_json: bool) -> None:
    """Ranked keyword/regex search over ids, labels, aliases and bodies."""
    if since is not None:
        if not re.match(r"^\d{4}-\d{2}-\d{2}", since):
            raise UsageError("--since takes a date: YYYY-MM-DD")
    ws = resolve(session_id, worktree)
    flt = s.Filters(valid_only=valid_only, since=since, etype=etype, rel=rel)
    with _index_progress(as_json) as progress:
        idx = index.load(ws.path, uncommitted=uncommitted, progress=progress)
    res = s.run(ws.path, query, limit=limit, hop=hop, reverse_id=reverse_id, flt=flt,
                literal=literal, idx=idx)
    if as_json:
        _dump({"query": query, "results": res.hits, "more": res.more, "hops": res.hops,
               "reverse": res.reverse})
        return
    if reverse_id:
        click.echo(f"== pointing at {reverse_id} ==")
        for r in res.reverse:
            tag = "" if r["valid"] else f"  [superseded {r['valid_until']}]"
            click.echo(f"  {r['from']} --{r['type']}--> {r['to']}{tag}")
        if not res.reverse:
            click.echo("  (none)")
    if query:
        for h in res.hits:
            tag = "" if h["valid"] else f"  [superseded {h['valid_until']}]"
            if h["kind"] == "entity":
                t = f" [{h['type']}]" if h["type"] else ""
                click.echo(f"entity    {h['id']} — {h['label']}{t}{tag}")
            else:
                click.echo(f"relation  {h['from']} --{h['type']}--> {h['to']}{tag}")
            if h["snippet"]:
                click.echo(f"    {h['snippet']}")
        if not res.hits:
            click.echo(f"no match for {query!r}")
        elif res.more:
            click.echo(f"(first {len(res.hits)} shown; more with --limit)")
    for hp in res.hops:
        click.echo(f"== hop {hp['hop']} ==")
        for e in hp["edges"]:
            click.echo(f"  {e['from']} --{e['type']}--> {e['to']}")


@kg.command("info")
@_uncommitted
@_session
@_worktree
@_json
def info_cmd(uncommitted: bool, session_id: str | None, worktree: str | None,
             as_json: bool) -> None:
    """Repo, branch, path, size, entity and relation counts, recent commits."""
    ws = resolve(session_id, worktree)
    with _index_progress(as_json) as progress:
        data = info(ws, uncommitted=uncommitted, progress=progress)
    if as_json:
        _dump(data)
        return
    r = data["relations"]
    click.echo(f"repo:      {data['repo']}\nbranch:    {data['branch']}\n"
               f"path:      {data['path']}\nsize:      {data['size']}\n"
               f"entities:  {data['entities']}\n"
               f"relations: {r['total']} (valid {r['valid']}, superseded {r['superseded']}, "
               f"undeclared {r['undeclared']})\nrecent commits:")
    for line in data["recent_commits"]:
        click.echo(f"  {line}")


@kg.command("view")
@click.option("--output", "-o", metavar="FILE", help="Write the HTML here.")
@click.option("--no-open", is_flag=True, help="Do not open a browser.")
@_uncommitted
@_session
@_worktree
def view_cmd(output: str | None, no_open: bool, uncommitted: bool, session_id: str | None,
             worktree: str | None) -> None:
    """Write the graph as one self-contained, offline HTML page (and open it)."""
    ws = resolve(session_id, worktree)
    if output:
        out = Path(output)
    else:
        safe = ws.branch.replace("/", "_")
        out = state_home() / "views" / f"{repo_name(ws.repo)}-{safe}.html"
    n_nodes, n_edges = kg_page.write(ws, out, uncommitted=uncommitted)
    click.echo(f"wrote {out} ({n_nodes} entities, {n_edges} relations)")
    if not no_open:
        if not open_page(out):
            click.echo("(no graphical browser here; open the file yourself)")


@kg.command("fork")
@click.argument("name")
@_session
def fork_cmd(name: str, session_id: str | None) -> None:
    """Fork a new branch from the session's branch and bind the session to it."""
    for line in branches.fork(name, session_id):
        click.echo(line)


@kg.command("switch")
@click.argument("branch")
@_session
def switch_cmd(branch: str, session_id: str | None) -> None:
    """Bind the session to an existing branch (creating its worktree)."""
    if not session_id:
        raise UsageError("pass --session-id ID: switch rebinds a session")
    for line in branches.switch(branch, session_id):
        click.echo(line)


@kg.command("prune")
@click.argument("age", default="30d", metavar="[Nd]")
@click.option("--execute", is_flag=True, help="Do it (default: preview only).")
@_session
def prune_cmd(age: str, execute: bool, session_id: str | None) -> None:
    """Remove expired session bindings, stale worktrees, branches whose remote is gone."""
    for line in prune.run(age, execute=execute, current_session=session_id):
        click.echo(line)


@kg.command("install-skill")
@click.option("--dir", "target", metavar="DIR",
              help="Skills directory (default: ~/.claude/skills).")
@click.option("--force", is_flag=True, help="Overwrite a SKILL.md that differs.")
def install_skill_cmd(target: str | None, force: bool) -> None:
    """Install the /perstate Agent Skill (SKILL.md) for Claude Code and other agents."""
    path = skills.install(target, force=force)
    click.echo(f"installed {path}")


__all__ = ["kg", "GaspError"]


@contextlib.contextmanager
def _index_progress(as_json: bool):
    """``kg index: read N/M files`` on a terminal while the index is built (not --json)."""
    progress = None if as_json else on_terminal(sys.stderr, "kg index: read", "files")
    try:
        yield progress
    finally:
        if progress is not None:
            progress.clear()
