"""Record and durable: every input the engine takes is handed to the game log's writer first.

The loop hands a record to the writer (`_log`) before it feeds the engine, and shows nothing a
record caused until that record is durable (`_durable`), unless the disk refuses (the box then
plays on from memory). The one exception is the lamp rule (lamp.py). `logged_clock` is the
latest time handed to the log: the engine's clock as a fold of the log would have it.

A host command's `saved` is told exactly once: when its record is durable, or at once when
there is no log or the log has a problem (with why). Commands still waiting are answered by
`_tell_saved`, on the writer's thread as records settle and on the loop's before a frame.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from ..core.events import HotspotState
from ..core.records import SEATS, to_record
from ..gamelog import GameLog


class Recorder:
    """The box's side of the game log: sequence numbers, durability, answers when saved."""
    engine: Any
    store: GameLog | None
    logged_clock: float
    _saving: list[tuple[int, Callable[[str | None], None]]]   # host commands awaiting durability
    _saving_lock: threading.Lock

    def _start_log(self) -> None:
        """A new game's log: its header says how to make its engine again."""
        if self.store is not None:
            e = self.engine
            header = {"game": e.rules.name, "players": list(e.players), "options": e.options, "seed": e.seed}
            if e.seats < SEATS:             # a box with fewer player buttons: MENU > Players knows
                header["seats"] = e.seats
            if e.tonight:                   # MENU > Players offers tonight's names
                header["names"] = list(e.tonight)
            if e.hotspot is not None:       # the box's own Wi-Fi is up as the game starts
                header["hotspot"] = to_record(HotspotState(0.0, *e.hotspot))["hotspot"]
            self.store.start(header)

    def _log(self, record: dict[str, Any]) -> int:
        """Hand a record to the log's writer; its sequence number (0: no log)."""
        self.logged_clock = max(self.logged_clock, record["t"])
        return self.store.append(record) if self.store is not None else 0

    def _durable(self, seq: int) -> None:
        """Show nothing a record caused before the record is on disk (unless the disk refuses)."""
        if self.store is not None and seq:
            self.store.wait(seq)

    def _when_saved(self, seq: int, saved: Callable[[str | None], None]) -> None:
        """Tell `saved` once record `seq` is durable, or at once why it will not be soon."""
        store = self.store
        if store is None or not seq:
            saved(None)
            return
        with self._saving_lock:
            if store.durable < seq and store.problem is None:
                self._saving.append((seq, saved))
                return
        saved(None if store.durable >= seq else f"not saved: {store.problem}")

    def _tell_saved(self) -> None:
        """Answer the waiting commands whose records are durable now, and, while the log has a
        problem, the others with it (the box plays on from memory)."""
        store = self.store
        if store is None or not self._saving:
            return
        with self._saving_lock:
            problem = store.problem
            done = [(seq, saved) for seq, saved in self._saving if seq <= store.durable or problem is not None]
            if not done:
                return
            self._saving = [item for item in self._saving if item not in done]
        for seq, saved in done:
            saved(None if seq <= store.durable else f"not saved: {problem}")
