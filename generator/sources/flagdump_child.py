"""The child of `errorkb.sources.flagdata`: builds an engine's own argument parser from its
unpacked wheel and prints what the parser accepts, as JSON on stdout.

Run only by flagdata.dump, in a subprocess with a timeout:

    python flagdump_child.py <unpacked wheel> <recipe.py:function> <heavy,modules>

It imports nothing of errorkb: the recipe is a file (a wing's `parser.py`, loaded by its
path), whose function returns the built `argparse.ArgumentParser`. The heavy modules (torch,
transformers, triton...) and any module the interpreter cannot find are stubs from a
meta-path finder: the parsers read types, defaults and choices from the engines' config
classes, never tensors.
Sockets cannot connect (no network), and the engines' plugin entry points are never loaded.
"""

import abc
import argparse
import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import json
import re
import socket
import sys
import types
from collections.abc import Callable
from pathlib import Path

_IMPORTLIB = importlib.__file__.rsplit("/", 1)[0] + "/"
ALIASES = {"regex": "re"}  # drop-in modules the standard library provides
# What Python, typing, dataclasses, inspect and pydantic probe a class for: a stub has none
# of them (any other name, a library's own `__class_validators__`, is another stub).
_PROTOCOL_NAMES = (
    "__wrapped__ __signature__ __origin__ __args__ __parameters__ __func__ __self__ __get__ "
    "__set__ __delete__ __set_name__ __class_getitem__ __fspath__ __annotations__ __all__ "
    "__code__ __defaults__ __kwdefaults__ __call__ __await__ __aiter__ __next__ __copy__ "
    "__deepcopy__ __reduce__ __reduce_ex__ __getstate__ __setstate__ __getnewargs__ "
    "__getnewargs_ex__ __length_hint__ __missing__ __round__ __trunc__ __floor__ __ceil__ "
    "__index__ __complex__ __bytes__ __buffer__ __supertype__ __required_keys__ "
    "__optional_keys__ __total__ __orig_bases__ __orig_class__ __typing_subst__ __value__ "
    "__type_params__ __get_validators__ __modify_schema__ __isabstractmethod__ "
    "__abstractmethods__ __slots__ __weakref__ __post_init__ __match_args__ "
    "__typing_unpacked_tuple_args__ __typing_is_unpacked_typevartuple__"
)
_PROTOCOL = frozenset(_PROTOCOL_NAMES.split())
ANSWERS: dict = {}  # stubbed names with a real value: the recipe's STUBS
VERSIONS: dict[str, str] = {}  # package -> the lowest release the engine's wheel requires
_REQUIRES = re.compile(r"^Requires-Dist:\s*([A-Za-z0-9_.-]+)\s*\(?([^;]*)")
_LOWEST = re.compile(r"(?:>=|==|~=)\s*([0-9][^,;)\s]*)")


class _Stub(abc.ABCMeta):
    """Anything a stubbed module holds: a class that can be called, subclassed, indexed,
    compared and read attributes from, each answering another stub."""

    def __getattr__(cls, name):
        if name in _PROTOCOL or name.startswith(("__pydantic", "__dataclass")):
            raise AttributeError(name)
        return _answer(f"{cls.__qualname__}.{name}")

    def __getitem__(cls, item):
        return cls

    def __setitem__(cls, item, value):
        pass

    def __delitem__(cls, item):
        pass

    def __new__(mcs, name, bases, namespace, **kwargs):
        namespace.setdefault("__init_subclass__", classmethod(lambda c, **kw: None))
        return super().__new__(mcs, name, bases, namespace)

    def __init__(cls, name, bases, namespace, **kwargs):
        super().__init__(name, bases, namespace)

    def __call__(cls, *args, **kwargs):
        if "_stub" not in cls.__dict__:  # a class of the engine's own on a stub base
            instance = object.__new__(cls)
            init = getattr(cls, "__init__", None)
            if init is not None and init is not object.__init__:
                with contextlib.suppress(TypeError):
                    init(instance, *args, **kwargs)
            return instance
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]  # a decorator
        return cls

    def __or__(cls, other):
        return cls

    __ror__ = __and__ = __rand__ = __add__ = __sub__ = __mul__ = __truediv__ = __or__
    __rsub__ = __rmul__ = __rtruediv__ = __floordiv__ = __mod__ = __pow__ = __or__

    def __neg__(cls):
        return cls

    __pos__ = __abs__ = __invert__ = __neg__

    def __radd__(cls, other):
        return other if isinstance(other, str) else cls

    def __str__(cls):
        return cls.__qualname__

    def __contains__(cls, item):
        return False

    def __enter__(cls):
        return cls

    def __exit__(cls, *exc):
        return False

    def __iter__(cls):
        return iter(())

    def __len__(cls):
        return 0

    def __bool__(cls):
        return False

    def __int__(cls):
        return 0

    def __index__(cls):
        return 0

    def __float__(cls):
        return 0.0

    def __lt__(cls, other):
        return False

    __gt__ = __le__ = __ge__ = __lt__

    def __mro_entries__(cls, bases):
        return (object,)

    def register(cls, *args, **kwargs):
        """ABCMeta's `register(subclass)`, and any library's own registry call of that name
        (transformers' `AutoProcessor.register(config, processor)`), which a stub ignores."""
        if len(args) == 1 and not kwargs and isinstance(args[0], type):
            return super().register(args[0])
        return args[0] if args else cls


