"""Hands Up!: the box deals, beats the flips, settles the grab of the diamond and moves the cards.

Replay contract, `hands-up` section: the deal goes one card at a time from the first player;
a beat every `beat_ms` (the first one `beat_ms` after the start) flips one card from every
hand that has one; a press of any player is a grab (the beats stop when its settle window
opens); the judge answers YES (true theft), NO (false alarm) or long YES (police), and the
cards move with floor + clockwise remainder sharing. `classic` ends when players hold no
cards in hand or face up; `quick` ends one beat after the last hand ran out (or at the
judgement of a grab made in that last beat), fewest set-aside cards winning.
`beat_ms = 0` is manual mode: the table keeps its own pace and cards, the box only settles
the grab and keeps the judgement history.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..core.events import Action, Buzz, BuzzOpened, Dial, Judge, MenuChoice, Sound, Tick, Verdict
from ..core.frozen import replace
from ..core.snapshot import facts, text_moment
from .base import (NO_EFFECTS, SETTLE_OPTION, Effects, Game, Option, OptionError, check_known,
                   opt_choice, opt_int, opt_settle_ms)

MODES = ("classic", "quick")
MAX_CARDS = 200
BEAT_MIN_MS, BEAT_MAX_MS = 300, 10000
TEMPOS_MS = (300, 400, 500, 600, 700, 800, 1000, 1200, 1500, 2000, 2500, 3000, 4000, 5000,
             6000, 8000, 10000)                     # the steps the encoder walks through
VERDICT_NAMES: dict[str, str] = {"yes": "theft", "no": "false-alarm", "special": "police"}
SOUNDS: dict[str, str] = {"yes": "theft", "no": "false-alarm", "special": "police"}
Counts = tuple[int, ...]


@dataclass(frozen=True)
class Judgement:
    """One judged grab: who grabbed, the verdict, and who received how many cards."""
    grabber: int
    verdict: Verdict
    at: float
    received: Counts = ()          # per player; empty in manual mode
    to_set_aside: bool = False     # quick: received cards went to the set-aside piles

    @property
    def moved(self) -> int:
        return sum(self.received)


@dataclass(frozen=True)
class HandsUp:
    """Hands Up!'s state between two steps (each step returns a new one)."""
    players: tuple[str, ...]
    mode: str
    cards: int
    beat_ms: int                   # 0 = manual mode
    settle_ms: float
    dealt: Counts
    hands: Counts
    face_up: Counts
    set_aside: Counts
    phase: str = "flipping"        # flipping | judging | over
    next_beat: float | None = None
    beats: int = 0                 # every beat so far (the beat indicator)
    flips: int = 0                 # beats at which at least one card was flipped
    flipped: Counts = ()           # cards each player has flipped in all (undo keeps the flips)
    grabber: int | None = None
    paused: bool = False
    history: tuple[Judgement, ...] = ()

    @property
    def n(self) -> int:
        return len(self.players)

    @property
    def manual(self) -> bool:
        return self.beat_ms == 0

    @property
    def beat_s(self) -> float:
        return self.beat_ms / 1000.0

    @property
    def table_total(self) -> int:
        """Face-up cards on the table."""
        return sum(self.face_up)

    @property
    def last(self) -> Judgement | None:
        return self.history[-1] if self.history else None


def deal(cards: int, n: int) -> Counts:
    """One card at a time from the first player: floor(cards / n), plus one for the first cards % n."""
    each, extra = divmod(cards, n)
    return tuple(each + (1 if i < extra else 0) for i in range(n))


def share(total: int, n: int, grabber: int) -> Counts:
    """`total` cards to every player but `grabber`: floor each, the remainder one by one
    clockwise from the grabber's left neighbour (player grabber + 1)."""
    each, rest = divmod(total, n - 1)
    out = [0 if i == grabber else each for i in range(n)]
    for k in range(1, rest + 1):
        out[(grabber + k) % n] += 1
    return tuple(out)


def _beat_at(t: float, beat_ms: int) -> float:
    """The next beat, `beat_ms` after `t` (rounded to the microsecond so beats never drift)."""
    return round(t + beat_ms / 1000.0, 6)


def _opt_beat_ms(options: Mapping[str, Any]) -> int:
    value = options.get("beat_ms", 2000)
    if (isinstance(value, bool) or not isinstance(value, int)
            or not (value == 0 or BEAT_MIN_MS <= value <= BEAT_MAX_MS)):
        raise OptionError(f"options.beat_ms: must be 0 (manual mode) or an integer from "
                          f"{BEAT_MIN_MS} to {BEAT_MAX_MS}")
    return value


