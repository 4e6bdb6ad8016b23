"""hetcoll: model-driven collective communication.

The core (machine models, schedules, algorithms, simulator, planner) is the C++
extension ``hetcoll._core``; this package adds the command line (``hetcoll``)
and plotting.
"""
from ._core import (  # noqa: F401
    InputError,
    Model,
    Schedule,
    ScheduleError,
    SimResult,
    TooLarge,
    __version__,
    algorithms,
    bound,
    collective,
    collective_ops,
    decide,
    generate,
    parse_model,
    plan,
    postal,
    schedule_from_json,
    schedule_from_text,
)
