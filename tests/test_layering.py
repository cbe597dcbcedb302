"""The package map, stated once: each layer imports only the layers to its left.

    base → redact → protocol → odb → store → conformance → guard → runtime → merge →
    githooks → adapters

redact (pure text work) sits low, for everything that stores outside text; the
framework bridges and OpenTelemetry sit on runtime beside the rest (bridges and otel:
the layers up to runtime, nothing above them uses them); kg uses only base; cli may
use anything. Relative imports and ``from git_gasp import X``
(which hides the layer it takes X from) are refused everywhere in the package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "git_gasp"

ORDER = ["base", "redact", "protocol", "odb", "store", "conformance", "guard", "runtime",
         "merge", "githooks", "adapters"]
ALLOWED = {layer: set(ORDER[:i]) for i, layer in enumerate(ORDER)}
ALLOWED["bridges"] = ALLOWED["runtime"] | {"runtime"}
ALLOWED["otel"] = ALLOWED["runtime"] | {"runtime"}
ALLOWED["kg"] = {"base"}
ALLOWED["cli"] = set(ORDER) | {"bridges", "otel", "kg"}
TOP_LEVEL = {"__init__"}  # git_gasp/__init__.py: the lazy re-export of the runtime


def _imports(path: Path) -> tuple[set[str], list[str]]:
    """The git_gasp layers `path` imports, and the imports this test refuses outright."""
    tree = ast.parse(path.read_bytes(), str(path))
    layers: set[str] = set()
    refused: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                refused.append(f"line {node.lineno}: relative import")
                continue
            names = [node.module or ""]
            hidden = [a.name for a in node.names if not a.name.startswith("__")]
            if node.module == "git_gasp" and hidden:  # __version__ belongs to no layer
                refused.append(f"line {node.lineno}: from git_gasp import " + ", ".join(hidden))
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "git_gasp" and len(parts) >= 2:
                layers.add(parts[1])
    return layers, refused


def test_every_package_is_in_the_map():
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert packages == set(ALLOWED), "a package is missing from the map (or the map is stale)"
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    assert modules == TOP_LEVEL, f"modules outside every layer: {sorted(modules - TOP_LEVEL)}"


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_layers_to_its_left(layer):
    bad = {}
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        layers, refused = _imports(path)
        extra = layers - ALLOWED[layer] - {layer}
        if extra or refused:
            bad[str(path.relative_to(PACKAGE))] = sorted(extra) + refused
    assert not bad, f"{layer} breaks the package map: {bad}"


def test_the_checker_catches_what_it_should(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from . import x\nfrom git_gasp import AgentState\nimport git_gasp.cli.main\n")
    layers, refused = _imports(probe)
    assert layers == {"cli"}
    assert [r.split(":")[1].strip() for r in refused] == [
        "relative import", "from git_gasp import AgentState"]
