"""PySide's import hook told that our modules use PySide without reading their source to find out (row 7).

Once PySide6 is imported, every module imported after it goes through PySide's hook for its `__feature__` switches
(snake_case, true_property), which decides whether the module uses PySide by reading the module's whole source
(`inspect.getsource`, which also walks every loaded module each time) and looking for the word "PySide6": ~20 M
instructions for the ~100 modules of ours the window imports before its first paint (docs/performance.md, row 7).
Our modules never select a feature, so the hook's answer for them is known: "uses PySide, no feature" (0), what
it finds for each of the GUI's modules; for a core module (no PySide in it) it would record "ignore" (-1), which
keeps the feature set in force, and with no module of the app selecting one that is the same "no feature".
Others' modules are still asked about as before.
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
        if getattr(module, "__name__", "").startswith(PACKAGE):
            return True
        return bool(scan(module))

    uses_pyside.ours_by_name = True  # type: ignore[attr-defined]
    feature._mod_uses_pyside = uses_pyside  # type: ignore[attr-defined]
    return True
