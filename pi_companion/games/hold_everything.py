"""Hold Everything!: the deal, the die, whose turn it is, the pawns, the card stack and the drops.

The box keeps what slows a table down: it deals the object cards, rolls the die, moves the
pawns round the 15 playing-field cards (so it knows who shares a card), asks which colour the
pawn landed on, draws object cards (face up, out of the game, reshuffled), counts extra
objects taken for drops (at most 4 per player per turn) and skips stopped players. The objects
themselves stay on the players' arms: the box does not track who holds which one. A player
who has put everything down holds their button for 2 s and wins.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core import rand
from ..core.events import Action, Dial, Judge, MenuChoice, PlayerHold, PlayerPress, Sound, Tick, Verdict
from ..core.frozen import replace
from ..core.snapshot import facts, text_moment
from .base import NO_EFFECTS, Effects, Game, Option, OptionError, check_known, opt_names, opt_player

FIELD_CARDS = 15                 # the playing-field cards laid out in a circle; the start card is 0
DEALT = 3                        # object cards each player takes at the start
PER_PLAYER = 5                   # objects the rulebook wants per player
MAX_EXTRAS = 4                   # extra objects one player may take in one and the same turn
ROLL_FRAMES = 4                  # die faces shown while rolling, one per ROLL_FRAME_S
ROLL_FRAME_S = 0.15              # so the roll resolves 0.6 s after the press
PICK_S = 5.0                     # a player picked for a drop is let go after this long
CARDS = ("stop", "dice", "start", "gift", "stack")
COLOURS = {"stop": "blue", "dice": "green", "start": "grey", "gift": "yellow", "stack": "red"}
OBJECTS = (
    "sock", "slipper", "spoon", "cup", "book", "pillow", "hairbrush", "toothbrush",
    "coat hanger", "plush toy", "ball", "bottle", "shoe", "hat", "scarf", "glove",
    "towel", "pencil case", "remote", "wooden spoon", "sponge", "shoebox", "pot lid", "ruler",
    "banana", "apple", "plastic plate", "clothes peg", "tape roll", "sunglasses", "wallet",
    "key ring", "comb", "cushion", "egg cup", "teddy", "tea towel", "flip-flop", "mitten",
    "frisbee",
)


@dataclass(frozen=True)
class HoldEverything:
    """Hold Everything's state between two steps (each step returns a new one)."""
    players: tuple[str, ...]
    objects: tuple[str, ...]                 # the object cards in play (one per object)
    dealt: tuple[tuple[str, ...], ...]       # the three objects each player started with
    stack: tuple[str, ...]                   # face-down object cards, top first
    first: int
    pawns: tuple[int, ...]                   # field card under each pawn (0 = the start card)
    extras: tuple[int, ...]                  # extra objects taken for drops, whole game
    extras_turn: tuple[int, ...]             # ... in the current turn
    rng: int
    warning: str | None = None
    face_up: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()            # cards (and objects) out of the game
    phase: str = "setup"                     # setup | turn | rolling | colour | stack | over
    page: int = 0                            # setup: whose objects are shown
    current: int = 0
    turn: int = 0                            # turns started, from 1 once play begins
    rolls: int = 0
    die: int | None = None
    roll_due: float | None = None            # rolling: when the next die face shows
    roll_frame: int = 0
    again: bool = False                      # the dice card: the same player rolls again
    field: tuple[str | None, ...] = ("start",) + (None,) * (FIELD_CARDS - 1)
    choice: int = 0                          # colour: the card under the encoder
    card: str | None = None                  # the last field card acted on
    mates: tuple[int, ...] = ()              # pawns already on the card just landed on
    drawn: str | None = None                 # the object card just drawn
    skips: frozenset[int] = frozenset()      # players who skip their next turn
    dropper: int | None = None               # a player picked (their button) for a drop
    picked_at: float = 0.0
    exchange_with: int | None = None         # the start card's random fellow player
    claiming: bool = False                   # MENU > Someone has won: the next button press wins
    last: tuple[str, ...] = ()               # what the last field card did, for the screen
    last_drop: str = ""                      # the last drop and its extra object
    winner: int | None = None

    @property
    def n(self) -> int:
        return len(self.players)

    def name(self, player: int) -> str:
        return self.players[player]


