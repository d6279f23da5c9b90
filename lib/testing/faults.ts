// Fault injection on API endpoints, set by the `POST /__sandbox/faults` control.
import * as v from 'valibot';
import { SandboxHttpError } from './http-error.ts';
import type { FaultConfig } from './state.ts';

/** Body of `POST /__sandbox/faults`; `{}` clears every fault. */
export const FaultsControlSchema = v.object({
  latency_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(60_000))),
  error_rate: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
  drop_rate: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
  variant: v.optional(v.picklist(['enveloped', 'flat'])),
});

/**
 * The fault configuration a `POST /__sandbox/faults` body sets (omitted fields off).
 *
 * @param body - validated control body.
 */
export function faultConfig(body: v.InferOutput<typeof FaultsControlSchema>): FaultConfig {
  return {
    latencyMs: body.latency_ms ?? 0,
    errorRate: body.error_rate ?? 0,
    dropRate: body.drop_rate ?? 0,
    variant: body.variant ?? 'enveloped',
  };
}

/** The JSON view of a fault configuration. */
export function faultView(faults: FaultConfig): Record<string, unknown> {
  return {
    latency_ms: faults.latencyMs,
    error_rate: faults.errorRate,
    drop_rate: faults.dropRate,
    variant: faults.variant,
  };
}

/**
 * Applies the faults that act before processing: waits `latencyMs`, then with
 * probability `errorRate` answers 503 without touching state.
 *
 * @param faults - the configuration captured when the request arrived.
 * @param random - random source in [0, 1).
 * @returns whether the connection is to be dropped after processing (`dropRate`).
 * @throws {SandboxHttpError} 503 `internal_error` for an injected error.
 */
export async function applyFaults(faults: FaultConfig, random: () => number): Promise<boolean> {
  if (faults.latencyMs > 0) {
    await new Promise((resolve) => setTimeout(resolve, faults.latencyMs));
  }
  if (faults.errorRate > 0 && random() < faults.errorRate) {
    throw new SandboxHttpError(503, 'internal_error', 'Injected fault: service unavailable');
  }
  return faults.dropRate > 0 && random() < faults.dropRate;
}
