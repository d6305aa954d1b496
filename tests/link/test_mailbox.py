"""The puck mailbox: newest values, one wake token, nothing the engine needs lost."""
from __future__ import annotations

import threading

from pi_companion.core.events import HallCounts, PuckStatus
from pi_companion.link.mailbox import PuckMailbox


def counts(t: float, net: int, boot: str = "b1") -> HallCounts:
    return HallCounts(t, boot, net, 0)


def test_one_wake_however_many_posts_and_only_the_newest_counts() -> None:
    wakes: list[int] = []
    box = PuckMailbox(lambda: wakes.append(1))
    for i in range(10_000):
        box.post(counts(i, i))
    assert wakes == [1] and box.pending() == 1
    assert box.take() == [counts(9999, 9999)]
    box.post(counts(1e4, 5))
    assert wakes == [1, 1]                     # taken: the next post wakes again


def test_order_across_disconnects_and_reboots_is_kept() -> None:
    box = PuckMailbox(lambda: None)
    box.post(counts(1, 3))                     # steps before the unplug still count
    box.post(PuckStatus(2, False))
    box.post(counts(2.5, 4))                   # (cannot happen; dropped with the disconnect)
    box.post(PuckStatus(3, False))             # only the first disconnect is kept
    box.post(PuckStatus(4, True, "b2"))
    box.post(counts(5, 1, "b2"))
    box.post(PuckStatus(6, True, "b3"))        # rebooted again: b2's counts only set a base
    box.post(counts(7, 2, "b3"))
    box.post(counts(8, 9, "b3"))
    assert box.take() == [counts(1, 3), PuckStatus(2, False), PuckStatus(6, True, "b3"),
                          counts(8, 9, "b3")]
    assert box.take() == []


def test_posts_from_another_thread_never_lose_the_newest() -> None:
    queue: list[int] = []
    box = PuckMailbox(lambda: queue.append(1))
    seen: list[HallCounts] = []

    def reader() -> None:
        for i in range(20_000):
            box.post(counts(i, i))
    thread = threading.Thread(target=reader)
    thread.start()
    while thread.is_alive() or queue:
        if queue:
            queue.pop()
            seen += [e for e in box.take() if isinstance(e, HallCounts)]
    assert seen[-1] == counts(19_999, 19_999)
    assert [c.net for c in seen] == sorted(c.net for c in seen)
