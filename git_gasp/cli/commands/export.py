"""`git gasp export otel RUN|--all [-o FILE]`: runs as OpenTelemetry traces (OTLP/JSON);
`git gasp export agent-trace [--since REV] [-o FILE]`: pinned patches as Agent Trace
records."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from git_gasp.attribution.agent_trace import build_records, dumps
from git_gasp.base.errors import GaspError, UsageError
from git_gasp.base.files import write_output
from git_gasp.cli.ids import NodeId
from git_gasp.otel.exporter import export_otel
from git_gasp.runtime.state import AgentState
from git_gasp.store.location import resolve_agent_root


@click.command("export", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("format_", metavar="FORMAT", type=click.Choice(["otel", "agent-trace"]))
@click.argument("run", required=False, metavar="RUN", type=NodeId("run"))
@click.option("--all", "all_", is_flag=True, help="Export every run of the log (otel).")
@click.option("--since", metavar="REV",
              help="agent-trace: only commits REV cannot reach (made after it).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write to FILE (replaced atomically) instead of stdout.")
@click.option("--repo", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The agent repo to read (default: the one here).")
def export(format_: str, run: str | None, all_: bool, since: str | None,
           output: Path | None, repo: Path | None) -> None:
    """otel: write RUN (an id or a unique prefix of one), or every run with --all, as
    OpenTelemetry spans in OTLP/JSON: one ExportTraceServiceRequest per line, as the
    Collector's file exporter writes them, following the GenAI semantic conventions
    (invoke_agent, chat, execute_tool).

    agent-trace: one Agent Trace record (0.1.0) per patch that pins a commit of the
    repository here: the lines that commit added, the model of the patch's run, the
    run and the GASP ids; the same log always gives the same bytes (store them as
    .agent-trace/traces.jsonl with -o)."""
    root = resolve_agent_root(str(repo) if repo is not None else None)
    if format_ == "agent-trace":
        if run is not None or all_:
            raise UsageError("agent-trace exports every pinned patch: it takes no RUN or --all")
        data, what = _agent_trace(root, since, repo is None), "record(s)"
    else:
        if since is not None:
            raise UsageError("--since is for agent-trace")
        if all_ == (run is not None):
            raise UsageError("name one RUN to export, or --all (not both)")
        data, what = export_otel(root, None if all_ else run), "run(s)"
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    try:
        output.parent.mkdir(parents=True, exist_ok=True)  # .agent-trace/ on a first export
        write_output(output, data)
    except OSError as exc:
        raise GaspError(f"{output}: cannot write ({exc.strerror or exc})") from None
    lines = data.count(b"\n")
    click.echo(f"wrote {lines} {what} to {output}", err=True)


def _agent_trace(root: Path, since: str | None, here: bool) -> bytes:
    """The Agent Trace records of the state at `root`, commits read from the repository
    here (`here`: the project's work tree, the state may live on its own branch), else
    from the state's own repository (--repo)."""
    state = AgentState.open(root, end_state=True)
    for note in state.notes:
        click.echo(f"note: {note}", err=True)
    return dumps(build_records(state, os.getcwd() if here else str(root), since=since))
