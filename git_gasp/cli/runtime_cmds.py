"""Runtime commands: run, record, commit-run, log, lineage, memory, journal, identity,
lease, restore, fork, diff. Thin: parse flags, call git_gasp.runtime, print.

The agent root is the nearest directory up from here holding AGENT.md. The lease
is taken by the first append and kept while a run is open (so no other worker can
write into it); otherwise each command gives it back when it is done.
"""

from __future__ import annotations

import click

CONTEXT = {"help_option_names": ["-h", "--help"]}


# --- shared -----------------------------------------------------------------------
def _root():
    from git_gasp.conformance.runner import resolve_agent_root

    return resolve_agent_root(None)


def _open(*, notes: bool = True):
    from git_gasp.runtime.state import AgentState
    from git_gasp.store.lease import default_worker_id

    state = AgentState.open(_root(), default_worker_id())
    if notes:
        for note in state.notes:
            click.echo(f"note: {note}", err=True)
    return state


def _done(state) -> None:
    """Keep the lease while a run is open; otherwise give it back."""
    from git_gasp.store.lease import LeaseError

    if state.run is None:
        try:
            state.store.lease.release()
        except LeaseError:
            pass


def _json_obj(text: str | None, what: str) -> dict:
    import json

    from git_gasp.base.errors import UsageError

    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{what} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise UsageError(f"{what} must be a JSON object")
    return value


def _call(helper, positional: tuple, flags: dict, payload: str | None):
    """Call a record_* helper with flags merged over a --json payload."""
    import inspect

    from git_gasp.base.errors import UsageError

    params = inspect.signature(helper).parameters
    kwargs = _json_obj(payload, "--json")
    unknown = sorted(k for k in kwargs if k not in params)
    if unknown:
        raise UsageError(f"--json has unknown field{'s' * (len(unknown) > 1)} "
                         f"{', '.join(unknown)} (allowed: {', '.join(params)})")
    kwargs.update({k: v for k, v in flags.items() if v is not None})
    names = list(params)[: len(positional)]
    for name, value in zip(names, positional, strict=False):
        if value is not None:
            kwargs[name] = value
    missing = [n for n, p in params.items() if p.default is inspect.Parameter.empty
               and p.kind is not p.VAR_KEYWORD and n not in kwargs]
    if missing:
        raise UsageError(f"missing {', '.join('--' + m.replace('_', '-') for m in missing)}")
    return helper(**kwargs)


def _record(helper_name: str, positional: tuple = (), **flags):
    """Open the state, call the helper under the options every record shares, print the id."""
    from contextlib import nullcontext

    metadata = flags.pop("metadata", None)
    payload = flags.pop("payload", None)
    cause = flags.pop("cause", None)
    approved_by = flags.pop("approved_by", None)
    state = _open()
    helper = getattr(state, helper_name)
    if metadata is not None:
        flags["metadata"] = _json_obj(metadata, "--metadata")
    if cause is not None:
        flags["cause"] = cause
    with state.approval(approved_by) if approved_by else nullcontext():
        result = _call(helper, positional, flags, payload)
    _done(state)
    click.echo(result)
    return result


def common(fn):
    """Options every `record` subcommand takes."""
    fn = click.option("--json", "payload", metavar="OBJECT",
                      help="Fields as a JSON object (flags override it).")(fn)
    fn = click.option("--metadata", metavar="OBJECT", help="Metadata as a JSON object.")(fn)
    fn = click.option("--cause", metavar="EVENT_ID",
                      help="Causation (default: the open run, else the linked node).")(fn)
    fn = click.option("--approved-by", metavar="NAME",
                      help="Approver for changes a policy gate requires approval for.")(fn)
    return fn


# --- run ----------------------------------------------------------------------------
@click.group(context_settings=CONTEXT)
def run() -> None:
    """Start, finish or show the agent's current run."""


