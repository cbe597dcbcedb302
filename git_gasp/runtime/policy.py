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

import os

from git_gasp.base.agentconfig import Policy, Promotion, Verdict, read_config
from git_gasp.base.errors import GaspError
from git_gasp.base.record import Record as Value
from git_gasp.protocol.graph import Graph

__all__ = ["ALLOW", "ApprovalRequired", "Gate", "PolicyDenied", "PolicySet", "Promotion",
           "Verdict"]


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


class PolicySet(Policy):
    """The gates `[policy]` of .agent/config.toml sets, and how they judge a change."""

    @classmethod
    def load(cls, root: str | os.PathLike[str]) -> PolicySet:
        """The gates of the agent at `root`."""
        policy = read_config(root).policy
        return cls(policy.nodes, policy.relations, policy.promotion)

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
