"""Validated status transitions per node kind (canonical spelling, case-insensitive input)."""

from __future__ import annotations

from git_gasp.base.errors import GaspError

# kind -> {status: statuses it may move to}; a status missing as a key is terminal.
TRANSITIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "goal": {
        "Open": ("Active", "Blocked", "Achieved", "Abandoned"),
        "Active": ("Open", "Blocked", "Achieved", "Abandoned"),
        "Blocked": ("Open", "Active", "Abandoned"),
    },
    "task": {
        "Open": ("InProgress", "Blocked", "Done", "Cancelled"),
        "InProgress": ("Open", "Blocked", "Done", "Cancelled"),
        "Blocked": ("Open", "InProgress", "Cancelled"),
    },
    "patch": {
        "Proposed": ("Promoted", "Rejected", "Withdrawn"),
        "Promoted": ("Reverted",),
    },
    "failure": {"Open": ("Resolved", "WontFix")},
    "hypothesis": {"Open": ("Confirmed", "Refuted")},
    "frame": {"Open": ("Closed",)},
}
EVAL_STATUSES = ("Passed", "Failed")
DECISION_STATUSES = ("Approved", "Rejected")


class TransitionError(GaspError):
    """A status change the node's lifecycle does not allow."""


def known_statuses(kind: str) -> list[str]:
    table = TRANSITIONS.get(kind, {})
    out = list(table)
    for targets in table.values():
        out += [t for t in targets if t not in out]
    return out


def canonical(value: str, allowed: tuple[str, ...] | list[str], what: str) -> str:
    """The canonical spelling of `value` among `allowed` (case-insensitive)."""
    for status in allowed:
        if status.lower() == str(value).lower():
            return status
    raise TransitionError(f"{what} must be one of {', '.join(allowed)}, not {value!r}")


def check_transition(kind: str, node_id: str, old: object, new: str) -> str:
    """Validate old -> new for a node of `kind`; return the canonical new status."""
    table = TRANSITIONS.get(kind)
    if table is None:
        if kind == "run":
            raise TransitionError("a run's status changes only through run start / finish")
        return new  # kinds without a lifecycle: any status
    new = canonical(new, known_statuses(kind), f"{kind} status")
    if isinstance(old, str) and old.lower() == new.lower():
        raise TransitionError(f"{kind} {node_id} is already {new}")
    current = next((s for s in table if isinstance(old, str) and s.lower() == old.lower()), None)
    if current is None:
        if isinstance(old, str) and old.lower() in (s.lower() for s in known_statuses(kind)):
            raise TransitionError(f"{kind} {node_id} is {old}, a final status; it cannot "
                                  f"become {new}")
        return new  # unknown legacy status: allow moving into the lifecycle
    if new not in table[current]:
        raise TransitionError(f"{kind} {node_id} cannot go from {current} to {new} "
                              f"(allowed: {', '.join(table[current])})")
    return new