@run.command("start", context_settings=CONTEXT)
@click.option("--task", required=True, help="What this run is for.")
@click.option("--goal", metavar="GOAL_ID", help="The goal the run serves.")
@click.option("--task-id", metavar="TASK_ID", help="The task node the run serves.")
@click.option("--metadata", metavar="OBJECT", help="Metadata as a JSON object.")
def run_start(task: str, goal: str | None, task_id: str | None, metadata: str | None) -> None:
    """Record run.started; print the run id. Later events chain to it."""
    state = _open()
    rid = state.start_run(task, goal=goal, task_id=task_id,
                          metadata=_json_obj(metadata, "--metadata"))
    click.echo(rid)


@run.command("finish", context_settings=CONTEXT)
@click.option("--outcome", required=True, help="One line: how the run ended.")
@click.option("--run", "run_id", metavar="RUN_ID",
              help="The run to finish (default: the open one).")
@click.option("--metadata", metavar="OBJECT", help="Metadata as a JSON object.")
def run_finish(outcome: str, run_id: str | None, metadata: str | None) -> None:
    """Record run.finished; print the run id."""
    state = _open()
    rid = state.finish_run(outcome, run_id=run_id, metadata=_json_obj(metadata, "--metadata"))
    _done(state)
    click.echo(rid)


@run.command("status", context_settings=CONTEXT)
def run_status() -> None:
    """Print the open run, if any."""
    state = _open()
    if state.run is None:
        click.echo("no open run")
        return
    props = state.graph.nodes[state.run.run_id]["props"]
    click.echo(f"{state.run.run_id}  {props.get('task', '')}"
               + (f"  (goal {state.run.goal_id})" if state.run.goal_id else ""))


# --- record -------------------------------------------------------------------------
@click.group(context_settings=CONTEXT)
def record() -> None:
    """Record a domain or raw-layer event (and its paired ops); print the new id."""


@record.command("goal", context_settings=CONTEXT)
@click.option("--title")
@click.option("--summary")
@click.option("--status", help="Open (default), Active or Blocked.")
@click.option("--parent", metavar="GOAL_ID", help="A goal this one serves.")
@common
def record_goal(**kw) -> None:
    """goal.created."""
    _record("record_goal", **kw)


@record.command("task", context_settings=CONTEXT)
@click.option("--title")
@click.option("--goal", metavar="GOAL_ID")
@click.option("--status")
@common
def record_task(**kw) -> None:
    """task.created (serves --goal)."""
    _record("record_task", **kw)


@record.command("observation", context_settings=CONTEXT)
@click.option("--summary")
@click.option("--about", metavar="NODE_ID", help="The node observed.")
@click.option("--source")
@common
def record_observation(**kw) -> None:
    """observation.created."""
    _record("record_observation", **kw)


@record.command("failure", context_settings=CONTEXT)
@click.option("--summary")
@click.option("--observation", metavar="OBSERVATION_ID")
@common
def record_failure(**kw) -> None:
    """failure.observed."""
    _record("record_failure", **kw)


@record.command("hypothesis", context_settings=CONTEXT)
@click.option("--statement")
@click.option("--explains", metavar="FAILURE_ID")
@common
def record_hypothesis(**kw) -> None:
    """hypothesis.created."""
    _record("record_hypothesis", **kw)


@record.command("patch", context_settings=CONTEXT)
@click.option("--title")
@click.option("--summary")
@click.option("--advances", metavar="GOAL_ID")
@click.option("--addresses", metavar="FAILURE_ID")
@click.option("--hypothesis", metavar="HYPOTHESIS_ID")
@click.option("--commit", metavar="SHA", help="The commit the patch pins (references_commit).")
@click.option("--skill", metavar="NAME", help="The skill the patch changes (track record).")
@common
def record_patch(**kw) -> None:
    """patch.proposed (status Proposed)."""
    _record("propose_patch", **kw)


