"""`git gasp adapt`: live hooks for the agents of `adapters/dialects/table.py` (Claude Code,
Codex, Gemini CLI, Qwen Code, Copilot CLI, Cursor, Factory Droid, OpenCode), their
install, priming, and the list of them."""

from __future__ import annotations

import os
from pathlib import Path

import click

from git_gasp.adapters.agent_hook.entry import USAGE, read_stdin
from git_gasp.adapters.agent_hook.entry import run as queue_payload
from git_gasp.adapters.agent_hook_sync import set_enabled
from git_gasp.adapters.dialects import copilot as copilot_hooks
from git_gasp.adapters.dialects import cursor as cursor_hooks
from git_gasp.adapters.dialects import opencode as opencode_plugin
from git_gasp.adapters.dialects.table import DIALECTS
from git_gasp.adapters.live import find_agent_root
from git_gasp.adapters.prime import prime
from git_gasp.adapters.wiring import mcp_entries
from git_gasp.adapters.wiring.agent_hooks import (
    claude_settings_path,
    codex_hooks_path,
    codex_trust_note,
    has_ours,
    hook_command,
    keep_local_untracked,
    merge_hooks,
    on_path_note,
    project_tree,
    settings_path,
    write_project_file,
)
from git_gasp.base.errors import GaspError
from git_gasp.cli.commands.mcp import EXTRA, sdk_missing
from git_gasp.cli.commands.reconcile import reconcile_command
from git_gasp.store.location import configured

_REPO = click.option("--repo", "repo", type=click.Path(file_okay=False, path_type=Path),
                     default=".", show_default=True,
                     help="The project (agent repo) the agent works in.")
_UNINSTALL = click.option("--uninstall", is_flag=True,
                          help="Remove only git-gasp's hook entries, keep everything else.")
_SYNC = click.option("--sync", "sync", is_flag=True,
                     help="Also run `git gasp sync` after each session's boundary commit "
                          "(sets gasp.sync in this clone's git config; --uninstall "
                          "removes it).")


_MCP = click.option("--mcp", "mcp", is_flag=True,
                     help="Also register `git gasp mcp` as the agent's MCP server named gasp "
                          "(--uninstall removes that entry, and only it).")


SETTINGS_MCP = ("gemini", "qwen-code", "cursor", "droid")  # mcpServers in a JSON file


def _mcp_preflight(agent: str, repo: Path, mcp: bool, uninstall: bool) -> None:
    """With --mcp, refuse what the MCP entry would refuse before the hooks are written:
    a refused install writes nothing."""
    if mcp and agent in SETTINGS_MCP:
        mcp_entries.preflight_settings(repo, DIALECTS[agent].mcp[0], uninstall)
    elif mcp:
        mcp_entries.preflight(repo, agent == "claude-code", uninstall)


def _mcp_entry(agent: str, repo: Path, mcp: bool, uninstall: bool) -> None:
    if not mcp:
        return
    if agent == "claude-code":
        path, changed = mcp_entries.install_claude(repo, uninstall)
        comments = False
    elif agent in SETTINGS_MCP:
        path, changed = mcp_entries.install_settings(repo, DIALECTS[agent].mcp[0], uninstall)
        comments = False
    else:
        path, changed, comments = mcp_entries.install_codex(repo, uninstall)
    if uninstall:
        click.echo(f"removed the gasp MCP server from {path}" if changed else
                   f"no gasp MCP server in {path}")
        return
    click.echo(f"registered the gasp MCP server (git gasp mcp) in {path}" if changed else
               f"the gasp MCP server is already registered in {path}; nothing changed")
    if comments:
        click.echo(f"note: {path} was rewritten from its data; its comments were not kept",
                   err=True)
    if sdk_missing() is not None:
        click.echo(f"note: the server needs the mcp SDK here: {EXTRA}", err=True)


def _sync_opt_in(repo: Path, sync: bool, uninstall: bool) -> None:
    if not (sync or uninstall):
        return
    root = find_agent_root(repo) or repo
    said = set_enabled(root, not uninstall)
    if said:
        click.echo(said)


@click.group()
def adapt() -> None:
    """Record agent sessions live through their hooks, and prime them.

    `adapt claude-code install` / `adapt codex install` / `adapt gemini install` /
    `adapt qwen-code install` / `adapt copilot install` / `adapt cursor install` /
    `adapt droid install` / `adapt opencode install` register the hook (`git-gasp-hook
    AGENT`) with the agent; `adapt … prime` writes the identity and a context primer
    onto the agent's instruction file (CLAUDE.md, AGENTS.md, GEMINI.md, …); `adapt list`
    shows each agent, its rung and what it records.
    """


