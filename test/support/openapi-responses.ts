/**
 * Checks answers against the gateway's OpenAPI document with Ajv (JSON Schema 2020-12, the
 * dialect of OpenAPI 3.1) and ajv-formats: the status must be one the operation documents,
 * every header the response requires must be there and every documented header present must
 * match its schema, and the body must match the response's JSON schema (or be empty where
 * the response has no content). Runs under Node: Ajv compiles validators with `new
 * Function`, which workerd forbids.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

type Json = Record<string, unknown>;

// ajv-formats is CommonJS: its default export arrives wrapped under Node's ESM loader.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as (ajv: Ajv2020) => Ajv2020;

/** One answer as a client saw it. */
export interface RecordedAnswer {
  readonly method: string;
  /** The path without the query string, e.g. `/payments/verify/pay-1`. */
  readonly path: string;
  readonly status: number;
  readonly headers: Headers;
  /** The body as text (`''` when empty). */
  readonly body: string;
}

/** The id the document's schemas are registered under (`#/components/schemas/X` becomes `<id>#/$defs/X`). */
const DOCUMENT_ID = 'https://edgepay.invalid/openapi.json';

/**
 * An OpenAPI 3.1 document's response rules, compiled once.
 *
 * @example
 * ```ts
 * const checker = new ResponseChecker(doc);
 * expect(checker.violations(answer)).toEqual([]);
 * ```
 */
export class ResponseChecker {
  readonly #doc: Json;
  readonly #ajv: Ajv2020;
  readonly #validators = new Map<string, ValidateFunction>();
  readonly #templates: { readonly template: string; readonly pattern: RegExp }[];

  /**
   * @param doc - the document as JSON.
   * @throws {Error} when its schemas do not compile (Ajv strict mode: an unknown keyword or
   *   format is an error, not a silent pass).
   */
  constructor(doc: Json) {
    this.#doc = doc;
    this.#ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false });
    addFormats(this.#ajv);
    const components = (doc.components ?? {}) as Json;
    this.#ajv.addSchema({ $id: DOCUMENT_ID, $defs: relocate(components.schemas ?? {}) });
    // Templates with fewer parameters first: a literal path wins over a `{param}` one.
    this.#templates = Object.keys(doc.paths as Json)
      .map((template) => ({
        template,
        params: template.split('{').length,
        pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
      }))
      .sort((a, b) => a.params - b.params);
  }

  /**
   * The operation an answer belongs to.
   *
   * @returns `<METHOD> <template>`, or `undefined` when no operation matches.
   */
  operationOf(method: string, path: string): string | undefined {
    const found = this.#templates.find(
      ({ template, pattern }) =>
        pattern.test(path) && this.#operation(method, template) !== undefined,
    );
    return found === undefined ? undefined : `${method.toUpperCase()} ${found.template}`;
  }

  /**
   * Everything in an answer the document does not allow.
   *
   * @param answer - what the client got.
   * @returns one line per violation, empty when the answer matches the document.
   */
  violations(answer: RecordedAnswer): string[] {
    const where = `${answer.method} ${answer.path} ${answer.status}`;
    const name = this.operationOf(answer.method, answer.path);
    if (name === undefined) return [`${where}: no operation`];
    const template = name.slice(name.indexOf(' ') + 1);
    const operation = this.#operation(answer.method, template) as Json;
    const responses = operation.responses as Json;
    const declared = responses[String(answer.status)] ?? responses.default;
    if (declared === undefined) return [`${where}: status not documented for ${name}`];
    const response = this.#resolve(declared);
    return [
      ...this.#headerViolations(response, answer.headers),
      ...this.#bodyViolations(response, answer),
    ].map((problem) => `${where}: ${problem}`);
  }

  #operation(method: string, template: string): Json | undefined {
    const item = (this.#doc.paths as Record<string, Json>)[template];
    return item?.[method.toLowerCase()] as Json | undefined;
  }

  #headerViolations(response: Json, headers: Headers): string[] {
    const problems: string[] = [];
    for (const [field, node] of Object.entries((response.headers ?? {}) as Json)) {
      const header = this.#resolve(node);
      const value = headers.get(field);
      if (value === null) {
        if (header.required === true) problems.push(`header ${field} is required`);
        continue;
      }
      const schema = (header.schema ?? {}) as Json;
      const typed = schema.type === 'integer' && /^\d+$/.test(value) ? Number(value) : value;
      const validate = this.#compile(`header:${JSON.stringify(schema)}`, schema);
      if (!validate(typed)) problems.push(`header ${field}: ${describe(validate)}`);
    }
    return problems;
  }

  #bodyViolations(response: Json, answer: RecordedAnswer): string[] {
    const content = response.content as Record<string, { schema?: Json }> | undefined;
    if (content === undefined) return answer.body === '' ? [] : ['a body where none is documented'];
    const type = answer.headers.get('content-type') ?? '';
    const media = Object.entries(content).find(([name]) => type.startsWith(name));
    if (media === undefined) return [`content type ${JSON.stringify(type)} not documented`];
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      return ['the body is not JSON'];
    }
    const schema = media[1].schema ?? {};
    const validate = this.#compile(`body:${JSON.stringify(schema)}`, schema);
    return validate(body) ? [] : [`body: ${describe(validate)}`];
  }

  #compile(key: string, schema: Json): ValidateFunction {
    let validate = this.#validators.get(key);
    if (validate === undefined) {
      validate = this.#ajv.compile(relocate(schema) as Json);
      this.#validators.set(key, validate);
    }
    return validate;
  }

  // Follows `$ref`s to response and header components.
  #resolve(node: unknown): Json {
    let current = node as Json;
    for (let hops = 0; typeof current.$ref === 'string' && hops < 10; hops += 1) {
      let target: unknown = this.#doc;
      for (const part of current.$ref.replace(/^#\//, '').split('/')) {
        target = (target as Json | undefined)?.[part];
      }
      if (target === undefined) throw new Error(`Unresolved ${current.$ref}`);
      current = target as Json;
    }
    return current;
  }
}

// The document's schema references, pointed at the schemas registered under DOCUMENT_ID.
function relocate(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value).replaceAll('"#/components/schemas/', `"${DOCUMENT_ID}#/$defs/`),
  );
}

function describe(validate: ValidateFunction): string {
  return (validate.errors ?? [])
    .map((error) => `${error.instancePath || '/'} ${error.message ?? ''}`)
    .join('; ');
}

/**
 * The gateway's OpenAPI document as `GET /openapi.json` serves it, built under Node from the
 * route table. Imported by a computed path so the Node typecheck does not walk into the
 * Worker's sources (they need the Workers' global types).
 *
 * @returns the document as JSON.
 */
export async function buildGatewayDocument(): Promise<Json> {
  const worker = new URL('../../worker/', import.meta.url);
  const { buildOpenApiDocument } = (await import(new URL('openapi/document.ts', worker).href)) as {
    buildOpenApiDocument: (routes: unknown) => Json;
  };
  const { ROUTES } = (await import(new URL('routes/table.ts', worker).href)) as {
    ROUTES: unknown;
  };
  // The served document is JSON: a round trip drops what JSON cannot hold.
  return JSON.parse(JSON.stringify(buildOpenApiDocument(ROUTES))) as Json;
}
