"""Reporting: what the instructor makes of grading, and the ways grading leaves the course.

The gradebook across problem sets (:mod:`.gradebook`), the class report (:mod:`.classreport`),
the Gradescope autograder (:mod:`.gradescope`), the student version of a problem set
(:mod:`.release`) and the grader's speed (:mod:`.throughput`, :mod:`.bench`); similar submissions
(:mod:`.similarity`), the technique census (:mod:`.census`), late work (:mod:`.deadlines`), grades
for Canvas and Moodle (:mod:`.lms`) and the PrairieLearn question (:mod:`.prairielearn`).

May import: every other part (the shared core, ``authoring``, ``results``, ``running``) and the
rest of ``course_lib``. Nothing below imports it: it is the top of the grading package, under
only the package's front doors (``course_lib.grading`` and its ``__main__``).
"""
