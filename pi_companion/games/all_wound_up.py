"""All Wound Up: the wind check on the turntable's hall sensors, plus the Brain-token bank and round guide.

Wind check (replay contract): in `idle` a player's press opens a check for them (`winding`, target
1 turn; two presses within the engine's settle window: the earliest edge wins); the encoder sets the target (0 to `max_target`) until the first hall step; steps count
net from the opening (4 per turn, `direction` counted positive); the check closes on short YES or
when `settle_ms` passes with no hall edge after at least one step. Verdict: `exact` when
|steps - 4 * target| <= `tolerance_steps`, else `too-few` / `too-many`. Short NO cancels the
check without a verdict; a puck reset makes it `void`. The live screen and the `target` beep say
"on target" at exactly 4N steps; the tolerance (sensor jitter) is applied to the verdict only.
Short NO on a verdict reopens that check (he is still winding); a player's button held 2 s
claims the gate, YES confirms: the game is over.

The bank and the guide are screens over the game (`screen`), never phases: see
docs/games/all-wound-up.md for their controls.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..core import rand
from ..core.events import (Action, Buzz, Dial, HallStep, Judge, MenuChoice, PlayerHold, PlayerPress,
                           PuckReset, Sound, Tick, Undone, Verdict)
from ..core.frozen import replace
from ..core.snapshot import facts, text_moment
from . import brain_bank as bb
from . import round_guide as rg
from .wound_up_board import screen_moment
from .base import NO_EFFECTS, Effects, Game, Option, check_known, opt_choice, opt_int, opt_player

STEPS_PER_TURN = 4
MAX_HAND = 30


@dataclass(frozen=True)
class Check:
    """An open wind check: net steps since it opened, in the winding direction."""
    player: int
    target: int = 1
    steps: int = 0
    stepped: bool = False            # a hall step has come: the dial no longer sets the target
    missed: int = 0                  # missed edges (both sensors changed at once)
    last_edge: float | None = None   # the latest hall edge, for the settle timer


@dataclass(frozen=True, slots=True)
class Attempt:
    """A closed check. Slotted: a long game keeps thousands (a resumed 1 000 000-record log
    holds 55 000: 4.4 MB slotted, 7 MB with a dict each)."""
    player: int
    target: int
    steps: int
    verdict: str                     # exact | too-few | too-many | void
    missed: int = 0
    last_edge: float | None = None   # the check's last hall edge, for reopening it


class Attempts:
    """The closed checks, oldest first: an immutable sequence that grows at its end without
    copying all that came before. A tuple copied whole on every close made a long game - and
    resuming its log - quadratic: at 600 000 logged records (33 000 checks) the copies cost
    more than everything else in the fold. Here the items sit in full chunks of `CHUNK`,
    shared between versions, and a short tail; a close copies the tail only (and, once per
    `CHUNK` closes, the tuple of chunks).

    What the game and its screen use: `len`, truth, `[-1]`, `[:-1]`, `+ (attempt,)`, iteration,
    equality (with another `Attempts` or a tuple) and hashing, as a tuple of the same items."""
    __slots__ = ("_chunks", "_tail", "_len")
    CHUNK = 256

    def __init__(self, items: Any = ()) -> None:
        items = tuple(items)
        cut = len(items) - len(items) % self.CHUNK
        self._chunks = tuple(items[i:i + self.CHUNK] for i in range(0, cut, self.CHUNK))
        self._tail: tuple[Attempt, ...] = items[cut:]
        self._len = len(items)

    @classmethod
    def _of(cls, chunks: tuple[tuple[Attempt, ...], ...], tail: tuple[Attempt, ...], n: int) -> Attempts:
        new = object.__new__(cls)
        new._chunks, new._tail, new._len = chunks, tail, n
        return new

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Any:
        for chunk in self._chunks:
            yield from chunk
        yield from self._tail

    def __getitem__(self, index: Any) -> Any:
        if index == -1 and self._len:
            return self._tail[-1] if self._tail else self._chunks[-1][-1]
        if isinstance(index, slice) and index == slice(None, -1, None) and self._len:
            if self._tail:
                return self._of(self._chunks, self._tail[:-1], self._len - 1)
            return self._of(self._chunks[:-1], self._chunks[-1][:-1], self._len - 1)
        if isinstance(index, slice):
            return Attempts(tuple(self)[index])
        return tuple(self)[index]

    def __add__(self, more: tuple[Attempt, ...]) -> Attempts:
        chunks, tail = self._chunks, self._tail + tuple(more)
        while len(tail) >= self.CHUNK:
            chunks, tail = chunks + (tail[:self.CHUNK],), tail[self.CHUNK:]
        return self._of(chunks, tail, self._len + len(more))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, tuple):
            return tuple(self) == other
        if not isinstance(other, Attempts):
            return NotImplemented
        return self._len == other._len and self._tail == other._tail and self._chunks == other._chunks

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"Attempts({tuple(self)!r})"


EMPTY = Attempts()


@dataclass(frozen=True)
class BankAction:
    """One thing the bank screen can do: gain, upgrade, spend or steal (yellow, from `victim`)."""
    player: int
    kind: str
    colour: int = bb.BLACK
    victim: int = -1


@dataclass(frozen=True)
class Pick:
    """Yellow: the box's random card from an opponent's hand, counted from the left."""
    player: int
    victim: int
    card: int
    hand: int


@dataclass(frozen=True)
class Ask:
    """Yellow chosen: the table confirms the opponent's hand size with the dial, then YES picks."""
    player: int
    victim: int
    hand: int


