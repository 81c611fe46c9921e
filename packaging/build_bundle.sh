#!/usr/bin/env bash
# Build the one-folder desktop bundle into dist/rbln-studio/ from a clean virtual environment:
# wheel first (so the bundle holds exactly what a wheel install holds), then PyInstaller.
set -euo pipefail
cd "$(dirname "$0")/.."
# The bundle holds the wheel's package: a checkout's app/ on PYTHONPATH (as the tests run) would be analysed instead,
# and it has no resources/ or docs/ inside the package.
unset PYTHONPATH
work="${BUNDLE_WORK:-build/bundle}"
rm -rf "$work" dist/rbln-studio
"${PYTHON:-python3}" -m venv "$work/venv"  # python3: Debian and Ubuntu have no `python` command
"$work/venv/bin/python" -m pip install -q --upgrade pip build pyinstaller
"$work/venv/bin/python" -m build --wheel --outdir "$work/wheel" .
wheel=$(ls "$work"/wheel/*.whl)
"$work/venv/bin/python" -m pip install -q "$wheel[s3]"  # the desktop opens buckets too (the s3 extra)
"$work/venv/bin/pyinstaller" --noconfirm --clean --distpath dist --workpath "$work/pyinstaller" packaging/rbln-studio.spec
echo "bundle: dist/rbln-studio/ (run dist/rbln-studio/rbln-studio or dist/rbln-studio/rbln-studio-cli)"
