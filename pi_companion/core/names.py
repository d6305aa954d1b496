"""A player's name: the one rule for the config's names, the host's rename and the engine.

A name is what the OLED, the big screen, the game log and `pi-companion status` show in one
row, so it is short and one line of visible text: 1 to `NAME_MAX` characters once the spaces
around it are gone, and none of Unicode's control, format (bidi overrides and isolates, zero
widths), separator-of-lines or unassigned/private characters, which would split a row, reorder
what follows it on a page or draw nothing at all.
"""
from __future__ import annotations

import unicodedata

NAME_MAX = 16                # characters
# Cc control, Cf format (U+202E RIGHT-TO-LEFT OVERRIDE, U+2066 isolates, U+200B zero width),
# Cs surrogates, Co private use, Cn unassigned, Zl/Zp line and paragraph separators.
REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def name_problem(name: object) -> str | None:
    """Why `name` cannot be a player's name (one line, for the config or the page), or None."""
    if not isinstance(name, str) or not name.strip():
        return "a name must not be empty"
    # The length first: the character scan below then never looks at more than a name's worth.
    if len(name.strip()) > NAME_MAX:
        return f"a name must be 1 to {NAME_MAX} characters (this one has {len(name.strip())})"
    bad = next((c for c in name if unicodedata.category(c) in REFUSED_CATEGORIES), None)
    if bad is not None:
        return (f"a name must not contain control or invisible characters "
                f"(found U+{ord(bad):04X} {unicodedata.name(bad, 'unnamed')})")
    return None
