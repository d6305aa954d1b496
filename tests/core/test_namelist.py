"""Tonight's names: newest table first in seat order, each name once, valid names only, bounded."""
from __future__ import annotations

from hypothesis import given, strategies as st

from pi_companion.core.names import name_problem
from pi_companion.core.namelist import KEPT, grown, tonight_set
from pi_companion.core.players_menu import name_sets

names = st.lists(st.one_of(st.sampled_from(["Ada", "ada", " Ben ", "Cy", "", "x" * 17, "Eve\u202e", 3]),
                           st.text(max_size=18)), max_size=40)


@given(st.lists(names, max_size=8))
def test_the_list_stays_valid_distinct_and_bounded_however_it_grows(tables):
    known: tuple[str, ...] = ()
    for table in tables:
        known = grown(known, table)
        assert len(known) <= KEPT
        assert len({n.casefold() for n in known}) == len(known)
        assert all(name_problem(n) is None and n == n.strip() for n in known)
        valid = [n.strip() for n in table if name_problem(n) is None]
        if valid:
            assert known[0] == valid[0]          # the newest table's seat 1 leads


def test_a_table_goes_in_front_in_seat_order_and_the_oldest_names_fall_off():
    known = grown((), ["Ada", "Ben", "Cy"])
    known = grown(known, ["Red", "ben", "Green"])
    assert known == ("Red", "ben", "Green", "Ada", "Cy")
    assert grown((), [f"N{i}" for i in range(30)]) == tuple(f"N{i}" for i in range(KEPT))


def test_players_menu_offers_tonights_names_not_at_the_table():
    tonight = ("Red", "Blue", "Green", "Ada", "Ben", "Dee", "Cy")
    sets = dict(name_sets(("Red", "Blue", "Green"), 3, tonight))
    assert sets["tonight"] == ("Ada", "Ben", "Dee")
    assert dict(name_sets(("Red", "Blue", "Green"), 5, tonight))["tonight"] == ("Ada", "Ben", "Dee", "Cy", "P5")
    assert "tonight" not in dict(name_sets(("Ada", "Ben"), 2, ("Ada", "Ben")))
    assert tonight_set((), 3) == ()
