#!/usr/bin/env bash
# The dashboard guide's pictures (docs/dashboard.md): run the browser walk, then copy the pictures it took of the
# demo's screens to docs/images/.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python -m pytest tests/browser -q -p no:cacheprovider
mkdir -p docs/images
cp test-artifacts/docs/*.png docs/images/
ls -l docs/images
