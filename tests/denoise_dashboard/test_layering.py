"""The direction of dependence between the apps (DESIGN.md), checked on every
import statement, including imports inside functions."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APPS = {"provenance", "metrics", "alerts", "evals", "policy", "demo", "denoiseflow"}

# What each package may import of the others. `demo` sits on top (it loads
# every app's demo content) and `denoise_dashboard` wires them all together.
MAY_IMPORT = {
    "provenance": set(),
    "metrics": {"provenance"},
    "evals": {"provenance"},
    "policy": {"provenance", "metrics"},
    "alerts": {"provenance", "metrics", "evals", "policy"},
    "denoiseflow": set(),
}
# The SDK runs inside agents: nothing of the server, not even Django.
SDK_FORBIDDEN = {"django", "rest_framework", "channels", "celery", "psycopg", "denoise_dashboard"}


def imported_packages(package_dir: Path):
    for path in sorted(package_dir.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                yield path.relative_to(ROOT), node.lineno, name.split(".")[0]


def package_dir(package: str) -> Path:
    for candidate in (ROOT / package, ROOT / "sdk" / package):
        if candidate.is_dir():
            return candidate
    pytest.skip(f"{package}/ does not exist")


@pytest.mark.parametrize("package", sorted(MAY_IMPORT))
def test_an_app_imports_only_what_it_sits_on(package):
    forbidden = (APPS - MAY_IMPORT[package] - {package}) | (SDK_FORBIDDEN if package == "denoiseflow" else set())
    wrong = [f"{path}:{line} imports {name}" for path, line, name in imported_packages(package_dir(package))
             if name in forbidden]
    assert wrong == []


def test_the_checker_sees_imports_inside_functions(tmp_path, monkeypatch):
    (tmp_path / "provenance").mkdir()
    (tmp_path / "provenance" / "late.py").write_text("def f():\n    from metrics import windows\n")
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", tmp_path)
    assert [name for _, _, name in imported_packages(tmp_path / "provenance")] == ["metrics"]
