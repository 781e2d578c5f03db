"""One module per calculator family; importing this package registers every function.

Each module imports `solver.library.functions` (the `@calculator` decorator) and
`solver.library.context` (`Context`), never the engine, so the engine imports this package
without an import cycle. A new family module is added to the list below.
"""
from solver.library.calculators import (  # noqa: F401  (imported for their @calculator registrations)
    acid_base,
    body_weight,
    comorbidity,
    dates,
    dosing,
    icu,
    labs,
    liver,
    physical,
    prevent,
    qtc,
    renal,
    risk_models,
    scores_cardio,
    scores_infection,
    scores_neuro_liver,
    successors,
)
