"""The seven checks of GASP Part VI. Each takes an AgentRepo and returns a CheckResult.

Checks 1, 2, 3, 5, 6 and 7 report what one pass over the log found (``logcheck``:
the per-event rules of ``rules`` fed line by line, resumed from a saved state of a
verified prefix when check 4's facts allow, so a re-check reads only new lines); given
no `LogAnalysis`, a check makes a cold one. Every check fails closed: what it cannot
examine is a failure, not a pass.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from git_gasp.base.agentconfig import parse_config
from git_gasp.base.errors import FormatError, NotAGitRepo
from git_gasp.base.files import open_file
from git_gasp.conformance.forked import Forked
from git_gasp.conformance.history.cache import walk_is_short
from git_gasp.conformance.history.check import check_history
from git_gasp.conformance.history.tipfacts import PendingTip, TipFacts
from git_gasp.conformance.logcheck import LogAnalysis, analyze_log
from git_gasp.conformance.packs import load_vocabulary
from git_gasp.conformance.report import CheckResult
from git_gasp.conformance.secrets_check import report_secrets
from git_gasp.odb.gitdirs import locate
from git_gasp.odb.repo import open_repo
from git_gasp.protocol.graph import Graph
from git_gasp.protocol.identity import identity_hash, normalize_declared
from git_gasp.protocol.skill import SkillError, parse_skill
from git_gasp.store.agent import MANIFEST, AgentRepo
from git_gasp.store.agentfs import AgentFileError, file_paths, read_regular

Progress = Callable[[int, int], None]

NAMES = {
    1: "envelope round-trip",
    2: "replay",
    3: "vocabulary",
    4: "append-only in git",
    5: "causation integrity",
    6: "restore",
    7: "domain/ops consistency",
}


def _result(number: int) -> CheckResult:
    return CheckResult(number, NAMES[number])


def analysis_of(repo: AgentRepo, *, fixture: bool = False) -> LogAnalysis | None:
    """The cold analysis of `repo`'s log, made once per repo (None: the log is unreadable)."""
    key = ("log_analysis", fixture)
    if key not in repo.extra:
        repo.extra[key] = analyze_log(repo, load_vocabulary(repo.root), fixture=fixture)
    return repo.extra[key]


def _log_unusable(repo: AgentRepo, res: CheckResult, log: LogAnalysis | None) -> bool:
    """Record why the log cannot be examined; True when the check must stop here."""
    if repo.log_error is not None or log is None:
        res.fail(repo.log_error or "the log cannot be read", path=repo.log_rel)
        return True
    errors = log.findings.errors
    if errors:
        bad = len(errors)
        res.fail(
            f"{bad} line{'s' * (bad != 1)} of the log are not valid events (see check 1); "
            "this check cannot be verified on the rest",
            path=repo.log_rel,
            line=errors[0][0],
        )
    return False


def _fail_lines(res: CheckResult, repo: AgentRepo, found: list[tuple[int, str]]) -> None:
    for line, message in found:
        res.fail(message, path=repo.log_rel, line=line)


# --- 1 -----------------------------------------------------------------------
def check_envelope(repo: AgentRepo, log: LogAnalysis | None = None) -> CheckResult:
    """Every line parses to the envelope and re-serializes structurally equal."""
    res = _result(1)
    log = log if log is not None else analysis_of(repo)
    if repo.log_error is not None or log is None:
        res.fail(repo.log_error or "the log cannot be read", path=repo.log_rel)
        return res
    _fail_lines(res, repo, log.findings.errors)
    _fail_lines(res, repo, log.findings.roundtrip)
    if not log.findings.line_count:
        res.notes.append("the log is empty")
    res.notes.extend(log.notes)
    return res


# --- 2 -----------------------------------------------------------------------
def check_replay(repo: AgentRepo, log: LogAnalysis | None = None) -> CheckResult:
    """The log folds without a malformed op, and every snapshot equals its prefix fold.

    An op naming a missing node is a note (a failure under --strict)."""
    res = _result(2)
    log = log if log is not None else analysis_of(repo)
    if _log_unusable(repo, res, log):
        return res
    assert log is not None
    for line, missing_node, message in log.findings.skips:
        # An op naming a node never created is skipped and noted, as the reference
        # checker does (a failure only under --strict); a malformed op is a failure.
        record = res.soft_fail if missing_node else res.fail
        record(message, path=repo.log_rel, line=line)
    res.failures.extend(log.snapshots.failures)
    res.soft.extend(log.snapshots.soft)
    res.notes.extend(log.snapshots.notes)
    return res


# --- 3 -----------------------------------------------------------------------
def check_vocabulary(repo: AgentRepo, log: LogAnalysis | None = None,
                     packs: CheckResult | None = None) -> CheckResult:
    """Every CreateNode.kind and CreateRelation.rel is baseline or declared by a pack.

    `packs`: the result `load_vocabulary` recorded pack failures in (else loaded here)."""
    res = packs if packs is not None else _result(3)
    if packs is None:
        load_vocabulary(repo.root, res)
    log = log if log is not None else analysis_of(repo)
    if _log_unusable(repo, res, log):
        return res
    assert log is not None
    _fail_lines(res, repo, log.findings.vocabulary)
    return res