def _add(a: Counts, b: Counts) -> Counts:
    return tuple(x + y for x, y in zip(a, b))


# A judged grab as the big screen says it.
BOARD_VERDICTS = {"theft": "theft", "false-alarm": "false alarm", "police": "police"}


class HandsUpGame(Game):
    name = "hands-up"
    title = "Hands Up!"
    min_players = 2
    max_players = 8
    option_names = frozenset({"mode", "cards", "beat_ms", "settle_ms"})
    options = (Option("mode", "Mode", "choice", "classic", choices=MODES),
               Option("cards", "Cards", "int", 60, 2, MAX_CARDS, lo_players=True),
               Option("beat_ms", "Beat (ms)", "int", 2000, BEAT_MIN_MS, BEAT_MAX_MS, 100,
                      zero="0: no beat, YES flips"),
               SETTLE_OPTION)

    def new_game(self, players: tuple[str, ...], options: Mapping[str, Any], seed: int) -> HandsUp:
        check_known(options, self.option_names)
        n = len(players)
        mode = opt_choice(options, "mode", "classic", MODES)
        cards = opt_int(options, "cards", 60, n, MAX_CARDS)
        beat_ms = _opt_beat_ms(options)
        dealt = deal(cards, n)
        return HandsUp(players=tuple(players), mode=mode, cards=cards, beat_ms=beat_ms,
                       settle_ms=opt_settle_ms(options), dealt=dealt, hands=dealt,
                       face_up=(0,) * n, set_aside=(0,) * n,
                       next_beat=None if beat_ms == 0 else _beat_at(0.0, beat_ms))

    # ---- what the engine asks ----

    def settle_s(self, state: HandsUp) -> float:
        return state.settle_ms / 1000.0

    def buzzers(self, state: HandsUp) -> frozenset[int]:
        return frozenset(range(state.n)) if state.phase == "flipping" else frozenset()

    def started(self, state: HandsUp, t: float) -> HandsUp:
        if state.next_beat is None:
            return state
        return replace(state, next_beat=_beat_at(t, state.beat_ms))

    def next_timer(self, state: HandsUp) -> float | None:
        return state.next_beat if state.phase == "flipping" else None

    def is_over(self, state: HandsUp) -> bool:
        return state.phase == "over"

    def lit(self, state: HandsUp) -> frozenset[int]:
        if state.phase == "judging" and state.grabber is not None:
            return frozenset({state.grabber})
        if state.phase == "over":
            return frozenset(winners(state))
        if state.manual:
            return frozenset(range(state.n))
        return frozenset(i for i, h in enumerate(state.hands) if h > 0)

    def menu_items(self, state: HandsUp) -> tuple[tuple[str, str], ...]:
        return (("resume", "Resume beats"),) if state.paused else (("pause", "Pause beats"),)

    def menu_disabled(self, state: HandsUp) -> frozenset[str]:
        if state.manual or state.phase != "flipping":
            return frozenset({"pause", "resume"})
        return frozenset()

    def rules_card(self) -> tuple[str, ...]:
        return ("Theft: diamond+thief+",
                "prints, colours all same",
                "or all different, counts",
                "all same or all different.",
                "In the dark: any colours.",
                "Police + thief, one colour",
                "(any in dark): grabber",
                "shares own face-up cards")

    def undo_to(self, before: HandsUp, now: HandsUp) -> tuple[HandsUp, str | None]:
        """Undo takes back the judgement's card moves and keeps the flips the table has made
        since: each player's flipped cards stay face up, out of the hand they had before the
        judgement. Flips that reached the cards the judgement put at the bottom of a hand
        cannot be told apart from the rest: then undo is refused."""
        if before.manual:
            return before, None
        zero = (0,) * before.n
        since = tuple(a - b for a, b in zip(now.flipped or zero, before.flipped or zero))
        if not any(since):
            return before, None
        if any(s > h for s, h in zip(since, before.hands)):
            flips = now.flips - before.flips
            return before, f"cannot undo past {flips} flip{'s' if flips != 1 else ''}"
        return replace(before, hands=tuple(h - s for h, s in zip(before.hands, since)),
                       face_up=_add(before.face_up, since), flips=now.flips, beats=now.beats,
                       flipped=now.flipped), None

    def undo_label(self, state: HandsUp, verdict: Verdict) -> str:
        who = state.players[state.grabber] if state.grabber is not None else "nobody"
        return f"{VERDICT_NAMES[verdict].replace('-', ' ')} for {who}"

    # ---- the rules ----

    def step(self, state: HandsUp, action: Action) -> tuple[HandsUp, Effects]:
        if state.phase == "over":
            return state, NO_EFFECTS
        if state.phase == "flipping":
            return self._flipping(state, action)
        if isinstance(action, Judge) and state.grabber is not None:
            return _judge(state, action.verdict, action.t)
        return state, NO_EFFECTS

    def _flipping(self, state: HandsUp, action: Action) -> tuple[HandsUp, Effects]:
        if isinstance(action, Tick) and state.next_beat is not None and not state.manual:
            return _beat(state, action.t)
        if isinstance(action, BuzzOpened):
            return replace(state, next_beat=None), NO_EFFECTS       # the beats stop at a grab
        if isinstance(action, Buzz) and 0 <= action.player < state.n:
            return replace(state, phase="judging", grabber=action.player, next_beat=None), NO_EFFECTS
        if isinstance(action, Dial) and not state.manual:
            return _tempo(state, action.delta, action.t), NO_EFFECTS
        if isinstance(action, MenuChoice) and not state.manual:
            return _pause(state, action.key, action.t), NO_EFFECTS
        return state, NO_EFFECTS

    def report(self, state: HandsUp) -> dict[str, Any]:
        names = state.players
        return {
            "over": state.phase == "over",
            "winners": list(winners(state)),
            "phase": state.phase,
            "hands": _per_name(state, state.hands),
            "face_up": _per_name(state, state.face_up),
            "set_aside": _per_name(state, state.set_aside),
            "flips": state.flips,
            "beats": state.beats,
            "mode": state.mode,
            "cards": None if state.manual else state.cards,
            "beat_ms": state.beat_ms,
            "paused": state.paused,
            "grabber": None if state.grabber is None else names[state.grabber],
            "judgements": [_judgement_report(names, j) for j in state.history],
        }

    # ---- the big screen (core/snapshot.py) ----

    score_key, score_label, score_wins = "hands", "cards in hand", "low"
    turn_key = "grabber"
    buzz_ask = "YES theft \u00b7 NO false alarm \u00b7 hold YES police"

    def score(self, report: dict[str, Any]) -> tuple[str, str, str]:
        if report.get("mode") == "quick":                  # the fewest set aside wins
            return "set_aside", "set aside", self.score_wins
        return super().score(report)

    def turn_word(self, report: dict[str, Any]) -> str:
        return "grabbed"

    def board_facts(self, report: dict[str, Any]) -> list[dict[str, str]]:
        beat_ms, hands = report.get("beat_ms"), report.get("hands")
        return facts(("Mode", report.get("mode") if beat_ms else "own pace"),
                     ("Beat", f"{beat_ms / 1000:g} s" if beat_ms else None),
                     ("In hands", sum(hands.values()) if hands else None))

    def player_notes(self, report: dict[str, Any]) -> dict[str, str]:
        if report.get("face_up") is None:
            return {}
        quick = report.get("mode") == "quick"
        return {p: f"{n} face up" + (f", {report['hands'][p]} in hand" if quick else "")
                for p, n in report["face_up"].items()}

    def winners_phrase(self, report: dict[str, Any]) -> str:
        return "cleared their cards" if report.get("mode") != "quick" else "fewest set aside"

    def board_moment(self, report: dict[str, Any]) -> dict[str, Any]:
        last = (report.get("judgements") or [None])[-1]
        small = f"last grab: {last['player']}, {BOARD_VERDICTS.get(last['verdict'], last['verdict'])}" \
            if last else "press your button to grab"
        if not report.get("beat_ms"):
            return text_moment("Press to grab", small, title="Own pace")
        if report.get("beats", 0) == 0:
            if report.get("paused"):
                return text_moment("Paused", f"deal {report.get('cards')} cards; MENU: Resume beats",
                                   title="Deal", paused=True)
            return text_moment(f"Deal {report.get('cards')} cards", "the beat starts soon", title="Deal")
        return {"kind": "beat", "big": "Paused" if report.get("paused") else f"Flip {report['beats']}",
                "small": small, "beats": report["beats"], "paused": bool(report.get("paused")),
                "beat_ms": report["beat_ms"]}


