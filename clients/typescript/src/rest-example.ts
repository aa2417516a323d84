// The first calls of a Node caller over REST with the client typed from
// docs/openapi.json (src/rest.ts): register a state (admin key), create a
// customer, page customers, calculate, create a draft transaction and finalize
// it, and read the errors (a 422 with its pointer, a 404).
// Prints one JSON report on stdout; tests/test_typescript_client.py checks it.
//
//   LEVY_BASE_URL=http://127.0.0.1:8080 LEVY_API_KEY=... LEVY_ADMIN_KEY=... node dist/rest-example.js
import { createLevyRest, LevyApiError, unwrap } from "./rest";

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`set ${name}`);
  return value;
}

async function refused(promise: Promise<unknown>): Promise<LevyApiError> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof LevyApiError) return e;
    throw e;
  }
  throw new Error("the call succeeded; an error was expected");
}

async function main(): Promise<void> {
  const baseUrl = env("LEVY_BASE_URL");
  const levy = createLevyRest(baseUrl, env("LEVY_API_KEY"));
  const admin = createLevyRest(baseUrl, env("LEVY_ADMIN_KEY"));
  const report: Record<string, unknown> = {};

  const registration = await unwrap(admin.POST("/organization/registrations", {
    body: { jurisdiction: "US-ST-TX", effective_from: "2020-01-01" },
  }));
  report.registration = registration.jurisdiction;

  const stamp = Date.now();
  const created: string[] = [];
  for (const n of [1, 2, 3]) {
    const customer = await unwrap(levy.POST("/customers", {
      body: { source_id: `rest-${stamp}-${n}`, name: `Customer ${n}`, email: `c${n}@example.com` },
    }));
    created.push(customer.id ?? "");
  }
  // Two a page, newest first, following starting_after.
  const seen: string[] = [];
  let startingAfter: string | undefined;
  let pages = 0;
  for (;;) {
    const page = await unwrap(levy.GET("/customers", {
      params: { query: { limit: 2, starting_after: startingAfter } },
    }));
    pages += 1;
    seen.push(...(page.data ?? []).map((c) => c.id ?? ""));
    if (!page.has_more) break;
    startingAfter = seen[seen.length - 1];
  }
  report.customers = { created, seen, pages };

  const first = await unwrap(levy.GET("/customers/{customer_id}", {
    params: { path: { customer_id: created[0] } },
  }));
  report.customer = { id: first.id, name: first.name, source_id: first.source_id };

  // 2 x 49.99 USD shipped to Texas (no postal code: the state rate only).
  const line = {
    id: "1",
    quantity: "2",
    unit_price: "4999",
    product: { tax_attributes: ["GENERAL.TANGIBLE.GOODS"] },
    customer: { address: { state: "TX", country: "US" } },
  };
  const calculation = await unwrap(levy.POST("/calculations", {
    body: { currency: "USD", transaction_date: "2026-03-15T12:00:00Z", line_items: [line] },
  }));
  report.calculation = { tax_amount: calculation.tax_amount, rows: calculation.line_items?.[0]?.taxes?.length };

  const draft = await unwrap(levy.POST("/transactions", {
    body: { type: "sale", status: "draft", currency: "USD", transaction_date: "2026-03-15T12:00:00Z",
            line_items: [line] },
  }));
  const finalized = await unwrap(levy.POST("/transactions/{id}", {
    params: { path: { id: draft.id ?? "" } },
    body: { status: "finalized", reference_id: `INV-${stamp}` },
  }));
  report.transaction = { id: draft.id, draft_status: draft.status, status: finalized.status,
                         tax_amount: finalized.tax_amount, reference_id: finalized.reference_id };

  const bad = await refused(unwrap(levy.POST("/calculations", {
    body: { currency: "USD", line_items: [line, { ...line, id: "2", quantity: "-1" }] },
  })));
  report.validation_error = { status: bad.status, code: bad.code, pointers: bad.pointers,
                              isValidation: bad.isValidation };

  const missing = await refused(unwrap(levy.GET("/customers/{customer_id}", {
    params: { path: { customer_id: "cust_doesnotexist" } },
  })));
  report.not_found = { status: missing.status, code: missing.code, isNotFound: missing.isNotFound,
                       requestId: missing.requestId !== null };

  process.stdout.write(JSON.stringify(report) + "\n");
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
