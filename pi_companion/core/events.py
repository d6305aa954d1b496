"""Events and effects: every input carries its edge timestamp `t` (seconds since game start)."""
from __future__ import annotations

from dataclasses import field

from .frozen import lazy_frozen     # @dataclass(frozen=True), made on first use (start-up)
from typing import Literal

Button = str  # "P1".."P8", "YES", "NO", "MENU"
Sensor = Literal["A", "B"]

# ---- raw inputs (what the GPIO layer, the puck link or a scenario delivers) ----


@lazy_frozen
class Edge:
    """A button's contact closed (`pressed`) or opened."""
    t: float
    button: Button
    pressed: bool


@lazy_frozen
class Turn:
    """One detent of the rotary encoder, +1 clockwise."""
    t: float
    delta: int


@lazy_frozen
class EncoderLevel:
    """A level change on encoder contact A or B (decoded into detents by the engine)."""
    t: float
    sensor: Sensor
    level: int


@lazy_frozen
class HallLevel:
    """A level change of hall sensor A or B."""
    t: float
    sensor: Sensor
    level: int


@lazy_frozen
class HallCounts:
    """Absolute counters from the wind puck; the engine turns them into steps."""
    t: float
    boot_id: str
    net: int
    invalid: int


@lazy_frozen
class PuckStatus:
    """The puck was plugged in (connected, with its boot id) or unplugged."""
    t: float
    connected: bool
    boot_id: str = ""


@lazy_frozen
class HotspotState:
    """The box's own Wi-Fi hotspot came up, as network `ssid` with the box at `address` on it
    (`address` "" if not known), or went down (`ssid` ""). Its password is never an input: it
    reaches the Wi-Fi QR from the hub, at drawing time."""
    t: float
    ssid: str = ""
    address: str = ""


@lazy_frozen
class Resume:
    """The box started on this log at `t`: after a power cut (`t` is then the last logged time),
    or on a fresh log while a button was down. Whatever was in flight is over: every button is
    up except `held`, the ones down now (ignored until released); no long press, player hold or
    contact settle started before fires; an open settle window closes on the presses it holds;
    a shutdown request is forgotten. `hall` and `encoder`, when given, are the (A, B) levels the
    box read on those pins as it started: the decoders take them as they are, without a step
    (None: the decoder keeps the levels it has)."""
    t: float
    held: tuple[Button, ...] = ()
    hall: tuple[int, int] | None = None
    encoder: tuple[int, int] | None = None


@lazy_frozen
class HostCommand:
    """A command from the host's remote (the web page): `yes`, `no`, `special` (long YES),
    `undo`, `new`, `rename` (player index `player` to `name`), `switch` (to game `name` with
    `options`, JSON text), `players` (the names in `options`, JSON text), `dial` (one encoder
    detent, `delta` +1 or -1), `menu` (the game's own menu entry `name`), `press` or `hold`
    (player index `player`'s button, on their behalf). Never a buzz: who pressed first is
    decided by the buttons only (the table refuses a `press` that would be one)."""
    t: float
    command: str
    player: int = -1
    name: str = ""
    options: str = ""
    delta: int = 0


@lazy_frozen
class Pending:
    """The box looked at the player buttons as a settle window came due, at `t`: `buttons` read
    pressed although their press edge had not reached the engine (an edge in flight: the GPIO
    backend's callback is late). The window waits for those edges until `until` at the latest;
    see `Engine.look`. Only the live box makes these (it reads the pins); the log keeps them so
    that resume decides as the box did."""
    t: float
    buttons: tuple[Button, ...]
    until: float


InputEvent = (Edge | Turn | EncoderLevel | HallLevel | HallCounts | PuckStatus | Resume | HostCommand | Pending
              | HotspotState)

# ---- actions (what the engine hands to a game) ----


@lazy_frozen
class Buzz:
    """Player `player` won the settle window: the earliest press."""
    t: float
    player: int


@lazy_frozen
class BuzzOpened:
    """An eligible press opened the settle window (Hands Up! stops its beats here)."""
    t: float


Verdict = Literal["yes", "no", "special"]


@lazy_frozen
class Judge:
    """Short YES (`yes`), short NO (`no`) or long YES (`special`)."""
    t: float
    verdict: Verdict


@lazy_frozen
class PlayerPress:
    """A player button press that is not a buzz (games without a race, or a closed race)."""
    t: float
    player: int


@lazy_frozen
class PlayerHold:
    """A player button held down for HOLD_S seconds."""
    t: float
    player: int


@lazy_frozen
class Dial:
    """An encoder detent reaching the game."""
    t: float
    delta: int


@lazy_frozen
class HallStep:
    """A hall level change decoded: `delta` steps (-1, 0, +1), `invalid` if an edge was missed."""
    t: float
    delta: int
    invalid: bool = False


@lazy_frozen
class Tick:
    """The game's own timer (a beat, a settle) came due at `t`."""
    t: float


@lazy_frozen
class MenuChoice:
    """A game item chosen from the on-box menu."""
    t: float
    key: str


@lazy_frozen
class PuckReset:
    """The wind puck rebooted or was unplugged: a wind check in progress is void."""
    t: float


@lazy_frozen
class Undone:
    """Long NO just restored the state before the last judgement, at `t`: a game whose timers
    count from past inputs (a wind check's settle) may restart them from now."""
    t: float


Action = (Buzz | BuzzOpened | Judge | PlayerPress | PlayerHold | Dial | HallStep | Tick
          | MenuChoice | PuckReset | Undone)

# ---- effects (what the box does besides redrawing) ----


@lazy_frozen
class Sound:
    """Play a named short sound: buzz, correct, wrong, over, tick, ..."""
    name: str


@lazy_frozen
class Request:
    """Something only the application can do: shutdown, switch game (`options`: JSON text or "")."""
    name: str
    arg: str = ""
    options: str = ""


Effect = Sound | Request


@lazy_frozen
class BuzzOrder:
    """The decided buzz: the winner and everyone else who pressed, with margins in ms."""
    winner: int
    winner_t: float
    others: tuple[tuple[int, float], ...] = field(default=())  # (player, t) in arrival order

    def ordered(self) -> list[tuple[int, float]]:
        """(player, after_ms) with the winner first, then the rest by timestamp."""
        rest = sorted(self.others, key=lambda pt: (pt[1], pt[0]))
        return [(self.winner, 0.0)] + [(p, round((t - self.winner_t) * 1000.0, 3)) for p, t in rest]

    def with_press(self, player: int, t: float) -> "BuzzOrder":
        if player == self.winner or any(p == player for p, _ in self.others):
            return self
        return BuzzOrder(self.winner, self.winner_t, self.others + ((player, t),))
