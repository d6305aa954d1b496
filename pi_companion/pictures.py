"""Screenshots kept in the repository (`make screenshots`): written only when the picture changed."""
from __future__ import annotations

from pathlib import Path

from PIL import Image


def write_if_changed(path: Path, image: Image.Image) -> bool:
    """Save `image` as `path` unless the file there already holds the same picture (same size,
    same pixels): a tracked screenshot is rewritten only when the screen changed, so a run on
    a clean checkout leaves it clean. True if written."""
    try:
        with Image.open(path) as old:
            if old.size == image.size and old.convert("RGBA").tobytes() == image.convert("RGBA").tobytes():
                return False
    except (OSError, ValueError):            # absent or unreadable: write it
        pass
    image.save(path, optimize=True)
    return True