# --- 4 -----------------------------------------------------------------------


def check_append_only(repo: AgentRepo, *, use_cache: bool = True,
                      progress: Progress | None = None) -> CheckResult:
    """Walk the git history: append-only paths only ever grow at the end."""
    return append_only(repo, use_cache=use_cache, progress=progress)[0]


def append_only(repo: AgentRepo, *, use_cache: bool = True, progress: Progress | None = None
                ) -> tuple[CheckResult, TipFacts | None]:
    """Check 4, and what it proved about the log at the tip (a `TipFacts`, or None).

    `progress` (commits walked, commits to walk) is handed to the walk when it takes
    one (``check_history(progress=...)``)."""
    res = _result(4)
    try:
        hist = check_history(repo.root, use_cache=use_cache, log_path=repo.log_rel.encode(),
                             progress=progress)
    except NotAGitRepo as exc:
        res.fail(f"{exc}: the log must be committed to git (conformance rule 1)")
        return res, None
    except Exception as exc:  # noqa: BLE001 - any error during the walk fails closed
        res.fail(f"the history walk failed: {type(exc).__name__}: {exc}")
        return res, None
    res.failures.extend(hist.failures)
    res.notes.extend(hist.notes)
    res.notes.append(f"{hist.commits_walked} commit{'s' * (hist.commits_walked != 1)} walked"
                     + (f", {hist.commits_cached} verified before (cache)"
                        if hist.commits_cached else ""))
    return res, hist.tip


# --- 5 -----------------------------------------------------------------------
def check_causation(repo: AgentRepo, log: LogAnalysis | None = None) -> CheckResult:
    """Unique ids; causation names an earlier event; roots are *.created / *.started / ops."""
    res = _result(5)
    log = log if log is not None else analysis_of(repo)
    if _log_unusable(repo, res, log):
        return res
    assert log is not None
    _fail_lines(res, repo, log.findings.causation)
    return res


# --- 6 -----------------------------------------------------------------------
FIXTURE_FACTS = (
    "goal_retry exists and is the target of an advances edge from patch_9",
    "patch_9 has status Promoted and references_commit abc1234",
    "patch_9 --validated_by--> eval_5, and eval_5.status = Passed",
    "patch_9 --approved_by--> decision_3, and decision_3.status = Approved",
)


def fixture_facts(graph: Graph) -> list[str]:
    """The Part VI fixture facts that the graph does NOT reproduce."""
    def status(node_id: str) -> object:
        return graph.nodes.get(node_id, {}).get("props", {}).get("status")

    patch = graph.nodes.get("patch_9", {}).get("props", {})
    ok = (
        "goal_retry" in graph.nodes and graph.has_relation("patch_9", "advances", "goal_retry"),
        patch.get("status") == "Promoted" and patch.get("references_commit") == "abc1234",
        graph.has_relation("patch_9", "validated_by", "eval_5") and status("eval_5") == "Passed",
        graph.has_relation("patch_9", "approved_by", "decision_3")
        and status("decision_3") == "Approved",
    )
    return [fact for fact, good in zip(FIXTURE_FACTS, ok, strict=True) if not good]


def _check_identity(repo: AgentRepo, res: CheckResult) -> None:
    ident = repo.location("identity")
    try:
        files = file_paths(repo.root, ident)
    except (AgentFileError, OSError) as exc:
        res.fail(f"identity cannot be loaded: {exc}", path=ident)
        return
    if not files:
        res.fail("identity/ holds no files", path=ident)
        return
    if repo.manifest is None:  # unreadable or missing: that failure is reported already
        return
    if repo.manifest.identity_hash is None:  # the current reference fails closed on this
        res.fail("AGENT.md declares no identity_hash, so identity/ cannot be verified: add "
                 "`identity_hash: <digest>` (`git gasp identity hash` prints it)", path=MANIFEST)
        return
    declared = normalize_declared(repo.manifest.identity_hash)
    if declared is None:
        res.fail("identity_hash is not a SHA-256 hex digest", path=MANIFEST)
        return
    # The hash is defined over paths as the spec recipe prints them: identity/<file>.
    prefix = ident.encode()
    entries = [(b"identity" + rel[len(prefix):], _read(p)) for rel, p in files]
    actual = identity_hash(entries)
    if actual != declared:
        res.fail(f"identity_hash in AGENT.md is {declared[:12]}… but identity/ hashes to "
                 f"{actual}; if the identity change was approved, record it in the same commit "
                 "that sets this hash in AGENT.md", path=MANIFEST)


def _read(path: str) -> bytes:
    with open_file(path) as f:
        return f.read()


def _check_skills(repo: AgentRepo, res: CheckResult) -> None:
    base = str(Path(repo.root, "skills"))
    if not Path(base).is_dir():
        return
    for name in sorted(os.listdir(base)):
        if not Path(base, name).is_dir():
            continue
        rel = f"skills/{name}/SKILL.md"
        try:
            parse_skill(read_regular(repo.root, rel))
        except (AgentFileError, SkillError) as exc:
            res.fail(f"skill cannot be loaded: {exc}", path=rel)


