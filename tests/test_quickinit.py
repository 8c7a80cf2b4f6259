"""quick_init: the same records as dataclass's own __init__ makes, for every class that uses it."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest

from extractors.pipeline import PartSpan
from gateway.model.identifiers.anonymizer import Replacement
from gateway.model.identifiers.finding import Finding
from gateway.model.records import Decision, Step
from gateway.model.rewrite import Edit, TextEdit
from gateway.quickinit import quick_init
from gateway.store.base import DecisionRecord

_FINDING = Finding(start=3, end=7, kind="PERSON", text="John")
_STEP = Step(term="virus", source="K", pmi=0.5, threshold=1.0, entity="HIV", accepted=True)
# Each class with the arguments of one instance: positional where the class takes them so, else by keyword.
CASES: list[tuple[type[Any], tuple[Any, ...], dict[str, Any]]] = [
    (Edit, (3, 7, "[PERSON 1]", 4), {}),
    (TextEdit, (3, 7, "[PERSON 1]"), {}),
    (PartSpan, ("1.1 text/plain", 3, 7), {}),
    (Replacement, (_FINDING, "[PERSON 1]", "redact", "PERSON:1"), {}),
    (
        Decision,
        (),
        {"term": "john", "surface": "John", "entity": None, "pmi": None, "threshold": None, "ic_term": 0.0,
         "action": "redact", "replacement": "[PERSON 1]", "reason": "identifier: capitalised name",
         "spans": ((3, 7),), "kind": "PERSON"},
    ),
    (
        DecisionRecord,
        (),
        {"policy": "p", "entity": "HIV", "term": "hiv", "pmi": 1.5, "threshold": 1.0, "action": "generalize",
         "replacement": "virus", "reason": "risky", "part": "body", "chain": (_STEP,)},
    ),
]  # fmt: skip


def _twin(cls: type[Any]) -> type[Any]:
    """The class as dataclass alone makes it: same fields, same parameters, the generated __init__."""
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    fields = [(f.name, f.type, f) for f in dataclasses.fields(cls)]
    copies = [(name, tp, dataclasses.field(default=f.default, kw_only=f.kw_only)) for name, tp, f in fields]
    return dataclasses.make_dataclass(cls.__name__, copies, frozen=params.frozen, eq=params.eq, slots=True)


@pytest.mark.parametrize(("cls", "args", "kwargs"), CASES, ids=[c[0].__name__ for c in CASES])
def test_a_quick_record_is_the_generated_one(cls: type[Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    twin = _twin(cls)
    quick, made = cls(*args, **kwargs), twin(*args, **kwargs)
    assert dataclasses.asdict(quick) == dataclasses.asdict(made)
    for f in dataclasses.fields(cls):
        assert getattr(quick, f.name) == getattr(made, f.name)
    assert quick == cls(*args, **kwargs) and hash(quick) == hash(cls(*args, **kwargs))
    # The same parameters: names, kinds (positional or keyword-only) and defaults.
    shape = [(p.name, p.kind, p.default) for p in inspect.signature(cls).parameters.values()]
    assert shape == [(p.name, p.kind, p.default) for p in inspect.signature(twin).parameters.values()]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(quick, dataclasses.fields(cls)[0].name, None)
    first = dataclasses.fields(cls)[0].name
    assert getattr(dataclasses.replace(quick, **{first: getattr(made, first)}), first) == getattr(made, first)


@pytest.mark.parametrize(("cls", "args", "kwargs"), CASES, ids=[c[0].__name__ for c in CASES])
def test_a_quick_record_refuses_what_the_generated_one_refuses(
    cls: type[Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    with pytest.raises(TypeError):
        cls(*args, **kwargs, unknown=1)
    if kwargs:  # keyword-only: no positional argument
        with pytest.raises(TypeError):
            cls(*kwargs.values())
    else:
        with pytest.raises(TypeError):
            cls(*args[:-1])


def test_defaults_are_the_fields_own() -> None:
    @quick_init
    @dataclasses.dataclass(frozen=True, slots=True)
    class Point:
        x: int
        y: int = 2
        label: tuple[str, ...] = ()

    assert Point(1) == Point(1, 2, ())
    assert Point(1).label == () and Point(1, label=("a",)).label == ("a",)


def test_only_a_frozen_dataclass_with_slots_and_plain_fields_is_taken() -> None:
    with pytest.raises(TypeError):

        @quick_init
        @dataclasses.dataclass(slots=True)
        class Mutable:
            x: int

    with pytest.raises(TypeError):

        @quick_init
        @dataclasses.dataclass(frozen=True)
        class NoSlots:
            x: int

    with pytest.raises(TypeError):

        @quick_init
        @dataclasses.dataclass(frozen=True, slots=True)
        class Factory:
            x: list[int] = dataclasses.field(default_factory=list)
