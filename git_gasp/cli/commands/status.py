"""`git gasp status`: one screen, like `git status`, on where the agent's state stands.

Where the state lives (the project's own folder, or the state branch's worktree),
its branch against the upstream, the open run and the lease, the log's count (events by
layer, nodes, the last event: `protocol.logcount`), events not committed yet,
the guard hooks and the merge driver, and the last `check` verdict; `--json` gives the
same as one object.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from git_gasp.base import git
from git_gasp.base.errors import GaspError
from git_gasp.base.fileops import NotARegularFile
from git_gasp.base.files import open_file, read_file
from git_gasp.cli.commands.lease import lease_json, status_line
from git_gasp.cli.options import CONTEXT
from git_gasp.cli.shortids import abbreviate_some
from git_gasp.conformance.saved.counts import log_count
from git_gasp.doctor.clone import diagnose
from git_gasp.odb.gitdirs import locate
from git_gasp.protocol.logcount import LogCount
from git_gasp.runtime.state import AgentState
from git_gasp.store.attributes import log_location
from git_gasp.store.lastcheck import load
from git_gasp.store.lease import Lease
from git_gasp.store.location import configured, require_root


@click.command("status", context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the status as one JSON object.")
def status(as_json: bool) -> int:
    """Show where the agent's state lives and how it stands: sync, run, lease,
    uncommitted events, hooks and merge driver, the last check."""
    info = gather(require_root(os.getcwd()))
    click.echo(json.dumps(info, indent=2, sort_keys=True) if as_json else render(info))
    return 0


def gather(root: str) -> dict:
    """Everything `status` shows, for the agent at `root`."""
    top = str(git.work_tree_top(root))
    try:
        # from the fold a hook saved at the log's end, when the log still starts with it
        state: AgentState | str = AgentState.open(Path(root), "git-gasp-status",
                                                  end_state=True)
    except GaspError as exc:
        state = str(exc)
    return {"root": root, "location": _location(root, top), "branch": _branch(root),
            "run": _run(state), "count": _count(state), "lease": _lease(root),
            "uncommitted": _uncommitted(root), "wiring": _wiring(root),
            "last_check": _last_check(root)}


def _location(root: str, top: str) -> dict:
    conf = configured(os.getcwd())
    if conf is not None:  # found through gasp.state
        kind = "branch" if conf.branch else "path"
        return {"kind": kind, "branch": conf.branch, "path": root}
    return {"kind": "root" if os.path.samefile(root, top) else "folder", "branch": None,
            "path": root}


def _branch(root: str) -> dict:
    name = git.run(root, "symbolic-ref", "-q", "--short", "HEAD", check=False)
    upstream = git.run(root, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{u}",
                       check=False)
    out = {"name": name.stdout.decode().strip() or None, "upstream": None, "ahead": None,
           "behind": None}
    if upstream.returncode == 0:
        out["upstream"] = upstream.stdout.decode().strip()
        counts = git.run(root, "rev-list", "--left-right", "--count", "HEAD...@{u}",
                         check=False).stdout.split()
        if len(counts) == 2:
            out["ahead"], out["behind"] = int(counts[0]), int(counts[1])
    return out


def _count(state: AgentState | str) -> dict | None:
    """The log's count (`protocol.logcount`), with the last event's short id as `log`
    prints it and the phrase `status` shows; None when the state cannot be read."""
    if isinstance(state, str):
        return None
    try:
        log = read_file(os.path.join(state.root, state.store.rel), root=state.root)
    except FileNotFoundError:
        log = b""
    except (OSError, GaspError):  # a link or a FIFO where the log should be: uncommitted says
        return None
    # its valid events, as fold counts them: saved, plus the lines appended since
    saved = log_count(state.root, state.store.rel, log)
    count = LogCount.of(saved.domain, saved.ops, len(state.graph.nodes),
                        (saved.last_id, saved.last_line, saved.last_kind))
    shorts = abbreviate_some(saved.event_ids, [saved.last_id] if saved.last_id else [])
    return dict(count.to_json(shorts.get), text=count.phrase(shorts.get))


def _run(state: AgentState | str) -> dict | None:
    if isinstance(state, str):
        return {"error": state}
    run = state.run
    if run is None:
        return None
    props = state.graph.nodes[run.run_id]["props"]
    meta = props.get("metadata")
    who = meta.get("person") if isinstance(meta, dict) else None
    return {"id": run.run_id, "task": props.get("task"), "goal_id": run.goal_id,
            "person": who if isinstance(who, str) else None}


def _lease(root: str) -> dict:
    try:
        rec = Lease(Path(root)).read()
    except GaspError as exc:
        return {"held": None, "line": str(exc)}
    return dict(lease_json(rec), line=status_line(rec))


def _uncommitted(root: str) -> dict:
    """The work tree's log against HEAD's (the log only grows): events past HEAD's size,
    read from there on (a 100 MB log costs its tail), and whether it still starts with
    HEAD's bytes; when it does not, how many of HEAD's lines it lacks."""
    rel = log_location(root)
    blob = git.run(root, "rev-parse", "-q", "--verify", f"HEAD:./{rel}", check=False)
    blob_id = blob.stdout.strip().decode() if blob.returncode == 0 else None
    size = git.run(root, "cat-file", "-s", blob_id, check=False) if blob_id else None
    committed = int(size.stdout) if size is not None and size.returncode == 0 \
        and size.stdout.strip().isdigit() else 0
    lines, prefix = 0, b""
    try:  # no link followed on the way from the agent root, no FIFO waited on
        with open_file(os.path.join(root, rel), root=root) as fh:
            prefix = fh.read(committed) if committed else b""
            while chunk := fh.read(1 << 20):
                lines += chunk.count(b"\n")
    except FileNotFoundError:
        pass
    except (NotARegularFile, OSError) as exc:
        return {"log": rel, "events": None, "missing": None, "error": str(exc)}
    missing = 0
    if committed and (len(prefix) < committed or git.run(
            root, "hash-object", "--stdin", input=prefix).stdout.strip().decode() != blob_id):
        missing = _missing_lines(root, blob_id, os.path.join(root, rel))
    return {"log": rel, "events": lines, "missing": missing}


def _missing_lines(root: str, blob_id: str, path: str) -> int:
    """How many lines of HEAD's log (blob `blob_id`) the work tree's lacks, counted as a
    multiset (at least 1: its bytes differ from HEAD's)."""
    from collections import Counter

    head = Counter(git.run(root, "cat-file", "blob", blob_id).stdout.splitlines())
    try:
        here = Counter(read_file(path, root=root).splitlines())
    except (FileNotFoundError, OSError):
        here = Counter()
    return max(1, sum((head - here).values()))


def _changed_since(root: str, ts_ms: int) -> str | None:
    """A file of the agent's tree that differs from HEAD and was changed at or after
    `ts_ms` (when the last check ran), or None."""
    proc = git.run(root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--",
                   ".", check=False)
    words = iter(proc.stdout.split(b"\0"))
    top = os.fsencode(git.work_tree_top(root))
    for word in words:
        if len(word) < 4:
            continue
        if word[:1] in (b"R", b"C"):
            next(words, None)  # a rename's source follows
        try:
            mtime_ms = os.lstat(os.path.join(top, word[3:])).st_mtime_ns // 10**6
        except OSError:
            continue  # deleted: when is unknown
        if mtime_ms >= ts_ms:
            return os.fsdecode(word[3:])
    return None


def _wiring(root: str) -> list[dict]:
    try:
        findings = diagnose(Path(root))
    except Exception as exc:  # noqa: BLE001 - status shows what it can
        return [{"level": "error", "what": f"cannot inspect the hooks: {exc}", "fix": None,
                 "topic": "hooks"}]
    return [f.to_json() for f in findings if f.topic in ("hooks", "hooks-path", "driver")]


def _last_check(root: str) -> dict | None:
    last = load(root)
    if last is None:
        return None
    dirs = locate(root)
    head = dirs.head() if dirs is not None else None
    last["at_head"] = isinstance(head, bytes) and head.decode() == last["head"]
    last["changed_since"] = _changed_since(root, last["ts_ms"])
    return last


def render(info: dict) -> str:
    """The human screen of `gather`'s dict."""
    loc, br = info["location"], info["branch"]
    where = {"branch": f"on branch {loc['branch']}, checked out at {loc['path']}",
             "path": f"at {loc['path']} (named by this repository's gasp.state)",
             "folder": f"in the folder {loc['path']} of this project",
             "root": f"at {loc['path']}"}[loc["kind"]]
    lines = [f"agent state {where}"]
    if br["upstream"] is None:
        lines.append(f"branch {br['name'] or '(detached HEAD)'}: no upstream (git gasp sync "
                     "pushes it)")
    elif br["ahead"] == br["behind"] == 0:
        lines.append(f"branch {br['name']}: up to date with {br['upstream']}")
    else:
        lines.append(f"branch {br['name']}: {br['ahead']} ahead, {br['behind']} behind "
                     f"{br['upstream']} (git gasp sync)")
    run = info["run"]
    lines.append("run: none open" if run is None else f"run: cannot tell ({run['error']})"
                 if "error" in run else f"run: {run['id']} open  {run.get('task') or ''}".rstrip()
                 + (f"  (by {run['person']})" if run.get("person") else ""))
    lines.append(f"lease: {info['lease']['line']}")
    if info.get("count"):
        lines.append(f"count: {info['count']['text']}")
    unc = info["uncommitted"]
    if unc.get("error"):
        lines.append(f"log: {unc['error']}")
    elif unc["missing"]:
        lines.append(f"log: {unc['log']} does not extend HEAD's: {unc['missing']} committed "
                     f"line(s) missing from the working tree (git gasp check; `git diff "
                     f"{unc['log']}` shows them)")
    else:
        lines.append(f"log: {unc['events']} line(s) of {unc['log']} not committed"
                     if unc["events"] else f"log: {unc['log']} fully committed")
    for f in info["wiring"]:
        fix = f" (fix: {f['fix']})" if f.get("fix") and f["level"] != "ok" else ""
        lines.append(f"{f['topic']}: {f['level']}: {f['what']}{fix}")
    last = info["last_check"]
    if last is None:
        lines.append("last check: none recorded here (git gasp check)")
    else:
        verdict = "conformant" if last["conformant"] else \
            "NOT conformant (failed: " + ", ".join(map(str, last["failed"])) + ")"
        at = "at HEAD" if last["at_head"] else \
            f"at {(last['head'] or '-')[:12]}, HEAD has moved since (git gasp check)"
        if last["at_head"] and last["changed_since"]:
            at += (f", but the working tree changed since ({last['changed_since']}; "
                   "git gasp check)")
        lines.append(f"last check: {verdict} {at}")

    return "\n".join(lines)
