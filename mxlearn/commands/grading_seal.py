"""Run by the grader at the start of each check cell, in a namespace of its own, read afresh
from the read-only package with Python's own builtins (found through the import system, never
through names the notebook could rebind): is each part of mxlearn the notebook has loaded still
the code of its file? A check that calls a function the notebook replaced
(``mxlearn.checks.trained_by_hand = lambda *a, **k: None``), or reads a class whose method it
replaced, would grade the notebook's code instead of the teacher's: it raises ``ChecksChanged``
with what differs, and the grader says ``tampered``. Only when nothing differs does it set
``sealed``, which the check cell's last line needs to show the run's nonce.

What it compares: every function of a module and every attribute of its classes that is a
function (each wrapper through ``__wrapped__`` and its closure too) against the code its file
compiles to, or Python's or an installed package's; each name a module imports from another
part of mxlearn (the same object); the plain constants of the check modules (their
thresholds); the name ``mxlearn`` in the notebook; Python's builtins and ``sys.modules``. What
it cannot see: changes to MXNet or NumPy, and a notebook that rewrites how IPython runs cells.
The grader's own guide says so.
"""

import ast
import dataclasses
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
WRITTEN = {"__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__", "__new__"}
WRITTEN |= {"__lt__", "__le__", "__gt__", "__ge__", "__getstate__", "__setstate__"}
# Types from literals, which no name the notebook can rebind reaches: Python's own type, and
# its classes for C functions and Python functions.
REAL_TYPE = (0).__class__.__class__
BUILTIN = REAL_TYPE([].append)
FUNCTION = REAL_TYPE(lambda: 0)
REAL_CLASSES = {
    "int": REAL_TYPE(0),
    "float": REAL_TYPE(0.0),
    "str": REAL_TYPE(""),
    "bool": REAL_TYPE(True),
    "list": REAL_TYPE([]),
    "dict": REAL_TYPE({}),
    "tuple": REAL_TYPE(()),
    "set": REAL_TYPE({0}),
    "type": REAL_TYPE,
    "object": REAL_TYPE.__mro__[-1],
}
SELF = "mxlearn.commands.grading_seal"  # a function written in C
_fresh: dict = {}  # per file: {qualname: code} as the file compiles


class ChecksChanged(Exception):
    """The parts of mxlearn the notebook changed, by name."""


def _codes(code, found):
    """{qualname: [code, ...]}: two lambdas of one scope share a qualname."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found.setdefault(const.co_qualname, []).append(const)
            _codes(const, found)
    return found


def _ours(code) -> bool:
    return os.path.realpath(code.co_filename).startswith(PACKAGE + os.sep)


def _installed(code) -> bool:
    """Code of mxlearn, Python's library or an installed package (contextlib's wrapper of a
    context manager): not the notebook's."""
    if code.co_filename.startswith("<frozen "):  # Python's own, frozen into it (genericpath)
        return True
    return os.path.realpath(code.co_filename).startswith(TRUSTED)


def _compiled(path: str) -> dict:
    """{qualname: [code, ...]} of a package file as it compiles now."""
    if path not in _fresh:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        _fresh[path] = (tree, _codes(compile(tree, path, "exec"), {}))
    return _fresh[path][1]


def _genuine(function, seen=None) -> bool:
    """Whether a function is what its file says: mxlearn's code as its file compiles (by
    qualname), or Python's or an installed package's; and so is each function its closure
    holds (a wrapper's own ``check``, ``function``)."""
    seen = set() if seen is None else seen
    if id(function) in seen or len(seen) > 200:
        return True
    seen.add(id(function))
    code = function.__code__
    if _ours(code):
        if code not in _compiled(os.path.realpath(code.co_filename)).get(code.co_qualname, []):
            return False  # compiled under mxlearn's file name, or changed
        home = sys.modules.get(function.__globals__.get("__name__"))
        if home is None or vars(home) is not function.__globals__:
            return False  # its own code, run with globals of the notebook's making
    elif not _installed(code):
        return False  # written in the notebook
    for cell in function.__closure__ or ():
        try:
            held = cell.cell_contents
        except ValueError:  # a cell not filled yet
            continue
        if not all(_genuine(f, seen) for f in _chain(held)):
            return False
    return True