@record.command("eval", context_settings=CONTEXT)
@click.option("--command", "command")
@click.option("--status", help="Passed or Failed.")
@click.option("--score", type=float)
@click.option("--validates", metavar="PATCH_ID")
@common
def record_eval(**kw) -> None:
    """eval.finished (PATCH validated_by the eval)."""
    _record("record_eval", **kw)


@record.command("decision", context_settings=CONTEXT)
@click.option("--status", help="Approved (promotes --patch) or Rejected.")
@click.option("--reason")
@click.option("--patch", metavar="PATCH_ID")
@click.option("--decided-by", metavar="NAME", help="A person who decided (actor kind user).")
@common
def record_decision(decided_by: str | None, **kw) -> None:
    """decision.created (Approved promotes the patch, policy permitting)."""
    _record("record_decision", decided_by=("user", decided_by) if decided_by else None, **kw)


@record.command("frame", context_settings=CONTEXT)
@click.option("--title")
@click.option("--summary")
@common
def record_frame(**kw) -> None:
    """frame.created."""
    _record("record_frame", **kw)


def _call_pair(start: str, finish: str, start_kw: dict, output: str | None,
               success: bool | None, common_kw: dict) -> None:
    from contextlib import nullcontext

    state = _open()
    approved = common_kw.get("approved_by")
    with state.approval(approved) if approved else nullcontext():
        flags = {**start_kw, "metadata": _json_obj(common_kw.get("metadata"), "--metadata")}
        call_id = _call(getattr(state, start), (), flags, common_kw.get("payload"))
        if output is not None or success is not None:
            getattr(state, finish)(call_id, output_summary=output or "",
                                   success=True if success is None else success)
    _done(state)
    click.echo(call_id)


@record.command("tool-call", context_settings=CONTEXT)
@click.option("--tool")
@click.option("--input", "input_summary")
@click.option("--output", help="Also record tool.finished with this output summary.")
@click.option("--success/--failure", default=None, help="Also record tool.finished.")
@common
def record_tool_call(tool, input_summary, output, success, **common_kw) -> None:
    """tool.called (and tool.finished with --output / --success / --failure)."""
    _call_pair("record_tool_call", "finish_tool_call",
               {"tool": tool, "input_summary": input_summary}, output, success, common_kw)


@record.command("model-call", context_settings=CONTEXT)
@click.option("--model")
@click.option("--provider")
@click.option("--input", "input_summary")
@click.option("--output", help="Also record model.finished with this output summary.")
@click.option("--success/--failure", default=None, help="Also record model.finished.")
@common
def record_model_call(model, provider, input_summary, output, success, **common_kw) -> None:
    """model.called (and model.finished with --output / --success / --failure)."""
    _call_pair("record_model_call", "finish_model_call",
               {"model": model, "provider": provider, "input_summary": input_summary},
               output, success, common_kw)


@record.command("status", context_settings=CONTEXT)
@click.argument("node")
@click.argument("status")
@click.option("--reason")
def record_status(node: str, status: str, reason: str | None) -> None:
    """<kind>.status_changed after validating the transition."""
    state = _open()
    click.echo(state.update_status(node, status, reason=reason))
    _done(state)


