"""`shockflow spectra`: a stack of weight matrices from elsewhere (.npz) against BBP theory (docs/theory.md §3)."""

import json

import numpy as np
import pytest

from shockflow.cli import main
from shockflow.spectra.teacher_student import population_theory


def population_stack(tmp_path, N=400, M=800, sigma_w=1.0, eps=0.6, steps=(0, 1, 2, 4), seed=0):
    """Population GD of docs/theory.md §3: W_t = (1 - (1-eps)^t) W* + (1-eps)^t W_0, W* = u v^T."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=N); u /= np.linalg.norm(u)
    v = rng.normal(size=M); v /= np.linalg.norm(v)
    W0 = rng.normal(scale=sigma_w / np.sqrt(M), size=(N, M))
    stack = np.stack([(1 - (1 - eps) ** t) * np.outer(u, v) + (1 - eps) ** t * W0 for t in steps])
    path = tmp_path / "run.npz"
    np.savez(path, W=stack, step=np.array(steps), teacher=u)
    return path


def test_spectra_of_population_gd_follow_bbp_theory(tmp_path, capsys):
    path = population_stack(tmp_path)
    assert main(["spectra", str(path), "--json", "--out", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["step"] == [0, 1, 2, 4]
    assert out["n_outliers"] == [0, 1, 1, 1] and out["first_outlier_step"] == 1   # step 0: a pure MP bulk
    assert out["lambda_plus"][0] == pytest.approx((1 + np.sqrt(0.5)) ** 2, rel=0.03)  # MP edge of W0 W0^T
    for i, t in enumerate(out["step"][1:], start=1):
        theory = population_theory(0.6, t, 1.0, 0.5)
        assert out["lambda_plus"][i] == pytest.approx(theory["lambda_plus"], rel=0.03)   # fitted bulk edge
        # N = 400: the outlier fluctuates by O(N^-1/2), most near threshold (step 1, theta² = 2.25)
        assert out["top_eigenvalue"][i] == pytest.approx(theory["lambda_top"], rel=0.06 if t == 1 else 0.03)
        assert out["q2"][i] == pytest.approx(theory["q2"], abs=0.03)
    assert (tmp_path / "run-spectra.png").stat().st_size > 10_000
    assert out["output"] and out["output"].endswith(".h5")


def test_spectra_bad_input_is_exit_2(tmp_path, capsys):
    assert main(["spectra", str(tmp_path / "missing.npz")]) == 2
    assert "no such file" in capsys.readouterr().err
    np.savez(tmp_path / "flat.npz", W=np.ones(5))
    assert main(["spectra", str(tmp_path / "flat.npz"), "--no-figures"]) == 2


def test_spectra_says_which_file_is_wrong_and_what_the_log_holds(tmp_path, capsys):
    """A tester's messages: 'the log has 0 matrix parameters; choose one of ['u']', errors about --teacher prefixed
    with the LOG, a missing teacher a bare '[Errno 2] No such file or directory', a non-zip one exit 1 (BadZipFile)."""
    from shockflow.logs import TrainingRecord, write_training_log

    path = population_stack(tmp_path, N=100, M=200)
    log = str(path)
    (tmp_path / "garbage.npz").write_bytes(b"not a zip file")
    np.save(tmp_path / "short.npy", np.ones(3))
    for teacher, said in ((tmp_path / "missing.npy", "no such file"),
                          (tmp_path / "garbage.npz", "not a NumPy .npy file"),
                          (tmp_path, "a directory, expected a .npy file"),
                          (tmp_path / "short.npy", "expected a left direction of shape (100,)")):
        assert main(["spectra", log, "--teacher", str(teacher), "--no-figures", "--out", str(tmp_path / "o")]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"shockflow: error: --teacher {str(teacher)!r}: "), err
        assert said in err and "LOG" not in err and "Errno" not in err
    vector = tmp_path / "vector.h5"
    steps = np.arange(3)
    write_training_log(TrainingRecord(series={"step": steps, "loss": np.ones(3)},
                                      snapshots={"step": steps, "u": np.ones((3, 4))}), vector)
    assert main(["spectra", str(vector), "--no-figures", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "the log holds no weight matrix, only parameters of other shapes (u (4,))" in err and "choose" not in err


def test_spectra_prints_a_per_step_table(tmp_path, capsys):
    path = population_stack(tmp_path, N=100, M=200)
    assert main(["spectra", str(path), "--json", "--out", str(tmp_path / "j"), "--no-figures"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert main(["spectra", str(path), "--out", str(tmp_path / "t"), "--no-figures"]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(i for i, l in enumerate(lines) if l.split()[:2] == ["step", "sigma2"])
    cols = lines[head].split()
    rows = [l.split() for l in lines[head + 1:head + 1 + len(doc["step"])]]
    assert [int(r[0]) for r in rows] == doc["step"]
    for key, name in (("lambda_plus", "lambda+"), ("n_outliers", "outliers")):
        j = cols.index(name)
        shown = [None if r[j] == "-" else float(r[j]) for r in rows]
        assert [v is None for v in shown] == [v is None for v in doc[key]]
        assert [v for v in shown if v is not None] == pytest.approx([v for v in doc[key] if v is not None], rel=1e-3)
    assert "[" not in "\n".join(lines)                                    # no raw Python lists
    assert lines[head + 1 + len(doc["step"])] == f"first outlier at step {doc['first_outlier_step']}"
