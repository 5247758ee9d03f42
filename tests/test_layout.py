"""The import rules of the layout (DESIGN.md), read from the source: the platform (`oncore/`) depends on no
product app, the benchmark takes only the pure scoring core from transcriber testing, and the pure modules
import no Django. A new import that breaks a rule fails here with the file and the line."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = ("oncore", "transcriber_tests", "benchmark")
# oncore/urls.py mounts the apps' pages and API routers: the one place the platform names them.
PLATFORM_MOUNTS = {"oncore/urls.py"}
PURE = (
    "transcriber_tests/scoring.py",
    "transcriber_tests/rule_labels.py",
    "transcriber_tests/agreement.py",
    "benchmark/entity/matcher/__init__.py",
    "benchmark/entity/matcher/canon.py",
    "benchmark/entity/matcher/numbers.py",
    "benchmark/entity/matcher/match.py",
    "benchmark/entity/matcher/selftest.py",
    "benchmark/codeswitch/metrics.py",
    "benchmark/codeswitch/langtag.py",
)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in a file, relative imports resolved."""
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            found.append((node.lineno, module))
            # `from . import x` and `from pkg import module` name modules too.
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def sources(app: str):
    for path in sorted((ROOT / app).rglob("*.py")):
        if "migrations" not in path.parts:
            yield path


def _names(module: str, top: str) -> bool:
    return module == top or module.startswith(top + ".")


def test_it_keeps_the_platform_free_of_the_product_apps():
    broken = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in sources("oncore")
        if str(path.relative_to(ROOT)) not in PLATFORM_MOUNTS
        for line, module in imports_of(path)
        if _names(module, "transcriber_tests") or _names(module, "benchmark")
    ]
    assert not broken, "oncore/ must not import the product apps:\n" + "\n".join(broken)


def test_it_lets_the_benchmark_take_only_the_pure_scoring_core_from_transcriber_testing():
    broken = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in sources("benchmark")
        for line, module in imports_of(path)
        if _names(module, "transcriber_tests")
        and not _names(module, "transcriber_tests.scoring")
        and module != "transcriber_tests"
    ]
    assert not broken, "benchmark/ may import only transcriber_tests.scoring:\n" + "\n".join(broken)


def test_it_keeps_the_pure_modules_free_of_django_and_of_the_database():
    pure_modules = {_module_name(ROOT / p) for p in PURE}
    broken = []
    for relative in PURE:
        path = ROOT / relative
        assert path.exists(), f"{relative} is named pure in DESIGN.md: keep it there"
        for line, module in imports_of(path):
            project = any(_names(module, app) for app in APPS)
            if _names(module, "django") or (
                project
                and module not in pure_modules
                and not any(module.startswith(p + ".") for p in pure_modules)
            ):
                broken.append(f"{relative}:{line} imports {module}")
    assert not broken, "pure modules import no Django and no impure project module:\n" + "\n".join(broken)


def test_it_reads_relative_imports_as_the_modules_they_name():
    # The checker itself, on a file that imports its siblings: `from . import banks` is transcriber_tests.api.banks.
    modules = {m for _, m in imports_of(ROOT / "transcriber_tests" / "api" / "__init__.py")}
    assert "transcriber_tests.api.banks" in modules
