"""Is the compiled CPU simulator the same whether it runs on one core or all of them?"""

from course_lib import cellsim as cs
from course_lib.cellsim import api
from course_lib.cellsim.cpu import simulate_cpu


def test_parallel_equals_serial(thesis_types):
    h0 = cs.lognormal_histogram(500, seed=7, median=500.0)
    problem = api.prepare_problem(h0, thesis_types, tau_max=300.0, phi_min=8.7, seed=9)
    assert simulate_cpu(problem, parallel=True).same_as(simulate_cpu(problem, parallel=False))


def test_one_cell_and_chunks_larger_than_the_population(thesis_types):
    h0 = cs.single_value_histogram(1, 400.0)
    r = cs.simulate(h0, thesis_types, tau_max=400.0, phi_min=11.0, seed=2, method="cpu")
    assert r.same_as(cs.simulate(h0, thesis_types, tau_max=400.0, phi_min=11.0, seed=2, method="reference"))
