"""JobSlots: at most as many jobs as the pool has processes; a message another one waits on goes first."""

from __future__ import annotations

import asyncio

import pytest

from gateway.slots import JobSlots


async def _hold(slots: JobSlots, name: str, order: list[str], release: asyncio.Event,
                urgent: bool = False) -> None:  # fmt: skip
    async with slots.slot(lambda: urgent):
        order.append(name)
        await release.wait()


def test_a_freed_slot_goes_to_the_oldest_urgent_waiter_then_in_arrival_order() -> None:
    async def main() -> list[str]:
        slots = JobSlots(lambda: 1)
        order: list[str] = []
        gates = {n: asyncio.Event() for n in "abcd"}
        tasks = []
        for name, urgent in (("a", False), ("b", False), ("c", True), ("d", False)):
            tasks.append(asyncio.create_task(_hold(slots, name, order, gates[name], urgent)))
            await asyncio.sleep(0)  # each arrives in turn
        assert order == ["a"] and slots.waiting == 3
        for name in "acbd":
            gates[name].set()
            await asyncio.sleep(0.01)
        await asyncio.gather(*tasks)
        assert slots.busy == 0 and slots.waiting == 0
        return order

    assert asyncio.run(main()) == ["a", "c", "b", "d"]


def test_never_more_jobs_than_slots() -> None:
    async def main() -> int:
        slots = JobSlots(lambda: 2)
        running = peak = 0

        async def job() -> None:
            nonlocal running, peak
            async with slots.slot():
                running += 1
                peak = max(peak, running)
                await asyncio.sleep(0.001)
                running -= 1

        await asyncio.gather(*(job() for _ in range(20)))
        assert slots.busy == 0
        return peak

    assert asyncio.run(main()) == 2


def test_a_waiter_cancelled_after_it_was_handed_the_slot_passes_it_on() -> None:
    async def main() -> list[str]:
        slots = JobSlots(lambda: 1)
        order: list[str] = []
        first, third = asyncio.Event(), asyncio.Event()
        third.set()
        a = asyncio.create_task(_hold(slots, "a", order, first))
        await asyncio.sleep(0)
        b = asyncio.create_task(_hold(slots, "b", order, asyncio.Event()))
        c = asyncio.create_task(_hold(slots, "c", order, third))
        await asyncio.sleep(0)
        first.set()  # a leaves and hands the slot to b, which is cancelled before it runs (a timeout)
        await asyncio.sleep(0)
        b.cancel()
        await a
        with pytest.raises(asyncio.CancelledError):
            await b
        await asyncio.wait_for(c, 5)
        assert slots.busy == 0
        return order

    assert asyncio.run(main()) == ["a", "c"]


def test_a_cancelled_waiter_leaves_the_queue() -> None:
    async def main() -> None:
        slots = JobSlots(lambda: 1)
        order: list[str] = []
        gate = asyncio.Event()
        a = asyncio.create_task(_hold(slots, "a", order, gate))
        await asyncio.sleep(0)
        b = asyncio.create_task(_hold(slots, "b", order, gate))
        await asyncio.sleep(0)
        assert slots.waiting == 1
        b.cancel()
        with pytest.raises(asyncio.CancelledError):
            await b
        assert slots.waiting == 0
        gate.set()
        await a
        assert order == ["a"] and slots.busy == 0

    asyncio.run(main())