@adapt.command("list")
def list_agents() -> None:
    """Each agent git-gasp adapts: its rung, where its hooks go, what a session records
    and how it is tested."""
    for d in DIALECTS.values():
        npm = f", npm {d.package}" if d.package else ""
        click.echo(f"{d.agent} ({d.title}{npm}): rung {d.rung}, hooks in "
                   f"{d.settings['project']}, primes {d.instructions}")
        click.echo(f"  records: {', '.join(d.records)}")
        click.echo(f"  tested: {d.tested}")


@adapt.command("hook")
@click.option("--agent", "agent", default=None, metavar="AGENT",
              help="claude-code, codex, gemini, qwen-code, copilot, cursor, droid or "
                   "opencode (default: detected from the payload).")
@click.option("--repo", "repo", default=None, metavar="PATH",
              help="The agent repo to record into (default: the nearest directory with "
                   "AGENT.md at or above the session's cwd).")
def hook(agent: str | None, repo: str | None) -> int:
    """Queue one hook payload (JSON on stdin) for recording, as `git-gasp-hook AGENT`
    does (what older versions installed; `install` upgrades it). Always exits 0;
    problems go to <gitdir>/gasp/adapter.log."""
    data = read_stdin()
    if data is None:
        click.echo(USAGE, err=True)
        return 0
    queue_payload(data, agent, repo)
    return 0


def _install(agent: str, path: Path, uninstall: bool, *, scope: str = "project") -> None:
    command = None if uninstall else hook_command(agent, absolute=scope == "local")
    result = merge_hooks(path, agent, command, user_scope=scope == "user")
    if uninstall:
        verb = f"removed {result.removed} git-gasp hook(s) from" if result.removed else \
            "no git-gasp hooks in"
        click.echo(f"{verb} {path}")
        return
    if result.changed:
        click.echo(f"installed git-gasp hooks for {result.events} events in {path}")
    else:
        click.echo(f"git-gasp hooks already installed in {path}; nothing changed")
    note = None if scope == "local" else on_path_note()
    if note:
        click.echo(note, err=True)


def _agent_root_note(repo: Path) -> None:
    if find_agent_root(repo) is None:
        click.echo(f"note: {repo} has no agent state yet; the hooks hold what they see "
                   "(redacted, in the git dir) until you run `git gasp init --branch` there",
                   err=True)


def _prime(agent: str, repo: Path) -> None:
    root = find_agent_root(repo)
    if root is None:
        raise GaspError(f"{repo} is not inside an agent repo (no AGENT.md); create one with "
                        "`git gasp init`")
    beside = configured(os.path.realpath(repo)) is not None  # the state is elsewhere
    path, changed = prime(Path(root), agent, at=project_tree(repo) if beside else None)
    click.echo(f"{'wrote' if changed else 'up to date:'} the gasp section of {path}")


@adapt.group("claude-code")
def claude_code() -> None:
    """Claude Code: install hooks into .claude/settings.json, prime CLAUDE.md."""


@claude_code.command("install")
@_REPO
@click.option("--scope", type=click.Choice(["project", "local", "user"]), default="project",
              show_default=True,
              help="project: <repo>/.claude/settings.json (commit it); local: "
                   "<repo>/.claude/settings.local.json (this clone only, names this "
                   "git-gasp by its path); user: ~/.claude/settings.json.")
@_UNINSTALL
@_SYNC
@_MCP
def claude_install(repo: Path, scope: str, uninstall: bool, sync: bool, mcp: bool) -> None:
    """Merge git-gasp's hook entries into Claude Code's settings (idempotent); with
    --mcp also the gasp server into the project's .mcp.json."""
    _mcp_preflight("claude-code", repo, mcp, uninstall)
    _install("claude-code", claude_settings_path(repo, scope), uninstall, scope=scope)
    _sync_opt_in(repo, sync, uninstall)
    _mcp_entry("claude-code", repo, mcp, uninstall)
    if uninstall or scope == "user":
        return
    if scope == "local":
        said = keep_local_untracked(repo)
        if said is not None:
            click.echo(said, err=said.startswith("note:"))
    other = claude_settings_path(repo, "project" if scope == "local" else "local")
    if has_ours(other):
        click.echo(f"note: {other} runs git-gasp's hooks too, so each event would be "
                   "recorded twice; remove one (`--uninstall`)", err=True)
    _agent_root_note(repo)


@claude_code.command("prime")
@_REPO
def claude_prime(repo: Path) -> None:
    """Write the identity and a context primer onto CLAUDE.md (marked section)."""
    _prime("claude-code", repo)


