"""The saddle chain: later transitions as escapes from the saddles the network visits (docs/theory.md §6).

After the modes of an active set ``S`` have been learned the network sits near the saddle ``θ_S``:
the minimiser of the loss over the active charts with every other mode at its initial (small)
value.  A waiting mode ``k`` does not stand still there: near its ridge it grows, or is pushed back,
at the saddle's own rate,

    ln d_k(t) = ln d_k(0) + ∫_0^t g_k(S(s)) ds,        g_k(S) = 1/γ*_k(S) = −Hess_g L̄_k(ridge; θ_S),

and escapes when ``ln d_k`` reaches the exit distance of its chart at that saddle (the distance from
the ridge to the chart's minimum, where the transition's midpoint is read).  The first saddle is the
origin, ``S = ∅``, where every chart's rate is the one its PDE measured (the first shock of the
chart's Hamilton–Jacobi problem): with modes that do not interact every later saddle has the same
rates and exits, and the chain is the single-escape prediction of
:mod:`shockflow.prediction.mapping`.  With vanishing initialisation this is the saddle-to-saddle
(incremental learning) algorithm of Pesme & Flammarion (2023) for diagonal nets and Jacot et al.
(2021) for deep linear nets.  It uses only the landscape, never the run.

Two pieces:

* :class:`Landscape` — the saddles of the REAL network's loss.  ``θ_{S ∪ j}`` is found from
  ``θ_S`` by moving chart ``j`` to its minimum and then re-minimising every active chart in turn
  (block coordinate descent on the charts' sections, sweeps until the loss settles: for a diagonal linear net on correlated inputs
  it converges to the non-negative least-squares saddle).  With ``joint=True`` (automatic charts of
  units only) the saddle is instead the minimiser of the loss over every free parameter of the active
  modes, the waiting modes held (``_joint_minimum``): on a two-layer linear net it reaches the best rank-k
  fit, which the 1-D sections cannot (they keep each mode along the origin's direction: 0.64 for 0.51 on
  ``linear2-momentum``).  It is not the default: on ``mlp-tanh-teacher`` the minimiser trades the learned
  tanh units' balance for a desaturated point the run reaches only slowly, and the chain's later steps,
  within 1–10 % on the sections, move 14–21 % early (measured, docs/prediction.md).  At each saddle it measures, for every
  waiting chart, the quotient curvature at the chart's ridge (a fixed five-point stencil, the same at
  every saddle, so the rate ratio ``κ_k(S)/κ_k(∅)`` carries no stencil error; one-sided from the ridge of a
  mirrored chart, where a saddle's section has a slope: :meth:`Landscape._curvature`), the exit distance and,
  for charts escaping by the integral ``∫ dx/|a L̄'|`` (degenerate ridges), the escape profile.  A
  geometry whose charts share units (:class:`shockflow.geometry.auto.AutoGeometry`) names a keyword
  (``Geometry.saddle_keyword``) through which a waiting chart's section is taken orthogonal to the
  learned modes' unit split, the state the symmetric overlap relaxes to; the part of a waiting mode's
  split that the learned units hold relaxes with them, so the chain's log-distance loses the log of the
  orthogonal share on arriving (``SaddleData.split_share``: −1.7 for the second mode of
  ``attention-qk-4x2``, whose d_k = 2 units split it almost as they split the first).
* **A waiting mode in its unit subspace** (automatic charts of two or more units; ``SaddleData.subspace``).  From the first
  saddle after the origin on, a waiting mode of a chart escaping at a shock is followed as a vector: every unit's
  component along its direction ``e_k``, ``c ∈ R^m``.  At a saddle the loss on that subspace (through the saddle
  with the mode removed) is ``L_0 + bᵀc − ½ cᵀAc``: the learned modes' cross terms put a force ``b`` there (its
  projection on the chart's split is the section's slope at the ridge), so the mode's stationary point moves to
  ``A⁻¹b``, and each of A's directions grows at its own rate (the optimiser's linearised factor, ``log_gains``,
  at the chart's PDE rate scaled by λ_j over the origin's curvature).  The mode escapes when ``|c|`` reaches its
  exit; its unit split turns towards A's fastest directions while it waits, and the part the learned units hold
  is one of A's stable directions (so no split share is taken from it).  Measured on ``mlp-tanh-teacher``, seed 2,
  fifth mode: ``|b|`` = 0.16–0.20 at the four saddles after the origin, ``|A⁻¹b|`` on A's unstable directions
  0.016–0.023, against its initial component 0.0009 (the section's slope, 0.0015–0.0048, is that force's
  projection on one direction); the run's component jumps from 0.002 at step 50 to 0.043 at step 100.  Its step
  440 against the run's 445 (the 1-D chart along the split: 560).
* **The escape's push** (:meth:`Landscape.transit_forces`, :func:`_escape_push`).  The chain switches to the next
  saddle at the escaping mode's midpoint, but the cross terms that put the force ``b`` on a waiting mode at that
  saddle act while the mode escapes: the force grows as a power of the escaping mode (its square where the
  activation has an even part, gelu; its cube for an odd one, tanh), and the waiting mode answers at its own rates
  all the while.  The escaping chart's distance from its ridge grows as ``e^{ρ(t − t_s)}`` of its exit (ρ its
  growth per step before the switch ``t_s``), so it passes the fraction ``f`` of it at ``t_s + ln f / ρ``.  The force
  on each waiting mode's unit subspace is read at ``f = 1, ½, ¼, …, 1/128`` along the escaping chart's section (one
  gradient each, less the force already there at ``f = 0``; a power of ``f`` between the points and below them,
  :func:`_power_interpolation`), and the linear answer ``ċ = A(f) c − F(f)`` from the chain's arrival at the saddle
  the chart escapes from to the switch is added to the waiting mode's position: ``A`` moves from that saddle's rates
  to the next saddle's (along the next saddle's directions) as the same power of ``f`` as the force (the force is
  largest at the end, where the next saddle's stable directions take it without growth).  Measured on
  a gelu MLP 20 → 16 → 3 with biases on a relu teacher with biases (targets with a mean): the second mode's
  component at the first switch 0.119 against the run's 0.110 (0.030 without the push,
  ``tests/prediction/test_escape_push.py``), its step +21.0 → +11.6 %, the third's −2.4 → −5.5 %; with teacher
  seed 6 the median 50.7 → 7.2 %; at seed 3, width 8 and with momentum the second mode's error 18.6 → 8.6,
  14.1 → 8.7, 20.2 → 10.2 % (width 8's third −20.4 → −22.0 %).  An odd activation's force is a cube, weak at the
  switch: `mlp-tanh-teacher` moves by under 1 %, the tanh variants by up to 4 points (teacher seed 9's third mode
  −10.9 → −14.7 %); later modes that were already early on a linear teacher (gelu) move 1–2 points earlier.
* **Forced, not learned** (:meth:`Landscape.strength_share`).  Where a saddle's learned modes pull a waiting mode a
  little way out of a stable ridge (its unit subspace has no unstable direction, or its 1-D section's curvature at
  the ridge is ≤ 0), the mode relaxes to that point without a plateau or a drop: that is no transition unless the
  point holds at least :data:`LEARNED_SHARE` of the strength the mode's minimum holds at the origin (the parameter
  truth's "half way").  Below that share the mode escapes only by its unstable part (the stable part, the learned
  units turning towards it, does not count), and with none it waits at this saddle.  At or above it the whole
  vector counts: a teacher whose second mode *is* the learned units turning (``attention-qk-4x2 --set
  data.teacher.seed=7``, its minimum at the first saddle 1.7× the origin's) is learned that way.  Measured: a
  two-layer linear net with 2 hidden units on a teacher of 4 modes had its fourth mode "escape" 11 steps after the
  second, relaxing to −0.2 % of its origin strength (precision 2/3; now 2/2 at 2.3 %); with 3 hidden units the
  fourth at the third's step; ``attention-qk-4x2`` seeds 4 and 7 (31.3 → 2.4 %, 2/3 → 2/2), where a mode taken at
  once at the first saddle (0.01–0.0016 % of its strength) sent the chain on too early.
* **Learned by the relaxation** (:meth:`Landscape.relaxation_crossings`).  The section's saddle is where the chain
  switches, not where the run stops: after an escape the learned units go on moving (a query–key head's column that
  learned a rank-one teacher along the origin's first mode turns towards the teacher), and the strength that gives a
  waiting mode can pass half of its section minimum's (the parameter truth's "half way") within an e-fold of the
  escape, while the mode's unit subspace grows at 10⁻³ and its forced point ``A⁻¹b`` is a linear answer far short of
  it.  At each saddle reached by a shock chart's escape the chain follows the flow with the waiting modes held
  (:class:`_Flow`) for :data:`RELAX_EFOLDS` e-folds of that escape's growth per step, reads the waiting charts'
  strengths there, and a chart crossing half way from its start to its section minimum's is learned at the
  crossing, from this saddle.  Measured on unseen query–key heads (d_k = 3, a rank-one teacher): the second and
  third modes 6574 and 9609 (misses) → 264.5 and 291.8 against the run's 284 and 300.
* **The relaxing chain** (:attr:`Landscape.relaxes`: the automatic charts, where the landscape knows which
  parameters carry a waiting mode).  A block-coordinate saddle on the charts' sections is not a stationary point of
  the network where the sections cannot hold what the learned modes do next: a saturating tanh chain grows its
  layers apart after each mode is learned (gradient descent from the block saddle of ``deep-mlp-tanh``'s first
  three modes lowers the loss from 3.99 to 2.1 in 450 steps), and there the fourth mode's section through the
  block saddle *rises* from the mode's position (3.987 at r = 0.11 to 3.991 at r = 0.27): the escape integral's
  ``|a L̄'|`` read that barrier as a slow descent (10 550 steps for the run's 969).  A saddle whose section
  holds a waiting mode back like this (:meth:`Landscape.holds_back`) is not where the run waits: from it the
  chain follows the optimiser's own flow (:class:`_Flow`: gradient descent at each step's effective rate) with
  the waiting modes held (:meth:`Landscape.held_gradient`: a chain's ``W_1 v_k`` and ``u_kᵀ W_L``, every unit's
  component along ``e_k`` for a network of units; frozen parameters at rest), and reads the waiting charts'
  rates, exits and profiles at the flowed point every :data:`RELAX_SEGMENT` of the run (or
  :data:`RELAX_GROWTH` of the time since the saddle was reached), piecewise constant in between.  Elsewhere
  the block saddle stands: following the flow at every saddle moved the later modes of ``mlp-tanh-teacher``
  late (+5.1 → +12.1 %, −1.3 → +14.0 %; the learned units, relaxing, lower the waiting modes' curvatures) and
  those of ``diagonal-correlated`` (1.7 → 3.5 %) — measured, docs/prediction.md.  The flow uses the network,
  its initial parameters, the data and the optimiser's rates, never the run; it stops at the run's last step.
* **Where an escape lands** (:meth:`Landscape._landing`; networks of units whose activation is not positively
  homogeneous: :func:`shockflow.models.units.balance_conserved`).  A chart's section moves every unit of its mode
  along the direction the mode escapes in at the origin, so the sections' minimum keeps that escape's balance between
  each unit's input and output weights.  Gradient flow keeps ``|a|² − |w|²`` of a unit ``a φ(w·x)`` only where
  ``φ(λz) = λφ(z)`` (identity, relu; linear and query–key units have no activation between their factors); a
  saturating unit loses it while its mode escapes (a Fourier pair ``W tanh(s a ψ)``: ``W`` outgrows ``a``) and lands
  elsewhere on the learned mode's valley, where the waiting modes' rates differ (the harmonics of a saturated pair
  are another mode's frequencies).  For those networks the chain continues from where the optimiser's descent lands:
  from the saddle the mode escaped from, the mode at :data:`ESCAPE_START` of its section minimum's distance, the
  waiting modes held, until the loss falls at less than :data:`ESCAPE_END` of its fastest rate.  The landing
  replaces the block saddle only where it lies below it, no waiting mode gained :data:`LEARNED_SHARE` of its
  strength on the way and none lost that share of what its section's minimum adds (units with biases fit part of a
  waiting mode's target: ``k05``, ``n05`` of round r17 lost modes to it); the chain's last saddle is still searched
  from the block saddle (:mod:`shockflow.prediction.saddle_plateau`; from the landing, closer to the plateau's
  stationary point, the search's bound relative to the start's gradient was not reached on
  ``committee-tanh-readout``).  Measured, the suite and 51 networks of rounds r16 and r17, one pair of runs: 216
  → 217 true transitions (``n06``'s last saddle now charted), 11 misses either way; median error 2.50 → 2.30 %,
  mean 9.54 → 8.70 %, within 10 %: 181 → 190; 20 modes better by more than 1.5 points, one worse (``o01``'s fifth,
  +1.0 → +6.8 %, a cross-chart pairing before); ``fourier-features`` 3.9 → 0.8 % (its third and fifth modes
  −11.4, +15.8 → −2.6, +0.8 %), the other Fourier nets' late fifth mode +31.1, +21.8 % → +2.2, −1.7 %, a cnn1d's
  third mode +18.3 → +3.2 %.  :data:`ESCAPE_END` 0.05, not 0.01: the same figures within 0.1 point (a gelu MLP on
  wine +0.4 → +9.1 % at 0.01, +0.2 % at 0.05) for 2.6x fewer gradients (``mlp-tanh-teacher``: 874 against 2273).
  Round r18 (22 networks made for this check, 19 of them landing): 7 misses either way, median 2.29 → 2.24 %,
  within 5 %: 48 → 53.  The cost is the descent's gradients: the forecast of ``mlp-tanh-teacher`` 3.7 → 5.0 s (its
  chain 1.65 → 3.14 s, the landings 1.62 s), ``mlp-erf-frozen-bias`` 4.1 → 5.4 s, ``fourier-features`` 2.1 → 2.3 s
  (profiled, load 0.3).  Not for chains (their held descent holds a waiting mode at the end layers only;
  measured worse: ``deep-linear-3``'s fourth mode +3.4 → +10.4 %, ``deep-linear-4`` a mode lost) nor, by the rule,
  for query–key heads, whose descent past the block saddle turns the learned units towards the waiting modes (r16's
  a04: two modes lost), which the chain reads from the block saddle ("Learned by the relaxation").
* :func:`chain_transitions` — the event loop in optimiser steps.  Per waiting chart and per step the
  log-distance grows by the rule's linearised factor at the saddle's curvature
  (:meth:`~shockflow.prediction.mapping.Optimiser.log_gains`; from rest on the first saddle, so the
  momentum transient is kept); the earliest chart to reach its exit escapes, the chain moves to the
  next saddle, the others keep what they accumulated.  Escape-integral charts advance along their
  profile at each saddle by the optimiser's flow rates (what the former "head start" did for one
  step of the chain).

**Assumptions.**  Each escape is short against the waits (the switch to the next saddle is taken at
the midpoint of the transition); waiting modes stay in their ridge's linear region until they escape;
a mode pushed back far below its start stays near the ridge (its log-distance may go negative,
nothing floors it).  Coupled modes whose saddle curvature is not captured by a 1-D chart (modes of
non-commuting data that rotate into each other) are outside this model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np

__all__ = ["Landscape", "Saddle", "SaddleFailure", "chain_transitions", "read_chain", "refine_minimum", "write_chain"]

#: block-coordinate sweeps over the active charts stop when a sweep lowers the loss by less than this
#: fraction of it (or after MAX_SWEEPS)
SWEEP_TOLERANCE, MAX_SWEEPS = 1e-4, 50
#: the joint minimiser (``Landscape(joint=True)``) stops when an L-BFGS step lowers the loss by less than this
#: fraction of the loss it started from (or after JOINT_MAX_ITER iterations)
JOINT_FTOL, JOINT_MAX_ITER = 1e-7, 2000
#: batched rounds of the minimum search on a chart's bracket, and how much each narrows it (refine_minimum)
REFINE_ROUNDS, REFINE_SHRINK = 6, 0.125
#: ... on an interpolated chart loss (no network pass: until the bracket is 1e-12 of the chart)
INTERPOLATED_ROUNDS = 16
#: a waiting chart's minimum at a saddle closer to its ridge than this fraction of its exit distance at the origin
#: is the ridge itself: the minimum search's resolution (REFINE_ROUNDS rounds narrowing REFINE_SHRINK from two of
#: its 32 scan cells leave 2.4e-7 of the box)
RIDGE = 1e-6
#: a waiting chart whose section minimum at a saddle holds less than this share of the strength its origin minimum
#: holds (Landscape.strength_share: the parameter truth's "half way") escapes there only by an instability
LEARNED_SHARE = 0.5
#: the forward-difference step of a waiting mode's unit-subspace Hessian (Landscape._unit_subspace), relative to the
#: saddle's size: the sample loss of relu units is piecewise quadratic, and a step that few samples' kinks fall within
#: reads their kinks as noise.  mlp-tanh-teacher's relu modes with a bias at n = 2048, top rates at the first saddle
#: for steps 1e-5, 1e-3, 1e-2, 3e-2: 7.89, 3.88, 3.30, 3.26 and 8.19, 2.46, 2.10, 2.12 (central differences at 1e-2:
#: 3.20, 2.05); a smooth net's rates move by O(step): tanh 4.098 -> 4.091, gelu 0.159 -> 0.161 from 1e-5 to 1e-2
SUBSPACE_STEP = 1e-2
#: the escape's push (chain_transitions): the fractions of the escaping chart's exit distance at which the force on the
#: waiting modes is read (each twice the last: the force of a cross term grows as a power of the escaping mode), and the
#: steps over which its growth rate is read before the switch
PUSH_FRACTIONS = 2.0 ** -np.arange(8.0)
PUSH_SLOPE = 16
#: the curvature stencil's half-width, as a fraction of the distance from the ridge to the minimum
STENCIL = 0.02
#: a relaxing chain reads the waiting charts at the flowed point every RELAX_SEGMENT of the run's steps, or every
#: RELAX_GROWTH of the steps since the escape it waits after, whichever is longer (chain_transitions)
RELAX_SEGMENT, RELAX_GROWTH = 0.02, 0.25
#: a waiting chart's section holds its mode back where it rises above the loss at the mode's position by more than
#: BARRIER of it, read at BARRIER_POINTS points of its profile ahead (Landscape.holds_back)
BARRIER, BARRIER_POINTS = 1e-9, 33
#: learned by the learned units' relaxation (Landscape.relaxation_crossings): after an escape the held flow from the
#: saddle is read over RELAX_EFOLDS e-folds of the escape's own growth per step (its time scale), at steps from
#: RELAX_FIRST of an e-fold on, each RELAX_FACTOR times the last
RELAX_EFOLDS, RELAX_FIRST, RELAX_FACTOR = 4.0, 0.125, math.sqrt(2.0)
#: where an escape lands (Landscape._landing): the held descent starts with the escaping mode at ESCAPE_START of its
#: section minimum's distance (inside the linear region, where the escape runs along the section) and lands where its
#: loss falls at less than ESCAPE_END of its fastest rate (the escape's fast fall is over); at most ESCAPE_STEPS
#: gradients, its step halved at most ESCAPE_HALVINGS times (each where a step would raise the loss)
ESCAPE_START, ESCAPE_END, ESCAPE_STEPS, ESCAPE_HALVINGS = 0.1, 0.05, 20000, 30


class SaddleFailure(RuntimeError):
    """A saddle of the chain could not be found (a run failure, exit 1): names the saddle and the chart."""


@dataclass(frozen=True)
class Saddle:
    """One saddle the chain visits: the charts already learned, the loss there, the step the chain
    reaches it, and per waiting chart its growth rate (1/γ*, per unit gradient-flow time; negative:
    pushed back) and log exit distance."""

    active: tuple[str, ...]
    loss: float
    step: float
    rates: dict = field(default_factory=dict)
    log_exit: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"active": list(self.active), "loss": float(self.loss), "step": float(self.step),
                "rates": {k: float(v) for k, v in self.rates.items()},
                "log_exit": {k: float(v) for k, v in self.log_exit.items()}}


@dataclass(frozen=True, eq=False)
class SaddleData:
    """What the landscape measured at one saddle (indices into the extraction's charts)."""

    active: tuple[int, ...]
    params: dict
    loss: float
    curvature: dict          # chart index -> κ_k(S) at the ridge (> 0 unstable)
    exit_distance: dict      # chart index -> quotient distance from the ridge to the minimum
    minimum: dict            # chart index -> (x_min, L̄(x_min), strength at x_min) on the chart at this saddle
    profiles: dict = field(default_factory=dict)  # chart index -> (x, rate) escape profile (escape-integral charts)
    split_share: dict = field(default_factory=dict)  # chart index -> ln of its unit split's share orthogonal to the learned
    # chart index -> (rates λ (m,), eigenvectors V (m, m), Vᵀb (m,)): the loss on the waiting mode's unit subspace
    # (every unit's component along its e_k) at this saddle, ``L ≈ L_0 + bᵀc − ½ cᵀ A c``, A's eigenpairs and the force
    # b the learned modes' cross terms put there (Landscape._unit_subspace)
    subspace: dict = field(default_factory=dict)
    # the block saddle of the sections, where the escape landed elsewhere (Landscape._landing; None: it is ``params``):
    # the chain's last saddle is searched from it (shockflow.prediction.saddle_plateau)
    block: dict | None = None


class Landscape:
    """The saddles of a network's loss on its charts (module docstring)."""

    def __init__(self, model, geometry: str, kwargs: dict, chart_key: str, extraction, shocks, X, y,
                 escape_charts: Sequence[int] = (), joint: bool = False, relax: bool = True,
                 descent_rate: float | None = None):
        self.model = model.copy()
        self.geometry = geometry
        self.kwargs = dict(kwargs)
        self.chart_key = chart_key
        self.charts = extraction.charts
        self.shocks = shocks
        self.X, self.y = X, y
        self.escape_charts = frozenset(escape_charts)
        from shockflow.geometry import geometry_class

        self._saddle_keyword = getattr(geometry_class(geometry), "saddle_keyword", None)
        self._memo: dict[tuple, SaddleData] = {}
        self._extent: dict[int, float] = {}
        self._stencil = [STENCIL * max(abs(sh.distance(c.x_min)), 1e-300) for c, sh in zip(self.charts, shocks)]
        self._spaces = self._find_mode_spaces() if self._saddle_keyword is not None or joint else None
        self._mode_spaces = self._spaces if joint else None
        self._direct: set[int] = set()                # charts whose loss the minimum search does not interpolate
        self._warm_direct: set[int] = set()           # ... on the warm bracket (its interpolant costs more passes)
        self._stencil_values: dict[int, tuple] = {}   # chart -> (geo, the loss at its stencil points on it)
        self._holding = self._find_holding() if relax and not joint else None
        self._held: dict[tuple, tuple] = {}            # waiting modes -> the bases that hold them (_held_bases)
        self._unit_loss = None                         # the network's loss for _unit_subspace (NetworkLoss)
        self._initial_units = None                     # the unit matrix at the initial parameters (holders)
        self._start_strength: dict[int, float] = {}    # chart -> its strength at its start (strength_share)
        # where an escape lands (_landing): the held descent's first step, the optimiser's largest effective rate;
        # taken for networks of units whose balance gradient flow does not keep (a saturating activation)
        self._descent_rate = descent_rate if descent_rate is not None and descent_rate > 0 else None
        from shockflow.models.units import balance_conserved

        self._lands = (self._descent_rate is not None and self._holding is not None and self._holding[0] == "units"
                       and not balance_conserved(self.model))

    # -- the relaxing flow (chain_transitions, _Flow) --------------------------------------------------
    @property
    def relaxes(self) -> bool:
        """Whether the chain can follow the flow with the waiting modes held from a saddle that holds one of them
        back (:meth:`holds_back`): the automatic charts, where the landscape knows which parameters carry a
        waiting mode (:meth:`_find_holding`)."""
        return self._holding is not None

    def _find_holding(self):
        """What holds a waiting mode: ``("chain", first and last weight keys, V, U)`` (a chain's mode enters
        through ``W_1 v_k`` and leaves through ``W_Lᵀ u_k``) or ``("units", layout, spaces)`` (the component
        ``e_k`` of every unit); ``None`` for any other geometry (its charts' sections are the only directions
        the landscape knows)."""
        from shockflow.geometry import geometry_class
        from shockflow.geometry.auto import AutoGeometry
        from shockflow.models.units import CHAIN_MODELS, chain_layout

        if not hasattr(self.model, "loss_and_grad") or not issubclass(geometry_class(self.geometry), AutoGeometry):
            return None
        if getattr(self.model, "name", None) in CHAIN_MODELS:
            modes = self.kwargs.get("modes")
            if modes is None:
                return None
            E = np.asarray(modes, dtype=np.float64)
            E = E[:, None] if E.ndim == 1 else E
            keys = chain_layout(self.model).keys
            d = self.model.input_dim
            sel = [int(c.selector if c.selector is not None else 0) for c in self.charts]
            V = E[:d, sel] / np.linalg.norm(E[:d, sel], axis=0)
            U = E[d:, sel] / np.linalg.norm(E[d:, sel], axis=0)
            return ("chain", keys[0], keys[-1], V, U)
        if self._spaces is None:
            return None
        return ("units",) + tuple(self._spaces)

    def held_gradient(self, grads: dict, active) -> dict:
        """The gradient ``grads`` with the waiting modes' parameters held (:meth:`_find_holding`) and the frozen
        parameters (``frozen``) at rest."""
        out = {key: np.array(v, dtype=np.float64) for key, v in grads.items()}
        waiting = tuple(k for k in range(len(self.charts)) if k not in active)
        if waiting and self._holding[0] == "chain":
            first, last = self._holding[1:3]
            Q_in, Q_out = self._held_bases(waiting)
            out[first] = out[first] - (out[first] @ Q_in) @ Q_in.T
            out[last] = out[last] - Q_out @ (Q_out.T @ out[last])
        elif waiting:
            layout = self._holding[1]
            (Q,) = self._held_bases(waiting)
            g = self.model.grad_vector(out)
            G = layout.unit_matrix(g)
            g[layout.index] = (G - Q @ (Q.T @ G)).T
            keys = list(self.model.params)   # grad_vector's layout
            cuts = np.cumsum([out[key].size for key in keys])[:-1]
            out = {key: part.reshape(out[key].shape) for key, part in zip(keys, np.split(g, cuts))}
        for key in self.kwargs.get("frozen", ()) or ():
            if key in out:
                out[key] = np.zeros_like(out[key])
        return out

    def _held_bases(self, waiting: tuple) -> tuple:
        """Orthonormal bases of what holds the ``waiting`` modes (:meth:`held_gradient`), once per set of waiting
        modes (the flow asks at every step): a chain's input and output directions, or the units' mode spaces."""
        bases = self._held
        if waiting not in bases:
            if self._holding[0] == "chain":
                V, U = self._holding[3:5]
                bases[waiting] = (np.linalg.qr(V[:, list(waiting)])[0], np.linalg.qr(U[:, list(waiting)])[0])
            else:
                spaces = self._holding[2]
                bases[waiting] = (np.linalg.qr(np.stack([spaces[k] for k in waiting], axis=1))[0],)
        return bases[waiting]

    def holds_back(self, saddle: SaddleData, state: dict) -> bool:
        """Whether a waiting escape-integral chart's section through ``saddle`` rises from the chart's position
        ``state[k]`` anywhere before the half-learned end of its profile (by more than :data:`BARRIER` of the
        loss): the mode would be pushed back there, so the run cannot wait at this saddle for it to escape
        (the escape integral's ``|a L̄'|`` would read the rise as a descent).  The chain then follows the
        relaxing flow from the saddle (:func:`chain_transitions`)."""
        for k, (x, _) in saddle.profiles.items():
            c = self.charts[k]
            x = np.abs(np.asarray(x)) if c.mirrored else np.asarray(x, dtype=np.float64)
            here = abs(state[k]) if c.mirrored else state[k]
            sgn = 1.0 if x[-1] >= x[0] else -1.0
            ahead = x[sgn * x > sgn * here]
            if ahead.size == 0:
                continue
            pick = np.unique(np.linspace(0, ahead.size - 1, BARRIER_POINTS).round().astype(int))
            pts = np.concatenate([[here], ahead[pick]])
            L = self._geo(saddle.params, k, saddle.active).chart_loss(pts[:, None], self.X, self.y)
            if np.any(L[1:] - L[0] > BARRIER * abs(L[0])):
                return True
        return False

    # -- geometry at a reference --------------------------------------------------------------------
    def _geo(self, params, k: int, active: Sequence[int]):
        from shockflow.prediction.extraction import bind_geometry

        ref = self._reference(params)
        kw = dict(self.kwargs)
        sel = self.charts[k].selector
        if sel is not None:
            kw[self.chart_key] = sel
        if self._saddle_keyword is not None:
            kw[self._saddle_keyword] = tuple(self.charts[i].selector for i in self.holders(params, active) if i != k)
        if k in self._extent:
            kw["extent"] = self._extent[k]
        geo = bind_geometry(self.geometry, ref, kw, self.X, self.y)
        # the chart box of the first pass must fit (it may have been widened), and so must the curvature stencil
        # (it reaches past the box where the ridge lies near the box's end)
        need = max(abs(self.charts[k].upper), abs(self.charts[k].lower), *np.abs(self._stencil_points(k)))
        for _ in range(8):
            if geo.chart.upper[0] >= need or not hasattr(geo, "extent"):
                break
            kw["extent"] = self._extent[k] = 4.0 * float(geo.extent)
            geo = bind_geometry(self.geometry, ref, kw, self.X, self.y)
        return geo

    def holders(self, params, active: Sequence[int]) -> tuple[int, ...]:
        """The modes of ``active`` that hold their units at ``params``: those whose content in the units (``|Uᵀ e_i|``,
        every unit's component along the mode's direction) has grown from its initial value at least half the way, in
        the log, to the chart's exit at the origin: ``ln(c_i/c_i(0)) ≥ ½ ln(d_exit/d_0)``.  A mode the chain counts as
        learned at a saddle where its section's minimum lies next to its ridge (its exit there is no farther than
        where it already is, so it escapes at once) keeps content of the initial scale: it learned nothing in any
        unit, and the units it spans stay free for the waiting modes.  (``attention-qk-4x2``, d_k = 2, seed 2: the
        third mode's minimum at the first saddle is 7e-4 along the one free unit combination, where the second mode
        grows; projecting the second mode's section off that combination as well left it nothing, and the chain
        predicted it never.)  With vanishing initialisation that content is zero.  Every mode of ``active`` where
        the charts share no units."""
        if getattr(self, "_spaces", None) is None or not active:   # (None while the spaces are being found)
            return tuple(active)
        layout, spaces = self._spaces
        now = layout.unit_matrix(self._reference(params).parameter_vector())
        if self._initial_units is None:
            self._initial_units = layout.unit_matrix(self.model.parameter_vector())
        out = []
        for i in active:
            c, sh = self.charts[i], self.shocks[i]
            start = float(np.linalg.norm(self._initial_units.T @ spaces[i]))
            grown = float(np.linalg.norm(now.T @ spaces[i])) / max(start, 1e-300)
            d0, d_exit = sh.distance(c.x0), sh.distance(c.x_min)
            if not (d0 > 0 and d_exit > d0) or grown ** 2 >= d_exit / d0:
                out.append(i)
        return tuple(out)

    def _reference(self, params):
        """The network at ``params``, one object for the charts bound there in turn (the last point's kept): the
        waiting charts of a saddle are then charts of one set of modes on one network, and share the functions of
        their learned strengths (:meth:`shockflow.geometry.auto.AutoGeometry._set_state`).  The geometries only read
        it."""
        key = b"".join(np.ascontiguousarray(params[key], dtype=np.float64).tobytes() for key in self.model.params)
        kept = getattr(self, "_last_reference", None)
        if kept is not None and kept[0] == key:
            return kept[1]
        ref = self.model.copy()
        for name in ref.params:
            ref.params[name][...] = params[name]
        self._last_reference = (key, ref)
        return ref

    def _minimum(self, geo, k: int, extra=None, guess=None) -> tuple:
        """``(x, L̄(x), L̄(extra))``: the chart's minimum on the side of its start and the loss there: a 33-point
        scan of the chart box (widened x2 while the minimum sits at its far end; the points ``extra`` ride on
        its first call), then :func:`refine_minimum` in the bracket.  With a ``guess`` (where the minimum was:
        the chart's coordinate in a later sweep, its minimum at the previous saddle) a bracket around it first
        (:meth:`_local_minimum`); the scan if the minimum is not inside it.  Where the chart loss is interpolable
        (:func:`shockflow.geometry.chart_interpolant.interpolable`: a network's loss, not data moments) the scan,
        the refinement and the ``extra`` points read one Chebyshev interpolant of stated accuracy on the scanned
        box (:meth:`_reader`): its nodes are the only network passes."""
        from shockflow.prediction.extraction import downhill_index

        c = self.charts[k]
        lo, hi = (0.0, c.upper) if c.mirrored else (c.lower, c.upper)
        lo = max(lo, geo.chart.lower[0])
        extra = np.zeros(0) if extra is None else np.asarray(extra, dtype=np.float64)
        if guess is not None and math.isfinite(guess):
            found = self._local_minimum(geo, lo, min(hi, geo.chart.upper[0]), float(guess), extra, k)
            if found is not None:
                return found
        extra_values = None
        for _ in range(6):
            hi = min(hi, geo.chart.upper[0])
            pts = np.linspace(lo, hi, 33)
            f, interpolated = self._reader(geo, k, lo, hi)
            if extra_values is None and interpolated:
                L, extra_values = f(pts), f(extra)
            elif extra_values is None:
                values = f(np.concatenate([pts, extra]))
                L, extra_values = values[:pts.size], values[pts.size:]
            else:
                L = f(pts)
            j = int(np.argmin(L)) if c.mirrored else downhill_index(geo, pts, L, c.x0, self.X, self.y)
            if j < pts.size - 2 or hi >= geo.chart.upper[0]:
                break
            hi = lo + 2.0 * (hi - lo)
        a, b = pts[max(j - 1, 0)], pts[min(j + 1, pts.size - 1)]
        x, value = refine_minimum(f, a, b, rounds=INTERPOLATED_ROUNDS if interpolated else REFINE_ROUNDS)
        if not value <= L[j]:
            x, value = float(pts[j]), float(L[j])
        return x, value, extra_values

    def _reader(self, geo, k: int, lo: float, hi: float, start: int = 16, max_degree: int = 32, refused=None):
        """``(read, interpolated)``: the chart loss at 1-D points on ``[lo, hi]`` as the minimum search reads it:
        from a Chebyshev interpolant of the box (:func:`~shockflow.geometry.chart_interpolant.interpolated_reader`)
        where the loss is interpolable and the fit converges by ``max_degree``, else evaluated point by point.  The
        cold search's default ``max_degree = 32`` keeps the fit within the 51 passes of the scan and refinement it
        replaces (``deep-mlp-tanh``'s chart losses needed 65); a chart whose fit once did not converge (a kinked
        loss, a high degree) is evaluated directly from then on in that kind of search (``refused``: the set of
        such charts, the cold search's by default)."""
        from shockflow.geometry.chart_interpolant import interpolable, interpolated_reader

        def direct(x):
            return geo.chart_loss(np.asarray(x, dtype=np.float64).reshape(-1, 1), self.X, self.y)

        refused = self._direct if refused is None else refused
        if k in refused or not interpolable(geo):
            return direct, False
        read = interpolated_reader(direct, lo, hi, start=start, max_degree=max_degree)
        if read is None:
            refused.add(k)
            return direct, False
        return read, True

    def _local_minimum(self, geo, lo: float, hi: float, guess: float, extra: np.ndarray, k=None):
        """:meth:`_minimum` warm-started at ``guess`` (``None``: the minimum is not well inside the bracket).  The
        bracket is a sixteenth of the scan's around the guess (no scan and two rounds fewer, its last bracket 4x the
        cold search's, both far below what the parabola's vertex resolves); where the loss is interpolated
        (:meth:`_reader`), the same bracket read from one interpolant of ``N = 8`` (9 passes against the direct
        search's 12; a chart where it does not converge is searched directly from then on).  A wider bracket would take
        a local minimum the scan passes over for a lower one (measured on ``fourier-features``: a saddle 0.6 %
        higher, a step 0.2 % early), so it stays this narrow."""
        half = (hi - lo) / 32.0 / 16.0
        a, b = max(lo, guess - half), min(hi, guess + half)
        if not b > a:
            return None
        margin = 0.02 * (b - a)
        if k is not None:
            # no more nodes than the direct search's 12 passes (N = 8): else direct from then on for this chart
            f, interpolated = self._reader(geo, k, a, b, start=8, max_degree=8, refused=self._warm_direct)
            if interpolated:
                x, value = refine_minimum(f, a, b, rounds=INTERPOLATED_ROUNDS)
                if not (x - a > margin or a <= lo) or not (b - x > margin or b >= hi) or not math.isfinite(value):
                    return None
                return x, value, f(extra)
        extra_values = []

        def f(x):
            if extra_values:
                return geo.chart_loss(x[:, None], self.X, self.y)
            values = geo.chart_loss(np.concatenate([x, extra])[:, None], self.X, self.y)
            extra_values.append(values[x.size:])
            return values[:x.size]

        x, value = refine_minimum(f, a, b, rounds=REFINE_ROUNDS - 2)
        if not (x - a > margin or a <= lo) or not (b - x > margin or b >= hi) or not math.isfinite(value):
            return None
        return x, value, extra_values[0]

    def _set(self, params, geo, x: float) -> dict:
        section = geo.section(np.array([[x]]))
        return {key: np.array(np.asarray(section[key])[0]) for key in params}

    def _stencil_step(self, k: int) -> tuple[float, float, bool]:
        """``(a, h, one_sided)`` of chart ``k``'s curvature stencil: the metric at its ridge, the step (a fixed
        width in the chart's flat coordinate) and whether the stencil lies on one side of the ridge (a mirrored
        chart, ``r ≥ 0``, whose ridge is within the stencil's reach of 0)."""
        c, sh = self.charts[k], self.shocks[k]
        a = float(np.interp(sh.location, c.metric_x, c.metric_a))
        h = self._stencil[k] * np.sqrt(max(a, 1e-300))
        return a, h, bool(c.mirrored and abs(sh.location) < 2.0 * h)

    def _stencil_points(self, k: int) -> np.ndarray:
        """The five points of :meth:`_curvature` on chart ``k`` (around its ridge, fixed width; from the ridge
        outwards where the stencil is one-sided)."""
        c, sh = self.charts[k], self.shocks[k]
        _, h, one_sided = self._stencil_step(k)
        if one_sided:
            return abs(sh.location) + h * np.arange(5.0)
        x = sh.location + h * np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
        return np.abs(x) if c.mirrored else x

    def _curvature(self, geo, k: int) -> float:
        """``κ = −Hess_g L̄`` at the chart's ridge, ``a(x_s) · (−L̄'')`` from a five-point stencil of fixed
        width (the ridge is a stationary point of the flow, so the metric's derivative term vanishes).  The
        loss at :meth:`_stencil_points` is the one evaluated along with the chart's minimum on the same
        ``geo`` (``_stencil_values``), or evaluated here.

        On a mirrored chart whose ridge is at 0 the stencil is one-sided (exact for quartics, like the central
        one): at a saddle of the chain the section's loss has a slope at the ridge, ``L̄ = L̄_0 + g r − ½ κ r² + …``
        (the learned modes' cross terms), which moves the ridge by ``g/κ`` and leaves the rate at ``κ``; read
        at ``|r|`` a central stencil takes ``g|r|`` for curvature, ``−28 g/(12 h)``: on ``mlp-tanh-teacher`` at
        seed 2 the fifth mode's ``κ`` read 0.245 at the third saddle where ``L̄''`` is −0.647 (``g`` = 0.0048,
        ``h`` = 0.028), and its escape was predicted at step 1116 against the run's 445."""
        a, h, one_sided = self._stencil_step(k)
        held = self._stencil_values.pop(k, None)
        if held is not None and held[0] is geo:
            L = held[1]
        else:
            L = geo.chart_loss(self._stencil_points(k)[:, None], self.X, self.y)
        if one_sided:
            d2 = (35 * L[0] - 104 * L[1] + 114 * L[2] - 56 * L[3] + 11 * L[4]) / (12.0 * h ** 2)
        else:
            d2 = (-L[0] + 16 * L[1] - 30 * L[2] + 16 * L[3] - L[4]) / (12.0 * h ** 2)
        return float(-a * d2)

    def saddle(self, active: tuple[int, ...]) -> SaddleData:
        """The saddle with the charts ``active`` learned, in the order they escaped (memoised)."""
        if active in self._memo:
            return self._memo[active]
        block = None    # the block saddle of the sections, where the escape lands elsewhere (_landing)
        if not active:
            params = {k: np.array(v) for k, v in self.model.params.items()}
        elif self._mode_spaces is not None:
            # the new chart to its minimum along its section, then every free parameter jointly
            params = self._move(dict(self.saddle(active[:-1]).params), active[-1], active,
                                guess=self._minimum_before(active))
            params = self._joint_minimum(params, active)
        else:
            params = self._sweeps(dict(self.saddle(active[:-1]).params), active, new=True)
            landed = self._landing(params, active) if self._lands else None
            if landed is not None:
                block, params = params, landed
        guesses = self.saddle(active[:-1]).minimum if active else None
        out = self.measure(params, active, guesses)
        if block is not None:
            out = replace(out, block=block)
        self._memo[active] = out
        return out

    def _sweeps(self, params: dict, active: tuple[int, ...], new: bool) -> dict:
        """Block-coordinate descent on the active charts' sections from ``params`` until a sweep lowers the loss by
        less than :data:`SWEEP_TOLERANCE` of it: ``new``, the newest chart moved first from where its minimum lay
        before it escaped (:meth:`_minimum_before`), else every chart from its own coordinate."""
        order = [active[-1]] + list(active[:-1]) if new else list(active)
        previous = math.inf
        for sweep in range(MAX_SWEEPS):
            for i in order:
                first = new and sweep == 0 and i == active[-1]
                params = self._move(params, i, active, warm=not first,
                                    guess=self._minimum_before(active) if first else None)
            loss = self._total_loss(params)
            if len(order) == 1 or previous - loss <= SWEEP_TOLERANCE * abs(loss):
                break
            previous = loss
            order = list(active)
        return params

    def _landing(self, block: dict, active: tuple[int, ...]) -> dict | None:
        """Where the escape of the newest active mode lands (module docstring, "Where an escape lands"): the descent
        from the saddle it escaped from, that mode placed at :data:`ESCAPE_START` of its section minimum's distance,
        the waiting modes held (:meth:`held_gradient`), at the optimiser's effective rate (halved where a step would
        raise the loss), until its loss falls at less than :data:`ESCAPE_END` of its fastest rate, past half the drop
        to ``block``'s loss (the block saddle of the sections).  None (the block saddle stands) where it does not land
        below ``block``'s loss (the sections hold the learned mode: a linear escape ends at their minimum), where a
        waiting mode gained :data:`LEARNED_SHARE` of its strength on the way (the learned units' relaxation took it
        along, which the chain reads from the block saddle: "Learned by the relaxation") or lost that share of what
        its section's minimum adds (:meth:`_to_learn`), or where the descent does not land within
        :data:`ESCAPE_STEPS` gradients."""
        before = self.saddle(active[:-1]).params
        k = active[-1]
        geo = self._geo(before, k, active)
        try:
            x_min = self._minimum(geo, k, guess=self._minimum_before(active))[0]
        except (ValueError, FloatingPointError):
            return None
        model = self.model.copy()
        for key, value in self._set(before, geo, ESCAPE_START * x_min).items():
            model.params[key][...] = value
        target = self._total_loss(block)
        eta, halvings, fastest = self._descent_rate, 0, 0.0
        with np.errstate(over="ignore", invalid="ignore"):
            value, grads = model.loss_and_grad(self.X, self.y)
            value = float(value)
            half = target + 0.5 * (value - target)
            for _ in range(ESCAPE_STEPS):
                grads = self.held_gradient(grads, active)
                here = {key: np.array(v) for key, v in model.params.items()}
                while True:
                    for key in model.params:
                        model.params[key][...] = here[key] - eta * grads[key]
                    trial, trial_grads = model.loss_and_grad(self.X, self.y)
                    if math.isfinite(trial) and trial <= value:
                        break
                    halvings += 1
                    if halvings > ESCAPE_HALVINGS:
                        return None
                    eta *= 0.5
                rate = (value - float(trial)) / eta     # the loss's fall per unit of flow time
                value, grads = float(trial), trial_grads
                fastest = max(fastest, rate)
                if value <= half and rate <= ESCAPE_END * fastest:
                    break
            else:
                return None
        if not value < target:
            return None
        landed = {key: np.array(v) for key, v in model.params.items()}
        waiting = [j for j in range(len(self.charts)) if j not in active]
        if waiting:
            at_block, at_landing = self._strengths(block, active, waiting), self._strengths(landed, active, waiting)
            for j in waiting:
                whole = self.saddle(()).minimum[j][2] - self.start_strength(j)
                if whole != 0.0 and (at_landing[j] - at_block[j]) / whole >= LEARNED_SHARE:
                    return None
                # nor where the landing took a waiting mode's target: the strength its section's minimum would add
                # there is less than LEARNED_SHARE of what it adds at the block saddle (the learned units' biases
                # fit part of it: a mode the chain then cannot escape, and the parameter truth, which reads the
                # half-learned point against that minimum, would call unlearned)
                if self._to_learn(landed, active, j) < LEARNED_SHARE * self._to_learn(block, active, j):
                    return None
        return landed

    def _to_learn(self, params: dict, active: tuple[int, ...], k: int) -> float:
        """The strength waiting chart ``k``'s section minimum through ``params`` adds to its strength there (0 where
        the minimum cannot be found)."""
        from shockflow.prediction.truth import strength_along

        geo = self._geo(params, k, active)
        try:
            x_min = self._minimum(geo, k)[0]
        except (ValueError, FloatingPointError):
            return 0.0
        here = float(np.asarray(geo.coordinates({key: params[key] for key in self.model.params})).ravel()[0])
        s = strength_along(geo, np.array([[here], [x_min]]), self.X)
        return abs(float(s[1]) - float(s[0]))

    def measure(self, params, active: tuple[int, ...], guesses=None) -> SaddleData:
        """What the chain reads at the point ``params`` with the charts ``active`` learned: its loss and, per
        waiting chart, the curvature at its ridge, its minimum and exit distance along its section through
        ``params`` and (escape-integral charts) its escape profile.  ``guesses``: chart -> minimum where the
        chart's minimum was last found (a warm bracket)."""
        loss = self._total_loss(params)
        curvature, exits, profiles, minima, subspace = {}, {}, {}, {}, {}
        # a mode shared by two or more units (with one unit the subspace is the chart's own line, and the chart's
        # curvature is the rate, as on every 1-D chart: the automatic charts of the diagonal net are gram's)
        shared = bool(active) and self._spaces is not None and self._spaces[0].units >= 2
        for k in range(len(self.charts)):
            if k in active:
                continue
            geo = self._geo(params, k, active)
            try:
                guess = guesses[k][0] if guesses is not None and k in guesses else None
                x_min, L_min, stencil = self._minimum(geo, k, extra=self._stencil_points(k), guess=guess)
                self._stencil_values[k] = (geo, stencil)
                curvature[k] = self._curvature(geo, k)
                if shared:
                    subspace[k] = self._unit_subspace(geo)
                exits[k] = self.shocks[k].distance(x_min)
                from shockflow.prediction.truth import strength_along   # the strength the truth reads

                minima[k] = (x_min, L_min, float(strength_along(geo, np.array([[x_min]]), self.X)[0]))
                if k in self.escape_charts and active:
                    from shockflow.prediction.extraction import escape_profile

                    c = self.charts[k]
                    x0 = abs(c.x0) if c.mirrored else c.x0
                    profiles[k] = escape_profile(geo, x0, x_min, L_min, self.X, self.y,
                                                 path_loss=self._path_loss(geo, x0, x_min))
            except (ValueError, FloatingPointError) as exc:
                raise SaddleFailure(self._where(active, k) + f": {exc}") from None
        if not (math.isfinite(loss) and all(math.isfinite(v) for v in curvature.values())):
            bad = [self.charts[k].label for k, v in curvature.items() if not math.isfinite(v)]
            raise SaddleFailure(self._where(active, None) + f": the loss ({loss:.6g}) or the curvature of chart(s) "
                                f"{', '.join(bad) or '-'} is not finite")
        return SaddleData(active, params, loss, curvature, exits, minima, profiles, self._split_share(params, active),
                          subspace)

    def _unit_subspace(self, geo):
        """The loss on waiting mode k's unit subspace at a saddle, ``c ↦ L(θ_b + Σ_i c_i e_k^{(i)})`` (``θ_b`` the
        saddle with the mode's component removed from every unit, ``e_k^{(i)}`` its direction in unit i): its
        Hessian ``−A`` (forward differences of the gradient: ``m + 1`` gradients) and gradient ``b`` at ``c = 0``,
        as ``(λ, V, Vᵀb)`` with
        ``A = V diag(λ) Vᵀ``.  The chart's section is one direction of this space (the split ``ĉ``), and its loss
        along it has the slope ``b·ĉ`` and curvature ``ĉᵀAĉ``; the mode itself moves in all of it (docs/theory.md §6,
        "The saddle chain": the stationary point of the subspace, ``A⁻¹b``, is where the learned modes' cross terms
        push it, and each of A's directions grows at its own rate)."""
        from shockflow.prediction.saddle_plateau import NetworkLoss

        layout = self._spaces[0]
        if self._unit_loss is None:
            self._unit_loss = NetworkLoss(self.model, self.X, self.y)
        loss = self._unit_loss
        e, base = np.asarray(geo._e, dtype=np.float64), np.asarray(geo._base, dtype=np.float64)
        m = layout.units
        g0 = loss.grad(base)
        h = SUBSPACE_STEP * max(1.0, float(np.linalg.norm(base)))      # e is a unit vector: so is each unit's
        H = np.empty((m, m))
        for i in range(m):
            point = base.copy()
            point[layout.index[i]] += h * e
            H[:, i] = layout.unit_matrix((loss.grad(point) - g0) / h).T @ e
        b = layout.unit_matrix(g0).T @ e
        lam, V = np.linalg.eigh(-0.5 * (H + H.T))
        return lam, V, V.T @ b

    def transit_forces(self, here: SaddleData, j: int, waiting, fractions) -> dict:
        """The force on each ``waiting`` mode's unit subspace while chart ``j`` escapes from ``here``: per chart,
        ``(len(fractions), m)``, the gradient along its ``e_k`` in every unit (its component removed, as
        :meth:`_unit_subspace` reads ``b``) at the points of ``j``'s section through ``here`` a fraction ``f`` of the
        quotient distance from its ridge to its minimum, less the same at ``f = 0`` (the force ``here`` already puts
        there).  :func:`chain_transitions` integrates it over the escape (module docstring, "The escape's push")."""
        from shockflow.geometry.flat import flatten
        from shockflow.prediction.saddle_plateau import NetworkLoss

        layout, spaces = self._spaces
        if self._unit_loss is None:
            self._unit_loss = NetworkLoss(self.model, self.X, self.y)
        forces = {k: np.empty((np.size(fractions) + 1, layout.units)) for k in waiting}
        try:
            geo = self._geo(here.params, j, here.active)
            xs = _distance_points(self.shocks[j], float(here.minimum[j][0]), np.concatenate([[0.0], fractions]))
            for i, x in enumerate(xs):
                theta = flatten(self.model, self._set(here.params, geo, x))
                units = layout.unit_matrix(theta)
                for k in waiting:
                    e = spaces[k]
                    base = theta.copy()
                    base[layout.index] -= np.outer(units.T @ e, e)
                    forces[k][i] = layout.unit_matrix(self._unit_loss.grad(base)).T @ e
        except (ValueError, FloatingPointError) as exc:
            raise SaddleFailure(self._where(here.active, j) + f": the force of its escape on the waiting modes: {exc}") \
                from None
        bad = [self.charts[k].label for k, F in forces.items() if not np.all(np.isfinite(F))]
        if bad:
            raise SaddleFailure(self._where(here.active, j) + f": the force of its escape on chart(s) {', '.join(bad)} "
                                "is not finite")
        return {k: F[1:] - F[0] for k, F in forces.items()}

    def strength_share(self, here: SaddleData, k: int) -> float:
        """The share of its origin minimum's strength that waiting chart ``k``'s section minimum holds at the saddle
        ``here``, counted from the chart's strength at its start: ``(s_S − s_0)/(s_∅ − s_0)`` (the strengths
        :func:`shockflow.prediction.truth.strength_along` reads; NaN where they are not known or the chart gains
        nothing at the origin).  :func:`chain_transitions` lets a mode whose share is below :data:`LEARNED_SHARE`
        escape only by an instability (module docstring, "Forced, not learned")."""
        if not here.active or k not in here.minimum:
            return 1.0
        s0 = self.start_strength(k)
        target = self.saddle(()).minimum[k][2] - s0
        gained = here.minimum[k][2] - s0
        if not (math.isfinite(target) and math.isfinite(gained)) or target == 0.0:
            return math.nan
        return gained / target

    def start_strength(self, k: int) -> float:
        """Chart ``k``'s strength at its start (its ``x0`` on the origin's section), the strength the parameter truth
        counts half way from."""
        if k not in self._start_strength:
            from shockflow.prediction.truth import strength_along

            geo = self._geo(self.model.params, k, ())
            self._start_strength[k] = float(strength_along(geo, np.array([[self.charts[k].x0]]), self.X)[0])
        return self._start_strength[k]

    def relaxation_crossings(self, here: SaddleData, start: float, e_fold: float, optimiser, waiting) -> dict:
        """Per waiting chart, the step at which its strength crosses half way from its start to its section
        minimum's at ``here`` while the learned units relax from ``here`` (the flow with the waiting modes held,
        :class:`_Flow`, reached at step ``start``), read over ``RELAX_EFOLDS`` e-folds of ``e_fold`` steps (module
        docstring, "Learned by the relaxation"); charts that do not cross within it are absent."""
        targets = {}
        for k in waiting:
            if k not in here.minimum:
                continue
            s0 = self.start_strength(k)
            s_min = here.minimum[k][2]
            if math.isfinite(s0) and math.isfinite(s_min) and s_min != s0:
                targets[k] = (s0 + 0.5 * (s_min - s0), math.copysign(1.0, s_min - s0))
        if not targets or not (math.isfinite(e_fold) and e_fold > 0):
            return {}
        flow = _Flow(self, here, here.active, start, optimiser)
        end = min(start + RELAX_EFOLDS * e_fold, float(flow.rates.size))

        def gaps(t):
            params = flow.params_at(t)
            strength = self._strengths(params, here.active, targets)
            return {k: sign * (strength[k] - target) for k, (target, sign) in targets.items()}

        t_last, last = start, gaps(start)
        out, t = {}, start + RELAX_FIRST * e_fold
        while t_last < end and len(out) < len(targets):
            t = min(t, end)
            now = gaps(t)
            for k, gap in now.items():
                if k not in out and last[k] < 0.0 <= gap:
                    out[k] = t_last + (t - t_last) * (-last[k]) / (gap - last[k])
            # a relaxation slows down as it goes: where no strength left, at its pace since the last reading, would
            # reach its target within the window, none will (the flow costs a gradient a step)
            pace = {k: (now[k] - last[k]) / (t - t_last) for k in now if k not in out}
            if all(p <= 0.0 or t + (-now[k]) / p > end for k, p in pace.items()):
                break
            t_last, last = t, now
            t = start + (t - start) * RELAX_FACTOR
        return out

    def _strengths(self, params, active, charts) -> dict:
        """The ``charts``' strengths at ``params`` (the parameter truth's), every mode at once where the charts are
        of one set of modes (``function_strengths``: 1 + K forward passes, not K²)."""
        geos = {k: self._geo(params, k, active) for k in charts}
        lead = next(iter(geos.values()))
        if hasattr(lead, "function_strengths") and all(lead.same_modes(g) for g in geos.values()):
            every = lead.function_strengths(params, self.X)
            return {k: float(every[int(g.mode)]) for k, g in geos.items()}
        return {k: float(g.function_strength(params, self.X)) for k, g in geos.items()}

    def learned_strengths(self) -> dict[str, float]:
        """Each chart's mode strength where every chart is learned: the block-coordinate minimum of all the charts'
        sections from the initial parameters (:meth:`_sweeps`, the charts in the extraction's order), read as the
        parameter truth reads a snapshot (:func:`shockflow.prediction.truth.strength_of` on the chart bound at the
        initial parameters).  It is where a run that learns every mode ends (``diagonal-correlated``: 32.0, 12.0,
        4.00, 1.40 against the run's end 32.0, 12.0, 4.00, 1.40; the sections' minima at the saddles the modes escape
        from are 12.2, 3.61, 1.17 for the last three), and it depends on the landscape alone, not on the order or
        the steps the chain predicts.  Only the charts that minimum learns: those it moves past their ridge at the
        origin, at least half way in the log from their start to their exit there (``d² ≥ d0 d_exit`` in the
        quotient distance from the ridge: the rule of :meth:`holders`).  Block-coordinate descent can leave a mode on
        its saddle, stable there once the others are learned, which a run may still learn by another way (a gelu
        CNN's second mode: 2.4e-4 there, the run's end 0.97, its section minimum at the origin 0.91).  ``{}`` where
        the sweeps find no minimum."""
        from shockflow.prediction.truth import strength_of

        every = tuple(range(len(self.charts)))
        initial = {k: np.array(v) for k, v in self.model.params.items()}
        try:
            learned = self._sweeps(dict(initial), every, new=False)
        except SaddleFailure:
            return {}
        out = {}
        for k in every:
            c, geo = self.charts[k], self._geo(initial, k, ())
            x = float(np.asarray(geo.coordinates(learned)).ravel()[0])
            if c.mirrored:   # a mirrored chart's coordinate is a magnitude: on the side of the minimum
                x = math.copysign(abs(x), c.x_min)
            sh = self.shocks[k]
            ridge, d0, d_exit = sh.location, sh.distance(c.x0), sh.distance(c.x_min)
            if (x - ridge) * (c.x_min - ridge) > 0 and sh.distance(x) ** 2 >= d0 * d_exit:
                out[c.label] = strength_of(geo, learned, self.X)
        return out

    def initial_split(self, k: int) -> np.ndarray:
        """Mode k's unit split at the initial parameters, ``c/|c|`` with ``c`` every unit's component along its
        ``e_k`` (frozen entries out): the direction the mode has in its unit subspace while it grows at the origin,
        where every unit is the same."""
        geo = self._geo(self.model.params, k, ())
        layout = self._spaces[0]
        c = layout.unit_matrix(self.model.parameter_vector()).T @ np.asarray(geo._e, dtype=np.float64)
        norm = float(np.linalg.norm(c))
        return c / norm if norm > 0 else np.full(c.size, 1.0 / math.sqrt(c.size))

    def _path_loss(self, geo, x0: float, x_min: float):
        """The chart loss on the escape path from ``x0`` to ``x_min``
        (:func:`~shockflow.prediction.extraction.escape_points`), read from a Chebyshev interpolant of the path's
        own span (:func:`~shockflow.geometry.chart_interpolant.interpolated_reader`, the accuracy of the chart
        box's interpolant :func:`~shockflow.geometry.chart_interpolant.chart_loss_at` that it replaces, from
        fewer nodes: the path is a part of the box).  ``None`` (the box's interpolant, or direct evaluation)
        where the loss is not interpolable or the fit does not converge."""
        from shockflow.geometry.chart_interpolant import MAX_DEGREE, interpolable, interpolated_reader
        from shockflow.prediction.extraction import escape_points

        if not interpolable(geo):
            return None
        ex = escape_points(x0, x_min)
        lo, hi = float(ex.min()), float(ex.max())
        read = interpolated_reader(lambda p: geo.chart_loss(p, self.X, self.y), lo, hi, start=16,
                                   max_degree=MAX_DEGREE)
        return None if read is None else read(ex)

    def _minimum_before(self, active) -> float | None:
        """Where the newest active chart's minimum lay at the saddle before it escaped: measured there on the same
        section (the same reference, the same learned modes), the bracket of its move to it (:meth:`_move`)."""
        held = self._memo.get(tuple(active[:-1]))
        found = None if held is None else held.minimum.get(active[-1])
        return None if found is None else float(found[0])

    def _move(self, params, i: int, active, warm: bool = False, guess: float | None = None) -> dict:
        """``params`` with chart ``i`` moved to its minimum along its section (``warm``: started at the chart's
        coordinate, for a chart already learned, which sits at or near its minimum; ``guess``: where its minimum
        was found on this section before: the newly escaped chart's at the saddle it escaped from)."""
        geo = self._geo(params, i, active)
        try:
            if warm:
                guess = float(np.asarray(geo.coordinates({key: params[key] for key in self.model.params})).ravel()[0])
            return self._set(params, geo, self._minimum(geo, i, guess=guess)[0])
        except (ValueError, FloatingPointError) as exc:
            raise SaddleFailure(self._where(active, i) + f": no minimum along the chart ({exc})") from None

    def _find_mode_spaces(self):
        """Per chart, the unit-space direction its mode occupies in every unit (``(p,)``), where the charts
        are the automatic charts of a network of interchangeable units: mode k is ``Wᵀ e_k``, so holding
        a waiting mode at its start is holding the component of every unit along ``e_k``
        (:mod:`shockflow.geometry.auto`).  ``None`` for any other geometry (its charts' sections are the
        only directions the landscape knows: block coordinate descent)."""
        from shockflow.geometry.auto import AutoGeometry
        from shockflow.models.units import CHAIN_MODELS, unit_layout

        if not hasattr(self.model, "loss_and_grad") or getattr(self.model, "name", None) in CHAIN_MODELS:
            return None
        try:
            geo = self._geo(self.model.params, 0, ())
            layout = unit_layout(self.model)
        except (ValueError, TypeError):
            return None
        if not isinstance(geo, AutoGeometry) or geo.modes is None:
            return None
        E = geo.unit_directions()
        spaces = [E[:, int(c.selector if c.selector is not None else 0)] for c in self.charts]
        return layout, spaces

    def _split_share(self, params, active) -> dict:
        """Per waiting chart, ``ln(|P c_k| / |c_k|)``: the share of its unit split ``c_k = Uᵀ e_k`` (the mode's
        component in every unit at ``params``, the way the initial weights split it; the chart coordinate is
        ``|c_k|``) orthogonal to the learned modes' splits ``Uᵀ e_i``, ``P`` the projection off their span.  At
        the saddle the waiting chart's section is that orthogonal split (``Geometry.saddle_keyword``): the part
        of the mode the learned units hold relaxes with them and does not grow, so the chain's log-distance
        loses this much on arriving (docs/theory.md §6, "The saddle chain").  Empty at the origin and for
        geometries whose charts do not share units."""
        if not active or self._spaces is None:
            return {}
        layout, spaces = self._spaces
        holders = self.holders(params, active)
        if not holders:
            return {}
        U = layout.unit_matrix(self._reference(params).parameter_vector())
        learned = np.stack([U.T @ spaces[i] for i in holders], axis=1)
        u, sv, _ = np.linalg.svd(learned, full_matrices=False)
        Q = u[:, sv > 1e-10 * max(float(sv.max()), 1e-300)]
        out = {}
        for k in range(len(self.charts)):
            if k in active:
                continue
            c = U.T @ spaces[k]
            norm = float(np.linalg.norm(c))
            rest = float(np.linalg.norm(c - Q @ (Q.T @ c)))
            if norm > 0 and rest > 0:
                out[k] = math.log(rest / norm)
        return out

    def _joint_minimum(self, params, active) -> dict:
        """The minimiser of the network's loss over the free parameters of the active modes, from ``params``:
        every unit-space direction except the waiting modes' (held at their values in ``params``), in the
        units that carry the active modes (the span ``C`` of their splits ``Wᵀ e_i``; the other units keep
        their small initial weights, so the learned modes neither spread along the units' symmetry valley
        nor into the units a waiting mode will use).  ``ΔW = P A Cᵀ`` with ``P`` the projection off the
        waiting modes; L-BFGS on the loss scaled by its start value."""
        from scipy.optimize import minimize

        layout, spaces = self._mode_spaces
        waiting = [spaces[k] for k in range(len(self.charts)) if k not in active]
        Q = np.linalg.qr(np.stack(waiting, axis=1))[0] if waiting else np.zeros((layout.unit_dim, 0))
        ref = self.model.copy()
        for key in ref.params:
            ref.params[key][...] = params[key]
        theta0 = ref.parameter_vector()
        U0 = layout.unit_matrix(theta0)
        splits = np.stack([U0.T @ spaces[i] for i in active], axis=1)
        u, sv, _ = np.linalg.svd(splits, full_matrices=False)
        C = u[:, sv > 1e-10 * max(float(sv.max()), 1e-300)]
        shape = (layout.unit_dim, C.shape[1])
        scale = max(abs(float(ref.loss(self.X, self.y))), 1e-300)
        # the frozen entries of every unit ([training] frozen) stay where they are
        from shockflow.geometry.auto import free_origin

        free = free_origin(self.model, layout, tuple(self.kwargs.get("frozen", ()) or ()))[1].astype(np.float64)[:, None]

        def theta_of(a):
            A = a.reshape(shape)
            A = (A - Q @ (Q.T @ A)) * free
            theta = theta0.copy()
            theta[layout.index] = (U0 + A @ C.T).T
            return theta

        def value_and_grad(a):
            ref.set_parameter_vector(theta_of(a))
            L, grads = ref.loss_and_grad(self.X, self.y)
            G = layout.unit_matrix(ref.grad_vector(grads)) @ C
            return L / scale, ((G - Q @ (Q.T @ G)) * free).ravel() / scale

        with np.errstate(over="raise", invalid="raise"):
            try:
                res = minimize(value_and_grad, np.zeros(shape[0] * shape[1]), jac=True, method="L-BFGS-B",
                               options={"ftol": JOINT_FTOL, "gtol": 1e-12, "maxiter": JOINT_MAX_ITER})
            except FloatingPointError as exc:
                raise SaddleFailure(self._where(active, None) + f": the joint minimisation overflowed ({exc})") from None
        theta = theta_of(res.x) if math.isfinite(res.fun) and res.fun <= 1.0 else theta0
        ref.set_parameter_vector(theta)
        return {key: np.array(v) for key, v in ref.params.items()}

    def _total_loss(self, params) -> float:
        ref = self.model.copy()
        for key in ref.params:
            ref.params[key][...] = params[key]
        return float(ref.loss(self.X, self.y))

    def _where(self, active, k) -> str:
        learned = ", ".join(self.charts[i].label for i in active) or "none (the origin)"
        chart = f", chart {self.charts[k].label}" if k is not None else ""
        return f"saddle chain, the saddle with {learned} learned{chart}"


def refine_minimum(f, a: float, b: float, rounds: int = REFINE_ROUNDS) -> tuple[float, float]:
    """``(x, f(x))``: the minimum of a smooth 1-D function on the bracket ``[a, b]`` in ``rounds`` batched calls of
    ``f`` on 3 points each (``f`` maps an array of points to their values; its cost may grow with the points, as
    for a network's loss on its samples).  Each round fits a parabola through the 3 points and puts the next
    3 on a bracket an eighth as wide around its vertex (clipped to ``[a, b]``; around the best point where the
    parabola is not convex); the answer is the best point evaluated.  Where a bounded Brent search makes one
    call per point (about 10 on a chart's bracket), this makes ``rounds``; a test compares the two."""
    lo, hi = float(min(a, b)), float(max(a, b))
    best_x, best_v = math.nan, math.inf
    left, right = lo, hi
    for _ in range(rounds):
        xs = np.linspace(left, right, 3)
        vs = np.asarray(f(xs), dtype=np.float64)
        i = int(np.argmin(vs))
        if vs[i] < best_v:
            best_x, best_v = float(xs[i]), float(vs[i])
        width = REFINE_SHRINK * (right - left)
        centre = float(xs[i])
        curv = vs[2] - 2.0 * vs[1] + vs[0]
        if curv > 0:
            centre = float(np.clip(xs[1] + 0.5 * (xs[1] - xs[0]) * (vs[0] - vs[2]) / curv, lo, hi))
        left, right = max(lo, centre - 0.5 * width), min(hi, centre + 0.5 * width)
        if right - left <= 1e-12 * max(abs(hi), abs(lo), 1e-300):
            break
    return best_x, best_v


def _distance_points(shock, x_min: float, fractions: np.ndarray, grid: int = 65) -> np.ndarray:
    """The points of a chart between its ridge (``shock.location``) and ``x_min`` at ``fractions`` of the quotient
    distance between them (:meth:`~shockflow.prediction.mapping.ChartShock.distance`, interpolated on ``grid``
    points)."""
    x = shock.location + np.linspace(0.0, 1.0, grid) * (x_min - shock.location)
    d = np.array([shock.distance(float(v)) for v in x])
    if not d[-1] > 0:
        return np.full(np.size(fractions), float(shock.location))
    return np.interp(np.asarray(fractions) * d[-1], d, x)


def _power_interpolation(f: np.ndarray, nodes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values (k, m)`` at increasing ``nodes (k,)`` read at ``f``: per component, between two nodes where it keeps
    its sign the power of ``f`` through both (a cross term's force is a power of the escaping mode: exact for it),
    linear where it changes sign; below the first node the first interval's power where it is positive (a force
    that vanishes with the escaping mode), else 0; the last value above the last node."""
    f = np.asarray(f, dtype=np.float64)
    i = np.clip(np.searchsorted(nodes, f, side="right") - 1, 0, nodes.size - 2)
    fa, fb = nodes[i][:, None], nodes[i + 1][:, None]
    ya, yb = values[i], values[i + 1]
    u = np.clip((f[:, None] - fa) / (fb - fa), 0.0, 1.0)
    linear = ya + u * (yb - ya)
    same = ya * yb > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        power = np.where(same, np.log(np.where(same, yb / ya, 1.0)) / np.log(fb / fa), 0.0)
        geometric = ya * np.exp(power * np.log(np.minimum(f[:, None], fb) / fa))
    out = np.where(same, geometric, linear)
    below = f < nodes[0]
    out[below] = np.where(same[below] & (power[below] > 0), geometric[below], 0.0)
    return out


def _escape_push(forces: np.ndarray, fractions: np.ndarray, t_switch: float, rho: float, kappa: np.ndarray,
                 V: np.ndarray, optimiser, since: float = 0.0, kappa_before=None) -> np.ndarray:
    """What the escape of one chart adds to a waiting mode's position in its unit subspace by the step of the switch
    (module docstring, "The escape's push"): the escaping mode's distance from its ridge grows as
    ``e^{ρ (t − t_switch)}`` of its exit (``ρ`` per step), so it passes the fraction ``f`` of it at
    ``t_switch + ln f / ρ``, where the force on the waiting mode is ``forces[i]`` (``fractions[i] = f``; between them
    a power of ``f``, :func:`_power_interpolation`); the waiting mode answers along ``V``'s directions at the rates
    ``κ`` (the optimiser's linearised factor per step; ``kappa_before``, by default ``κ``: the rates along them at the
    saddle the chart escapes from, moving to ``κ`` as the force's power of ``f`` between its last two points) with
    ``ċ = κ c − F``, each step's push ``−η F``
    (``η`` the optimiser's effective rate), from the step ``since`` (the chain's arrival where the chart escapes
    from: before it the mode grew at another saddle's rate) or from where the escaping mode was the square of the
    smallest fraction (as far below the points read as they span: a power of ``f`` is below 2⁻¹⁴ of its value at
    the first point there), whichever is later.  Returns the push, ``(m,)``."""
    nodes = np.asarray(fractions, dtype=np.float64)
    order = np.argsort(nodes)
    nodes = nodes[order]
    n_end = int(math.floor(t_switch))
    n0 = max(int(math.ceil(since)), int(math.floor(t_switch + 2.0 * math.log(nodes[0]) / rho)), 0)
    if n_end <= n0:
        return np.zeros(V.shape[0])
    n = np.arange(n0, n_end)
    f = np.exp(rho * (n - t_switch))
    proj = np.asarray(forces, dtype=np.float64)[order] @ V       # eigen-coordinates of the force at each point
    rates = optimiser.effective_rates()
    eta = rates[np.minimum(n, rates.size - 1)]
    before = kappa if kappa_before is None else np.asarray(kappa_before, dtype=np.float64)
    out = np.empty(kappa.size)
    top = np.linalg.norm(proj, axis=1)
    q = math.log(top[-1] / top[-2]) / math.log(nodes[-1] / nodes[-2]) if top[-2] > 0 and top[-1] > 0 else 1.0
    ramp = f ** max(q, 0.0)           # how far the rates have gone from the saddle's to the next one's
    for i, k in enumerate(kappa):     # one direction at a time: the window can be long, the unit subspace wide
        rate = np.concatenate([np.full(n0, before[i]), before[i] + (k - before[i]) * ramp])
        gains = optimiser.log_gains(rate, n_end, from_rest=False)[n0:]
        after = np.concatenate([np.cumsum(gains[::-1])[::-1][1:], [0.0]])   # the growth over the steps after each
        F = _power_interpolation(f, nodes, proj[:, i:i + 1])[:, 0]
        out[i] = float(np.sum(np.exp(np.minimum(after, 300.0)) * -eta * F))
    return V @ out


def _crossing(cum: np.ndarray, start: float, need: float) -> float:
    """The first fractional index ``n >= start`` with ``cum(n) − cum(start) >= need`` on the piecewise
    linear cumulative ``cum`` (``cum[i]`` = total before step ``i``); ``inf`` if never within it."""
    if need <= 0:
        return float(start)
    nodes = np.arange(cum.size)
    base = float(np.interp(start, nodes, cum))
    i0 = int(math.floor(start)) + 1
    hit = np.nonzero(cum[i0:] - base >= need)[0]
    if hit.size == 0:
        return math.inf
    i = i0 + int(hit[0])
    lo = max(float(i - 1), float(start))
    c_lo = float(np.interp(lo, nodes, cum)) - base
    return lo + (need - c_lo) / (float(cum[i]) - base - c_lo) * (i - lo)


def chain_transitions(landscape: Landscape, first, optimiser, horizon_factor: float = 20.0):
    """The saddle chain's predicted steps (module docstring).

    ``first``: the single-escape predictions of :func:`shockflow.prediction.mapping.predict_transitions`
    for the same charts, in the charts' order (they give each chart's method, ``d_eff`` and exit).
    Returns ``(steps, saddle_of, saddles, escaped_from)``: the step of each chart (``inf``: never within
    ``horizon_factor`` times the run), the index of the saddle it escapes from, the saddles visited and,
    per chart, the :class:`SaddleData` it escapes from (the last one visited for a chart that never does).

    Where the landscape relaxes (:attr:`Landscape.relaxes`) and a saddle holds a waiting mode back
    (:meth:`Landscape.holds_back`), the network follows the optimiser's flow from that saddle with the waiting
    modes held (:class:`_Flow`), and the waiting charts are read at the flowed point in segments
    (:data:`RELAX_SEGMENT`, :data:`RELAX_GROWTH`), piecewise constant in between."""
    charts, shocks = landscape.charts, landscape.shocks
    K = len(charts)
    L = max(int(math.ceil(horizon_factor * len(optimiser.learning_rates))), 2)
    origin = landscape.saddle(())
    kappa0 = [1.0 / s.gamma_star if math.isfinite(s.gamma_star) and s.gamma_star > 0 else math.nan for s in shocks]
    state = {}
    for k in range(K):
        if first[k].method == "shock":
            state[k] = math.log(first[k].d_eff)
        else:
            state[k] = abs(charts[k].x0) if charts[k].mirrored else charts[k].x0
    steps = [math.inf] * K
    saddle_of = [0] * K
    escaped_from = [origin] * K
    active: tuple[int, ...] = ()
    saddles = []
    now = 0.0
    share = dict.fromkeys(range(K), 0.0)
    relax = landscape.relaxes
    vectors: dict[int, np.ndarray] = {}   # a waiting mode's position in its unit subspace, from its first saddle on
    pushed: dict[int, np.ndarray] = {}    # ... what an escape pushed it by, before its first saddle in the subspace
    scale = [kappa0[k] / origin.curvature[k] if origin.curvature[k] > 0 and math.isfinite(kappa0[k]) else math.nan
             for k in range(K)]

    def in_subspace(here, k) -> bool:
        return first[k].method == "shock" and k in here.subspace and math.isfinite(scale[k])

    def place(k, c):
        """Waiting mode k's position in its unit subspace, and its log-distance with it."""
        vectors[k] = c
        state[k] = math.log(max(float(np.linalg.norm(c)), 1e-300))

    def planned(here, t):
        plans = {}
        for k in range(K):
            if k in active:
                continue
            c = shocks[k]
            if in_subspace(here, k) and k not in vectors:   # it grew as one direction at the origin: every unit the
                # same there (and what an escape pushed it by)
                place(k, landscape.initial_split(k) * math.exp(state[k]) + pushed.pop(k, 0.0))
            if first[k].method == "shock":
                # the exit of the first pass, moved by how much the saddle moved the chart's minimum; a section
                # whose minimum is its ridge has nothing left to learn at this saddle: it does not escape from it;
                # nor does one whose minimum is short of half its origin strength (forced) from a stable ridge
                moved = here.exit_distance[k] / origin.exit_distance[k] if origin.exit_distance[k] > 0 else 0.0
                forced = not landscape.strength_share(here, k) >= LEARNED_SHARE   # (NaN: not known, not forced)
                learns = moved > RIDGE and not (forced and here.curvature[k] <= 0.0 and not in_subspace(here, k))
                need = math.log(first[k].d_exit * moved) - state[k] if learns else math.inf
            if in_subspace(here, k):
                lam, V, _ = here.subspace[k]
                if forced and not np.any(lam > 0):
                    need = math.inf
                elif forced and math.isfinite(need):   # the exit is to be reached by the unstable part alone
                    unstable = float(np.linalg.norm((V.T @ vectors[k])[lam > 0]))
                    need += state[k] - math.log(max(unstable, 1e-300))
                cum, X, i0, kappa = _unit_growth(here.subspace[k], vectors[k], scale[k], optimiser, t, L, need,
                                                 unstable_only=forced)
                plans[k] = (_crossing(cum, t, need), cum, (X, i0, here.subspace[k][1]), kappa)
            elif first[k].method == "shock":
                ratio = here.curvature[k] / origin.curvature[k] if origin.curvature[k] > 0 else 1.0
                kappa = ratio * kappa0[k]
                gains = optimiser.log_gains(kappa, L, from_rest=not active)
                cum = np.concatenate([[0.0], np.cumsum(gains)])
                plans[k] = (_crossing(cum, t, need), cum, None, kappa)
            else:
                x, rate = here.profiles.get(k, (np.asarray(c.escape_x), np.asarray(c.escape_rate)))
                x = np.abs(x) if charts[k].mirrored else np.asarray(x)
                T = _profile_time(x, rate)
                remaining = max(float(T[-1] - _at(state[k], x, T)), 0.0)
                esc = np.concatenate([[0.0], np.cumsum(_extend(optimiser.escape_rates(c.gamma_star), L))])
                plans[k] = (_crossing(esc, t, remaining), esc, (x, T), here.curvature[k])
        return plans

    def take_share(here):
        for k, lost in here.split_share.items():
            if in_subspace(here, k):
                continue   # the part the learned units hold is in the subspace's own dynamics
            # the part of the waiting mode held by the learned modes' units does not grow from here on
            if first[k].method == "shock":
                state[k] += lost - share[k]
            else:
                state[k] *= math.exp(lost - share[k])
            share[k] = lost

    def advance(plans, a, b):
        for k, (_, cum, extra, _) in plans.items():
            gained = _between(cum, a, b)
            if first[k].method == "shock" and extra is not None:
                X, i0, V = extra
                at = min(max(b - i0, 0.0), X.shape[0] - 1.0)
                lo = int(math.floor(at))
                hi = min(lo + 1, X.shape[0] - 1)
                place(k, V @ (X[lo] + (at - lo) * (X[hi] - X[lo])))
            elif first[k].method == "shock":
                state[k] += gained
            else:
                x, T = extra
                state[k] = float(np.interp(_at(state[k], x, T) + gained, T, x))

    def growth_per_step(plans, j, t_switch) -> float:
        """Chart j's log-growth per step over the PUSH_SLOPE steps before its switch (a shock chart's)."""
        cum = plans[j][1]
        i1 = min(int(math.floor(t_switch)), cum.size - 1)
        i0 = max(i1 - PUSH_SLOPE, 0)
        return (cum[i1] - cum[i0]) / (i1 - i0) if i1 > i0 else math.nan

    def push(here, j, plans, t_switch):
        """The escape of chart j pushes the waiting modes it couples to (module docstring, "The escape's push")."""
        if first[j].method != "shock" or len(active) + 1 >= K:
            return
        nxt = landscape.saddle(active + (j,))
        waiting = [k for k in range(K) if k not in active and k != j and in_subspace(nxt, k)]
        rho = growth_per_step(plans, j, t_switch)
        if not waiting or not (math.isfinite(rho) and rho > 0):
            return
        forces = landscape.transit_forces(here, j, waiting, PUSH_FRACTIONS)
        for k in waiting:
            lam, V, _ = nxt.subspace[k]
            kappa = scale[k] * lam
            if in_subspace(here, k):       # the saddle's rates along the next one's directions
                lam_h, V_h, _ = here.subspace[k]
                before = ((V.T @ V_h) ** 2) @ (scale[k] * lam_h)
            else:                          # the origin: every unit at the chart's rate
                before = np.full(kappa.size, plans[k][3])
            dc = _escape_push(forces[k], PUSH_FRACTIONS, t_switch, rho, kappa, V, optimiser, since=now,
                              kappa_before=before)
            if k in vectors:
                place(k, vectors[k] + dc)
            else:
                pushed[k] = pushed.get(k, 0.0) + dc

    e_fold = math.nan   # the steps per e-fold of the escape that reached the saddle (a shock chart's)
    while len(active) < K:
        here = landscape.saddle(active)
        flow = None
        if relax and active and landscape.holds_back(here, state):
            # a waiting mode's section rises from where it is: the run does not wait here, it relaxes
            flow = _Flow(landscape, here, active, now, optimiser)
        # a waiting mode that the learned units take along as they relax from the saddle (module docstring,
        # "Learned by the relaxation")
        relaxed = landscape.relaxation_crossings(here, now, e_fold, optimiser, [k for k in range(K) if k not in active]) \
            if relax and active and flow is None else {}
        take_share(here)
        plans = planned(here, now)
        rates = {charts[k].label: plans[k][3] for k in plans}
        exits = {charts[k].label: math.log(here.exit_distance[k]) if here.exit_distance[k] > 0 else -math.inf
                 for k in plans}
        saddles.append(Saddle(tuple(charts[i].label for i in active), here.loss, now, rates, exits))
        t = now
        while True:
            j = min(plans, key=lambda k: plans[k][0])
            t_next = plans[j][0]
            t_end = flow.next_reading(t) if flow is not None else math.inf
            if t_next <= t_end:
                break
            advance(plans, t, t_end)   # read the waiting charts again where the flow has gone
            t = t_end
            here = flow.read(t)
            take_share(here)
            plans = planned(here, t)
        for k in plans:
            escaped_from[k] = here
        by_relaxation = bool(relaxed) and min(relaxed.values()) < t_next
        if by_relaxation:
            j = min(relaxed, key=relaxed.get)
            t_next = relaxed[j]
        if not math.isfinite(t_next):
            break
        advance(plans, t, t_next)
        if not by_relaxation:
            push(here, j, plans, t_next)
            rho = growth_per_step(plans, j, t_next) if first[j].method == "shock" else math.nan
            e_fold = 1.0 / rho if rho > 0 else math.nan
        steps[j] = t_next
        saddle_of[j] = len(saddles) - 1
        active = active + (j,)
        now = t_next
    if len(active) == K:   # the last saddle: everything learned (the bottom of the predicted staircase)
        saddles.append(Saddle(tuple(charts[i].label for i in active), landscape.saddle(active).loss, now))
    return steps, saddle_of, saddles, escaped_from


class _Flow:
    """The optimiser's flow from a saddle of the chain (its :class:`SaddleData`), with the waiting modes held
    (:meth:`Landscape.held_gradient`): gradient descent at the optimiser's effective rate per step
    (:meth:`~shockflow.prediction.mapping.Optimiser.effective_rates`: ``η/(1 − μ)`` with momentum, the flow the
    iterates follow while they move slowly), from the chain's step ``start`` to at most the end of the run
    (past it the point stays where the run's last step left it).  :meth:`read` is what the chain reads there."""

    def __init__(self, landscape: "Landscape", saddle: SaddleData, active, start: float, optimiser):
        self.landscape, self.active, self.start = landscape, tuple(active), float(start)
        self.rates = optimiser.effective_rates()
        self.model = landscape.model.copy()
        for key in self.model.params:
            self.model.params[key][...] = saddle.params[key]
        self.n = min(max(int(round(start)), 0), self.rates.size)
        self.data = saddle

    def _params(self) -> dict:
        return {key: np.array(v) for key, v in self.model.params.items()}

    def next_reading(self, t: float) -> float:
        """The step of the next reading after ``t`` (``inf`` once the flow has reached the end of the run)."""
        if t >= self.rates.size:
            return math.inf
        seg = max(RELAX_SEGMENT * self.rates.size, RELAX_GROWTH * (t - self.start), 1.0)
        return min(t + seg, float(self.rates.size))

    def _run_to(self, t: float) -> None:
        target = min(int(round(t)), self.rates.size)
        land, m = self.landscape, self.model
        with np.errstate(over="raise", invalid="raise"):
            try:
                while self.n < target:
                    _, grads = m.loss_and_grad(land.X, land.y)
                    grads = land.held_gradient(grads, self.active)
                    for key in m.params:
                        m.params[key][...] -= self.rates[self.n] * grads[key]
                    self.n += 1
            except FloatingPointError as exc:
                raise SaddleFailure(land._where(self.active, None) + f": the relaxing flow overflowed at step "
                                    f"{self.n} ({exc})") from None

    def read(self, t: float) -> SaddleData:
        self._run_to(t)
        self.data = self.landscape.measure(self._params(), self.active, self.data.minimum)
        return self.data

    def params_at(self, t: float) -> dict:
        self._run_to(t)
        return self._params()


def _extend(rates: np.ndarray, L: int) -> np.ndarray:
    rates = np.asarray(rates, dtype=np.float64)
    return rates[:L] if rates.size >= L else np.concatenate([rates, np.full(L - rates.size, rates[-1])])


def _unit_growth(subspace, c, scale: float, optimiser, t: float, steps: int, need: float = math.inf,
                 unstable_only: bool = False):
    """A waiting mode in its unit subspace at one saddle (``SaddleData.subspace``), from its position ``c`` at step
    ``t``: each of A's directions grows by the optimiser's linearised factor at its own rate (``scale`` · λ_j, the
    chart's PDE rate over its stencil curvature at the origin), about the stationary point ``A⁻¹b`` (the force of
    the learned modes' cross terms; a direction without curvature, below 1e-9 of the largest, takes none).
    Returns ``(cum, X, i0, κ)``: ``cum[i]`` = ln|c| at step i (constant before ``t``; with ``unstable_only``, of
    ``c``'s part on A's unstable directions, the whole ``c`` where A has none: a forced mode, module docstring),
    ``X`` the eigen-coordinates of ``c`` at the steps ``i0 = ⌊t⌋ …``, and ``κ`` the rate along ``c`` now (its
    Rayleigh quotient, for the report).  The steps are evaluated in windows doubling from 256 until ``cum`` has
    grown by ``need`` (the chain reads no further: this mode escapes there at the latest); past the last window
    ``cum`` holds its last value (and the chain's reading of ``X`` stops at its last row)."""
    lam, V, beta = subspace
    kappa = scale * lam
    i0 = min(int(math.floor(t)), steps)
    frac = t - i0
    x0 = V.T @ c
    curved = np.abs(lam) > 1e-9 * max(float(np.max(np.abs(lam))), 1e-300)
    fixed = np.where(curved, beta / np.where(curved, lam, 1.0), 0.0)
    grows = lam > 0 if unstable_only and np.any(lam > 0) else np.ones(lam.size, dtype=bool)
    start = math.log(max(float(np.linalg.norm(x0[grows])), 1e-300))
    window = 256
    while True:
        end = min(steps + 1, i0 + window)
        gains = np.stack([optimiser.log_gains(float(k), end - 1, from_rest=False) for k in kappa], axis=1)
        G = np.vstack([np.zeros((1, lam.size)), np.cumsum(gains, axis=0)])      # (end, m): steps 0 … end − 1
        Gt = G[i0] + frac * (G[min(i0 + 1, end - 1)] - G[i0])
        X = fixed + np.exp(np.minimum(G[i0:end] - Gt, 300.0)) * (x0 - fixed)
        mag = np.log(np.maximum(np.linalg.norm(X[:, grows], axis=1), 1e-300))
        if end == steps + 1 or float(mag.max()) - start >= need:
            break
        window *= 2
    pad = steps + 1 - end
    cum = np.concatenate([np.full(i0, mag[0]), mag, np.full(pad, mag[-1])])
    norm2 = float(x0 @ x0)
    rate = float((x0 * x0) @ kappa / norm2) if norm2 > 0 else float(kappa[-1])
    return cum, X, i0, rate


def _between(cum: np.ndarray, a: float, b: float) -> float:
    n = np.arange(cum.size)
    return float(np.interp(b, n, cum) - np.interp(a, n, cum))


def _profile_time(x: np.ndarray, rate: np.ndarray) -> np.ndarray:
    rate = np.asarray(rate, dtype=np.float64)
    inv = 1.0 / np.maximum(rate, 1e-300)
    return np.concatenate([[0.0], np.cumsum(0.5 * (inv[1:] + inv[:-1]) * np.abs(np.diff(x)))])


def _at(x_now: float, x: np.ndarray, T: np.ndarray) -> float:
    """The flow time along the profile ``(x, T)`` at the position ``x_now`` (clamped to its ends)."""
    sgn = 1.0 if x[-1] >= x[0] else -1.0
    return float(np.interp(sgn * x_now, sgn * x, T))


def write_chain(f, saddles: Sequence[Saddle], labels: Sequence[str]) -> None:
    """The ``/chain`` group of an open result file ``f``: one row per saddle visited (dimension
    ``saddle``), columns ``step`` (when the chain reaches it), ``loss`` (the full-batch loss there) and
    ``active`` (the charts learned, comma-separated); ``rate`` and ``log_exit`` are ``(saddle, chart)``
    (NaN for a chart already learned), the chart labels in the attribute ``charts``."""
    import json

    g = f.create_group("chain")
    g.attrs["charts"] = json.dumps(list(labels))
    g.attrs["description"] = ("the saddles of the saddle chain (docs/theory.md §6): rate = 1/gamma* of each waiting "
                              "chart at the saddle (negative: pushed back), log_exit = ln of its exit distance")
    cols = {"step": ("training step at which the chain reaches the saddle", [s.step for s in saddles]),
            "loss": ("full-batch loss at the saddle", [s.loss for s in saddles])}
    for name, (text, values) in cols.items():
        d = g.create_dataset(name, data=np.asarray(values, dtype=np.float64))
        d.attrs["long_name"] = text
    g.create_dataset("active", data=np.array([",".join(s.active) for s in saddles], dtype="S"))
    for name, attr in (("rate", "rates"), ("log_exit", "log_exit")):
        table = np.array([[getattr(s, attr).get(c, np.nan) for c in labels] for s in saddles],
                         dtype=np.float64).reshape(len(saddles), len(labels))
        g.create_dataset(name, data=table)


def read_chain(path) -> list[Saddle]:
    """The saddles of a result file's ``/chain`` group (empty: a run without a chain)."""
    import json

    import h5py

    with h5py.File(path, "r") as f:
        if "chain" not in f:
            return []
        g = f["chain"]
        labels = json.loads(g.attrs["charts"])
        out = []
        for i, (step, loss, active) in enumerate(zip(g["step"][()], g["loss"][()], g["active"][()])):
            names = tuple(a for a in active.decode().split(",") if a)
            rates = {c: float(v) for c, v in zip(labels, g["rate"][i]) if math.isfinite(v)}
            exits = {c: float(v) for c, v in zip(labels, g["log_exit"][i]) if math.isfinite(v)}
            out.append(Saddle(names, float(loss), float(step), rates, exits))
        return out
