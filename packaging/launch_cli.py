"""Bundle entry point for the command line."""

import sys

from app.cli import main

sys.exit(main())
