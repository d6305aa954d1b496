"""All Wound Up's own screens on the big screen: the Brain-token bank and the round guide, from
the game's report, in the words and order the OLED uses (ui/all_wound_up.py draws the same
state), so that a host who opened one from the phone sees what the box shows. Pure."""
from __future__ import annotations

from typing import Any

from . import brain_bank as bb

# The token colours as the bank's column heads: short, so that the table fits a 720p TV at the
# size read from the sofa.
HEADS = {"black": "blk", "purple": "pur", "green": "grn", "yellow": "yel", "red": "red"}


def screen_moment(report: dict[str, Any]) -> dict[str, Any]:
    """The moment for the bank (`screen` "bank") or the round guide (any other screen)."""
    if report.get("screen") == "bank":
        return bank_moment(report)
    return guide_moment(report)


def bank_moment(report: dict[str, Any]) -> dict[str, Any]:
    """The bank: a row of token counts per player under the bank's own, the player whose action
    is under the cursor marked, and the action itself as the big line; or the yellow token's
    question and answer."""
    screen = report.get("bank_screen") or {}
    ask, shown = screen.get("ask"), screen.get("shown")
    if shown:
        return {"kind": "card", "title": "Yellow token", "big": f"{shown['player']}: take card #{shown['card']}",
                "small": f"from the left of {shown['from']}'s hand ({shown['hand']})", "player": shown["player"]}
    if ask:
        return {"kind": "card", "title": "Yellow token", "big": f"{ask['from']}'s hand: {ask['hand']} cards?",
                "small": f"{ask['player']} takes a card", "ask": "Dial the count \u00b7 YES picks",
                "player": ask["player"]}
    chosen: dict[str, Any] | None = screen.get("cursor")
    names = list(report.get("players") or ())
    tokens, brains = report.get("tokens") or {}, report.get("brains") or {}
    rows = [{"cells": ["Bank"] + [str((report.get("bank") or {}).get(c, 0)) for c in bb.COLOURS] + [""],
             "mark": False}]
    rows += [{"cells": [p] + [str(tokens.get(p, {}).get(c, 0)) for c in bb.COLOURS] + [str(brains.get(p, 0))],
              "mark": chosen is not None and chosen["player"] == p} for p in names]
    big = f"{chosen['player']}: {chosen['action']}" if chosen is not None else \
        "done; dial for more" if screen.get("used") else "nothing to do"
    return {"kind": "card", "title": "Brain tokens", "big": big, "small": "",
            "ask": "Dial: next \u00b7 YES: do it \u00b7 NO: close",
            "head": [""] + [HEADS.get(c, c) for c in bb.COLOURS] + ["brains"], "rows": rows}


def guide_moment(report: dict[str, Any]) -> dict[str, Any]:
    """The round guide: the step (deal, pass, discard, bid), who acts in what order."""
    guide = report.get("guide") or {}
    order = list(guide.get("order") or ())
    if guide.get("step") == "deal":
        small = f"bidder: {guide.get('bidder', '')}"
    else:
        small = " \u203a ".join(order)
    hint = "YES: next \u00b7 hold YES: deal" if guide.get("step") == "bid" else "YES: next \u00b7 NO: close"
    return {"kind": "card", "title": f"Round {guide.get('round', '')} \u00b7 dealer {guide.get('dealer', '')}",
            "big": guide.get("text", ""), "small": small, "ask": hint}
