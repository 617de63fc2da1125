"""What grading found, for the instructor: similarity, technique census, deadlines, LMS and PrairieLearn exports."""
