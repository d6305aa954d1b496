"""All Wound Up's round guide: dealer and bidder rotation, the deal, the passing steps, bidding order.

A round is: the dealer deals 10 cards each; the passing steps (2 players: pass 3, discard 2 draw 2,
discard 1 draw 1; 3-4 players: pass n+1, n, ... 1 to the left, starting left of the dealer); then
bids until the hands are empty. Each bid starts with the bidder and goes clockwise; after a bid
the player to the bidder's left becomes the bidder. The bidder carries on rotating from round to
round (the rulebook sets it left of the dealer only at setup); the dealer moves left each round.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..core.frozen import replace

DEAL = 10


@dataclass(frozen=True)
class Step:
    kind: str                # deal | pass | discard | bid
    cards: int | None        # cards dealt, passed or discarded; None while bidding
    order: tuple[int, ...]   # who acts, in order
    bid: int = 0             # bids this round, from 1, while bidding


@dataclass(frozen=True)
class Guide:
    n: int
    dealer: int
    first_bidder: int
    round: int = 1
    step: int = 0            # 0 = deal, then the passing steps, then one step per bid
    bids_before: int = 0     # bids in earlier rounds: the bidder keeps rotating across rounds


def new_guide(n: int, dealer: int) -> Guide:
    return Guide(n=n, dealer=dealer, first_bidder=(dealer + 1) % n)


def passing(n: int) -> tuple[tuple[str, int], ...]:
    """The passing steps for `n` players: (kind, cards)."""
    if n == 2:
        return (("pass", 3), ("discard", 2), ("discard", 1))
    return tuple(("pass", k) for k in range(n + 1, 0, -1))


def clockwise_from(n: int, first: int) -> tuple[int, ...]:
    return tuple((first + k) % n for k in range(n))


def bids_done(guide: Guide) -> int:
    """Bids started this round (the current one included)."""
    return max(0, guide.step - len(passing(guide.n)))


def bidder(guide: Guide) -> int:
    """The bidder now, or the one who will open the bidding this round."""
    return (guide.first_bidder + guide.bids_before + max(0, bids_done(guide) - 1)) % guide.n


def current(guide: Guide) -> Step:
    steps = passing(guide.n)
    if guide.step == 0:
        return Step("deal", DEAL, (guide.dealer,))
    if guide.step <= len(steps):
        kind, cards = steps[guide.step - 1]
        return Step(kind, cards, clockwise_from(guide.n, (guide.dealer + 1) % guide.n))
    return Step("bid", None, clockwise_from(guide.n, bidder(guide)), bids_done(guide))


def forward(guide: Guide) -> Guide:
    """The next step: deal, each passing step, then bid after bid (the bidder moves left)."""
    return replace(guide, step=guide.step + 1)


def back(guide: Guide) -> Guide:
    """One step back within the round (a mistaken press); never before the deal."""
    return replace(guide, step=max(0, guide.step - 1))


def next_round(guide: Guide) -> Guide:
    """The hands are empty: the player left of the dealer deals the next round."""
    return replace(guide, round=guide.round + 1, step=0, dealer=(guide.dealer + 1) % guide.n,
                   bids_before=guide.bids_before + bids_done(guide))


def describe(step: Step, names: tuple[str, ...]) -> str:
    """The step as the guide screen's headline."""
    if step.kind == "deal":
        return f"{names[step.order[0]]} deals {step.cards}"
    if step.kind == "discard":
        return f"Discard {step.cards}, draw {step.cards}"
    if step.kind == "pass":
        return f"Pass {step.cards} across" if len(names) == 2 else f"Pass {step.cards} left"
    return f"Bid {step.bid}: {names[step.order[0]]}"
