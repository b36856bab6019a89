"""twostep: two steps of gradient descent in linear-width two-layer networks.

A small package that computes what the book *Two steps of gradient descent*
shows: the model of Moniri & Hassani (2026), one and two gradient steps with
reused or fresh batches, the exact Hermite-order decomposition of the second
update, spectra, alignments, and the theory's predictions.

Modules
-------
hermite        Gaussian expectations and Hermite coefficients (quadrature).
activations    Polynomial, tanh and centred-ReLU activations.
targets        Link functions and multi-index teachers.
network        Data, initialisation, the network, the correlation loss and its gradient.
training       One and two gradient steps (reused or fresh batch).
decomposition  The exact terms T_k of the second update and their rank-one signal parts.
spectra        Top-k singular triplets, full spectra, the Marchenko-Pastur bulk.
alignment      Overlaps with the target directions; the memorisation diagnostic.
theory         Lambda(alpha1, alpha2), spike exponents, the one-step overlap.
first_step     The first update as a rank-one spike plus a remainder; one-step diagnostics.
gradcheck      The analytic gradient against central finite differences.
spiked         Outlier and vector overlaps of a rank-one spiked Gaussian matrix (BBP).
readout        Ridge readout on frozen features and its test error.
payoff         What the learned features buy: 0, 1, 2 steps compared by paired test error.
rescaling      Exact dependence of W_1, W_2 and the terms T_k on the step sizes (StepFamily).
spikes         Is each exact term T_k its rank-one spike? Diagnostics, outlier strength, extrapolation.
phases         The (alpha1, alpha2) phase diagram: theory regions and the count from the exact terms.
sweep          Seeds and parameter grids across processes; means and standard errors.
experiments    The book's experiments by name (registry) and a memory check before running.
results        Results files of a sweep (JSON, with parameters and version): write and read.
backend        Array backends (numpy, CuPy, PyTorch): two steps and top singular values on a GPU.
cli            ``python -m twostep``: run an experiment over sizes, seeds, grids; loky or Dask.
plotting       Shared figure helpers (imported on demand: twostep.plotting).
report         Glued numbers (sci: 2.4 × 10²⁸), computed tables for the chapters (twostep.report).
"""

from .activations import (ACTIVATIONS, Activation, CentredReLU, PolynomialActivation, Tanh,
                          get_activation)
from .alignment import chance_overlap, memorisation, overlap, overlaps, subspace_overlap
from .decomposition import (RankOne, reuse_weights, second_step_term, second_step_terms,
                            signal_direction, signal_part)
from .first_step import (finite_size_overlap, first_step_diagnostics, first_step_spike,
                         learned_direction_overlaps, rank_one_residual, spike_strength)
from .gradcheck import finite_difference_gradient, gradient_check
from .hermite import (gauss_nodes, gaussian_expectation, hermite_coefficients,
                      hermite_polynomial, information_exponent)
from .network import correlation_loss, forward, gaussian_inputs, gradient, initialise
from .readout import (DEFAULT_LAMBDAS, RELATIVE_LAMBDAS, SCALINGS, ReadoutResult,
                      best_linear_error, feature_scale, features, fit_readout, mse,
                      paired_readout, projected_error, readout_error, ridge, ridge_path,
                      select_penalty, subspace_error)
from .phases import empirical_boundary, empirical_count, is_spike, theory_count
from .payoff import (SCHEMES, TrainedSchemes, learned_directions, make_teacher,
                     neuron_memorisation, payoff_experiment, train_schemes)
from .reuse import (PopulationSignal, population_signal, reuse_experiment, signal_directions,
                    signal_overlap_experiment, target_links, unmemorised_overlap)
from .rescaling import StepFamily, step_family
from .spectra import (bulk_edge, bulk_edges, count_outliers, ks_distance, marchenko_pastur_cdf,
                      marchenko_pastur_density, singular_values, top_singular)
from .spiked import bbp_threshold, spiked_outlier, spiked_overlaps
from .spikes import (outlier_strength, power_cosine, power_law_constant, power_projections,
                     power_projections_null, predicted_spikes, rank_one_sum_singular_values,
                     spike_experiment, term_diagnostics, width_to_reach)
from .sweep import loglog_slope, rng_for, summarise, sweep
from .experiments import (EXPERIMENTS, check_memory, estimate_bytes, get_experiment,
                          run_experiment)
from .results import read_results, write_results
from .backend import (BackendUnavailable, get_backend, run_two_steps_on,
                      top_singular_values_on)
from .targets import LINKS, Link, Teacher, get_link, hermite_link, odd_bounded_link
from .theory import (n_spikes, one_step_overlap, phase_boundaries, single_step_equivalent,
                     spike_exponent, spike_terms)
from .training import BATCHES, Problem, TwoStepRun, draw_problem, one_step, run_two_steps, step_size

__version__ = "0.1.0"

__all__ = [name for name in dir() if not name.startswith("_")]