def _check_config(repo: AgentRepo, res: CheckResult) -> None:
    rel = ".agent/config.toml"
    if not Path(repo.root, rel).exists():
        res.notes.append(".agent/config.toml is missing; restore binds no executor")
        return
    try:
        parse_config(read_regular(repo.root, rel), "executor binding")
    except AgentFileError as exc:
        res.fail(f"executor binding does not parse: {exc}", path=rel)
    except FormatError as exc:
        res.fail(str(exc), path=rel)


def check_restore(repo: AgentRepo, *, fixture: bool = False,
                  log: LogAnalysis | None = None) -> CheckResult:
    """Manifest and identity present (hash verified), skills load, the log folds; a
    secret in a state file is a soft finding (`secrets_check`)."""
    res = _result(6)
    if repo.manifest_error is not None:
        res.fail(repo.manifest_error, path=MANIFEST)
    _check_identity(repo, res)
    _check_skills(repo, res)
    _check_config(repo, res)
    report_secrets(repo, res)
    log = log if log is not None else analysis_of(repo, fixture=fixture)
    if _log_unusable(repo, res, log):
        return res
    assert log is not None
    if log.findings.skips:
        res.notes.append(f"{len(log.findings.skips)} op(s) skipped by the fold (see check 2)")
    if fixture:
        graph = log.graph if log.graph is not None else analysis_of(repo, fixture=True).graph
        for fact in fixture_facts(graph or Graph()):
            res.fail(f"fixture fact not reproduced: {fact}", path=repo.log_rel)
    return res


# --- 7 -----------------------------------------------------------------------
def check_pairing(repo: AgentRepo, log: LogAnalysis | None = None) -> CheckResult:
    """Each entity-creating event has exactly one matching ops pair; ops never chain to ops."""
    res = _result(7)
    log = log if log is not None else analysis_of(repo)
    if _log_unusable(repo, res, log):
        return res
    assert log is not None
    _fail_lines(res, repo, log.findings.pairing)
    return res


def _walk_is_short(root: str | os.PathLike) -> bool:
    """True when check 4's cache already covers HEAD or its parents (a re-check): then
    the walk runs here, not in a forked child, whose start costs more than it saves."""
    dirs = locate(str(root))
    head = dirs.head() if dirs is not None else None
    return isinstance(head, bytes) and walk_is_short(dirs.commondir(), dirs.objects_dir(), head)


def _pending_tip(repo: AgentRepo, walk) -> PendingTip | None:
    """Check 4's facts to come, keyed where the walk will key them (None outside git)."""
    try:
        dirs, prefix = open_repo(repo.root)  # no object store opened
    except (NotAGitRepo, OSError):
        return None
    with dirs:
        common = dirs.commondir()
    return PendingTip(common, prefix, lambda: walk.result()[1])


def run_all(repo: AgentRepo, *, fixture: bool = False, use_cache: bool = True,
            strict: bool = False, progress: Progress | None = None,
            meanwhile: Callable[[], None] | None = None) -> list[CheckResult]:
    """Run the seven checks (check 4 first: the others resume from a saved state of the
    log only as far as it proved the log extends it); `strict` turns the soft notes
    into failures. Check 4's walk runs in a forked child where it can (`conformance.forked`),
    beside the log pass; `meanwhile` runs once beside it (else first); what it raises
    stops the check."""
    packs = _result(3)
    def check4() -> tuple[CheckResult, TipFacts | None]:
        try:
            return append_only(repo, use_cache=use_cache, progress=progress)
        finally:  # in a child, the one who drew the progress line wipes it
            clear = getattr(progress, "clear", None)
            if clear is not None:
                clear()

    walk = Forked(check4, fork=not (use_cache and _walk_is_short(repo.root)))
    if not walk.forked:  # one core: check 4 first, then the log pass resumes by its facts
        if meanwhile is not None:
            meanwhile()
        append_res, tip = walk.result()
        vocab = load_vocabulary(repo.root, packs)
        log = analyze_log(repo, vocab, tip=tip if use_cache else None, fixture=fixture)
    else:  # the walk takes a core of its own; the log pass waits for it only if it must
        try:
            if meanwhile is not None:
                meanwhile()
            vocab = load_vocabulary(repo.root, packs)
            pending = _pending_tip(repo, walk) if use_cache else None
            log = analyze_log(repo, vocab, tip=pending, fixture=fixture)
        except BaseException:
            walk.cancel()
            raise
        append_res, _tip = walk.result()
    results = [
        check_envelope(repo, log),
        check_replay(repo, log),
        check_vocabulary(repo, log, packs),
        append_res,
        check_causation(repo, log),
        check_restore(repo, fixture=fixture, log=log),
        check_pairing(repo, log),
    ]
    if strict:
        for res in results:
            res.harden()
    return results
