"""`git gasp resume RUN --agent AGENT`: a new session of any agent, primed to continue
RUN, whose run records ``derived_from`` RUN.

The primed context (`recap.priming`) is the new session's first prompt; the hand-off
(``adapters/agent_hook/handoff.py``) is a file under the git dir the agent's hooks record
into, taken by the drainer when it starts the new session's run. Started here, the
agent replaces this process (exec) and the hand-off is bound to it; with --print the
command line is printed and the next session of AGENT in this repository takes it.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

import click

from git_gasp.adapters.agent_hook import handoff
from git_gasp.adapters.dialects.launch import LAUNCHES
from git_gasp.adapters.dialects.table import DIALECTS
from git_gasp.adapters.live import gasp_dir
from git_gasp.adapters.prime import identity_files
from git_gasp.adapters.wiring.agent_hooks import has_ours, project_tree, settings_path
from git_gasp.base.errors import GaspError, UsageError
from git_gasp.cli.commands.recap import read_runs
from git_gasp.cli.ids import NodeId
from git_gasp.cli.options import CONTEXT
from git_gasp.protocol.summary import printable
from git_gasp.recap.priming import prompt


@click.command("resume", context_settings=CONTEXT)
@click.argument("run", metavar="RUN", type=NodeId("run"))
@click.argument("agent_args", metavar="[-- ARGS...]", nargs=-1, type=click.UNPROCESSED)
@click.option("--agent", "agent", metavar="AGENT", required=True,
              help="The agent to start: " + ", ".join(LAUNCHES) + ".")
@click.option("--print", "print_only", is_flag=True,
              help="Print the command line instead of starting the agent (the next "
                   "session of AGENT here still records derived_from RUN).")
@click.option("--non-interactive", is_flag=True,
              help="Run the primed prompt and exit (codex exec, claude -p, gemini -p …) "
                   "instead of an interactive session.")
def resume(run: str, agent_args: tuple[str, ...], agent: str, print_only: bool,
           non_interactive: bool) -> None:
    """Start a new session of AGENT in this project primed to continue RUN: the agent's
    identity, RUN's goal, its recap, the open tasks and failing evals, and where its
    transcript is. The new run records derived_from RUN (in any agent: a Claude Code
    run resumed in Codex). ARGS after -- go to the agent's command line."""
    launch = LAUNCHES.get(agent)
    if launch is None:
        raise UsageError(f"--agent {agent!r}: not an agent git gasp can start (one of "
                         f"{', '.join(LAUNCHES)})")
    folded, (rec,) = read_runs(run, None)
    full, root = rec.id, folded.repo.root
    manifest = folded.repo.manifest
    if manifest is None:
        raise GaspError(f"{root}/AGENT.md: {folded.repo.manifest_error}")
    identity = identity_files(root, manifest.locations.get("identity", "identity"))
    text = prompt(rec, agent_id=manifest.agent_id, identity=identity)
    argv = launch.argv(text, interactive=not non_interactive, extra=agent_args)
    gdir = gasp_dir(root)
    if print_only:
        _warn_unrecorded(agent)
        handoff.write(gdir, agent, full)
        click.echo(shlex.join(argv))
        click.echo(printable(f"the next {DIALECTS[agent].title} session started here within "
                             f"{handoff.TTL_MS // 60000} minutes records derived_from {full}"),
                   err=True)
        return
    program = shutil.which(launch.program)
    if program is None:
        package = DIALECTS[agent].package or agent
        raise GaspError(f"{launch.program} is not on PATH (install {package}, or print the "
                        "command with --print)")
    _warn_unrecorded(agent)
    handoff.write(gdir, agent, full, pid=os.getpid())  # exec keeps this process's id
    try:
        os.execv(program, argv)
    except OSError as exc:
        handoff.take(gdir, agent, os.getpid())  # not started: take back the hand-off
        raise GaspError(f"cannot start {launch.program}: {exc.strerror or exc}") from None


def _warn_unrecorded(agent: str) -> None:
    """Say so when AGENT's hooks are not installed in this project (the session would not
    be recorded, nor its derived_from)."""
    settings = DIALECTS[agent].settings
    if not all(where.endswith(".json") for where in settings.values()):
        return  # a plugin (OpenCode's), not a hooks file this can read
    try:
        here = project_tree(Path.cwd())
        installed = any(has_ours(settings_path(agent, here, scope)) for scope in settings)
    except (GaspError, OSError, ValueError, KeyError):
        return  # cannot tell: say nothing rather than something wrong
    if not installed:
        click.echo(f"note: {agent}'s hooks are not installed here; the new session is "
                   f"recorded only after `git gasp adapt {agent} install`", err=True)
