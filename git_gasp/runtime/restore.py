"""Restore (spec Part I): clone, verify, load identity + skills, fold, bind the model.

Shells out to `git clone`: it asks for a partial clone (`--filter=blob:none`) with a
sparse checkout that leaves out the cold `transcripts/` archive; a server that does
not support filters (or a local path) simply gives a full clone.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import tomli_w

from git_gasp.base import git
from git_gasp.base.agentconfig import read_config
from git_gasp.base.errors import GaspError, UsageError
from git_gasp.base.fileops import move_into_place
from git_gasp.base.files import atomic_write, read_file, refuse_links
from git_gasp.protocol.fold import FoldResult
from git_gasp.protocol.skill import SkillError, parse_skill
from git_gasp.protocol.summary import open_goals
from git_gasp.runtime.identity import declared_identity_hash, verify_identity
from git_gasp.runtime.runs import is_unfinished_run
from git_gasp.runtime.state import AgentState
from git_gasp.store.agentfs import AgentFileError, list_files, read_regular
from git_gasp.store.attributes import lineendings_error, register_driver
from git_gasp.store.logview import fold_agent

SUPPORTED_SPEC = {1, "1", "1.0"}


@dataclass
class RestoreReport:
    root: Path
    agent_id: str
    identity_hash: str
    identity_files: list[str]
    skills: list[str]
    open_goals: list[dict]
    run: dict | None
    decisions: list[dict]
    last_event_id: str | None
    seeded_from: str | None = None
    model: str | None = None
    notes: list[str] = field(default_factory=list)


def _run_git(args: list[str], cwd: Path | None = None) -> None:
    """Run git (scrubbed environment: a caller's GIT_DIR never redirects the clone);
    a failure is one line, `git <command> failed: <git's last line>`."""
    try:
        git.run(Path.cwd() if cwd is None else cwd, *args)
    except git.GitError as exc:
        lines = exc.stderr.strip().splitlines()
        raise GaspError(f"git {args[0]} failed: {lines[-1] if lines else exc.returncode}"
                        ) from None


def clone(url: str, dest: Path, *, partial: bool = True, branch: str | None = None) -> None:
    """Clone `url` into `dest`, partially (no transcripts/) where the server allows;
    `branch`: only that branch (the state branch beside a project, `init --branch`)."""
    if dest.exists() and any(dest.iterdir()):
        raise UsageError(f"{dest} exists and is not empty")
    one = ["--branch", branch, "--single-branch"] if branch is not None else []
    if not partial:
        _run_git(["clone", "-q", *one, "--", url, str(dest)])
        return
    _run_git(["clone", "-q", "--filter=blob:none", "--no-checkout", *one, "--", url,
              str(dest)])
    _run_git(["sparse-checkout", "set", "--no-cone", "/*", "!/transcripts/"], cwd=dest)
    _run_git(["checkout", "-q"], cwd=dest)


def bind_model(root: Path, model: str) -> None:
    """Set `model` under [executor] in .agent/config.toml, keeping every other setting.

    The file is read with tomllib and written with tomli_w (so any model name, accents
    and quotes included, comes out as valid TOML); comments in it are not kept. A link
    at the file or on the way to it is refused."""
    if "\n" in model or "\r" in model or not model.strip():
        raise UsageError("a model name is one non-empty line")
    path = refuse_links(root / ".agent" / "config.toml", root)
    config = read_config(root).data
    config.setdefault("executor", {})["model"] = model.strip()
    atomic_write(path, tomli_w.dumps(config).encode("utf-8"), root=root, make_parents=True)
    if read_config(root).executor.model != model.strip():
        raise GaspError(".agent/config.toml: could not bind the model")


def load_skills(root: Path) -> list[str]:
    """Parse every skills/*/SKILL.md (front matter validated); return the skill names."""
    names = []
    base = root / "skills"
    if not base.is_dir():
        return names
    for entry in sorted(p.name for p in base.iterdir() if p.is_dir()):
        rel = f"skills/{entry}/SKILL.md"
        if not (root / rel).exists():
            continue
        try:
            names.append(parse_skill(read_regular(root, rel)).name)
        except (AgentFileError, SkillError) as exc:
            raise GaspError(f"{rel}: {exc}") from None
    return names


def where_it_stands(root: Path, *, at: str | None = None) -> RestoreReport:
    """Verify and load an agent checkout; report open goals, an unfinished run, decisions."""
    if converted := lineendings_error(root):  # a CRLF checkout: one line with the fix
        raise GaspError(converted)
    _declared, actual = verify_identity(root)
    manifest, _ = declared_identity_hash(root)
    if manifest.spec_version not in SUPPORTED_SPEC:
        raise GaspError(f"AGENT.md declares spec_version {manifest.spec_version!r}; this "
                        "runtime speaks GASP 1")
    ident = manifest.locations["identity"]
    identity_files = [p.decode() for p, _path in list_files(root, ident)]
    for _rel, path in list_files(root, ident):
        read_file(path, root=root)  # identity is loaded at runtime, never compiled in
    skills = load_skills(root)
    notes: list[str] = []
    if at is None:
        state = AgentState.open(root, use_snapshots=True)
        graph, last, seeded = state.graph, state.last_event_id, state.seeded_from
        notes += state.notes
        run = state.run
        run_info = None if run is None else {"run_id": run.run_id, "goal_id": run.goal_id,
                                             "task": graph.nodes[run.run_id]["props"].get("task")}
    else:
        view = fold_agent(root, at=at)
        graph, last, seeded = view.result.graph, view.last_event_id, view.seeded_from
        notes += view.notes
        running = [n for n in graph.nodes.values() if is_unfinished_run(n)]
        run_info = None if not running else {"run_id": running[-1]["id"],
                                             "goal_id": running[-1]["props"].get("goal_id"),
                                             "task": running[-1]["props"].get("task")}
    goals = open_goals(FoldResult(graph))
    decisions = [n for n in graph.nodes.values() if n["kind"] == "decision"][-3:]
    model = read_config(root).executor.model or None
    return RestoreReport(root, manifest.agent_id, actual, identity_files, skills, goals,
                         run_info, decisions, last, seeded, model, notes)


InstallHooks = Callable[[Path], object]


def restore(url: str, dest: str | Path | None = None, *, at: str | None = None,
            model: str | None = None, partial: bool = True,
            install_hooks: InstallHooks | None = None,
            branch: str | None = None) -> RestoreReport:
    """Clone `url` and bring the agent up: the restore contract of spec Part I.

    All or nothing: the clone is made in a temporary directory beside `dest`, verified,
    loaded, bound to `model`, given the merge driver and (with `install_hooks`, the
    hooks layer's installer `git gasp init` uses) the guard hooks, and only then renamed
    to `dest`; on any failure the temporary directory is removed and `dest` is left as
    it was. `branch` restores the agent kept on that branch of a project's repository
    (`init --branch`): only its history is cloned."""
    if branch is not None and (branch.startswith("-") or not branch.strip()):
        raise UsageError(f"{branch!r} is not a branch name")
    if dest is None:
        name = re.sub(r"\.git$", "", url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1])
        dest = name or "agent"
    dest = Path(os.path.abspath(dest))
    if dest.exists() and (not dest.is_dir() or dest.is_symlink() or any(dest.iterdir())):
        raise UsageError(f"{dest} exists and is not empty")
    if not dest.parent.is_dir():
        raise UsageError(f"{dest.parent} is not a directory")
    work = Path(tempfile.mkdtemp(prefix=f".{dest.name}.restore-", dir=dest.parent))
    try:
        tmp = work / "clone"
        clone(url, tmp, partial=partial, branch=branch)
        report = where_it_stands(tmp, at=at)
        if model is not None:
            bind_model(tmp, model)
            report.model = model.strip()
        register_driver(tmp)
        if install_hooks is not None:
            install_hooks(tmp)
        if dest.exists():
            dest.rmdir()  # empty (checked above): the clone takes its place
        move_into_place(tmp, dest)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report.root = dest
    return report
