"""Issue 20, chen2012 Fig. 3 diagnosis (docs/reproductions/chen2012-misspec-diagnosis.md): targeted experiments for chen2012 Fig. 3 (misspecified sigma / b).  Selection only.

Usage: OMP_NUM_THREADS=1 python benchmarks/chen2012_misspec_check.py CELL VARIANT [n_seeds]
  CELL    : e.g. fdt:nv=0.025  gpt:bw=0.001   (options of make_method("hds"))
  VARIANT : ours | delta_true (FDT delta = 3 * true b = 0.3) | tie_random (GPT random tie-break)
Seeding as hdbo.experiments.runner (problem seed s, method_seed(s), noise_generator(s)).
Since the fixes of issue 20, VARIANT 'ours' runs the fixed code: GPT breaks ties at random, as
'tie_random_grid' does (the two give identical runs), and CELL may set fdt_delta (e.g. fdt:bw=0.001,fdt_delta=0.3).
"""
import json, math, sys, time
import numpy as np
from hdbo.methods import make_method
from hdbo import problems
from hdbo.experiments.runner import method_seed, noise_generator, _evaluate
from hdbo.structure.variable_selection import HDSSelector


class TieRandomSelector(HDSSelector):
    """GPT: exact ties of the index (within 1e-12 relative) broken at random, not at the lowest grid point."""

    def propose(self, rng):
        if self.pending is None and self.test == "gpt" and not self.done:
            cands, best = [], -np.inf
            for node in self.nodes:
                ucb = self._gpt_index(node)
                m = float(np.max(ucb))
                tol = 1e-12 * max(1.0, abs(m))
                if m > best + tol:
                    best, cands = m, []
                if m >= best - tol:
                    cands += [(node.id, int(j)) for j in np.flatnonzero(ucb >= m - tol)]
            best_val = max(self._gpt_index(self._node(n))[j] for n, j in cands)
            tol = 1e-12 * max(1.0, abs(best_val))
            cands = [(n, j) for n, j in cands if self._gpt_index(self._node(n))[j] >= best_val - tol]
            nid, j = cands[int(rng.integers(len(cands)))]
            self.pending = {"node": nid, "z": float(self.grid[j]), "grid_index": j, "stage": 0}
        return super().propose(rng)


class TieRandomGridSelector(HDSSelector):
    """GPT, the proposed fix exactly: the node as now (largest index, ties to the node created first);
    among that node's grid points whose index is within 1e-12 (relative) of its maximum, one uniformly at random."""

    def propose(self, rng):
        if self.pending is None and self.test == "gpt" and not self.done:
            best, best_val = None, -np.inf
            for node in self.nodes:
                ucb = self._gpt_index(node)
                m = float(np.max(ucb))
                if m > best_val:
                    best, best_val = node, m
            ucb = self._gpt_index(best)
            ties = np.flatnonzero(ucb >= best_val - 1e-12 * max(1.0, abs(best_val)))
            j = int(ties[rng.integers(ties.size)]) if ties.size > 1 else int(ties[0])
            self.pending = {"node": best.id, "z": float(self.grid[j]), "grid_index": j, "stage": 0}
        return super().propose(rng)


def run(cell, variant, seed, budget=2000):
    test, _, opts = cell.partition(":")
    params = dict(test=test, optimize=False, gp_prior="none", noise_variance=0.1)
    for kv in filter(None, opts.split(",")):
        k, v = kv.split("=")
        params[{"nv": "noise_variance", "bw": "bandwidth"}.get(k, k)] = float(v)
    prob = problems.get("gp-sample", dim=200, d=2, noise_std=math.sqrt(0.1), seed=seed)
    m = make_method("hds", prob.bounds, seed=method_seed(seed), budget=budget, structure=prob.structure, **params)
    old = m.selector_
    kw = dict(background=old.background, test=old.test, theta1=old.theta1, theta0=old.theta0,
              bandwidth=old.bandwidth, signal_variance=old.signal_variance, noise_variance=old.noise_variance,
              max_evaluations=old.max_evaluations, fdt_factor=old.fdt_factor, grid_size=old.grid_size)
    if variant == "delta_true":
        m.selector_ = HDSSelector(old.dim, delta=0.3, **kw)
    elif variant == "tie_random":
        m.selector_ = TieRandomSelector(old.dim, **kw)
    elif variant == "tie_random_grid":
        m.selector_ = TieRandomGridSelector(old.dim, **kw)
    elif variant != "ours":
        raise ValueError(variant)
    rng = noise_generator(seed)
    t = 0
    while not m.done and t < budget:
        x = m.ask()
        y, f, err = _evaluate(prob, x, rng)
        m.tell(x, y)
        t += 1
    d = m.diagnostics()
    return {k: d.get(k) for k in ("recovered", "false_positives", "false_negatives", "selection_evaluations",
                                   "undetermined_nodes")}


if __name__ == "__main__":
    cell, variant = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    rows = []
    t0 = time.time()
    for s in range(n):
        r = run(cell, variant, s)
        rows.append(r)
        print(json.dumps({"seed": s, **r}), flush=True)
    rec = np.mean([bool(r["recovered"]) for r in rows])
    ev = np.array([r["selection_evaluations"] for r in rows], float)
    fp = np.mean([r["false_positives"] for r in rows]); fn = np.mean([r["false_negatives"] for r in rows])
    print(f"SUMMARY {cell} {variant}: recovered {rec*100:.0f}% ({int(rec*n)}/{n}), evals {ev.mean():.1f} +- {ev.std(ddof=1)/math.sqrt(n):.1f}, "
          f"FP {fp:.2f}, FN {fn:.2f}, {time.time()-t0:.0f}s", flush=True)