@dataclass(frozen=True)
class AllWoundUp:
    """All Wound Up's state between two steps (each step returns a new one)."""
    players: tuple[str, ...]
    direction: str
    tolerance: int
    settle_ms: int
    max_target: int
    bank: bb.Bank
    guide: rg.Guide
    hands: tuple[int, ...]               # hand sizes the box believes (10 after each deal)
    rng: int
    check: Check | None = None
    attempts: Attempts = EMPTY
    missed_edges: int = 0
    screen: str = "main"                 # main | bank | guide (never the phase)
    selected: BankAction | None = None   # the bank screen's cursor
    ask: Ask | None = None
    shown: Pick | None = None            # a pick result on the bank screen until the next input
    picks: tuple[Pick, ...] = ()
    used: BankAction | None = None       # the bank action just done: the cursor stays on it
    since: int = 0                       # net steps wound since the last check closed (for reopening),
                                         # whatever opened or was cancelled in between
    claim: int | None = None             # a player says they crossed the gate: YES confirms
    winner: int | None = None            # the first across the gate: the game is over

    @property
    def n(self) -> int:
        return len(self.players)

    @property
    def phase(self) -> str:
        if self.winner is not None:
            return "over"
        return "idle" if self.check is None else "winding"


# A check's verdict as the big screen says it.
BOARD_VERDICTS = {"exact": "EXACT", "too-few": "TOO FEW", "too-many": "TOO MANY", "void": "NO WIND"}
QUARTERS = ("", "\u00bc", "\u00bd", "\u00be")


def quarters(steps: int) -> str:
    """Quarter turns as a family says them: 9 -> "2\u00bc", 2 -> "\u00bd", 0 -> "0"."""
    n = abs(steps)
    whole, q = divmod(n, 4)
    return ("\u2212" if steps < 0 else "") + (str(whole) if whole or not q else "") + QUARTERS[q]


def _turns(target: int) -> str:
    """A card's target as said: "1 turn", "3 turns"."""
    return f"{target} turn" if target == 1 else f"{target} turns"


