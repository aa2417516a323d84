"""``levy serve`` whose calculation handler answers from a precomputed result.

A measuring instrument, not a mode of Levy: ``python -m bench.fixed_answer
serve ...`` runs the real ``levy serve`` (same transports, pipeline,
authentication, field limits, metrics, trailers, event loop), except that
``CreateCalculation`` works out its answer once, for the first request, and
returns that same message to every later request without calculating. The
gRPC calculation scenario measures it next to Levy and the empty method: the
ratio it reaches is the most any calculation engine could give behind Levy's
pipeline on this machine, so it tells how much of the gap to the empty method
is the calculation and how much is everything around it (docs/performance.md).
"""

from __future__ import annotations

import sys
from typing import Any


def install() -> None:
    from levy.app import bootstrap

    name = "levy.v1.CalculationService.CreateCalculation"
    collect = bootstrap.handlers

    def handlers_with_fixed_answer(*args: Any, **kwargs: Any) -> Any:
        table = collect(*args, **kwargs)
        real = table[name]
        answer: list[Any] = []

        async def fixed(request: Any, ctx: Any) -> Any:
            if not answer:
                answer.append(await real(request, ctx))
            return answer[0]

        table[name] = fixed
        return table

    bootstrap.handlers = handlers_with_fixed_answer

if __name__ == "__main__":
    install()
    from levy.cli import main

    sys.exit(main(sys.argv[1:]))
