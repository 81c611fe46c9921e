"""How the CLI names the options a core remedy asks for (core/errors.py Remedy): by its flags."""

from __future__ import annotations

from rbln_artifact_studio.core.errors import OptionNames

FLAGS: OptionNames = {"output": "--output-dir {value}", "backend": "--backend {value}", "num_devices": "--num_devices"}
