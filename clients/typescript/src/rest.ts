// Levy's REST API for Node and browsers, typed from docs/openapi.json.
//
// `openapi-typescript` generates the types of every path, parameter, body and
// response (src/gen-rest/schema.ts, by `npm run generate`); `openapi-fetch` is
// the runtime: `levy.GET("/customers/{customer_id}", { params: { path: { customer_id } } })`
// is checked by tsc against the document, so a renamed field or path fails the build.
// This module adds what every call needs: the API key, the Service-Version
// header when pinned, and errors as a typed LevyApiError (spec section 5).
import createClient, { type Client, type Middleware } from "openapi-fetch";
import type { components, paths } from "./gen-rest/schema";

export type Schemas = components["schemas"];
export type ApiErrorObject = Schemas["JsonApiError"];
export type LevyRest = Client<paths>;

export interface RestOptions {
  /** Pin an API version (`hydrogen.2025-04-15`); unset: the latest. */
  serviceVersion?: string;
  /** A fetch implementation (default: the global fetch of Node 18+ and browsers). */
  fetch?: typeof fetch;
}

/** A client for `baseUrl` (for example `http://127.0.0.1:8080`) that sends `apiKey` on every call. */
export function createLevyRest(baseUrl: string, apiKey: string, options: RestOptions = {}): LevyRest {
  const client = createClient<paths>({ baseUrl, fetch: options.fetch });
  const auth: Middleware = {
    onRequest({ request }) {
      request.headers.set("X-API-Key", apiKey);
      if (options.serviceVersion) request.headers.set("Service-Version", options.serviceVersion);
      return request;
    },
  };
  client.use(auth);
  return client;
}

/** The error of a refused call: the HTTP status, the first error's code and every error object. */
export class LevyApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly errors: ApiErrorObject[],
    readonly requestId: string | null,
  ) {
    super(`${status} ${code}: ${errors.map((e) => e.detail).join("; ")}`);
    this.name = "LevyApiError";
  }

  /** A validation error (422) or a malformed request (400). */
  get isValidation(): boolean {
    return this.status === 422 || this.status === 400;
  }

  get isNotFound(): boolean {
    return this.status === 404;
  }

  get isConflict(): boolean {
    return this.status === 409;
  }

  get isRateLimited(): boolean {
    return this.status === 429;
  }

  get isAuthentication(): boolean {
    return this.status === 401 || this.status === 403;
  }

  /** The JSON pointers of the errors that name a field (`/line_items/0/quantity`). */
  get pointers(): string[] {
    return this.errors.flatMap((e) => (e.source?.pointer ? [e.source.pointer] : []));
  }
}

type CalculationDetail = Schemas["CalculationValidationError"]["detail"][number];

/** A JSON pointer from a calculation error's `loc` (`["body", "line_items", 1, "quantity"]`). */
function pointerOf(loc: (string | number)[]): string {
  const parts = loc[0] === "body" ? loc.slice(1) : loc;
  return parts.map((p) => "/" + String(p).replace(/~/g, "~0").replace(/\//g, "~1")).join("");
}

/** The error objects of a refused call's body: the JSON:API `errors` of every endpoint, or the
 * `detail` list of the calculation endpoint (spec section 7.2) turned into error objects
 * (`code` = its `type`, `detail` = its `msg`, the pointer from its `loc`). */
export function errorObjects(status: number, body: unknown): ApiErrorObject[] {
  const b = body as { errors?: unknown; detail?: unknown } | null | undefined;
  if (Array.isArray(b?.errors)) return b.errors as ApiErrorObject[];
  if (Array.isArray(b?.detail)) {
    return (b.detail as CalculationDetail[]).map((d) => ({
      status: String(status), code: d.type, title: "Validation Error", detail: d.msg,
      source: { pointer: pointerOf(d.loc) }, meta: null,
    }));
  }
  return [];
}

/** The data of an openapi-fetch result, or a LevyApiError when the call was refused. */
export async function unwrap<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok) return data as T;
  const errors = errorObjects(response.status, error);
  const code = errors[0]?.code ?? `http_${response.status}`;
  throw new LevyApiError(response.status, code, errors, response.headers.get("X-Request-Id"));
}
