"""The rules of the layout, read from the source (every import statement, those inside functions included): the
platform (`oncore/`) depends on no product app; the benchmark takes only the pure scoring core from transcriber
testing, and the product reaches the benchmark through benchmark/selectors.py alone; each part of transcriber
testing (its folders of layers: views, api, actions, queries, shapes, work, lib, ...) imports only the parts below it
that it may (MAY_IMPORT), and no two parts import each other; the pure modules (lib/ as a whole, and PURE) import no
Django; no module imports itself back through others (no circle), and none imports the project's own modules inside
a function except an app's ready(); no module is over 600 lines. A change that breaks a rule fails here with the
file and the line."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = ("oncore", "transcriber_tests", "benchmark")
# oncore/urls.py mounts the apps' pages and API routers: the one place the platform names them.
PLATFORM_MOUNTS = {"oncore/urls.py"}
# Pure modules: no Django, no impure project module. Every module of transcriber_tests/lib/ is one (PURE_FOLDERS);
# these are the others.
PURE_FOLDERS = ("transcriber_tests/lib",)
PURE = (
    "transcriber_tests/judge/prompts.py",
    "transcriber_tests/queries/filters.py",
    "oncore/formats.py",
    "oncore/logs.py",
    "oncore/api/compat.py",
    "oncore/api/version.py",
    "benchmark/caution.py",
    "benchmark/plural.py",
    "benchmark/entity/matcher/__init__.py",
    "benchmark/entity/matcher/canon.py",
    "benchmark/entity/matcher/numbers.py",
    "benchmark/entity/matcher/match.py",
    "benchmark/entity/matcher/selftest.py",
    "benchmark/entity/matcher/extract.py",
    "benchmark/codeswitch/metrics.py",
    "benchmark/codeswitch/langtag.py",
    "benchmark/codeswitch/stats.py",
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
        and not _names(module, "transcriber_tests.lib.scoring")
        and module != "transcriber_tests"
    ]
    assert not broken, "benchmark/ may import only transcriber_tests.lib.scoring:\n" + "\n".join(broken)


def pure_paths() -> list[str]:
    found = [
        str(p.relative_to(ROOT)) for folder in PURE_FOLDERS for p in sorted((ROOT / folder).rglob("*.py"))
    ]
    return found + list(PURE)


def test_it_keeps_the_pure_modules_free_of_django_and_of_the_database():
    pure_modules = {_module_name(ROOT / p) for p in pure_paths()}
    broken = []
    for relative in pure_paths():
        path = ROOT / relative
        assert path.exists(), f"{relative} is named pure here: keep it there, or move its name with it"
        for line, module in imports_of(path):
            project = any(_names(module, app) for app in APPS)
            if _names(module, "django") or (
                project
                and module not in pure_modules
                and not any(module.startswith(p + ".") for p in pure_modules)
            ):
                broken.append(f"{relative}:{line} imports {module}")
    assert not broken, "pure modules import no Django and no impure project module:\n" + "\n".join(broken)


def test_it_lets_the_product_reach_the_benchmark_only_through_its_selectors():
    broken = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in sources("transcriber_tests")
        for line, module in imports_of(path)
        if _names(module, "benchmark") and module != "benchmark" and not _names(module, "benchmark.selectors")
    ]
    assert not broken, "transcriber_tests/ reads the benchmark through benchmark.selectors:\n" + "\n".join(
        broken
    )


# What each part of transcriber_tests may import of the app besides itself and the FLOOR: a part is a folder
# (views, actions, ...) or a module at the top (forms.py, handles.py, ...). From the top down:
FLOOR = {"models", "lib", "errors"}  # the tables, the pure core, the refusals: every part may use them
MAY_IMPORT = {
    "apps": {"handles", "shapes", "work"},  # ready(): registers the webhook events, binds the work handles
    "urls": {"views"},
    "management": {
        "work",
        "actions",
        "queries",
        "aggregates",
    },  # commands, like pages, start what they ask for
    # The old dotted paths of queue tasks queued before migration 0020 (each says when it can go).
    "tasks": {"work"},
    "runs": {"work"},
    "snapshots": {"queries"},
    "views": {"actions", "queries", "shapes", "forms", "templatetags"},
    "api": {"actions", "queries", "shapes"},
    "admin": set(),
    "work": {"actions", "queries", "shapes", "handles", "judge"},
    "forms": {"queries"},
    "templatetags": set(),
    # A write reads what it decides on (queries: a bank's leader, its lines), keeps its row's CSV cells and emits
    # its webhook event in its transaction (shapes), keeps the totals (aggregates), asks the judge (judge) and
    # hands work to the queue through the work handles (handles), never by importing work/.
    "actions": {"aggregates", "handles", "judge", "queries", "shapes"},
    "shapes": {"queries"},
    # A snapshot read asks for its rebuild (queries/snapshots.py); the flag boxes the queue keeps are written with
    # the score cells' helpers (queries/boxes.py).
    "queries": {"handles", "templatetags"},
    "aggregates": set(),
    "judge": set(),
    "handles": set(),
    "models": {"lib"},
    "errors": set(),
    "lib": set(),
}
APP = "transcriber_tests"


def part_of(module: str) -> str | None:
    """The part of transcriber_tests a module is in ("queries" for transcriber_tests.queries.runs), or None."""
    parts = module.split(".")
    return parts[1] if parts[0] == APP and len(parts) > 1 else None


def part_imports() -> list[tuple[str, int, str, str, str]]:
    """(file, line, its part, the part it imports, the module) for every import of one part by another."""
    found = []
    for path in sources(APP):
        mine = part_of(_module_name(path))
        for line, module in imports_of(path):
            theirs = part_of(module)
            if mine and theirs and theirs != mine:
                found.append((str(path.relative_to(ROOT)), line, mine, theirs, module))
    return found


def test_it_places_every_part_of_transcriber_testing():
    here = {part_of(_module_name(path)) for path in sources(APP)} - {None}
    assert not here - set(MAY_IMPORT), (
        f"say what these may import (MAY_IMPORT): {sorted(here - set(MAY_IMPORT))}"
    )


def test_it_keeps_each_part_of_transcriber_testing_to_what_it_may_import():
    broken = [
        f"{path}:{line} ({mine}) imports {module} ({theirs})"
        for path, line, mine, theirs, module in part_imports()
        if theirs not in MAY_IMPORT.get(mine, set()) | (FLOOR if mine != "lib" else set())
    ]
    assert not broken, "a part imports only what MAY_IMPORT lets it:\n" + "\n".join(broken)


def test_it_has_no_two_parts_importing_each_other():
    edges = {(mine, theirs) for _, _, mine, theirs, _ in part_imports()}
    both = sorted({tuple(sorted(e)) for e in edges if (e[1], e[0]) in edges})
    assert not both, "these parts import each other:\n" + "\n".join(f"{a} <-> {b}" for a, b in both)


def test_the_part_rules_run_one_way():
    """MAY_IMPORT itself has no circle: every part stands above what it may import."""
    graph = {part: set(allowed) | (set() if part in FLOOR else FLOOR) for part, allowed in MAY_IMPORT.items()}
    assert not circles(graph)


def _project_modules() -> dict[str, Path]:
    return {_module_name(path): path for app in APPS for path in sources(app)}


def _graph() -> dict[str, set[str]]:
    """Module -> the project's modules it imports (a name imported from a module counts as that module)."""
    modules = _project_modules()
    graph = {}
    for name, path in modules.items():
        edges = set()
        for _, module in imports_of(path):
            while module and module not in modules:
                module = module.rpartition(".")[0]
            if module and module != name:
                edges.add(module)
        graph[name] = edges
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of a graph: its strongly connected parts of more than one module (Tarjan's)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            part = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                part.append(other)
                if other == node:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _package_faces(graph):
    """A package's __init__ that only hands its modules' names on is no room of its own: an import of the package
    is an import of the modules it names, so `from . import x` inside a package does not close a circle."""
    faces = {name for name, path in _project_modules().items() if path.name == "__init__.py"}
    return {
        name: {e for e in edges if not e.startswith(name + ".")} if name in faces else edges
        for name, edges in graph.items()
    }


def test_it_has_no_import_circle_counting_imports_inside_functions():
    found = circles(_package_faces(_graph()))
    assert not found, "import circles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_it_finds_a_circle_through_an_import_inside_a_function():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]


def _imports_inside_functions(path: Path) -> list[tuple[int, str, str]]:
    tree = ast.parse(path.read_text(), str(path))
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = []
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(func):
            if isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                found.append(
                    (node.lineno, func.name, ".".join([*base, node.module] if node.module else base))
                )
            elif isinstance(node, ast.Import):
                found += [(node.lineno, func.name, alias.name) for alias in node.names]
    return found


def test_it_imports_the_projects_own_modules_at_the_top_except_in_an_apps_ready():
    broken = [
        f"{path.relative_to(ROOT)}:{line} imports {module} inside {func}()"
        for app in APPS
        for path in sources(app)
        for line, func, module in _imports_inside_functions(path)
        if any(_names(module, a) for a in APPS) and not (path.name == "apps.py" and func == "ready")
    ]
    assert not broken, "import the project's modules at the top of the module:\n" + "\n".join(broken)


MAX_LINES = 600


def test_it_keeps_every_module_under_600_lines():
    long = [
        f"{path.relative_to(ROOT)}: {n} lines"
        for app in APPS
        for path in sources(app)
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    ]
    assert not long, f"split these along their seams (at most {MAX_LINES} lines):\n" + "\n".join(long)


def test_it_reads_relative_imports_as_the_modules_they_name():
    # The checker itself, on a file that imports its siblings: `from . import banks` is transcriber_tests.api.banks.
    modules = {m for _, m in imports_of(ROOT / "transcriber_tests" / "api" / "__init__.py")}
    assert "transcriber_tests.api.banks" in modules