def _answer(name: str):
    """The recipe's answer for a stubbed name (AttributeError: it has no such attribute),
    else another stub."""
    if name not in ANSWERS:
        return _stub_class(name)
    if ANSWERS[name] is AttributeError:
        raise AttributeError(name)
    return ANSWERS[name]


def _stub_class(name: str) -> type:
    namespace = {
        "__qualname__": name,
        "__module__": "stub",
        "_stub": True,
        "__get_pydantic_core_schema__": classmethod(_any_schema),
    }
    return _Stub(name.rsplit(".", 1)[-1], (), namespace)


def _any_schema(cls, source, handler):
    """pydantic (real, when installed) takes a stub for any value."""
    from pydantic_core import core_schema

    return core_schema.any_schema()


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        value = _answer(f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        if spec.name in ALIASES:
            return importlib.import_module(ALIASES[spec.name])
        module = _StubModule(spec.name)
        module.__path__ = []  # a package: its submodules are stubs too
        module.__version__ = _version(spec.name.split(".")[0])
        return module

    def exec_module(self, module):
        pass


class StubFinder(importlib.abc.MetaPathFinder):
    """Stubs the heavy packages first, and, last in sys.meta_path (`last`: the tree), what
    nothing finds of the modules the engine's own files import (the standard library's
    probes, `_winapi` and such, still fail as they expect). A package the recipe's STUBS
    answer ModuleNotFoundError for is not installed: it is never stubbed."""

    def __init__(self, heavy: set[str], last: str | None):
        self.heavy, self.last = heavy, last
        self.stubbed: set[str] = set()

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.split(".")[0]
        if ANSWERS.get(top) is ModuleNotFoundError:
            return None
        if top in self.heavy or fullname in ALIASES or (self.last and self._from_tree()):
            self.stubbed.add(top)
            return importlib.machinery.ModuleSpec(fullname, _Loader(), is_package=True)
        return None

    def _from_tree(self) -> bool:
        frame: types.FrameType | None = sys._getframe(2)
        while frame is not None:
            name = frame.f_code.co_filename
            if not name.startswith(("<frozen importlib", _IMPORTLIB)):
                return name.startswith(self.last or "")
            frame = frame.f_back
        return False


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _version(package: str) -> str:
    """A stubbed package's version: the lowest the engine requires (its wheel's
    Requires-Dist), else 0.0.0."""
    return VERSIONS.get(_key(package), "0.0.0")


def _required(tree: str) -> dict[str, str]:
    """The lowest release of each package the engine's wheel requires (>=, == or ~=)."""
    found: dict[str, str] = {}
    for metadata in sorted(Path(tree).glob("*.dist-info/METADATA")):
        for line in metadata.read_text(encoding="utf-8", errors="replace").splitlines():
            requires = _REQUIRES.match(line)
            lowest = requires and _LOWEST.search(requires.group(2))
            if requires and lowest:
                found.setdefault(_key(requires.group(1)), lowest.group(1))
    return found


def _versions(stubbed: Callable[[], set[str]]):
    """importlib.metadata.version, which answers a stubbed package's version as its stub
    module's `__version__` where it has no metadata."""
    real = importlib.metadata.version

    def version(name: str) -> str:
        try:
            return real(name)
        except importlib.metadata.PackageNotFoundError:
            if _key(name) in stubbed():
                return _version(name)
            raise

    return version


def _no_network(*args, **kwargs):
    raise OSError("no network while the parser is built")


def _simple(value):
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return None


def _type_name(kind) -> str | None:
    if kind is None:
        return None
    if kind in (int, float, str):
        return kind.__name__
    return getattr(kind, "__name__", type(kind).__name__)


def describe(parser: argparse.ArgumentParser) -> dict:
    """What the parser accepts: each option's strings (every one the parser registered, the
    ones help hides too), dest, nargs, choices, type, and its negative forms."""
    strings: dict[int, list[str]] = {}
    for string, action in parser._option_string_actions.items():
        strings.setdefault(id(action), []).append(string)
    options, positionals = [], []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            continue
        nargs = action.nargs
        entry: dict = {"dest": action.dest, "nargs": nargs if nargs is not None else 1}
        if isinstance(nargs, str) and nargs not in ("?", "*", "+"):
            entry["nargs"] = "*"  # REMAINDER, PARSER: everything after
        if action.choices is not None and not isinstance(action.choices, dict):
            choices = [_simple(c) for c in action.choices]
            if all(c is not None for c in choices):  # sorted: some are built from sets
                entry["choices"] = sorted(choices, key=lambda c: (str(type(c)), c))
        kind = _type_name(action.type)
        if kind:
            entry["type"] = kind
        if not action.option_strings:
            positionals.append(entry)
            continue
        names = strings.get(id(action), list(action.option_strings))
        negative = set(getattr(action, "negative_option_strings", ()))
        if isinstance(action, argparse.BooleanOptionalAction):
            negative |= {s for s in names if s.startswith("--no-")}
        entry = {"strings": names, **entry, "boolean": nargs == 0}
        if negative:
            entry["negative"] = [s for s in names if s in negative]
        options.append(entry)
    return {
        "prog": parser.prog,
        "allow_abbrev": parser.allow_abbrev,
        "prefix_chars": parser.prefix_chars,
        "parser_class": type(parser).__name__,
        "positionals": positionals,
        "options": sorted(options, key=lambda o: o["strings"][0]),
    }


def main(argv: list[str]) -> None:
    tree, recipe, heavy = argv[0], argv[1], set(filter(None, argv[2].split(",")))
    sys.argv = [sys.argv[0]]  # the engines read sys.argv while building (`--help`)
    socket.socket.connect = _no_network  # type: ignore[method-assign]
    socket.create_connection = _no_network
    importlib.metadata.entry_points = lambda **kw: []  # type: ignore[assignment]
    sys.path.insert(0, tree)
    VERSIONS.update(_required(tree))
    first, last = StubFinder(heavy, last=None), StubFinder(set(), last=tree.rstrip("/") + "/")
    sys.meta_path.insert(0, first)
    sys.meta_path.append(last)
    importlib.metadata.version = _versions(lambda: heavy | first.stubbed | last.stubbed)
    path, function = recipe.rsplit(":", 1)
    module = _recipe(path)
    # Another program's recipe may take its engine's stubs (STUBS_OF: the sibling recipes'
    # files), its own STUBS adding to them
    for sibling in getattr(module, "STUBS_OF", ()):
        ANSWERS.update(getattr(_recipe(str(Path(path).with_name(sibling))), "STUBS", {}))
    ANSWERS.update(getattr(module, "STUBS", {}))
    stdout, sys.stdout = sys.stdout, sys.stderr  # what the engine prints is not the answer
    parser = getattr(module, function)()
    out = describe(parser)
    out["stubbed"] = sorted(first.stubbed | last.stubbed)
    json.dump(out, stdout, indent=1)


def _recipe(path: str):
    """A recipe, loaded by its path (it imports nothing of errorkb)."""
    name = "errorkb_parser_recipe_" + Path(path).stem
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    main(sys.argv[1:])
