"""Bundle entry point for the command line."""

import sys

from rbln_artifact_studio.cli.main import main

sys.exit(main())
