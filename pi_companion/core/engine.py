"""The table engine: timestamped inputs in, game actions and effects out, on whatever clock feeds it.

It owns debouncing, long presses, encoder detents, hall decoding, the fair first press (settle
window, earliest edge timestamp wins), undo and the menu. It never reads a clock: `feed(event)`
moves its clock to the event's time, `advance(now)` fires timers due by `now`, and
`next_deadline()` says when the caller should call `advance` next. The live loop, `replay`,
`simulate` and resume after a power cut all drive this one object.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..games.base import Game
from . import rand
from .debounce import DEBOUNCE_S, Debouncer
from .events import (Action, Buzz, BuzzOpened, BuzzOrder, Dial, Edge, Effect, EncoderLevel,
                     HallCounts, HallLevel, HallStep, HostCommand, InputEvent, Judge, MenuChoice,
                     Pending, PlayerHold, PlayerPress, PuckReset, PuckStatus, Request, Resume, Sound,
                     Tick, Turn, Undone, Verdict)
from .frozen import replace
from .menu import CONFIRM, PLAY_AGAIN, Menu
from .names import NAME_MAX, name_problem  # noqa: F401  (NAME_MAX: one rule, core/names.py)
from .quadrature import Quadrature
from .records import Record, from_record, quantize
from .tunes import DEFAULT_TUNES, buzz_sound

LONG_S = {"YES": 1.0, "NO": 1.0, "MENU": 3.0}
HOLD_S = 2.0                 # a player button held this long is a PlayerHold
STEPS_PER_DETENT = 4         # encoder quadrature steps per click
BUTTONS = tuple(f"P{i}" for i in range(1, 9)) + ("YES", "NO", "MENU")
PENDING_GRACE_S = 0.020      # how long a settle window waits for a press edge still in flight


@dataclass(frozen=True)
class Table:
    """What undo restores: the game, the engine's random source and the buzz being judged."""
    game: Any
    rng: int
    last_buzz: BuzzOrder | None = None
    judging: bool = False                  # a decided buzz awaits judgement: record later presses
    eligible: frozenset[int] = frozenset()


@dataclass
class Window:
    """An open settle window: the presses that arrived while it was open; once the box has
    looked at the pins (`looked`), the buttons whose press edge it waits for, each with whether
    an edge of it has arrived since."""
    due: float
    eligible: frozenset[int]
    presses: dict[int, float] = field(default_factory=dict)
    looked: bool = False
    waiting: dict[str, bool] = field(default_factory=dict)


