"""The table: the game in play, undo, the menu and the host's commands - what an action means.

The button actions (a player's press, a short or long YES/NO/MENU, a detent of the encoder)
arrive here from the controls (core/controls.py) and the host's commands from the remote
(`_host`): the same layer, the same state, the same log. A player's press that may be a buzz
goes to the settle window (`_player_press`, which the engine gives its arbitration); everything
else reaches the game here, through `_step`. Undo keeps a snapshot of the table (`Table`)
before every judgement that changed the game.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

from . import rand
from .events import (Action, BuzzOrder, Dial, Effect, HostCommand, HotspotState, Judge, MenuChoice, PlayerHold,
                     PlayerPress, Request, Sound, Undone, Verdict)
from .frozen import lazy_frozen, replace
from .game import Catalogue, Game, players_problem, players_range
from .menu import BOX_ENTRIES, CONFIRM, HOLD, PLAY_AGAIN, Menu
from .names import name_problem
from .namelist import grown
from .players_menu import name_sets, players_menu
from .players_menu import names_problem as names_problem   # the hub checks names with it
from .records import SEATS
from .colours import DEFAULT_COLOURS
from .tunes import DEFAULT_TUNES, buzz_sound



@dataclass(frozen=True)
class Table:
    """What undo restores: the game, the engine's random source and the buzz being judged."""
    game: Any
    rng: int
    last_buzz: BuzzOrder | None = None
    judging: bool = False                  # a decided buzz awaits judgement: record later presses
    eligible: frozenset[int] = frozenset()
    earlier: tuple[BuzzOrder, ...] = ()    # the last buzz of each other winner (a reopened check)


@lazy_frozen        # made at the first New game, Change game or Players (core/frozen.py)
class GameBefore:
    """What undo restores after New game, Change game or Players: the whole table as it was,
    with its own undo steps and the games played (the next New game's seed). The table is the
    same one in the engine for Change game and Players: the box plays those in a new engine
    (and log) of its own, and restores the one before from its log (app.py: `_restore`)."""
    table: Table
    undo: tuple[tuple["Table | GameBefore", str], ...]
    games_played: int


UndoStep = tuple["Table | GameBefore", str]
# The host's remote: what it may send (hub.py checks each one's fields before it is queued).
HOST_COMMANDS = ("yes", "no", "special", "undo", "new", "rename", "switch", "players", "dial", "menu",
                 "press", "hold", "end-evening")


