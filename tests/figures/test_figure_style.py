"""One figure style: no module calls matplotlib.use or imports pyplot; drawing functions return a
Figure and draw into a caller's axes; colour maps centred on zero; the loss figure carries the
argument (log steps, chart labels, bands, parity with each error); the steepness fit drawn."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from shockflow.figures import field_colours, loss_figure, new_figure, save_figure, solution_figure
from shockflow.figures.solution import steepness_panel
from shockflow.storage import read_result

REPO = Path(__file__).resolve().parents[2]
V1_RUN = REPO / "tests" / "storage" / "data" / "result-v1-two-layer-staircase.h5"


def _modules():
    for root in ("shockflow", "solvers"):
        yield from sorted((REPO / root).rglob("*.py"))


def test_no_module_calls_matplotlib_use_or_imports_pyplot():
    offenders = []
    for path in _modules():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(a.name == "matplotlib.pyplot" for a in node.names):
                offenders.append(f"{path}:{node.lineno} import matplotlib.pyplot")
            if isinstance(node, ast.ImportFrom) and (node.module == "matplotlib.pyplot" or (
                    node.module == "matplotlib" and any(a.name == "pyplot" for a in node.names))):
                offenders.append(f"{path}:{node.lineno} from matplotlib import pyplot")
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "use"
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "matplotlib"):
                offenders.append(f"{path}:{node.lineno} matplotlib.use(...)")
    assert offenders == []
    assert len(list(_modules())) > 100        # the scan saw the package


@pytest.mark.slow  # a fresh interpreter draws every figure of a network result (~5 s); the AST scan above is the fast sibling
def test_drawing_leaves_the_backend_and_pyplot_alone(tmp_path):
    code = (
        "import sys, matplotlib\n"
        "matplotlib.rcParams['backend'] = 'svg'\n"
        "from shockflow.storage import read_result\n"
        "from shockflow.figures import solution_figure, loss_figure\n"
        "from shockflow.figures.result import draw_result\n"
        "from shockflow.nqf import figures as nf; from shockflow.scaling import figures as sf\n"
        "from shockflow.spectra import monitor, phase_diagram\n"
        f"r = read_result({str(V1_RUN)!r})\n"
        f"draw_result(r, {str(tmp_path)!r})\n"
        "assert 'matplotlib.pyplot' not in sys.modules, 'pyplot imported'\n"
        "assert matplotlib.rcParams['backend'] == 'svg', matplotlib.rcParams['backend']\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["two-layer-staircase-landscape.png",
                                                          "two-layer-staircase-loss.png", "two-layer-staircase.png"]


def test_field_colours_centre_signed_fields_on_zero_and_keep_one_signed_ones_sequential():
    cmap, norm = field_colours(np.array([-0.2, 0.1, 3.0]))
    assert cmap == "RdBu_r" and norm.vcenter == 0.0 and norm.vmin == -3.0 and norm.vmax == 3.0
    assert norm(0.0) == pytest.approx(0.5)
    cmap, norm = field_colours(np.array([0.5, 2.0, np.nan]))
    assert cmap == "viridis" and (norm.vmin, norm.vmax) == (0.5, 2.0)


def _loss_case():
    steps = np.arange(0, 3001, dtype=float)
    loss = 10.0 / (1.0 + np.exp((steps - 300) / 20)) + 1.0 / (1.0 + np.exp((steps - 1200) / 60)) + 1e-3
    matches = {"chart": np.array(["r0", "r1"], dtype=object), "predicted_step": np.array([310.0, 1100.0]),
               "observed_step": np.array([300.0, 1200.0]), "relative_error": np.array([10 / 300, 100 / 1200])}
    return steps, loss, matches


def test_loss_figure_log_steps_chart_labels_bands_and_parity_with_each_error():
    steps, loss, matches = _loss_case()
    fig = loss_figure(steps, loss, predicted=[310.0, 1100.0], charts=["r0", "r1"], observed=[300.0, 1200.0],
                      bands=[(250.0, 350.0), (1000.0, 1400.0)], matches=matches)
    main, parity = fig.axes[:2]
    assert main.get_xscale() == "log" and main.get_yscale() == "log"
    assert {t.get_text().strip() for t in main.texts} == {"r0", "r1"}
    dashed = [l for l in main.get_lines() if l.get_linestyle() not in ("-", "None")]
    solid = [l for l in main.get_lines() if l.get_linestyle() == "-" and np.ptp(l.get_xdata()) == 0]
    assert sorted(float(l.get_xdata()[0]) for l in dashed) == [310.0, 1100.0]
    assert sorted(float(l.get_xdata()[0]) for l in solid) == [300.0, 1200.0]
    # a predicted line and the observed line it matches share the chart's colour
    colour = {float(l.get_xdata()[0]): l.get_color() for l in dashed + solid}
    assert colour[310.0] == colour[300.0] and colour[1100.0] == colour[1200.0] != colour[300.0]
    spans = [p for p in main.patches]
    assert len(spans) == 2
    labels = sorted(t.get_text() for t in parity.texts)
    assert labels == [f"r0 {100 * 10 / 300:+.1f} %", f"r1 {100 * -100 / 1200:+.1f} %"]
    assert parity.get_xscale() == "log" and "median |error|" in parity.get_title()
    # without matches: one panel, still a Figure
    assert len(loss_figure(steps, loss, observed=[300.0]).axes) == 1


def test_loss_figure_names_a_chart_count_that_does_not_fit():
    steps, loss, _ = _loss_case()
    with pytest.raises(ValueError, match="1 chart labels for 2 predicted steps"):
        loss_figure(steps, loss, predicted=[1.0, 2.0], charts=["r0"])


def test_steepness_panel_draws_the_fit_whose_zero_is_t_star():
    fig = new_figure(4, 3)
    ax = fig.subplots()
    t = np.linspace(0.0, 0.25, 11)
    steep = 1.0 / (0.3 - t)                       # 1/steepness = t* - t exactly, t* = 0.3
    steepness_panel(ax, t, steep, 0.3, 6, from_data=0.3)
    fit = [l for l in ax.get_lines() if l.get_label() == "linear fit, extrapolated"]
    assert len(fit) == 1
    x, y = fit[0].get_data()
    assert x[-1] == pytest.approx(0.3, abs=1e-9) and y[-1] == pytest.approx(0.0, abs=1e-9)
    assert any("t* = 0.3 (fit)" in l.get_label() for l in ax.get_lines())


def test_network_solution_figure_has_one_facet_per_chart_in_its_coordinate_and_gamma():
    r = read_result(V1_RUN)
    fig = solution_figure(r)
    facets = [ax for ax in fig.axes if ax.get_ylabel() == "γ"]
    assert [ax.get_xlabel() for ax in facets] == list(r.charts)
    for ax, label in zip(facets, r.charts):
        gs = r.extraction["charts"][label]["attrs"]["gamma_star"]
        assert any(l.get_label().startswith(f"γ* = {gs:.4g}") for l in ax.get_lines())


def test_drawing_functions_draw_into_the_callers_axes_and_save_every_format(tmp_path):
    from shockflow.nqf.figures import power_law_figure
    from shockflow.scaling.figures import plot_optimal_lambda

    fig = new_figure(8, 3)
    left, right = fig.subplots(1, 2)
    t = np.geomspace(1, 100, 50)
    out = power_law_figure(t, t ** -0.5, {"t_lo": 2.0, "t_hi": 50.0, "exponent": 0.5, "spread": 0.01}, {"p": 0.5},
                           ax=left)
    assert out is fig and len(left.get_lines()) >= 3
    assert plot_optimal_lambda({"n": [10, 20, 40], "lam": [1.0, 0.5, 0.25]}, ax=right) is fig
    for fmt, magic in (("png", b"\x89PNG"), ("svg", b"<?xml"), ("pdf", b"%PDF")):
        path = save_figure(fig, tmp_path / "both.png", format=fmt)
        assert path.suffix == f".{fmt}" and path.read_bytes()[:len(magic)] == magic
    with pytest.raises(ValueError, match="format 'jpg' is not one of png, svg, pdf"):
        save_figure(fig, tmp_path / "x.jpg")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["both.pdf", "both.png", "both.svg"]


def test_spectra_figure_histogram_with_marchenko_pastur_outliers_and_q2():
    from shockflow.spectra.marchenko_pastur import mp_density
    from shockflow.spectra.monitor import plot_spectral_evolution, spectral_monitor

    rng = np.random.default_rng(0)
    N, M = 80, 160
    u = np.zeros(N); u[0] = 1.0
    v = rng.standard_normal(M) / np.sqrt(M)
    stack = [rng.standard_normal((N, M)) / np.sqrt(M) + s * np.outer(u, v) * 3 for s in (0.0, 1.0, 2.0)]
    trace = spectral_monitor(np.array(stack), [0, 10, 100], teacher=u)
    fig = plot_spectral_evolution(trace)
    hist, evo, q2 = fig.axes[:3]
    assert "80 × 160" in fig._suptitle.get_text()
    mp = [l for l in hist.get_lines() if l.get_label().startswith("fitted MP")]
    assert len(mp) == 1
    x, y = mp[0].get_data()
    np.testing.assert_allclose(y, mp_density(x, trace.ratio[-1], trace.sigma2[-1]))
    # the histogram is a density per eigenvalue over the bulk's range: its bars integrate to the share
    # of eigenvalues in (0, right edge]; the outlier beyond it is named at the edge
    heights = np.array([p.get_height() for p in hist.patches])
    widths = np.array([p.get_width() for p in hist.patches])
    ev, top = trace.eigenvalues[-1], hist.get_xlim()[1]
    assert float(np.sum(heights * widths)) == pytest.approx(np.mean((ev > 0) & (ev <= top)), rel=1e-9)
    assert top == pytest.approx(1.3 * trace.threshold[-1])
    assert trace.outliers[-1, 0] > top and f"{trace.outliers[-1, 0]:.3g}" in hist.texts[0].get_text()
    assert any(l.get_label() == "edge λ₊" for l in hist.get_lines())
    q = [l for l in q2.get_lines() if l.get_label().startswith("q² measured")]
    np.testing.assert_allclose(q[0].get_ydata(), trace.q2)
    assert evo.get_xscale() == "log"


def _boxes_apart(fig):
    """The texts of ``fig`` (tick labels, axis labels, titles, offsets) as drawn: (all inside the figure,
    no two overlapping and none over another axes' drawing area)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    W, H = fig.bbox.width, fig.bbox.height
    texts = []           # (owner axes, extent)
    def drawn_tick_labels(axis, along):
        lo, hi = sorted(axis.get_view_interval())
        span = 1e-9 * max(abs(lo), abs(hi), 1.0)
        return [t for t in axis.get_ticklabels() if lo - span <= t.get_position()[along] <= hi + span]

    for ax in (a for a in fig.axes if a.get_visible()):
        parts = [ax.title, ax.xaxis.label, ax.yaxis.label, ax.xaxis.offsetText, ax.yaxis.offsetText,
                 *drawn_tick_labels(ax.xaxis, 0), *drawn_tick_labels(ax.yaxis, 1)]
        texts += [(ax, t.get_window_extent(renderer)) for t in parts if t.get_visible() and t.get_text()]
    texts += [(None, t.get_window_extent(renderer)) for t in fig.texts if t.get_text()]

    def overlap(a, b, slack=0.5):
        return min(a.x1, b.x1) - max(a.x0, b.x0) > slack and min(a.y1, b.y1) - max(a.y0, b.y0) > slack

    inside = all(b.x0 >= -1 and b.y0 >= -1 and b.x1 <= W + 1 and b.y1 <= H + 1 for _, b in texts)
    apart = not any(overlap(a, b) for i, (_, a) in enumerate(texts) for _, b in texts[i + 1:])
    clear = not any(overlap(box, ax.bbox) for owner, box in texts for ax in fig.axes
                    if ax.get_visible() and ax is not owner)
    return inside, apart and clear


@pytest.mark.parametrize("n", [1, 4, 6])
def test_fixed_margin_facets_keep_every_label_inside_the_figure_and_apart(n):
    """The facet figures place their axes by fixed margins, without a layout pass: the margins must hold
    the tick labels, axis labels, titles and colour bars of a typical panel."""
    from shockflow.figures.canvas import facet_figure

    for colorbar in ("each", "shared", None):
        fig, axes, bars = facet_figure(n, panel=(2.5, 2.3), colorbar=colorbar, title=True)
        assert len(axes) == n and len(bars) == {"each": n, "shared": 1, None: 0}[colorbar]
        for k, ax in enumerate(axes):
            x = np.linspace(0, 10 ** (k % 4), 50)       # tick labels up to four digits wide
            mesh = ax.pcolormesh(x, x, np.outer(x, -x) - 0.5, shading="auto")
            ax.set_xlabel("r0"), ax.set_ylabel("γ"), ax.set_title(f"chart r{k}", fontsize=9)
            if colorbar == "each":
                fig.colorbar(mesh, cax=bars[k], label="p = ∂u/∂r0")
        if colorbar == "shared":
            fig.colorbar(mesh, cax=bars[0], label="log10 step")
        fig.suptitle("a title", fontsize=10)
        assert _boxes_apart(fig) == (True, True), colorbar


def test_the_result_figures_keep_their_labels_apart():
    from shockflow.figures.landscape import landscape_figure
    from shockflow.figures.result import _charts

    r = read_result(V1_RUN)
    assert _boxes_apart(solution_figure(r)) == (True, True)
    assert _boxes_apart(landscape_figure(_charts(r))) == (True, True)
    tr = r.transitions
    pred, obs = tr["predicted"], tr["observed"]
    steps = np.geomspace(1, 3000, 400)
    fig = loss_figure(steps, 30 / (1 + steps / 100), predicted=pred["step"], charts=pred["chart"],
                      observed=obs["step"], bands=list(zip(obs["onset"], obs["end"])), matches=tr.get("matches"),
                      title="a title")
    assert _boxes_apart(fig) == (True, True)


def test_thin_log_ticks_drops_minor_ticks_only_on_log_axes_of_two_decades_or_more():
    from shockflow.figures.canvas import thin_log_ticks

    fig = new_figure(6.0, 2.0, layout=None)
    wide, short, linear = fig.subplots(1, 3)
    wide.loglog([1.0, 1e4], [1e-3, 1e2])        # 4 and 5 decades: the labelled decades read the axis
    short.loglog([1.0, 30.0], [2.0, 9.0])       # 1.5 and 0.65 decades: the minor ticks may be all it has
    linear.plot([0.0, 1.0], [0.0, 1.0])
    before = [len(a.get_minor_locator()()) for ax in (short, linear) for a in (ax.xaxis, ax.yaxis)]
    for ax in (wide, short, linear):
        thin_log_ticks(ax)
    assert [len(a.get_minor_locator()()) for a in (wide.xaxis, wide.yaxis)] == [0, 0]
    assert len(wide.xaxis.get_major_locator()()) >= 3 and len(wide.yaxis.get_major_locator()()) >= 3
    assert [len(a.get_minor_locator()()) for ax in (short, linear) for a in (ax.xaxis, ax.yaxis)] == before
    assert before[0] > 0 and before[1] > 0      # the short log axes had minor ticks to keep


def test_the_loss_figure_draws_no_minor_ticks_on_its_wide_log_axes():
    steps = np.arange(1.0, 3001.0)
    loss = 30.0 * np.exp(-steps / 400.0) + 1e-4
    matches = {"chart": ["r0", "r1"], "predicted_step": [110.0, 2000.0], "observed_step": [112.0, 1990.0],
               "relative_error": [0.02, 0.005]}   # the parity panel: 2.3 decades
    fig = loss_figure(steps, loss, predicted=[110.0, 2000.0], charts=["r0", "r1"], observed=[112.0, 1990.0],
                      bands=[(90.0, 130.0), (1800.0, 2200.0)], matches=matches)
    assert len(fig.axes) == 2
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            assert len(axis.get_minor_locator()()) == 0


def test_a_panel_title_at_its_fixed_place_is_where_matplotlib_would_put_it_and_apart_from_an_offset_text():
    from shockflow.figures.canvas import facet_figure, panel_title

    def panels(title, scale):
        fig, axes, _ = facet_figure(2, panel=(2.5, 2.1))
        for k, ax in enumerate(axes):
            ax.plot([0.0, 1.0], [1.0 * scale, (2.0 + k) * scale])
            title(ax, f"chart r{k}")
        fig.canvas.draw()
        return fig, [ax.title.get_window_extent(fig.canvas.get_renderer()) for ax in axes]

    for scale in (1.0, 37.0):     # no offset text: the title lands where the automatic placement puts it
        _, auto = panels(lambda ax, t: ax.set_title(t, fontsize=9), scale)
        _, fixed = panels(panel_title, scale)
        assert [tuple(b.bounds) for b in fixed] == [tuple(b.bounds) for b in auto]
    fig, _ = panels(panel_title, 1e-7)  # an offset text above each panel ("1e-7"), at its top left
    assert all(ax.yaxis.offsetText.get_text() for ax in fig.axes)
    assert _boxes_apart(fig) == (True, True)
