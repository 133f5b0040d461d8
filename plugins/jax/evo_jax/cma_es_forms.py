"""The two forms of `cma-es-jax`, full covariance (evo_jax.cma_es_update) and separable
(evo_jax.sep_cma_es_update), each a `Form` of pure functions of its own state, and their
compiled functions per shape: the optimizer holds a form and never asks which it is."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

from evo_jax import cma_es_update, sep_cma_es_update
from evo_jax.cma_es_update import CMAState, Constants
from evo_jax.sep_cma_es_update import SepCMAState

__all__ = ["State", "Form", "FULL", "SEPARABLE", "form_of", "tell_then_ask", "Compiled", "compiled"]

#: a state of either form: full covariance or separable (diagonal)
State = CMAState | SepCMAState


class Form(NamedTuple):
    """One form of the strategy: its state's type and its pure functions."""

    state: type[CMAState] | type[SepCMAState]
    initial_state: Callable[[int, Any, float, Any], State]
    ask: Callable[[Constants, Any], tuple[Any, Any, Any]]
    tell: Callable[[Constants, Any, Any, Any], Any]
    stalled: Callable[[Any], Any]
    inconsistency: Callable[[Any], str | None]


FULL = Form(CMAState, cma_es_update.initial_state, cma_es_update.ask, cma_es_update.tell,
            cma_es_update.stalled, cma_es_update.inconsistency)
SEPARABLE = Form(SepCMAState, sep_cma_es_update.initial_state, sep_cma_es_update.ask,
                 sep_cma_es_update.tell, sep_cma_es_update.stalled,
                 sep_cma_es_update.inconsistency)


def form_of(constants: Constants) -> Form:
    return SEPARABLE if constants.diagonal else FULL


def tell_then_ask(constants: Constants, state: State, y: Any, order: Any
                  ) -> tuple[State, State, Any, Any]:
    """tell, and the next ask drawn at once: (the state told, the state after the next ask,
    its samples, its steps)."""
    form = form_of(constants)
    told = form.tell(constants, state, y, order)
    return (told, *form.ask(constants, told))


class Compiled(NamedTuple):
    """The jitted functions of one shape and form."""

    ask: Callable[..., Any]
    tell_then_ask: Callable[..., Any]
    stalled: Callable[..., Any]


@functools.cache
def compiled(constants: Constants) -> Compiled:
    """The jitted ask, tell-then-ask and termination check of one shape and form (shared by
    every optimizer of that shape and form; the check, which lambda does not change, by every
    population of a restarted run)."""
    import jax

    form = form_of(constants)
    return Compiled(jax.jit(functools.partial(form.ask, constants)),
                    jax.jit(functools.partial(tell_then_ask, constants)),
                    _compiled_check(form))


@functools.cache
def _compiled_check(form: Form) -> Callable[..., Any]:
    import jax

    return jax.jit(form.stalled)
