"""Hold Your Breath!: the depth board (depths, anchors, panic cards, the Shark), turns and the winner.

The cards stay in the players' hands; the box keeps the board: each diver's depth in feet
(swims in steps of 5), the Panic cards on each diver, who has the one Shark, whose turn it is,
the last turns once the Dive Deck runs out (told through the menu), the anchors set at the end
of the Descent, who starts the Ascent (shallowest; ties drawn by the box), the surfacing order
and the winner: the deepest diver to surface, or else the greatest total distance.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core import rand
from ..core.events import Action, Dial, Judge, MenuChoice, PlayerPress, Sound, Tick, Verdict
from ..core.frozen import replace
from ..core.snapshot import facts
from .base import NO_EFFECTS, Effects, Game, Option, check_known, most, opt_player

STEP_FT = 5                      # one encoder detent
HINDRANCE_FT = 10                # each Panic or Shark still on a diver at the end
HAND = 5                         # cards in a full hand: a Discard card targets one of them
PICK_S = 5.0                     # a diver picked with their button is let go after this long
PHASES = ("descent", "descent-last", "ascent", "ascent-last", "over")


@dataclass(frozen=True)
class HoldYourBreath:
    """Hold Your Breath's state between two steps (each step returns a new one)."""
    players: tuple[str, ...]
    current: int
    depths: tuple[int, ...]                  # feet below the surface
    panic: tuple[int, ...]                   # Panic cards in each diver's Swim Pile
    rng: int
    phase: str = "descent"
    anchors: tuple[int, ...] | None = None   # set at the end of the Descent
    shark: int | None = None                 # the diver the Shark is on
    swim: int = 0                            # feet the current diver swims this turn
    selected: int | None = None              # a diver picked with their button (card target)
    picked_at: float = 0.0
    last_turns: int | None = None            # turns left once the Dive Deck ran out
    turns: int = 0                           # turns ended
    surfaced: tuple[int, ...] = ()           # divers back at the surface, in order
    ascent_first: int | None = None
    ascent_tied: tuple[int, ...] = ()        # shallowest divers the box drew from
    ended_by: str | None = None              # surface | deck
    winners: tuple[int, ...] = ()
    last: str = ""
    pick: str = ""                           # the box's random pick for a Discard card, on screen

    @property
    def n(self) -> int:
        return len(self.players)

    @property
    def ascending(self) -> bool:
        return self.phase in ("ascent", "ascent-last")

    def name(self, diver: int) -> str:
        return self.players[diver]

    def hindered(self, diver: int) -> bool:
        return self.panic[diver] > 0 or self.shark == diver

    def out_of_water(self, diver: int) -> bool:
        return diver in self.surfaced


