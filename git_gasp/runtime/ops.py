"""Builders for the ops of a `state.ops_applied` batch, and the props cleaner."""

from __future__ import annotations

from typing import Any

Op = dict[str, Any]


def create_node(node_id: str, kind: str, props: dict) -> Op:
    """A CreateNode op."""
    return {"CreateNode": {"id": node_id, "kind": kind, "props": props}}


def relate(src: str, rel: str, dst: str, props: dict | None = None) -> Op:
    """A CreateRelation op `src -rel-> dst`."""
    return {"CreateRelation": {"from": src, "rel": rel, "to": dst, "props": props or {}}}


def update_node(node_id: str, props: dict) -> Op:
    """An UpdateNode op."""
    return {"UpdateNode": {"id": node_id, "props": props}}


def clean(d: dict) -> dict:
    """Drop None values and empty metadata (metadata is persisted when it says something)."""
    return {k: v for k, v in d.items() if v is not None and not (k == "metadata" and v == {})}
