"""Figures (PNG) and the Markdown results table of a benchmark run, from its JSON records.

``write_report(records, machine, out_dir)`` writes ``throughput_<problem>.png``,
``accuracy_<problem>.png``, ``scaling.png`` and ``results.md`` (machine, throughput with ratios to
shockflow, the targets of issue 11 with the measured value and by how much each is met or
missed, accuracy at equal error, scaling, memory and start-up).  Matplotlib is imported only here.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

from benchmarks.accuracy import time_at_equal_error


def _fmt(v, digits=3):
    if v is None:
        return "–"
    if isinstance(v, float) and (abs(v) >= 1e4 or (0 < abs(v) < 1e-2)):
        return f"{v:.{digits - 1}e}"
    return f"{v:.{digits}g}" if isinstance(v, float) else str(v)


def _by(records, study):
    return [r for r in records if r.get("study") == study]


def figures(records: list[dict], out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    thr = _by(records, "throughput")
    for problem in sorted({r["problem"] for r in thr}):
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        curves = defaultdict(list)
        for r in thr:
            if r["problem"] == problem:
                curves[r["label"]].append(r)
        for label, rs in sorted(curves.items()):
            rs.sort(key=lambda r: r["cells"])
            x = [r["cells"] for r in rs]
            med = [r["updates_per_s"]["median"] for r in rs]
            lo = [m - r["updates_per_s"]["low"] for m, r in zip(med, rs)]
            hi = [r["updates_per_s"]["high"] - m for m, r in zip(med, rs)]
            ax.errorbar(x, med, yerr=[lo, hi], marker="o", capsize=3, label=label)
        ax.set(xscale="log", yscale="log", xlabel="cells", ylabel="cell updates per second (median, min–max)",
               title=f"{problem}: throughput")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        name = f"throughput_{problem}.png"
        fig.savefig(out / name, dpi=110)
        plt.close(fig)
        written.append(name)
    acc = _by(records, "accuracy")
    for problem in sorted({r["problem"] for r in acc}):
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        curves = defaultdict(list)
        for r in acc:
            if r["problem"] == problem:
                curves[r["label"]].append(r)
        for label, rs in sorted(curves.items()):
            rs.sort(key=lambda r: r["cells"])
            line, = ax.plot([r["wall_s"] for r in rs], [r["l1_error"] for r in rs], marker="o", label=label)
            if all(r.get("stepping_s") for r in rs):  # py-pde: also its stepping alone, without recompilation
                ax.plot([r["stepping_s"] for r in rs], [r["l1_error"] for r in rs], marker="o", ls="--",
                        color=line.get_color(), mfc="none", label=f"{label} (stepping only)")
        ax.set(xscale="log", yscale="log", xlabel="wall time of the solve (s)", ylabel="L1 error vs exact",
               title=f"{problem}: accuracy against cost")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        name = f"accuracy_{problem}.png"
        fig.savefig(out / name, dpi=110)
        plt.close(fig)
        written.append(name)
    sc = _by(records, "scaling")
    if sc:
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        groups = defaultdict(list)
        for r in sc:
            if r["variant"].startswith("threads_"):
                groups[(r["problem"], r["cells"])].append(r)
        for (problem, cells), rs in sorted(groups.items()):
            rs.sort(key=lambda r: r["threads"])
            ax.plot([r["threads"] for r in rs], [r["speedup_over_1_thread"]["median"] for r in rs], marker="o",
                    label=f"{problem}, {cells:.2g} cells")
        ax.set(xlabel="threads", ylabel="speed-up over 1 thread (median)", title="prange fast path")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / "scaling.png", dpi=110)
        plt.close(fig)
        written.append("scaling.png")
    return written


def _throughput_table(thr):
    lines = ["| problem | cells | tool | scheme | updates/s (median) | shockflow speed-up: median [min, max] | "
             "max \\|diff\\| vs shockflow | L1 error | mean load |",
             "|---|---:|---|---|---:|---|---:|---:|---:|"]
    for r in sorted(thr, key=lambda r: (r["problem"], r["cells"], r["tool"])):
        s = r["shockflow_speedup"]
        label = r["label"] + (f" ({r['kernel']})" if r.get("kernel") else "")
        lines.append(f"| {r['problem']} | {r['cells']:,} | {label} | {r['scheme']} | {r['updates_per_s']['median']:.3g} | "
                     f"{s['median']:.3g} [{s['low']:.3g}, {s['high']:.3g}] | {_fmt(r['max_abs_diff_vs_shockflow'])} | "
                     f"{_fmt(r['l1_error'])} | {sum(r['load_average']) / len(r['load_average']):.1f} |")
    return lines


def _targets(records):
    """(target, measured, verdict) rows of issue 11's targets that this run measured."""
    rows = []
    thr = _by(records, "throughput")

    def med(problem, tool, cells=None):
        rs = [r for r in thr if r["problem"] == problem and r["tool"] == tool and (cells is None or r["cells"] == cells)]
        return {r["cells"]: r for r in rs}

    def verdict(value, goal, higher=True):
        if value is None:
            return "not measured"
        ok = value >= goal if higher else value <= goal
        return "met" if ok else f"missed by {abs(value / goal - 1) * 100:.0f}%"

    for problem in ("burgers_1d", "burgers_2d"):
        sf = med(problem, "shockflow")
        if not sf:
            continue
        big = max(sf)
        c_best = [r for r in thr if r["problem"] == problem and r["tool"].startswith("c_") and r["cells"] == big]
        if c_best:
            fastest = max(c_best, key=lambda r: r["updates_per_s"]["median"])
            ratio = sf[big]["updates_per_s"]["median"] / fastest["updates_per_s"]["median"]
            rows.append((f"{problem}: shockflow ≥ 1.0× fastest C, fair flags ({big:,} cells)",
                         f"{ratio:.2f}× ({fastest['label']})", verdict(ratio, 1.0)))
        claw = med(problem, "pyclaw")
        if big in claw:
            v = claw[big]["shockflow_speedup"]["median"]
            rows.append((f"{problem}: ≥ 10× PyClaw classic per update ({big:,} cells)", f"{v:.3g}× ({claw[big].get('kernel')})",
                         verdict(v, 10)))
            per_solve = claw[big].get("shockflow_speedup_per_solve")
            if per_solve:
                rows.append((f"{problem}: PyClaw classic per solve (same simulated time; {big:,} cells)",
                             f"{per_solve['median']:.3g}×", verdict(per_solve["median"], 10)))
    pde = med("viscous_1d", "pypde")
    if pde:
        big = max(pde)
        v = pde[big]["shockflow_speedup"]["median"]
        rows.append((f"viscous_1d: ahead of py-pde per update ({big:,} cells, compilation paid once on both sides)",
                     f"{v:.3g}×", verdict(v, 1.0)))
        stepping = pde[big].get("updates_per_s_stepping_only")
        sf = med("viscous_1d", "shockflow").get(big)
        if stepping and sf:
            v = sf["updates_per_s"]["median"] / stepping
            rows.append((f"viscous_1d: ahead of py-pde per update ({big:,} cells, py-pde's stepping alone, last repeat)",
                         f"{v:.3g}×", verdict(v, 1.0)))
    acc = _by(records, "accuracy")
    if any(r["tool"] == "pypde" for r in acc):
        pts = time_at_equal_error(acc, "viscous_1d", "pypde")["points"]
        if pts:
            best = min(p["speedup"] for p in pts)
            rows.append(("viscous_1d: ≥ 5× faster than py-pde at equal L1 error (worst over py-pde's grids, compiled once)",
                         f"{best:.3g}× (range {min(p['speedup'] for p in pts):.3g}–{max(p['speedup'] for p in pts):.3g})",
                         verdict(best, 5)))
            step = [p["speedup_stepping_only"] for p in pts if p.get("speedup_stepping_only")]
            if step:
                rows.append(("viscous_1d: same, py-pde's time stepping alone (its per-solve compilation left out)",
                             f"{min(step):.3g}× (range {min(step):.3g}–{max(step):.3g})", verdict(min(step), 5)))
    sc = [r for r in _by(records, "scaling") if r["threads"] == 2 and r["variant"] == "threads_2"]
    for r in sc:
        v = r["speedup_over_1_thread"]["median"]
        rows.append((f"{r['problem']}: ≥ 1.6× on 2 cores ({r['cells']:,} cells)", f"{v:.2f}×", verdict(v, 1.6)))
    for r in _by(records, "memory"):
        if r.get("tool") == "shockflow" and "ratio_to_required" in r:
            rows.append((f"peak memory ≤ 1.3× the arrays' footprint ({r['cells']:,} cells)",
                         f"{r['ratio_to_required']:.2f}×", verdict(r["ratio_to_required"], 1.3, higher=False)))
    for r in _by(records, "startup"):
        warm = r.get("warm", {})
        if "fast_path_overhead_s" in warm:
            v = warm["fast_path_overhead_s"]
            rows.append(("warm start (cached JIT) of the solvers: import and first calls, not `shockflow run` < 2 s", f"{v:.2f} s", verdict(v, 2.0, higher=False)))
    return rows


