"""The core's environment wrappers, registered through the same hook as any plugin's."""

from __future__ import annotations

from evo_core.contract.hookspecs import hookimpl
from evo_core.contract.protocols import IWrapperClass
from evo_core.wrappers.atari_preprocessing import AtariPreprocessingWrapper
from evo_core.wrappers.frame_stack import FrameStackWrapper
from evo_core.wrappers.qbert_hard import QbertHard
from evo_core.wrappers.scale_observation import ScaleObservation
from evo_core.wrappers.stand_still_stop import StandStillStop


@hookimpl
def evo_wrappers() -> list[IWrapperClass]:
    return [AtariPreprocessingWrapper, FrameStackWrapper, QbertHard, ScaleObservation,
            StandStillStop]
