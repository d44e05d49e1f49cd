"""shockflow.storage.surfaces and shockflow.figures.surface: a surface solution written, read back whole, drawn."""

import numpy as np
import pytest

from shockflow.figures import save_figure
from shockflow.figures.surface import plot_on_sphere
from shockflow.storage.surfaces import load_surface_solution, save_surface_solution
from solvers.errors import SolverInputError
from solvers.surfaces import SurfaceSolution, icosphere, solve_surface_heat

HARMONICS = {2: lambda x, y, z: x * y}


def test_solution_save_load_and_figure(tmp_path):
    m = icosphere(4)
    sol = solve_surface_heat(m, HARMONICS[2], [0.0, 0.2], nu=0.3)
    path = save_surface_solution(sol, tmp_path / "heat.npz")
    back = load_surface_solution(path)
    np.testing.assert_array_equal(back.values, sol.values)
    np.testing.assert_array_equal(back.times, sol.times)
    np.testing.assert_array_equal(back.mesh.triangles, m.triangles)
    np.testing.assert_array_equal(back.mesh.vertices, m.vertices)
    assert back.settings == sol.settings and back.steps == sol.steps
    assert not any(p.name.endswith(".tmp") for p in tmp_path.iterdir())
    png = save_figure(plot_on_sphere(m, sol.values[0], title="u0"), tmp_path / "heat.png")
    import matplotlib.image

    img = matplotlib.image.imread(png)
    assert img.shape[2] in (3, 4) and np.unique(img[..., :3].reshape(-1, 3), axis=0).shape[0] > 20
    with pytest.raises(SolverInputError, match="one value per vertex"):
        plot_on_sphere(m, np.zeros(5))
    with pytest.raises(SolverInputError, match=r"path: expected a file name ending in \.npz"):
        save_surface_solution(sol, tmp_path / "heat.h5")
    np.savez(tmp_path / "other.npz", a=np.zeros(3))
    with pytest.raises(SolverInputError, match=r"is not a surface solution \(missing \["):
        load_surface_solution(tmp_path / "other.npz")
    with pytest.raises(SolverInputError, match=r"values: expected shape \(2, 162\)"):
        SurfaceSolution(m, sol.times, sol.values[:, :-1], "vertices", 1)