def markdown(records: list[dict], machine: dict, figures_written: list[str], *, under_load_note: str = "") -> str:
    pk = machine.get("packages", {})
    load_runs = [r for r in records if isinstance(r.get("load_average"), list) and r["load_average"]]
    mean_load = (sum(sum(r["load_average"]) / len(r["load_average"]) for r in load_runs) / len(load_runs)) if load_runs else 0.0
    lines = ["## Benchmark results", "",
             f"Measured on **{machine['cpu']}**, {machine['logical_cores']} logical cores "
             f"({machine['usable_cores']} usable), {machine['os']}, Python {machine['python']}; "
             + ", ".join(f"{k} {v}" for k, v in pk.items() if v) + ".",
             f"Mean one-minute load average during the timed runs: **{mean_load:.1f}** "
             f"(0 on a quiet machine; above the core count the timings are not trustworthy).", ""]
    if under_load_note:
        lines += [f"> {under_load_note}", ""]
    rows = _targets(records)
    if rows:
        lines += ["### Targets (issue 11)", "", "| target | measured | verdict |", "|---|---|---|"]
        lines += [f"| {a} | {b} | {c} |" for a, b, c in rows] + [""]
    thr = _by(records, "throughput")
    if thr:
        lines += ["### Throughput", "",
                  "One update = one cell advanced by one whole time step. *shockflow speed-up* = shockflow's rate / "
                  "the tool's, formed within each interleaved repeat; median and range over repeats.", ""]
        lines += _throughput_table(thr) + [""]
    acc = _by(records, "accuracy")
    if acc:
        lines += ["### Accuracy against cost", "",
                  "Time for a given L1 error: each tool's run against the fastest shockflow scheme interpolated "
                  "(log–log) at the same error; py-pde also with its time stepping alone.", "",
                  "| problem | tool | cells | L1 error | tool s | shockflow s (scheme) | speed-up | speed-up vs stepping only |",
                  "|---|---|---:|---:|---:|---:|---:|---:|"]
        for problem in sorted({r["problem"] for r in acc}):
            for tool in sorted({r["tool"] for r in acc if r["problem"] == problem and r["tool"] != "shockflow"}):
                for p in time_at_equal_error(acc, problem, tool)["points"]:
                    lines.append(f"| {problem} | {tool} | {p['n']} | {p['l1_error']:.3e} | {p['tool_s']:.3g} | "
                                 f"{p['shockflow_s']:.3g} ({p['shockflow_scheme']}) | {p['speedup']:.3g} | {_fmt(p.get('speedup_stepping_only'))} |")
        lines += ["", "| problem | tool | scheme | cells | steps | L1 error | wall s |", "|---|---|---|---:|---:|---:|---:|"]
        for r in sorted(acc, key=lambda r: (r["problem"], r["tool"], r["scheme"], r["cells"])):
            lines.append(f"| {r['problem']} | {r['tool']} | {r['scheme']} | {r['cells']:,} | {r['steps']} | "
                         f"{r['l1_error']:.3e} | {r['wall_s']:.3g} |")
        lines.append("")
    sc = _by(records, "scaling")
    if sc:
        lines += ["### Multi-core (prange fast path)", "", "| problem | cells | variant | updates/s | speed-up over 1 thread | "
                  "bitwise equal to serial |", "|---|---:|---|---:|---|---|"]
        for r in sc:
            s = r["speedup_over_1_thread"]
            lines.append(f"| {r['problem']} | {r['cells']:,} | {r['variant']} | {r['updates_per_s']['median']:.3g} | "
                         f"{s['median']:.2f} [{s['low']:.2f}, {s['high']:.2f}] | {r['bitwise_equal_to_serial']} |")
        lines.append("")
    for r in _by(records, "cores"):
        if "vector_speedup" in r:
            v, lat = r["vector_speedup"], r["latency_speedup"]
            lines += [f"Do the two logical cores share one physical core? Twice the work on 2 threads as on 1: "
                      f"vectorised arithmetic from L1 ×{v['median']:.2f} [{v['low']:.2f}, {v['high']:.2f}], a latency-bound "
                      f"chain ×{lat['median']:.2f} [{lat['low']:.2f}, {lat['high']:.2f}] (separate cores give about 2 for "
                      f"both; two hyperthreads of one core give about 1 for vector work and 2 for the chain).", ""]
    mem = [r for r in _by(records, "memory") if "peak_rss_bytes" in r]
    if mem:
        lines += ["### Memory (1-D Burgers, fresh process per tool)", "",
                  "| tool | cells | peak RSS MiB | baseline MiB | solve MiB | required MiB | ratio |", "|---|---:|---:|---:|---:|---:|---:|"]
        for r in mem:
            lines.append(f"| {r['tool']} | {r['cells']:,} | {r['peak_rss_bytes'] / 2**20:.0f} | {r['baseline_rss_bytes'] / 2**20:.0f} | "
                         f"{r['solve_bytes'] / 2**20:.0f} | {r['required_bytes'] / 2**20:.0f} | {r['ratio_to_required']:.2f} |")
        lines.append("")
    for r in _by(records, "startup"):
        cases = ("fast_path", "default_ssprk2", "muscl_ssprk2", "weno5_general", "hj_default")
        lines += ["### Start-up (fresh interpreter, new Numba cache directory)", "",
                  "| | import s | " + " | ".join(cases) + " |", "|---|---:|" + "---:|" * len(cases)]
        for label in ("cold", "warm"):
            d = r.get(label, {})
            if "import_s" in d:
                lines.append(f"| {label} | {d['import_s']:.2f} | "
                             + " | ".join(f"{d[c + '_overhead_s']:.2f}" if c + "_overhead_s" in d else "–"
                                          for c in cases) + " |")
        lines += ["", "(seconds of first-call overhead: compilation when cold, cache loading when warm; fast_path is "
                  "first order + Euler, default_ssprk2 the library default (first order + SSP-RK2), both on the Burgers "
                  "fast path, as is MUSCL; WENO5 runs the general kernel)", ""]
    if figures_written:
        lines += ["### Figures", ""] + [f"![{f}]({f})" for f in figures_written] + [""]
    return "\n".join(lines)


