"""Put before a program that imports the studio's portable modules (core/portable/), which are sent with it as text.

remote/server.py follows this with serve({module name: source}) and then the program: its imports of those
modules are answered from that text, so the server needs nothing of ours installed (nor a matching version of
it: the text sent wins over an installed copy). The packages above them arrive empty.
"""

import importlib.abc
import importlib.util
import linecache
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import importlib.machinery
    import types
    from collections.abc import Sequence


class SentModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports the modules sent with the program from their source, ahead of every other finder."""

    def __init__(self, sources: "dict[str, str]") -> None:
        self.sources = sources

    def find_spec(
        self, fullname: str, path: "Sequence[str] | None", target: "types.ModuleType | None" = None
    ) -> "importlib.machinery.ModuleSpec | None":
        if fullname not in self.sources:
            return None
        package = any(name.startswith(fullname + ".") for name in self.sources)
        return importlib.util.spec_from_loader(fullname, self, is_package=package)

    def create_module(self, spec: "importlib.machinery.ModuleSpec") -> None:
        return None  # the usual module object

    def exec_module(self, module: "types.ModuleType") -> None:
        source = self.sources[module.__name__]
        filename = f"<rbln-studio: {module.__name__}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # tracebacks show lines
        exec(compile(source, filename, "exec"), module.__dict__)


def serve(sources: "dict[str, str]") -> None:
    sys.meta_path.insert(0, SentModules(sources))
