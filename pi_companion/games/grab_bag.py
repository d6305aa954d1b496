"""Grab Bag: Grab Master, seekers, "Potzblitz!" buzzes, YES/NO judgements and the card count.

Variants (replay contract): `standard`, `all-seekers` (2 players / reverse side: the box turns
over a target card each round) and `strict` (a wrong piece ends the round; everyone else gets a
card). The game ends when the deck is empty; every player with the most cards wins.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Mapping

from ..core import rand
from ..core.events import Action, Buzz, Judge, Sound, Verdict
from ..core.frozen import replace
from ..core.snapshot import facts, text_moment
from .base import (NO_EFFECTS, SETTLE_OPTION, Effects, Game, Option, check_known, most, opt_choice,
                   opt_int, opt_names, opt_player, opt_settle_ms)

VARIANTS = ("standard", "all-seekers", "strict")
PIECES = ("star", "heart", "moon", "car", "fish", "bell",
          "tree", "house", "duck", "key", "boot", "apple")


@dataclass(frozen=True)
class GrabBag:
    """Grab Bag's state between two steps (each step returns a new one)."""
    players: tuple[str, ...]
    variant: str
    cards: int
    settle_ms: float
    pieces: tuple[str, ...]
    deck: int
    scores: tuple[int, ...]
    grab_master: int | None
    round: int = 1
    phase: str = "searching"           # searching | judging | over
    excluded: frozenset[int] = frozenset()
    buzzed: int | None = None
    target: str | None = None
    stack: tuple[str, ...] = ()        # all-seekers: the shuffled target cards still face down
    rng: int = 0
    set_aside: int = 0                 # all-seekers: cards nobody won
    last: str = ""                     # what the last judgement did, for the screen

    @property
    def n(self) -> int:
        return len(self.players)

    def seekers(self) -> frozenset[int]:
        return _seekers(len(self.players), self.grab_master)


class GrabBagGame(Game):
    name = "grab-bag"
    title = "Grab Bag"
    min_players = 2
    max_players = 4
    hears_buzz_opened = False      # (its step ignores BuzzOpened)
    option_names = frozenset({"variant", "cards", "first_grab_master", "settle_ms", "pieces"})
    options = (Option("variant", "Variant", "choice", None, choices=VARIANTS),
               Option("cards", "Cards", "int", 12, 1, 200),
               Option("first_grab_master", "First Grab Master", "player"),
               SETTLE_OPTION)

    def new_game(self, players: tuple[str, ...], options: Mapping[str, Any], seed: int) -> GrabBag:
        check_known(options, self.option_names)
        default = "all-seekers" if len(players) == 2 else "standard"
        variant = opt_choice(options, "variant", default, VARIANTS)
        cards = opt_int(options, "cards", 12, 1, 200)
        gm = opt_player(options, "first_grab_master", players)
        state = GrabBag(players=tuple(players), variant=variant, cards=cards,
                        settle_ms=opt_settle_ms(options), pieces=opt_names(options, "pieces", PIECES),
                        deck=cards, scores=(0,) * len(players),
                        grab_master=None if variant == "all-seekers" else gm,
                        rng=rand.seed_state(seed, 2))
        return _turn_card(state) if variant == "all-seekers" else state

    def settle_s(self, state: GrabBag) -> float:
        return state.settle_ms / 1000.0

    def buzzers(self, state: GrabBag) -> frozenset[int]:
        if state.phase != "searching":
            return frozenset()
        seekers = state.seekers()
        return seekers - state.excluded if state.excluded else seekers

    def is_over(self, state: GrabBag) -> bool:
        return state.phase == "over"

    def lit(self, state: GrabBag) -> frozenset[int]:
        if state.phase == "judging" and state.buzzed is not None:
            return frozenset({state.buzzed})
        return self.buzzers(state)

    def step(self, state: GrabBag, action: Action) -> tuple[GrabBag, Effects]:
        if state.phase == "over":
            return state, NO_EFFECTS
        if isinstance(action, Buzz) and action.player in self.buzzers(state):
            return replace(state, phase="judging", buzzed=action.player), NO_EFFECTS
        if isinstance(action, Judge):
            return self._judge(state, action.verdict)
        return state, NO_EFFECTS

    def _judge(self, state: GrabBag, verdict: Verdict) -> tuple[GrabBag, Effects]:
        if verdict == "special":
            return state, NO_EFFECTS
        if state.phase == "searching":
            if verdict == "yes":
                return state, NO_EFFECTS
            return _nobody_found(state), (Sound("wrong"),)
        assert state.buzzed is not None
        seeker = state.buzzed
        if verdict == "yes":
            won = _award(state, seeker, f"{state.players[seeker]} found it")
            if state.grab_master is not None:
                won = replace(won, grab_master=seeker)
            return _next_round(won), (Sound("correct"),)
        if state.variant == "strict":
            return _next_round(_strict_share(state, seeker)), (Sound("wrong"),)
        excluded = state.excluded | {seeker}
        out = replace(state, excluded=excluded, buzzed=None, phase="searching",
                      last=f"{state.players[seeker]} is out")
        if excluded >= state.seekers():
            return _nobody_found(out), (Sound("wrong"),)
        return out, (Sound("wrong"),)

    def report(self, state: GrabBag) -> dict[str, Any]:
        names = state.players
        return {
            "over": state.phase == "over",
            "winners": list(most(state.scores)) if state.phase == "over" else [],
            "phase": state.phase,
            "scores": dict(zip(names, state.scores)),
            "deck": state.deck,
            "grab_master": None if state.grab_master is None else names[state.grab_master],
            "round": state.round,
            "target": state.target,
            "variant": state.variant,
            "set_aside": state.set_aside,
            "out": [names[i] for i in sorted(state.excluded)],
        }

    def undo_label(self, state: GrabBag, verdict: Verdict) -> str:
        who = state.players[state.buzzed] if state.buzzed is not None else "nobody"
        if state.phase == "searching":
            return "nobody found it"
        return f"YES for {who}" if verdict == "yes" else f"NO for {who}"

    def rules_card(self) -> tuple[str, ...]:
        return RULES_CARDS["standard"]

    def rules_card_for(self, state: GrabBag) -> tuple[str, ...]:
        return RULES_CARDS[state.variant]

    # ---- the big screen (core/snapshot.py) ----

    score_key, score_label, score_wins = "scores", "cards", "high"
    turn_key = "grab_master"
    buzz_ask = "Right card? YES or NO"

    def turn_word(self, report: dict[str, Any]) -> str:
        return "Grab Master"

    def board_facts(self, report: dict[str, Any]) -> list[dict[str, str]]:
        return facts(("Round", report.get("round")), ("Cards left", report.get("deck")))

    def players_out(self, report: dict[str, Any]) -> frozenset[str]:
        return frozenset(report.get("out") or ())

    def player_notes(self, report: dict[str, Any]) -> dict[str, str]:
        """A seeker judged wrong sits out the rest of the round."""
        return {p: "\u2717 out this round" for p in report.get("out") or ()}

    def winners_phrase(self, report: dict[str, Any]) -> str:
        return "most cards"

    def board_moment(self, report: dict[str, Any]) -> dict[str, Any]:
        if report.get("grab_master"):
            return text_moment(report["grab_master"], "is Grab Master: name the card to find",
                               title="Grab Master")
        return text_moment(f"Find the {(report.get('target') or '?').upper()}", "first to press grabs it",
                           title="Search")


