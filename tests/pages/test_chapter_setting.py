"""The compute, plot and table functions of the chapter *The setting*
(twostep/pages/setting.py), at tiny sizes."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from twostep.analysis.spectra import bulk_edge, ks_distance, singular_values, top_singular  # noqa: E402
from twostep.analysis.verdicts import mean_sem  # noqa: E402
from twostep.pages import report, setting as ch  # noqa: E402
from twostep.model.activations import get_activation  # noqa: E402
from twostep.model.network import gaussian_inputs, initialise  # noqa: E402
from twostep.model.steps import one_step, step_size  # noqa: E402
from twostep.model.targets import Teacher, hermite_link, odd_bounded_link  # noqa: E402

POLY4 = get_activation("poly4")


def _pipe_free(header, rows):
    # a "|" inside a cell would end the cell of the markdown pipe table
    assert rows and all(len(r) == len(header) for r in rows)
    assert not any("|" in cell for cell in list(header) + [c for r in rows for c in r])


def test_kink_margin_is_the_direct_minimum_and_maximum():
    rng = np.random.default_rng(0)
    W, _ = initialise(5, 4, rng)
    X = gaussian_inputs(7, 4, rng)
    pre, shift = ch.kink_margin(W, X, 1e-5)
    assert pre == pytest.approx(np.min(np.abs(W @ X.T)))
    assert shift == pytest.approx(1e-5 * np.max(np.abs(X)))


def test_gradient_check_table():
    header, rows = ch.gradient_check_table({"poly2": 1.23e-10, "relu": 4.5e-11})
    assert len(header) == 2 and rows[0][0] == r"$\sigma_2$" and rows[1][0] == "centred ReLU"
    assert "10" in rows[0][1]
    _pipe_free(header, rows)


def test_displacement_matches_a_direct_step():
    row, op = ch.displacement(20, 1, 1.0, 0.25, POLY4, hermite_link(1))
    rng = np.random.default_rng([20, 1])
    teacher = Teacher(hermite_link(1), 20, rng)
    W0, a = initialise(20, 20, rng)
    X = gaussian_inputs(20, 20, rng)
    D = one_step(W0, a, X, teacher.labels(X, rng), POLY4, step_size(1.0, 0.25, 20)) - W0
    assert row == pytest.approx(np.median(np.linalg.norm(D, axis=1)))
    assert op == pytest.approx(top_singular(D, 1)[0][0])


def test_step_scaling_data_numbers_and_table():
    data = ch.step_scaling_data([16, 32], 2, 1.0, 0.25, POLY4)
    moves = [ch.displacement(32, s, 1.0, 0.25, POLY4, hermite_link(1)) for s in range(2)]
    assert data.seed_values("op", N=32) == pytest.approx([m[1] for m in moves])
    assert data.seed_values("row", N=32) == pytest.approx([m[0] for m in moves])
    nums = ch.scaling_numbers(data)
    assert nums["move_gap_large"] == pytest.approx(np.mean([m[1] for m in moves])
                                                   / np.mean([m[0] for m in moves]))
    assert nums["scale_edge"] == pytest.approx(2.0)
    header, rows = ch.scaling_table(data, 0.25)
    assert len(rows) == 4
    eta, move, op, per_step = rows
    assert float(move[4].split()[0]) == pytest.approx(2 ** (0.25 - 0.5), abs=5e-3)
    assert float(op[3].split()[0]) == pytest.approx(
        data.at("op", N=32) / data.at("op", N=16), abs=5e-3)
    assert float(per_step[2].split()[0]) == pytest.approx(
        data.at("op", N=32) / step_size(1.0, 0.25, 32), abs=5e-3)
    # mean ± standard error over the seeds; the ratio's error propagated from both widths
    small = [ch.displacement(16, s, 1.0, 0.25, POLY4, hermite_link(1)) for s in range(2)]
    (m_s, se_s), (m_l, se_l) = mean_sem([m[1] for m in small]), mean_sem([m[1] for m in moves])
    assert se_s > 0 and se_l > 0
    assert op[1] == report.pm(m_s, se_s) and op[2] == report.pm(m_l, se_l)
    r = m_l / m_s
    assert op[3] == report.pm(r, r * np.sqrt((se_l / m_l) ** 2 + (se_s / m_s) ** 2))
    m, se = mean_sem([m[0] for m in moves])
    assert move[2] == report.pm(m, se, 3)
    eta_l = step_size(1.0, 0.25, 32)
    assert per_step[2] == report.pm(m_l / eta_l, se_l / eta_l)
    assert "±" not in "".join(eta)
    _pipe_free(header, rows)


def test_hermite_tables():
    header, rows = ch.activation_table(["poly2", "tanh"])
    assert header[0] == "activation" and len(header) == 7 and len(rows) == 2
    assert rows[0][1:] == ["0", "1.0000", "1.0000", "0", "0", "2"]
    assert rows[1][-1] == "∞"
    header, rows = ch.target_table({"g": hermite_link(1), "odd": odd_bounded_link()})
    assert len(header) == 8 and rows[0][1:] == ["1.0000", "0", "1.0000", "0", "0", "0", "1"]
    assert rows[1][-1] == "3" and rows[0][0] == "g" and rows[1][0] == "odd bounded"
    assert ch.coefficient_text(1e-13) == "0" and ch.coefficient_text(0.5) == "0.5000"


def test_w0_spectrum_data_numbers_table_and_figure():
    data = ch.w0_spectrum_data([(40, 80), (80, 40)])
    s = singular_values(initialise(40, 80, np.random.default_rng(120))[0])
    np.testing.assert_allclose(data[40, 80], s)
    assert list(data) == [(40, 80), (80, 40)] and data[80, 40].shape == (40,)
    header, rows = ch.w0_spectrum_table(data)
    assert len(rows) == 2
    assert rows[1][2] == "2" and float(rows[0][5]) == pytest.approx(40 ** (-2 / 3), abs=5e-4)
    assert rows[0][3] == f"{ks_distance(s, 0.5):.4f}"
    assert rows[0][4] == f"{s[0] - bulk_edge(0.5):+.4f}"
    _pipe_free(header, rows)
    fig = ch.plot_w0_spectrum(data)
    assert isinstance(fig, Figure)
    assert all(ax.get_xlabel() and ax.get_ylabel() for ax in fig.get_axes())
    plt.close(fig)
