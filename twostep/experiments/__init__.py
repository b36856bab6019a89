r"""The single-run experiments: one draw of a problem, the steps, and what is measured on it.

Each takes a ``numpy.random.Generator`` first and returns a dict of arrays (numpy only, no
figures). Each checks its arguments once, on entry, and the model and analysis functions it
calls inside trust them (their cores, in ``twostep/model/_core.py`` and
``twostep/analysis/_core.py``). The chapters' page modules (:mod:`twostep.pages`)
sweep them over widths and seeds and draw the results; the scale-out side
(:mod:`twostep.scale`: the CLI, the results files, the GPU backends) runs them by name. Neither
imports the other.

* :mod:`.first_step`: the first update against its spike (:func:`~.first_step.first_step_diagnostics`),
  the data direction per target, the spikes of the feature matrix;
* :mod:`.spikes`: two steps, the exact terms against their spikes and the spectrum of
  :math:`W_2` at many step sizes (:func:`~.spikes.spike_experiment`), and the single draws of
  the chapter *Two steps* (:func:`~.spikes.decomposition_check`, :func:`~.spikes.one_draw`,
  :func:`~.spikes.power_components`);
* :mod:`.reuse`: where the learned directions point with a reused or fresh second batch
  (:func:`~.reuse.reuse_experiment`, :func:`~.reuse.paired_reuse_experiment`);
* :mod:`.readout`: five first layers from one problem and their test errors
  (:func:`~.readout.payoff_experiment`).
"""
