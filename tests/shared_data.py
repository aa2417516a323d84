"""Where the third-party rate tables live: ``../shared/data`` beside the
repository (as in CI), or ``$LEVY_SHARED_DIR/data``. Tests read them by path
and skip with a reason when they are absent; nothing from them is committed."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("LEVY_SHARED_DIR") or ROOT.parent / "shared")
RATES = SHARED / "data" / "rates"
ZIP5_DIR = RATES / "zip5-2026-03"
SST_DIR = RATES / "sst-2026q2"
CDTFA_DIR = RATES / "cdtfa-ca-2026-01-01"
