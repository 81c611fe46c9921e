"""PySide's import hook told that our modules use PySide without reading their source to find out (row 7).

Once PySide6 is imported, every module imported after it goes through PySide's hook for its `__feature__` switches
(snake_case, true_property), which decides whether the module uses PySide by reading the module's whole source
(`inspect.getsource`, which also walks every loaded module each time) and looking for the word "PySide6": 143
modules before the window's first paint, 56 of them ours and most others the standard library's, ~30 M
instructions (docs/performance.md, row 7).
Our modules never select a feature, so the hook's answer for them is known: "uses PySide, no feature" (0), what
it finds for each of the GUI's modules; for a core module (no PySide in it) it would record "ignore" (-1), which
keeps the feature set in force, and with no module of the app selecting one that is the same "no feature". The
standard library's modules (re, typing, json ..., each scanned when first imported after PySide) never name
PySide6: "ignore", as the scan would find. Other packages' modules are still scanned as before.
"""

from __future__ import annotations

import sys
from types import ModuleType

PACKAGE = "rbln_artifact_studio."
HOOK_MODULE = "shibokensupport.feature"  # PySide 6's own module; its check is a private function


def skip_source_scan_of_ours() -> bool:
    """Answer the hook's question for our modules by their name; False (nothing changed) when this PySide has no
    such hook."""
    feature = sys.modules.get(HOOK_MODULE)
    scan = getattr(feature, "_mod_uses_pyside", None)
    if feature is None or scan is None or getattr(scan, "ours_by_name", False):
        return False

    def uses_pyside(module: ModuleType) -> bool:
        name = getattr(module, "__name__", "")
        if name.startswith(PACKAGE):
            return True
        if name.partition(".")[0] in sys.stdlib_module_names:
            return False  # the standard library's source never names PySide6: what the scan would find
        return bool(scan(module))

    uses_pyside.ours_by_name = True  # type: ignore[attr-defined]  # a mark on the function: not installed twice
    feature._mod_uses_pyside = uses_pyside  # type: ignore[attr-defined]  # PySide's private module, untyped
    return True
