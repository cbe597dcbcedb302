"""`git gasp import claude-code|codex FILE… [--all]`: project agent sessions into the log;
`git gasp import otel FILE…`: project OpenTelemetry traces (OTLP/JSON) into runs;
`git gasp import agent-trace FILE…`: Agent Trace records into observations on commits."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from git_gasp.adapters.claude_code import parse_transcript
from git_gasp.adapters.codex import parse_rollout
from git_gasp.adapters.live import find_agent_root
from git_gasp.adapters.project import import_session
from git_gasp.adapters.records import read_raw
from git_gasp.adapters.rescue import rescue, rescue_message
from git_gasp.adapters.sessions import find_sessions, store_of
from git_gasp.attribution.trace_import import import_records
from git_gasp.base.errors import GaspError, UsageError
from git_gasp.base.progress import on_terminal
from git_gasp.cli.options import WaitCommand, open_state, release_lease, wait_option
from git_gasp.otel.importer import OtelWriter, group_runs
from git_gasp.otel.otlp import read_spans
from git_gasp.runtime import AgentState, commit_run
from git_gasp.runtime.commit import commit_paths
from git_gasp.store.lease_wait import take
from git_gasp.store.location import resolve_agent_root


@click.command("import", cls=WaitCommand)
@click.argument("agent", type=click.Choice(["claude-code", "codex", "otel", "agent-trace"]))
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--all", "all_", is_flag=True,
              help="Import every session of AGENT recorded in this repo's directory or below it.")
@click.option("--repo", "repo", type=click.Path(file_okay=False, path_type=Path), default=".",
              show_default=True, help="The agent repo to record into.")
@click.option("--no-commit", is_flag=True, help="Append the events but make no commit.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object: what each file gave (runs, events, commits).")
@wait_option
def import_(agent: str, files: tuple[Path, ...], all_: bool, repo: Path, no_commit: bool,
            as_json: bool, wait: float | None) -> None:
    """Project Claude Code transcripts or Codex rollouts (.jsonl / .jsonl.zst), or
    OpenTelemetry traces (otel: OTLP/JSON, .jsonl or .json), into runs.

    Each session (each agent span or trace) becomes one run (re-importing it adds
    nothing); the redacted raw session is archived to transcripts/<run-id>.jsonl.gz and
    each run gets its boundary commit unless --no-commit.

    agent-trace: each Agent Trace record (.agent-trace/traces.jsonl) naming a commit of
    the repository here becomes one observation on that commit (re-importing adds
    nothing), then one commit of the log unless --no-commit.
    """
    out = Report(as_json)
    try:
        _import(agent, list(files), all_, repo, no_commit, out, wait)
    except Exception as exc:  # what was imported (and committed) before it, then the error
        out.extra["error"] = str(exc)
        out.close()
        raise
    out.close()


def _import(agent: str, paths: list[Path], all_: bool, repo: Path, no_commit: bool,
            out: Report, wait: float | None) -> None:
    if agent == "agent-trace":
        if all_ or not paths:
            raise UsageError("name the Agent Trace files to import (.agent-trace/traces.jsonl)")
        _import_agent_trace(paths, repo, no_commit, out, wait)
        return
    if agent == "otel":
        if all_:
            raise UsageError("--all finds agent sessions; name the OTLP/JSON files to import")
        if not paths:
            raise UsageError("name the OTLP/JSON files to import")
        _import_otel(paths, repo, no_commit, out, wait)
        return
    if all_:
        found_root = find_agent_root(repo)
        project = Path(found_root) if found_root else repo.resolve()
        found = [p for p in find_sessions(agent, project) if p not in paths]
        if not found and not paths:
            out.say(f"no sessions found for {project} in {store_of(agent)}")
            return
        paths += found
    if not paths:
        raise UsageError("name session files to import, or use --all")
    parse = parse_transcript if agent == "claude-code" else parse_rollout
    rescued: list[str] = []
    for n, path in enumerate(paths):
        out.tick(n, len(paths))
        raw = read_raw(path)
        transcript = parse(raw)
        if not transcript.records:
            out.say(f"{path}: no session records (is it a {agent} file?); skipped", err=True)
            out.add(path, status="skipped", reason="no session records")
            continue
        result = import_session(repo, transcript, raw, wait=wait)
        if result.already:
            saved = rescue(repo, transcript, raw) if all_ else []
            rescued += saved
            out.say(f"{path}: {result.run_id} already imported; " + (
                f"transcript archived to {', '.join(saved)}" if saved else "nothing added"))
            out.add(path, status="already", run_id=result.run_id, archived=saved)
            continue
        for warning in result.warnings:
            out.say(f"{path}: warning: {warning}", err=True)
        lifted = ", ".join(f"{n} {k}" for k, n in sorted(result.lifted.items())) or "nothing"
        skipped = sum(result.skipped.values())
        out.say(f"{path}: {result.run_id}: {result.added} events ({result.outcome}); "
                f"lifted {lifted}; {skipped} line(s) of other types skipped")
        record = out.add(path, status="imported", run_id=result.run_id, events=result.added,
                         outcome=result.outcome, lifted=dict(result.lifted),
                         skipped_lines=skipped, warnings=list(result.warnings))
        if not no_commit:
            commit = commit_run(repo, result.run_id, result.goal, result.outcome or "completed",
                                [result.archive] if result.archive else [])
            sha = commit.decode() if isinstance(commit, bytes) else str(commit)
            out.say(f"  committed {sha[:12]}")
            record["commit"] = sha
    if rescued and not no_commit:
        commit = commit_paths(repo, ["state/events.jsonl", *rescued], rescue_message(rescued),
                              log_rel="state/events.jsonl")
        sha = commit.decode() if isinstance(commit, bytes) else str(commit)
        out.say(f"archived {len(rescued)} transcript(s); committed {sha[:12]}")
        out.extra["archive_commit"] = sha


def _import_otel(paths: list[Path], repo: Path, no_commit: bool, out: Report,
                 wait: float | None) -> None:
    """`git gasp import otel FILE…`: each file's runs, each with its boundary commit."""
    for n, path in enumerate(paths):
        out.tick(n, len(paths))
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise GaspError(f"{path}: cannot read ({exc.strerror or exc})") from None
        runs, unused = group_runs(read_spans(data, str(path)))
        if not runs:
            out.say(f"{path}: no agent, model or tool spans; nothing imported", err=True)
            out.add(path, status="skipped", reason="no agent, model or tool spans")
            continue
        with AgentState.open(repo, "git-gasp-import") as state:
            take(state.store.lease, wait)
            state.refresh()  # whatever was appended before we held the lease
            writer = OtelWriter(state)
            for run in runs:
                result = writer.write(run)
                if result.already:
                    out.say(f"{path}: {result.run_id} already imported; nothing added")
                    out.add(path, status="already", run_id=result.run_id)
                    continue
                failed = f", {result.failed_calls} failed" if result.failed_calls else ""
                out.say(f"{path}: {result.run_id}: {result.added} events ({result.outcome}); "
                        f"{result.model_calls} model call(s), {result.tool_calls} tool "
                        f"call(s){failed}")
                record = out.add(path, status="imported", run_id=result.run_id,
                                 events=result.added, outcome=result.outcome,
                                 model_calls=result.model_calls,
                                 tool_calls=result.tool_calls,
                                 failed_calls=result.failed_calls)
                if not no_commit:
                    commit = commit_run(repo, result.run_id, None, result.outcome or "completed")
                    sha = commit.decode() if isinstance(commit, bytes) else str(commit)
                    out.say(f"  committed {sha[:12]}")
                    record["commit"] = sha
        if unused:
            out.say(f"{path}: {unused} span(s) outside any agent, model or tool span "
                    "skipped", err=True)
            out.extra.setdefault("unused_spans", {})[str(path)] = unused


