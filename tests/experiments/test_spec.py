"""TOML experiment specs: parsing, scales, validation errors, lookup of spec files."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from hdbo.experiments.spec import (
    Claim,
    SpecError,
    available_spec_sets,
    default_specs_dir,
    find_specs,
    load_spec,
    parse_spec,
    tomllib,
    validate_names,
)

REPO_SPECS = Path(__file__).resolve().parents[2] / "experiments"

GOOD = """
name = "demo"
description = "a demo"
budget = 20
seeds = 3

[[problems]]
name = "quad"
label = "Q3"
params = { dim = 3 }

[[problems]]
name = "quad"
params = { dim = 5 }

[[methods]]
name = "random"
label = "R"

[[methods]]
name = "gp-ucb"
params = { acq_budget = 500, kernel = "se" }

[scale.quick]
seeds = [4, 7]
budget = 5
[scale.quick.method_params.gp-ucb]
acq_budget = 50
[scale.quick.problem_params.Q3]
noise_std = 0.1

[scale.full]
budget = 100

[[reference]]
problem = "Q3"
method = "gp-ucb"
metric = "simple_regret"
value = 0.25
budget = 100
at = 90
note = "Fig. 1"
"""


def _write(tmp_path: Path, text: str, name: str = "spec.toml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_parse_good_spec(tmp_path):
    spec = load_spec(_write(tmp_path, GOOD))
    assert spec.name == "demo" and spec.description == "a demo"
    assert spec.seeds == [0, 1, 2] and spec.budget == 20
    assert [p.label for p in spec.problems] == ["Q3", "quad(dim=5)"]
    assert [m.label for m in spec.methods] == ["R", "gp-ucb"]
    assert spec.methods[1].params == {"acq_budget": 500, "kernel": "se"}
    assert spec.references[0].value == 0.25 and spec.references[0].budget == 100
    assert spec.references[0].at == 90
    configs = spec.run_configs()
    assert len(configs) == 2 * 2 * 3
    assert {c.experiment for c in configs} == {"demo"}
    assert {(c.problem_label, c.label) for c in configs} == {
        ("Q3", "R"), ("Q3", "gp-ucb"), ("quad(dim=5)", "R"), ("quad(dim=5)", "gp-ucb")
    }


def test_scales_override(tmp_path):
    spec = load_spec(_write(tmp_path, GOOD))
    quick = spec.at_scale("quick")
    assert quick.seeds == [4, 7] and quick.budget == 5 and quick.scale == "quick"
    assert quick.methods[1].params == {"acq_budget": 50, "kernel": "se"}
    assert quick.methods[0].params == {}
    assert quick.problems[0].params == {"dim": 3, "noise_std": 0.1}
    assert quick.problems[1].params == {"dim": 5}
    full = spec.at_scale("full")
    assert full.seeds == [0, 1, 2] and full.budget == 100
    assert spec.methods[1].params["acq_budget"] == 500  # the base spec is unchanged
    configs = spec.run_configs("quick")
    assert {c.seed for c in configs} == {4, 7} and {c.budget for c in configs} == {5}
    with pytest.raises(ValueError, match="scale must be one of"):
        spec.at_scale("huge")


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda s: s.replace('budget = 20\n', ''), r"top level: missing required key 'budget'"),
        (lambda s: s.replace('seeds = 3', 'seeds = 3\nrepeats = 2'), r"unknown key 'repeats' \(valid keys: "),
        (lambda s: s.replace('label = "R"', 'label = "R"\nparms = {}'), r"methods\[0\]: unknown key 'parms'"),
        (lambda s: s.replace('label = "R"', 'label = "gp-ucb"'), r"duplicate method label 'gp-ucb'"),
        (lambda s: s.replace('budget = 20', 'budget = 0'), r"budget: expected an integer > 0, got 0"),
        (lambda s: s.replace('budget = 20', 'budget = "20"'), r"budget: expected an integer > 0"),
        (lambda s: s.replace('seeds = 3', 'seeds = [1, 1]'), r"seeds must be distinct"),
        (lambda s: s.replace('seeds = 3', 'seeds = [-1]'), r"seeds must be non-negative integers"),
        (lambda s: s.replace('[scale.full]', '[scale.huge]'), r"unknown scale 'huge' \(valid scales: quick, full\)"),
        (lambda s: s.replace('method_params.gp-ucb', 'method_params.GP'), r"no method labelled 'GP'"),
        (lambda s: s.replace('problem_params.Q3', 'problem_params.Q9'), r"no problem labelled 'Q9'"),
        (lambda s: s.replace('metric = "simple_regret"', 'metric = "regret"'), r"unknown metric 'regret'"),
        (lambda s: s.replace('problem = "Q3"', 'problem = "Q4"'), r"reference\[0\].problem: no problem labelled"),
        (lambda s: s.replace('value = 0.25', 'value = "small"'), r"reference\[0\].value: expected a number"),
        (lambda s: s.replace('name = "random"', 'name = "random"\nparams = { seed = 3 }'), r"'seed' is set by"),
        (lambda s: s.replace('acq_budget = 50', 'budget = 50'), r"'budget' is set by the runner"),
        (lambda s: s.replace('name = "demo"', 'name = ""'), r"name: expected a non-empty string"),
        (lambda s: s.split("[[methods]]")[0], r"missing required key 'methods'"),
    ],
)
def test_validation_errors(tmp_path, edit, match):
    path = _write(tmp_path, edit(GOOD))
    with pytest.raises(SpecError, match=match) as info:
        load_spec(path)
    assert str(path) in str(info.value)


CLAIMS = GOOD + """
[[claim]]
text = "gp-ucb beats R on both problems"
kind = "better"
problems = ["Q3", "quad(dim=5)"]
metric = "simple_regret"
method = "gp-ucb"
than = ["R"]
source = "Sec. 5"

