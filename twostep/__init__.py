"""twostep: two steps of gradient descent in linear-width two-layer networks.

The package behind the book *Two steps of gradient descent*: layers ``model``, ``analysis``,
``experiments``, then ``pages`` and ``scale`` side by side, each importing only from those
before it (``tests/unit/test_layers.py``). This namespace holds the names the chapters call.
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
