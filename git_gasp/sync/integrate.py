"""The git steps of `git gasp sync`: fetch the remote branch, integrate it into the
local one (a merge, or a rebase of the local commits, both through the union merge
driver), push without force, and put the branch back where it was.

Every merge and rebase runs with this clone's ``merge.gasp.driver``, or this
installation's when the clone has none (``git -c``), and with ``merge=gasp`` for the
append-only files when ``.gitattributes`` does not say so (``core.attributesFile``:
a copy of the user's own file plus those lines, under ``<gitdir>/gasp/``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from git_gasp.base import git
from git_gasp.base.errors import GaspError
from git_gasp.base.files import SMALL_FILE, atomic_write, read_file, read_text
from git_gasp.merge.driver import disabled, merge_bytes, rule_for
from git_gasp.store import attributes
from git_gasp.store.location import is_state_branch
from git_gasp.sync.remotes import relative_url_config
from git_gasp.sync.state import Session, last_line

# one line of `git push --porcelain`: flag, "from:to", summary (reason)
_PUSH_LINE = re.compile(r"^(?P<flag>[ +\-*!=])\t(?P<refs>[^\t]*)\t(?P<summary>.*)$", re.M)
# rejections that mean "the remote moved or was busy": fetch, integrate and push again
_RETRY = ("non-fast-forward", "fetch first", "stale info", "failed to update ref",
          "cannot lock ref", "failed to lock", "incorrect old value", "is at ")
_NO_REMOTE_REF = ("couldn't find remote ref", "could not find remote ref")
# the config a sync's merge or rebase always runs with: nothing stashed, no recorded
# resolution replayed, no other branch moved by a rebase
_FIXED = ("-c", "rerere.enabled=false", "-c", "merge.autoStash=false",
          "-c", "rebase.autoStash=false", "-c", "rebase.updateRefs=false")


@dataclass
class Pushed:
    """How a push ended: `ok`, or `retry` (the remote moved), else refused (`why`)."""

    ok: bool
    retry: bool = False
    why: str = ""


def driver_config(s: Session, agent_root: Path, log_rel: str) -> list[str]:
    """The ``-c`` options that make sure this sync's merges use the driver (and, on a
    state branch beside a project, that the project's own git hooks do not run)."""
    out = list(_FIXED)
    if is_state_branch(agent_root):
        out += [*git.NO_HOOKS, *relative_url_config(agent_root)]
    if git.config_get(s.top, f"merge.{attributes.DRIVER}.driver") is None:
        out += ["-c", f"merge.{attributes.DRIVER}.name={attributes.DRIVER_NAME}",
                "-c", f"merge.{attributes.DRIVER}.driver={attributes.driver_command()}"]
    prefix = os.path.relpath(agent_root, s.top).replace(os.sep, "/")
    prefix = "" if prefix == "." else prefix + "/"
    log_path = prefix + log_rel
    if git.check_attr(s.top, "merge", [log_path]).get(log_path) != attributes.DRIVER:
        out += ["-c", f"core.attributesFile={_attributes_file(s, prefix, agent_root)}"]
    return out


def _attributes_file(s: Session, prefix: str, agent_root: Path) -> Path:
    """``<gitdir>/gasp/sync.attributes``: the user's attributes file, then ours."""
    own = git.out(s.top, "config", "--path", "--get", "core.attributesFile", check=False)
    if not own:
        base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"),
                                                                 ".config")
        own = os.path.join(base, "git", "attributes")
    try:
        data = read_file(own, limit=SMALL_FILE)
    except OSError:
        data = b""
    if data and not data.endswith(b"\n"):
        data += b"\n"
    lines = [line for line in attributes.attribute_lines(agent_root)
             if f"merge={attributes.DRIVER}" in line]
    ours = "".join(f"{prefix}{line.lstrip('/')}\n" for line in lines)
    path = s.state_dir / "sync.attributes"
    atomic_write(path, data + ours.encode(), root=s.gdir)
    return path


def fetch(s: Session, remote: str, branch: str, timeout: float | None) -> tuple[str | None,
                                                                                  str | None]:
    """Fetch ``refs/heads/BRANCH`` of `remote`: (its commit id or None when the remote has
    no such branch, None) or (None, why the fetch failed)."""
    code, text = s.git("fetch", "--no-tags", "--no-recurse-submodules", "--quiet", remote,
                       f"refs/heads/{branch}", timeout=timeout)
    if code != 0:
        if any(m in text for m in _NO_REMOTE_REF):
            return None, None
        return None, f"git fetch {remote} failed: {last_line(text)}"
    sha = _fetch_head(s.gdir)
    if sha is None:
        return None, f"git fetch {remote} wrote no FETCH_HEAD"
    return sha, None


def _fetch_head(gdir: Path) -> str | None:
    try:
        first = read_text(gdir / "FETCH_HEAD", errors="replace")
    except OSError:
        return None
    sha = first.split("\t", 1)[0].strip()
    return sha if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", sha) else None