[[claim]]
text = "R is best on Q3"
kind = "best"
problems = ["Q3"]
metric = "best_f"
method = "R"
"""


def test_parse_claims(tmp_path):
    spec = load_spec(_write(tmp_path, CLAIMS))
    assert spec.claims == [
        Claim(
            text="gp-ucb beats R on both problems", kind="better", problems=("Q3", "quad(dim=5)"),
            metric="simple_regret", method="gp-ucb", than=("R",), source="Sec. 5",
        ),
        # "best" without "than": compared with every other method of the spec (that has runs)
        Claim(text="R is best on Q3", kind="best", problems=("Q3",), metric="best_f", method="R", others=("gp-ucb",)),
    ]
    assert spec.at_scale("quick").claims == spec.claims  # scales do not touch claims
    assert load_spec(_write(tmp_path, GOOD)).claims == []
    welch = load_spec(_write(tmp_path, CLAIMS.replace('source = "Sec. 5"', 'source = "Sec. 5"\ntest = "welch"')))
    assert welch.claims[0].test == "welch" and spec.claims[0].test == "2se"
    close = load_spec(_write(tmp_path, CLAIMS.replace('kind = "better"', 'kind = "close"\nwithin = 0.25')))
    assert (close.claims[0].kind, close.claims[0].within, close.claims[0].than) == ("close", 0.25, ("R",))
    assert spec.claims[0].within is None
    best_than = load_spec(_write(tmp_path, CLAIMS.replace('method = "R"', 'method = "R"\nthan = ["gp-ucb"]')))
    assert best_than.claims[1].than == ("gp-ucb",) and best_than.claims[1].others == ()


C0, C1 = r"claim\[0\]", r"claim\[1\]"  # the "better" claim and the "best" claim of CLAIMS


@pytest.mark.parametrize(
    "old, new, match",
    [
        ('source = "Sec. 5"', 'sauce = "Sec. 5"', C0 + r": unknown key 'sauce' \(valid keys: "),
        ('text = "R is best on Q3"\n', "", C1 + r": missing required key 'text'"),
        ('text = "R is best on Q3"', 'text = " "', C1 + r".text: expected a non-empty string"),
        ('kind = "best"', 'kind = "worst"', C1 + r".kind: unknown kind 'worst' \(valid: best, better, close, trend\)"),
        ('metric = "best_f"', 'metric = "regret"', C1 + r".metric: unknown metric 'regret' \(valid: simple_regret, "),
        ('problems = ["Q3"]', 'problems = ["Q9"]', C1 + r".problems: no problem labelled 'Q9' \(labels: Q3, quad"),
        ('problems = ["Q3"]', 'problems = "Q3"', C1 + r".problems: expected a non-empty array of problem labels"),
        ('problems = ["Q3"]', "problems = []", C1 + r".problems: expected a non-empty array"),
        ('problems = ["Q3"]', 'problems = ["Q3", "Q3"]', C1 + r".problems: problem labels must be distinct"),
        ('problems = ["Q3"]', "problems = [3]", C1 + r".problems: no problem labelled 3"),
        ('method = "R"', 'method = "RS"', C1 + r".method: no method labelled 'RS' \(labels: R, gp-ucb\)"),
        ('than = ["R"]', 'than = ["RS"]', C0 + r".than: no method labelled 'RS'"),
        ('than = ["R"]', "than = []", C0 + r".than: expected a non-empty array of method labels"),
        ('than = ["R"]', 'than = "R"', C0 + r".than: expected a non-empty array"),
        ('than = ["R"]\n', "", C0 + r": kind = \"better\" needs 'than'"),
        ('than = ["R"]', 'than = ["R", "gp-ucb"]', C0 + r".than: lists the claim's own method 'gp-ucb'"),
        ('method = "R"', 'method = "R"\nthan = ["R"]', C1 + r".than: lists the claim's own method 'R'"),
        ('source = "Sec. 5"', "source = 5", C0 + r".source: expected a non-empty string"),
        ('source = "Sec. 5"', 'source = "Sec. 5"\ntest = "anova"', C0 + r".test: unknown test 'anova' \(valid: 2se, welch\)"),
        ('kind = "better"', 'kind = "close"', C0 + r": kind = \"close\" needs 'within', the tolerance"),
        ('kind = "better"', 'kind = "close"\nwithin = -0.1', C0 + r".within: expected a finite number >= 0, got -0.1"),
        ('kind = "better"', 'kind = "close"\nwithin = "a bit"', C0 + r".within: expected a finite number >= 0"),
        ('kind = "better"', 'kind = "close"\nwithin = nan', C0 + r".within: expected a finite number >= 0"),
        ('kind = "better"', 'kind = "better"\nwithin = 0.1', C0 + r".within: only kind = \"close\" takes a tolerance"),
        ('kind = "best"', 'kind = "close"\nwithin = 0.1', C1 + r": kind = \"close\" needs 'than'"),
    ],
)
def test_claim_validation_errors(tmp_path, old, new, match):
    assert old in CLAIMS
    path = _write(tmp_path, CLAIMS.replace(old, new))
    with pytest.raises(SpecError, match=match) as info:
        load_spec(path)
    assert str(path) in str(info.value)


def test_claim_not_an_array_of_tables():
    base = {"name": "x", "budget": 1, "seeds": 1, "problems": [{"name": "quad"}], "methods": [{"name": "random"}]}
    with pytest.raises(SpecError, match=r"<spec>: claim: expected \[\[claim\]\] entries"):
        parse_spec({**base, "claim": {"text": "a"}})
    with pytest.raises(SpecError, match=r"claim\[0\]: expected a table, got a string"):
        parse_spec({**base, "claim": ["R is best"]})


def test_invalid_toml_and_non_table(tmp_path):
    with pytest.raises(SpecError, match="invalid TOML"):
        load_spec(_write(tmp_path, "name = = 1"))
    with pytest.raises(SpecError, match=r"problems: expected at least one"):
        parse_spec({"name": "x", "budget": 1, "seeds": 1, "problems": [], "methods": [{"name": "random"}]})
    with pytest.raises(SpecError, match=r"problems\[0\]: expected a table, got an array"):
        parse_spec({"name": "x", "budget": 1, "seeds": 1, "problems": [[1]], "methods": [{"name": "random"}]})


def test_validate_names(tmp_path):
    spec = load_spec(_write(tmp_path, GOOD.replace('name = "gp-ucb"', 'name = "no-such-method"\nlabel = "gp-ucb"')))
    with pytest.raises(SpecError, match=r"method 'no-such-method' is not registered \(available methods: .*random"):
        validate_names(spec)


def _probe_module(tmp_path: Path, monkeypatch, name: str) -> Path:
    """A module on sys.path that leaves a marker file when it is imported (it must not be)."""
    marker = tmp_path / f"{name}.imported"
    (tmp_path / f"{name}.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('imported')\n"
        "def factory(**kwargs):\n    Path(__file__).with_suffix('.called').write_text('called')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return marker


def test_spec_naming_module_attr_is_refused_at_load_without_running_anything(tmp_path, monkeypatch):
    """A shared spec is data: "module:attr" names are refused when read, nothing is imported or called."""
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    before = (victim.read_bytes(), victim.stat().st_mtime_ns)
    spec = GOOD.replace('name = "quad"\nlabel = "Q3"\nparams = { dim = 3 }',
                        f'name = "logging:basicConfig"\nlabel = "Q3"\n'
                        f'params = {{ filename = {str(victim)!r}, filemode = "w" }}')
    assert "logging:basicConfig" in spec
    path = _write(tmp_path, spec)
    with pytest.raises(SpecError, match=r"problems\[0\]\.name: problem 'logging:basicConfig' looks like "
                                        r"'module:attr'.*register_problem.*--plugin MODULE") as info:
        load_spec(path)
    assert str(path) in str(info.value)
    assert (victim.read_bytes(), victim.stat().st_mtime_ns) == before

    marker = _probe_module(tmp_path, monkeypatch, "hdbo_probe_spec_mod")
    for old, new in [('name = "quad"\nlabel = "Q3"', 'name = "hdbo_probe_spec_mod:factory"\nlabel = "Q3"'),
                     ('name = "random"', 'name = "hdbo_probe_spec_mod:factory"')]:
        with pytest.raises(SpecError, match="looks like 'module:attr'"):
            load_spec(_write(tmp_path, GOOD.replace(old, new)))
    assert not marker.exists() and not marker.with_suffix(".called").exists()
    assert "hdbo_probe_spec_mod" not in sys.modules


def test_validate_names_refuses_unregistered_problems_and_says_how_to_register(tmp_path):
    spec = load_spec(_write(tmp_path, GOOD.replace('name = "quad"\nlabel = "Q3"', 'name = "my-wave"\nlabel = "Q3"')))
    with pytest.raises(SpecError, match=r"problem 'my-wave' is not registered \(available problems: .*branin.*"
                                        r"register_problem.*--plugin MODULE"):
        validate_names(spec)


def test_find_specs_folder_and_file(tmp_path):
    (tmp_path / "paper").mkdir()
    _write(tmp_path / "paper", GOOD, "b.toml")
    _write(tmp_path / "paper", GOOD, "a.toml")
    _write(tmp_path, GOOD, "single.toml")
    assert [p.name for p in find_specs("paper", tmp_path)] == ["a.toml", "b.toml"]
    assert [p.name for p in find_specs("single", tmp_path)] == ["single.toml"]
    assert available_spec_sets(tmp_path) == ["paper", "single"]
    with pytest.raises(ValueError, match=r"no experiment spec 'nope' in .*available: paper, single"):
        find_specs("nope", tmp_path)
    with pytest.raises(ValueError, match="plain name"):
        find_specs("../paper", tmp_path)


def test_default_specs_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert default_specs_dir().resolve() == REPO_SPECS  # no ./experiments here: the repository's
    (tmp_path / "experiments").mkdir()
    assert default_specs_dir() == Path("experiments")


def test_example_spec():
    paths = find_specs("example", REPO_SPECS)
    assert [p.name for p in paths] == ["branin20.toml"]
    spec = load_spec(paths[0])
    assert [m.name for m in spec.methods] == ["random", "gp-ucb", "gp-ei"]
    assert spec.problems[0].name == "branin" and spec.problems[0].params == {"dim": 20}
    quick, full = spec.at_scale("quick"), spec.at_scale("full")
    assert (quick.seeds, quick.budget) == ([0, 1], 30)
    assert (full.seeds, full.budget) == (list(range(10)), 100)


def test_readme_format_example_is_a_valid_spec():
    text = (REPO_SPECS / "README.md").read_text()
    block = text.split("```toml\n", 1)[1].split("```", 1)[0]
    spec = parse_spec(tomllib.loads(block), source="README.md")
    quick = spec.at_scale("quick")
    assert quick.methods[0].params == {"acq_budget": 100}
    assert quick.problems[0].params["noise_std"] == 0.01
    assert spec.references[0].metric == "simple_regret"
    assert [(c.kind, c.method, c.than) for c in spec.claims] == [("better", "GP-UCB", ("random",))]


def test_module_docstring_format_example_is_a_valid_spec():
    import hdbo.experiments.spec as module

    block = textwrap.dedent(module.__doc__.split(".. code-block:: toml\n", 1)[1].split("\nUnknown keys", 1)[0])
    block = block.split("\nA claim is checked", 1)[0]
    spec = parse_spec(tomllib.loads(block), source="spec.py")
    assert spec.claims[0].than == ("random",) and spec.claims[0].problems == ("Branin D=20",)


def test_highdim_specs_use_report_instances_only():
    # The highdim suite's runs use problem instances 1-5 (run seed = instance); instance 0 is
    # for tuning and must never appear, at any scale.
    paths = find_specs("highdim", REPO_SPECS)
    assert [p.name for p in paths] == ["b100_embedded.toml", "b100_real.toml", "b100_synthetic.toml",
                                       "b300.toml", "b300_gp_peers.toml", "b300_optuna_gp.toml"]
    problems_seen, budgets = set(), set()
    for path in paths:
        spec = load_spec(path)
        validate_names(spec)
        for scale in ("quick", "full"):
            scaled = spec.at_scale(scale)
            assert set(scaled.seeds) <= {1, 2, 3, 4, 5} and scaled.seeds, (path.name, scale)
            for p in scaled.problems:
                assert "seed" not in p.params and "instance" not in p.params, (path.name, p.label)
        full = spec.at_scale("full")
        budgets.add(full.budget)
        assert full.seeds == ([1, 2, 3, 4, 5] if full.budget == 100 else [1, 2, 3])
        if full.budget == 100:
            problems_seen |= {(p.name, p.params.get("dim")) for p in full.problems}
            assert {m.name for m in full.methods} >= {"random", "gp-ucb", "peer:botorch", "peer:tpe",
                                                      "peer:optuna-gp", "peer:cma"}
            assert "exact-subspace-ucb" not in {m.name for m in full.methods}
    assert budgets == {100, 300}
    assert len(problems_seen) == 10  # all ten problems at budget 100


def test_table_z_in_the_specs_folder_is_not_a_spec_set(tmp_path):
    from hdbo.experiments.spec import available_spec_sets, find_specs

    (tmp_path / "table_z.toml").write_text("[[row]]\n")
    (tmp_path / "one.toml").write_text("name = 'one'\n")
    assert available_spec_sets(tmp_path) == ["one"]
    with pytest.raises(ValueError, match="no experiment spec 'table_z'"):
        find_specs("table_z", tmp_path)


TREND = GOOD.replace('''[[methods]]
name = "random"''', '''[[problems]]
name = "quad"
label = "Q7"
params = { dim = 7 }

[[methods]]
name = "random"''') + """
[[claim]]
text = "R's regret grows with the dimension"
kind = "trend"
problems = ["Q3", "quad(dim=5)", "Q7"]
x = [3, 5, 7]
shape = "linear"
metric = "simple_regret"
method = "R"
"""


def test_parse_trend_claim(tmp_path):
    (claim,) = load_spec(_write(tmp_path, TREND)).claims
    assert claim == Claim(text="R's regret grows with the dimension", kind="trend", problems=("Q3", "quad(dim=5)", "Q7"),
                          metric="simple_regret", method="R", x=(3.0, 5.0, 7.0), shape="linear")
    # a diag: metric needs no direction in a trend claim (it is about growth)
    diag = load_spec(_write(tmp_path, TREND.replace('"simple_regret"\nmethod = "R"', '"diag:n"\nmethod = "R"')))
    assert diag.claims[0].metric == "diag:n" and diag.claims[0].higher_is_better is None


@pytest.mark.parametrize(
    "old, new, match",
    [
        ('shape = "linear"\n', "", r": kind = \"trend\" needs 'shape': \"linear\" or \"log\""),
        ("x = [3, 5, 7]\n", "", r": kind = \"trend\" needs 'x': one value of the varied setting per problem"),
        ('shape = "linear"', 'shape = "cubic"', r"\.shape: unknown shape 'cubic' \(valid: linear, log\)"),
        ("x = [3, 5, 7]", "x = [3, 5]", r"\.x: has 2 values for 3 problems"),
        ("x = [3, 5, 7]", "x = [3, 3, 7]", r"\.x: needs at least 3 distinct values"),
        ("x = [3, 5, 7]", "x = [0, 5, 7]", r"\.x: expected a list of finite numbers > 0"),
        ("x = [3, 5, 7]", 'x = ["3", 5, 7]', r"\.x: expected a list of finite numbers > 0"),
        ('method = "R"\n', 'method = "R"\nthan = ["gp-ucb"]\n', r"\.than: a \"trend\" claim takes no 'than'"),
        ('method = "R"\n', 'method = "R"\ntest = "welch"\n', r"\.test: a \"trend\" claim takes no 'test'"),
        ('kind = "trend"', 'kind = "best"', r"\.x: only kind = \"trend\" takes 'x'"),
    ],
)
def test_trend_claim_validation_errors(tmp_path, old, new, match):
    assert old in TREND
    with pytest.raises(SpecError, match=r"claim\[0\]" + match):
        load_spec(_write(tmp_path, TREND.replace(old, new)))