class AllWoundUpGame(Game):
    name = "all-wound-up"
    title = "All Wound Up"
    min_players = 2
    max_players = 4
    hears_buzz_opened = False      # (its step ignores BuzzOpened)
    option_names = frozenset({"direction", "tolerance_steps", "settle_ms", "max_target", "first_dealer"})
    options = (Option("direction", "Winding direction", "choice", "cw", choices=("cw", "ccw")),
               Option("tolerance_steps", "Tolerance (quarter turns)", "int", 1, 0, 8),
               Option("settle_ms", "Stop after still (ms)", "int", 1500, 100, 10000, 100),
               Option("max_target", "Most turns a card asks", "int", 6, 1, 12),
               Option("first_dealer", "First dealer", "player"))

    def new_game(self, players: tuple[str, ...], options: Mapping[str, Any], seed: int) -> AllWoundUp:
        check_known(options, self.option_names)
        n = len(players)
        return AllWoundUp(
            players=tuple(players),
            direction=opt_choice(options, "direction", "cw", ("cw", "ccw")),
            tolerance=opt_int(options, "tolerance_steps", 1, 0, 8),
            settle_ms=opt_int(options, "settle_ms", 1500, 100, 10000),
            max_target=opt_int(options, "max_target", 6, 1, 12),
            bank=bb.new_bank(n),
            guide=rg.new_guide(n, opt_player(options, "first_dealer", players)),
            hands=(rg.DEAL,) * n,
            rng=rand.seed_state(seed, 3),
        )

    # ---- engine hooks ----

    def is_over(self, state: AllWoundUp) -> bool:
        return state.winner is not None

    def buzzers(self, state: AllWoundUp) -> frozenset[int]:
        """Who may open a check: everyone, while none is open and no screen takes the buttons."""
        if state.check is not None or state.screen == "bank" or state.claim is not None or state.winner is not None:
            return frozenset()
        return frozenset(range(state.n))

    def next_timer(self, state: AllWoundUp) -> float | None:
        return None if state.screen == "bank" else settle_due(state)

    def lit(self, state: AllWoundUp) -> frozenset[int]:
        if state.screen == "bank":
            chosen = cursor(state)
            return frozenset() if chosen is None else frozenset({chosen.player})
        if state.screen == "guide":
            return frozenset(rg.current(state.guide).order[:1])
        if state.winner is not None:
            return frozenset({state.winner})
        if state.claim is not None:
            return frozenset({state.claim})
        return frozenset() if state.check is None else frozenset({state.check.player})

    def menu_items(self, state: AllWoundUp) -> tuple[tuple[str, str], ...]:
        return (("bank", "Brain tokens"), ("guide", "Round guide"), ("token-help", "Token effects"))

    def menu_card(self, state: AllWoundUp, key: str) -> tuple[str, tuple[str, ...]] | None:
        if key != "token-help":
            return None
        return ("Brain tokens", ("black: -1 turn (winding)", "purple: turn 180 max",
                                 "green: +1 turn (winding)", "yellow: card of opponent",
                                 "red: card bid +1"))

    def rules_card(self) -> tuple[str, ...]:
        return ("Press your button, dial", "the card's turns, wind.", "Stop or YES: verdict;",
                "NO cancels. NO on a", "verdict: wind on. Hold", "YES: tokens; YES: guide.",
                "Hold your button 2s:", "I crossed the gate.")

    def open_buzz(self, state: AllWoundUp) -> int | None:
        """The player whose check is open on the main screens (a check reopened by NO on its
        verdict too): presses meanwhile are listed in `last_buzz`. On the bank screen and
        during a gate claim the buttons are the screen's."""
        if state.check is None or state.screen == "bank" or state.claim is not None:
            return None
        return state.check.player

    def undo_label(self, state: AllWoundUp, verdict: Verdict) -> str:
        if state.claim is not None:
            who = state.players[state.claim]
            return f"{who} wins" if verdict == "yes" else f"{who}'s claim dismissed"
        if state.screen == "bank":
            return _bank_label(state, verdict)
        if state.screen == "guide":
            return {"yes": "guide step", "no": "closing the guide", "special": "new round"}[verdict]
        if verdict == "special":
            return "opening the bank"
        if state.check is not None:
            who = state.players[state.check.player]
            return f"verdict for {who}" if verdict == "yes" else f"{who}'s check cancelled"
        if verdict == "no" and state.attempts:
            return f"reopening {state.players[state.attempts[-1].player]}'s check"
        return "opening the guide"

    # ---- the fold ----

    def step(self, state: AllWoundUp, action: Action) -> tuple[AllWoundUp, Effects]:
        if state.winner is not None:
            return state, NO_EFFECTS
        if isinstance(action, HallStep):          # the most frequent action by far; a claim lets it by
            return _hall(state, action)
        if state.claim is not None and not isinstance(action, (Tick, PuckReset, Undone)):
            return _claim_step(state, action)
        if isinstance(action, PlayerHold):
            return _claim(state, action.player), NO_EFFECTS
        if isinstance(action, Buzz):
            return _open_check(state, action.player) if state.check is None else (state, NO_EFFECTS)
        if isinstance(action, Tick):
            return _settled(state, action.t)
        if isinstance(action, PuckReset):
            return _void(state)
        if isinstance(action, Undone):
            return _settle_from(state, action.t), NO_EFFECTS
        if isinstance(action, MenuChoice):
            return _open_screen(state, action.key), NO_EFFECTS
        if state.screen == "bank":
            return _bank_step(state, action)
        if state.screen == "guide":
            return _guide_step(state, action)
        return _main_step(state, action)

    def report(self, state: AllWoundUp) -> dict[str, Any]:
        names = state.players
        return {
            "over": state.winner is not None,
            "winners": [] if state.winner is None else [state.winner],
            "phase": state.phase,
            "attempts": [_attempt_json(state, a) for a in state.attempts],
            "check": None if state.check is None else _check_json(state, state.check),
            "missed_edges": state.missed_edges,
            "screen": state.screen,
            "bank": bb.by_name(state.bank.supply),
            "tokens": {names[i]: bb.by_name(held) for i, held in enumerate(state.bank.held)},
            "brains": dict(zip(names, state.bank.brains)),
            "picks": [{"player": names[p.player], "from": names[p.victim], "card": p.card,
                       "hand": p.hand} for p in state.picks],
            "guide": _guide_json(state),
            "direction": state.direction,
            "claim": None if state.claim is None else names[state.claim],
            "tolerance": state.tolerance,
            "bank_screen": _bank_screen_json(state) if state.screen == "bank" else None,
        }


