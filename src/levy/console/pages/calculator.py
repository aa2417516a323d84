"""The calculator: up to three lines shipped to one address, calculated by the API (members may use it:
a calculation stores nothing)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from levy.console.helpers import Signed, errors_of, plain
from levy.console.http import Request, Response
from levy.console.routing import Route, route
from levy.domain.errors import LevyError, PermissionDenied
from levy.v1 import calculations_pb2

if TYPE_CHECKING:
    from levy.console.app import Console

CALCULATOR_LINES = 3
ADDRESS_FIELDS = ("line1", "city", "state", "postal_code", "country")


def routes(c: Console) -> list[Route]:
    return [
        route("GET", "/calculator", c.calculator),
        route("POST", "/calculator", c.calculate),
    ]


def calculation_request(form: dict[str, str]) -> calculations_pb2.CreateCalculationRequest:
    """The calculator form's ``CreateCalculation``: a line for each numbered line with a price or quantity."""
    f = {k: v.strip() for k, v in form.items()}
    request = calculations_pb2.CreateCalculationRequest(currency="USD")
    address = calculations_pb2.Address(**{k: f[k] for k in ADDRESS_FIELDS if f.get(k)})
    for n in range(1, CALCULATOR_LINES + 1):
        if not (f.get(f"price_{n}") or f.get(f"quantity_{n}")):
            continue
        line = request.line_items.add(id=str(n))
        for name in ("quantity", "unit_price"):
            value = f.get(f"{'price' if name == 'unit_price' else name}_{n}")
            if value:
                setattr(line, name, value)
        line_codes = [c.strip() for c in f.get(f"codes_{n}", "").split(",") if c.strip()]
        line.product.tax_attributes.extend(line_codes)
        line.customer.address.CopyFrom(address)
    return request


class CalculatorPages:
    async def calculator(self: Console, req: Request, signed: Signed, *, result: dict[str, Any] | None = None,
                         errors: dict[str, str] | None = None, status: int = 200) -> Response:
        return self._page(status, "calculator.html", signed, result=result, errors=errors or {}, form=req.form,
                          lines=range(1, CALCULATOR_LINES + 1))

    async def calculate(self: Console, req: Request, signed: Signed) -> Response:
        try:
            result = plain(await self.call(signed, "levy.v1.CalculationService.CreateCalculation",
                                           calculation_request(req.form)))
        except LevyError as e:
            if isinstance(e, PermissionDenied):
                raise
            return await self.calculator(req, signed, errors=errors_of(e), status=422)
        return await self.calculator(req, signed, result=result)