def _per_name(state: HandsUp, counts: Counts) -> dict[str, int] | None:
    """Counts by player name; manual mode keeps no counts."""
    return None if state.manual else dict(zip(state.players, counts))


def _judgement_report(names: tuple[str, ...], j: Judgement) -> dict[str, Any]:
    return {
        "player": names[j.grabber],
        "verdict": VERDICT_NAMES[j.verdict],
        "cards": j.moved if j.received else None,
        "received": {names[i]: c for i, c in enumerate(j.received) if c},
        "to": ("set_aside" if j.to_set_aside else "hands") if j.received else None,
    }


def winners(state: HandsUp) -> tuple[int, ...]:
    """Classic: every player with no card in hand or face up; quick: fewest set aside."""
    if state.phase != "over":
        return ()
    if state.mode == "quick":
        low = min(state.set_aside)
        return tuple(i for i, s in enumerate(state.set_aside) if s == low)
    return _cleared(state)


def _cleared(state: HandsUp) -> tuple[int, ...]:
    return tuple(i for i in range(state.n) if state.hands[i] == 0 and state.face_up[i] == 0)


def _hands_empty(state: HandsUp) -> bool:
    return not any(state.hands)


def _beat(state: HandsUp, t: float) -> tuple[HandsUp, Effects]:
    """Every player with a card in hand flips one; quick ends one beat after the hands ran out."""
    state = replace(state, beats=state.beats + 1)
    if state.mode == "quick" and _hands_empty(state):
        return replace(state, phase="over", next_beat=None), (Sound("tick"),)
    flipped = tuple(1 if h > 0 else 0 for h in state.hands)
    state = replace(state, hands=tuple(h - f for h, f in zip(state.hands, flipped)),
                    face_up=_add(state.face_up, flipped),
                    flips=state.flips + (1 if any(flipped) else 0),
                    flipped=_add(state.flipped or (0,) * state.n, flipped))
    state = replace(state, next_beat=_next_beat(state, t))
    return _check_classic_end(state), (Sound("tick"),)


