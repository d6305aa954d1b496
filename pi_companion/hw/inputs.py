"""gpiozero input devices built from the pin map; every edge goes on one queue with its ticks."""
from __future__ import annotations

import queue
import threading
from typing import Any, Callable, NamedTuple

from gpiozero import DigitalInputDevice

BUTTON_NAMES = tuple(f"P{i}" for i in range(1, 9)) + ("YES", "NO", "MENU")
LEVEL_NAMES = ("ENC_A", "ENC_B", "HALL_A", "HALL_B")
QUIET_NAMES = ("HALL_A", "HALL_B")    # their edges may wait for the loop's next frame (`Inbox`)


class RawEdge(NamedTuple):
    """One pin edge as the GPIO layer saw it: `active` = button pressed / sensor level high.
    A named tuple, not a frozen dataclass: a pin callback makes one per edge, and a tuple is
    made in about 1 400 machine instructions against 6 000 (each frozen field is an
    `object.__setattr__` call)."""
    name: str
    ticks: float
    active: bool


_new_edge = tuple.__new__      # a RawEdge without namedtuple's Python-level `__new__` call
_put = queue.SimpleQueue.put


class Inbox(queue.SimpleQueue):  # type: ignore[type-arg]
    """The loop's queue. The hall sensors' edges (`put_quiet`) do not wake the loop while it
    `snooze`s - it does so only until its next OLED frame is due, during a spin - but wait
    in a tray; the loop takes them when it wakes (`wake`). Anything else put meanwhile
    moves the tray onto the queue first, so the loop gets every item in the order it came.

    A spin's edges are counted by their own timestamps whenever they are handled, and
    nothing but the frame shows them, so taking them once per frame loses nothing and
    saves the loop a wake-up per edge (80 edges/s against 30 frames/s)."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._tray: list[Any] = []
        self.snoozing = False

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        # The tray is looked at without the lock first: it changes only under the lock, and an
        # empty tray means nothing put before waits in it (a quiet edge that joins it meanwhile
        # came after). Every press edge passes here: the lock and `super()` cost it ~3 000
        # instructions.
        if self._tray:
            with self._lock:
                if self._tray:
                    self._move_tray()
                _put(self, item)
        else:
            _put(self, item)

    def put_nowait(self, item: Any) -> None:
        self.put(item)

    def put_quiet(self, item: Any) -> None:
        with self._lock:
            if self.snoozing:
                self._tray.append(item)
                return
            if self._tray:
                self._move_tray()
            _put(self, item)

    def ring(self, item: Any) -> None:
        """Put `item` on the queue and leave the tray as it is: for a wake that is not an input
        (nothing's order depends on it)."""
        _put(self, item)

    def snooze(self) -> None:
        """The loop is about to wait for its frame's time: quiet edges wait in the tray."""
        self.snoozing = True

    def wake(self) -> int:
        """The loop is awake: what waited in the tray goes onto the queue (how many)."""
        with self._lock:
            self.snoozing = False
            n = len(self._tray)
            if n:
                self._move_tray()
            return n

    def _move_tray(self) -> None:
        for item in self._tray:
            _put(self, item)
        self._tray.clear()


class EdgeInput(DigitalInputDevice):  # type: ignore[misc]
    """A DigitalInputDevice that queues every edge with the pin factory's ticks.

    gpiozero's pin keeps only a weak reference to its handler, so we hook `_pin_changed`
    (which the device registered itself) instead of setting `pin.when_changed`. The edge goes
    to the queue and nowhere else: gpiozero's own event bookkeeping (`when_activated`,
    `active_time`, `wait_for_active`) is not kept, as nothing of the box reads it (it was a
    third of a press edge's instructions); `value` and `is_active` read the pin as ever.
    """

    def __init__(self, name: str, pin: int, sink: Any, *,
                 pull_up: bool | None, factory: Any) -> None:
        active_state = True if pull_up is None else None
        super().__init__(pin, pull_up=pull_up, active_state=active_state, bounce_time=None,
                         pin_factory=factory)
        self.label = name
        self.post = sink.put_quiet if name in QUIET_NAMES and hasattr(sink, "put_quiet") else sink.put
        self.active_level = int(self._active_state)   # the pin state that reads active (pressed)

    def _pin_changed(self, ticks: float, state: int) -> None:
        self.post(_new_edge(RawEdge, (self.label, ticks, state == self.active_level)))


def build_inputs(pins: dict[str, int], n_players: int, sink: "Inbox | queue.SimpleQueue[Any]",
                 factory: Any) -> dict[str, EdgeInput]:
    """Buttons (to ground, internal pull-up), encoder contacts (pull-up) and hall latches
    (open drain with external pull-ups: floating here)."""
    devices: dict[str, EdgeInput] = {}
    wanted = [f"P{i}" for i in range(1, n_players + 1)] + ["YES", "NO", "MENU", *LEVEL_NAMES]
    for name in wanted:
        if name not in pins:
            continue
        pull: bool | None = None if name.startswith("HALL") else True
        devices[name] = EdgeInput(name, pins[name], sink, pull_up=pull, factory=factory)
    return devices


def reading_levels(devices: dict[str, EdgeInput], names: tuple[str, ...]) -> dict[str, int]:
    """The levels of the devices among `names` at this moment, 1 where the pin reads active
    (a button pressed, a sensor's latch on: what its edges report), read from the pins."""
    return {name: int(device.pin.state == device.active_level)
            for name, device in devices.items() if name in names}


def player_lines(devices: dict[str, EdgeInput]) -> tuple[tuple[str, Callable[[], Any], int], ...]:
    """The player buttons' pin readers, each with the level that reads pressed (for
    `reading_pressed`, found once). A reader is the pin's own `_get_state`, which gpiozero's
    `state` property calls through a lambda (and `device.pin` is a property too): a read costs
    about 400 machine instructions instead of 1 000."""
    return tuple((name, device.pin._get_state, device.active_level) for name, device in devices.items()
                 if name[0] == "P" and name[1:].isdigit())


def reading_pressed(lines: tuple[tuple[str, Callable[[], Any], int], ...]) -> list[str]:
    """Of the player buttons `lines` (`player_lines`), those whose line reads pressed at this
    moment: the pin's level, not the last edge delivered (on lgpio the line is read while its
    edge may still wait in the alert queue for the callback thread). The pin's state is read
    straight (gpiozero's `is_active` is five calls deep): this runs as each settle window closes."""
    return [name for name, read, level in lines if read() == level]
