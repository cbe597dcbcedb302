"""`git gasp forget`'s rewrite: a committed secret replaced by its redaction token in
every version of every file of the state branch (and in commit messages), through
git-filter-repo, the well-kept tool for history rewrites.

The replacement is the redaction token the redactor gives the secret
(``[REDACTED:kind:hash8]``, `redact.scan.fingerprint`), the same in every version, so
each version of an append-only file still starts with the one before it: check 4 holds
on the rewritten history. The secret is replaced as written and as JSON escapes it
(a log line holds it JSON-encoded). Forgetting is recorded by a maintenance
``state.ops_applied`` event naming the fingerprints (`forget_ops`, `forgotten_in`),
which is also what a server that allows forget-rewrites (``gasp.allowForget``) looks
for in the new tip.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from git_gasp.base import git
from git_gasp.base.errors import GaspError
from git_gasp.redact.patterns import TOKEN_PREFIX, TOKEN_RE
from git_gasp.redact.scan import fingerprint_of, scan_bytes

_MARK = b'"source":"git gasp forget"'  # what a forget event's line holds, canonical
FORGOTTEN = "forgotten"  # the prop of the forget event's node naming the fingerprints
SOURCE = "git gasp forget"


class ForgetError(GaspError):
    """The secret cannot be forgotten as asked."""


def variants(secret: str) -> list[bytes]:
    """The byte strings `secret` is stored as: plain, and JSON-escaped both ways."""
    forms = [secret, json.dumps(secret, ensure_ascii=False)[1:-1],
             json.dumps(secret)[1:-1]]
    return list(dict.fromkeys(f.encode("utf-8", "surrogateescape") for f in forms))


def token(fp: str) -> bytes:
    """The redaction token of fingerprint `fp`."""
    return f"{TOKEN_PREFIX}{fp}]".encode()


def secret_for_pattern(pattern: str) -> tuple[str, str]:
    """(fingerprint, secret) for a literal secret typed by the user."""
    if not pattern.strip():
        raise ForgetError("PATTERN must be the secret itself (or use --fingerprint)")
    return fingerprint_of(pattern), pattern


def find_secret(root: Path, branch: str, fp: str) -> str:
    """The secret whose fingerprint is `fp` in some version of a file of `branch`
    (newest first); ForgetError when no version holds one."""
    listing = git.run(root, "rev-list", "--objects", branch).stdout.decode(
        "utf-8", "surrogateescape").splitlines()
    blobs = [line.split(" ", 1)[0] for line in listing if " " in line]
    if not blobs:
        raise ForgetError(f"{branch} has no files")
    batch = git.run(root, "cat-file", "--batch", input="\n".join(blobs).encode() + b"\n").stdout
    pos = 0
    while pos < len(batch):
        header_end = batch.index(b"\n", pos)
        _sha, kind, size = batch[pos:header_end].split()
        start = header_end + 1
        end = start + int(size)
        if kind == b"blob":
            for secret in scan_bytes(batch[start:end]):
                if secret.fingerprint == fp:
                    return secret.secret
        pos = end + 1
    raise ForgetError(f"no version of a file of {branch} holds a secret with fingerprint "
                      f"{fp} (`git gasp check` and the guard print fingerprints)")


def filter_repo() -> str:
    """The directory of the ``git-filter-repo`` program (installed with git-gasp)."""
    here = os.path.dirname(sys.executable)
    found = shutil.which("git-filter-repo", path=os.pathsep.join(
        [here, os.environ.get("PATH", "")]))
    if found is None:
        raise ForgetError("git-filter-repo is not installed: `pip install git-filter-repo` "
                          "(a dependency of git-gasp)")
    return os.path.dirname(found)


def rewrite(top: Path, refs: list[str], secrets: dict[str, str]) -> None:
    """Replace each secret (fingerprint -> secret) by its token in every blob and commit
    message reachable from `refs`, in the repository whose work tree top is `top`."""
    pairs = [(form, token(fp)) for fp, secret in secrets.items() for form in variants(secret)]
    code = "".join(f"data = data.replace({old!r}, {new!r})\n" for old, new in pairs)
    blob = f"data = blob.data\n{code}blob.data = data\n"
    message = f"data = message\n{code}return data\n"
    ran = Path(git.common_dir(top), "filter-repo", "already_ran")
    if ran.exists():  # a previous rewrite's marker makes filter-repo ask a question
        ran.unlink()
    path = filter_repo() + os.pathsep + os.environ.get("PATH", "")
    git.run(top, "filter-repo", "--force", "--quiet", "--refs", *refs,
            "--blob-callback", blob, "--message-callback", message, env={"PATH": path})


def drop_old_objects(top: Path) -> None:
    """Expire every reflog and prune unreachable objects, so the old versions leave
    this repository's object store."""
    git.run(top, "reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
    git.run(top, "gc", "--prune=now", "--quiet")


def forget_ops(node_id: str, fingerprints: list[str]) -> list[dict]:
    """The ops of the maintenance event that records what was forgotten: the tokens
    that replaced the secrets (a token passes the redactor as it is; a bare
    ``kind:hash8`` would read as an assignment to it)."""
    tokens = [token(fp).decode() for fp in fingerprints]
    return [{"CreateNode": {"id": node_id, "kind": "observation", "props": {
        "summary": f"forgotten by a history rewrite: {', '.join(tokens)}",
        "source": SOURCE, FORGOTTEN: tokens}}}]


def forgotten_in(event: dict) -> list[str]:
    """The fingerprints a parsed log line's forget event names ([] for any other)."""
    if event.get("kind") != "state.ops_applied" or event.get("causation_id") is not None:
        return []
    out: list[str] = []
    for op in event.get("payload") or ():
        body = op.get("CreateNode") if isinstance(op, dict) else None
        props = body.get("props") if isinstance(body, dict) else None
        if isinstance(props, dict) and props.get("source") == SOURCE \
                and isinstance(props.get(FORGOTTEN), list):
            out += [t[len(TOKEN_PREFIX):-1] for t in props[FORGOTTEN]
                    if isinstance(t, str) and TOKEN_RE.fullmatch(t)]
    return out


def forgotten_fingerprints(log: bytes) -> set[str]:
    """The fingerprints the forget events of the log `log` name."""
    found: set[str] = set()
    for line in log.split(b"\n"):
        if _MARK not in line:
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            found.update(forgotten_in(event))
    return found


def upstream_forgot(root: Path, log_rel: str) -> tuple[str, list[str]] | None:
    """(upstream, fingerprints) when the upstream of the branch checked out at `root`
    was rewritten by a `git gasp forget` this clone has not made: its log names
    fingerprints forgotten that the local log does not, and the local branch is not
    part of its history. None otherwise (no upstream, a fast-forward, git failing)."""
    proc = git.run(root, "rev-parse", "--abbrev-ref", "@{upstream}", check=False)
    upstream = proc.stdout.decode("utf-8", "surrogateescape").strip()
    if proc.returncode != 0 or not upstream:
        return None
    if git.run(root, "merge-base", "--is-ancestor", "HEAD", upstream,
               check=False).returncode == 0:
        return None
    theirs = git.run(root, "show", f"{upstream}:./{log_rel}", check=False)
    if theirs.returncode != 0:
        return None
    ours = git.run(root, "show", f"HEAD:./{log_rel}", check=False)
    new = forgotten_fingerprints(theirs.stdout) - (
        forgotten_fingerprints(ours.stdout) if ours.returncode == 0 else set())
    return (upstream, sorted(new)) if new else None