class Tabletop:
    """The table's state and what each action does to it. The engine (core/engine.py) is a
    Tabletop with a clock, the controls and the settle window."""

    clock: float                          # the time now, as whoever drives the table keeps it

    def __init__(self, rules: Game, players: tuple[str, ...], options: Mapping[str, Any], seed: int,
                 catalogue: Catalogue | None = None, seats: int = SEATS) -> None:
        self.rules = rules
        self.seats = seats              # player buttons on the box: never more players than these
        self.catalogue = catalogue      # the games "Change game" offers (None: this one only)
        self.players = tuple(players)
        self.options = dict(options)
        self.seed = seed
        self.table = Table(rules.new_game(self.players, self.options, seed), rand.seed_state(seed, 1))
        self.undo_stack: list[UndoStep] = []
        # Undo found nothing to undo (cleared by the next input fed): the box then brings back
        # the game before this one if it started this one by New game, Change game or Players.
        self.restore_asked = False
        self.menu: Menu | None = None
        self.tunes: tuple[str, ...] = DEFAULT_TUNES      # the players' buzz tunes (the config's)
        self.colours: tuple[str, ...] = DEFAULT_COLOURS  # their buttons' colours (the config's)
        self.notice = ""
        self.hotspot: tuple[str, str] | None = None     # (ssid, address) while the box's own Wi-Fi is up
        self.shutdown_requested = False
        self.games_played = 0
        # Tonight's names, newest first (core/namelist.py): the header's, grown by every rename
        # and Players, so a fold offers what the live menu offered.
        self.tonight: tuple[str, ...] = ()
        self.presses = 0                                  # debounced player presses seen
        self._effects: list[Effect] = []

    @property
    def game(self) -> Any:
        return self.table.game

    @property
    def testing(self) -> bool:
        """The button test is on screen: every input is shown, none reaches the game."""
        return self.menu is not None and self.menu.button_test

    def report(self) -> dict[str, Any]:
        body = self.rules.report(self.game)
        winners = [self.players[i] for i in body.pop("winners")]
        buzz = self.table.last_buzz
        return {
            "game": self.rules.name,
            "players": list(self.players),
            "over": body.pop("over"),
            "winners": winners,
            "phase": body.pop("phase"),
            "last_buzz": None if buzz is None else {
                "winner": self.players[buzz.winner],
                "order": [{"player": self.players[p], "after_ms": ms} for p, ms in buzz.ordered()],
            },
            "shutdown_requested": self.shutdown_requested,
            **body,
        }

    # ---- button actions (from the controls) ----

    def _down(self, button: str, t: float) -> bool:
        """A player's button went down: their press (unless the button test is on: their tune).
        True: the controls time its hold."""
        player = int(button[1:]) - 1
        if player >= len(self.players):
            return False
        self.presses += 1
        menu = self.menu            # (`testing`, on every player's press)
        if menu is not None and menu.button_test:
            self._effects.append(Sound(buzz_sound(player)))  # the button test plays their tune
            return False
        self.menu = None            # the table plays on: a player's press closes the menu
        self._player_press(player, t)
        return True

    def _player_press(self, player: int, t: float) -> None:
        """A player pressed (the engine collects buzzes in a settle window first)."""
        self._step(PlayerPress(t, player))

    def _cleared(self) -> None:
        """The table was reset (undo, a new game): the engine drops its window and game timer."""

    def _held(self, button: str, t: float) -> None:
        """A button stayed down its long-press (or hold) time and is still down: act now (the
        controls have made its release do nothing)."""
        if self.testing and button in ("YES", "NO"):
            self.menu = None                # held YES or NO leaves the button test
        elif button == "NO":
            self.menu = None
            self._undo()
        elif button == "YES" and self.menu is not None:
            if self.menu.selected in HOLD and not (self.menu.card or self.menu.qr):
                self._menu_held(self.menu.selected)
        elif button == "YES":
            self._judge("special", t)
        elif button == "MENU":
            self.shutdown_requested = True
            self._effects.append(Request("shutdown"))
        elif self.menu is None:
            self._step(PlayerHold(t, int(button[1:]) - 1))

    def _short(self, button: str, t: float) -> None:
        if self.testing:
            return
        if button == "MENU":
            self._toggle_menu()
        elif button in ("YES", "NO"):
            if self.menu is not None:
                self._menu_button(button, t)
            elif button == "YES" and self.rules.is_over(self.game):
                self.menu = Menu(PLAY_AGAIN, confirm="new")   # game over: YES, YES plays again
            else:
                self._judge("yes" if button == "YES" else "no", t)

    def _dial(self, t: float, delta: int) -> None:
        if self.menu is not None:
            self.menu = self.menu.move(delta)
        else:
            self._step(Dial(t, delta))

    # ---- judgements and undo ----

    def _judge(self, verdict: Verdict, t: float) -> None:
        if self.menu is not None:
            return
        before = self.table
        label = self.rules.undo_label(before.game, verdict)
        self._step(Judge(t, verdict))
        if self.table.game != before.game and self.rules.is_undo_step(before.game, self.table.game):
            self.undo_stack.append((before, label))
            self.table = self._judged(self.rules.open_buzz(self.table.game))
            self.notice = ""

    def _earlier(self) -> tuple[BuzzOrder, ...]:
        """`earlier` once the last buzz is replaced: it joins them (one per winner)."""
        last = self.table.last_buzz
        if last is None:
            return self.table.earlier
        return tuple(b for b in self.table.earlier if b.winner != last.winner) + (last,)

    def _judged(self, reopened: int | None) -> Table:
        """The table after a judgement: the buzz is over, unless the game judges `reopened`'s
        buzz again (its order comes back and goes on listing presses)."""
        table = self.table
        if reopened is None:
            return replace(table, judging=False)
        if table.last_buzz is not None and table.last_buzz.winner == reopened:
            return replace(table, judging=True)
        buzz = next((b for b in table.earlier if b.winner == reopened), None)
        if buzz is None:
            return replace(table, judging=False)
        return replace(table, judging=True, last_buzz=buzz, earlier=self._earlier())

    def _undo(self) -> None:
        if not self.undo_stack:
            self.notice = "Nothing to undo"
            self.restore_asked = True
            self._effects.append(Request("restore"))     # the box may have the game before
            return
        entry, label = self.undo_stack[-1]
        if isinstance(entry, GameBefore):                # New game / Change game / Players
            self.undo_stack.pop()
            self.table = entry.table
            self.undo_stack = list(entry.undo)
            self.games_played = entry.games_played
            self.menu = None
            self._cleared()
            self._step(Undone(self.clock))
            self.notice = f"Undone: {label}"
            self._effects.append(Sound("undo"))
            return
        game, refusal = self.rules.undo_to(entry.game, self.game)
        if refusal is not None:
            self.notice = refusal
            self._effects.append(Sound("wrong"))
            return
        self.undo_stack.pop()
        assert isinstance(entry, Table)
        self.table = replace(entry, game=game)
        self._cleared()
        self._step(Undone(self.clock))
        self.notice = f"Undone: {label}"
        self._effects.append(Sound("undo"))

    def _step(self, action: Action, **table: Any) -> None:
        """The game takes `action`; `table`: changes to the table made with it (one copy)."""
        before = self.table.game
        game, effects = self.rules.step(before, action)
        if game is before:              # most hall edges and ticks change nothing: no copy
            if table:
                self.table = replace(self.table, **table)
            self._effects.extend(effects)
            return
        was_over = self.rules.is_over(before)
        self.table = replace(self.table, game=game, **table)
        self._effects.extend(effects)
        if not was_over and self.rules.is_over(game):
            self._effects.append(Sound("over"))

    def _take_effects(self) -> list[Effect]:
        out, self._effects = self._effects, []
        return out

    # ---- the box's own Wi-Fi (a logged input: what the menu offers depends on it) ----

    def _hotspot(self, event: HotspotState) -> None:
        """The hotspot came up (its Wi-Fi QR opens, for the first phone to join), went down, or
        changed; the same state again changes nothing."""
        state = (event.ssid, event.address) if event.ssid else None
        if state == self.hotspot:
            return
        came_up = self.hotspot is None
        self.hotspot = state
        if came_up:
            self.menu = Menu((), qr="wifi")

    # ---- the host's remote (a logged input like a press; never a player's press) ----

    def _host(self, cmd: HostCommand) -> None:
        """A command from the host's remote: the same as the box's button or menu entry for it."""
        if self.testing:
            return
        if cmd.command in ("yes", "no") and self.menu is not None and (self.menu.card or self.menu.qr):
            # A text card or a QR code is on the box: NO leaves it (judging nothing under it),
            # YES does what the box's YES does there.
            if cmd.command == "no":
                self.menu = None
            else:
                self._menu_button("YES", cmd.t)
            return
        if cmd.command in ("yes", "no", "special"):
            self.menu = None
            self._judge(cmd.command, cmd.t)  # type: ignore[arg-type]
        elif cmd.command == "undo":
            self.menu = None
            self._undo()
        elif cmd.command == "new":
            self.menu = None
            self.new_game()
            self._effects.append(Request("new"))
        elif cmd.command == "switch":
            self.menu = None
            target = next((g for g in (self.catalogue() if self.catalogue else ()) if g.name == cmd.name), None)
            if target is not None and players_problem(target, len(self.players)) is not None:
                # Refused here, in the log's own terms (the box would refuse it too, in its own
                # words that are not in the log): this game and its undo steps stay as they were.
                self.notice = players_range(target)
                return
            self._before_new("Change game")
            self._effects.append(Request("switch", cmd.name, cmd.options))
        elif cmd.command == "rename":
            self._rename(cmd.player, cmd.name)
        elif cmd.command == "players":
            try:
                names = json.loads(cmd.options)
            except ValueError:
                names = None
            self._set_players(names)
        elif cmd.command == "dial":          # a detent of the encoder (Hands Up!'s tempo, the bank)
            self.menu = None
            self._step(Dial(cmd.t, 1 if cmd.delta > 0 else -1))
        elif cmd.command == "menu":          # one of the game's own menu entries (pause, the bank)
            self._game_menu(cmd.name, cmd.t)
        elif cmd.command in ("press", "hold"):   # a player's button, on their behalf
            self._on_behalf(cmd.command, cmd.player, cmd.t)
        elif cmd.command == "end-evening":   # the podium (gamelog/evening.py); not an undo step
            self._end_evening()
        elif cmd.command == "wifi":          # a log from before hotspot records: it came up
            self.menu = Menu((), qr="wifi")
        else:
            self.notice = f"unknown host command {cmd.command[:16]}"

    def _on_behalf(self, what: str, player: int, t: float) -> None:
        """The host presses (or holds 2 s) `player`'s button for them: a die roll, "who holds
        nothing?", a pick, a gate claim. Refused with a notice when the press would be a buzz or
        join one being judged: who pressed first is decided by the buttons alone."""
        if not 0 <= player < len(self.players):
            self.notice = "Press refused: no such player"
            return
        name = self.players[player][:16]
        if what == "press" and (player in self.rules.buzzers(self.game) or self.table.judging):
            self.notice = f"{name}'s press is a buzz: not now"
            return
        self.menu = None
        self._step(PlayerPress(t, player) if what == "press" else PlayerHold(t, player))

    def _game_menu(self, key: str, t: float) -> None:
        """The game's menu entry `key`, as if chosen on the box's menu: refused with a notice
        if the game has no such entry now, or it is greyed (it does nothing now)."""
        items = dict(self.rules.menu_items(self.game))
        if key not in items or key in self.rules.menu_disabled(self.game):
            self.notice = f"{items.get(key, key)[:20]}: not now"
            return
        self.menu = None
        card = self.rules.menu_card(self.game, key)
        if card is not None:                 # a text card: the page shows the board, not a card
            self.menu = Menu(((key, items[key]),)).show_card(*card)
            return
        self._menu_choice(key, items[key], t)

    def _menu_choice(self, key: str, label: str, t: float) -> None:
        before = self.table
        self._step(MenuChoice(t, key))
        if self.table.game != before.game and self.rules.is_menu_undo_step(before.game, self.table.game, key):
            self.undo_stack.append((before, label))   # one step of its own

    def _before_new(self, label: str) -> None:
        """This game is about to give way (New game, Change game, Players): one undo step that
        brings it back whole."""
        self.undo_stack = [(GameBefore(self.table, tuple(self.undo_stack), self.games_played), label)]

    def _rename(self, player: int, name: str) -> None:
        """A new name for a player, in the game and in every state undo can restore."""
        problem = name_problem(name)
        name = name.strip()
        others = [p for i, p in enumerate(self.players) if i != player]
        if not 0 <= player < len(self.players) or problem is not None or name in others:
            self.notice = "Rename refused"
            return
        name = name.strip()
        players = self.players[:player] + (name,) + self.players[player + 1:]

        def renamed(table: Table) -> Table:
            game = table.game
            if hasattr(game, "players"):
                game = replace(game, players=players)
            return replace(table, game=game)
        def renamed_step(step: UndoStep) -> UndoStep:
            entry, label = step
            if isinstance(entry, GameBefore):
                return GameBefore(renamed(entry.table), tuple(renamed_step(u) for u in entry.undo),
                                  entry.games_played), label
            return renamed(entry), label
        self.players = players
        self.tonight = grown(self.tonight, players)
        self.table = renamed(self.table)
        self.undo_stack = [renamed_step(u) for u in self.undo_stack]
        self._effects.append(Request("rename"))

    def _set_players(self, names: Any) -> None:
        """Other players (MENU > Players, the host's `players`): the box starts a new game with
        them (asked twice on the box), as it does for Change game: this game keeps the players it
        was played by (its report, its log), the next one has the new ones in its header.
        Refused with a notice if they cannot play it."""
        problem = names_problem(names, self.rules)
        if problem is None and len(names) > self.seats:
            problem = f"the box has {self.seats} player buttons"
        if problem is not None:
            self.notice = f"Players refused: {problem}"[:60]
            return
        self.menu = None
        self.tonight = grown(self.tonight, names)
        self._before_new("Players")
        self.notice = f"New game: {len(names)} players"
        self._effects.append(Request("players", json.dumps([n.strip() for n in names])))

    # ---- the menu ----

    def _toggle_menu(self) -> None:
        if self.menu is not None:
            self.menu = None
            return
        items = self.rules.menu_items(self.game)
        if self.rules.rules_card():
            items += (("rules", "Rules card"),)
        items += BOX_ENTRIES
        self.menu = Menu(items, disabled=self.rules.menu_disabled(self.game))

    def _end_evening(self) -> None:
        """MENU > End evening or the host's `end-evening`: the box closes tonight's standings
        (the games over so far) and the big screen shows the podium. Undo does not reopen it."""
        self.menu = None
        self.notice = "Evening ended: podium on TV"
        self._effects.append(Request("evening"))

    def _menu_held(self, key: str) -> None:
        """YES held on an entry that asks for it (`HOLD`): Shut down."""
        self.menu = None
        self.shutdown_requested = True     # as for a held MENU: the report says what the box did
        self._effects.append(Request(key))

    def _menu_button(self, button: str, t: float) -> None:
        menu = self.menu
        assert menu is not None
        if menu.qr == "wifi" and button == "YES":      # joined the box's Wi-Fi: now the page
            self.menu = Menu((), qr="board")
            return
        if button == "NO" or menu.card or menu.qr:
            self.menu = None if menu.items == PLAY_AGAIN else menu.back() if button == "NO" else menu
            return
        key = menu.selected
        if key in menu.disabled or key in self.rules.menu_disabled(self.game):
            return                      # greyed: it keeps its place and does nothing now
        if key in HOLD:
            self.menu = replace(menu, confirm=key)     # it asks for YES held; a short YES waits
            return
        if (key in CONFIRM or key.startswith("names:")) and menu.confirm != key:
            self.menu = replace(menu, confirm=key)     # a second YES, so no slip ends the game
            return
        card = self.rules.menu_card(self.game, key)
        if key == "rules":
            self.menu = menu.show_card(self.rules.title, self.rules.rules_card_for(self.game))
        elif card is not None:
            self.menu = menu.show_card(*card)
        elif key == "test":
            self.menu = replace(menu, button_test=True)
            self._effects.append(Sound("correct"))     # the piezo's own test
        elif key == "new":
            self.menu = None
            self.new_game()
            self._effects.append(Request("new"))
        elif key == "switch":
            games = self.catalogue() if self.catalogue is not None else (self.rules,)
            n = len(self.players)           # a game these players cannot play is greyed, saying why
            why = tuple((f"switch:{g.name}", f"{players_range(g)}, not {n}")
                        for g in games if players_problem(g, n) is not None)
            self.menu = Menu(tuple((f"switch:{g.name}", g.title) for g in games),
                             disabled=frozenset(k for k, _ in why), why=why)
        elif key.startswith("switch:"):
            self.menu = None
            self._before_new("Change game")
            self._effects.append(Request("switch", key.removeprefix("switch:")))
        elif key == "close":
            self.menu = None
        elif key == "evening":
            self._end_evening()
        elif key == "players" or key.startswith("players:"):
            self.menu = players_menu(key, self.rules, self.players, self.seats, self.tonight)
        elif key.startswith("names:"):
            _, count, which = key.split(":")
            self._set_players(dict(name_sets(self.players, int(count), self.tonight)).get(which))
        elif key == "web":
            # On the box's own hotspot a phone joins its Wi-Fi first.
            wifi = (("web:wifi", "Join box Wi-Fi"),) if self.hotspot is not None else ()
            self.menu = Menu(wifi + (("web:board", "Scoreboard QR"), ("web:host", "Host remote QR"),
                                     ("web:newhost", "New host")))
        elif key == "about":                  # drawn from the hub's links, as a QR screen is
            self.menu = Menu((), qr="about")
        elif key in ("web:board", "web:host", "web:wifi"):
            self.menu = Menu((), qr=key.removeprefix("web:"))
        elif key == "web:newhost":            # a new host token: the old host's page stops working
            self.menu = Menu((), qr="host")
            self._effects.append(Request("newhost"))
        else:
            self.menu = None
            self._menu_choice(key, dict(menu.items).get(key, key), t)

    def new_game(self) -> None:
        """Start over with the same players and options (the next seed: a new shuffle). Undo
        brings the game before back, as it was."""
        self._before_new("New game")
        self.games_played += 1
        game = self.rules.started(
            self.rules.new_game(self.players, self.options, self.seed + self.games_played), self.clock)
        self.table = Table(game, rand.seed_state(self.seed + self.games_played, 1))
        self._cleared()
        self.notice = "New game"
