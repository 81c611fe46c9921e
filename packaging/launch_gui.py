"""Bundle entry point for the desktop app."""

import sys

from rbln_artifact_studio.gui.main import main

sys.exit(main())
