"""The desktop's log file, set up right after the window's first paint; records made before it are held for it.

Setting the log up imports logging.handlers (with socket, pickle and queue), finds and makes the log folder on
disk and starts the thread that writes the file: work the first paint does not show (docs/performance.md, row 7).
The records made before it (a scan's job starting, say) keep their own time and reach the file, and stderr with
--verbose, in order once it is set up.
"""

from __future__ import annotations

import logging

from rbln_artifact_studio import __version__
from rbln_artifact_studio.core.logs import PACKAGE, setup


class HeldLog(logging.Handler):
    """Holds the package's records until start() sets up the log file, then hands them to it."""

    def __init__(self, verbose: bool) -> None:
        super().__init__(logging.DEBUG)
        self.verbose = verbose
        self.held: list[logging.LogRecord] = []
        self.started = False
        self._targets: list[logging.Handler] = []
        package = logging.getLogger(PACKAGE)
        package.setLevel(logging.DEBUG if verbose else logging.INFO)  # as setup() sets it: what it would keep
        package.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        # Under the handler's lock, as start() swaps handlers: a record that reached this handler while start()
        # ran goes to the log's own handler, not into the list already handed over.
        if self.started:
            for handler in self._targets:
                if record.levelno >= handler.level:
                    handler.handle(record)
        else:
            self.held.append(record)

    def start(self) -> None:
        """Set up the log file (stderr too with --verbose), say the app started, then write what was held."""
        with self.lock:  # type: ignore[union-attr]  # Handler.__init__ made it
            if self.started:
                return
            package = logging.getLogger(PACKAGE)
            before = set(package.handlers)
            path = setup(verbose=self.verbose, to_file=True)
            self._targets = [h for h in package.handlers if h not in before]
            package.removeHandler(self)
            self.started = True
            held, self.held = self.held, []
        logging.getLogger("rbln_artifact_studio.gui.main").info("rbln-studio %s started (log: %s)", __version__, path)
        for record in held:
            logging.getLogger(record.name).handle(record)
