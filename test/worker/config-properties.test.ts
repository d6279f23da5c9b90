/**
 * Property: random production settings pass the production rules exactly when none of the
 * rules against unsafe settings is broken (body limits, idempotency retention, long,
 * varied and distinct secrets and tokens, subscriber ports), every broken rule is reported
 * against its variable, and no problem quotes a secret.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_PRODUCTION_BODY_BYTES,
  MIN_DISTINCT_CHARACTERS,
  MIN_PRODUCTION_RETENTION_SEC,
  MIN_PROVIDER_SECRET_LENGTH,
  MIN_TOKEN_LENGTH,
  parseSettings,
  SERVICE_PORTS,
  type SettingName,
} from '../../worker/config.ts';
import { PRODUCTION_VARS } from './config-fixtures.ts';
import { FUZZ_PARAMETERS, fuzzTimeout } from './fuzz-helpers.ts';

type Vars = Record<string, string>;

/** A change that breaks one rule, and the variable the rule is reported against. */
interface Breakage {
  readonly variable: SettingName;
  readonly apply: (vars: Vars) => void;
  /** Makes a token equal to a secret: applied after every other change, so none undoes it. */
  readonly copiesSecret?: true;
}

const VISIBLE = fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code));

const varied = (text: string) => new Set(text).size >= MIN_DISTINCT_CHARACTERS;

/** Visible ASCII of `min` to `max` characters with enough different ones. */
const secretText = (min: number, max: number) =>
  fc.string({ unit: VISIBLE, minLength: min, maxLength: max }).filter(varied);

/** Visible ASCII shorter than `length` (at least one character). */
const tooShort = (length: number) =>
  fc.string({ unit: VISIBLE, minLength: 1, maxLength: length - 1 });

/** Text of `min`+ characters drawn from at most `MIN_DISTINCT_CHARACTERS - 1` characters. */
const lowEntropy = (min: number) =>
  fc
    .tuple(
      fc.uniqueArray(VISIBLE, { minLength: 1, maxLength: MIN_DISTINCT_CHARACTERS - 1 }),
      fc.integer({ min, max: min + 40 }),
      fc.nat(),
    )
    .map(([alphabet, length, seed]) =>
      Array.from({ length }, (_, i) => alphabet[(seed + i * 7 + (i >> 2)) % alphabet.length]).join(
        '',
      ),
    );

const safePort = fc
  .integer({ min: 1024, max: 65535 })
  .filter((port) => !SERVICE_PORTS.includes(port));
const unsafePort = fc.oneof(
  fc.integer({ min: 1, max: 1023 }).filter((port) => port !== 80 && port !== 443),
  fc.constantFrom(...SERVICE_PORTS),
);

/** Valid production settings with random secrets, limits and ports. */
const validVars: fc.Arbitrary<Vars> = fc
  .record({
    mode: fc.constantFrom('production', ''),
    upstreamSecret: secretText(MIN_PROVIDER_SECRET_LENGTH, 48),
    webhookSecret: fc.option(secretText(MIN_PROVIDER_SECRET_LENGTH, 48), { nil: undefined }),
    adminToken: secretText(MIN_TOKEN_LENGTH, 64),
    callerTokens: fc.array(secretText(MIN_TOKEN_LENGTH, 64), { minLength: 1, maxLength: 3 }),
    maxBody: fc.integer({ min: 1, max: MAX_PRODUCTION_BODY_BYTES }),
    webhookBody: fc.integer({ min: 1, max: 1024 * 1024 }),
    lockSec: fc.integer({ min: 1, max: 86_400 }),
    timeoutMs: fc.integer({ min: 1, max: 600_000 }),
    retentionExtra: fc.integer({ min: 0, max: 1_000_000 }),
    ports: fc.array(fc.oneof(safePort, fc.constantFrom(80, 443)), { maxLength: 4 }),
  })
  .filter(({ upstreamSecret, webhookSecret, adminToken, callerTokens }) => {
    // The merchant and webhook secrets may be equal; everything else is distinct.
    const all = [upstreamSecret, adminToken, ...callerTokens];
    const webhookApart = webhookSecret === undefined || webhookSecret === upstreamSecret;
    const distinct = new Set([...all, ...(webhookApart ? [] : [webhookSecret])]);
    return distinct.size === all.length + (webhookApart ? 0 : 1);
  })
  .map((drawn) => {
    const lock = Math.max(drawn.lockSec, Math.ceil((2 * drawn.timeoutMs) / 1000));
    const retention = Math.min(
      31_536_000,
      Math.max(MIN_PRODUCTION_RETENTION_SEC, lock) + drawn.retentionExtra,
    );
    return {
      ...PRODUCTION_VARS,
      GATEWAY_MODE: drawn.mode,
      UPSTREAM_SECRET: drawn.upstreamSecret,
      WEBHOOK_SECRET: drawn.webhookSecret ?? drawn.upstreamSecret,
      ADMIN_TOKEN: drawn.adminToken,
      GATEWAY_CALLERS: JSON.stringify(
        drawn.callerTokens.map((token, i) => ({ name: `caller-${i}`, token })),
      ),
      MAX_BODY_BYTES: String(drawn.maxBody),
      WEBHOOK_MAX_BODY_BYTES: String(drawn.webhookBody),
      IDEMPOTENCY_LOCK_TIMEOUT_SEC: String(drawn.lockSec),
      UPSTREAM_TIMEOUT_MS: String(drawn.timeoutMs),
      IDEMPOTENCY_RETENTION_SEC: String(retention),
      SUBSCRIBER_PORTS: drawn.ports.join(','),
    } as Vars;
  });

