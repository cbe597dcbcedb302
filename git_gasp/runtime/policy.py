"""Policy gates: Allow / RequireApproval / Deny on node and relation creation and on
patch promotion. Thresholds are configuration (`[policy.*]` in .agent/config.toml),
never part of the log format (spec Part I: the promotion policy is the executor's).

    [policy.nodes]            # node kind -> "allow" | "require_approval" | "deny"
    frame = "require_approval"
    [policy.relations]        # relation -> verdict
    supersedes = "deny"
    [policy.promotion]
    min_evals = 1             # evals validating the patch
    min_pass_rate = 1.0       # fraction of them Passed
    min_score = 0.5           # optional: every scored eval at least this
    require_approval = false  # a named approver must sign off every promotion
"""

from __future__ import annotations

import enum
import marshal
import math
import os
import sys
import zlib
from pathlib import Path
from typing import Any

from git_gasp.base.errors import GaspError
from git_gasp.base.files import NotARegularFile, atomic_write, read_regular_file
from git_gasp.base.git import find_git_dir
from git_gasp.base.outside import load_toml
from git_gasp.base.record import Record as Value
from git_gasp.protocol.graph import Graph


class Verdict(enum.Enum):
    ALLOW = "allow"
    REQUIRE_APPROVAL = "require_approval"
    DENY = "deny"


class Gate(Value):

    FIELDS = ("verdict", "reason")

    def __init__(self, verdict: Verdict, reason: str = "") -> None:
        self.verdict = verdict
        self.reason = reason


ALLOW = Gate(Verdict.ALLOW)


class PolicyDenied(GaspError):
    """A policy gate refused the change."""


class ApprovalRequired(GaspError):
    """A policy gate needs a named approver for the change."""


def _verdict(value: Any, where: str) -> Verdict:
    try:
        return Verdict(str(value).lower().replace("-", "_"))
    except ValueError:
        raise GaspError(f"{where} must be allow, require_approval or deny, not {value!r}") from None


class Promotion(Value):

    FIELDS = ("min_evals", "min_pass_rate", "min_score", "require_approval")

    def __init__(self, min_evals: int = 0, min_pass_rate: float = 0.0,
                 min_score: float | None = None, require_approval: bool = False) -> None:
        self.min_evals = min_evals
        self.min_pass_rate = min_pass_rate
        self.min_score = min_score
        self.require_approval = require_approval


class PolicySet(Value):

    FIELDS = ("nodes", "relations", "promotion")

    def __init__(self, nodes: dict[str, Verdict] | None = None,
                 relations: dict[str, Verdict] | None = None,
                 promotion: Promotion | None = None) -> None:
        self.nodes = {} if nodes is None else nodes
        self.relations = {} if relations is None else relations
        self.promotion = Promotion() if promotion is None else promotion

    @classmethod
    def from_config(cls, config: dict) -> PolicySet:
        section = config.get("policy", {})
        if not isinstance(section, dict):
            raise GaspError(".agent/config.toml: [policy] must be a table")
        nodes = {k: _verdict(v, f"policy.nodes.{k}") for k, v in section.get("nodes", {}).items()}
        rels = {k: _verdict(v, f"policy.relations.{k}")
                for k, v in section.get("relations", {}).items()}
        promo = section.get("promotion", {})
        try:
            promotion = Promotion(
                min_evals=int(promo.get("min_evals", 0)),
                min_pass_rate=float(promo.get("min_pass_rate", 0.0)),
                min_score=None if promo.get("min_score") is None else float(promo["min_score"]),
                require_approval=bool(promo.get("require_approval", False)),
            )
        except (TypeError, ValueError) as exc:
            raise GaspError(f".agent/config.toml: [policy.promotion] {exc}") from None
        return cls(nodes, rels, promotion)

    @classmethod
    def load(cls, root: str | os.PathLike) -> PolicySet:
        return cls.from_config(load_config(root))

    def check_node(self, kind: str) -> Gate:
        verdict = self.nodes.get(kind, Verdict.ALLOW)
        return Gate(verdict, f"policy.nodes.{kind} = {verdict.value}")

    def check_relation(self, rel: str) -> Gate:
        verdict = self.relations.get(rel, Verdict.ALLOW)
        return Gate(verdict, f"policy.relations.{rel} = {verdict.value}")

    def check_promotion(self, graph: Graph, patch_id: str) -> Gate:
        """Gate promoting `patch_id` on the evals that validate it."""
        p = self.promotion
        evals = [graph.nodes[r["to"]] for r in graph.outgoing(patch_id, "validated_by")
                 if r["to"] in graph.nodes]
        passed = [e for e in evals if str(e["props"].get("status", "")).lower() == "passed"]
        if len(evals) < p.min_evals:
            return Gate(Verdict.DENY, f"promotion needs at least {p.min_evals} eval(s) validating "
                                      f"{patch_id}; it has {len(evals)}")
        rate = len(passed) / len(evals) if evals else 1.0
        if evals and rate < p.min_pass_rate:
            return Gate(Verdict.DENY, f"promotion needs a pass rate of {p.min_pass_rate:.0%}; "
                                      f"{patch_id} has {rate:.0%} ({len(passed)}/{len(evals)})")
        if p.min_score is not None:
            low = [e["id"] for e in evals if isinstance(e["props"].get("score"), (int, float))
                   and e["props"]["score"] < p.min_score]
            if low:
                return Gate(Verdict.DENY, f"promotion needs every score >= {p.min_score}; "
                                          f"{', '.join(low)} scored lower")
        if p.require_approval:
            return Gate(Verdict.REQUIRE_APPROVAL, "policy.promotion.require_approval = true")
        return ALLOW