def is_ancestor(top: Path, a: str, b: str) -> bool:
    return git.ok(top, "merge-base", "--is-ancestor", a, b)


def merge(s: Session, onto: str, message: str) -> str | None:
    """Merge commit `onto` into the branch; None, or why it did not go through. A
    merge that stopped on conflicted paths is left in progress (`conflicted_paths`
    names them; git's own commands finish or abort it); any other failure is aborted.

    The append-only files are merged here, not by the driver as a process git starts
    (an interpreter start per merge, a fifth of a sync's attempt): git merges with the
    driver set to fail, and when the only paths it left are append-only ones that
    the driver's rules merge cleanly, their results are staged and committed here.
    Anything else (another conflicted path, a conflict within those files, a delete, a
    link) aborts that and merges again with the driver itself, so the outcome is the
    driver's; a criss-cross merge (several merge bases, which the driver merges too)
    goes to the driver at once."""
    args = ("merge", "--no-edit", "--no-ff", "--no-autostash", "-m", message, onto)
    bases = git.run(s.top, "merge-base", "--all", "HEAD", onto, check=False).stdout.split()
    fast = not disabled() and len(bases) == 1  # a criss-cross: the driver merges the bases
    code, text = s.git(*(("-c", f"merge.{attributes.DRIVER}.driver=false") if fast else ()),
                       *args)
    if code == 0:
        return None
    if fast and (s.gdir / "MERGE_HEAD").exists():
        staged = _merge_append_only(s)
        if staged is not None and _commit_merge(s, message) is None:
            return None
        s.git("merge", "--abort")
        code, text = s.git(*args)
        if code == 0:
            return None
    why = _conflict(text) or last_line(text)
    if (s.gdir / "MERGE_HEAD").exists() and not conflicted_paths(s):
        s.git("merge", "--abort")
    return why


def _merge_append_only(s: Session) -> list[str] | None:
    """Stage the driver's clean merge of every path the merge left, when all of them are
    append-only files (``merge=gasp``, both sides changed); their paths, else None."""
    proc = git.run(s.top, "ls-files", "-u", "-z", check=False)
    stages: dict[str, dict[int, tuple[str, str]]] = {}
    for entry in proc.stdout.split(b"\0") if proc.returncode == 0 else ():
        meta, _, name = entry.partition(b"\t")
        fields = meta.split()
        if len(fields) == 3 and name:
            stages.setdefault(os.fsdecode(name), {})[int(fields[2])] = (
                fields[0].decode(), fields[1].decode())
    if not stages:
        return None
    attr = git.run(s.top, *s.config, "check-attr", "-z", "merge", "--", *stages, check=False)
    values = os.fsdecode(attr.stdout).split("\0")
    merge_attr = {values[i]: values[i + 2] for i in range(0, len(values) - 2, 3)}
    merged = {}
    for path, st in stages.items():
        rule = rule_for(path)
        if merge_attr.get(path) != attributes.DRIVER or rule == "text" or not {2, 3} <= set(st) \
                or any(mode not in ("100644", "100755") for mode, _sha in st.values()):
            return None  # the driver's (or git's) to merge: a link, a delete, a text file
        blobs = [_blob(s, st[k][1]) if k in st else b"" for k in (1, 2, 3)]
        if None in blobs:
            return None
        result = merge_bytes(rule, *blobs, 7)
        if not result.clean:
            return None
        merged[path] = (st[2][0], result.data)
    for path, (mode, data) in merged.items():
        made = git.run(s.top, "hash-object", "-w", "--no-filters", "--stdin", input=data,
                       check=False)
        sha = made.stdout.decode().strip()
        if made.returncode != 0 or s.git("update-index", "--cacheinfo",
                                         f"{mode},{sha},{path}")[0] != 0:
            return None
    if s.git("--literal-pathspecs", "checkout", "--", *merged)[0] != 0:  # through git's filters
        return None
    return list(merged)


def _blob(s: Session, sha: str) -> bytes | None:
    proc = git.run(s.top, "cat-file", "blob", sha, check=False)
    return proc.stdout if proc.returncode == 0 else None


def _commit_merge(s: Session, message: str) -> str | None:
    """Commit the merge in progress with `message` (its hooks run as for any commit);
    None, or why not."""
    code, text = s.git("commit", "--quiet", "--no-edit", "-m", message)
    return None if code == 0 else (_conflict(text) or last_line(text))


def rebase(s: Session, onto: str) -> str | None:
    """Replay the local commits onto `onto`; None, or why not. A rebase stopped on
    conflicted paths is left in progress, any other failure aborted (as for `merge`)."""
    code, text = s.git("rebase", "--no-autostash", "--no-fork-point",
                       onto)
    if code == 0:
        return None
    why = _conflict(text) or last_line(text)
    if ((s.gdir / "rebase-merge").is_dir() or (s.gdir / "rebase-apply").is_dir()) \
            and not conflicted_paths(s):
        s.git("rebase", "--abort")
    return why