class HoldYourBreathGame(Game):
    name = "hold-your-breath"
    title = "Hold Your Breath!"
    min_players = 2
    max_players = 4
    option_names = frozenset({"first_player"})
    options = (Option("first_player", "First player", "player"),)

    def new_game(self, players: tuple[str, ...], options: Mapping[str, Any], seed: int) -> HoldYourBreath:
        check_known(options, self.option_names)
        zeros = (0,) * len(players)
        return HoldYourBreath(players=tuple(players), current=opt_player(options, "first_player", players),
                              depths=zeros, panic=zeros, rng=rand.seed_state(seed, 4))

    def is_over(self, state: HoldYourBreath) -> bool:
        return state.phase == "over"

    def next_timer(self, state: HoldYourBreath) -> float | None:
        return state.picked_at + PICK_S if state.selected is not None else None

    def lit(self, state: HoldYourBreath) -> frozenset[int]:
        if state.phase == "over":
            return frozenset(state.winners)
        return frozenset({state.current} | ({state.selected} if state.selected is not None else set()))

    def step(self, state: HoldYourBreath, action: Action) -> tuple[HoldYourBreath, Effects]:
        if state.phase == "over":
            return state, NO_EFFECTS
        if state.pick and not isinstance(action, Tick):
            state = replace(state, pick="")          # the pick stays up until the next action
        if isinstance(action, Dial):
            return _dial(state, action.delta)
        if isinstance(action, PlayerPress):
            pick = None if state.selected == action.player else action.player
            return replace(state, selected=pick, picked_at=action.t), NO_EFFECTS
        if isinstance(action, Tick) and state.selected is not None and action.t >= state.picked_at + PICK_S:
            return replace(state, selected=None), NO_EFFECTS
        if isinstance(action, Judge):
            return _judge(state, action.verdict)
        if isinstance(action, MenuChoice) and action.key == "deck":
            return _deck_ran_out(state)
        if isinstance(action, MenuChoice) and action.key == "pick":
            return _discard_pick(state), (Sound("roll"),)
        return state, NO_EFFECTS

    def is_undo_step(self, before: HoldYourBreath, after: HoldYourBreath) -> bool:
        """A refused card (or a judgement that did nothing) only takes the Discard pick off the
        screen: that is no step to undo."""
        return replace(before, pick="") != replace(after, pick="")

    def is_menu_undo_step(self, before: HoldYourBreath, after: HoldYourBreath, key: str) -> bool:
        """Deck ran out (the last turns) and a Discard pick (it uses up the picked diver and draws
        from the random source) change the board: long NO takes back just that choice."""
        return key in ("deck", "pick")

    def report(self, state: HoldYourBreath) -> dict[str, Any]:
        names = state.players
        totals = totals_of(state)
        return {
            "over": state.phase == "over",
            "winners": list(state.winners),
            "phase": state.phase,
            "current": names[state.current],
            "depths": _per(names, state.depths),
            "anchors": None if state.anchors is None else _per(names, state.anchors),
            "panic": _per(names, state.panic),
            "shark": None if state.shark is None else names[state.shark],
            "swim": state.swim,
            "selected": None if state.selected is None else names[state.selected],
            "last_turns": state.last_turns,
            "turns": state.turns,
            "surfaced": [names[d] for d in state.surfaced],
            "ascent_first": None if state.ascent_first is None else names[state.ascent_first],
            "ascent_tied": [names[d] for d in state.ascent_tied],
            "totals": None if totals is None else _per(names, totals),
            "ended_by": state.ended_by,
            "last": state.last,
            "pick": state.pick or None,
        }

    def undo_label(self, state: HoldYourBreath, verdict: Verdict) -> str:
        target = state.selected
        if target is None:
            who = state.name(state.current)
            return f"{who}'s turn" if verdict == "yes" else f"no air for {who}"
        who = state.name(target)
        if verdict == "yes":
            return f"calm for {who}"
        if verdict == "no":
            return f"panic on {who}"
        return "Kraken" if state.shark == target else f"Shark on {who}"

    def menu_items(self, state: HoldYourBreath) -> tuple[tuple[str, str], ...]:
        return (("deck", "Deck ran out"), ("pick", "Discard: pick a card"), ("board", "Depth board"))

    def menu_disabled(self, state: HoldYourBreath) -> frozenset[str]:
        return frozenset() if state.phase in ("descent", "ascent") else frozenset({"deck"})

    def menu_card(self, state: HoldYourBreath, key: str) -> tuple[str, tuple[str, ...]] | None:
        if key != "board":
            return None
        lines = tuple(_board_line(state, d) for d in range(state.n))
        return ("Depth board", lines + ("(anchor) P: Panic S: Shark",))

    def rules_card(self) -> tuple[str, ...]:
        return ("Dial: swim 5 ft, YES: end", "NO: no air, a Panic", "Diver's button, then",
                "NO Panic, YES Calm,", "hold YES Shark/Kraken")

    # ---- the big screen (core/snapshot.py) ----

    score_key, score_label = "depths", "depth"

    def board_facts(self, report: dict[str, Any]) -> list[dict[str, str]]:
        phase = report.get("phase", "")
        return facts(("Now", "going down" if phase.startswith("descent") else
                      "coming up" if phase.startswith("ascent") else None),
                     ("Turns left", report.get("last_turns") if phase.endswith("-last") else None),
                     ("Turn", report.get("turns")))

    def player_notes(self, report: dict[str, Any]) -> dict[str, str]:
        """Surfaced, and the Panic cards and the Shark a diver carries (the OLED's depth board
        shows them as P2 and S): all game long, not only in the turn that dealt them."""
        surfaced = set(report.get("surfaced") or ())
        panic, shark = report.get("panic") or {}, report.get("shark")
        notes = {}
        for p in report["players"]:
            words = (["surfaced"] if p in surfaced else []) + \
                ([f"{panic[p]} Panic" + ("s" if panic[p] > 1 else "")] if panic.get(p) else []) + \
                (["Shark"] if p == shark else [])
            if words:
                notes[p] = " \u00b7 ".join(words)
        return notes

    def winners_phrase(self, report: dict[str, Any]) -> str:
        return "back up from the deep"

    def board_moment(self, report: dict[str, Any]) -> dict[str, Any]:
        who, phase = report.get("current"), report["phase"]
        up = phase.startswith("ascent")
        picked = report.get("selected")
        if picked:                       # a diver's button picked them for a card, as the OLED's panel
            shark = "Kraken" if report.get("shark") == picked else "Shark"
            small = f"{picked}: NO Panic \u00b7 YES Calm \u00b7 hold YES {shark}"
        elif report.get("pick"):         # the Discard card's pick, the OLED's banner
            small = str(report["pick"])
        else:
            small = (f"swim {report['swim']} ft {'up' if up else 'down'}" if report.get("swim") else
                     report.get("last") or ("press to swim up" if up else "press to dive"))
        return {"kind": "depths", "big": f"{who}'s turn", "small": small,
                "depths": report.get("depths") or {}, "anchors": report.get("anchors"),
                "surfaced": list(report.get("surfaced") or ()), "up": up, "player": who,
                "panic": report.get("panic") or {}, "shark": report.get("shark")}

    def board_extra(self, report: dict[str, Any]) -> dict[str, Any]:
        return {"depths": report.get("depths"), "totals": report.get("totals")}