MAX_CONFIG = 1 << 20  # a config is a few lines; a bigger one is not one
_MEMO = f"gasp-config-memo/1 py{sys.version_info[0]}.{sys.version_info[1]}"


def _memo_path(root: str | os.PathLike) -> str | None:
    gitdir = find_git_dir(root)
    if gitdir is None:
        return None
    agent = zlib.crc32(os.fsencode(os.path.realpath(root)))
    return os.path.join(gitdir, "gasp", f"config-{agent:08x}.bin")


def _parse_remembered(root: str | os.PathLike, data: bytes, where: str) -> dict:
    """`load_toml(data)`, remembered under the git dir with the exact bytes it parsed as
    the key (an edited file is parsed again; a config marshal cannot hold, with a TOML
    date say, is parsed every time). Every agent hook opens the state, and importing
    tomllib (with the typing, datetime and string it imports) cost a hook 43 M
    instructions (`bench/README.md`, seventh session)."""
    memo = _memo_path(root)
    if memo is not None:
        try:
            saved = marshal.loads(read_regular_file(memo, limit=MAX_CONFIG * 4) or b"")
            if (type(saved) is tuple and len(saved) == 3 and saved[0] == _MEMO
                    and saved[1] == data and type(saved[2]) is dict):
                return saved[2]
        except (OSError, ValueError, EOFError, TypeError):
            pass
    config = load_toml(data, where)
    if memo is not None:
        try:
            atomic_write(memo, marshal.dumps((_MEMO, data, config)),
                         root=os.path.dirname(os.path.dirname(memo)), durable=False,
                         make_parents=True)
        except (OSError, ValueError, GaspError):
            pass  # only the memo is lost
    return config


def load_config(root: str | os.PathLike) -> dict:
    """.agent/config.toml as a dict ({} when missing); a hostile one (a symlink, a
    device, a huge file, wrong types, a non-finite threshold) is one GaspError line."""
    where = ".agent/config.toml"
    path = str(Path(root, ".agent", "config.toml"))
    try:  # no following a link, no waiting on a FIFO, no reading past the bound
        data = read_regular_file(path, limit=MAX_CONFIG, root=root)
    except NotARegularFile as exc:
        raise GaspError(f"{where} cannot be read: {exc}") from None
    except OSError as exc:
        raise GaspError(f"{where} cannot be read: {exc.strerror}") from None
    if data is None:
        return {}
    try:
        config = _parse_remembered(root, data, where)
    except OSError as exc:
        raise GaspError(f"{where} does not parse: {exc}") from None
    section = config.get("policy", {})
    tables = {"policy": section} if not isinstance(section, dict) else {
        f"policy.{k}": section.get(k, {}) for k in ("nodes", "relations", "promotion")}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise GaspError(f"{where}: [{name}] must be a table")
    for key, value in tables.get("policy.promotion", {}).items():
        ok = (type(value) is bool if key == "require_approval" else
              type(value) is int if key == "min_evals" else
              type(value) in (int, float) and math.isfinite(value))
        if key in ("min_evals", "min_pass_rate", "min_score", "require_approval") and not ok:
            raise GaspError(f"{where}: policy.promotion.{key} = {value!r} is not "
                            + ("true or false" if key == "require_approval" else
                               "an integer" if key == "min_evals" else "a finite number"))
    executor = config.get("executor", {})
    if not isinstance(executor, dict) or not isinstance(executor.get("model", ""), str):
        raise GaspError(f"{where}: [executor] must be a table and its model a string")
    return config