def write_report(records: list[dict], machine: dict, out: Path, *, under_load_note: str = "") -> Path:
    out.mkdir(parents=True, exist_ok=True)
    written = figures(records, out)
    text = markdown(records, machine, written, under_load_note=under_load_note)
    target = out / "results.md"
    tmp = target.with_suffix(".md.tmp")
    tmp.write_text(text)
    tmp.replace(target)
    return target


README_START = "<!-- benchmarks:start -->"
README_END = "<!-- benchmarks:end -->"


def update_readme(readme: Path, results_md: Path) -> bool:
    """Replace the text between the README's benchmark markers with the head of ``results_md`` (machine, load
    and the targets table; everything before its "### Throughput" section) and a pointer to the whole file;
    returns False (and changes nothing) when the markers are absent."""
    text = readme.read_text()
    if README_START not in text or README_END not in text:
        return False
    rel = results_md.parent.resolve().relative_to(readme.parent.resolve()) if results_md.parent.resolve().is_relative_to(
        readme.parent.resolve()) else results_md.parent
    body = results_md.read_text().split("### Throughput", 1)[0].rstrip()
    body = body.replace("## Benchmark results\n\n", "", 1)
    body += (f"\n\nThroughput per tool and size, accuracy against cost, multi-core, memory and start-up, with figures: "
             f"[`{(rel / results_md.name).as_posix()}`]({(rel / results_md.name).as_posix()}) (regenerate with "
             f"`python -m benchmarks.run_all --out benchmarks/results --readme README.md`; `docs/benchmarks.md`).")
    head, rest = text.split(README_START, 1)
    _, tail = rest.split(README_END, 1)
    tmp = readme.with_suffix(".tmp")
    tmp.write_text(f"{head}{README_START}\n{body}\n{README_END}{tail}")
    tmp.replace(readme)
    return True