class Engine:
    def __init__(self, rules: Game, players: tuple[str, ...], options: Mapping[str, Any], seed: int,
                 *, debounce_s: float = DEBOUNCE_S) -> None:
        self.rules = rules
        self.players = tuple(players)
        self.options = dict(options)
        self.seed = seed
        self.debounce_s = debounce_s
        self.clock = 0.0
        self.table = Table(rules.new_game(self.players, self.options, seed), rand.seed_state(seed, 1))
        self.undo_stack: list[tuple[Table, str]] = []
        self.buttons = {b: Debouncer(debounce_s) for b in BUTTONS}
        self.holds: dict[str, float] = {}
        self.window: Window | None = None
        self.hall = Quadrature()
        self.encoder = Quadrature()
        self.encoder_steps = 0
        self.puck: tuple[str, int, int] | None = None     # boot id, net, invalid last seen
        self.puck_connected: bool | None = None           # None: no puck in use
        self.menu: Menu | None = None
        self.tunes: tuple[str, ...] = DEFAULT_TUNES      # the players' buzz tunes (the config's)
        self.notice = ""
        self.web: tuple[str, str] = ("", "")     # the big screen's address and the host's (QR only)
        self.shutdown_requested = False
        self.games_played = 0
        self.presses = 0                                  # debounced player presses seen
        self.unheard: set[str] = set()    # read pressed, waited for, no edge came: not waited for
                                          # again until an edge of theirs arrives
        self._spent_tick: float | None = None             # the game timer that last fired
        self.fired = 0                    # timers fired so far (the box logs a wake-up that fired one)
        self._bouncing = False        # a button may have a contact settle due: scan them for timers
        self._effects: list[Effect] = []

    # ---- driving ----

    def feed(self, event: InputEvent) -> list[Effect]:
        """Handle one input: first fire every timer due by its time, then act on it. (A
        `Pending` acts first: the box looked at the pins before the window could close.)"""
        if isinstance(event, Pending):
            self._pend(event)
        self._fire_due(max(self.clock, event.t))
        self._handle(event)
        return self._take_effects()

    def advance(self, now: float) -> list[Effect]:
        """Let the clock run on to `now`, firing timers due by then."""
        self._fire_due(max(self.clock, now))
        return self._take_effects()

    def next_deadline(self) -> float | None:
        due = self._next_timer()
        return None if due is None else due[0]

    # ---- views ----

    @property
    def game(self) -> Any:
        return self.table.game

    @property
    def testing(self) -> bool:
        """The button test is on screen: every input is shown, none reaches the game."""
        return self.menu is not None and self.menu.button_test

    @property
    def settling(self) -> bool:
        """A fair-press settle window is open: presses still being collected, no winner yet.
        (A live loop should keep the CPU free meanwhile: a late press callback must run.)"""
        return self.window is not None

    def look(self, down: Iterable[str], t: float) -> Pending | None:
        """What the live box feeds (and logs) when the open settle window is due and the buttons
        in `down` read pressed on the pins at `t`: the eligible players who have not pressed in
        this window and whose press edge has not arrived (their debounced contact is open) -
        edges in flight. None if there are none, or the window was looked at already: it is
        then decided as it is. Pure: the caller reads the pins."""
        window = self.window
        if window is None or window.looked:
            return None
        pending = tuple(b for b in BUTTONS[:len(self.players)] if b in down and self._in_flight(b, window))
        return Pending(t, pending, quantize(t + PENDING_GRACE_S)) if pending else None

    def held(self) -> list[str]:
        """The buttons down right now (debounced)."""
        return [name for name, deb in self.buttons.items() if deb.logical]

    def lit(self) -> frozenset[int]:
        if self.testing:
            return frozenset(int(b[1:]) - 1 for b in self.held() if b.startswith("P"))
        return self.rules.lit(self.game)

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

    # ---- timers ----

    def _next_timer(self) -> tuple[float, int, str] | None:
        """The timer to fire first: the earliest due time, then the lowest kind (0 a button's
        debounce settle, 1 a long press, 2 the settle window, 3 the game's timer), then the
        first in button order. One scan, nothing allocated per timer: it runs on every input.
        The buttons are scanned only after an edge (only an edge starts a contact settle), until
        a scan finds none due: a hall spin or a dial turn never looks at them."""
        best: tuple[float, int, str] | None = None
        if self._bouncing:
            for name, deb in self.buttons.items():
                at = deb.settle_due
                if at is not None and (best is None or at < best[0]):
                    best = (at, 0, name)
            self._bouncing = best is not None
        for name, at in self.holds.items():
            if best is None or at < best[0]:
                best = (at, 1, name)
        window = self.window
        if window is not None and (best is None or window.due < best[0]):
            best = (window.due, 2, "")
        game_due = self.rules.next_timer(self.table.game)
        if game_due is not None and game_due != self._spent_tick and (best is None or game_due < best[0]):
            best = (game_due, 3, "")
        return best

    def _fire(self, kind: int, name: str, at: float) -> None:
        if kind == 0:
            self._settle(name)
            self._heard(name)
        elif kind == 1:
            self._held(name, at)
        elif kind == 2:
            self._close_window(at)
        else:
            self._tick(at)

    def _tick(self, t: float) -> None:
        """The game's timer fired; a game that leaves the same due time is not fired again."""
        self._spent_tick = t
        self._step(Tick(t))

    def _fire_due(self, now: float) -> None:
        while True:
            due = self._next_timer()
            if due is None or due[0] > now:
                break
            at, kind, name = due
            self.clock = max(self.clock, at)
            self.fired += 1
            self._fire(kind, name, at)
        self.clock = now

    # ---- inputs ----

    def _handle(self, event: InputEvent) -> None:
        if isinstance(event, Edge):
            deb = self.buttons.get(event.button)
            if deb is not None:
                for pressed, t in deb.edge(event.t, event.pressed):
                    self._transition(event.button, pressed, t)
                if deb.settle_due is not None:     # a bounce: a contact settle is due
                    self._bouncing = True
                self.unheard.discard(event.button)
                self._heard(event.button)
        elif isinstance(event, Turn):
            self._dial(event.t, event.delta)
        elif isinstance(event, EncoderLevel):
            self.encoder_steps += self.encoder.set_level(event.sensor, event.level)
            if abs(self.encoder_steps) >= STEPS_PER_DETENT:
                delta = 1 if self.encoder_steps > 0 else -1
                self.encoder_steps -= delta * STEPS_PER_DETENT
                self._dial(event.t, delta)
        elif isinstance(event, HallLevel):
            self._hall_level(event)
        elif isinstance(event, HallCounts):
            self._hall_counts(event)
        elif isinstance(event, PuckStatus):
            self._puck_status(event)
        elif isinstance(event, Resume):
            self._resume(event)
        elif isinstance(event, HostCommand):
            self._host(event)

    def _resume(self, event: Resume) -> None:
        """The box (re)started: nothing from before the cut is in flight any more (see `Resume`).

        A button the log left down was released at the cut, without effect (its short press
        needs a release that never came, its long press a hold nobody can prove); a button down
        now is ignored until released, like any button held at start. The hall and encoder
        decoders take the levels read at start, if given."""
        held = [b for b in event.held if b in self.buttons]
        for name, deb in self.buttons.items():
            deb.raw = deb.logical = name in held
            deb.last_edge = float("-inf")          # the cut separates edges: no bounce across it
            deb.settle_due = None
        self.holds.clear()
        # The sensors' levels as the box read them at start: a magnet resting on a latch, an
        # encoder contact resting closed, a turntable moved while the power was off. Taken as
        # they are, with no step and no missed edge (nobody saw how they got there), so the
        # first edge after is decoded from where the sensors really are.
        for decoder, levels in ((self.hall, event.hall), (self.encoder, event.encoder)):
            if levels is not None:
                decoder.a, decoder.b = (1 if levels[0] else 0), (1 if levels[1] else 0)
        self.encoder_steps = 0                     # half a detent before + half after is no detent
        if self.window is not None:                # no press can join it any more: decide it now
            self._close_window(self.clock)
        self.unheard.clear()                       # the pins were read afresh (`held`)
        self.shutdown_requested = False
        if held:
            self.notice = f"{', '.join(held)} held down: ignored"

    def _hall_level(self, event: HallLevel) -> None:
        level = self.hall.a if event.sensor == "A" else self.hall.b
        if int(event.level) == level:
            return
        invalid = self.hall.invalid
        delta = self.hall.set_level(event.sensor, int(event.level))
        self._step(HallStep(event.t, delta, self.hall.invalid != invalid))

    def _hall_counts(self, event: HallCounts) -> None:
        last = self.puck
        self.puck = (event.boot_id, event.net, event.invalid)
        if last is None or last[0] != event.boot_id:
            return
        delta, invalid = event.net - last[1], event.invalid - last[2]
        if delta or invalid:
            self._step(HallStep(event.t, delta, invalid > 0))

    def _puck_status(self, event: PuckStatus) -> None:
        rebooted = self.puck is not None and self.puck[0] != event.boot_id
        if not event.connected or rebooted:
            self.puck = None
            self._step(PuckReset(event.t))
        if event.connected != self.puck_connected:
            self.notice = "" if event.connected else "puck disconnected"
        self.puck_connected = event.connected

    def _settle(self, button: str) -> None:
        for pressed, t in self.buttons[button].settle():
            self._transition(button, pressed, t)

    def _transition(self, button: str, pressed: bool, t: float) -> None:
        if pressed:
            self._down(button, t)
        elif button in self.holds:
            del self.holds[button]
            self._short(button, t)

    def _down(self, button: str, t: float) -> None:
        if button in LONG_S:
            self.holds[button] = t + LONG_S[button]
            return
        player = int(button[1:]) - 1
        if player >= len(self.players):
            return
        self.presses += 1
        if self.testing:
            self._effects.append(Sound(buzz_sound(player)))  # the button test plays their tune
            return
        self.holds[button] = t + HOLD_S
        self.menu = None            # the table plays on: a player's press closes the menu
        self._player_press(player, t)

    def _held(self, button: str, t: float) -> None:
        """A button stayed down its long-press time: act now; its release will do nothing."""
        del self.holds[button]             # so its release does nothing
        if not self.buttons[button].logical:
            return
        if self.testing and button in ("YES", "NO"):
            self.menu = None                # held YES or NO leaves the button test
        elif button == "NO":
            self.menu = None
            self._undo()
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

    # ---- the fair first press ----

    def _player_press(self, player: int, t: float) -> None:
        window = self.window
        if window is not None:
            if player in window.eligible and player not in window.presses:
                window.presses[player] = t
            return
        table = self.table
        eligible = self.rules.buzzers(self.game)
        if table.judging and table.last_buzz is not None and not eligible:
            if player in table.eligible:
                self.table = replace(table, last_buzz=table.last_buzz.with_press(player, t))
            return
        # A game that takes buzzes again has finished with the last one (All Wound Up: a check
        # closed by its settle timer, not by a judgement): this press opens the next window.
        if player in eligible:
            self.window = Window(self.clock + self.rules.settle_s(self.game), eligible, {player: t})
            self._step(BuzzOpened(self.clock))
        else:
            self._step(PlayerPress(t, player))

    def _in_flight(self, button: str, window: Window) -> bool:
        """`button` reads pressed: is its press edge still to come for this window?"""
        player = int(button[1:]) - 1
        return (player in window.eligible and player not in window.presses
                and not self.buttons[button].raw and button not in self.unheard)

    def _pend(self, event: Pending) -> None:
        """The box looked at the pins as the window came due: it waits for the edges in flight
        until `event.until` at the latest (a window is looked at once)."""
        window = self.window
        if window is None or window.looked:
            return
        window.looked = True
        window.waiting = {b: False for b in event.buttons if b in BUTTONS[:len(self.players)]
                          and self._in_flight(b, window)}
        if window.waiting:
            window.due = max(window.due, event.until)

    def _heard(self, button: str) -> None:
        """An edge (or a contact settle) of `button`: close a window that waited for it once
        every button it waits for has joined it, or has been heard from and is not bouncing."""
        window = self.window
        if window is None or button not in window.waiting:
            return
        window.waiting[button] = True
        if all(int(b[1:]) - 1 in window.presses or (heard and self.buttons[b].settle_due is None)
               for b, heard in window.waiting.items()):
            self._close_window(self.clock)

    def _close_window(self, _at: float) -> None:
        window, self.window = self.window, None
        assert window is not None
        if window.waiting:
            self.unheard.update(b for b, heard in window.waiting.items() if not heard)
        presses, rng = window.presses, self.table.rng
        if len(presses) == 1:                 # the usual buzz: one press, nothing to order
            (winner, first), = presses.items()
            others: tuple[tuple[int, float], ...] = ()
        else:
            first = min(presses.values())
            tied = sorted(p for p, t in presses.items() if t == first)
            winner, rng = rand.choice(rng, tied) if len(tied) > 1 else (tied[0], rng)
            others = tuple((p, t) for p, t in presses.items() if p != winner)
        self._effects.append(Sound(buzz_sound(winner)))      # each player's own tune
        self._step(Buzz(first, winner), rng=rng, judging=True, eligible=window.eligible,
                   last_buzz=BuzzOrder(winner, first, others))

    # ---- judgements and undo ----

    def _judge(self, verdict: Verdict, t: float) -> None:
        if self.menu is not None:
            return
        before = self.table
        label = self.rules.undo_label(before.game, verdict)
        self._step(Judge(t, verdict))
        if self.table.game != before.game and self.rules.is_undo_step(before.game, self.table.game):
            self.undo_stack.append((before, label))
            self.table = replace(self.table, judging=False)
            self.notice = ""

    def _undo(self) -> None:
        if not self.undo_stack:
            self.notice = "Nothing to undo"
            return
        game, refusal = self.rules.undo_to(self.undo_stack[-1][0].game, self.game)
        if refusal is not None:
            self.notice = refusal
            self._effects.append(Sound("wrong"))
            return
        table, label = self.undo_stack.pop()
        self.table = replace(table, game=game)
        self.window = None
        self._spent_tick = None
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

    # ---- the host's remote (a logged input like a press; never a player's press) ----

    def _host(self, cmd: HostCommand) -> None:
        if self.testing:
            return
        if cmd.command in ("yes", "no"):
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
            self._effects.append(Request("switch", cmd.name, cmd.options))
        elif cmd.command == "rename":
            self._rename(cmd.player, cmd.name)
        else:
            self.notice = f"unknown host command {cmd.command[:16]}"

    def _rename(self, player: int, name: str) -> None:
        """A new name for a player, in the game and in every state undo can restore."""
        problem = name_problem(name)
        name = name.strip()
        others = [p for i, p in enumerate(self.players) if i != player]
        if not 0 <= player < len(self.players) or problem is not None or name in others:
            self.notice = "Rename refused"
            return
        players = self.players[:player] + (name,) + self.players[player + 1:]

        def renamed(table: Table) -> Table:
            game = table.game
            if hasattr(game, "players"):
                game = replace(game, players=players)
            return replace(table, game=game)
        self.players = players
        self.table = renamed(self.table)
        self.undo_stack = [(renamed(t), label) for t, label in self.undo_stack]
        self._effects.append(Request("rename"))

    # ---- the menu ----

    def _toggle_menu(self) -> None:
        if self.menu is not None:
            self.menu = None
            return
        items = self.rules.menu_items(self.game)
        if self.rules.rules_card():
            items += (("rules", "Rules card"),)
        items += (("new", "New game"), ("test", "Button test"), ("switch", "Change game"),
                  ("shutdown", "Shut down"), ("close", "Back to game"), ("web", "Show on TV / phone"))
        self.menu = Menu(items, disabled=self.rules.menu_disabled(self.game))

    def _menu_button(self, button: str, t: float) -> None:
        menu = self.menu
        assert menu is not None
        if button == "NO" or menu.card or menu.qr:
            self.menu = None if menu.items == PLAY_AGAIN else menu.back() if button == "NO" else menu
            return
        key = menu.selected
        if key in menu.disabled or key in self.rules.menu_disabled(self.game):
            return                      # greyed: it keeps its place and does nothing now
        if key in CONFIRM and menu.confirm != key:
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
            from ..games import registry
            self.menu = Menu(tuple((f"switch:{name}", registry.get(name).title)
                                   for name in registry.available()))
        elif key.startswith("switch:"):
            self.menu = None
            self._effects.append(Request("switch", key.removeprefix("switch:")))
        elif key == "shutdown":
            self.menu = None
            self._effects.append(Request(key))
        elif key == "close":
            self.menu = None
        elif key == "web":
            self.menu = Menu((("web:board", "Scoreboard QR"), ("web:host", "Host remote QR"),
                              ("web:newhost", "New host")))
        elif key in ("web:board", "web:host"):
            self.menu = Menu((), qr=key.removeprefix("web:"))
        elif key == "web:newhost":            # a new host token: the old host's page stops working
            self.menu = Menu((), qr="host")
            self._effects.append(Request("newhost"))
        else:
            self.menu = None
            self._step(MenuChoice(t, key))

    def new_game(self) -> None:
        """Start over with the same players and options (the next seed: a new shuffle)."""
        self.games_played += 1
        game = self.rules.started(
            self.rules.new_game(self.players, self.options, self.seed + self.games_played), self.clock)
        self.table = Table(game, rand.seed_state(self.seed + self.games_played, 1))
        self.undo_stack.clear()
        self.window = None
        self._spent_tick = None
        self.notice = "New game"


def fold_records(engine: Engine, records: Iterable[Record]) -> tuple[int, str | None, bool]:
    """Feed logged records to `engine` in order, as a resume does, up to the first one that is
    not an input (`from_record` refuses it) or that the engine refuses: the end of the valid
    prefix. Returns how many were folded, why it stopped there (None: every record folded) and
    whether the engine may be half-changed by the refused record (then fold a new engine
    through the good ones again)."""
    count = 0
    for rec in records:
        try:
            event = from_record(rec)
        except Exception as err:          # a record of the wrong shape: damage
            return count, f"{type(err).__name__}: {str(err)[:60]}", False
        try:
            engine.advance(event) if isinstance(event, float) else engine.feed(event)
        except Exception as err:
            return count, f"cannot fold ({type(err).__name__}: {str(err)[:60]})", True
        count += 1
    return count, None, False
