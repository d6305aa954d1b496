"""Copies the host's quadrature decoder into firmware/ (run on the PC, never deployed).

    python firmware/sync.py          copy pi_companion/core/quadrature.py here
    python firmware/sync.py --check  exit 1 if the copy differs
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "pi_companion" / "core" / "quadrature.py"
COPY = ROOT / "firmware" / "quadrature.py"


def main(argv: list[str]) -> int:
    data = SOURCE.read_bytes()
    if "--check" in argv:
        same = COPY.exists() and COPY.read_bytes() == data
        if not same:
            print(f"{COPY} differs from {SOURCE}: run `make firmware-sync`", file=sys.stderr)
        return 0 if same else 1
    if not COPY.exists() or COPY.read_bytes() != data:
        COPY.write_bytes(data)
        print(f"copied {SOURCE.relative_to(ROOT)} -> {COPY.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
