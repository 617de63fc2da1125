"""Running: grading submissions, each in its own sandboxed worker process.

The grader (:mod:`.grader`) reads the notebooks (:mod:`.notebooks`), checks the course files
against their manifest (:mod:`.manifest`), compiles the trusted bytecode once per run
(:mod:`.bytecode`) and starts workers (:mod:`.client`) in a sandbox (:mod:`.sandbox`). A worker
(:mod:`.worker`, started as ``python -m course_lib.grading.running.worker``) confines itself
(:mod:`.confine`), watches for tampering (:mod:`.tamper`) and speaks plain data
(:mod:`course_lib.grading.protocol`); :mod:`.interrupts` tells the instructor's Ctrl-C from a
submission's signal.

May import: the shared core of :mod:`course_lib.grading`, ``results`` (a run writes the grades
and tests CSVs) and the rest of ``course_lib``. Not ``authoring`` (questions reach a worker
through :func:`course_lib.grading.core.questions_of`) and not ``reporting``.
"""