RULES_CARDS = {
    "standard": ("Grab Master shows a", "piece; seekers feel", "for it. Press = found!",
                 "YES: card, new master", "NO: out this round", "NO while searching:",
                 "master gets the card"),
    "all-seekers": ("The box shows a piece;", "everyone feels for it.", "Press = found!",
                    "YES: you win the card", "NO: out this round", "All out, or NO while",
                    "searching: the card is", "set aside, nobody scores"),
    "strict": ("Grab Master shows a", "piece; seekers feel", "for it. Press = found!",
               "YES: card, new master", "NO: round over: all", "others get a card each,",
               "master stays master", "NO while searching:", "master gets the card"),
}


@functools.lru_cache(maxsize=None)
def _seekers(n: int, grab_master: int | None) -> frozenset[int]:
    """Every player but the Grab Master (a shared immutable set: asked on every press and close)."""
    return frozenset(i for i in range(n) if i != grab_master)


def _award(state: GrabBag, player: int, what: str) -> GrabBag:
    scores = list(state.scores)
    scores[player] += 1
    return replace(state, scores=tuple(scores), deck=state.deck - 1, last=what)


def _nobody_found(state: GrabBag) -> GrabBag:
    """Every seeker out, or NO while searching: the Grab Master's card, or set aside."""
    if state.grab_master is None:
        out = replace(state, deck=state.deck - 1, set_aside=state.set_aside + 1, last="card set aside")
    else:
        out = _award(state, state.grab_master, f"{state.players[state.grab_master]} keeps it")
    return _next_round(out)


def _strict_share(state: GrabBag, wrong: int) -> GrabBag:
    """Strict variant: everyone but the wrong seeker gets a card, clockwise after them."""
    scores, deck = list(state.scores), state.deck
    for k in range(1, state.n):
        if deck == 0:
            break
        scores[(wrong + k) % state.n] += 1
        deck -= 1
    return replace(state, scores=tuple(scores), deck=deck,
                   last=f"{state.players[wrong]} wrong: others +1")


def _next_round(state: GrabBag) -> GrabBag:
    if state.deck <= 0:
        return replace(state, phase="over", buzzed=None, excluded=frozenset(), target=None)
    state = replace(state, round=state.round + 1, phase="searching", buzzed=None, excluded=frozenset())
    return _turn_card(state) if state.variant == "all-seekers" else state


def _turn_card(state: GrabBag) -> GrabBag:
    """All seekers: the box turns over the next target card; a used-up stack is reshuffled."""
    stack, rng = state.stack, state.rng
    if not stack:
        stack, rng = rand.shuffled(rng, state.pieces)
    return replace(state, target=stack[0], stack=stack[1:], rng=rng)


GAME = GrabBagGame()
