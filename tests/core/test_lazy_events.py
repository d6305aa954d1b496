"""core.events' classes are frozen dataclasses made on first use (#27 item 4): importing them
compiles nothing, and an event behaves exactly as a `@dataclass(frozen=True)` one would."""
from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys

import pytest

from pi_companion.core import events


def event_classes() -> list[type]:
    return [c for _, c in inspect.getmembers(events, inspect.isclass) if c.__module__ == events.__name__]


def other_lazy_classes() -> list[type]:
    """The other classes made on first use: none is needed on the way to READY either."""
    from pi_companion.core.menu import Menu
    from pi_companion.core.table import GameBefore
    from pi_companion.hub import Hotspot
    return [Menu, GameBefore, Hotspot]


def test_importing_the_events_makes_no_dataclass_yet_and_the_first_instance_makes_its_own():
    code = """
import dataclasses, inspect
from pi_companion.core import events
classes = [c for _, c in inspect.getmembers(events, inspect.isclass) if c.__module__ == events.__name__]
assert len(classes) >= 20, len(classes)
assert not any(dataclasses.is_dataclass(c) for c in classes), "made at import"
e = events.Edge(1.5, "P1", True)
assert dataclasses.is_dataclass(events.Edge) and not dataclasses.is_dataclass(events.Turn)
assert e == events.Edge(1.5, "P1", True) and hash(e) == hash(events.Edge(1.5, "P1", True))
assert repr(e) == "Edge(t=1.5, button='P1', pressed=True)"
try:
    e.t = 2.0
except dataclasses.FrozenInstanceError:
    pass
else:
    raise AssertionError("not frozen")
from pi_companion.core.frozen import realize_all
assert realize_all() == len(classes) - 1
assert all(dataclasses.is_dataclass(c) for c in classes)
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


@pytest.mark.parametrize("cls", event_classes() + other_lazy_classes(), ids=lambda c: c.__name__)
def test_every_event_class_is_the_frozen_dataclass_it_declares(cls):
    made = dataclasses.dataclass(frozen=True)(type(cls.__name__, (), {
        "__annotations__": dict(cls.__annotations__),
        **{f: getattr(cls, f) for f in cls.__annotations__ if f in vars(cls)}}))
    from pi_companion.core.frozen import realize_all
    realize_all()
    assert cls.__dataclass_params__.frozen and cls.__dataclass_params__.eq
    assert [(f.name, f.default) for f in dataclasses.fields(cls)] == \
        [(f.name, f.default) for f in dataclasses.fields(made)]
    assert inspect.signature(cls) == inspect.signature(made)


def test_the_box_loop_makes_every_event_class_off_the_way_to_ready():
    """(In a fresh interpreter: here other tests have made them already.)"""
    code = """
import dataclasses, inspect
from gpiozero.pins.mock import MockFactory
from pi_companion.box import Box
from pi_companion.config import Config
from pi_companion.core import events
from pi_companion.hw.display import Display, open_device
from pi_companion.core.menu import Menu
from pi_companion.core.table import GameBefore
classes = [c for _, c in inspect.getmembers(events, inspect.isclass) if c.__module__ == events.__name__]
others = [Menu, GameBefore]
classes += others
box = Box(Config(game="grab-bag", players=("Ada", "Ben"), seed=1, sound=False), MockFactory(),
          Display(lambda: open_device("dummy")))
assert not all(dataclasses.is_dataclass(c) for c in classes)
box.draw()                                           # the first frame, as the daemon draws it before READY
assert not all(dataclasses.is_dataclass(c) for c in classes), "made on the way to READY"
assert not any(dataclasses.is_dataclass(c) for c in others), "made on the way to READY"
box.start()                                          # the loop thread makes them, after READY
import time
end = time.monotonic() + 10
while not all(dataclasses.is_dataclass(c) for c in classes) and time.monotonic() < end:
    time.sleep(0.01)
assert all(dataclasses.is_dataclass(c) for c in classes), [c for c in classes if not dataclasses.is_dataclass(c)]
box.stop()
box.close()
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_the_hub_makes_its_hotspot_class_when_a_hotspot_file_is_first_read(tmp_path):
    (tmp_path / "hotspot.json").write_text('{"ssid": "box", "password": "12345678"}')
    code = f"""
import dataclasses
from pi_companion import hub
assert not dataclasses.is_dataclass(hub.Hotspot), "made at import"
spot = hub.read_hotspot({str(tmp_path / "hotspot.json")!r})
assert spot == hub.Hotspot("box", "12345678") and repr(spot) == "Hotspot(ssid='box', password='12345678', address='')"
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_an_instance_made_on_another_thread_while_the_class_is_being_made_waits_for_it(monkeypatch):
    """The hub's thread makes HostCommands and the puck's reader its events while the box
    loop's thread makes every lazy class as it starts (`realize_all`): an instance asked for
    while its class is half made waits for it, and never meets a class without its __init__.
    (`dataclass` is slowed here so that the other thread surely comes in the middle.)"""
    import threading
    import time

    from pi_companion.core import frozen

    @frozen.lazy_frozen
    class Probe:
        name: str
        level: int = 0

    real = dataclasses.dataclass
    inside = threading.Event()

    def slow_dataclass(*args, **kwargs):
        make = real(*args, **kwargs)

        def slowly(cls):
            if cls is Probe:
                inside.set()
                time.sleep(0.3)          # the other thread asks for an instance meanwhile
            return make(cls)
        return slowly
    monkeypatch.setattr(dataclasses, "dataclass", slow_dataclass)
    maker = threading.Thread(target=frozen.realize_all)
    maker.start()
    assert inside.wait(5)
    made = Probe("P1", level=1)          # the callback thread's edge, mid-way
    maker.join()
    assert made == Probe("P1", 1) and dataclasses.is_dataclass(Probe)
    assert repr(made).endswith("Probe(name='P1', level=1)")
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.level = 2