def _chain(value) -> list:
    """The functions behind a module's or class's attribute, outermost first, through each
    wrapper's ``__wrapped__`` (functools.wraps); empty when it is no function (a value)."""
    if isinstance(value, (staticmethod, classmethod, types.MethodType)):
        value = value.__func__
    elif isinstance(value, property):
        value = value.fget
    chain = []
    for _ in range(20):  # an object whose __wrapped__ is itself ends too
        if not callable(value):
            break
        if isinstance(value, types.FunctionType):
            chain.append(value)
        elif not isinstance(value, type):  # an object called in a function's place
            call = type(value).__call__
            if isinstance(call, types.FunctionType):
                chain.append(call)  # Python code: whose it is decides (partial's is C)
        value = getattr(value, "__wrapped__", None)
    return chain


def _changed(live, qualname, decorated) -> bool:
    chain = _chain(live)
    if not chain:
        return not decorated  # a decorator may make a value (a cache, a dataclass field)
    if not all(_genuine(f) for f in chain):
        return True
    code = chain[-1].__code__
    if not _ours(code):
        return True
    return code.co_qualname != qualname and not decorated  # a wrapper keeps its own name


def _global_names(tree) -> set:
    return {n for node in ast.walk(tree) if isinstance(node, ast.Global) for n in node.names}


def _problems_of(name, module) -> list:
    path = getattr(module, "__file__", None)
    if not path or not os.path.realpath(path).startswith(PACKAGE + os.sep):
        return [name]
    _compiled(os.path.realpath(path))
    tree = _fresh[os.path.realpath(path)][0]
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
            if _changed(space.get(node.name), node.name, bool(node.decorator_list)):
                found.append(f"{name}.{node.name}")
        elif isinstance(node, ast.ClassDef) and isinstance(space.get(node.name), type):
            found += _class_changed(f"{name}.{node.name}", space[node.name], node)
        elif isinstance(node, ast.ImportFrom) and node.level:
            found += _imports_changed(name, module, node)
        elif isinstance(node, ast.Assign) and name.endswith("checks"):
            found += _constants_changed(name, space, node, rebound)
    for attribute, value in list(space.items()):  # one the notebook added, or set by hand
        if isinstance(value, types.FunctionType) and not _genuine(value):
            found.append(f"{name}.{attribute}")
    return sorted(set(found))


def _written(chain) -> bool:
    """A method made from text (its code's file "<string>"), in an installed wrapper or none
    (reprlib's around a dataclass's __repr__)."""
    inner = chain[-1].__code__.co_filename == "<string>"
    return inner and all(_installed(f.__code__) for f in chain[:-1])


def _class_changed(name, cls, node) -> list:
    """A class's methods as its body wrote them, and every function on it genuine (those
    mxlearn attaches at import, e.g. the guards of Module, included)."""
    found = []
    members = vars(cls)
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            qualname = f"{node.name}.{item.name}"
            live = members.get(item.name)
            # a property (or a static or class method) replaced by a plain value on the class
            kept = not _decorated_as_member(item) or isinstance(live, _MEMBER_KINDS)
            if not kept or _changed(live, qualname, bool(item.decorator_list)):
                found.append(f"{name}.{item.name}")
    written = dataclasses.is_dataclass(cls) or hasattr(cls, "_fields")  # or a namedtuple
    for attribute, value in list(members.items()):
        chain = _chain(value)
        if written and attribute in WRITTEN and chain and _written(chain):
            continue  # the methods dataclasses and namedtuple write from text
        if not all(_genuine(f) for f in chain):
            found.append(f"{name}.{attribute}")
    return found


_MEMBER_KINDS = (property, staticmethod, classmethod, types.FunctionType)


def _decorated_as_member(item) -> bool:
    """Decorated with one of Python's member kinds, by its bare name (@property)."""
    names = {d.id for d in item.decorator_list if isinstance(d, ast.Name)}
    return bool(names & {"property", "staticmethod", "classmethod"})


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
            if not chain or not all(_genuine(f) for f in chain) or chain[-1] is not inner[-1]:
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


def _builtins_changed() -> list:
    """Python's builtins as Python made them: its own classes and C functions under their own
    names, a function of an installed package (IPython adds some), never the notebook's. Read
    with literals' types and ``is`` only, before anything the seal does trusts a builtin."""
    import builtins

    found, functions = [], []
    for name, value in REAL_CLASSES["dict"].items(builtins.__dict__):
        kind = REAL_TYPE(value)
        if name in REAL_CLASSES:
            kept = value is REAL_CLASSES[name]
        elif kind is BUILTIN:
            kept = value.__name__ == name or name not in CORE
        elif kind is FUNCTION:
            kept = True
            functions.append((name, value))  # judged once the builtins it uses are known
        else:
            kept = name not in CORE  # a callable object in a core builtin's place
        if not kept:
            found.append("builtins." + name)
    if not found:
        found = ["builtins." + name for name, value in functions if not _genuine(value)]
    return found