def _discard_pick(state: HoldYourBreath) -> HoldYourBreath:
    """A Discard card: the box picks which of the opponent's 5 cards goes (seeded). Like every
    card it uses up the pick: the next card's target is picked afresh (pressing that opponent
    again picks them, it does not let them go)."""
    k, rng = rand.below(state.rng, HAND)
    whose = f"{state.name(state.selected)}'s" if state.selected is not None else "the"
    return replace(state, rng=rng, selected=None, pick=f"discard card {k + 1} of {HAND} in {whose} hand")


def totals_of(state: HoldYourBreath) -> tuple[int, ...] | None:
    """Distance down and back so far, -10 for each Panic or Shark still on the diver."""
    if state.anchors is None:
        return None
    return tuple(2 * a - d - HINDRANCE_FT * (state.panic[i] + (state.shark == i))
                 for i, (a, d) in enumerate(zip(state.anchors, state.depths)))


def _board_line(state: HoldYourBreath, diver: int) -> str:
    line = f"{state.name(diver)[:7]} {state.depths[diver]} ft"
    if state.anchors is not None:
        line += f" ({state.anchors[diver]})"
    if state.panic[diver]:
        line += f" P{state.panic[diver]}"
    return line + (" S" if state.shark == diver else "")


# ---- swimming ----

def swim_room(state: HoldYourBreath) -> int | None:
    """How far the current diver may swim this turn: None = no limit, 0 = not at all."""
    me = state.current
    if state.hindered(me) or state.out_of_water(me):
        return 0
    return state.depths[me] if state.ascending else None


def _dial(state: HoldYourBreath, delta: int) -> tuple[HoldYourBreath, Effects]:
    room = swim_room(state)
    swim = max(0, state.swim + STEP_FT * delta)
    if room is not None:
        swim = min(swim, room)
    if swim == state.swim:
        return state, NO_EFFECTS
    return replace(state, swim=swim), (Sound("tick"),)


# ---- cards played on divers ----

def _judge(state: HoldYourBreath, verdict: Verdict) -> tuple[HoldYourBreath, Effects]:
    target = state.selected
    if target is None:
        if verdict == "yes":
            return _end_turn(state)
        if verdict == "no":
            return _panic(state, state.current)
        return state, NO_EFFECTS
    if verdict == "yes":
        return _calm(state, target)
    if verdict == "no":
        return _panic(state, target)
    return _shark(state, target)


def _refused(state: HoldYourBreath) -> tuple[HoldYourBreath, Effects]:
    return state, (Sound("wrong"),)


def _panic(state: HoldYourBreath, diver: int) -> tuple[HoldYourBreath, Effects]:
    """A Panic card: on an opponent without one, or face down on yourself (no air this turn)."""
    if state.out_of_water(diver) or (diver != state.current and state.panic[diver] > 0):
        return _refused(state)
    panic = _set(state.panic, diver, state.panic[diver] + 1)
    why = "no air" if diver == state.current else "panic"
    return replace(state, panic=panic, selected=None, swim=0 if diver == state.current else state.swim,
                   last=f"{why}: {state.name(diver)} panics"), (Sound("wrong"),)


