"""Which engine is live: a new game, the game resumed from its log, or the game before.

Exactly one engine is live, and the game log always folds to it: a new engine starts a new log
(`_use`), a resumed one is the fold of the log in progress (`_resume`, `_refold` after a record
broke the fold), and the game before comes back with the two records that bring it back
appended to a copy of its log (`_restore`). Each start is then told what the pins say now, in a
`resume` record (`_reconcile_buttons`): a button held down is ignored until released, and the
sensors' decoders take the levels the pins have. A game is never thrown away at start: the
saved game goes on whatever the config asks for, and the config follows it.

Requests from the engine that change the config (switch, new, players, rename) are carried out
here (`request`); the writer is told when the game goes over, or back (`_game_over_to_history`).
"""
from __future__ import annotations

import json
import logging
from typing import Any, Callable

from ..config import Config
from ..core.engine import Engine, fold_records
from ..core.events import HostCommand, Request, Resume
from ..core.frozen import replace   # dataclasses.replace without its field walk
from ..core.game import players_problem
from ..core.records import to_record
from ..core.table import GameBefore
from ..games import registry
from ..hw.inputs import BUTTON_NAMES, LEVEL_NAMES, reading_levels
from ..hw.outputs import Leds
from ..core.namelist import grown
from ..gamelog import Damaged, GameLog, open_log
from ..gamelog.names import load_names, save_names
from .clock import game_time

log = logging.getLogger(__name__)


def changed(decoder: Any, a: int | None, b: int | None) -> tuple[int, int] | None:
    """The (A, B) levels `decoder` must take to match the pins read (a pin not in the pin
    map keeps the decoder's level); None if it has them already."""
    levels = (decoder.a if a is None else a, decoder.b if b is None else b)
    return None if levels == (decoder.a, decoder.b) else levels


def sensor_changes(engine: Any, levels: dict[str, Any]) -> tuple[tuple[int, int] | None, ...]:
    """The hall's and the encoder's levels `engine`'s decoders must take (`changed`)."""
    return (changed(engine.hall, levels.get("HALL_A"), levels.get("HALL_B")),
            changed(engine.encoder, levels.get("ENC_A"), levels.get("ENC_B")))


def held_buttons(inputs: dict[str, Any]) -> tuple[str, ...]:
    """The buttons down now."""
    return tuple(name for name, down in reading_levels(inputs, BUTTON_NAMES).items() if down)