# The die's colours as the big screen says them.
COLOUR_WORDS = {"stop": "blue", "dice": "green", "start": "grey", "gift": "yellow", "stack": "red"}


class HoldEverythingGame(Game):
    name = "hold-everything"
    title = "Hold Everything!"
    min_players = 2
    max_players = 8
    option_names = frozenset({"objects", "first_player"})
    options = (Option("first_player", "First player", "player"),)

    def new_game(self, players: tuple[str, ...], options: Mapping[str, Any], seed: int) -> HoldEverything:
        check_known(options, self.option_names)
        n = len(players)
        objects, warning = _objects(options, n)
        first = opt_player(options, "first_player", players)
        rng = rand.seed_state(seed, 3)
        cards, rng = rand.shuffled(rng, objects)
        dealt = tuple(cards[i * DEALT:(i + 1) * DEALT] for i in range(n))
        stack, rng = rand.shuffled(rng, cards)       # everyone returns their cards; reshuffle
        zeros = (0,) * n
        return HoldEverything(players=tuple(players), objects=objects, dealt=dealt, stack=stack,
                              first=first, pawns=zeros, extras=zeros, extras_turn=zeros, rng=rng,
                              warning=warning, current=first)

    def is_over(self, state: HoldEverything) -> bool:
        return state.phase == "over"

    def next_timer(self, state: HoldEverything) -> float | None:
        due = [state.roll_due] if state.phase == "rolling" and state.roll_due is not None else []
        if state.dropper is not None:
            due.append(state.picked_at + PICK_S)
        return min(due) if due else None

    def lit(self, state: HoldEverything) -> frozenset[int]:
        if state.phase in ("setup", "over"):
            return frozenset()
        if state.claiming:
            return frozenset(range(state.n))
        return frozenset({state.current} | ({state.dropper} if state.dropper is not None else set()))

    def step(self, state: HoldEverything, action: Action) -> tuple[HoldEverything, Effects]:
        if state.phase == "over":
            return state, NO_EFFECTS
        if isinstance(action, Tick):
            return _tick(state, action.t)
        if state.claiming and isinstance(action, (PlayerPress, Judge)):
            return _claiming(state, action)
        if isinstance(action, PlayerHold):
            return _claim(state, action.player)
        if isinstance(action, MenuChoice) and action.key == "claim" and state.phase != "setup":
            return replace(state, claiming=True, dropper=None), NO_EFFECTS
        if isinstance(action, PlayerPress):
            return _press(state, action.player, action.t)
        if isinstance(action, Dial):
            return _dial(state, action.delta), NO_EFFECTS
        if isinstance(action, Judge):
            return _judge(state, action.verdict)
        return state, NO_EFFECTS

    def report(self, state: HoldEverything) -> dict[str, Any]:
        names = state.players
        return {
            "over": state.phase == "over",
            "winners": [state.winner] if state.winner is not None else [],
            "phase": state.phase,
            "current": names[state.current],
            "showing": names[state.page] if state.phase == "setup" else None,
            "turn": state.turn,
            "rolls": state.rolls,
            "die": state.die,
            "choice": CARDS[state.choice] if state.phase == "colour" else None,
            "card": state.card,
            "mates": [names[p] for p in state.mates],
            "pawns": dict(zip(names, state.pawns)),
            "objects": list(state.objects),
            "dealt": {names[i]: list(d) for i, d in enumerate(state.dealt)},
            "stack": len(state.stack),
            "face_up": list(state.face_up),
            "removed": list(state.removed),
            "drawn": state.drawn,
            "skips": [names[p] for p in sorted(state.skips)],
            "extras": dict(zip(names, state.extras)),
            "extras_this_turn": dict(zip(names, state.extras_turn)),
            "dropper": None if state.dropper is None else names[state.dropper],
            "claiming": state.claiming,
            "exchange_with": None if state.exchange_with is None else names[state.exchange_with],
            "last": "; ".join(state.last),
            "last_drop": state.last_drop,
            "warning": state.warning,
        }

    def undo_label(self, state: HoldEverything, verdict: Verdict) -> str:
        who = state.name(state.dropper if state.dropper is not None else state.current)
        if state.phase == "setup":
            return "start of play"
        if state.claiming:
            return "win claim"
        if state.dropper is not None:
            return f"drop by {who}" if verdict == "no" else f"letting go of {who}"
        if state.phase == "colour" and verdict == "yes":
            return f"{CARDS[state.choice]} card for {who}"
        if state.phase == "stack":
            return f"{state.drawn}: {'had it' if verdict == 'yes' else 'not had'}"
        return f"drop by {who}"

    def is_undo_step(self, before: HoldEverything, after: HoldEverything) -> bool:
        """YES letting go of a picked dropper undoes nothing: it is the same as pressing their
        button again, which is no judgement either."""
        return not (before.dropper is not None and after == replace(before, dropper=None))

    def menu_items(self, state: HoldEverything) -> tuple[tuple[str, str], ...]:
        return (("claim", "Someone has won"), ("stack", "Card stack"))

    def menu_disabled(self, state: HoldEverything) -> frozenset[str]:
        return frozenset({"claim"}) if state.phase in ("setup", "over") else frozenset()

    def menu_card(self, state: HoldEverything, key: str) -> tuple[str, tuple[str, ...]] | None:
        if key != "stack":
            return None
        return ("Card stack", (f"face down: {len(state.stack)}",
                               f"face up: {len(state.face_up)}",
                               f"out of game: {len(state.removed)}",
                               f"last drawn: {state.drawn or '-'}"))

    def rules_card(self) -> tuple[str, ...]:
        return ("Your button: roll", "Dial+YES: card colour", "Stack: YES had it/NO not",
                "NO: drop, +1 object", "Hold button 2s: I won")