# ---- the wind check ----

    # ---- the big screen (core/snapshot.py) ----

    score_key, score_label, score_wins = "brains", "brains", "high"

    def board_turn(self, report: dict[str, Any]) -> str | None:
        check = report.get("check")
        player: str | None = check["player"] if check else report.get("guide", {}).get("bidder")
        return player

    def turn_word(self, report: dict[str, Any]) -> str:
        return "winding" if report.get("check") else "bids next"

    def board_facts(self, report: dict[str, Any]) -> list[dict[str, str]]:
        guide = report.get("guide") or {}
        bank = report.get("bank") or {}
        return facts(("Round", guide.get("round")), ("Dealer", guide.get("dealer")),
                     ("Brains in bank", sum(v for v in bank.values() if isinstance(v, int)) if bank else None))

    def winners_phrase(self, report: dict[str, Any]) -> str:
        return "first across the gate"

    def board_moment(self, report: dict[str, Any]) -> dict[str, Any]:
        if report.get("claim"):
            return text_moment(f"{report['claim']} crossed the gate?", "YES: wins \u00b7 NO: not yet",
                               title="Gate")
        if report.get("screen") in ("bank", "guide"):       # the OLED's own screens, on the TV too
            return screen_moment(report)
        check = report.get("check")
        if check is not None:
            steps = check["steps"]
            small = ("dial the target, then wind" if check["dial"] else   # the rest: the dial's words
                     "")
            return {"kind": "wind", "big": f"{quarters(steps)} of {check['target']}",
                    "small": small, "player": check["player"],
                    "words": f"{check['player']}: {quarters(steps)} of {_turns(check['target'])}"}
        attempts = report.get("attempts") or []
        if attempts:                 # held until the next check opens, as the OLED keeps it
            a = attempts[-1]
            miss = a["steps"] - STEPS_PER_TURN * a["target"]
            within = f": {quarters(abs(miss))} {'over' if miss > 0 else 'short'}, in tolerance" \
                if a["verdict"] == "exact" and miss else ""
            return {"kind": "verdict", "big": BOARD_VERDICTS.get(a["verdict"], a["verdict"]),
                    "small": f"{a['player']}: {quarters(a['steps'])} of {_turns(a['target'])}{within}",
                    "verdict": a["verdict"], "player": a["player"]}
        guide = report.get("guide") or {}
        return text_moment(guide.get("text") or "Press your button to wind", "press your button to wind",
                           title="Next")

    def board_extra(self, report: dict[str, Any]) -> dict[str, Any]:
        return {"wind": report.get("check"), "guide": report.get("guide", {}).get("text")}