def _calm(state: HoldYourBreath, diver: int) -> tuple[HoldYourBreath, Effects]:
    """A Calm card clears one Panic card from the diver who plays it."""
    if diver != state.current or state.panic[diver] == 0:
        return _refused(state)
    panic = _set(state.panic, diver, state.panic[diver] - 1)
    return replace(state, panic=panic, selected=None, last=f"{state.name(diver)} calms down"), (Sound("correct"),)


def _shark(state: HoldYourBreath, diver: int) -> tuple[HoldYourBreath, Effects]:
    """The Shark onto an opponent (a Shark card, or a Calm moving it); on its own diver: the Kraken."""
    if state.shark == diver:
        return replace(state, shark=None, selected=None,
                       last=f"Kraken: the Shark leaves {state.name(diver)}"), (Sound("correct"),)
    if diver == state.current or state.out_of_water(diver):
        return _refused(state)
    return replace(state, shark=diver, selected=None,
                   last=f"the Shark is on {state.name(diver)}"), (Sound("theft"),)


# ---- turns and rounds ----

def _end_turn(state: HoldYourBreath) -> tuple[HoldYourBreath, Effects]:
    me = state.current
    room = swim_room(state)
    swim = state.swim if room is None else min(state.swim, room)
    depth = state.depths[me] + (-swim if state.ascending else swim)
    word = "up" if state.ascending else "down"
    state = replace(state, depths=_set(state.depths, me, depth), swim=0, selected=None,
                    turns=state.turns + 1, last=f"{state.name(me)} swam {swim} ft {word}")
    if state.ascending and depth == 0 and swim > 0:
        state = replace(state, surfaced=state.surfaced + (me,), last=f"{state.name(me)} surfaced!")
        assert state.anchors is not None
        if state.anchors[me] == max(state.anchors):
            return _finish(state, (me,), "surface"), NO_EFFECTS
    return _next_turn(state), (Sound("tick"),)


def _next_turn(state: HoldYourBreath) -> HoldYourBreath:
    nxt = replace(state, current=(state.current + 1) % state.n)
    if state.last_turns is None:
        return nxt
    if state.last_turns > 1:
        return replace(nxt, last_turns=state.last_turns - 1)
    if state.phase == "descent-last":
        return _begin_ascent(state)
    totals = totals_of(state)
    assert totals is not None
    return _finish(state, most(totals), "deck")


def _deck_ran_out(state: HoldYourBreath) -> tuple[HoldYourBreath, Effects]:
    """Everyone's last turn, from the diver whose turn it is now to the one who drew the last card."""
    if state.phase not in ("descent", "ascent"):
        return state, NO_EFFECTS
    return replace(state, phase=state.phase + "-last", last_turns=state.n, selected=None,
                   last="deck ran out: last turns"), (Sound("target"),)


def _begin_ascent(state: HoldYourBreath) -> HoldYourBreath:
    """Anchors at every depth; the shallowest diver (a tie: drawn by the box) starts upwards."""
    shallowest = min(state.depths)
    tied = tuple(d for d in range(state.n) if state.depths[d] == shallowest)
    first, rng = rand.choice(state.rng, tied) if len(tied) > 1 else (tied[0], state.rng)
    order = [(first + k) % state.n for k in range(state.n)]
    at_top = tuple(d for d in order if state.depths[d] == 0)
    # Divers still at the surface are listed as surfaced (nothing new can be played on them),
    # but the rulebook's "any Shark or Panic cards in the player's Swim Pile remain in place for
    # the Ascent" holds for them too: they keep them, a Calm or the Kraken still clears them,
    # and each one still on them counts -10 if the deck runs out.
    out = replace(state, phase="ascent", anchors=state.depths, current=first, rng=rng,
                  last_turns=None, ascent_first=first, ascent_tied=tied if len(tied) > 1 else (),
                  surfaced=at_top, last=f"anchors set; {state.name(first)} starts the ascent")
    if max(state.depths) == 0:
        return _finish(out, tuple(range(state.n)), "surface")
    return out


def _finish(state: HoldYourBreath, winners: tuple[int, ...], how: str) -> HoldYourBreath:
    return replace(state, phase="over", winners=tuple(sorted(winners)), ended_by=how,
                   last_turns=None, selected=None, swim=0)


def _per(names: tuple[str, ...], values: tuple[int, ...]) -> dict[str, int]:
    return dict(zip(names, values))


def _set(values: tuple[int, ...], index: int, value: int) -> tuple[int, ...]:
    return values[:index] + (value,) + values[index + 1:]


GAME = HoldYourBreathGame()
