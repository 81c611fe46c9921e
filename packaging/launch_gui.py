"""Bundle entry point for the desktop app."""

import sys

from app.gui.main import main

sys.exit(main())