def _claim_step(state: AllWoundUp, action: Action) -> tuple[AllWoundUp, Effects]:
    """"Ada crossed the gate?" on screen: YES ends the game, NO dismisses; the wind check waits."""
    if isinstance(action, Judge) and action.verdict == "yes":
        return replace(state, winner=state.claim, claim=None, check=None), NO_EFFECTS
    if isinstance(action, Judge) and action.verdict == "no":
        return replace(state, claim=None), NO_EFFECTS
    return state, NO_EFFECTS


def _claim(state: AllWoundUp, player: int) -> AllWoundUp:
    """A button held 2 s: "I crossed the gate". The press that began the hold opened a check for
    them; with nothing wound yet it was no wind, so it goes."""
    check = state.check
    if check is not None and check.player == player and not check.stepped:
        check = None
    return replace(state, claim=player, check=check, screen="main", ask=None, shown=None)


def _net(state: AllWoundUp, step: HallStep) -> int:
    return step.delta if state.direction == "cw" else -step.delta


def _open_check(state: AllWoundUp, player: int) -> tuple[AllWoundUp, Effects]:
    """The engine's fair first press chose `player` (and played their buzz): their check opens.
    `since` runs on: if this check is a false start that NO cancels, reopening the last verdict
    still gets every step wound since that check closed."""
    return replace(state, check=Check(player), screen="main", ask=None, shown=None), NO_EFFECTS


def _reopen(state: AllWoundUp, t: float) -> tuple[AllWoundUp, Effects]:
    """NO on a verdict: "he is still winding". The last check opens again with its target and its
    count, plus the steps wound since it closed; its settle wait starts afresh."""
    if not state.attempts or state.attempts[-1].verdict == "void":
        return state, NO_EFFECTS
    last = state.attempts[-1]
    steps = last.steps + state.since
    check = Check(last.player, last.target, steps, stepped=True, missed=last.missed,
                  last_edge=t if last.last_edge is None else max(last.last_edge, t))
    return replace(state, check=check, attempts=state.attempts[:-1], since=0), (Sound("tick"),)


def _hall(state: AllWoundUp, step: HallStep) -> tuple[AllWoundUp, Effects]:
    check = state.check
    if check is None:
        delta = _net(state, step)
        return (replace(state, since=state.since + delta), NO_EFFECTS) if delta else (state, NO_EFFECTS)
    last = step.t if check.last_edge is None else max(check.last_edge, step.t)
    missed = 1 if step.invalid else 0
    delta = step.delta if state.direction == "cw" else -step.delta
    if delta == 0 and not missed:
        return state, NO_EFFECTS
    moved = replace(check, steps=check.steps + delta, stepped=check.stepped or delta != 0,
                    missed=check.missed + missed, last_edge=last)
    state = replace(state, check=moved, missed_edges=state.missed_edges + missed, since=state.since + delta)
    return state, _crossing_sounds(state, check.steps, moved.steps, check.target)


def _crossing_sounds(state: AllWoundUp, before: int, after: int, target: int) -> Effects:
    """`target` the moment the count reaches the target, `overshoot` the moment it goes past it:
    the same points as the live screen's "on target" and "TOO MANY" (the tolerance is for the
    verdict only)."""
    goal = STEPS_PER_TURN * target
    if not before <= goal <= after:           # most steps cross nothing
        return NO_EFFECTS
    sounds: list[Sound] = []
    if before < goal <= after:
        sounds.append(Sound("target"))
    if before <= goal < after:
        sounds.append(Sound("overshoot"))
    return tuple(sounds)


def live_status(steps: int, target: int) -> str:
    """What the live screen says of a count: `short`, `on` (exactly 4N steps) or `over`."""
    goal = STEPS_PER_TURN * target
    return "on" if steps == goal else "short" if steps < goal else "over"


def verdict_of(steps: int, target: int, tolerance: int) -> str:
    miss = steps - STEPS_PER_TURN * target
    if abs(miss) <= tolerance:
        return "exact"
    return "too-few" if miss < 0 else "too-many"