# ---- setup ----

    # ---- the big screen (core/snapshot.py) ----

    score_key, score_label = "pawns", "pawn's space"

    def board_facts(self, report: dict[str, Any]) -> list[dict[str, str]]:
        return facts(("Turn", report.get("turn")), ("Stack", report.get("stack")),
                     ("Face up", len(report.get("face_up") or ())))

    def winners_phrase(self, report: dict[str, Any]) -> str:
        return "holds nothing!"

    def board_moment(self, report: dict[str, Any]) -> dict[str, Any]:
        who, phase = report.get("current"), report["phase"]
        if report.get("claiming"):
            return text_moment("Who holds nothing?", "press your button \u00b7 NO: back to the game",
                               title="Claim")
        if phase == "setup":
            showing = report.get("showing")
            return text_moment(f"{showing}'s objects", ", ".join(report["dealt"].get(showing, [])),
                               title="Deal")
        if phase == "rolling":
            return {"kind": "die", "big": f"{who} rolls\u2026", "small": "", "die": None, "player": who}
        if phase == "colour":
            mates = " or ".join(report.get("mates") or ())
            choice = str(report.get("choice"))
            return {"kind": "die", "big": f"{who} rolled {report.get('die')}",
                    "small": f"give one to {mates}" if mates else
                    f"which card? {choice.upper()} ({COLOUR_WORDS.get(choice, '?')}): YES",
                    "die": report.get("die"), "player": who}
        if phase == "stack":
            return text_moment(f"{who} draws {report.get('drawn') or '?'}", "had it? YES / NO", title="Stack")
        if report.get("dropper"):        # a player's button picked them: the OLED's strip says NO drops
            return text_moment(f"{report['dropper']} dropped?", "NO: drop, +1 object \u00b7 YES: let go",
                               title="Drop", player=report["dropper"])
        return text_moment(f"{who}'s turn", report.get("last_drop") or report.get("last") or "press your button",
                           title="Turn", player=who)

def _objects(options: Mapping[str, Any], n: int) -> tuple[tuple[str, ...], str | None]:
    """The first 5 per player of the object list; too few to deal is an error, short a warning."""
    names = opt_names(options, "objects", OBJECTS)
    wanted = PER_PLAYER * n
    if len(names) < DEALT * n:
        raise OptionError(f"options.objects: {n} players need at least {DEALT * n} objects to deal "
                          f"(the rulebook asks for {wanted}), got {len(names)}")
    if len(names) < wanted:
        return names, f"too few: {len(names)} of {wanted} objects"
    return names[:wanted], None


def _start_play(state: HoldEverything) -> tuple[HoldEverything, Effects]:
    return replace(state, phase="turn", current=state.first, turn=1, page=0), (Sound("target"),)


