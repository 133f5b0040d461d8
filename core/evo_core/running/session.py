"""A run made ready to train: the set-up that `evo train`, `evo resume` and `evo_core.api` share.

A new run validates its config, builds the experiment and writes config.json into a new folder;
a resumed run reads config.json back, applies the few allowed changes and restores the
checkpoint. Both end in a `Session`, whose `run` is the one way generations are trained, so the
command line and the API give the same results for the same config and seed.
"""

from __future__ import annotations

import datetime
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evo_core.config import validate_config
from evo_core.config.champion import FRESH_BELOW, ChampionConfig
from evo_core.config.loading import read_config_file, set_values
from evo_core.config.schema import ExperimentConfig
from evo_core.contract.protocols import IHandler
from evo_core.errors import UserError
from evo_core.hooks.discovery import get_registry
from evo_core.hooks.registry import Registry
from evo_core.interrupts import marked_interrupts, wrapped_interrupt
from evo_core.results.checkpoint import RESUMABLE, changed_setting, run_binding
from evo_core.results.provenance import provenance, warn_changed_versions
from evo_core.results.run_folder import RunFolder
from evo_core.results.signing import signing_for
from evo_core.running.experiment import Experiment, build_experiment
from evo_core.running.progress import make_progress
from evo_core.running.received import check_received, check_recorded_plugins, resume_fix
from evo_core.running.training import RunEvents, TrainingState, new_run_id, resume_state, train

__all__ = ["RESUMABLE", "NO_CHECKPOINT", "Session", "new_session", "resume_session",
           "prepare_train", "prepare_resume", "default_run_dir", "check_resumable"]

Overrides = Sequence[tuple[str, Any]]

#: what resuming a run without a checkpoint means
NO_CHECKPOINT = "no checkpoint yet; the run starts again from generation 1"


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
        """Train to `config.generations`; the handler is closed and the folder unlocked however
        it ends. An interrupt propagates after the last finished generation is checkpointed;
        only a real SIGINT counts as one (a KeyboardInterrupt a brain raises is its error)."""
        interrupted = False
        try:
            # the optimizer's signed state is signed for this run and the config it records
            binding = run_binding(self.state.run_id,
                                  self.experiment.config.model_dump(mode="json"))
            with marked_interrupts(), signing_for(binding), make_progress(
                    self.experiment.config.generations, self.state.generation,
                    quiet=not progress) as bar:
                return train(self.experiment, self.folder, self.handler, bar, self.state, events)
        except KeyboardInterrupt:
            interrupted = True
            raise
        except Exception as exc:
            interrupt = wrapped_interrupt(exc)  # a library's error made of the Ctrl-C
            if interrupt is None:
                raise
            interrupted = True
            raise interrupt from None
        finally:
            try:
                self._close(interrupted)
            finally:
                self.folder.unlock()

    def _close(self, interrupted: bool) -> None:
        """Shut the handler down; a further Ctrl-C meanwhile only hurries that along (handlers
        wait briefly for workers stuck in an evaluation) when the run was interrupted already."""
        try:
            self.handler.close()
        except KeyboardInterrupt:
            if not interrupted:
                raise


class _NoHandler:
    """The handler of a resumed run that has nothing left to evaluate: no workers started."""

    def evaluate(self, template: Any, genomes: Any, seeds: Any) -> Any:
        raise AssertionError("a stopped run evaluates nothing")

    def close(self) -> None:
        pass


def default_run_dir(environment: str, brain: str, root: Path = Path("runs")) -> Path:
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{environment}-{brain}")
    path = root / f"{stamp}-{slug}"
    suffix = 2
    while path.exists():
        path = root / f"{stamp}-{slug}-{suffix}"
        suffix += 1
    return path


def _sources(overrides: Overrides, texts: Mapping[str, str] | None) -> dict[str, str]:
    """Dotted key -> the assignment that set it, for messages that name it (`--set KEY=VALUE`
    as typed when the command line gave it)."""
    return dict(texts) if texts is not None else {key: f"{key}={value}"
                                                  for key, value in overrides}


def with_default_champion(config: ExperimentConfig) -> ExperimentConfig:
    """`config` with the default `[champion]` table when it has none and its evaluations have
    fewer than FRESH_BELOW episodes: the champion of noisy single episodes is luck. Applied when
    a run starts, so config.json says what the run does, and a run made before the table
    existed resumes as it was made."""
    if config.champion is not None or config.episodes.runs >= FRESH_BELOW:
        return config
    return config.model_copy(update={"champion": ChampionConfig()})