@adapt.group("codex")
def codex() -> None:
    """Codex: install hooks into .codex/hooks.json, prime AGENTS.md."""


@codex.command("install")
@_REPO
@_UNINSTALL
@_SYNC
@_MCP
def codex_install(repo: Path, uninstall: bool, sync: bool, mcp: bool) -> None:
    """Merge git-gasp's hook entries into .codex/hooks.json and say how Codex trusts them;
    with --mcp also [mcp_servers.gasp] into .codex/config.toml."""
    _mcp_preflight("codex", repo, mcp, uninstall)
    _install("codex", codex_hooks_path(repo), uninstall)
    _sync_opt_in(repo, sync, uninstall)
    _mcp_entry("codex", repo, mcp, uninstall)
    if not uninstall:
        _agent_root_note(repo)
        click.echo(codex_trust_note(repo))


@codex.command("prime")
@_REPO
def codex_prime(repo: Path) -> None:
    """Write the identity and a context primer onto AGENTS.md (marked section)."""
    _prime("codex", repo)


TRUST_NOTES = {
    "gemini": "Gemini CLI warns once about new project hooks, then runs them (an untrusted "
              "folder runs none: trust it, or set GEMINI_CLI_TRUST_WORKSPACE=true).",
    "qwen-code": "Qwen Code loads project hooks only in a trusted folder when folder trust "
                 "is on (security.folderTrust.enabled).",
    "droid": "Droid reads the hooks key of .factory/settings.json only while there is no "
             ".factory/hooks.json (its newer file): run /hooks in droid to check.",
}


def _settings_agent(agent: str) -> click.Group:
    """`adapt AGENT install|prime|reconcile` for an agent whose hooks, MCP servers and
    instructions are as its dialect says (Gemini CLI, Qwen Code)."""
    d = DIALECTS[agent]
    scopes = list(d.settings)

    @adapt.group(agent, help=f"{d.title}: install hooks into {d.settings['project']}, "
                 f"prime {d.instructions}.")
    def group() -> None:
        pass

    @group.command("install", help=(
        f"Merge git-gasp's hook entries (named git-gasp) into {d.title}'s settings "
        f"(idempotent); with --mcp also the gasp server into the project's "
        f"{d.mcp[0] if d.mcp else 'settings'} (mcpServers)."))
    @_REPO
    @click.option("--scope", type=click.Choice(scopes), default="project", show_default=True,
                  help=" ".join(f"{s}: {p}" + ("" if s != "project" else " (commit it)") + ";"
                                for s, p in d.settings.items()).rstrip(";") + ".")
    @_UNINSTALL
    @_SYNC
    @_MCP
    def install(repo: Path, scope: str, uninstall: bool, sync: bool, mcp: bool) -> None:
        _mcp_preflight(agent, repo, mcp, uninstall)
        _install(agent, settings_path(agent, repo, scope), uninstall, scope=scope)
        _sync_opt_in(repo, sync, uninstall)
        _mcp_entry(agent, repo, mcp, uninstall)
        if not uninstall:
            _agent_root_note(repo)
            if scope == "project":
                click.echo(TRUST_NOTES[agent])

    @group.command("prime", help=f"Write the identity and a context primer onto "
                   f"{d.instructions} (marked section).")
    @_REPO
    def prime_cmd(repo: Path) -> None:
        _prime(agent, repo)

    group.add_command(reconcile_command(agent))
    return group


gemini = _settings_agent("gemini")
qwen_code = _settings_agent("qwen-code")
droid = _settings_agent("droid")


def _own_file_said(repo: Path, path: Path, changed: bool, uninstall: bool, what: str) -> None:
    """Say what installing (or removing) git-gasp's own `what` file at `path` did."""
    if uninstall:
        click.echo(f"removed {path}" if changed else f"no git-gasp {what} at {path}")
        return
    click.echo(f"wrote git-gasp's {what} to {path}" if changed else
               f"git-gasp's {what} already installed at {path}; nothing changed")
    note = on_path_note()
    if note:
        click.echo(note, err=True)
    _agent_root_note(repo)


@adapt.group("copilot")
def copilot() -> None:
    """GitHub Copilot CLI: install hooks as .github/hooks/git-gasp.json, prime
    .github/copilot-instructions.md."""


@copilot.command("install")
@_REPO
@_UNINSTALL
@_SYNC
def copilot_install(repo: Path, uninstall: bool, sync: bool) -> None:
    """Write git-gasp's own hook file, .github/hooks/git-gasp.json (Copilot CLI loads
    every .github/hooks/*.json), for its session, prompt, tool and stop events;
    --uninstall removes it."""
    command = None if uninstall else hook_command("copilot")
    path, changed = copilot_hooks.install(repo, command)
    _sync_opt_in(repo, sync, uninstall)
    _own_file_said(repo, path, changed, uninstall, "hook file")