def _close(state: AllWoundUp, verdict: str | None = None) -> tuple[AllWoundUp, Effects]:
    """End the open check with its verdict (computed unless given) and record the attempt."""
    check = state.check
    assert check is not None
    verdict = verdict or verdict_of(check.steps, check.target, state.tolerance)
    attempt = Attempt(check.player, check.target, check.steps, verdict, check.missed, check.last_edge)
    closed = replace(state, check=None, attempts=state.attempts + (attempt,), since=0,
                     screen="main" if state.screen != "bank" else "bank")
    if verdict == "void":
        return closed, NO_EFFECTS
    return closed, (Sound("correct" if verdict == "exact" else "wrong"),)


def _settle_from(state: AllWoundUp, t: float) -> AllWoundUp:
    """After an undo the check that was judged is open again: its settle wait starts afresh,
    or the verdict just taken back would come straight back from a stale timer."""
    check = state.check
    if check is None or check.last_edge is None:
        return state
    return replace(state, check=replace(check, last_edge=max(check.last_edge, t)))


def settle_due(state: AllWoundUp) -> float | None:
    """When the open check settles: `settle_ms` after its last hall edge, once it has a step."""
    check = state.check
    if check is None or not check.stepped or check.last_edge is None:
        return None
    return check.last_edge + state.settle_ms / 1000.0


def _settled(state: AllWoundUp, t: float) -> tuple[AllWoundUp, Effects]:
    due = settle_due(state)
    if due is None or t < due - 1e-9:
        return state, NO_EFFECTS
    return _close(state)


def _void(state: AllWoundUp) -> tuple[AllWoundUp, Effects]:
    if state.check is None:
        return state, NO_EFFECTS
    return _close(state, "void")


def _set_target(state: AllWoundUp, target: int) -> AllWoundUp:
    assert state.check is not None
    return replace(state, check=replace(state.check, target=target))


def _main_step(state: AllWoundUp, action: Action) -> tuple[AllWoundUp, Effects]:
    check = state.check
    if isinstance(action, PlayerPress):
        return _open_check(state, action.player) if check is None else (state, NO_EFFECTS)
    if isinstance(action, Dial) and check is not None and not check.stepped:
        target = min(state.max_target, max(0, check.target + action.delta))
        return _set_target(state, target), NO_EFFECTS
    if isinstance(action, Judge):
        if action.verdict == "special":
            return _open_screen(state, "bank"), NO_EFFECTS
        if check is None:
            return (_open_screen(state, "guide"), NO_EFFECTS) if action.verdict == "yes" else _reopen(state, action.t)
        if action.verdict == "yes":
            return _close(state)
        return replace(state, check=None), NO_EFFECTS
    return state, NO_EFFECTS


def _open_screen(state: AllWoundUp, key: str) -> AllWoundUp:
    if key == "guide":
        return replace(state, screen="guide")
    if key != "bank":
        return state
    start = None if state.check is None else _first_for(state, state.check.player)
    return replace(state, screen="bank", selected=start or _first_for(state, 0), ask=None, shown=None,
                   used=None)


# ---- the bank screen ----

def bank_actions(state: AllWoundUp, player: int) -> tuple[BankAction, ...]:
    """What `player` can do right now, in screen order (black/green first while they wind)."""
    bank, held = state.bank, state.bank.held[player]
    out: list[BankAction] = []
    check = state.check
    if check is not None and check.player == player:
        if held[bb.BLACK] and check.target > 0:
            out.append(BankAction(player, "spend", bb.BLACK))
        if held[bb.GREEN]:
            out.append(BankAction(player, "spend", bb.GREEN))
    if bb.gain_colour(bank) is not None:
        out.append(BankAction(player, "gain"))
    if bb.can_upgrade(bank, player):
        out += [BankAction(player, "upgrade", c) for c in range(len(bb.COLOURS))
                if bb.upgrade_colour(bank, player, c) is not None]
    if held[bb.PURPLE]:
        out.append(BankAction(player, "spend", bb.PURPLE))
    if held[bb.YELLOW]:
        out += [BankAction(player, "steal", bb.YELLOW, v) for v in range(state.n) if v != player]
    if held[bb.RED]:
        out.append(BankAction(player, "spend", bb.RED))
    return tuple(out)


def all_actions(state: AllWoundUp) -> tuple[BankAction, ...]:
    return tuple(a for p in range(state.n) for a in bank_actions(state, p))


