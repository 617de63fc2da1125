from ..quiz import Quiz
QUIZ = {}
