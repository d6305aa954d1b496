"""The players' button colours (pure data)."""
from __future__ import annotations

# The players' button colours, P1 first (the lamps' caps): the big screen draws each player's
# badge in it, with the number inside (colour is never the only sign). [box] colours overrides.
NAMED_COLOURS = {"red": "#e5484d", "blue": "#3e8ef7", "green": "#30a46c", "yellow": "#f5d90a",
                 "orange": "#f76b15", "purple": "#a070e0", "white": "#eeeeee", "cyan": "#00c2d7",
                 "pink": "#e93d82", "black": "#3a3f45"}
DEFAULT_COLOURS = tuple(NAMED_COLOURS[c] for c in
                        ("red", "blue", "green", "yellow", "orange", "purple", "white", "cyan"))
