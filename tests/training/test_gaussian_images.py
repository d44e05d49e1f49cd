"""shockflow.data.images: Gaussian images labelled by a teacher network."""

import numpy as np
import pytest

from shockflow import models
from shockflow.data import build_dataset


def test_images_are_labelled_by_their_teacher():
    spec = {"name": "cnn2d", "input_size": [5, 4], "in_channels": 2, "out_channels": 2, "kernel_size": [2, 2],
            "init_scale": 1.0, "seed": 3}
    data = build_dataset("gaussian_images", n=300, height=5, width=4, channels=2, teacher=spec, seed=1)
    assert data.X.shape == (300, 5, 4, 2)
    np.testing.assert_allclose(data.y, models.build(**spec).forward(data.X), rtol=1e-12)
    assert abs(data.X.mean()) < 0.05 and data.X.std() == pytest.approx(1.0, abs=0.05)
    again = build_dataset("gaussian_images", n=300, height=5, width=4, channels=2, teacher=spec, seed=1)
    np.testing.assert_array_equal(again.X, data.X)


@pytest.mark.parametrize("key, value", [("height", 0), ("channels", 1.5), ("n", True)])
def test_bad_sizes_are_named(key, value):
    kwargs = {"n": 4, "height": 3, "width": 3, "channels": 1, key: value}
    with pytest.raises(ValueError, match=f"gaussian_images: {key} must be a positive integer"):
        build_dataset("gaussian_images", teacher={"name": "cnn2d", "input_size": [3, 3], "in_channels": 1,
                                                  "out_channels": 1, "kernel_size": [2, 2]}, **kwargs)
