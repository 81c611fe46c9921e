"""The desktop's scan process (gui/models/folder_scan.py) with every Kind marked (marking_kind.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, as pytest has it: places.marking_kind

from places.marking_kind import mark_every_kind
from rbln_artifact_studio.gui.models.folder_scan import main

mark_every_kind()
sys.exit(main())
