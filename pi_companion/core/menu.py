"""The on-box menu: a list walked with the encoder, YES to choose, NO or MENU to leave.

Shut down stands three detents from Change game and acts only on a held YES (`HOLD`): one
detent too many and two quick YES presses, a slip a child's finger makes, never power the box
off."""
from __future__ import annotations

from .frozen import lazy_frozen, replace


CARD_LINES = 5          # lines of a text card on screen at once
# Entries that ask a second YES, so no slip of a child's finger throws a game away.
CONFIRM = {"new": "New game?", "switch": "Change game?", "shutdown": "Shut down?", "evening": "End evening?",
           "names": "New players?"}      # MENU > Players: names:N:set (a new game with them)
# Entries a second short YES does not act on: YES held (its long press, 1 s) does it.
HOLD = {"shutdown": "hold YES: off"}
PLAY_AGAIN = (("new", "Play again?"),)    # YES at game over: this, waiting for its second YES
# The box's own entries, after the game's: Shut down three detents from Change game, and a
# held YES besides (`HOLD`); About below it; Players and Show on TV / phone stay last (two and
# one detents back from the top).
BOX_ENTRIES = (("new", "New game"), ("test", "Button test"), ("switch", "Change game"),
               ("close", "Back to game"), ("evening", "End evening"), ("shutdown", "Shut down"),
               ("about", "About"), ("players", "Players"), ("web", "Show on TV / phone"))


def confirm_lines(menu: "Menu") -> tuple[str, str]:
    """The question a confirmation asks and how to say yes to it (the OLED's two lines)."""
    if menu.items == PLAY_AGAIN:
        return menu.items[0][1], "YES again: yes"
    key = menu.confirm.split(":")[0]
    return CONFIRM.get(key, "Sure?"), HOLD.get(key, "YES again: yes")


@lazy_frozen        # made when a menu first opens, not on the way to READY (core/frozen.py)
class Menu:
    items: tuple[tuple[str, str], ...]          # (key, label)
    cursor: int = 0
    card: tuple[str, ...] = ()                  # a text card being shown (rules, bank, ...)
    card_title: str = ""
    button_test: bool = False
    dial: int = 0                               # encoder detents counted in the button test
    top: int = 0                                # first card line shown (the encoder scrolls)
    disabled: frozenset[str] = frozenset()      # entries shown greyed: YES on them does nothing
    confirm: str = ""                           # an entry waiting for its second YES
    qr: str = ""                                # a QR code on screen: "board", "host" or "wifi";
                                                # "about": the version and the box's address
    why: tuple[tuple[str, str], ...] = ()       # (key, why it is greyed): the title line says it
                                                # while the cursor is on that entry

    def move(self, delta: int) -> "Menu":
        if self.button_test:
            return replace(self, dial=self.dial + delta)
        if self.card:
            return replace(self, top=max(0, min(self.top + delta, len(self.card) - CARD_LINES)))
        if not self.items:
            return self
        return replace(self, cursor=(self.cursor + delta) % len(self.items), confirm="")

    @property
    def selected(self) -> str:
        return self.items[self.cursor][0] if self.items else ""

    @property
    def title(self) -> str:
        """The list's top line: MENU, or why the entry under the cursor is greyed."""
        return dict(self.why).get(self.selected, "MENU") if self.selected in self.disabled else "MENU"

    def show_card(self, title: str, lines: tuple[str, ...]) -> "Menu":
        return replace(self, card=lines or ("(empty)",), card_title=title)

    def back(self) -> "Menu | None":
        """NO: leave a card, the button test or a confirmation, else close the menu."""
        if self.confirm:
            return replace(self, confirm="")
        if self.card or self.button_test:
            return replace(self, card=(), card_title="", button_test=False, dial=0, top=0)
        return None