# ---- inputs ----

def _press(state: HoldEverything, player: int, t: float) -> tuple[HoldEverything, Effects]:
    if state.phase == "setup":
        return replace(state, page=player), NO_EFFECTS
    if state.phase == "turn" and player == state.current:
        return _start_roll(state, t)
    return replace(state, dropper=None if state.dropper == player else player, picked_at=t), NO_EFFECTS


def _dial(state: HoldEverything, delta: int) -> HoldEverything:
    if state.phase == "setup":
        return replace(state, page=(state.page + delta) % state.n)
    if state.phase == "colour" and state.pawns[state.current] != 0:
        return replace(state, choice=(state.choice + delta) % len(CARDS))   # the start card: fixed
    return state


def _judge(state: HoldEverything, verdict: Verdict) -> tuple[HoldEverything, Effects]:
    if state.phase == "setup":
        return _start_play(state) if verdict == "yes" else (state, NO_EFFECTS)
    if verdict == "special":
        return state, NO_EFFECTS
    if state.dropper is not None:
        if verdict == "yes":
            return replace(state, dropper=None), NO_EFFECTS
        return _drop(state, state.dropper)
    if state.phase == "stack":
        return _had_it(state) if verdict == "yes" else _not_had(state)
    if verdict == "no":
        return _drop(state, state.current)
    if state.phase == "colour":
        return _land(state)
    return state, NO_EFFECTS


def _claiming(state: HoldEverything, action: PlayerPress | Judge) -> tuple[HoldEverything, Effects]:
    """MENU > Someone has won: the next player button wins; NO goes back to the game."""
    if isinstance(action, PlayerPress):
        return _claim(state, action.player)
    if action.verdict == "no":
        return replace(state, claiming=False), NO_EFFECTS
    return state, NO_EFFECTS


def _claim(state: HoldEverything, player: int) -> tuple[HoldEverything, Effects]:
    """A button held 2 s: that player has put down every object and wins."""
    if state.phase == "setup":
        return state, NO_EFFECTS
    return replace(state, phase="over", winner=player, dropper=None, roll_due=None, claiming=False,
                   last=(f"{state.name(player)} holds nothing!",)), NO_EFFECTS


# ---- the die ----

def roll_die(rng: int) -> tuple[int, int]:
    """One fair six-sided die: (pips 1-6, new random state)."""
    value, rng = rand.below(rng, 6)
    return value + 1, rng


def rolling_face(state: HoldEverything) -> int:
    """The face shown while the die tumbles (looks random, uses no randomness)."""
    return (state.roll_frame * 4 + state.rolls * 5 + state.current) % 6 + 1


def _start_roll(state: HoldEverything, t: float) -> tuple[HoldEverything, Effects]:
    return replace(state, phase="rolling", roll_due=t + ROLL_FRAME_S, roll_frame=1, dropper=None,
                   again=False, mates=(), exchange_with=None), (Sound("roll"),)


def _tick(state: HoldEverything, t: float) -> tuple[HoldEverything, Effects]:
    if state.dropper is not None and t >= state.picked_at + PICK_S:
        state = replace(state, dropper=None)
    if state.phase != "rolling" or state.roll_due is None or t < state.roll_due:
        return state, NO_EFFECTS
    if state.roll_frame < ROLL_FRAMES:
        return replace(state, roll_frame=state.roll_frame + 1, roll_due=state.roll_due + ROLL_FRAME_S), NO_EFFECTS
    die, rng = roll_die(state.rng)
    return _move(replace(state, die=die, rng=rng, rolls=state.rolls + 1, roll_due=None)), NO_EFFECTS


def _move(state: HoldEverything) -> HoldEverything:
    """1st action: the pawn goes `die` cards clockwise; the colour question comes next."""
    me = state.current
    spot = (state.pawns[me] + (state.die or 0)) % FIELD_CARDS
    pawns = _set(state.pawns, me, spot)
    mates = tuple(p for p in range(state.n) if p != me and pawns[p] == spot)
    known = state.field[spot]
    return replace(state, phase="colour", pawns=pawns, mates=mates,
                   choice=CARDS.index(known) if known is not None else 0)


# ---- the field card (2nd and 3rd actions) ----

