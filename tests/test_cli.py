"""The ``hdbo`` command line, driven through ``main([...])``."""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path

import pytest

from hdbo.cli import UsageError, main, parse_key_values
from hdbo.experiments.store import RunStore

TOY_DIR = Path(__file__).resolve().parent / "experiments"
QUAD = "toy-quadratic"
TOY = ("--plugin", "_hdbo_test_problems")  # registers the toy-* problems


@pytest.fixture(autouse=True)
def _toy_problems_importable(monkeypatch):
    monkeypatch.syspath_prepend(str(TOY_DIR))


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _assert_usage_error(code, err, match):
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("hdbo: error: ")
    assert match in lines[0], lines[0]
    assert "Traceback" not in err


def test_run_stores_and_summarizes(tmp_path, capsys):
    db = tmp_path / "runs.db"
    code, out, err = _run(capsys, "run", *TOY, "--problem", QUAD, "--dim", "3", "--method", "random", "--seeds", "2",
                          "--budget", "5", "--store", str(db), "--no-progress")
    assert code == 0, err
    assert "simple regret (mean ± SE)" in out and "random" in out
    with RunStore(db) as store:
        runs = store.list_runs()
        assert [r.config.seed for r in runs] == [0, 1]
        assert all(r.status == "finished" and r.n_evaluations == 5 for r in runs)
        assert runs[0].config.problem_params == {"dim": 3} and runs[0].config.experiment == "run"
        first = store.load_evaluations(runs[0].id).X
    # running the same command again skips the finished runs
    code, out, err = _run(capsys, "run", *TOY, "--problem", QUAD, "--dim", "3", "--method", "random", "--seeds", "2",
                          "--budget", "5", "--store", str(db), "--no-progress")
    assert code == 0 and "0 finished now, 2 already finished" in err
    with RunStore(db) as store:
        assert len(store.list_runs()) == 2
        assert (store.load_evaluations(store.list_runs()[0].id).X == first).all()


def test_run_explicit_seeds_noise_and_problem_params(tmp_path, capsys):
    db = tmp_path / "r.db"
    code, out, err = _run(capsys, "run", *TOY, "--problem", QUAD, "--dim", "2", "--noise-std", "0.1", "--method", "random",
                          "--seed", "3", "--seed", "5", "--problem-param", "known_optimum=false", "--budget", "4",
                          "--store", str(db), "--experiment", "mine", "--no-progress")
    assert code == 0, err
    with RunStore(db) as store:
        runs = store.list_runs(experiment="mine")
        assert [r.config.seed for r in runs] == [3, 5]
        assert runs[0].config.problem_params == {"dim": 2, "noise_std": 0.1, "known_optimum": False}
    assert "—" in out  # no known optimum: no regret


def test_run_with_two_workers(tmp_path, capsys):
    db = tmp_path / "w.db"
    code, out, err = _run(capsys, "run", *TOY, "--problem", QUAD, "--dim", "3", "--method", "random", "--seeds", "3", "--budget", "3",
                          "--store", str(db), "--workers", "2", "--no-progress")
    assert code == 0, err
    with RunStore(db) as store:
        assert len(store.list_runs(status="finished")) == 3