def _next_beat(state: HandsUp, t: float) -> float | None:
    """The beat after `t`; none while no hand has a card to flip (classic: the table waits for a
    grab, and an idle box neither ticks nor logs). Quick still needs its one final beat."""
    if state.mode == "classic" and _hands_empty(state):
        return None
    return _beat_at(t, state.beat_ms)


def _check_classic_end(state: HandsUp) -> HandsUp:
    if state.mode == "classic" and _cleared(state):
        return replace(state, phase="over", next_beat=None)
    return state


def _judge(state: HandsUp, verdict: Verdict, t: float) -> tuple[HandsUp, Effects]:
    grabber = state.grabber
    assert grabber is not None
    effects: Effects = (Sound(SOUNDS[verdict]),)
    if state.manual:
        record = Judgement(grabber, verdict, t)
        return replace(state, phase="flipping", grabber=None, paused=False,
                       history=state.history + (record,)), effects
    received, face_up = _movement(state, verdict, grabber)
    record = Judgement(grabber, verdict, t, received, state.mode == "quick")
    if state.mode == "quick":
        state = replace(state, set_aside=_add(state.set_aside, received))
    else:
        state = replace(state, hands=_add(state.hands, received))
    state = replace(state, face_up=face_up, phase="flipping", grabber=None, paused=False,
                    history=state.history + (record,))
    state = replace(state, next_beat=_next_beat(state, t))
    if state.mode == "quick" and _hands_empty(state):
        return replace(state, phase="over", next_beat=None), effects
    return _check_classic_end(state), effects


def _movement(state: HandsUp, verdict: Verdict, grabber: int) -> tuple[Counts, Counts]:
    """(cards each player receives, face-up counts afterwards) for a judged grab."""
    n = state.n
    if verdict == "yes":                                 # true theft: the others share the table
        return share(state.table_total, n, grabber), (0,) * n
    if verdict == "no":                                  # false alarm: the grabber takes the table
        received = tuple(state.table_total if i == grabber else 0 for i in range(n))
        return received, (0,) * n
    own = state.face_up[grabber]                         # police: the grabber shares own face-up
    face_up = tuple(0 if i == grabber else c for i, c in enumerate(state.face_up))
    return share(own, n, grabber), face_up


def _tempo(state: HandsUp, delta: int, t: float) -> HandsUp:
    """The encoder sets the tempo: clockwise is faster. The coming beat moves with it."""
    old = state.beat_ms
    if delta > 0:
        new = max((ms for ms in TEMPOS_MS if ms < old), default=BEAT_MIN_MS)
    else:
        new = min((ms for ms in TEMPOS_MS if ms > old), default=BEAT_MAX_MS)
    if new == old:
        return state
    state = replace(state, beat_ms=new)
    if state.next_beat is None:
        return state
    anchor = state.next_beat - old / 1000.0
    return replace(state, next_beat=round(max(t, anchor + new / 1000.0), 6))


def _pause(state: HandsUp, key: str, t: float) -> HandsUp:
    """MENU -> Pause beats / Resume beats (grabs still count while paused)."""
    if key == "pause" and not state.paused:
        return replace(state, paused=True, next_beat=None)
    if key == "resume" and state.paused:
        return replace(state, paused=False, next_beat=_next_beat(state, t))
    return state


GAME = HandsUpGame()