def _first_for(state: AllWoundUp, player: int) -> BankAction | None:
    mine = bank_actions(state, player)
    if mine:
        return mine[0]
    every = all_actions(state)
    return every[0] if every else None


def cursor(state: AllWoundUp) -> BankAction | None:
    """The selected action if it is still possible, else the same player's first, else any.
    The action just done stays the cursor even when it is no longer possible (YES then does
    nothing): a second YES never does something else."""
    if state.selected is not None and state.selected in all_actions(state):
        return state.selected
    if state.used is not None:
        return None
    return _first_for(state, 0 if state.selected is None else state.selected.player)


def action_label(state: AllWoundUp, act: BankAction) -> str:
    """The bank screen's line for an action (without the player's name)."""
    if act.kind == "gain":
        colour = bb.gain_colour(state.bank)
        return f"brain: +{bb.COLOURS[colour if colour is not None else 0]}"
    if act.kind == "upgrade":
        better = bb.upgrade_colour(state.bank, act.player, act.colour)
        return f"brain: {bb.COLOURS[act.colour]}>{bb.COLOURS[better if better is not None else 0]}"
    if act.kind == "steal":
        return f"yellow: card of {state.players[act.victim]}"
    return {bb.BLACK: "black: -1 turn", bb.GREEN: "green: +1 turn", bb.PURPLE: "purple: turn 180",
            bb.RED: "red: bid +1"}[act.colour]


def _bank_label(state: AllWoundUp, verdict: Verdict) -> str:
    if state.ask is not None:
        return "yellow pick" if verdict == "yes" else "leaving the pick"
    chosen = cursor(state)
    if verdict != "yes" or state.shown is not None or chosen is None:
        return "closing the bank"
    return f"{state.players[chosen.player]} {action_label(state, chosen)}"


def _bank_step(state: AllWoundUp, action: Action) -> tuple[AllWoundUp, Effects]:
    if state.shown is not None and isinstance(action, (Dial, PlayerPress, Judge)):
        return replace(state, shown=None), NO_EFFECTS
    if state.ask is not None:
        return _ask_step(state, action), NO_EFFECTS
    if isinstance(action, Dial):
        return replace(state, selected=_moved_cursor(state, action.delta), used=None), NO_EFFECTS
    if isinstance(action, PlayerPress):
        return replace(state, selected=_first_for(state, action.player), used=None), NO_EFFECTS
    if isinstance(action, Judge) and action.verdict == "no":
        return replace(_settle_from(state, action.t), screen="main", used=None), NO_EFFECTS
    if isinstance(action, Judge) and action.verdict == "yes":
        chosen = cursor(state)
        return (state, NO_EFFECTS) if chosen is None else (_do(state, chosen), NO_EFFECTS)
    return state, NO_EFFECTS


def _moved_cursor(state: AllWoundUp, delta: int) -> BankAction | None:
    every = all_actions(state)
    chosen = cursor(state)
    if not every:
        return None
    if chosen is None and state.used is not None:
        # From the spot where the action just done was: the next (or previous) one after it.
        mark = _order(state.used)
        after = [a for a in every if _order(a) > mark]
        before = [a for a in every if _order(a) < mark]
        return (after + before)[0] if delta > 0 else (before or after)[-1]
    if chosen is None:
        return every[0]
    return every[(every.index(chosen) + delta) % len(every)]


def _order(act: BankAction) -> tuple[int, int, int, int]:
    """An action's place in the screen order of `bank_actions` (player by player)."""
    if act.kind == "spend":
        rank = 0 if act.colour in (bb.BLACK, bb.GREEN) else 3 if act.colour == bb.PURPLE else 5
    else:
        rank = {"gain": 1, "upgrade": 2, "steal": 4}[act.kind]
    return (act.player, rank, act.colour, act.victim)


def _do(state: AllWoundUp, act: BankAction) -> AllWoundUp:
    """Carry out a bank action; the cursor stays on it while it remains possible."""
    if act.kind == "steal":
        return replace(state, ask=Ask(act.player, act.victim, max(1, state.hands[act.victim])),
                       selected=act, used=act)
    if act.kind == "gain":
        gained = bb.gain(state.bank, act.player)
        assert gained is not None
        return replace(state, bank=gained[0], selected=act, used=act)
    if act.kind == "upgrade":
        upgraded = bb.upgrade(state.bank, act.player, act.colour)
        assert upgraded is not None
        return replace(state, bank=upgraded[0], selected=act, used=act)
    spent = bb.spend(state.bank, act.player, act.colour)
    assert spent is not None
    out = replace(state, bank=spent, selected=act, used=act)
    if act.colour in (bb.BLACK, bb.GREEN) and state.check is not None:
        out = _set_target(out, state.check.target + (1 if act.colour == bb.GREEN else -1))
    return out


