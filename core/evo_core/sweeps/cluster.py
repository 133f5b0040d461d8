"""The runs of a sweep on a Dask cluster: one task per run, as many at once as it has threads.

The workers write the run folders themselves, so they must see the sweep folder at the same path
(one machine, or a shared file system). Give them one thread each (`dask worker ADDRESS
--nthreads 1 --nworkers N`): runs are CPU-bound Python, and two in one process share its GIL.

Stopping. A task runs in a worker's thread, which no signal reaches; instead every run looks
after each generation whether its task is still wanted, and stops resumably (the last
generation checkpointed) when it is not. Ctrl-C cancels the sweep's tasks, so does the end of
the sweep's process however it ends (the scheduler drops the tasks of a client that is gone),
and the sweep waits for the runs that had started to release their folders.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evo_core.errors import UserError
from evo_core.processes.scheduler_probe import connect_client
from evo_core.results.run_folder import RunFolder
from evo_core.sweeps.run_one import Outcome, RunJob, run_job

__all__ = ["run_on_cluster", "CONNECT_TIMEOUT"]

#: seconds to wait for the scheduler's answer
CONNECT_TIMEOUT = 10.0
#: seconds a stopped sweep waits for its started runs to checkpoint and release their folders
RELEASE_TIMEOUT = 300.0


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise UserError("sweep.address needs Dask: pip install \"evo-core[dask]\"") from None
    return distributed


def _task_cancelled() -> Callable[[], bool]:
    """In a Dask task: a test of whether the task's result is still wanted."""
    import distributed

    worker = distributed.get_worker()
    key = worker.get_current_task()

    def cancelled() -> bool:
        task = worker.state.tasks.get(key)
        return task is None or task.state not in ("executing", "long-running")

    return cancelled


def run_task(job: RunJob) -> Outcome:
    """What a Dask worker runs: the job, stopping when the task is cancelled."""
    return run_job(job, should_stop=_task_cancelled())


def _wait_released(run_dirs: list[Path]) -> None:
    """Wait until no process holds the run folders' locks (their runs have stopped)."""
    deadline = time.monotonic() + RELEASE_TIMEOUT
    for run_dir in run_dirs:
        while run_dir.is_dir() and time.monotonic() < deadline:
            folder = RunFolder(run_dir)
            try:
                folder.lock()
            except UserError:
                time.sleep(0.2)
                continue
            folder.unlock()
            break


def run_on_cluster(jobs: list[RunJob], address: str,
                   on_outcome: Callable[[Outcome], None]) -> list[Outcome]:
    """Run the jobs on the cluster at `address`; `on_outcome` hears of each as it ends. After a
    run fails with a user's mistake the runs not yet started are cancelled. A KeyboardInterrupt
    cancels every run (the started ones stop after their current generation) and propagates
    once they have stopped."""
    distributed = _distributed()
    client = connect_client(distributed, address, CONNECT_TIMEOUT, "sweep.address",
                            "dask worker ADDRESS --nthreads 1")
    outcomes: list[Outcome] = []
    futures: list[Any] = []
    try:
        futures = [client.submit(run_task, job, pure=False) for job in jobs]
        by_key = {future.key: job for future, job in zip(futures, jobs)}
        for future in distributed.as_completed(futures):
            if future.cancelled():
                continue
            try:
                outcome: Outcome = future.result()
            except Exception as exc:  # noqa: BLE001 - a worker lost, a job that cannot unpickle
                outcome = Outcome(by_key[future.key].name, "failed",
                                  f"the Dask task failed: {type(exc).__name__}: {exc}")
            outcomes.append(outcome)
            on_outcome(outcome)
            if outcome.user_error:
                client.cancel([f for f in futures if not f.done()])
    except KeyboardInterrupt:
        client.cancel(futures)
        _wait_released([job.run_dir for job in jobs])
        raise
    finally:
        client.close()
    return outcomes
