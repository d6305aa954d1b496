"""The `Game` protocol: what the engine needs of a game, and defaults for its optional parts.

A game is a pure state machine: `step(state, action) -> (state, effects)` on frozen state,
never a clock, a file or a pin. Illegal or irrelevant actions return the state unchanged. Each
game (games/*.py) implements it; the engine (core/engine.py) drives whatever it is given, so
`core` needs nothing of `games`: the composition root hands it a game and the catalogue of
the others (`Catalogue`, for the "Change game" menu).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .events import Action, Effect, Verdict

Effects = tuple[Effect, ...]
NO_EFFECTS: Effects = ()
Catalogue = Callable[[], "tuple[Game, ...]"]   # the games to switch to, in menu order


@dataclass(frozen=True)
class Option:
    """One game option as the host's remote offers it (a real control, generated from this):
    `kind` "int" (a number from `lo` to `hi` in steps of `step`; `zero` names what 0 means when
    0 lies outside lo..hi; `lo_players`: at least as many as the players), "choice" (one of `choices`) or "player" (one of the players, by
    name). `default` None: the game's own default (it may depend on the players). The game's
    `new_game` stays the judge of a value: this only describes what it accepts."""
    key: str
    label: str
    kind: str
    default: int | str | None = None
    lo: int = 0
    hi: int = 0
    step: int = 1
    choices: tuple[str, ...] = ()
    zero: str = ""
    lo_players: bool = False                # never fewer than the players (a card each)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "label": self.label, "kind": self.kind,
                               "default": self.default}
        if self.kind == "int":
            out.update(lo=self.lo, hi=self.hi, step=self.step)
            if self.zero:
                out["zero"] = self.zero
            if self.lo_players:
                out["lo_players"] = True
        if self.kind == "choice":
            out["choices"] = list(self.choices)
        return out


class Game:
    """Defaults for the optional parts of the game interface; each game overrides what it uses."""

    name = ""
    title = ""
    min_players = 2
    max_players = 8
    option_names: frozenset[str] = frozenset()
    options: tuple[Option, ...] = ()         # what the host's remote offers (a list option is not)
    # Whether `step` takes `BuzzOpened` (an eligible press opened a settle window: Hands Up!
    # stops its beats). A game that returns its state unchanged and no effects for it in every
    # state says False, and the engine does not make one (a frozen event and a step per buzz).
    hears_buzz_opened = True

    def new_game(self, players: tuple[str, ...], options: Mapping[str, Any], seed: int) -> Any:
        raise NotImplementedError

    def step(self, state: Any, action: Action) -> tuple[Any, Effects]:
        raise NotImplementedError

    def started(self, state: Any, t: float) -> Any:
        """A new game begins at `t` rather than at 0 (New game from the menu): move its timers."""
        return state

    def report(self, state: Any) -> dict[str, Any]:
        """Game keys of the replay report, including `over`, `winners` (indices) and `phase`."""
        raise NotImplementedError

    def is_over(self, state: Any) -> bool:
        return bool(self.report(state)["over"])

    def settle_s(self, state: Any) -> float:
        return 0.002

    def buzzers(self, state: Any) -> frozenset[int]:
        """Players whose press is a buzz right now (empty: presses go to the game as they are)."""
        return frozenset()

    def next_timer(self, state: Any) -> float | None:
        return None

    def lit(self, state: Any) -> frozenset[int]:
        """Players whose button LED is on."""
        return frozenset()

    def menu_items(self, state: Any) -> tuple[tuple[str, str], ...]:
        """Game entries for the on-box menu: (key, label); chosen ones arrive as MenuChoice.
        The same entries in the same places whatever the state: see `menu_disabled`."""
        return ()

    def menu_disabled(self, state: Any) -> frozenset[str]:
        """Keys of entries that do nothing right now (shown greyed, never removed)."""
        return frozenset()

    def menu_card(self, state: Any, key: str) -> tuple[str, tuple[str, ...]] | None:
        """A text card for menu entry `key` (title, lines), or None to send it as MenuChoice."""
        return None

    def rules_card(self) -> tuple[str, ...]:
        return ()

    def rules_card_for(self, state: Any) -> tuple[str, ...]:
        """The rules card for this game as set up (Grab Bag: one per variant)."""
        return self.rules_card()

    def is_undo_step(self, before: Any, after: Any) -> bool:
        """Whether a judgement that turned `before` into `after` is a step for undo (by default:
        whenever it changed the game). A game returns False for changes that are no judgement:
        a refused card clearing a note on screen, letting go of a picked player."""
        return True

    def is_menu_undo_step(self, before: Any, after: Any, key: str) -> bool:
        """Whether menu entry `key`, having turned `before` into `after`, changed the board: then
        it is an undo step of its own ("Undone: <its label>"), so long NO after it takes back
        it alone. By default no: a menu choice that opens a screen or pauses a beat is no move."""
        return False

    def open_buzz(self, state: Any) -> int | None:
        """After a judgement: the player whose buzz the game is judging again (All Wound Up: a
        check reopened by NO on its verdict), whose `last_buzz` then lists later presses; None
        (the default) when a judgement ends the buzz."""
        return None

    def undo_to(self, before: Any, now: Any) -> tuple[Any, str | None]:
        """The state long NO restores when the game is `now` and the last judgement was made on
        `before`: `before` itself, unless the table has moved on in ways it cannot take back
        (Hands Up!: cards flipped since). A reason instead refuses the undo."""
        return before, None

    def undo_label(self, state: Any, verdict: Verdict) -> str:
        """What a judgement on `state` did, for the "Undone: ..." notice."""
        return {"yes": "YES", "no": "NO", "special": "long YES"}[verdict]

    # ---- the big screen (core/snapshot.py): the game's words, read from its report ----

    score_key = ""                  # the report key of each player's standing ("": none shown)
    score_label = ""                # what the page calls it
    score_wins = ""                 # "high" or "low" ("": the score does not decide)
    turn_key = "current"            # the report key naming the player the board marks
    buzz_ask = ""                   # how a decided buzz is judged ("": no buzz is judged)

    def score(self, report: dict[str, Any]) -> tuple[str, str, str]:
        """(key, label, wins) of the standing the board shows for this report."""
        return self.score_key, self.score_label, self.score_wins

    def board_turn(self, report: dict[str, Any]) -> str | None:
        """The player the board marks (whose turn it is), or None."""
        player = report.get(self.turn_key)
        return player if isinstance(player, str) else None

    def turn_word(self, report: dict[str, Any]) -> str:
        """What the marked player is doing."""
        return "their turn"

    def board_facts(self, report: dict[str, Any]) -> list[dict[str, str]]:
        """The small counts in the OLED's corners, as label/value pairs."""
        return []

    def player_notes(self, report: dict[str, Any]) -> dict[str, str]:
        """A short line under a player's name."""
        return {}

    def players_out(self, report: dict[str, Any]) -> frozenset[str]:
        """Players sitting out now (Grab Bag: a seeker judged wrong, for the rest of the round)."""
        return frozenset()

    def board_moment(self, report: dict[str, Any]) -> dict[str, Any] | None:
        """What is happening now, to be drawn large (a game not over, no buzz being judged);
        None: the phase, as text."""
        return None

    def winners_phrase(self, report: dict[str, Any]) -> str:
        """The line under the winners' names."""
        return ""

    def board_extra(self, report: dict[str, Any]) -> dict[str, Any]:
        """The game's own keys of the board view (All Wound Up: its wind check)."""
        return {}


def players_problem(rules: Game, count: int) -> str | None:
    """Why `count` players cannot play `rules` (None: they can): "Grab Bag takes 2 to 4 players"."""
    if rules.min_players <= count <= rules.max_players:
        return None
    return f"{rules.title} takes {players_range(rules)}"


def players_range(rules: Game) -> str:
    """How many play `rules`, as the box says it: "2 to 4 players"."""
    return f"{rules.min_players} to {rules.max_players} players"
