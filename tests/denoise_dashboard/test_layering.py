"""The direction of dependence between the apps (the README's Layout), checked on every
import statement, including imports inside functions."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APPS = {"core", "tenancy", "provenance", "metrics", "alerts", "evals", "policy", "demo", "denoiseflow"}
PROJECT_PACKAGE = "denoise_dashboard"
# A folder past this many modules is split into subsystem packages (README).
MAX_TOP_LEVEL_MODULES = 15

# What each package may import of the others (DESIGN.md, "Shape"): `core` is
# the floor, `tenancy` stands on it, every app above on both. `demo` loads
# every app's demo content; `denoise_dashboard` (the project package: settings,
# URLs, serving) wires them all together and is imported by none of them.
MAY_IMPORT = {
    "core": set(),
    "tenancy": {"core"},
    "provenance": {"core", "tenancy"},
    "metrics": {"core", "tenancy", "provenance"},
    "evals": {"core", "tenancy", "provenance"},
    "policy": {"core", "tenancy", "provenance", "metrics"},
    "alerts": {"core", "tenancy", "provenance", "metrics", "evals", "policy"},
    "demo": {"core", "tenancy", "provenance", "metrics", "evals", "policy", "alerts", "denoiseflow"},
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


# The fused rule (`fuse_state == BLOCK`) is defined once, in
# provenance/vocabulary.py; a module naming FuseDecision.BLOCK is spelling it
# out again. A few may name the code for other reasons (the choices, a
# mapping of the contract's names).
MAX_MODULES_NAMING_BLOCK = 4
NOT_SERVER_CODE = {"tests", "bench", "sdk", "migrations", "node_modules", "static", "templates"}


def modules_naming(root: Path, owner: str, attribute: str) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if any(part.startswith(".") or part in NOT_SERVER_CODE for part in parts):
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        if any(isinstance(node, ast.Attribute) and node.attr == attribute
               and isinstance(node.value, ast.Name) and node.value.id == owner for node in ast.walk(tree)):
            found.append(str(path.relative_to(root)))
    return found


def test_the_fused_rule_is_written_once():
    naming = modules_naming(ROOT, "FuseDecision", "BLOCK")
    assert len(naming) <= MAX_MODULES_NAMING_BLOCK, naming


def test_the_fused_rule_check_sees_a_module_spelling_it_out(tmp_path):
    for k in range(MAX_MODULES_NAMING_BLOCK + 1):
        (tmp_path / f"reader_{k}.py").write_text("def fused(node):\n    return node.fuse_state == FuseDecision.BLOCK\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("FuseDecision.BLOCK\n")
    assert len(modules_naming(tmp_path, "FuseDecision", "BLOCK")) == MAX_MODULES_NAMING_BLOCK + 1


def test_tests_import_helpers_from_tests_support_not_from_a_conftest():
    """Fixtures stay in conftest.py files; what a test imports lives in tests/support/
    (events.py, accounts.py, browser.py, serving.py, alerts.py, evals.py, receiver.py)."""
    wrong = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[-1] == "conftest":
                names = {alias.name for alias in node.names}
                if not all(_is_fixture(ROOT / Path(*node.module.split(".")).with_suffix(".py"), name) for name in names):
                    wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {sorted(names)} from {node.module}")
    assert wrong == []


def _is_fixture(conftest: Path, name: str) -> bool:
    tree = ast.parse(conftest.read_text(), filename=str(conftest))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return any("fixture" in ast.unparse(decorator) for decorator in node.decorator_list)
    return False


@pytest.mark.parametrize("package", sorted(MAY_IMPORT))
def test_no_app_imports_the_project_package(package):
    """Settings, URLs and serving sit on top: an app that needs something of
    theirs needs it in `core` instead."""
    wrong = [f"{path}:{line}" for path, line, name in imported_packages(package_dir(package)) if name == PROJECT_PACKAGE]
    assert wrong == []


def test_the_checker_sees_an_app_importing_the_project_package(tmp_path, monkeypatch):
    (tmp_path / "alerts").mkdir()
    (tmp_path / "alerts" / "delivery.py").write_text("from denoise_dashboard.serving import DashboardServer\n")
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", tmp_path)
    assert [name for _, _, name in imported_packages(tmp_path / "alerts")] == [PROJECT_PACKAGE]


def top_level_modules(package: str) -> list[str]:
    """The `*.py` files directly in the package's folder (subpackages not counted)."""
    return sorted(path.name for path in (ROOT / package).glob("*.py"))


def test_provenance_keeps_to_subsystem_packages():
    modules = top_level_modules("provenance")
    assert len(modules) <= MAX_TOP_LEVEL_MODULES, modules