@copilot.command("prime")
@_REPO
def copilot_prime(repo: Path) -> None:
    """Write the identity and a context primer onto .github/copilot-instructions.md."""
    _prime("copilot", repo)


copilot.add_command(reconcile_command("copilot"))


@adapt.group("cursor")
def cursor() -> None:
    """Cursor: install hooks into .cursor/hooks.json, prime .cursor/rules/git-gasp.mdc."""


@cursor.command("install")
@_REPO
@click.option("--scope", type=click.Choice(["project", "user"]), default="project",
              show_default=True,
              help="project: <repo>/.cursor/hooks.json (commit it); user: "
                   "~/.cursor/hooks.json.")
@_UNINSTALL
@_SYNC
@_MCP
def cursor_install(repo: Path, scope: str, uninstall: bool, sync: bool, mcp: bool) -> None:
    """Merge git-gasp's entries into Cursor's hook file (its prompt, shell, file edit,
    MCP, stop and session events; idempotent, the rest of the file kept byte for byte);
    with --mcp also the gasp server into .cursor/mcp.json."""
    _mcp_preflight("cursor", repo, mcp, uninstall)
    path = settings_path("cursor", repo, scope)
    changed, removed = cursor_hooks.install(
        path, None if uninstall else hook_command("cursor"), user_scope=scope == "user")
    _sync_opt_in(repo, sync, uninstall)
    _mcp_entry("cursor", repo, mcp, uninstall)
    if uninstall:
        click.echo(f"removed {removed} git-gasp hook(s) from {path}" if removed else
                   f"no git-gasp hooks in {path}")
        return
    click.echo(f"installed git-gasp hooks for {len(DIALECTS['cursor'].events)} events in "
               f"{path}" if changed else
               f"git-gasp hooks already installed in {path}; nothing changed")
    note = on_path_note()
    if note:
        click.echo(note, err=True)
    _agent_root_note(repo)


RULE_HEAD = ("---\ndescription: git-gasp: this agent's identity and what it is working on\n"
             "alwaysApply: true\n---\n\n")


@cursor.command("prime")
@_REPO
def cursor_prime(repo: Path) -> None:
    """Write the identity and a context primer onto .cursor/rules/git-gasp.mdc (a rule
    Cursor always applies; marked section)."""
    root = find_agent_root(repo)
    if root is not None:
        beside = configured(os.path.realpath(repo)) is not None
        at = project_tree(repo) if beside else Path(root)
        rule = at / DIALECTS["cursor"].instructions
        if not rule.exists() and not rule.is_symlink():
            write_project_file(at, DIALECTS["cursor"].instructions,
                               RULE_HEAD.encode("utf-8"))
    _prime("cursor", repo)


@adapt.group("opencode")
def opencode() -> None:
    """OpenCode: install git-gasp's plugin as .opencode/plugins/git-gasp.js, prime
    AGENTS.md."""


@opencode.command("install")
@_REPO
@_UNINSTALL
@_SYNC
@_MCP
def opencode_install(repo: Path, uninstall: bool, sync: bool, mcp: bool) -> None:
    """Write git-gasp's own plugin, .opencode/plugins/git-gasp.js (OpenCode loads every
    plugin there), which sends its session, prompt and tool events to git-gasp-hook
    opencode; --uninstall removes it; with --mcp also the gasp server into
    opencode.json (its mcp table)."""
    config, new = opencode_plugin.mcp_plan(repo, uninstall) if mcp else (None, None)
    command = None if uninstall else hook_command("opencode")
    path, changed = opencode_plugin.install(repo, command)
    _sync_opt_in(repo, sync, uninstall)
    if mcp:
        wrote = opencode_plugin.install_mcp(repo, new)
        click.echo(("removed the gasp MCP server from " if uninstall else
                    "registered the gasp MCP server (git gasp mcp) in ") + str(config)
                   if wrote else f"nothing to change in {config}")
    _own_file_said(repo, path, changed, uninstall, "plugin")


@opencode.command("prime")
@_REPO
def opencode_prime(repo: Path) -> None:
    """Write the identity and a context primer onto AGENTS.md (marked section)."""
    _prime("opencode", repo)


def _add_reconcile() -> None:
    claude_code.add_command(reconcile_command("claude-code"))
    codex.add_command(reconcile_command("codex"))
    for group, agent in ((cursor, "cursor"), (opencode, "opencode")):
        group.add_command(reconcile_command(agent))


_add_reconcile()