def conflicted_paths(s: Session) -> list[str]:
    """The work tree's unmerged paths (a merge or rebase stopped on them)."""
    proc = git.run(s.top, "diff", "--name-only", "--diff-filter=U", "-z", check=False)
    if proc.returncode != 0:
        return []
    return [os.fsdecode(p) for p in proc.stdout.split(b"\0") if p]


def in_progress(s: Session) -> str | None:
    """``merge`` or ``rebase`` when one is in progress in this clone, else None."""
    if (s.gdir / "MERGE_HEAD").exists():
        return "merge"
    if (s.gdir / "rebase-merge").is_dir() or (s.gdir / "rebase-apply").is_dir():
        return "rebase"
    return None


def abort(s: Session, op: str) -> str | None:
    """Abort the merge or rebase in progress; None, or git's reason it could not."""
    code, text = s.git(op, "--abort")
    return None if code == 0 else last_line(text)


def fast_forward(s: Session, onto: str) -> str | None:
    code, text = s.git("merge", "--ff-only", "--no-autostash", onto)
    return None if code == 0 else last_line(text)


def _conflict(text: str) -> str | None:
    """The reason a merge or rebase stopped: its first conflict, else the first line a
    hook of ours (the guard) or the driver printed; None: git's last line says it."""
    lines = [x.strip() for x in text.splitlines() if x.startswith("CONFLICT")]
    if not lines:
        ours = [x.strip() for x in text.splitlines() if x.startswith("git gasp")]
        return ours[0] if ours else None
    more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
    return f"merge conflict: {lines[0]}{more}"


class BranchMoved(GaspError):
    """The branch moved during the sync, past what the sync put it at (someone
    committed): putting it back would drop that commit, so it is left where it is."""


def restore(s: Session, orig: str) -> str | None:
    """Put the branch, index and work tree back at `orig` (`git reset --keep`: nothing
    uncommitted is overwritten); None, or why it could not. Only the sync's own result
    (`s.made`) is moved back: BranchMoved when a commit was made on the branch meanwhile."""
    head = git.resolve_commit(s.top, "HEAD")
    if head == orig:
        return None
    if s.made is not None and head != s.made:
        raise BranchMoved(f"the branch moved to {(head or '?')[:12]} during the sync (it had "
                          f"merged to {s.made[:12]}): it is left there so no commit is lost; "
                          "nothing was pushed, sync again")
    code, text = s.git("reset", "--keep", "--quiet", orig)
    return None if code == 0 else last_line(text)


def remote_moved(s: Session, remote: str, branch: str, fetched: str | None,
                 timeout: float | None) -> bool:
    """True when `remote`'s `branch` is no longer the commit fetched (``ls-remote``, one
    round trip): a push now would lose the race, after the remote's pre-receive hook
    ran for nothing. False when it cannot tell (the push then says)."""
    proc = git.run(s.top, *s.config, "ls-remote", "--heads", remote, f"refs/heads/{branch}",
                   check=False, timeout=timeout)
    if proc.returncode != 0:
        return False
    now = proc.stdout.split(b"\t", 1)[0].strip().decode() or None
    return now != fetched


_CHECKED_OUT = ("branch is currently checked out", "refusing to update checked out branch")


def push(s: Session, remote: str, sha: str, ref: str, timeout: float | None) -> Pushed:
    """``git push REMOTE SHA:REF``, never forced; how it ended."""
    code, text = s.git("push", "--porcelain", "--no-follow-tags", "--recurse-submodules=no",
                       remote, f"{sha}:{ref}", timeout=timeout)
    lines = [m for m in _PUSH_LINE.finditer(text) if m.group("refs").endswith(":" + ref)]
    remote_says = [x[len("remote: "):].strip() for x in text.splitlines()
                   if x.startswith("remote: ") and "git gasp" in x]
    if any(said in text for said in _CHECKED_OUT):
        return Pushed(False, why=f"{remote} is a non-bare repository with "
                      f"{ref.removeprefix('refs/heads/')} checked out, which git will not "
                      "update; share through a bare repository (git clone --bare) or set "
                      "receive.denyCurrentBranch=updateInstead there")
    if lines:
        flag, summary = lines[0].group("flag"), lines[0].group("summary")
        if flag in (" ", "*", "="):
            return Pushed(True)
        if flag == "!":
            retry = any(r in summary for r in _RETRY) and "hook declined" not in summary
            why = "; ".join(remote_says) if remote_says else f"{ref}: {summary}"
            return Pushed(False, retry=retry, why=why)
    if code == 0:
        return Pushed(True)
    # no ref status at all: the remote could not be reached (or git failed early)
    return Pushed(False, retry=True, why=f"git push {remote} failed: {last_line(text)}")