def _ask_step(state: AllWoundUp, action: Action) -> AllWoundUp:
    ask = state.ask
    assert ask is not None
    if isinstance(action, Dial):
        return replace(state, ask=replace(ask, hand=min(MAX_HAND, max(1, ask.hand + action.delta))))
    if isinstance(action, Judge) and action.verdict == "no":
        return replace(state, ask=None)
    if isinstance(action, Judge) and action.verdict == "yes":
        return _pick(state, ask)
    return state


def _pick(state: AllWoundUp, ask: Ask) -> AllWoundUp:
    """Yellow: the box picks card #k from the left of the opponent's hand (seeded)."""
    index, rng = rand.below(state.rng, ask.hand)
    pick = Pick(ask.player, ask.victim, index + 1, ask.hand)
    spent = bb.spend(state.bank, ask.player, bb.YELLOW)
    assert spent is not None
    hands = list(state.hands)
    hands[ask.victim] = ask.hand - 1
    hands[ask.player] = min(MAX_HAND, hands[ask.player] + 1)
    return replace(state, bank=spent, rng=rng, ask=None, shown=pick, picks=state.picks + (pick,),
                   hands=tuple(hands))


# ---- the guide screen ----

def _guide_step(state: AllWoundUp, action: Action) -> tuple[AllWoundUp, Effects]:
    guide = state.guide
    if isinstance(action, PlayerPress):
        return _open_check(state, action.player) if state.check is None else (state, NO_EFFECTS)
    if isinstance(action, Dial):
        moved = rg.forward(guide) if action.delta > 0 else rg.back(guide)
        return replace(state, guide=moved), NO_EFFECTS
    if isinstance(action, Judge):
        if action.verdict == "no":
            return replace(state, screen="main"), NO_EFFECTS
        if action.verdict == "special":
            return replace(state, guide=rg.next_round(guide), hands=(rg.DEAL,) * state.n), NO_EFFECTS
        return replace(state, guide=rg.forward(guide)), NO_EFFECTS
    return state, NO_EFFECTS


# ---- report pieces ----

def _attempt_json(state: AllWoundUp, a: Attempt) -> dict[str, Any]:
    return {"player": state.players[a.player], "target": a.target, "steps": a.steps,
            "turns": a.steps / STEPS_PER_TURN, "verdict": a.verdict}


def _check_json(state: AllWoundUp, c: Check) -> dict[str, Any]:
    return {"player": state.players[c.player], "target": c.target, "steps": c.steps,
            "turns": c.steps / STEPS_PER_TURN, "missed": c.missed, "dial": not c.stepped}


def _bank_screen_json(state: AllWoundUp) -> dict[str, Any]:
    """What the bank screen shows besides the counts: the action under the cursor, or the
    yellow token's question (how many cards) and answer (which card to take)."""
    names, chosen = state.players, cursor(state)
    ask, shown = state.ask, state.shown
    return {"cursor": None if chosen is None else {"player": names[chosen.player],
                                                   "action": action_label(state, chosen)},
            "used": state.used is not None,
            "ask": None if ask is None else {"player": names[ask.player], "from": names[ask.victim],
                                             "hand": ask.hand},
            "shown": None if shown is None else {"player": names[shown.player], "from": names[shown.victim],
                                                 "card": shown.card, "hand": shown.hand}}


def _guide_json(state: AllWoundUp) -> dict[str, Any]:
    guide, names = state.guide, state.players
    step = rg.current(guide)
    return {"round": guide.round, "dealer": names[guide.dealer], "bidder": names[rg.bidder(guide)],
            "step": step.kind, "cards": step.cards, "bid": step.bid,
            "order": [names[i] for i in step.order], "text": rg.describe(step, names)}


GAME = AllWoundUpGame()
