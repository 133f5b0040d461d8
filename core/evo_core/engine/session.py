"""A run made ready to train: the set-up that `evo train`, `evo resume` and `evo_core.api` share.

A new run validates its config, builds the experiment and writes config.json into a new folder;
a resumed run reads config.json back, applies the few allowed changes and restores the
checkpoint. Both end in a `Session`, whose `run` is the one way generations are trained, so the
command line and the API give the same results for the same config and seed.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evo_core.config import validate_config
from evo_core.config.loading import set_values
from evo_core.config.schema import ExperimentConfig
from evo_core.contract.protocols import IHandler
from evo_core.engine.experiment import Experiment, build_experiment
from evo_core.engine.progress import make_progress
from evo_core.engine.training import RunEvents, TrainingState, new_run_id, resume_state, train
from evo_core.errors import UserError
from evo_core.plugins.registry import Registry
from evo_core.results.provenance import provenance
from evo_core.results.run_folder import RunFolder

__all__ = ["RESUMABLE", "Session", "new_session", "resume_session", "default_run_dir",
           "check_resumable"]

#: What a resume may change: how long, where and how often it checkpoints, the step limit, and
#: the trackers that watch it. Anything else would make the continued run a different experiment.
RESUMABLE = ("generations", "checkpoint_every", "processing", "episodes.max_steps", "trackers")

Overrides = Sequence[tuple[str, Any]]


@dataclass
class Session:
    """A run folder with its experiment, evaluation handler and training state."""

    experiment: Experiment
    folder: RunFolder
    handler: IHandler
    state: TrainingState
    #: the provenance table written into config.json (run id, versions, resumes)
    provenance: dict[str, Any]

    @property
    def config(self) -> ExperimentConfig:
        """The validated config, as config.json has it (provenance included)."""
        return self.experiment.config.model_copy(update={"provenance": self.provenance})

    def run(self, events: RunEvents, progress: bool = False) -> TrainingState:
        """Train to `config.generations`; the handler is closed however it ends. An interrupt
        propagates after the last finished generation is checkpointed."""
        try:
            with make_progress(self.experiment.config.generations, self.state.generation,
                               quiet=not progress) as bar:
                return train(self.experiment, self.folder, self.handler, bar, self.state, events)
        finally:
            self.handler.close()


def default_run_dir(environment: str, brain: str, root: Path = Path("runs")) -> Path:
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{environment}-{brain}")
    path = root / f"{stamp}-{slug}"
    suffix = 2
    while path.exists():
        path = root / f"{stamp}-{slug}-{suffix}"
        suffix += 1
    return path


def new_session(data: dict[str, Any], registry: Registry, *, source: str,
                config_file: Path | None, out: Path | None, overrides: Overrides = ()
                ) -> Session:
    """A new run of the config `data` (read from `config_file`, if any; `source` names it in
    messages) in the new or empty folder `out` (default: runs/<time>-<environment>-<brain>)."""
    data = set_values(data, list(overrides))
    data.pop("provenance", None)  # a run's config.json may be trained again
    config = validate_config(data, registry, source=source)
    experiment = build_experiment(config, registry)
    handler = experiment.make_handler()
    try:
        folder = RunFolder.create(out or default_run_dir(config.environment, config.brain.type))
        run_id = new_run_id()
        record = config.model_dump(mode="json")
        record["provenance"] = {"run_id": run_id, **provenance(registry, config_file)}
        folder.write_config(record)
    except BaseException:
        handler.close()
        raise
    return Session(experiment, folder, handler, TrainingState.fresh(experiment, run_id),
                   record["provenance"])


def check_resumable(keys: Sequence[str]) -> None:
    """Refuse a change that would make the resumed run another experiment."""
    for key in keys:
        if not any(key == allowed or key.startswith(allowed + ".") for allowed in RESUMABLE):
            raise UserError(f"--set {key}: cannot change when resuming (allowed: "
                            f"{', '.join(RESUMABLE)}, processing.*, trackers.*); start a new run "
                            "with `evo train` instead")


def resume_session(run_dir: Path, registry: Registry, *, generations: int | None = None,
                   overrides: Overrides = ()) -> Session:
    """The stopped (or finished) run in `run_dir`, restored from its checkpoint, to continue up
    to `generations` (default: its config's) with the allowed `overrides`. Without a checkpoint
    (`state.generation == 0`) the run starts again from generation 1."""
    folder = RunFolder.open(run_dir)
    stored = folder.read_config()
    record_provenance = stored.pop("provenance", None) or {}
    run_id = record_provenance.get("run_id")
    if not isinstance(run_id, str):
        raise UserError(f"{folder.config_file}: has no provenance.run_id; was it written by "
                        "`evo train`?")
    changes = list(overrides)
    check_resumable([key for key, _ in changes])
    if generations is not None:
        changes.append(("generations", generations))
    data = set_values(stored, changes)
    config = validate_config(data, registry, source=f"{folder.config_file} (resumed)")
    experiment = build_experiment(config, registry)
    state = resume_state(experiment, folder, run_id)
    if state.generation >= config.generations:
        raise UserError(f"{folder.path}: already has {state.generation} generation(s); pass "
                        f"--generations N with N > {state.generation} to continue")
    handler = experiment.make_handler()
    try:
        record = config.model_dump(mode="json")
        record["provenance"] = dict(record_provenance)
        resumed = list(record_provenance.get("resumed", []))
        resumed.append({"from_generation": state.generation, **provenance(registry, None)})
        record["provenance"]["resumed"] = resumed
        folder.write_config(record)
    except BaseException:
        handler.close()
        raise
    return Session(experiment, folder, handler, state, record["provenance"])