class Session:
    """The live engine's life: new, resume, refold, restore, game over, config follow-ups."""
    config: Config
    factory: Any
    store: GameLog | None
    inputs: dict[str, Any]
    leds: Leds
    seats: int
    start_levels: dict[str, Any]
    on_request: Callable[[Request], None] | None
    engine: Engine
    t0: Any
    tick_offset: float
    logged_clock: float
    games_started: int
    resumed: bool
    resumed_records: int
    resumed_other: str                       # the line that says the saved game overrode the config
    _seen_game: Any                          # the game state last looked at for its game over
    _told_over: tuple[Any, bool] | None      # (engine, over) the writer was told
    _log: Callable[[dict[str, Any]], int]
    _start_log: Callable[[], None]

    def _first_engine(self) -> None:
        """The box's first engine: the game in progress if the log has one (the game before
        if it ended in an undo that brings that back), else a new game of the config's."""
        self.resumed = self._resume()
        if self.resumed and self.engine.restore_asked:
            self._restore()          # a power cut came between an undo and the game it brings back
        if self.resumed and self.store is not None:
            self.store.drop_restored_copy()
        self.resumed_other = self._resumed_over_config() if self.resumed else ""
        if not self.resumed:
            self._use(self._new_engine(self.config.game))
        self._reconcile_buttons()

    def _reconcile_buttons(self, new_game: bool = False) -> None:
        """Make the engine's buttons the real ones at start, and log that as a `resume` record.

        After a power cut the log may leave buttons down (a press whose release was never
        logged) and timers running (long presses, holds, contact settles): none of that is
        happening any more. A `Resume` at the last logged time releases every button without
        effect, stops those timers, closes an open settle window on the presses it holds and
        drops a shutdown request; buttons down now are ignored until released. A fresh log
        only needs it when a button is down, and so does a new game (`new_game`: a new engine
        would read a button stuck down with its edge lost as a press in flight, and hold the
        first settle window of every game for it).

        The same record carries the hall sensors' and encoder contacts' levels when the
        engine's decoders do not have them (`hall`/`encoder`: a magnet resting on a latch, a
        turntable moved while the power was off; a new engine starts at 00): the decoders take
        them without a step, so the first turn counts 4 steps, not 1. At power-up they were read
        as the pins were set up, before the fold: an edge during the fold is queued and decoded
        from there. A new game reads them then: an edge still queued happened before the
        read, and once the queue is through the decoders have the pins' levels."""
        held = held_buttons(self.inputs)
        for name in held:
            log.warning("button %s is held down at start (stuck?): ignored until released", name)
        levels = reading_levels(self.inputs, LEVEL_NAMES) if new_game else self.start_levels
        hall, encoder = sensor_changes(self.engine, levels)
        if (self.resumed and not new_game) or held or hall or encoder:
            event = Resume(self.engine.clock, held, hall, encoder)
            self._log(to_record(event))
            self.engine.feed(event)

    def _new_engine(self, game: str) -> Engine:
        """A fresh engine; its clock starts at 0 now (callers install it with `_use`)."""
        rules = registry.get(game)
        problem = players_problem(rules, len(self.config.players))
        if problem is not None:
            # Never start (and log) a game its players cannot play: resume would refuse that log.
            raise ValueError(problem)
        seed = (self.config.seed or 0) + self.games_started
        self.games_started += 1
        return registry.new_engine(rules, tuple(self.config.players), self.config.options_for(game),
                                   seed, debounce_s=self.config.debounce_ms / 1000.0, seats=self.seats)

    def _resumed_over_config(self) -> str:
        """The saved game goes on, whatever the config (or simulate's flags) asks for: a game is
        never thrown away at start. If they differ, the config takes the saved game and players
        (so New game, the side panel and the keys agree with what is played) and the one line
        that says so is returned (empty if they agree)."""
        engine, config = self.engine, self.config
        if (engine.rules.name, tuple(engine.players)) == (config.game, tuple(config.players)):
            return ""
        self.config = replace(config.with_game(engine.rules.name), players=tuple(engine.players))
        # The line fits 80 columns.
        line = (f"Resumed the saved {engine.rules.title} ({len(engine.players)} players), "
                f"not {config.game} for {', '.join(config.players)}")
        log.warning("%s", line)
        return line

    def _use(self, engine: Engine) -> None:
        """Install a new game's engine: its clock starts now, and so does its log. The box's
        own Wi-Fi carries over from the game before (its header says so)."""
        before = getattr(self, "engine", None)
        if before is not None:
            engine.hotspot = before.hotspot
        # Tonight's names carry over from the game before, or from the disk for the first game.
        engine.tonight = grown(before.tonight if before is not None else self._kept_names(),
                               engine.players)
        engine.tunes, engine.colours = self.config.tunes, self.config.colours
        self.engine = engine
        self.t0 = self.factory.ticks()
        self.tick_offset = 0.0
        self.logged_clock = engine.clock
        self._start_log()
        self._keep_names()

    def _kept_names(self) -> tuple[str, ...]:
        return load_names(self.store.dir) if self.store is not None else ()

    def _keep_names(self) -> None:
        """Tonight's names on the disk, when the engine's list is not what was last kept there."""
        if self.store is not None and self.engine.tonight != getattr(self, "_names_kept", None):
            self._names_kept = self.engine.tonight
            save_names(self.store.dir, self.engine.tonight)

    def _resume(self) -> bool:
        """Fold the logged game in progress back into an engine while reading it (no list of
        records is held); False if there is none. A damaged record ends the valid prefix."""
        reader = self.store.read() if self.store is not None else None
        if reader is None:
            return False
        assert self.store is not None
        with reader:
            try:
                engine = self._engine_for(reader.header)
            except Exception as err:  # any bad header content: keep the file, start afresh
                self.store.move_aside(f"cannot resume ({type(err).__name__}: {str(err)[:80]})")
                return False
            _, why, broken = fold_records(engine, reader.records())
            if why is not None:
                reader.reject(why)
            if broken:                        # the engine may be half-changed: fold again
                engine = self._refold(reader, reader.count)
            self.store.resumed(reader)
        engine.tunes, engine.colours = self.config.tunes, self.config.colours
        self.engine = engine
        self.logged_clock = engine.clock
        self.t0 = self.factory.ticks() - engine.clock   # our clock carries on from the log's
        self.resumed_records = reader.count
        self._keep_names()
        if reader.damage is not None:
            engine.notice = f"recovered to {game_time(engine.clock)}"
        log.info("resumed %s after %d logged inputs", engine.rules.name, reader.count)
        return True

    def _engine_for(self, header: dict[str, Any]) -> Engine:
        return registry.engine_for(header, debounce_s=self.config.debounce_ms / 1000.0)

    def _refold(self, reader: Any, good: int) -> Engine:
        """A fresh engine folded through the first `good` records (after a record broke the fold)."""
        engine = self._engine_for(reader.header)
        damage = reader.damage
        reader.count, reader.good_end = 0, reader.header_end
        fold_records(engine, reader.records(limit=good))
        reader.damage = damage
        return engine

    def _restore(self) -> None:
        """Undo with nothing left to undo, in a game that New game, Change game or Players
        started: the game before comes back exactly as it was. Its log (history/, found by the
        number in this game's header) is folded into a fresh engine, which then takes a
        `resume` record (the buttons down now, as at any start) and the undo of the step that
        ended it (`{"host": "undo"}`: New game's own undo step, core/table.py `GameBefore`).
        Those two records are appended to a copy of that log, which becomes current.log in one
        rename: a power cut before it resumes this game, whose last record is the undo, and
        does this again; after it, the game before. Refused with a notice (this game plays
        on) if the game before is not kept, damaged, or its log does not end in that step."""
        store = self.store
        if store is None:
            return
        store.wait()                          # this game's header, and its `previous`, on disk
        number = store.previous
        if number is None:
            return                            # the first game here: "Nothing to undo" stands
        source = store.history_file(number)
        if source is None:
            self.engine.notice = "Game before: not kept"
            return
        try:
            with open_log(source) as reader:
                engine = self._engine_for(reader.header)
                _, why, _ = fold_records(engine, reader.records())
                if why is not None or reader.damage is not None:
                    raise ValueError(why or reader.damage)
                steps = engine.undo_stack
                if not steps or not isinstance(steps[-1][0], GameBefore):
                    raise ValueError("it does not end in New game, Change game or Players")
                held = held_buttons(self.inputs)
                hall, encoder = sensor_changes(engine, reading_levels(self.inputs, LEVEL_NAMES))
                resume = Resume(engine.clock, held, hall, encoder)
                undo = HostCommand(engine.clock, "undo")
                engine.feed(resume)
                engine.feed(undo)
                store.restore(source, reader, [to_record(resume), to_record(undo)])
        except (OSError, ValueError, LookupError, Damaged) as err:
            log.error("undo: cannot bring back %s: %s", source.name, err)
            self.engine.notice = "Cannot undo: game before damaged"[:40]
            return
        log.info("undo: %s is back (%s)", engine.rules.title, source.name)
        engine.tunes, engine.colours = self.config.tunes, self.config.colours
        self.engine = engine
        self.logged_clock = engine.clock
        self.t0 = self.factory.ticks() - engine.clock   # our clock carries on from its log's
        self.tick_offset = 0.0
        self.config = replace(self.config.with_game(engine.rules.name), players=tuple(engine.players))

    def _game_over_to_history(self) -> None:
        """At game over the writer copies the game into history/ (the big screen lists it at
        once); an undo out of it takes the copy back. Looked at only when the game state
        changed (an identity test per input), told only when it goes over or back."""
        engine = self.engine
        game = self._seen_game = engine.table.game
        over = bool(engine.rules.is_over(game))
        if self._told_over != (engine, over):
            if over or (self._told_over is not None and self._told_over[0] is engine):
                self.store.finished(over)     # type: ignore[union-attr]
            self._told_over = (engine, over)

    def request(self, req: Request) -> None:
        """Carry out what a request changes: the game before back, the config's players and
        games, a new or other game (with its lamps as its first screen has them); then tell
        `on_request`."""
        if req.name == "restore":
            self._restore()
            self.leds.show(self.engine.lit())
        if req.name == "evening" and self.store is not None:   # after the finished games handed
            self.store.end_evening()
        if req.name == "rename":       # a new game keeps the names the host gave
            self.config = replace(self.config, players=self.engine.players)
            self._keep_names()
        if req.name == "players":      # checked by the table (core/table.py: names_problem)
            self.config = replace(self.config, players=tuple(json.loads(req.arg)))
        before = self.config
        if req.name == "switch" and req.arg and req.options:
            try:
                options = json.loads(req.options)
                assert isinstance(options, dict)
            except (ValueError, AssertionError):
                self.engine.notice = "bad game options"
                return
            self.config = replace(self.config, games={**self.config.games, req.arg: options})
        if req.name == "switch" and req.arg:
            try:
                engine = self._new_engine(req.arg)
            except (ValueError, LookupError) as err:   # e.g. more players than that game takes
                self.config = before                   # refused options are not kept for later
                self.engine.notice = str(err).split(":")[-1].strip()[:40]
                return
            log.info("switching to %s", req.arg)
            self.config = self.config.with_game(req.arg)
            self._use(engine)
            self._reconcile_buttons(new_game=True)
        elif req.name in ("new", "players"):     # other players: a new game (its log) with them
            said = self.engine.notice
            self._use(self._new_engine(self.engine.rules.name))
            self._reconcile_buttons(new_game=True)
            if req.name == "players":
                self.engine.notice = said             # "New game: 3 players" stays on screen
        if req.name in ("switch", "new", "players"):
            self.leds.show(self.engine.lit())   # every lamp as the new game's first screen has it
        if self.on_request is not None:
            self.on_request(req)
