"""Builders for canonical event lines used across tests."""

from __future__ import annotations

from git_gasp.protocol.envelope import Event, serialize

ACTOR = ("agent", "tester")


def line(eid: str, kind: str, payload, cause: str | None = None,
         corr: str | None = None, ts: int = 1739000000000) -> bytes:
    """One canonical event line, newline included."""
    return serialize(Event(eid, 1, ts, ACTOR[0], ACTOR[1], kind, payload, cause, corr))


def ops(eid: str, cause: str | None, *op_list: dict) -> bytes:
    return line(eid, "state.ops_applied", list(op_list), cause)


def create(node_id: str, kind: str, **props) -> dict:
    return {"CreateNode": {"id": node_id, "kind": kind, "props": props}}


def relate(src: str, rel: str, dst: str, **props) -> dict:
    return {"CreateRelation": {"from": src, "rel": rel, "to": dst, "props": props}}


def update(node_id: str, **props) -> dict:
    return {"UpdateNode": {"id": node_id, "props": props}}


def goal_pair(n: int, status: str = "Open") -> bytes:
    """A goal.created event and its paired ops event (ids event_g{n}, event_g{n}o)."""
    gid = f"goal_{n}"
    return line(f"event_g{n}", "goal.created", {"id": gid, "title": f"goal {n}",
                                                 "status": status}) + ops(
        f"event_g{n}o", f"event_g{n}", create(gid, "goal", title=f"goal {n}", status=status)
    )
