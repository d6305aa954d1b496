"""Folding the game log the live box wrote gives the state the live box has, field by field.

A box on gpiozero's mock pins (a virtual clock), with its real game log and hub, is driven
through random paths of the box's own buttons and encoder, the host's commands (parsed by the
hub's protocol, queued like a press) and the hotspot coming and going (the hub reading the
dispatcher's file). After each path the log is folded into a fresh engine, as a resume does,
and every field of the table's state must equal the live engine's: anything that changes what
an input does must itself be an input in the log."""
from __future__ import annotations


from hypothesis import HealthCheck, given, settings, strategies as st

from helpers.boxes import Rig

# The engine's state that an input can change and a resume must bring back. Not compared: the
# clock (an idle box moves it without a record; the next record carries the time), the notice
# (what the screen says about the last input: no input reads it, and a new game or a resume
# says its own), the catalogue, tunes and colours (the config's, handed to both), and the
# fold's own counters.
FIELDS = ("table", "menu", "players", "options", "seed", "seats", "hotspot", "undo_stack",
          "games_played", "shutdown_requested", "window", "rules")

ACTIONS = st.one_of(
    st.sampled_from(["MENU", "YES", "NO", "P1", "P2", "P3", "YES-long", "NO-long"]).map(lambda b: ("press", b)),
    st.sampled_from([1, -1]).map(lambda d: ("turn", d)),
    st.just(("web-menu", None)),                     # MENU, the last entry (Show on TV / phone), YES
    st.sampled_from([None, ("games-table", "tabletop-2026", "10.42.0.1"),
                     ("other-net", "another-secret", "")]).map(lambda h: ("hotspot", h)),
    st.sampled_from([{"cmd": "yes"}, {"cmd": "no"}, {"cmd": "undo"}, {"cmd": "new"},
                     {"cmd": "dial", "delta": 1}, {"cmd": "rename", "player": 1, "name": "Bea"},
                     {"cmd": "switch", "game": "hands-up"}, {"cmd": "switch", "game": "grab-bag"},
                     {"cmd": "players", "names": ["Ada", "Ben", "Cy", "Dee"]},
                     {"cmd": "menu", "key": "pause"}]).map(lambda m: ("host", m)),
)


def differences(live, folded) -> list[str]:
    return [f"{name}: live {getattr(live, name)!r:.200} folded {getattr(folded, name)!r:.200}"
            for name in FIELDS if getattr(live, name) != getattr(folded, name)]


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(actions=st.lists(ACTIONS, min_size=1, max_size=14))
def test_folding_the_live_boxs_log_gives_its_state(tmp_path_factory, actions):
    rig = Rig(tmp_path_factory.mktemp("fold"))
    try:
        for kind, arg in actions:
            rig.act(kind, arg)
            assert not differences(rig.box.engine, rig.folded()), (kind, arg, differences(rig.box.engine, rig.folded()))
    finally:
        rig.close()


def test_the_wifi_entry_of_the_live_box_is_the_folds_too(tmp_path):
    """The path an outside tester found: with the hotspot up, MENU > Show on TV / phone >
    the first entry. Live and folded both end on the Wi-Fi QR."""
    rig = Rig(tmp_path)
    try:
        rig.act("hotspot", ("games-table", "tabletop-2026", "10.42.0.1"))
        assert rig.box.engine.menu.qr == "wifi"
        rig.act("press", "NO")
        rig.act("web-menu", None)
        rig.act("press", "YES")
        assert rig.box.engine.menu.qr == "wifi"
        assert rig.folded().menu == rig.box.engine.menu
        rig.act("host", {"cmd": "new"})                 # a new game (and log) on the same hotspot
        rig.act("web-menu", None)
        assert rig.box.engine.menu.items[0] == ("web:wifi", "Join box Wi-Fi")
        assert not differences(rig.box.engine, rig.folded())
    finally:
        rig.close()