CORE = {"exec", "eval", "compile", "open", "__import__", "globals", "getattr", "setattr"}
CORE |= {"hasattr", "isinstance", "issubclass", "len", "iter", "next", "repr", "sorted"}
CORE |= {"vars", "id", "callable", "round", "abs", "min", "max", "sum", "any", "all", "print"}
CORE |= {"int", "float", "str", "bool", "list", "dict", "tuple", "set", "type", "object"}


def _bound_by(tree) -> set:
    """The names a module's own statements bind at its top level (not its submodules)."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module is None:
            continue  # from . import checks: the submodule itself, as the import system binds it
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _submodules_dropped() -> list:
    """A name a loaded mxlearn package holds only as one of its modules (the import system
    set it) is that module, as sys.modules holds it: not a check module popped from
    sys.modules and replaced by a lookalike."""
    found = []
    for name, package in sorted(dict.items(sys.modules)):
        path = getattr(package, "__file__", None)
        if not (name == "mxlearn" or name.startswith("mxlearn.")) or not path:
            continue
        if not hasattr(package, "__path__"):
            continue
        _compiled(os.path.realpath(path))
        own = _bound_by(_fresh[os.path.realpath(path)][0])
        for folder in package.__path__:
            for entry in os.listdir(folder):
                part = entry[:-3] if entry.endswith(".py") else entry
                if part in own or part not in vars(package) or not part.isidentifier():
                    continue
                held = vars(package)[part]
                if (
                    not isinstance(held, types.ModuleType)
                    or sys.modules.get(f"{name}.{part}") is not held
                ):
                    found.append(f"{name}.{part}")
    return found


def _tracing() -> list:
    """A trace or profile function runs inside every check: it can skip a check's raise or
    swap its functions back and forth around the seal."""
    found = ["sys.settrace"] if sys.gettrace() is not None else []
    return found + (["sys.setprofile"] if sys.getprofile() is not None else [])


def _ipython_changed() -> list:
    """IPython runs cells as installed: its shell's methods, event callbacks and input and AST
    transformers are IPython's, ipykernel's or Matplotlib's code (a post_run_cell callback can
    mark a failed check as run, a transformer can rewrite the check cell)."""
    shell_module = sys.modules.get("IPython.core.interactiveshell")
    shell_class = getattr(shell_module, "InteractiveShell", None)
    if shell_class is None or not shell_class.initialized():
        return []
    shell = shell_class.instance()
    manager = shell.input_transformer_manager
    hooks = {"IPython.events": [f for fs in shell.events.callbacks.values() for f in fs]}
    hooks["IPython.input_transformers"] = [
        *shell.input_transformers_post,
        *manager.cleanup_transforms,
        *manager.line_transforms,
        *manager.token_transformers,
    ]
    hooks["IPython.ast_transformers"] = list(shell.ast_transformers)
    hooks["IPython.shell"] = [v for v in vars(shell).values() if isinstance(v, types.FunctionType)]
    hooks["IPython.shell"] += [
        v for klass in type(shell).__mro__ for v in vars(klass).values() if callable(v)
    ]
    return [
        where
        for where, functions in hooks.items()
        if not all(_genuine(f) for hook in functions for f in _chain(hook))
    ]


def verify() -> None:
    found = _builtins_changed() + _tracing() + _ipython_changed()
    if type(sys.modules) is not dict:
        found.append("sys.modules")
    user = globals().get("user") or {}
    if "mxlearn" in user and user["mxlearn"] is not sys.modules.get("mxlearn"):
        found.append("mxlearn")  # the name the check cells call, rebound in the notebook
    found += _submodules_dropped()
    for name, module in sorted(dict.items(sys.modules)):
        if name == SELF:  # this file imported as a module (doctests do): no check reads it
            continue
        if name == "mxlearn" or name.startswith("mxlearn."):
            parent, _, last = name.rpartition(".")
            if parent in sys.modules and getattr(sys.modules[parent], last, module) is not module:
                found.append(name)
            found += _problems_of(name, module)
    if found:
        raise ChecksChanged(", ".join(found))


if __name__ == "mxlearn_grading_seal":  # run by a check cell, not imported (doctests)
    verify()
    sealed = True  # read by the check cell's last line: verify() ran and found nothing
