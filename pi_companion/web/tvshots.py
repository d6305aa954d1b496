"""The big screen's views beyond a game's own moments, played on a live box: the box's menu and
text cards, All Wound Up's bank and round guide, Hold Your Breath!'s Panic cards and Shark on a
table of four, a Grab Bag seeker judged out, a Hands Up! deal paused, a wind verdict inside the
tolerance, and the board's join QR.

Each view is a short script on pi_companion.web.live's stack (the box's real loop, log and hub,
the real `pi-companion web`), by the box's pins and the host's commands (which enter the box's
queue and log as the phone's do). It calls `shoot(label)` where the TV must show something;
tests_browser/test_tv_views.py measures the page there at every size and `make screenshots`
(pi_companion.webshots) pictures it."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.events import HostCommand
from .live import Live

Shoot = Callable[[str], None]


def host(live: Live, command: str, **fields: Any) -> None:
    """A host command as the phone's page sends it, once the box has handled it."""
    live.box.put_host_command(HostCommand(0.0, command, **fields))
    live.until(lambda: live.box.queue.empty() and not live.box.stale)


def dives(live: Live, shoot: Shoot) -> None:
    """Four divers: Alexa swims down, Ben gets no air (a Panic), Cy plays the Shark onto Dee and
    swims; both cards stay on the board turn after turn."""
    box = live.box
    report = box.engine.report
    host(live, "dial", delta=1)
    host(live, "dial", delta=1)
    live.tap("YES")                                     # Alexa ends her turn at 10 ft
    live.until(lambda: report()["current"] == "Ben")
    live.tap("NO")                                      # no air: Ben panics
    live.until(lambda: report()["panic"]["Ben"] == 1)
    live.tap("YES")
    live.until(lambda: report()["current"] == "Cy")
    live.tap("P4")                                      # Dee picked, long YES: the Shark on her
    live.until(lambda: report()["selected"] == "Dee")
    live.tap("YES", hold=1.3)
    live.until(lambda: report()["shark"] == "Dee")
    for _ in range(3):
        host(live, "dial", delta=1)
    live.tap("YES")
    live.until(lambda: report()["current"] == "Dee")
    shoot("dee")
    live.tap("YES")
    live.until(lambda: report()["current"] == "Alexa")
    shoot("alexa")


def box_screens(live: Live, shoot: Shoot) -> None:
    """All Wound Up's screens that the OLED shows over the game: the menu (from the box's own
    MENU), then from the host's phone the bank (a brain moved by the dial and YES), the round
    guide, the token effects card, and a New game waiting for its second YES."""
    box = live.box
    live.tap("MENU")
    live.until(lambda: box.engine.menu is not None)
    shoot("menu")
    live.tap("MENU")
    live.until(lambda: box.engine.menu is None)
    host(live, "menu", name="bank")
    shoot("bank")
    host(live, "yes")                                   # the cursor's action: a brain from the bank
    shoot("bank-after")
    host(live, "no")
    live.until(lambda: box.engine.report()["screen"] == "main")
    host(live, "menu", name="guide")
    shoot("guide")
    host(live, "no")
    host(live, "menu", name="token-help")
    shoot("effects")
    host(live, "no")
    live.until(lambda: box.engine.menu is None)


def seeker_out(live: Live, shoot: Shoot) -> None:
    """Grab Bag: Ben presses first and is judged wrong; he sits out the rest of the round."""
    box = live.box
    live.buzz(["P2"])
    live.tap("NO")
    live.until(lambda: not box.engine.table.judging and box.engine.report()["out"] == ["Ben"])
    shoot("out")


def deal_paused(live: Live, shoot: Shoot) -> None:
    """Hands Up!: MENU > Pause beats from the phone while the cards are being dealt."""
    box = live.box
    host(live, "new")                                   # the deal starts now: 10 s to the first beat
    host(live, "menu", name="pause")
    live.until(lambda: box.engine.report()["paused"] and box.engine.report()["beats"] == 0)
    shoot("paused")


def in_tolerance(live: Live, shoot: Shoot) -> None:
    """All Wound Up: Ada dials 2 turns and winds 2 1/4: EXACT, a quarter over, in tolerance."""
    box = live.box
    live.tap("P1")
    live.until(lambda: box.engine.report()["check"] is not None)
    live.quadrature("ENC_A", "ENC_B", [(0, 1), (0, 0), (1, 0), (1, 1)], 0.03)          # 1 -> 2
    live.until(lambda: box.engine.report()["check"]["target"] == 2)
    live.quadrature("HALL_A", "HALL_B", [(1, 0), (1, 1), (0, 1), (0, 0)] * 2 + [(1, 0)], 0.05)
    live.until(lambda: box.engine.report()["check"]["steps"] == 9)
    host(live, "yes")                                   # the verdict now, not after the settle
    live.until(lambda: box.engine.report()["check"] is None and box.engine.report()["attempts"])
    shoot("verdict")


def join(live: Live, shoot: Shoot) -> None:
    """The board as a second phone finds it: its QR code and address beside the table."""
    shoot("board")


# name: (game, options, players, script)
VIEWS: dict[str, tuple[str, dict[str, Any], tuple[str, ...], Callable[[Live, Shoot], None]]] = {
    "hold-your-breath-cards": ("hold-your-breath", {}, ("Alexa", "Ben", "Cy", "Dee"), dives),
    "all-wound-up-screens": ("all-wound-up", {}, ("Ada", "Ben", "Cy"), box_screens),
    "grab-bag-out": ("grab-bag", {}, ("Ada", "Ben", "Cy"), seeker_out),
    "hands-up-deal-paused": ("hands-up", {"beat_ms": 10000}, ("Ada", "Ben", "Cy"), deal_paused),
    "all-wound-up-tolerance": ("all-wound-up", {"settle_ms": 8000}, ("Ada", "Ben", "Cy"), in_tolerance),
    "join": ("grab-bag", {}, ("Ada", "Ben", "Cy"), join),
}