// The first caller's token, read and written in the callers' JSON.
function firstCallerToken(vars: Vars): string {
  return (JSON.parse(vars.GATEWAY_CALLERS ?? '[]') as { token: string }[])[0]?.token ?? '';
}
function setFirstCallerToken(vars: Vars, token: string): void {
  const list = JSON.parse(vars.GATEWAY_CALLERS ?? '[]') as { name: string; token: string }[];
  list[0] = { name: list[0]?.name ?? 'caller-0', token };
  vars.GATEWAY_CALLERS = JSON.stringify(list);
}

const setTo = (variable: SettingName) => (value: string) => ({
  variable,
  apply: (vars: Vars) => {
    vars[variable] = value;
  },
});

/** One broken rule, drawn at random. */
const breakage: fc.Arbitrary<Breakage> = fc.oneof(
  fc
    .integer({ min: MAX_PRODUCTION_BODY_BYTES + 1, max: 100 * 1024 * 1024 })
    .map((bytes) => setTo('MAX_BODY_BYTES')(String(bytes))),
  fc.integer({ min: 0, max: 999_999 }).map(
    (millionths): Breakage => ({
      variable: 'IDEMPOTENCY_RETENTION_SEC',
      apply: (vars) => {
        const lock = Math.max(
          Number(vars.IDEMPOTENCY_LOCK_TIMEOUT_SEC),
          Math.ceil((2 * Number(vars.UPSTREAM_TIMEOUT_MS)) / 1000),
        );
        const floor = Math.max(MIN_PRODUCTION_RETENTION_SEC, lock);
        vars.IDEMPOTENCY_RETENTION_SEC = String(
          60 + Math.floor((millionths * (floor - 60)) / 1_000_000),
        );
      },
    }),
  ),
  tooShort(MIN_PROVIDER_SECRET_LENGTH).map(setTo('UPSTREAM_SECRET')),
  lowEntropy(MIN_PROVIDER_SECRET_LENGTH).map(setTo('UPSTREAM_SECRET')),
  tooShort(MIN_PROVIDER_SECRET_LENGTH).map(setTo('WEBHOOK_SECRET')),
  lowEntropy(MIN_PROVIDER_SECRET_LENGTH).map(setTo('WEBHOOK_SECRET')),
  fc.constant(setTo('WEBHOOK_SECRET')('')),
  tooShort(MIN_TOKEN_LENGTH).map(setTo('ADMIN_TOKEN')),
  lowEntropy(MIN_TOKEN_LENGTH).map(setTo('ADMIN_TOKEN')),
  fc.constantFrom('UPSTREAM_SECRET', 'WEBHOOK_SECRET').map(
    (secret): Breakage => ({
      variable: 'ADMIN_TOKEN',
      apply: (vars) => {
        vars.ADMIN_TOKEN = vars[secret] || 'unset-secret';
      },
      copiesSecret: true,
    }),
  ),
  fc.oneof(tooShort(MIN_TOKEN_LENGTH), lowEntropy(MIN_TOKEN_LENGTH)).map(
    (token): Breakage => ({
      variable: 'GATEWAY_CALLERS',
      apply: (vars) => setFirstCallerToken(vars, token),
    }),
  ),
  fc.constantFrom('UPSTREAM_SECRET', 'WEBHOOK_SECRET').map(
    (secret): Breakage => ({
      variable: 'GATEWAY_CALLERS',
      apply: (vars) => setFirstCallerToken(vars, vars[secret] || 'unset-secret'),
      copiesSecret: true,
    }),
  ),
  fc.tuple(unsafePort, fc.nat()).map(
    ([port, at]): Breakage => ({
      variable: 'SUBSCRIBER_PORTS',
      apply: (vars) => {
        const ports = vars.SUBSCRIBER_PORTS === '' ? [] : (vars.SUBSCRIBER_PORTS ?? '').split(',');
        ports.splice(at % (ports.length + 1), 0, String(port));
        vars.SUBSCRIBER_PORTS = ports.join(',');
      },
    }),
  ),
);

describe('production rules (property)', () => {
  it(
    'should pass random settings exactly when no rule is broken, naming every broken one',
    () => {
      fc.assert(
        fc.property(
          validVars,
          fc.oneof(
            { weight: 1, arbitrary: fc.constant([]) },
            { weight: 4, arbitrary: fc.array(breakage, { minLength: 1, maxLength: 4 }) },
          ),
          (valid, breakages) => {
            const vars = { ...valid };
            const ordered = [
              ...breakages.filter((broken) => !broken.copiesSecret),
              ...breakages.filter((broken) => broken.copiesSecret),
            ];
            for (const broken of ordered) broken.apply(vars);
            const loaded = parseSettings(vars);
            if (breakages.length === 0) {
              expect(loaded).toMatchObject({ ok: true });
              return;
            }
            expect(loaded.ok).toBe(false);
            const named = loaded.ok ? [] : loaded.problems.map((p) => p.variable);
            for (const broken of breakages) expect(named).toContain(broken.variable);
            const text = JSON.stringify(loaded);
            const secrets = [
              vars.UPSTREAM_SECRET,
              vars.WEBHOOK_SECRET,
              vars.ADMIN_TOKEN,
              firstCallerToken(vars),
            ];
            for (const secret of secrets) {
              if (secret !== undefined && secret.length >= 16) expect(text).not.toContain(secret);
            }
          },
        ),
        FUZZ_PARAMETERS,
      );
    },
    fuzzTimeout(5),
  );
});
