"""odb is the only package that imports dulwich: every other module asks odb."""

from __future__ import annotations

import ast
from pathlib import Path

import git_gasp

PACKAGE = Path(git_gasp.__file__).parent


def _dulwich_imports(path: Path) -> list[int]:
    """Lines of `path` that import dulwich (at any depth: functions, TYPE_CHECKING)."""
    found = []
    for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        else:
            continue
        if any(name == "dulwich" or name.startswith("dulwich.") for name in names):
            found.append(node.lineno)
    return found


def test_only_odb_imports_dulwich():
    offenders = [f"{path.relative_to(PACKAGE.parent)}:{line}"
                 for path in sorted(PACKAGE.rglob("*.py"))
                 if path.relative_to(PACKAGE).parts[0] != "odb"
                 for line in _dulwich_imports(path)]
    assert offenders == []


def test_the_scan_sees_every_kind_of_import(tmp_path):
    sample = tmp_path / "m.py"
    sample.write_text("import dulwich\nif X:\n    from dulwich.repo import Repo\n"
                      "def f():\n    import dulwich.objects as o\n"
                      "from dulwichish import y\nfrom . import dulwich\n")
    assert _dulwich_imports(sample) == [1, 3, 5]