SKIPS_SHOWN = 10  # skipped records named one by one, per file


def _import_agent_trace(paths: list[Path], repo: Path, no_commit: bool, out: Report,
                        wait: float | None) -> None:
    """`git gasp import agent-trace FILE…`: through the write gate (the lease first), every
    file's records, then one commit of the log."""
    datas = []
    for path in paths:  # every file read before the lease is taken
        try:
            datas.append(path.read_bytes())
        except OSError as exc:
            raise GaspError(f"{path}: cannot read ({exc.strerror or exc})") from None
    root = resolve_agent_root(str(repo))
    project = os.getcwd() if str(repo) == "." else str(root)
    state = open_state(write=True, root=root, wait=wait)
    added = 0
    for n, (path, data) in enumerate(zip(paths, datas, strict=True)):
        out.tick(n, len(paths))
        result = import_records(state, project, data)
        for line, reason in result.skipped[:SKIPS_SHOWN]:
            out.say(f"{path}:{line}: skipped: {reason}", err=True)
        if len(result.skipped) > SKIPS_SHOWN:  # a file of something else: not a flood
            out.say(f"{path}: {len(result.skipped) - SKIPS_SHOWN} more line(s) skipped",
                    err=True)
        out.say(f"{path}: {len(result.added)} record(s) imported, {len(result.already)} "
                f"already, {len(result.skipped)} skipped")
        out.add(path, status="imported" if result.added else "already" if result.already
                else "skipped", observations=result.added, already=len(result.already),
                skipped=len(result.skipped))
        added += len(result.added)
    if added and not no_commit:
        rel = state.store.rel
        message = f"import agent-trace: {added} record(s) as observations\n".encode()
        commit = commit_paths(root, [rel], message, log_rel=rel)
        sha = commit.decode() if isinstance(commit, bytes) else str(commit)
        out.say(f"committed {sha[:12]}")
        out.extra["commit"] = sha
    release_lease(state)


class Report:
    """What `import` tells: lines as it goes, or (`--json`) one object at the end:
    ``{"files": [{"file", "status": imported|already|skipped, "run_id", ...}], ...}``."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.files: list[dict] = []
        self.extra: dict = {}
        # `import: N/M files` on a terminal for a long import (never with --json)
        self.progress = None if as_json else on_terminal(sys.stderr, "import:", "files")

    def tick(self, done: int, total: int) -> None:
        if self.progress is not None and total > 1:
            self.progress(done + 1, total)  # the file being imported

    def say(self, text: str, err: bool = False) -> None:
        if self.progress is not None:
            self.progress.clear()  # a line never lands inside the progress line
        if self.as_json:
            if err:  # warnings still reach stderr; stdout stays one JSON object
                click.echo(text, err=True)
            return
        click.echo(text, err=err)

    def add(self, path: Path, **fields) -> dict:
        record = {"file": str(path), **fields}
        self.files.append(record)
        return record

    def close(self) -> None:
        if self.progress is not None:
            self.progress.clear()
        if self.as_json:
            click.echo(json.dumps({"files": self.files, **self.extra}, ensure_ascii=False,
                                  sort_keys=True))
