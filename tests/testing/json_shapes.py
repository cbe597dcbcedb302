"""docs/json.md read as the contract of `--json` outputs (tests/cli/test_json_shapes.py,
tests/kg/test_kg_json_shapes.py)."""

from __future__ import annotations

import re

from tests.testing.paths import REPO_ROOT

DOC = REPO_ROOT / "docs" / "json.md"


def documented() -> dict[str, tuple[set[str], set[str]]]:
    """Section title -> (keys, optional keys) from docs/json.md."""
    shapes: dict[str, tuple[set[str], set[str]]] = {}
    for section in re.split(r"^## ", DOC.read_text(), flags=re.M)[1:]:
        title, _, body = section.partition("\n")

        def names(label: str, text: str = body) -> set[str]:
            m = re.search(rf"^- {label}: (.*?)(?=^- |\Z)", text, re.M | re.S)
            return set(re.findall(r"`([a-z_]+)`", m.group(1))) if m else set()

        shapes[title.strip().strip("`")] = (names("Keys"), names("Optional"))
    return shapes


def keys_ok(title: str, obj: dict) -> None:
    keys, optional = documented()[title]
    assert keys, f"docs/json.md: {title} lists no keys"
    assert keys <= set(obj) <= keys | optional, (title, sorted(obj))