def _land(state: HoldEverything) -> tuple[HoldEverything, Effects]:
    card = CARDS[state.choice]
    me = state.current
    field = _set(state.field, state.pawns[me], card)
    state = replace(state, card=card, field=field, last=_give_line(state))
    if card == "stop":
        return _end_turn(_say(replace(state, skips=state.skips | {me}), f"stop: {state.name(me)} skips next turn"))
    if card == "dice":
        return _say(replace(state, phase="turn", again=True), "dice: roll again!"), (Sound("target"),)
    if card == "start":
        fellow, rng = rand.choice(state.rng, [p for p in range(state.n) if p != me])
        out = replace(state, exchange_with=fellow, rng=rng)
        return _end_turn(_say(out, f"start: swap with {state.name(fellow)}"))
    if card == "gift":
        return _end_turn(_say(state, f"gift: 1 object to {state.name((me + 1) % state.n)}"))
    return _draw(state)


def _give_line(state: HoldEverything) -> tuple[str, ...]:
    """2nd action: pawns already on that card: give one object to one of them."""
    if not state.mates:
        return ()
    return (f"give 1 to {' or '.join(state.name(p) for p in state.mates)}",)


def _draw(state: HoldEverything) -> tuple[HoldEverything, Effects]:
    """The red stack card: the top object card is turned over."""
    state = _reshuffle_if_empty(state)
    if not state.stack:
        return _end_turn(_say(state, "stack: no cards left"))
    return replace(state, phase="stack", drawn=state.stack[0], stack=state.stack[1:]), (Sound("target"),)


def _had_it(state: HoldEverything) -> tuple[HoldEverything, Effects]:
    obj = state.drawn or ""
    out = replace(state, removed=state.removed + (obj,))
    out = _say(out, f"{obj} leaves the game")
    return _end_turn(_reshuffle_if_empty(out), Sound("correct"))


def _not_had(state: HoldEverything) -> tuple[HoldEverything, Effects]:
    obj = state.drawn or ""
    out = replace(state, face_up=state.face_up + (obj,))
    out = _say(out, f"{state.name(state.current)} gets the {obj}")
    return _end_turn(_reshuffle_if_empty(out))


def _reshuffle_if_empty(state: HoldEverything) -> HoldEverything:
    """The face-down stack is used up: the face-up cards become a new, shuffled stack."""
    if state.stack or not state.face_up:
        return state
    stack, rng = rand.shuffled(state.rng, state.face_up)
    return _say(replace(state, stack=stack, face_up=(), rng=rng), "stack reshuffled")


# ---- drops and turns ----

def _drop(state: HoldEverything, player: int) -> tuple[HoldEverything, Effects]:
    """A drop: pick it up and take one extra object, at most 4 per player in one turn."""
    if state.extras_turn[player] >= MAX_EXTRAS:
        return state, (Sound("wrong"),)
    taken = state.extras_turn[player] + 1
    out = replace(state, extras=_set(state.extras, player, state.extras[player] + 1),
                  extras_turn=_set(state.extras_turn, player, taken), dropper=None,
                  last_drop=f"{state.name(player)}: +1 extra ({taken}/{MAX_EXTRAS})")
    return out, (Sound("wrong"),)


def _end_turn(state: HoldEverything, *sounds: Sound) -> tuple[HoldEverything, Effects]:
    """Clockwise to the next player; a stopped player's turn is skipped once."""
    skips, nxt = set(state.skips), (state.current + 1) % state.n
    skipped = []
    while nxt in skips:
        skips.discard(nxt)
        skipped.append(state.name(nxt))
        nxt = (nxt + 1) % state.n
    out = replace(state, phase="turn", current=nxt, turn=state.turn + 1, skips=frozenset(skips),
                  extras_turn=(0,) * state.n, dropper=None, again=False, last_drop="")
    for name in skipped:
        out = _say(out, f"{name} skips this turn")
    return out, tuple(sounds) or (Sound("tick"),)


def _say(state: HoldEverything, line: str) -> HoldEverything:
    return replace(state, last=state.last + (line,))


def _set(values: tuple[Any, ...], index: int, value: Any) -> tuple[Any, ...]:
    return values[:index] + (value,) + values[index + 1:]


GAME = HoldEverythingGame()