def new_session(data: dict[str, Any], registry: Registry, *, source: str,
                config_file: Path | None, out: Path | None, overrides: Overrides = (),
                override_texts: Mapping[str, str] | None = None) -> Session:
    """A new run of the config `data` (read from `config_file`, if any; `source` names it in
    messages) in the new or empty folder `out` (default: runs/<time>-<environment>-<brain>).
    The folder is locked until the session's `run` ends; a run that never starts leaves none."""
    data = set_values(data, list(overrides))
    if "provenance" in data:  # what a run folder's config.json records is evo's, never a config's
        raise UserError(f"{source}: has a provenance table, which evo writes into a run "
                        "folder's config.json; remove it (to continue that run: evo resume "
                        "RUN_DIR)")
    config = with_default_champion(validate_config(
        data, registry, source=source, overrides=_sources(overrides, override_texts)))
    experiment = build_experiment(config, registry, source)
    handler = experiment.make_handler()
    path = out or default_run_dir(config.environment.id, config.brain.type)
    created = not path.exists()
    folder: RunFolder | None = None
    try:
        folder = RunFolder.create(path)  # locked: a second run into the same folder is refused
        run_id = new_run_id()
        record = config.model_dump(mode="json")
        record["provenance"] = {"run_id": run_id, **provenance(registry, config_file)}
        folder.write_config(record)
    except BaseException:
        handler.close()
        if folder is not None:
            folder.unlock()
        if created and path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        raise
    return Session(experiment, folder, handler, TrainingState.fresh(experiment, run_id),
                   record["provenance"])


def check_resumable(keys: Sequence[str], stored: ExperimentConfig,
                    resumed: ExperimentConfig) -> None:
    """Refuse a change that would make the resumed run another experiment. A key outside
    RESUMABLE may be given again with the value it has: that changes nothing, and confirms a
    value a received folder may not decide on its own (`running/received.py`)."""
    for key in keys:
        if any(key == allowed or key.startswith(allowed + ".") for allowed in RESUMABLE):
            continue
        change = changed_setting(stored.model_dump(mode="json"), resumed.model_dump(mode="json"))
        if change is not None:
            raise UserError(f"--set {key}: cannot change when resuming ({change}; allowed: "
                            f"{', '.join(RESUMABLE)}, processing.*, trackers.*, and any key "
                            "given its own value again); start a new run with `evo train` "
                            "instead")


def resume_session(run_dir: Path, *, generations: int | None = None,
                   overrides: Overrides = (),
                   override_texts: Mapping[str, str] | None = None) -> Session:
    """The stopped (or finished) run in `run_dir`, restored from its checkpoint, to continue up
    to `generations` (default: its config's) with the allowed `overrides`. Without a checkpoint
    (`state.generation == 0`) the run starts again from generation 1. The folder is locked
    until the session's `run` ends."""
    folder = RunFolder.open(run_dir)
    folder.lock()
    try:
        return _resume(folder, generations, overrides, override_texts)
    except BaseException:
        folder.unlock()
        raise


def _resume(folder: RunFolder, generations: int | None, overrides: Overrides,
            override_texts: Mapping[str, str] | None) -> Session:
    folder.refuse_links()
    folder.remove_stale_temporaries()
    stored = folder.read_config()
    registry = get_registry()
    check_recorded_plugins(stored, folder, registry, f"resume {folder.path}")
    record_provenance = stored.pop("provenance", None) or {}
    if not isinstance(record_provenance, dict):
        raise UserError(f"{folder.config_file}: its provenance is not a table; the run folder is "
                        "damaged (was config.json edited?)")
    run_id = record_provenance.get("run_id")
    if not isinstance(run_id, str):
        raise UserError(f"{folder.config_file}: has no provenance.run_id; was it written by "
                        "`evo train`?")
    changes = list(overrides)
    keys = [key for key, _ in changes]
    sources = _sources(changes, override_texts)
    if generations is not None:
        changes.append(("generations", generations))
    source = f"{folder.config_file} (resumed)"
    config = validate_config(set_values(stored, changes), registry, source=source,
                             overrides=sources)
    if keys:
        check_resumable(keys, validate_config(stored, registry, source=source), config)
    check_received(config, folder, registry, command=f"resume {folder.path}",
                   give_again=resume_fix(folder), given_again=keys)
    warn_changed_versions(record_provenance, registry, folder.config_file)
    experiment = build_experiment(config, registry, str(folder.config_file))
    state = resume_state(experiment, folder, run_id)
    if state.stop.done:  # solved or out of budget: `run` trains nothing, the folder stays as is
        return Session(experiment, folder, _NoHandler(), state, record_provenance)
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


def prepare_train(config: str | os.PathLike[str] | Mapping[str, Any], *,
                  out: str | os.PathLike[str] | None = None, overrides: Overrides = (),
                  override_texts: Mapping[str, str] | None = None) -> Session:
    """A new run of `config` (a .toml or .json file, or a dict of the same structure),
    validated, built and with its folder written: what `evo train` and `api.train` run.
    `override_texts` (dotted key -> the assignment as typed) lets messages quote `--set`."""
    registry = get_registry()
    folder = Path(out) if out is not None else None
    if isinstance(config, Mapping):
        return new_session(dict(config), registry, source="config", config_file=None,
                           out=folder, overrides=overrides, override_texts=override_texts)
    path = Path(config)
    return new_session(read_config_file(path), registry, source=str(path), config_file=path,
                       out=folder, overrides=overrides, override_texts=override_texts)


def prepare_resume(run_dir: str | os.PathLike[str], *, generations: int | None = None,
                   overrides: Overrides = (),
                   override_texts: Mapping[str, str] | None = None) -> Session:
    """A stopped or finished run restored from its checkpoint: what `evo resume` and
    `api.resume` run."""
    return resume_session(Path(run_dir), generations=generations, overrides=overrides,
                          override_texts=override_texts)
