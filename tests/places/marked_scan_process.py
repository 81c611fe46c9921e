"""The desktop's scan process (gui/models/folder_scan.py) with every Kind marked (marking_kind.py)."""

import sys

from marking_kind import mark_every_kind

from rbln_artifact_studio.gui.models.folder_scan import main

mark_every_kind()
sys.exit(main())
