// The first calls of a Node caller, over gRPC with the generated stubs:
// register a state (admin key), page through the product tax codes, create a
// customer, calculate, create a draft transaction and finalize it, and decode
// the rich errors (field violations with pointers; RetryInfo on the rate limit).
// Prints one JSON report on stdout; tests/test_typescript_client.py checks it.
//
//   LEVY_GRPC_TARGET=127.0.0.1:50051 LEVY_API_KEY=... LEVY_ADMIN_KEY=... \
//   [LEVY_THROTTLED_KEY=...] node dist/example.js
//
// LEVY_THROTTLED_KEY: a key this program may exhaust (it calls until the rate
// limit answers RESOURCE_EXHAUSTED, at most 1000 calls); unset, that step is skipped.
import { ServiceError } from "@grpc/grpc-js";
import { Transaction } from "./gen/levy/v1/transactions";
import { call, connect, decodeError, LevyError } from "./levy";

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`set ${name}`);
  return value;
}

async function expectError(promise: Promise<unknown>): Promise<LevyError> {
  try {
    await promise;
  } catch (e) {
    const decoded = decodeError(e as ServiceError);
    if (!decoded) throw e;
    return decoded;
  }
  throw new Error("the call succeeded; an error was expected");
}

async function main(): Promise<void> {
  const target = env("LEVY_GRPC_TARGET");
  const levy = connect(target, env("LEVY_API_KEY"));
  const admin = connect(target, env("LEVY_ADMIN_KEY"));
  const md = () => levy.metadata();
  const report: Record<string, unknown> = {};

  // Tax is charged where the organization is registered: register Texas
  // (a registration already in force there is refused with reason `conflict`).
  try {
    const registration = await call(admin.organization.createRegistration, admin.organization,
      { registration: { id: "", jurisdiction: "US-ST-TX", effectiveFrom: "2020-01-01" } }, admin.metadata());
    report.registration = registration.jurisdiction;
  } catch (e) {
    const error = decodeError(e as ServiceError);
    if (error?.reason !== "conflict") throw e;
    report.registration = `already registered: ${error.errors[0].meta?.["existing_registration_id"]}`;
  }

  // Every product tax code, 50 a page, following starting_after.
  const codes: string[] = [];
  let pages = 0;
  let startingAfter: string | undefined;
  for (;;) {
    const page = await call(levy.reference.listProductTaxCodes, levy.reference, { limit: 50, startingAfter }, md());
    pages += 1;
    codes.push(...page.data.map((c) => c.code));
    if (!page.hasMore) break;
    startingAfter = page.data[page.data.length - 1].code;
  }
  report.tax_codes = { pages, count: codes.length, first: codes[0], last: codes[codes.length - 1] };

  const sourceId = `node-${Date.now()}`;
  const customer = await call(levy.customers.createCustomer, levy.customers,
    { customer: { id: "", sourceId, name: "Ada from Node", email: "ada@example.com" } }, md());
  report.customer = { id: customer.id, source_id: customer.sourceId, name: customer.name };

  // 2 x 49.99 USD shipped to Texas (no postal code: the state rate only).
  const line = {
    id: "1",
    quantity: "2",
    unitPrice: "4999",
    product: { taxAttributes: ["GENERAL.TANGIBLE.GOODS"] },
    customer: { address: { state: "TX", country: "US" }, taxIds: [] },
    discounts: [],
  };
  const transactionDate = new Date("2026-03-15T12:00:00Z");
  const calculation = await call(levy.calculations.createCalculation, levy.calculations,
    { currency: "USD", transactionDate, lineItems: [line] }, md());
  report.calculation = {
    tax_amount: calculation.taxAmount,
    rate: calculation.lineItems[0].taxes.map((t) => t.taxRate),
  };

  // fromPartial fills what a message needs (empty lists, defaults) around the fields given.
  const draft = await call(levy.transactions.createTransaction, levy.transactions, {
    transaction: Transaction.fromPartial({
      type: "sale", status: "draft", currency: "USD", transactionDate, referenceId: sourceId, lineItems: [line],
    }),
  }, levy.metadata({ "idempotency-key": `create-${sourceId}` }));
  const finalized = await call(levy.transactions.updateTransaction, levy.transactions,
    { id: draft.id, transaction: Transaction.fromPartial({ status: "finalized" }), updateMask: ["status"] }, md());
  report.transaction = { id: draft.id, draft_status: draft.status, status: finalized.status,
    tax_amount: finalized.lineItems.reduce((sum, l) => sum + BigInt(l.taxAmount), 0n).toString() };

  // A rich error: a quantity that is not a decimal string, with its JSON pointer.
  const invalid = await expectError(call(levy.calculations.createCalculation, levy.calculations,
    { currency: "USD", transactionDate, lineItems: [line, { ...line, id: "2", quantity: "two" }] }, md()));
  report.validation_error = invalid;

  const throttledKey = process.env["LEVY_THROTTLED_KEY"];
  if (throttledKey) {
    const throttled = connect(target, throttledKey);
    for (let i = 1; i <= 1000; i++) {
      try {
        await call(throttled.reference.listProductTaxCodes, throttled.reference, { limit: 1 }, throttled.metadata());
      } catch (e) {
        report.rate_limited = { after_calls: i, ...decodeError(e as ServiceError) };
        break;
      }
    }
    throttled.close();
  }
  levy.close();
  admin.close();
  process.stdout.write(JSON.stringify(report, (_k, v) => (typeof v === "bigint" ? v.toString() : v)) + "\n");
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
