"""Do the figures of the unit draw the simulations they show?"""

import matplotlib

from course_lib import cellsim as cs

matplotlib.use("Agg")


def test_histogram_over_time_and_population_by_type(h0, thesis_types):
    import matplotlib.pyplot as plt

    results = cs.plots.simulate_times(h0, thesis_types, [0, 60, 120], phi_min=11.0, seed=1)
    # one population: a later time never has fewer divisions
    assert [r.divisions for r in results] == sorted(r.divisions for r in results)
    fig = cs.plots.histogram_over_time(h0, thesis_types, None, phi_min=11.0, results=results)
    assert len(fig.axes[0].patches) >= 3
    fig2 = cs.plots.population_by_type(h0, thesis_types, None, phi_min=11.0, results=results)
    assert len(fig2.axes[0].lines) == thesis_types.n_types + 1
    fig3 = cs.plots.memory_per_level([10, 20, 40], [10, 14, 0], slot_bytes=24, cell_bytes=44)
    assert len(fig3.axes[0].lines) == 2
    for figure in (fig, fig2, fig3):
        plt.close(figure)
