"""``afr bench steps``: a reproduction's CPU split by step, measured on its first repetitions."""

from __future__ import annotations

import json
from contextlib import contextmanager

import pytest
from conftest import assert_one_line_error, run_afr
from test_reproduce import write_toy

from afr_cli.benchmarks import steps as steps_module
from afr_cli.benchmarks.steps import StepClock, run
from afr_cli.catalogue import knowledge
from afr_cli.publish.bench_blocks import steps_block, steps_by_family


class FakeTime:
    """A process clock that advances only when told to."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_steps_are_exclusive_and_scaled_by_their_repetitions(monkeypatch):
    fake = FakeTime()
    monkeypatch.setattr(steps_module.time, "process_time", fake)
    clock = StepClock()
    clock.unit_scale, clock.forest_scale = 10.0, 100.0
    fake.now += 1.0  # outside any step: other
    with clock.step("features: x"):
        fake.now += 2.0
        with clock.step("forest fit"):  # nested: charged to itself only, at the forest's scale
            fake.now += 3.0
        fake.now += 4.0
    clock.settle()
    assert dict(clock.sampled) == {"other": 1.0, "features: x": 6.0, "forest fit": 3.0}
    assert dict(clock.seconds) == {"other": 10.0, "features: x": 60.0, "forest fit": 300.0}
    clock.restart()  # time between tasks is not counted
    fake.now += 50.0
    clock.restart()
    clock.settle()
    assert clock.sampled["other"] == 1.0


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    return write_toy(tmp_path_factory.mktemp("steps"))


@contextmanager
def steps_of(folder):
    """``run`` on a paper folder, in this process: the folder it adds to the known papers is taken
    away again afterwards, so later tests see only the package's papers."""
    try:
        yield run(1, None, [str(folder)])
    finally:
        knowledge.forget_added_folders()


@pytest.fixture
def toy_steps(toy):
    with steps_of(toy) as result:
        yield result


def test_the_toy_paper_splits_into_forest_and_model_steps_scaled_to_its_reps(toy_steps):
    r = toy_steps
    assert "toy" in [p.id for p in knowledge.papers()]  # until the fixture ends
    assert r["experiments"] == ["toy_run"] and r["units"] == 1 and r["datasets"] == ["Friedman1"]
    steps = {s["step"]: s for s in r["steps"]}
    assert {
        "forest fit",
        "leaf statistics and rows",
        "features: eps-abrf",
        "solve: eps-abrf",
        "predict: eps-abrf",
        "predict: forest",
        "other",
    } <= set(steps)
    for s in r["steps"]:  # one of the toy's two repetitions was measured: every step counts twice
        assert s["projected_cpu_min"] * 60 == pytest.approx(2 * s["sampled_cpu_s"], abs=2e-3)
    assert sum(s["share"] for s in r["steps"]) == pytest.approx(1.0, abs=1e-3)
    plain, families = steps_by_family(r)
    assert set(families) >= {"eps-abrf", "forest"} and "forest fit" in plain
    block = steps_block([{"result": r}])
    assert "| family eps-abrf |" in block and "| forest fit |" in block
    assert "**all (1 units of repetitions 0..0, scaled)**" in block


def test_the_command_prints_json_and_rejects_bad_reps(toy):
    proc = run_afr("bench", "steps", str(toy), "--reps", "2", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    assert r["units"] == 2 and r["reps"] == 2
    for s in r["steps"]:  # both repetitions measured: no scaling
        assert s["projected_cpu_min"] * 60 == pytest.approx(s["sampled_cpu_s"], abs=2e-3)
    assert_one_line_error(run_afr("bench", "steps", str(toy), "--reps", "0"), "--reps", ">= 1")


def test_a_record_keeps_its_note_apart_from_the_command(toy, tmp_path):
    proc = run_afr("bench", "steps", str(toy), "--record", "--note", "the machine was busy", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (path,) = (tmp_path / "results" / "bench" / "steps").glob("*.json")
    record = json.loads(path.read_text())
    assert record["note"] == "the machine was busy"
    assert record["command"] == f"afr bench steps {toy}"  # neither --record nor --note


def test_the_toy_folder_is_gone_from_the_known_papers_after_its_run(toy):
    with steps_of(toy):
        assert "toy" in [p.id for p in knowledge.papers()]
    assert "toy" not in [p.id for p in knowledge.papers()]