# --- commit-run ---------------------------------------------------------------------
@click.command("commit-run", context_settings=CONTEXT)
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--run", "run_id", metavar="RUN_ID", help="Default: the last finished run.")
@click.option("--outcome", help="Default: the run's recorded outcome.")
@click.option("--goal", metavar="GOAL_ID", help="Default: the run's goal.")
@click.option("--no-journal", is_flag=True, help="Do not append the run to journal/JOURNAL.md.")
def commit_run(paths, run_id, outcome, goal, no_journal) -> None:
    """Make the run's closing commit: the log, projections and PATHS, with trailers."""
    from git_gasp.base.errors import GaspError
    from git_gasp.runtime.commit import commit_run as do_commit
    from git_gasp.runtime.journal import JOURNAL_REL, append_journal

    state = _open()
    runs = [n for n in state.graph.nodes.values() if n["kind"] == "run"]
    if run_id is None:
        if state.run is not None:
            raise GaspError(f"run {state.run.run_id} is still open; "
                            "`git gasp run finish --outcome …` first")
        finished = [n for n in runs if n["props"].get("status") == "finished"]
        if not finished:
            raise GaspError("no finished run to commit")
        node = finished[-1]
    else:
        node = state.graph.nodes.get(run_id)
        if node is None or node["kind"] != "run":
            raise GaspError(f"no run {run_id}")
    props = node["props"]
    outcome = outcome or props.get("outcome")
    if not outcome:
        raise GaspError(f"run {node['id']} has no outcome; pass --outcome")
    goal = goal or props.get("goal_id")
    if not no_journal:
        append_journal(state)
    root = state.root
    extra = [p for p in (JOURNAL_REL, "memory", ".agent/packs", "snapshots")
             if (root / p).exists()]
    import os

    cwd = os.getcwd()
    extra += [os.path.relpath(os.path.join(cwd, p), root) for p in paths]
    sha = do_commit(root, node["id"], goal, outcome, extra, log_rel=state.store.rel)
    _done(state)
    click.echo(sha.decode())


# --- log / lineage / diff -------------------------------------------------------------
@click.command("log", context_settings=CONTEXT)
@click.option("--kind", "kinds", multiple=True, metavar="PATTERN",
              help="Only kinds matching this glob (repeatable), e.g. 'patch.*'.")