@pytest.mark.parametrize(
    "argv, match",
    [
        (["run", *TOY, "--problem", QUAD, "--method", "nope", "--budget", "3"], "unknown method 'nope'; available methods:"),
        (["run", "--problem", "no-such-problem", "--method", "random", "--budget", "3"], "no-such-problem"),
        (["run", "--problem", "_hdbo_test_problems:missing", "--method", "random", "--budget", "3"],
         "looks like 'module:attr'"),
        (["run", *TOY, "--problem", QUAD, "--method", "random"], "the following arguments are required: --budget"),
        (["run", *TOY, "--problem", QUAD, "--method", "random", "--budget", "0"], "--budget must be > 0"),
        (["run", *TOY, "--problem", QUAD, "--method", "random", "--budget", "x"], "invalid int value: 'x'"),
        (["run", *TOY, "--problem", QUAD, "--dim", "3", "--method", "random", "--budget", "3", "--seeds", "0"], "--seeds must be > 0"),
        (["run", *TOY, "--problem", QUAD, "--dim", "3", "--method", "random", "--budget", "3", "--seeds", "2", "--seed", "1"],
         "not allowed with"),
        (["run", *TOY, "--problem", QUAD, "--dim", "3", "--method", "random", "--budget", "3", "--param", "oops"],
         "--param expects key=value"),
        (["run", *TOY, "--problem", QUAD, "--dim", "3", "--method", "random", "--budget", "3", "--param", "seed=3"],
         "--param seed=... is set by the runner"),
        (["run", *TOY, "--problem", QUAD, "--dim", "3", "--method", "random", "--budget", "3", "--param", "acq_budget=5"],
         "acq_budget"),
        (["run", *TOY, "--problem", QUAD, "--dim", "3", "--method", "random", "--budget", "3", "--workers", "0"], "--workers must be >= 1"),
        (["run", *TOY, "--problem", QUAD, "--dim", "3", "--method", "random", "--budget", "3", "--domain", "ball"], "invalid choice"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        ([], "the following arguments are required: COMMAND"),
        (["list", "things"], "invalid choice: 'things'"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, argv, match):
    code, out, err = _run(capsys, *argv, *(["--store", str(tmp_path / "x.db")] if argv[:1] == ["run"] else []))
    _assert_usage_error(code, err, match)
    assert not (tmp_path / "x.db").exists()  # nothing was run


def test_dask_missing_message(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "dask", None)  # as if dask were not installed
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    code, out, err = _run(capsys, "run", *TOY, "--problem", QUAD, "--dim", "3", "--method", "random", "--budget", "3",
                          "--store", str(tmp_path / "d.db"), "--dask", "tcp://127.0.0.1:1")
    _assert_usage_error(code, err, "pip install 'hdbo[dask]'")


def test_help_returns_zero(capsys):
    assert main(["--help"]) == 0
    assert "reproduce" in capsys.readouterr().out


def test_list_methods_and_problems(capsys):
    code, out, err = _run(capsys, "list", "methods")
    assert code == 0 and "random" in out.split()
    code, out, err = _run(capsys, "list", "problems")
    assert code == 0 and "branin" in out.split()
    code, out, err = _run(capsys, "list")
    assert code == 0 and "methods:" in out and "problems:" in out


def test_run_registry_problem(tmp_path, capsys):
    """The README quick start, with random search and a small budget."""
    db = tmp_path / "runs.db"
    code, out, err = _run(capsys, "run", "--problem", "branin", "--dim", "20", "--method", "random", "--budget", "6",
                          "--store", str(db), "--no-progress")
    assert code == 0, err
    assert "branin(dim=20)" in out
    with RunStore(db) as store:
        (run,) = store.list_runs()
        ev = store.load_evaluations(run.id)
    assert ev.X.shape == (6, 20) and (ev.regret >= 0).all()


def test_report_command(tmp_path, capsys):
    db = tmp_path / "runs.db"
    assert main(["run", *TOY, "--problem", QUAD, "--dim", "3", "--method", "random", "--seeds", "2", "--budget", "4", "--store", str(db),
                 "--no-progress"]) == 0
    out_md = tmp_path / "docs" / "report.md"
    code, out, err = _run(capsys, "report", "--store", str(db), "--experiment", "run", "--out", str(out_md))
    assert code == 0, err
    text = out_md.read_text()
    assert "| random | 2 | 4 |" in text
    assert len(list((out_md.parent / "figures" / "report").glob("report-*.png"))) == 1  # figures/<stem>/

    code, out, err = _run(capsys, "report", "--store", str(tmp_path / "missing.db"), "--out", str(out_md))
    _assert_usage_error(code, err, "does not exist")
    assert not (tmp_path / "missing.db").exists()
    code, out, err = _run(capsys, "report", "--store", str(db), "--experiment", "nope", "--out", str(out_md))
    _assert_usage_error(code, err, "no experiment 'nope' in")


SPEC = """
name = "toy-{n}"
description = "Toy spec {n}."
budget = 50
seeds = 5

[[problems]]
name = "toy-quadratic"
label = "Quad 3D"
params = {{ dim = 3 }}

[[methods]]
name = "random"
label = "RS"

[scale.quick]
seeds = 2
budget = 4

[[reference]]
problem = "Quad 3D"
method = "RS"
metric = "simple_regret"
value = 0.5
note = "made-up reference"
"""


def _specs(tmp_path: Path) -> Path:
    root = tmp_path / "specs"
    (root / "toy").mkdir(parents=True)
    for n in (1, 2):
        (root / "toy" / f"s{n}.toml").write_text(textwrap.dedent(SPEC.format(n=n)))
    return root


def test_reproduce_quick(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    root = _specs(tmp_path)
    code, out, err = _run(capsys, "reproduce", "toy", *TOY, "--scale", "quick", "--specs-dir", str(root), "--no-progress")
    assert code == 0, err
    db, report = tmp_path / "runs" / "toy.db", tmp_path / "docs" / "reproductions" / "toy.md"
    assert db.exists() and report.exists()
    with RunStore(db) as store:
        runs = store.list_runs(status="finished")
        assert len(runs) == 2 * 2 and {r.config.budget for r in runs} == {4}
        assert store.experiments() == ["toy-1", "toy-2"]
    text = report.read_text()
    assert "# Reproduction: toy (quick scale, complete (2 specs))" in text and "Toy spec 1." in text
    assert "| RS | simple regret S_T | 0.5 |" in text and "made-up reference" in text
    pngs = sorted((report.parent / "figures" / "toy").glob("toy-*.png"))  # figures/<spec set>/
    assert len(pngs) == 2 and not list(report.parent.glob("*.png"))
    assert all(f"](figures/toy/{png.name})" in text for png in pngs)


def test_reproduce_custom_paths_and_errors(tmp_path, capsys):
    root = _specs(tmp_path)
    db, rep = tmp_path / "s.db", tmp_path / "r" / "rep.md"
    code, out, err = _run(capsys, "reproduce", "toy", *TOY, "--scale", "quick", "--specs-dir", str(root), "--store",
                          str(db), "--report", str(rep), "--no-progress", "--workers", "2")
    assert code == 0, err
    assert db.exists() and rep.exists()
    # the folder is the spec set's name, the file names start with the report's stem
    assert len(list((rep.parent / "figures" / "toy").glob("rep-*.png"))) == 2

    code, out, err = _run(capsys, "reproduce", "nothing", "--specs-dir", str(root))
    _assert_usage_error(code, err, "no experiment spec 'nothing'")
    code, out, err = _run(capsys, "reproduce", "toy", *TOY, "--scale", "huge", "--specs-dir", str(root))
    _assert_usage_error(code, err, "invalid choice: 'huge'")
    (root / "bad.toml").write_text('name = "b"\nbudget = 3\nseeds = 1\nproblems = [{name = "x"}]\n'
                                   'methods = [{name = "no-such-method"}]\n')
    code, out, err = _run(capsys, "reproduce", "bad", "--specs-dir", str(root))
    _assert_usage_error(code, err, "method 'no-such-method' is not registered")
    (root / "broken.toml").write_text('name = "b"\nbudget = 3\nseeds = 1\n')
    code, out, err = _run(capsys, "reproduce", "broken", "--specs-dir", str(root))
    _assert_usage_error(code, err, "missing required key 'problems'")


def test_reproduce_subsets_seed_by_seed_and_report_only(tmp_path, capsys):
    """--only/--problem/--runs pick a subset, runs go seed by seed, --no-run only reports."""
    from hdbo.cli import _seed_major
    from hdbo.experiments.spec import load_spec

    root = _specs(tmp_path)
    db, rep = tmp_path / "s.db", tmp_path / "rep.md"
    base = ("reproduce", "toy", *TOY, "--specs-dir", str(root), "--store", str(db), "--report", str(rep), "--no-progress")
    code, out, err = _run(capsys, *base, "--scale", "full", "--only", "s2", "--runs", "2")
    assert code == 0, err
    with RunStore(db) as store:
        runs = store.list_runs(status="finished")
        assert store.experiments() == ["toy-2"]
        assert sorted(r.config.seed for r in runs) == [0, 1] and {r.config.budget for r in runs} == {50}
    assert "first 2 seed(s)" in rep.read_text()

    # report only: nothing new is run, the finished runs are reported
    rep.unlink()
    code, out, err = _run(capsys, *base, "--scale", "full", "--no-run")
    assert code == 0, err
    with RunStore(db) as store:
        assert len(store.list_runs()) == 2
    assert "| RS | 2 | 50 |" in rep.read_text()  # method, runs, T

    code, out, err = _run(capsys, *base, "--only", "nope*")
    _assert_usage_error(code, err, "--only nope* matches no spec")
    code, out, err = _run(capsys, *base, "--problem", "Quad 9D")
    _assert_usage_error(code, err, "--problem Quad 9D matches no problem")
    code, out, err = _run(capsys, *base, "--method", "peer:*")
    _assert_usage_error(code, err, "--method peer:* matches no method")
    # by label or by registered name: both select the one method, whose runs are all finished
    for pattern in ("RS", "rand*"):
        code, out, err = _run(capsys, *base, "--scale", "full", "--only", "s2", "--runs", "2", "--method", pattern)
        assert code == 0, err
        with RunStore(db) as store:
            assert len(store.list_runs()) == 2
    code, out, err = _run(capsys, *base, "--runs", "0")
    _assert_usage_error(code, err, "--runs must be >= 1")
    # --seed K: only that seed (seed 2 is not among the first two), into another store
    db2, rep2 = tmp_path / "s2.db", tmp_path / "rep2.md"
    code, out, err = _run(capsys, "reproduce", "toy", *TOY, "--specs-dir", str(root), "--store", str(db2), "--report",
                          str(rep2), "--no-progress", "--scale", "full", "--only", "s2", "--seed", "2")
    assert code == 0, err
    with RunStore(db2) as store:
        assert [r.config.seed for r in store.list_runs(status="finished")] == [2]
    assert "seed(s) 2" in rep2.read_text()
    code, out, err = _run(capsys, *base, "--scale", "full", "--seed", "99")
    _assert_usage_error(code, err, "--seed 99 matches no seed")
    code, out, err = _run(capsys, *base, "--seed", "1", "--runs", "1")
    _assert_usage_error(code, err, "--runs and --seed cannot be used together")
    code, out, err = _run(capsys, "reproduce", "toy", *TOY, "--specs-dir", str(root), "--store", str(tmp_path / "x.db"),
                          "--no-run")
    _assert_usage_error(code, err, "does not exist")

    # seed-major order: every config of seed 0 (of each spec) before any of seed 1
    configs = [c for p in sorted((root / "toy").glob("*.toml")) for c in load_spec(p).run_configs("quick")]
    ordered = _seed_major(configs, None)
    assert [c.seed for c in ordered] == [0, 0, 1, 1]
    assert [c.seed for c in _seed_major(configs, 1)] == [0, 0]


def test_failed_runs_give_exit_code_1(tmp_path, capsys, monkeypatch):
    """A run that crashes (here: the problem factory returns the wrong type) is reported, exit code 1."""
    from hdbo.experiments import runner

    real = runner.build_problem
    calls = {"n": 0}

    def build_problem_failing_after_validation(config):
        calls["n"] += 1
        if calls["n"] > 1:
            raise RuntimeError("cluster node lost")
        return real(config)

    monkeypatch.setattr(runner, "build_problem", build_problem_failing_after_validation)
    code, out, err = _run(capsys, "run", *TOY, "--problem", QUAD, "--dim", "3", "--method", "random", "--budget", "3",
                          "--store", str(tmp_path / "f.db"), "--no-progress")
    assert code == 1
    assert "1 failed" in err and "cluster node lost" in err


def test_parse_key_values():
    got = parse_key_values(['a=1', 'k="se"', "name=se", "flag=true", "xs=[1, 2.5]", "empty="], option="--param")
    assert got == {"a": 1, "k": "se", "name": "se", "flag": True, "xs": [1, 2.5], "empty": ""}
    with pytest.raises(UsageError, match="key=value"):
        parse_key_values(["1a=3"], option="--param")


def test_interrupted_run_exits_130_and_the_same_command_resumes_exactly(tmp_path, capsys, monkeypatch):
    """Ctrl-C in the second run, after its initial design: exit 130; rerunning finishes it exactly."""
    import _hdbo_test_problems as toy

    argv = ["run", *TOY, "--problem", QUAD, "--dim", "2", "--noise-std", "0.01", "--method", "gp-ucb",
            "--param", "n_init=4", "--param", "refit_every=2", "--param", "acq_budget=100",
            "--seeds", "2", "--budget", "10", "--no-progress"]
    code, out, err = _run(capsys, *argv, "--store", str(tmp_path / "straight.db"))
    assert code == 0, err

    db = tmp_path / "interrupted.db"
    monkeypatch.setitem(toy.TRIGGER, "countdown", 17)  # 10 calls of seed 0, then the 7th of seed 1
    code, out, err = _run(capsys, *argv, "--store", str(db))
    assert code == 130
    assert err.strip().splitlines()[-1] == "hdbo: interrupted; run the same command again to resume"
    with RunStore(db) as store:
        first, second = store.list_runs()
        assert first.status == "finished"
        assert second.status == "failed" and second.n_evaluations == 6 and "KeyboardInterrupt" in second.error
        assert second.method_state["internal"]["gp"] is not None  # past the initial design

    code, out, err = _run(capsys, *argv, "--store", str(db))
    assert code == 0, err
    assert "1 finished now, 1 already finished, 0 failed" in err
    with RunStore(db) as got, RunStore(tmp_path / "straight.db") as ref:
        for a, b in zip(got.list_runs(), ref.list_runs(), strict=True):
            assert a.config == b.config and a.status == b.status == "finished"
            ea, eb = got.load_evaluations(a.id), ref.load_evaluations(b.id)
            assert (ea.X == eb.X).all() and (ea.y == eb.y).all()


def test_run_owned_by_a_live_process_is_reported_not_failed(tmp_path, capsys):
    from hdbo.experiments.store import RunConfig, RunOwner

    db = tmp_path / "busy.db"
    cfg = RunConfig(experiment="run", problem=QUAD, method="random", seed=0, budget=4,
                    problem_params={"dim": 3})
    with RunStore(db) as store:
        run = store.get_or_create_run(cfg)
        assert store.claim_run(run.id, owner=RunOwner("cluster-node-7", 4242)).acquired
    code, out, err = _run(capsys, "run", *TOY, "--problem", QUAD, "--dim", "3", "--method", "random", "--seeds", "2",
                          "--budget", "4", "--store", str(db), "--no-progress")
    assert code == 0, err
    assert "1 finished now, 0 already finished, 0 failed, 1 running elsewhere" in err
    line = next(line for line in err.splitlines() if "running elsewhere:" in line)
    assert line.startswith("  running elsewhere: toy-quadratic(dim=3) / random / seed 0 (process "
                           "4242 on cluster-node-7, last heartbeat ")
    assert line.endswith(" ago; 0 of 4 evaluations stored)")
    with RunStore(db) as store:
        assert store.get_run(run.id).status == "running" and store.get_run(run.id).error is None


def test_progress_lines_in_a_log(tmp_path, capsys):
    """stderr captured (not a TTY): a few complete lines, counted in evaluations."""
    code, out, err = _run(capsys, "run", *TOY, "--problem", QUAD, "--dim", "3", "--method", "random", "--seeds", "2", "--budget", "5",
                          "--store", str(tmp_path / "p.db"))
    assert code == 0, err
    progress = [line for line in err.splitlines() if line.startswith("hdbo: ")]
    assert "\r" not in err and 2 <= len(progress) <= 12
    assert progress[-1].startswith("hdbo: 10/10 eval (100%)")


# ---------------------------------------------------------------------------- names, not code (issue 17)
def test_run_refuses_module_attr_problems_before_anything_runs(tmp_path, capsys):
    pwned = tmp_path / "pwned"
    code, out, err = _run(capsys, "run", "--problem", "os:system", "--problem-param", f'command="touch {pwned}"',
                          "--method", "random", "--budget", "3", "--store", str(tmp_path / "x.db"))
    _assert_usage_error(code, err, "--problem: problem 'os:system' looks like 'module:attr'")
    assert "--plugin MODULE" in err
    assert not pwned.exists() and not (tmp_path / "x.db").exists()


def test_reproduce_refuses_a_spec_naming_module_attr_and_touches_nothing(tmp_path, capsys):
    victim = tmp_path / "precious.log"
    victim.write_text("my data\n")
    before = (victim.read_bytes(), victim.stat().st_mtime_ns)
    root = tmp_path / "specs"
    root.mkdir()
    (root / "evil.toml").write_text(textwrap.dedent(f"""
        name = "evil"
        budget = 3
        seeds = 1
        [[problems]]
        name = "logging:basicConfig"
        params = {{ filename = {str(victim)!r}, filemode = "w" }}
        [[methods]]
        name = "random"
    """))
    code, out, err = _run(capsys, "reproduce", "evil", "--specs-dir", str(root), "--store", str(tmp_path / "e.db"),
                          "--report", str(tmp_path / "e.md"), "--no-progress")
    _assert_usage_error(code, err, "problem 'logging:basicConfig' looks like 'module:attr'")
    assert (victim.read_bytes(), victim.stat().st_mtime_ns) == before
    assert not (tmp_path / "e.db").exists() and not (tmp_path / "e.md").exists()


PLUGIN = '''
import numpy as np
from hdbo.problems import Problem, register_problem
from hdbo.space import Box


def bowl(*, dim, seed=0):
    return Problem(lambda X: -np.sum((X - 0.25) ** 2, axis=1), Box.unit(dim), name="bowl", optimum_value=0.0)


register_problem("{name}", bowl)
'''


@pytest.fixture
def plugin(write_plugin):
    """A plugin module in tmp_path registering the problem ``<module>-bowl``; registries restored after."""
    return write_plugin("hdbo_cli_plugin", PLUGIN.replace('"{name}"', '"{name}-bowl"'))


def test_plugin_registers_a_problem_that_runs_with_two_workers(tmp_path, capsys, plugin):
    problem = f"{plugin}-bowl"
    argv = ["run", "--problem", problem, "--dim", "2", "--method", "random", "--seeds", "3", "--budget", "4",
            "--store", str(tmp_path / "p.db"), "--workers", "2", "--no-progress"]
    code, out, err = _run(capsys, *argv)
    _assert_usage_error(code, err, f"unknown problem '{problem}'")
    assert "--plugin MODULE" in err
    code, out, err = _run(capsys, *argv[:6], "my-method", *argv[7:])
    _assert_usage_error(code, err, "unknown method 'my-method'; available methods: ")
    assert "hdbo.methods.register" in err and "--plugin MODULE" in err
    code, out, err = _run(capsys, "list", "problems", "--plugin", plugin)
    assert code == 0 and problem in out.split()
    code, out, err = _run(capsys, *argv, "--plugin", plugin)
    assert code == 0, err
    with RunStore(tmp_path / "p.db") as store:
        runs = store.list_runs(status="finished")
        assert len(runs) == 3 and {r.n_evaluations for r in runs} == {4}
        assert {r.config.problem for r in runs} == {problem}


def test_plugin_in_a_spec_with_two_workers(tmp_path, capsys, plugin):
    root = tmp_path / "specs"
    root.mkdir()
    (root / "mine.toml").write_text(f'name = "mine"\nbudget = 3\nseeds = 2\n'
                                    f'[[problems]]\nname = "{plugin}-bowl"\nparams = {{ dim = 2 }}\n'
                                    f'[[methods]]\nname = "random"\n')
    base = ("reproduce", "mine", "--specs-dir", str(root), "--store", str(tmp_path / "m.db"),
            "--report", str(tmp_path / "m.md"), "--no-progress", "--workers", "2")
    code, out, err = _run(capsys, *base)
    _assert_usage_error(code, err, f"problem '{plugin}-bowl' is not registered")
    code, out, err = _run(capsys, *base, "--plugin", plugin)
    assert code == 0, err
    with RunStore(tmp_path / "m.db") as store:
        assert len(store.list_runs(status="finished")) == 2


@pytest.mark.parametrize(
    "value, match",
    [("hdbo_no_such_plugin", "--plugin: plugin module 'hdbo_no_such_plugin' cannot be imported"),
     ("./mine.py", "--plugin: plugin must be an absolute module name"),
     ("os:system", "--plugin: plugin must be an absolute module name")],
)
def test_bad_plugin_is_one_line(tmp_path, capsys, value, match):
    code, out, err = _run(capsys, "run", "--plugin", value, "--problem", "branin", "--method", "random",
                          "--budget", "3", "--store", str(tmp_path / "x.db"))
    _assert_usage_error(code, err, match)
    assert not (tmp_path / "x.db").exists()


# ---------------------------------------------------------------------------- file problems: one line, exit 2 (issue 17)
def _assert_one_line_error(code, err, match):
    """Exit code 2 and exactly one line on stderr (progress or tracebacks would add lines)."""
    assert code == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("hdbo: error: "), err
    assert match in err, err


def _state(path: Path):
    """Bytes and mtime of a file, the listing of a folder, or None: what must not change."""
    if path.is_dir():
        return sorted(p.name for p in path.iterdir())
    return (path.read_bytes(), path.stat().st_mtime_ns) if path.exists() else None


def _bad_store(tmp_path: Path, case: str):
    sys.path.insert(0, str(TOY_DIR))
    try:
        from test_store import bad_store
    finally:
        sys.path.remove(str(TOY_DIR))
    return bad_store(tmp_path, case)


def _store_argv(command: str, tmp_path: Path, store: Path) -> list[str]:
    if command == "run":
        return ["run", *TOY, "--problem", QUAD, "--dim", "3", "--method", "random", "--budget", "3",
                "--store", str(store), "--no-progress"]
    if command == "reproduce":
        root = _specs(tmp_path)
        return ["reproduce", "toy", *TOY, "--specs-dir", str(root), "--store", str(store),
                "--report", str(tmp_path / "out" / "r.md"), "--no-progress"]
    return ["report", "--store", str(store), "--out", str(tmp_path / "out" / "r.md")]


STORE_CASES = ["a folder", "under a file", "text file", "random bytes", "foreign runs table", "foreign runs columns",
               "newer schema"]


@pytest.mark.parametrize("case", STORE_CASES)
@pytest.mark.parametrize("command", ["run", "reproduce", "report"])
def test_unusable_store_is_one_line_and_left_untouched(tmp_path, capsys, command, case):
    path, watched, match = _bad_store(tmp_path, case)
    if command == "report" and case == "under a file":
        match = "does not exist"  # report never creates a store
    argv = _store_argv(command, tmp_path, path)
    before = _state(watched)
    code, out, err = _run(capsys, *argv)
    _assert_one_line_error(code, err, match)
    assert _state(watched) == before
    assert not (tmp_path / "out").exists() and not Path(str(path) + "-wal").exists()


def _unwritable_folder(tmp_path: Path) -> Path:
    sys.path.insert(0, str(TOY_DIR))
    try:
        from test_store import unwritable_folder
    finally:
        sys.path.remove(str(TOY_DIR))
    return unwritable_folder(tmp_path)


@pytest.mark.parametrize("command", ["run", "reproduce"])
def test_store_in_an_unwritable_folder_is_one_line(tmp_path, capsys, command):
    folder = _unwritable_folder(tmp_path)
    try:
        before = _state(folder) if folder != Path("/proc") else None
        code, out, err = _run(capsys, *_store_argv(command, tmp_path, folder / "runs" / "s.db"))
        _assert_one_line_error(code, err, "cannot be created")
        assert not (folder / "runs").exists() and not (tmp_path / "out").exists()
        if before is not None:
            assert _state(folder) == before
    finally:
        if folder != Path("/proc"):
            folder.chmod(0o700)


def _store_with_runs(tmp_path: Path) -> Path:
    db = tmp_path / "good.db"
    assert main(["run", *TOY, "--problem", QUAD, "--dim", "3", "--method", "random", "--budget", "3",
                 "--store", str(db), "--no-progress"]) == 0
    time.sleep(0.01)
    return db


@pytest.mark.parametrize("case", ["a folder", "under a file", "unwritable folder"])
def test_report_out_that_cannot_be_written_is_one_line(tmp_path, capsys, case):
    db = _store_with_runs(tmp_path)
    capsys.readouterr()
    folder = None
    if case == "a folder":
        out = tmp_path / "docs"
        out.mkdir()
        match = "is a folder"
    elif case == "under a file":
        (tmp_path / "docs").write_text("a file")
        out = tmp_path / "docs" / "reports" / "r.md"
        match = "is a file, not a folder"
    else:
        folder = _unwritable_folder(tmp_path)
        out = folder / "r.md"
        match = "cannot be written"
    watched = [db, tmp_path / "docs"] + ([folder] if folder is not None and folder != Path("/proc") else [])
    before = [_state(p) for p in watched]
    try:
        code, _, err = _run(capsys, "report", "--store", str(db), "--out", str(out))
        _assert_one_line_error(code, err, f"--out '{out}' ")
        assert match in err
        assert [_state(p) for p in watched] == before and not out.is_file()
        # reproduce checks its --report the same way, before running anything
        code, _, err = _run(capsys, "reproduce", "toy", *TOY, "--specs-dir", str(_specs(tmp_path)), "--store",
                            str(tmp_path / "new.db"), "--report", str(out), "--no-progress")
        _assert_one_line_error(code, err, "--report")
        assert not (tmp_path / "new.db").exists() and [_state(p) for p in watched] == before
    finally:
        if folder is not None and folder != Path("/proc"):
            folder.chmod(0o700)


@pytest.mark.parametrize(
    "option, value, match",
    [("--budget", "99999999999999999999", "argument --budget: must be at most 9223372036854775807 (2**63 - 1"),
     ("--budget", "9223372036854775808", "argument --budget: must be at most 9223372036854775807"),
     ("--seed", "99999999999999999999", "argument --seed: must be at most 9223372036854775807"),
     ("--dim", "99999999999999999999", "argument --dim: must be at most 9223372036854775807"),
     ("--seeds", "10000000000", "argument --seeds: must be at most 1000000"),
     pytest.param("--budget", "1" * 5000, "argument --budget: invalid int value", id="5000-digit budget")],
)
def test_integers_beyond_the_store_are_refused_at_parse_time(tmp_path, capsys, option, value, match):
    argv = ["run", *TOY, "--problem", QUAD, "--method", "random", "--store", str(tmp_path / "x.db"), "--no-progress"]
    argv += [] if option == "--budget" else ["--budget", "3"]
    code, _, err = _run(capsys, *argv, option, value)
    _assert_one_line_error(code, err, match)
    assert not (tmp_path / "x.db").exists()


def test_a_budget_at_the_limit_is_refused_for_memory_not_by_sqlite(tmp_path, capsys):
    code, _, err = _run(capsys, "run", *TOY, "--problem", QUAD, "--dim", "3", "--method", "random",
                        "--budget", str(2**63 - 1), "--store", str(tmp_path / "x.db"), "--no-progress")
    _assert_one_line_error(code, err, "not enough memory: a run of random on toy-quadratic with dim=3 and budget="
                                      "9223372036854775807 needs at least")
    assert not (tmp_path / "x.db").exists()


@pytest.mark.parametrize("method", ["random", "gp-ucb"])
def test_huge_dim_is_refused_with_an_estimate_before_allocating(tmp_path, capsys, monkeypatch, method):
    import tracemalloc

    from hdbo.experiments import resources

    monkeypatch.setattr(resources, "available_memory", lambda: 16 * 2**30)  # a 16 GB machine
    tracemalloc.start()
    try:
        code, _, err = _run(capsys, "run", "--problem", "branin", "--dim", "1000000000", "--method", method,
                            "--budget", "60", "--store", str(tmp_path / "x.db"), "--no-progress")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    _assert_one_line_error(code, err, f"not enough memory: a run of {method} on branin with dim=1000000000 and "
                                      "budget=60 needs at least")
    assert "box 14.9 GB, history 447.0 GB" in err and "but 16.0 GB is available" in err
    assert ("acquisition 72.8 TB" in err) == (method == "gp-ucb")
    assert peak < 50 * 2**20  # refused before the 16 GB box was allocated
    assert not (tmp_path / "x.db").exists()
    # the same run in 1000 dimensions fits and runs
    code, _, err = _run(capsys, "run", "--problem", "branin", "--dim", "1000", "--method", "random",
                        "--budget", "5", "--store", str(tmp_path / "x.db"), "--no-progress")
    assert code == 0, err


def test_workers_multiply_the_memory_estimate(tmp_path, capsys, monkeypatch):
    from hdbo.experiments import resources

    monkeypatch.setattr(resources, "available_memory", lambda: 2 * 2**30)
    argv = ["run", "--problem", "ackley", "--dim", "1000000", "--method", "random", "--budget", "100",
            "--seeds", "4", "--store", str(tmp_path / "x.db"), "--no-progress"]  # 763 MB per run
    code, _, err = _run(capsys, *argv, "--workers", "4")
    _assert_one_line_error(code, err, "4 runs at once x that plus 50.0 MB per process is 3.2 GB, but 2.0 GB")
    assert not (tmp_path / "x.db").exists()


def test_reproduce_checks_memory_before_running(tmp_path, capsys, monkeypatch):
    from hdbo.experiments import resources

    monkeypatch.setattr(resources, "available_memory", lambda: 16 * 2**30)
    root = tmp_path / "specs"
    root.mkdir()
    (root / "big.toml").write_text('name = "big"\nbudget = 60\nseeds = 1\n[[problems]]\nname = "branin"\n'
                                   'params = { dim = 1000000000 }\n[[methods]]\nname = "random"\n')
    code, _, err = _run(capsys, "reproduce", "big", "--specs-dir", str(root), "--store", str(tmp_path / "b.db"),
                        "--report", str(tmp_path / "b.md"), "--no-progress")
    _assert_one_line_error(code, err, "not enough memory: a run of random on branin with dim=1000000000")
    assert not (tmp_path / "b.db").exists()


@pytest.mark.parametrize("body", ['raise RuntimeError("boom at import")', "def broken(:\n    pass",
                                  "import sys\nsys.exit(0)"])
def test_plugin_that_fails_at_import_is_one_line(tmp_path, capsys, monkeypatch, body):
    """A plugin whose own code raises (or exits) is reported in one line, exit 2, nothing run."""
    name = f"hdbo_bad_plugin_{abs(hash(body)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(body + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        for argv in (["list", "--plugin", name],
                     ["run", "--problem", "branin", "--dim", "2", "--method", "random", "--budget", "2",
                      "--store", str(tmp_path / "r.db"), "--no-progress", "--plugin", name]):
            code, out, err = _run(capsys, *argv)
            _assert_usage_error(code, err, f"plugin module '{name}' failed while being imported")
        assert not (tmp_path / "r.db").exists()
    finally:
        sys.modules.pop(name, None)
