"""The package map's one-way data flow (DESIGN §2): no layer imports one to its right."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "git_gasp"

# layer -> the git_gasp layers it may import (besides itself and git_gasp.errors)
ALLOWED = {
    "protocol": set(),
    "store": {"protocol"},
    "conformance": {"protocol", "store"},
    "runtime": {"protocol", "store", "conformance"},
    "merge": {"protocol", "store"},
    "hooks": {"protocol", "store", "conformance"},
    "adapters": {"protocol", "store", "conformance", "runtime"},
    "kg": set(),
}


def imported_layers(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {n.split(".")[1] for n in names if n.startswith("git_gasp.") and n.count(".") >= 1}


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_layers_to_its_left(layer):
    bad = {}
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        extra = imported_layers(path) - ALLOWED[layer] - {layer, "errors"}
        if extra:
            bad[str(path.relative_to(PACKAGE))] = sorted(extra)
    assert not bad, f"{layer} imports layers to its right: {bad}"