@click.option("--run", "run_id", metavar="RUN_ID", help="Only events of this run.")
@click.option("--since", metavar="EVENT_ID|MS", help="Only events after this event or time.")
@click.option("--ops", is_flag=True, help="Include state.ops_applied events.")
@click.option("--limit", type=int, help="Only the last N matching events.")
@click.option("--json", "as_json", is_flag=True, help="One JSON envelope per line.")
def log(kinds, run_id, since, ops, limit, as_json) -> None:
    """A readable timeline of the event log."""
    import fnmatch
    import json
    from datetime import datetime, timezone

    from git_gasp.base.errors import UsageError

    state = _open()
    events = state.events()
    if since is not None:
        idx = next((i for i, e in enumerate(events) if e.id == since), None)
        if idx is not None:
            events = events[idx + 1:]
        elif since.isdigit():
            events = [e for e in events if e.ts_ms > int(since)]
        else:
            raise UsageError(f"--since {since}: neither an event id nor epoch milliseconds")
    if not ops and not kinds:
        events = [e for e in events if e.kind != "state.ops_applied"]
    if kinds:
        events = [e for e in events if any(fnmatch.fnmatchcase(e.kind, k) for k in kinds)]
    if run_id:
        events = [e for e in events if e.correlation_id == run_id]
    if limit is not None:
        events = events[-limit:] if limit > 0 else []
    from git_gasp.runtime.queries import label

    for e in events:
        if as_json:
            click.echo(json.dumps(e.to_dict(), ensure_ascii=False))
            continue
        when = datetime.fromtimestamp(e.ts_ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        p = e.payload if isinstance(e.payload, dict) else {}
        subject = p.get("id") or p.get("run_id") or ""
        node = state.graph.nodes.get(subject) if subject else None
        text = (p.get("outcome") or (label(node) if node else "") or p.get("title")
                or p.get("summary") or p.get("to") or "")
        if e.kind == "state.ops_applied":
            text = f"{len(e.payload) if isinstance(e.payload, list) else '?'} op(s)"
        click.echo(f"{e.line:>6}  {when}  {e.kind:<26} {subject}  {text}".rstrip())


@click.command("lineage", context_settings=CONTEXT)
@click.argument("node")
@click.option("--depth", type=int, default=3, show_default=True, help="Hops to follow.")
@click.option("--json", "as_json", is_flag=True, help="Print nodes and edges as JSON.")
def lineage(node: str, depth: int, as_json: bool) -> None:
    """The why-chain around NODE (goal -> patch -> eval -> decision ...)."""
    import json

    state = _open()
    result = state.lineage(node, depth)
    if as_json:
        click.echo(json.dumps(result.to_json(), ensure_ascii=False, sort_keys=True))
    else:
        click.echo(result.to_markdown(), nl=False)


@click.command("diff", context_settings=CONTEXT)
@click.argument("a")
@click.argument("b")
@click.option("--json", "as_json", is_flag=True, help="Print the difference as JSON.")
def diff(a: str, b: str, as_json: bool) -> None:
    """Compare the folds at A and B: event ids of the log or git revisions (fork branches)."""
    import json

    from git_gasp.runtime.queries import diff_graphs, fold_at

    root = _root()
    result = diff_graphs(fold_at(root, a), fold_at(root, b))
    if as_json:
        click.echo(json.dumps(result.to_json(), ensure_ascii=False, sort_keys=True))
    else:
        for line in result.lines():
            click.echo(line)


# --- fork / restore ------------------------------------------------------------------
@click.command("fork", context_settings=CONTEXT)
@click.argument("name")
@click.option("--at", metavar="EVENT_ID", help="Fork after this event (default: the last).")
def fork(name: str, at: str | None) -> None:
    """Create branch NAME holding the log through --at (plus a fork marker)."""
    from git_gasp.runtime.fork import fork as do_fork
    from git_gasp.runtime.identity import declared_identity_hash

    root = _root()
    manifest, _ = declared_identity_hash(root)
    sha = do_fork(root, name, at, actor=("agent", manifest.agent_id))
    click.echo(f"{name} {sha.decode()}")
    click.echo(f"switch to it with: git switch {name}", err=True)


@click.command("restore", context_settings=CONTEXT)
@click.argument("url")
@click.argument("directory", required=False, type=click.Path())
@click.option("--at", metavar="EVENT_ID", help="Fold only through this event.")
@click.option("--model", help="Bind this model in .agent/config.toml.")
@click.option("--full", is_flag=True, help="A full clone (transcripts/ included).")
def restore(url: str, directory: str | None, at: str | None, model: str | None,
            full: bool) -> None:
    """Clone URL and bring the agent up; print where it stands."""
    from git_gasp.runtime.queries import label
    from git_gasp.runtime.restore import restore as do_restore

    rep = do_restore(url, directory, at=at, model=model, partial=not full)
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


# --- memory / journal ------------------------------------------------------------------
@click.group(context_settings=CONTEXT)
def memory() -> None:
    """Distilled facts (memory/facts.jsonl) and the active memory synthesis."""


@memory.command("add", context_settings=CONTEXT)
@click.argument("text")
@click.option("--from", "sources", multiple=True, required=True, metavar="ID",
              help="An event or run the fact was learned from (repeatable, required).")
def memory_add(text: str, sources: tuple[str, ...]) -> None:
    """Append a fact; print its id."""
    from git_gasp.runtime.memory import Facts

    state = _open()
    click.echo(Facts(state).add(text, list(sources)))
    _done(state)


@memory.command("supersede", context_settings=CONTEXT)
@click.argument("old")
@click.argument("text")
@click.option("--from", "sources", multiple=True, required=True, metavar="ID",
              help="An event or run the new version was learned from (repeatable).")
def memory_supersede(old: str, text: str, sources: tuple[str, ...]) -> None:
    """Append a fact that replaces OLD; print its id."""
    from git_gasp.runtime.memory import Facts

    state = _open()
    click.echo(Facts(state).supersede(old, text, list(sources)))
    _done(state)


@memory.command("list", context_settings=CONTEXT)
@click.option("--all", "show_all", is_flag=True, help="Superseded facts too.")
@click.option("--json", "as_json", is_flag=True, help="One fact object per line.")
def memory_list(show_all: bool, as_json: bool) -> None:
    """The live facts (latest of each chain)."""
    import json

    from git_gasp.runtime.memory import Facts

    facts = Facts(_open())
    for f in facts.load() if show_all else facts.live():
        click.echo(json.dumps(f, ensure_ascii=False) if as_json else f"{f['id']}  {f['text']}")


@memory.command("synthesize", context_settings=CONTEXT)
def memory_synthesize() -> None:
    """Regenerate memory/active_memory.md from the live facts."""
    from git_gasp.runtime.memory import Facts

    path = Facts(_open()).synthesize()
    click.echo(f"wrote {path}")


@click.command("journal", context_settings=CONTEXT)
def journal() -> None:
    """Append finished runs not yet in journal/JOURNAL.md (never rewrites it)."""
    from git_gasp.runtime.journal import append_journal

    state = _open()
    runs = append_journal(state)
    _done(state)
    click.echo(f"appended {len(runs)} run(s)" + (": " + ", ".join(runs) if runs else ""))


# --- identity ------------------------------------------------------------------------------
@click.group(context_settings=CONTEXT)
def identity() -> None:
    """Compute, verify or amend the identity hash."""


@identity.command("hash", context_settings=CONTEXT)
def identity_hash() -> None:
    """Print the SHA-256 of identity/ (the spec recipe)."""
    from git_gasp.runtime.identity import compute_identity_hash, declared_identity_hash

    root = _root()
    manifest, _ = declared_identity_hash(root)
    click.echo(compute_identity_hash(root, manifest.locations["identity"]))


@identity.command("verify", context_settings=CONTEXT)
def identity_verify() -> None:
    """Check identity/ against identity_hash in AGENT.md."""
    from git_gasp.runtime.identity import verify_identity

    declared, _ = verify_identity(_root())
    click.echo(f"identity ok: {declared}")


@identity.command("amend", context_settings=CONTEXT)
@click.option("--approved-by", required=True, metavar="NAME", help="Who approved the change.")
@click.option("--reason", required=True, help="Why (one line).")
@click.option("--set", "sets", multiple=True, metavar="IDENTITY_FILE=SOURCE",
              help="Replace an identity file with SOURCE's content (repeatable); without it, "
                   "commit the edits already made in identity/.")
def identity_amend(approved_by: str, reason: str, sets: tuple[str, ...]) -> None:
    """One commit: identity/ edits + the new hash in AGENT.md + the approving decision."""
    from pathlib import Path

    from git_gasp.base.errors import UsageError
    from git_gasp.runtime.identity import amend_identity

    changes = {}
    for item in sets:
        target, sep, source = item.partition("=")
        if not sep:
            raise UsageError(f"--set {item}: expected IDENTITY_FILE=SOURCE")
        try:
            changes[target] = Path(source).read_bytes()
        except OSError as exc:
            raise UsageError(f"--set {item}: {exc.strerror}") from None
    state = _open()
    commit, old, new = amend_identity(state, approved_by, reason, changes)
    _done(state)
    click.echo(f"{commit.decode()} identity {old[:12]}… -> {new[:12]}…")


# --- lease ------------------------------------------------------------------------------------
@click.group(context_settings=CONTEXT)
def lease() -> None:
    """Show or release the single-writer lease (.agent/lease)."""


@lease.command("status", context_settings=CONTEXT)
def lease_status() -> None:
    """Who holds the lease, if anyone."""
    from git_gasp.store.lease import Lease

    rec = Lease(_root()).read()
    click.echo("no lease" if rec is None else
               f"{'expired' if rec.expired() else 'held'}: {rec.describe()}")


@lease.command("release", context_settings=CONTEXT)
@click.option("--force", is_flag=True, help="Remove another worker's (or a corrupt) lease.")
def lease_release(force: bool) -> None:
    """Give up this worker's lease."""
    from git_gasp.store.lease import Lease

    rec = Lease(_root()).release(force=force)
    click.echo("released" + (f" {rec.describe()}" if rec else " (no lease was held)"))
