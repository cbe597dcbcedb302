"""Why a commit is refused: the rules' names, the fix each one suggests, and the
report the hook prints."""

from __future__ import annotations

from git_gasp.base.record import Record

ONE_PARENT = "append-only, one-parent rule"
MERGE_RULE = "append-only, merge rule"
CHECK1, CHECK5, CHECK7 = "check 1, envelope", "check 5, causation", "check 7, pairing"
LOCAL_ONLY = "local-only file"
SECRET_RULE = "secret"
SECRET_FIX = ("a secret must never enter the history: remove it from {path} and `git add` "
              "it again (once committed, `git gasp forget --fingerprint {fingerprint}` "
              "rewrites it out of every version); for a false positive, add the line "
              "`{fingerprint}  # why` to .agent/secrets-allow and `git add` that")

FIXES = {
    ONE_PARENT: "append-only files may only grow at the end: put the committed lines back "
                "as they were (`git show HEAD:{path}` has them) and append a correcting "
                "event instead",
    MERGE_RULE: "the merge result must start with the lines its parents share and keep every "
                "other line of each parent (in any order): redo the "
                "merge with the GASP merge driver (`git gasp install-hooks` registers it), "
                "or add the missing lines back",
    CHECK1: "each appended line must be one event envelope (id, schema_version, ts_ms, "
            "actor, kind, payload, causation_id, correlation_id) ending in a newline; fix "
            "or remove the line in the file, then `git add` it again",
    CHECK5: "event ids must be new, and causation_id must name an earlier event (only "
            "*.created, *.started and ops-only events may have none); fix the line and "
            "`git add` it again",
    CHECK7: "record each entity-creating event together with exactly one state.ops_applied "
            "event whose causation_id names it and whose CreateNode creates its payload.id "
            "(same kind and status); ops events name their domain event, never another ops "
            "event",
    LOCAL_ONLY: "the lease and .agent/HEAD are machine-local (spec Part I): unstage it with "
                "`git rm --cached {path}` and keep it in .gitignore (`git gasp init` lists it)",
}
DELETED_FIX = ("append-only files may never be removed: restore it with "
                "`git restore --staged --worktree --source=HEAD -- {path}`")


class Rejection(Record):
    """One reason the commit is refused (`path` relative to the work tree top)."""

    FIELDS = ("path", "line", "rule", "message", "fix")

    def __init__(self, path: str, line: int | None, rule: str, message: str,
                 fix: str) -> None:
        self.path, self.line, self.rule, self.message, self.fix = path, line, rule, message, fix

    def to_text(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: [{self.rule}] {self.message}"


def report(rejections: list[Rejection], limit: int = 50, hook: str = "pre-commit") -> str:
    """The text printed when the commit is refused: each problem, then each fix once."""
    n = len(rejections)
    ordered = sorted(rejections, key=lambda r: (r.path, r.line or 0))
    what = "merge commit" if hook == "pre-merge-commit" else "commit"
    kinds = {"local-only" if r.rule == LOCAL_ONLY else "state" if r.rule == SECRET_RULE
             else "append-only" for r in rejections}
    files = " and ".join(k for k in ("append-only", "local-only", "state") if k in kinds)
    lines = [f"git gasp: {hook}: {what} refused: {n} problem{'s' * (n != 1)} in GASP "
             f"{files} files"]
    lines += [r.to_text() for r in ordered[:limit]]
    if n > limit:
        lines.append(f"... and {n - limit} more")
    fixes: dict[str, str] = {}
    for r in ordered:
        fixes.setdefault(r.fix, r.rule)
    lines += [f"fix ({rule}): {fix}" for fix, rule in fixes.items()]
    if hook == "pre-merge-commit":
        lines.append("(the merge is left uncommitted: fix the files, `git add` them and "
                     "`git commit`, or `git merge --abort`; `git merge --no-verify` skips "
                     "the guard)")
    else:
        lines.append("(the guard checks only what this commit adds; `git gasp check` checks "
                     "the whole repo; `git commit --no-verify` skips the guard)")
    return "\n".join(lines)
