"""twostep: two steps of gradient descent in linear-width two-layer networks.

The package behind the book *Two steps of gradient descent*, in five layers; each
imports only from the layers above it in this list (pages and scale side by side,
neither importing the other) (``tests/unit/test_layers.py``):

model      ``twostep.model``: Hermite tools, activations, targets, the network and its
           gradient, one and two gradient steps.
analysis   ``twostep.analysis``: spectra and the Marchenko--Pastur bulk, the BBP spiked
           model, alignments, the theory and its phase diagram, the exact decomposition
           of the second update, the step-size rescaling, the population limits, the
           gradient check, the ridge readout, seeds and sweeps.
experiments ``twostep.experiments``: the single-run experiments (numpy only), which
           the chapters sweep and the scale-out side runs by name.
pages      ``twostep.pages``: one page module per chapter (its sweeps, figures and
           tables), and the figure and report helpers the chapters share.
scale      ``twostep.scale``: the experiment registry, results files, the command line
           (``python -m twostep``), memory checks and array backends (CuPy, PyTorch).

This namespace holds the names the chapters call; everything else is imported from
its module.
"""

from .model.activations import Tanh, get_activation
from .model.hermite import gaussian_expectation
from .model.network import gaussian_inputs, gradient, initialise
from .model.steps import BATCHES, one_step, run_two_steps, step_size
from .model.targets import Teacher, get_link, hermite_link, make_teacher, odd_bounded_link
from .analysis.alignment import chance_maximum, chance_overlap, memorisation, unmemorised_overlap
from .analysis.bbp import bbp_threshold, spiked_outlier, spiked_overlaps
from .analysis.decomposition import RankOne, first_step_spike, second_step_terms, signal_part
from .analysis.gradcheck import gradient_check
from .analysis.population import population_signal
from .analysis.readout import (best_linear_error, feature_scale, features, fit_readout,
                               paired_readout, projected_error, subspace_error)
from .analysis.spectra import (bulk_edge, count_outliers, ks_distance, marchenko_pastur_density,
                               singular_values, top_singular)
from .analysis.sweep import linear_slope, loglog_slope, rng_for, summarise, sweep
from .analysis.theory import (finite_size_overlap, n_spikes, one_step_overlap, phase_boundaries,
                              spike_exponent, spike_strength, spike_terms)
from .experiments.first_step import first_step_diagnostics, learned_direction_overlaps
from .experiments.readout import (learned_directions, neuron_memorisation, payoff_experiment,
                               train_schemes)
from .experiments.reuse import reuse_experiment, signal_overlap_experiment
from .experiments.spikes import spike_experiment

from ._version import __version__

# The names above, not the subpackages their imports bind (model, analysis, experiments).
__all__ = [name for name, value in dict(globals()).items()
           if not name.startswith("_") and not isinstance(value, type(_version))]
