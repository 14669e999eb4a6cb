"""The package's shape: no import circle, small files and functions, a thin Module, and no
file reading another file's private attributes."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mxlearn"
FILES = sorted(PACKAGE.rglob("*.py"))

# Private attributes of MXNet's own objects that MXNet gives no accessor for, each read in one
# place: (file, attribute) -> why.
MXNET_PRIVATES = {
    ("checkpoint/optimizer_state.py", "_all_index_update_counts"): "the per-weight update counts",
    ("checkpoint/optimizer_state.py", "_index_update_count"): "the current device's counts",
    ("module/inspection.py", "_updater"): "the updater a KVStore was given",
    ("metrics/deferred.py", "_has_global_stats"): "whether an EvalMetric keeps global sums",
    ("experiments/rate_finder.py", "_fixed_param_names"): "the parameters a Module keeps frozen",
    ("work_checks.py", "_default_bucket_key"): "a BucketingModule's default key",
    ("work_checks.py", "_buckets"): "a BucketingModule's buckets, by key",
    ("work_checks.py", "_optimizer"): "the optimizer a BucketingModule's buckets share",
    ("work_checks.py", "_arg_params"): "the parameters a bucket shares with the default one",
}
# Public protocols whose names start with an underscore.
PROTOCOLS = {"_asdict", "_repr_mimebundle_"}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The mxlearn modules a file imports (wherever in the file the import stands)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("mxlearn"):
                continue
            for alias in node.names:  # `from . import checkpoint` imports a module
                candidate = f"{target}.{alias.name}"
                found.add(candidate if _exists(candidate) else target)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("mxlearn")}
    # Importing mxlearn.a.b runs mxlearn/a/__init__.py first, unless the file is inside mxlearn.a.
    for target in list(found):
        parts = target.split(".")
        for cut in range(2, len(parts)):
            package_of_target = ".".join(parts[:cut])
            if not (name + ".").startswith(package_of_target + "."):
                found.add(package_of_target)
    return {f for f in found if f != name and _exists(f)}


def _exists(module: str) -> bool:
    relative = Path(*module.split(".")[1:])
    return (PACKAGE / relative).with_suffix(".py").exists() or (PACKAGE / relative).is_dir()


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in FILES}


def test_no_import_circle():
    graph = _graph()

    # A package's __init__ re-exports what lies below it; an edge into a package means its
    # __init__ runs, so circles through __init__ files count too.
    def visit(node, path, done):
        if node in path:
            return path[path.index(node) :] + [node]
        if node in done:
            return None
        done.add(node)
        for target in sorted(graph.get(node, ())):
            circle = visit(target, path + [node], done)
            if circle:
                return circle
        return None

    done: set[str] = set()
    for start in sorted(graph):
        circle = visit(start, [], done)
        assert circle is None, " -> ".join(circle)


def test_no_file_is_large():
    sizes = {p.relative_to(PACKAGE): len(p.read_text().splitlines()) for p in FILES}
    total = sum(sizes.values())
    # one concept a file; a concept may take 600 lines
    large = {str(p): n for p, n in sizes.items() if n > 600 or n > total / 10}
    assert not large, f"files over 600 lines or 10% of the package's {total}: {large}"


def test_no_function_is_long_and_module_is_thin():
    long = []
    for path in FILES:
        for node in ast.walk(_tree(path)):
            lines = getattr(node, "end_lineno", 0) - getattr(node, "lineno", 0) + 1
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and lines > 60:
                long.append(f"{path.relative_to(PACKAGE)}:{node.name} ({lines} lines)")
            if isinstance(node, ast.ClassDef) and node.name == "Module":
                assert lines < 450, f"the Module class has {lines} lines"
    assert not long, long


def _defined_here(tree: ast.Module) -> set[str]:
    """Private names a file defines: methods, and attributes assigned on self or cls."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
    return names


def _is_own(value: ast.expr) -> bool:
    if isinstance(value, ast.Name) and value.id in ("self", "cls"):
        return True
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "super"
    )


def test_no_file_reads_another_files_private_attributes():
    found = []
    for path in FILES:
        tree, where = _tree(path), str(path.relative_to(PACKAGE))
        own = _defined_here(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                obj, name = node.value, node.attr
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "setattr", "hasattr")
                and len(node.args) > 1
                and isinstance(node.args[1], ast.Constant)
            ):
                obj, name = node.args[0], str(node.args[1].value)
            else:
                continue
            private = name.startswith("_") and not name.startswith("__")
            if not private or _is_own(obj) or name in PROTOCOLS or name in own:
                continue
            if (where, name) in MXNET_PRIVATES:
                continue
            found.append(f"{where}:{node.lineno} {ast.unparse(obj)}.{name}")
    assert not found, found


@pytest.mark.parametrize("rule", ["circle", "size"])
def test_the_checks_catch_what_they_look_for(tmp_path, rule, monkeypatch):
    """The structure checks fail on a package that breaks them (so they can fail at all)."""
    package = tmp_path / "mxlearn"
    package.mkdir()
    (package / "__init__.py").write_text("")
    if rule == "circle":
        (package / "a.py").write_text("from . import b\n")
        (package / "b.py").write_text("from .a import thing\n")
        check = test_no_import_circle
    else:
        (package / "big.py").write_text("x = 1\n" * 451)
        check = test_no_file_is_large
    monkeypatch.setitem(globals(), "PACKAGE", package)
    monkeypatch.setitem(globals(), "FILES", sorted(package.rglob("*.py")))
    with pytest.raises(AssertionError):
        check()


def test_fits_request_has_a_field_for_each_of_fits_parameters():
    import dataclasses
    import inspect

    import mxlearn
    from mxlearn.training.request import FitRequest

    parameters = [
        name
        for name, p in inspect.signature(mxlearn.Module.fit).parameters.items()
        if name != "self" and p.kind is not p.VAR_KEYWORD
    ]
    assert [f.name for f in dataclasses.fields(FitRequest)] == parameters
