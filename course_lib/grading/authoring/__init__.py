"""Authoring: how a problem set's questions and their tests are written.

The question harness (:mod:`.harness`, the guide for authors), the answer specs a question
declares (:mod:`.answers`), guarded buffers and launches (:mod:`.buffers`, :mod:`.launches`),
the kinds of test (:mod:`.testkinds`), technique signatures (:mod:`.signature`), measured
answers (:mod:`.measuring`), the launches, copies and allocations of a student's host program
(:mod:`.hostcosts`), the own-work check (:mod:`.ownwork`) and the trusted checker and profiler
the hidden tests call (:mod:`.trusted`).

May import: the shared core of :mod:`course_lib.grading` (``model``, ``core``, ``protocol``,
``catalog``) and the rest of ``course_lib`` (the simulator). Not ``running``, ``results`` or
``reporting``: questions are written without knowing how or where they are graded.
"""
