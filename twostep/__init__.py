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
readout        Ridge readout on frozen features and its test error.
sweep          Seeds and parameter grids across processes; means and standard errors.
plotting       Shared figure helpers (imported on demand: twostep.plotting).
"""

from .activations import (ACTIVATIONS, Activation, CentredReLU, PolynomialActivation, Tanh,
                          get_activation)
from .alignment import chance_overlap, memorisation, overlap, overlaps, subspace_overlap
from .decomposition import (RankOne, reuse_weights, second_step_term, second_step_terms,
                            signal_direction, signal_part)
from .hermite import (gauss_nodes, gaussian_expectation, hermite_coefficients,
                      hermite_polynomial, information_exponent)
from .network import correlation_loss, forward, gaussian_inputs, gradient, initialise
from .readout import (DEFAULT_LAMBDAS, ReadoutResult, best_linear_error, features, mse,
                      readout_error, ridge, ridge_path, select_penalty)
from .spectra import (bulk_edge, bulk_edges, count_outliers, ks_distance, marchenko_pastur_cdf,
                      marchenko_pastur_density, singular_values, top_singular)
from .sweep import loglog_slope, rng_for, summarise, sweep
from .targets import LINKS, Link, Teacher, get_link, hermite_link, odd_bounded_link
from .theory import (n_spikes, one_step_overlap, phase_boundaries, single_step_equivalent,
                     spike_exponent, spike_terms)
from .training import BATCHES, TwoStepRun, one_step, run_two_steps, step_size

__version__ = "0.1.0"

__all__ = [name for name in dir() if not name.startswith("_")]
