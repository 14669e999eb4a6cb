"""Run by the grader at the start of each check cell, in a namespace of its own, read afresh
from the read-only package (never from ``sys.modules``, which the notebook could fill): is each
part of mxlearn the notebook has loaded still the code of its file? A check that calls a
function the notebook replaced (``mxlearn.checks.trained_by_hand = lambda *a, **k: None``), or
reads a class whose method it replaced, would grade the notebook's code instead of the
teacher's: it raises ``ChecksChanged`` with what differs, and the grader says ``tampered``.

What it compares: every function and method defined at the top of a module (its code against
the code its file compiles to), each name a module imports from another part of mxlearn (the
same object), and the plain constants of the check modules (their thresholds). What it cannot
see: changes to MXNet, NumPy or Python itself, and a notebook that rewrites how IPython runs
cells. The grader's own guide says so.
"""

import ast
import os
import sys
import sysconfig
import types

PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # noqa: F821 (given)
TRUSTED = tuple(
    os.path.realpath(p) + os.sep
    for p in {PACKAGE, *(sysconfig.get_paths()[k] for k in ("stdlib", "purelib", "platlib"))}
)
IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), tuple, frozenset)


class ChecksChanged(Exception):
    """The parts of mxlearn the notebook changed, by name."""


def _codes(code, found):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found.setdefault(const.co_qualname, const)
            _codes(const, found)
    return found


def _ours(code) -> bool:
    return os.path.realpath(code.co_filename).startswith(PACKAGE + os.sep)


def _installed(code) -> bool:
    """Code of mxlearn, Python's library or an installed package (contextlib's wrapper of a
    context manager): not the notebook's."""
    return os.path.realpath(code.co_filename).startswith(TRUSTED)


def _chain(value) -> list:
    """The functions behind a module's or class's attribute, outermost first, through each
    wrapper's ``__wrapped__`` (functools.wraps); empty when it is no function (a value)."""
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    elif isinstance(value, property):
        value = value.fget
    chain = []
    while callable(value) and len(chain) < 20:
        if isinstance(value, types.FunctionType):
            chain.append(value)
        value = getattr(value, "__wrapped__", None)
    return chain


def _changed(live, qualname, fresh, decorated) -> bool:
    chain = _chain(live)
    if not chain:
        return not decorated  # a decorator may make a value (a cache, a dataclass field)
    if not all(_installed(f.__code__) for f in chain):  # one written in the notebook
        return True
    code = chain[-1].__code__
    if not _ours(code):
        return True
    if code.co_qualname != qualname:
        return not decorated  # a wrapper without __wrapped__: its own code is checked there
    return code != fresh.get(qualname)


def _global_names(tree) -> set:
    return {n for node in ast.walk(tree) if isinstance(node, ast.Global) for n in node.names}


def _problems_of(name, module) -> list:
    path = getattr(module, "__file__", None)
    if not path or not os.path.realpath(path).startswith(PACKAGE + os.sep):
        return [name]
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    fresh = _codes(compile(tree, path, "exec"), {})
    found = []
    space = vars(module)
    assigned = [
        t.id
        for n in tree.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    ]
    rebound = _global_names(tree) | {n for n in assigned if assigned.count(n) > 1}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if _changed(space.get(node.name), node.name, fresh, bool(node.decorator_list)):
                found.append(f"{name}.{node.name}")
        elif isinstance(node, ast.ClassDef) and isinstance(space.get(node.name), type):
            members = vars(space[node.name])
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    qualname = f"{node.name}.{item.name}"
                    decorated = bool(item.decorator_list)
                    if _changed(members.get(item.name), qualname, fresh, decorated):
                        found.append(f"{name}.{qualname}")
        elif isinstance(node, ast.ImportFrom) and node.level:
            found += _imports_changed(name, module, node)
        elif isinstance(node, ast.Assign) and name.endswith("checks"):
            found += _constants_changed(name, space, node, rebound)
    return found


def _imports_changed(name, module, node) -> list:
    package = name if hasattr(module, "__path__") else name.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    source = sys.modules.get(f"{package}.{node.module}" if node.module else package)
    found = []
    for alias in node.names:
        original = getattr(source, alias.name, None)
        live = vars(module).get(alias.asname or alias.name)
        if isinstance(original, type) and live is not original:
            found.append(f"{name}.{alias.asname or alias.name}")
        elif isinstance(original, types.FunctionType) and live is not original:
            # wrapped again here (checks.py gives each check its exercise= keyword)
            chain, inner = _chain(live), _chain(original)
            if (
                not chain
                or not all(_installed(f.__code__) for f in chain)
                or chain[-1] is not inner[-1]
            ):
                found.append(f"{name}.{alias.asname or alias.name}")
    return found


def _constants_changed(name, space, node, rebound) -> list:
    try:
        value = ast.literal_eval(node.value)
    except ValueError:
        return []
    names = [t.id for t in node.targets if isinstance(t, ast.Name) and t.id not in rebound]
    if not isinstance(value, IMMUTABLE):
        return []
    return [f"{name}.{n}" for n in names if n in space and space[n] != value]


def verify() -> None:
    found = []
    for name, module in sorted(sys.modules.items()):
        if name == "mxlearn" or name.startswith("mxlearn."):
            parent, _, last = name.rpartition(".")
            if parent in sys.modules and getattr(sys.modules[parent], last, module) is not module:
                found.append(name)
            found += _problems_of(name, module)
    if found:
        raise ChecksChanged(", ".join(found))


verify()
