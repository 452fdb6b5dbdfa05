"""Permissive stand-ins for the heavy modules an engine's config code imports.

Only ever imported inside an oracle subprocess (bench/oracle/engine_vllm.py,
engine_sglang.py), never by errorkb or the tests' own process. `install(real, heavy)` puts a
meta-path finder first on sys.meta_path: a module whose top-level name is in `heavy` is a
`StubModule` (an optional import the engine probes for, not in `heavy`, still fails as it
would on a machine without it) whose every attribute is a `Dummy` class.
A Dummy can be called, subclassed, subscripted (`torch.Tensor | None`, `list[torch.dtype]`),
used as a decorator (`@triton.jit`, `@torch.inference_mode()`), iterated (empty) and
compared; it holds no behaviour, so any check of the engine that depends on a stubbed
module's answer is not taken from here but from the fake the oracle passes in.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types


def _name(owner: str, attr: str) -> str:
    return f"{owner}.{attr}"


class _DummyMeta(type):
    def __getattr__(cls, attr: str):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return make_dummy(_name(cls.__qualname__, attr))

    def __call__(cls, *args, **kwargs):
        # @decorator use: hand the function or class back untouched.
        if len(args) == 1 and not kwargs and isinstance(args[0], (types.FunctionType, type)):
            return args[0]
        return super().__call__()

    def __getitem__(cls, item):
        return cls

    def __or__(cls, other):
        return cls

    def __ror__(cls, other):
        return cls

    def __iter__(cls):
        return iter(())

    def __len__(cls):
        return 0


class Dummy(metaclass=_DummyMeta):
    def __init_subclass__(cls, **kwargs):  # class X(msgspec.Struct, omit_defaults=True)
        super().__init_subclass__()

    def __init__(self, *args, **kwargs):
        pass

    @classmethod
    def __get_pydantic_core_schema__(cls, source, handler):  # a field typed with a stub
        from pydantic_core import core_schema

        return core_schema.any_schema()

    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return make_dummy(_name(type(self).__qualname__, attr))()

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and isinstance(args[0], (types.FunctionType, type)):
            return args[0]
        return type(self)()

    def __getitem__(self, item):
        return self

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __bool__(self):
        return False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __int__(self):
        return 0

    def __index__(self):
        return 0

    def __float__(self):
        return 0.0

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    def __lt__(self, other):
        return False

    __le__ = __gt__ = __ge__ = __lt__

    def __add__(self, other):
        return self

    __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __floordiv__ = __add__
    __mod__ = __or__ = __ror__ = __and__ = __rand__ = __add__


def make_dummy(qualname: str) -> type:
    return _DummyMeta(qualname.rsplit(".", 1)[-1], (Dummy,), {"__qualname__": qualname,
                                                               "__module__": "stub"})


class StubModule(types.ModuleType):
    __path__: list[str] = []

    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        value = make_dummy(_name(self.__name__, attr))
        setattr(self, attr, value)
        return value


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        module = StubModule(spec.name)
        module.__path__ = []
        module.__spec__ = spec
        module.__version__ = "0.0.0+stub"
        return module

    def exec_module(self, module):
        pass


class StubFinder(importlib.abc.MetaPathFinder):
    """Stubs the `heavy` top-level packages; leaves every other import alone."""

    def __init__(self, heavy: set[str], real: set[str]):
        self.heavy = heavy
        self.real = real  # top-level packages that must never be stubbed (the engine's own)
        self.stubbed: set[str] = set()

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.split(".", 1)[0]
        if top in self.real or top in sys.stdlib_module_names or top.startswith("_"):
            return None
        if top not in self.heavy:
            return None  # found by the ordinary finders, or an ImportError as without us
        self.stubbed.add(fullname)
        return importlib.machinery.ModuleSpec(fullname, _Loader(), is_package=True)


HEAVY = {
    "torch", "torchvision", "torchaudio", "triton", "transformers", "tokenizers",
    "safetensors", "huggingface_hub", "ray", "numpy", "numba", "cv2", "PIL", "zmq",
    "flashinfer", "xgrammar", "outlines_core", "llguidance", "cbor2", "msgspec", "psutil",
    "cuda", "pynvml", "vllm_flash_attn", "sgl_kernel", "sglang_kernel", "einops", "openai",
    "fastapi", "uvicorn", "starlette", "aiohttp", "prometheus_client", "tiktoken",
    "sentencepiece", "blake3", "cachetools", "cpuinfo", "setproctitle", "mistral_common",
    "compressed_tensors", "gguf", "deep_gemm", "flash_attn", "orjson", "uvloop",
    "requests", "openai_harmony", "cloudpickle", "tqdm", "IPython", "pybase64",
    "partial_json_parser", "lark",
    "watchfiles", "ijson",
}


def install(real: set[str], heavy: set[str] | None = None) -> StubFinder:
    finder = StubFinder(HEAVY if heavy is None else heavy, real)
    sys.meta_path.insert(0, finder)
    return finder
