#!/usr/bin/env bash
# Install the .desktop entry, AppStream metadata and icons for the current user (XDG paths).
set -euo pipefail
cd "$(dirname "$0")/.."
data="${XDG_DATA_HOME:-$HOME/.local/share}"
id=io.github.rbln_artifact_studio.RblnStudio
install -Dm644 "packaging/$id.desktop" "$data/applications/$id.desktop"
install -Dm644 "packaging/$id.metainfo.xml" "$data/metainfo/$id.metainfo.xml"
install -Dm644 resources/icons/rbln-studio.svg "$data/icons/hicolor/scalable/apps/$id.svg"
for size in 16 24 32 48 64 128 256 512; do
  install -Dm644 "resources/icons/rbln-studio-$size.png" "$data/icons/hicolor/${size}x${size}/apps/$id.png"
done
echo "installed $id into $data"
